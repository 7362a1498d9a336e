"""Tests for IndexedList: the state machine from bpeds.testing.lists, plus hand-checked cases."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from bpeds.errors import InvariantError, PreconditionError
from bpeds.structures.indexed_list import IndexedList, ListNode
from bpeds.testing.lists import indexed_list_machine, token_chunks, token_pairs
from tests.budget import examples, profile_examples

TestIndexedListMachine = indexed_list_machine(IndexedList).TestCase
TestIndexedListMachine.settings = settings(
    max_examples=examples(ci=200, local=25), stateful_step_count=50
)


def merge(lst: IndexedList[str], pair: tuple[str, str], new: str) -> int:
    """The spec's merge recipe; returns the number of merges done."""
    done = 0
    for node in lst.occurrences(pair):
        after = node.next
        assert after is not None
        lst.delete(after)
        lst.set_value(node, new)
        done += 1
    return done


# -- golden examples -----------------------------------------------------------------


def test_wikipedia_example() -> None:
    # https://en.wikipedia.org/wiki/Byte_pair_encoding: aaabdaaabac, Z=aa, Y=ab, X=ZY.
    lst = IndexedList("aaabdaaabac")
    assert lst.pair_counts()[("a", "a")] == 4
    assert lst.pair_counts(overlapping=False)[("a", "a")] == 2
    assert merge(lst, ("a", "a"), "Z") == 2
    assert "".join(lst.values()) == "ZabdZabac"
    lst.check()
    assert merge(lst, ("a", "b"), "Y") == 2
    assert "".join(lst.values()) == "ZYdZYac"
    lst.check()
    assert merge(lst, ("Z", "Y"), "X") == 2
    assert "".join(lst.values()) == "XdXac"
    assert len(lst) == 5
    assert lst.pair_counts() == {("X", "d"): 1, ("d", "X"): 1, ("X", "a"): 1, ("a", "c"): 1}
    lst.check()


def test_run_merges_left_to_right_without_overlap() -> None:
    lst = IndexedList("aaaa")
    visited = []
    for node in lst.occurrences(("a", "a")):
        visited.append(node.pos)
        after = node.next
        assert after is not None
        lst.delete(after)
        lst.set_value(node, "Z")
    assert visited == [0, 2]  # node 1 died with the first merge, node 2 is then yielded
    assert lst.values() == ["Z", "Z"]
    assert lst.entries_scanned == 3
    assert lst.entries_skipped == 1
    lst.check()


@pytest.mark.parametrize(
    ("text", "overlapping", "non_overlapping"),
    [("", 0, 0), ("a", 0, 0), ("aa", 1, 1), ("aaa", 2, 1), ("aaaa", 3, 2), ("aaaaa", 4, 2)],
)
def test_run_counts(text: str, overlapping: int, non_overlapping: int) -> None:
    lst = IndexedList(text)
    assert lst.pair_counts().get(("a", "a"), 0) == overlapping
    assert lst.pair_counts(overlapping=False).get(("a", "a"), 0) == non_overlapping
    # A full merge pass does exactly the non-overlapping count of merges.
    assert merge(lst, ("a", "a"), "Z") == non_overlapping


def test_non_overlapping_counts_restart_after_a_different_pair() -> None:
    assert IndexedList("aaabaaa").pair_counts(overlapping=False) == {
        ("a", "a"): 2,
        ("a", "b"): 1,
        ("b", "a"): 1,
    }


# -- chunks --------------------------------------------------------------------------


def test_chunks_never_form_cross_chunk_pairs() -> None:
    lst = IndexedList.from_chunks(["ab", "", "ba", "a"])
    assert lst.chunks() == [["a", "b"], ["b", "a"], ["a"]]
    assert lst.values() == ["a", "b", "b", "a", "a"]
    assert [n.pos for n in lst] == [0, 1, 2, 3, 4]
    assert lst.pair_counts() == {("a", "b"): 1, ("b", "a"): 1}
    assert list(lst.occurrences(("b", "b"))) == []
    assert list(lst.occurrences(("a", "a"))) == []
    # Deleting a chunk's last node leaves its neighbour chunk alone.
    first = next(iter(lst))
    assert first.next is not None
    lst.delete(first.next)
    lst.delete(first)
    assert lst.chunks() == [["b", "a"], ["a"]]
    assert list(lst.occurrences(("a", "b"))) == []
    assert merge(lst, ("b", "a"), "c") == 1
    assert lst.chunks() == [["c"], ["a"]]
    assert list(lst.occurrences(("c", "a"))) == []
    lst.check()


