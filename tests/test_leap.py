"""Tests for Leap: the state machine from bpeds.testing.lists, plus hand-checked cases."""

from __future__ import annotations

from collections.abc import Callable

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from bpeds.errors import InvariantError, PreconditionError
from bpeds.structures.leap import Leap, LeapNode
from bpeds.testing.lists import leap_machine
from tests.budget import examples

TestLeapMachine = leap_machine(Leap).TestCase
TestLeapMachine.settings = settings(max_examples=examples(ci=200, local=25), stateful_step_count=50)


def merge(leap: Leap[str], a: str, b: str, new: str) -> list[int]:
    """Left-to-right merge of (a, b) into ``new`` driven by ``nodes(a)``; returns the seqs."""
    done = []
    for node in leap.nodes(a):
        after = leap.next(node)
        if after is not None and after.val == b:
            leap.delete(after)
            leap.set_value(node, new)
            done.append(node.seq)
    return done


def test_wikipedia_example_on_tokens() -> None:
    leap = Leap("aaabdaaabac")
    assert merge(leap, "a", "a", "Z") == [0, 5]
    assert "".join(leap.values()) == "ZabdZabac"
    assert merge(leap, "a", "b", "Y") == [2, 7]
    assert "".join(leap.values()) == "ZYdZYac"
    assert merge(leap, "Z", "Y", "X") == [0, 5]
    assert "".join(leap.values()) == "XdXac"
    assert [n.seq for n in leap.nodes("X")] == [0, 5]
    assert leap.count("a") == 1
    assert leap.count("Z") == 0
    leap.check()


def test_run_merge_resumes_past_deleted_nodes() -> None:
    leap = Leap("aaaa")
    assert merge(leap, "a", "a", "Z") == [0, 2]
    assert leap.values() == ["Z", "Z"]
    assert "a" not in leap
    leap.check()


def test_queries() -> None:
    leap = Leap("abcab")
    nodes = list(leap)
    assert leap.head is nodes[0]
    assert leap.tail is nodes[4]
    assert leap.first("a") is nodes[0]
    assert leap.last("a") is nodes[3]
    assert leap.first("z") is None
    assert leap.last("z") is None
    assert leap.leap(nodes[0]) is nodes[3]
    assert leap.leap(nodes[3]) is None
    assert leap.leapback(nodes[4]) is nodes[1]
    assert leap.leapback(nodes[1]) is None
    assert leap.next(nodes[0]) is nodes[1]
    assert leap.next(nodes[4]) is None
    assert leap.prev(nodes[0]) is None
    assert leap.prev(nodes[1]) is nodes[0]
    assert (leap.count("b"), leap.count("c"), leap.count("z")) == (2, 1, 0)
    assert "c" in leap
    assert "z" not in leap
    assert [n.seq for n in leap.nodes("b")] == [1, 4]
    assert list(leap.nodes("z")) == []
    assert len(leap) == 5


def test_empty_leap() -> None:
    leap: Leap[int] = Leap()
    assert leap.head is None
    assert leap.tail is None
    assert list(leap) == []
    assert leap.values() == []
    assert len(leap) == 0
    node = leap.append(7)
    assert leap.head is node
    assert leap.tail is node
    leap.delete(node)
    assert leap.head is None
    assert leap.tail is None
    assert 7 not in leap
    leap.check()


def test_set_value_precondition() -> None:
    leap = Leap("abab")
    a0, b1, a2, b3 = list(leap)
    with pytest.raises(PreconditionError, match=r"must come before it") as info:
        leap.set_value(a0, "b")
    assert "set_value may only make a node the *last* node" in str(info.value)
    assert leap.values() == ["a", "b", "a", "b"]  # unchanged
    leap.check()
    leap.set_value(b1, "b")  # its own value: a no-op even though b3 comes later
    assert [n.seq for n in leap.nodes("b")] == [1, 3]
    with pytest.raises(PreconditionError):
        leap.set_value(a2, "b")  # b3 holds "b" and comes after a2
    leap.set_value(b3, "b")
    leap.set_value(a2, "c")  # a fresh value
    leap.set_value(b3, "c")  # a2 is the only "c" and comes before b3
    assert leap.values() == ["a", "b", "c", "c"]
    assert leap.leap(a2) is b3
    assert leap.leapback(b3) is a2
    assert leap.last("b") is b1
    leap.check()


def test_set_value_moves_node_to_the_end_of_its_new_chain() -> None:
    leap = Leap("abab")
    a0, b1, a2, b3 = list(leap)
    leap.set_value(b3, "a")  # every "a" (a0, a2) comes before b3
    assert leap.values() == ["a", "b", "a", "a"]
    assert [n.seq for n in leap.nodes("a")] == [0, 2, 3]
    assert leap.last("b") is b1
    assert leap.count("a") == 3
    leap.set_value(b1, "z")  # a fresh value: always allowed
    assert leap.first("z") is b1
    assert "b" not in leap
    assert leap.leap(a0) is a2
    leap.check()