@settings(max_examples=profile_examples(local=30))
@given(token_chunks(), token_pairs())
def test_occurrences_stay_inside_chunks(chunks: list[list[int]], pair: tuple[int, int]) -> None:
    lst = IndexedList.from_chunks(chunks)
    found = [(n.val, n.next.val if n.next else None) for n in lst.occurrences(pair)]
    expected = sum(1 for chunk in chunks for x, y in itertools.pairwise(chunk) if (x, y) == pair)
    assert found == [pair] * expected


def test_counters_of_an_abandoned_iteration() -> None:
    lst = IndexedList("abxabyab")
    for node in lst.occurrences(("a", "b")):
        lst.merge_with_next(node, "c")
        break
    assert (lst.entries_scanned, lst.entries_skipped) == (1, 0)
    assert [n.pos for n in lst.occurrences(("a", "b"))] == [3, 6]
    assert (lst.entries_scanned, lst.entries_skipped) == (4, 1)


def test_absent_pair_yields_nothing() -> None:
    lst = IndexedList("abc")
    assert list(lst.occurrences(("x", "y"))) == []
    assert list(lst.occurrences(("c", "a"))) == []
    assert list(IndexedList[str]().occurrences(("a", "a"))) == []
    assert lst.entries_scanned == 0


# -- laziness, compaction, counters --------------------------------------------------


def test_in_order_appends_need_no_sort() -> None:
    lst = IndexedList("abababab")
    merge(lst, ("a", "b"), "Z")  # appends (Z, Z) entries left to right
    assert list(lst.occurrences(("Z", "Z")))
    assert lst.sorts == 0
    lst.check()


def test_out_of_order_appends_are_sorted_once() -> None:
    lst = IndexedList("xaxbxb")
    nodes = list(lst)
    lst.set_value(nodes[3], "a")  # (x, a) at pos 2: appended after pos 0, in order
    assert lst.sorts == 0
    lst.set_value(nodes[1], "b")  # (x, b) at pos 0: appended after pos 2 and 4
    assert [n.pos for n in lst.occurrences(("x", "b"))] == [0, 4]
    assert lst.sorts == 1
    assert [n.pos for n in lst.occurrences(("x", "b"))] == [0, 4]
    assert lst.sorts == 1
    lst.check()


def test_compact_drops_stale_and_duplicate_entries() -> None:
    lst = IndexedList("aaaa")
    merge(lst, ("a", "a"), "Z")
    before = lst.index_size()
    nodes = list(lst)
    lst.set_value(nodes[0], "Z")  # a no-op: no new entry
    assert lst.index_size() == before
    dropped = lst.compact()
    assert dropped == before - lst.index_size() > 0
    assert lst.entries_dropped == dropped
    assert lst.index_size() == 1  # only (Z, Z) at node 0 is live
    assert [n.pos for n in lst.occurrences(("Z", "Z"))] == [0]
    assert lst.compact() == 0
    lst.check()


def test_compact_one_pair() -> None:
    lst = IndexedList("abab")
    merge(lst, ("a", "b"), "c")
    assert lst.compact(("a", "b")) == 2
    assert lst.compact(("q", "q")) == 0
    assert list(lst.occurrences(("a", "b"))) == []
    assert [n.pos for n in lst.occurrences(("c", "c"))] == [0]
    lst.check()


def test_compact_during_occurrences_is_safe() -> None:
    lst = IndexedList("abababab")
    seen = []
    for node in lst.occurrences(("a", "b")):
        seen.append(node.pos)
        lst.merge_with_next(node, "c")
        lst.compact()
    assert seen == [0, 2, 4, 6]
    assert lst.values() == ["c"] * 4
    lst.check()


# -- merge_with_next -----------------------------------------------------------------


@settings(max_examples=examples(ci=200, local=60))
@given(token_chunks(max_chunks=3, max_chunk_size=8), st.lists(token_pairs(), max_size=6))
def test_merge_with_next_equals_delete_then_set_value(
    chunks: list[list[int]], merges: list[tuple[int, int]]
) -> None:
    recipe = IndexedList.from_chunks(chunks)
    fused = IndexedList.from_chunks(chunks)
    for new, pair in enumerate(merges, start=10):
        for node in recipe.occurrences(pair):
            after = node.next
            assert after is not None
            recipe.delete(after)
            recipe.set_value(node, new)
        for node in fused.occurrences(pair):
            fused.merge_with_next(node, new)
        assert fused.chunks() == recipe.chunks()
        fused.check()
        recipe.check()
    assert fused.index_size() <= recipe.index_size()


def test_merge_with_next_needs_a_successor() -> None:
    lst = IndexedList.from_chunks(["a", "b"])
    with pytest.raises(PreconditionError, match="last node of its chunk"):
        lst.merge_with_next(next(iter(lst)), "c")


# -- bad nodes, iteration ------------------------------------------------------------


def test_dead_and_foreign_nodes_are_rejected() -> None:
    lst = IndexedList("abc")
    other = IndexedList("abc")
    a, b, _ = list(lst)
    lst.delete(b)
    assert b.owner is None
    assert b.prev is None
    assert b.next is None
    assert "dead" in repr(b)
    calls: list[Callable[[], None]] = [
        lambda: lst.delete(b),
        lambda: lst.set_value(b, "x"),
        lambda: lst.merge_with_next(b, "x"),
    ]
    for call in calls:
        with pytest.raises(PreconditionError, match="dead"):
            call()
    foreign = next(iter(other))
    with pytest.raises(PreconditionError, match="another IndexedList"):
        lst.delete(foreign)
    with pytest.raises(TypeError, match="expected a ListNode"):
        lst.delete("a")  # type: ignore[arg-type]
    assert lst.values() == ["a", "c"]
    assert other.values() == ["a", "b", "c"]
    assert a.next is not None
    assert a.next.val == "c"
    lst.check()
    other.check()


def test_unhashable_value_fails_clean() -> None:
    lst = IndexedList("abc")
    a, b, _ = list(lst)
    with pytest.raises(TypeError, match="unhashable"):
        lst.set_value(b, ["x"])  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="unhashable"):
        lst.merge_with_next(a, ["x"])  # type: ignore[arg-type]
    assert lst.values() == ["a", "b", "c"]
    lst.check()


def test_iteration_survives_deleting_the_current_node() -> None:
    lst = IndexedList.from_chunks(["abca", "aa"])
    for node in lst:
        if node.val == "a":
            lst.delete(node)
    assert lst.chunks() == [["b", "c"]]
    lst.check()


def test_iteration_refuses_to_guess_after_two_deletions() -> None:
    lst = IndexedList("abcd")
    it: Iterator[ListNode[str]] = iter(lst)
    node = next(it)
    assert node.next is not None
    lst.delete(node.next)
    lst.delete(node)
    with pytest.raises(RuntimeError, match="changed during iteration"):
        next(it)


def test_repr() -> None:
    assert repr(IndexedList("ab")) == "IndexedList(['a', 'b'])"
    assert repr(IndexedList.from_chunks(["a", "b"])) == "IndexedList.from_chunks([['a'], ['b']])"
    assert repr(next(iter(IndexedList("a")))) == "ListNode(val='a', pos=0)"


# -- check() catches corruption ------------------------------------------------------


def corrupt_prev(lst: IndexedList[str]) -> None:
    nodes = list(lst)
    nodes[2].prev = nodes[0]


def corrupt_index(lst: IndexedList[str]) -> None:
    lst._index[("a", "b")].pop()


def corrupt_pos(lst: IndexedList[str]) -> None:
    nodes = list(lst)
    nodes[1].pos, nodes[2].pos = nodes[2].pos, nodes[1].pos


def corrupt_len(lst: IndexedList[str]) -> None:
    lst._len += 1


def corrupt_dead_reachable(lst: IndexedList[str]) -> None:
    list(lst)[1].owner = None


def corrupt_unsorted(lst: IndexedList[str]) -> None:
    lst._index[("a", "b")].reverse()


def corrupt_head(lst: IndexedList[str]) -> None:
    lst._heads[0] = list(lst)[1]


@pytest.mark.parametrize(
    "corrupt",
    [
        corrupt_prev,
        corrupt_index,
        corrupt_pos,
        corrupt_len,
        corrupt_dead_reachable,
        corrupt_unsorted,
        corrupt_head,
    ],
)
def test_check_catches_corruption(corrupt: Callable[[IndexedList[str]], None]) -> None:
    lst = IndexedList("abcab")
    lst.check()
    corrupt(lst)
    with pytest.raises(InvariantError) as info:
        lst.check()
    assert info.value.state is not None
    assert "chunks" in info.value.state


class StaleOccurrences(IndexedList[int]):
    """A bug the machine must catch: occurrences trusts the stale index."""

    def occurrences(self, pair: tuple[int, int]) -> Iterator[ListNode[int]]:
        return iter(list(self._index.get(pair, [])))


def test_machine_catches_a_buggy_implementation() -> None:
    machine = indexed_list_machine(StaleOccurrences)
    with pytest.raises(AssertionError):
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=200, stateful_step_count=30, phases=[Phase.generate], database=None
            ),
        )