def test_dead_and_foreign_nodes_are_rejected() -> None:
    leap = Leap("abc")
    other = Leap("abc")
    _, b, _ = list(leap)
    leap.delete(b)
    assert b.owner is None
    assert "dead" in repr(b)
    calls: list[Callable[[], object]] = [
        lambda: leap.delete(b),
        lambda: leap.set_value(b, "x"),
        lambda: leap.next(b),
        lambda: leap.prev(b),
        lambda: leap.leap(b),
        lambda: leap.leapback(b),
    ]
    for call in calls:
        with pytest.raises(PreconditionError, match="dead"):
            call()
    assert other.head is not None
    with pytest.raises(PreconditionError, match="another Leap"):
        leap.next(other.head)
    with pytest.raises(TypeError, match="expected a LeapNode"):
        leap.delete("a")  # type: ignore[arg-type]
    assert leap.values() == ["a", "c"]
    assert other.values() == ["a", "b", "c"]
    leap.check()
    other.check()


def test_iteration_survives_deletions_around_the_cursor() -> None:
    leap = Leap(range(10))
    seen = []
    for node in leap:
        seen.append(node.val)
        after = leap.next(node)
        leap.delete(node)
        if after is not None:
            leap.delete(after)
    assert seen == [0, 2, 4, 6, 8]
    assert len(leap) == 0
    leap.check()


def test_iteration_sees_appends() -> None:
    leap = Leap([1])
    seen = []
    for node in leap:
        seen.append(node.val)
        if node.val < 4:
            leap.append(node.val + 1)
    assert seen == [1, 2, 3, 4]


def test_nodes_refuses_to_guess_when_the_chain_moved() -> None:
    leap = Leap("aa")
    a0, a1 = list(leap)
    it = leap.nodes("a")
    assert next(it) is a0
    leap.set_value(a0, "x")
    leap.set_value(a1, "y")  # the node the iterator would resume from left the chain
    with pytest.raises(RuntimeError, match="chain changed"):
        next(it)


def test_nodes_refuses_to_follow_a_node_that_left_the_chain_then_died() -> None:
    leap = Leap("aaa")
    a0, a1, _ = list(leap)
    it = leap.nodes("a")
    assert next(it) is a0
    leap.set_value(a0, "x")
    leap.set_value(a1, "y")  # the resume point moves to the "y" chain...
    leap.delete(a1)  # ... and dies there: its stale link leads along "y", not "a"
    with pytest.raises(RuntimeError, match="chain changed"):
        next(it)


def test_nodes_survive_relabelling_the_current_node() -> None:
    leap = Leap("abacada")
    relabelled = []
    for node in leap.nodes("a"):
        leap.set_value(node, "z")
        relabelled.append(node.seq)
    assert relabelled == [0, 2, 4, 6]
    assert "".join(leap.values()) == "zbzczdz"
    leap.check()


def test_repr() -> None:
    leap = Leap("ab")
    assert repr(leap) == "Leap(['a', 'b'])"
    assert repr(leap.head) == "LeapNode(val='a', seq=0)"


# -- check() catches corruption ------------------------------------------------------


def nodes_of(leap: Leap[str]) -> list[LeapNode[str]]:
    return list(leap)


def corrupt_prev(leap: Leap[str]) -> None:
    nodes_of(leap)[2].prev = None


def corrupt_vnext(leap: Leap[str]) -> None:
    nodes_of(leap)[0].vnext = None


def corrupt_count(leap: Leap[str]) -> None:
    leap._count["a"] += 1


def corrupt_last(leap: Leap[str]) -> None:
    leap._last["a"] = leap._first["a"]


def corrupt_value(leap: Leap[str]) -> None:
    nodes_of(leap)[1].val = "a"  # relabelled behind the chains' back


def corrupt_seq(leap: Leap[str]) -> None:
    nodes = nodes_of(leap)
    nodes[1].seq, nodes[2].seq = nodes[2].seq, nodes[1].seq


def corrupt_tail(leap: Leap[str]) -> None:
    leap._tail = leap._head


def corrupt_dead(leap: Leap[str]) -> None:
    nodes_of(leap)[3].owner = None


def corrupt_stray_key(leap: Leap[str]) -> None:
    leap._first["q"] = nodes_of(leap)[0]


@pytest.mark.parametrize(
    "corrupt",
    [
        corrupt_prev,
        corrupt_vnext,
        corrupt_count,
        corrupt_last,
        corrupt_value,
        corrupt_seq,
        corrupt_tail,
        corrupt_dead,
        corrupt_stray_key,
    ],
)
def test_check_catches_corruption(corrupt: Callable[[Leap[str]], None]) -> None:
    leap = Leap("abcab")
    leap.check()
    corrupt(leap)
    with pytest.raises(InvariantError) as info:
        leap.check()
    assert info.value.state is not None
    assert "count" in info.value.state


class CarelessLeap(Leap[int]):
    """A bug the machine must catch: set_value skips its precondition check."""

    def set_value(self, node: LeapNode[int], value: int) -> None:
        if node.val == value:
            return
        self._unchain(node)
        node.val = value
        last = self._last.get(value)
        node.vprev, node.vnext = last, None
        if last is None:
            self._first[value] = node
            self._count[value] = 1
        else:
            last.vnext = node
            self._count[value] += 1
        self._last[value] = node


def test_machine_catches_a_buggy_implementation() -> None:
    machine = leap_machine(CarelessLeap)
    # Caught either by a check (AssertionError, InvariantError) or by the careless Leap
    # tripping over its own corrupted chains (a KeyError in its value counts) in a later
    # step: which comes first depends on the examples generated.
    with pytest.raises((AssertionError, InvariantError, KeyError)):
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=200, stateful_step_count=30, phases=[Phase.generate], database=None
            ),
        )
