"""Tests for the Multiset implementations: the shared state machine plus targeted cases."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal, assert_type

import pytest
from hypothesis import Phase, given, seed, settings
from hypothesis import strategies as st
from hypothesis.stateful import run_state_machine_as_test

from bpeds.errors import EmptyError, InvariantError, PreconditionError
from bpeds.structures.baselines import CounterMultiset, HeapqMultiset, SortedMultiset
from bpeds.structures.batched import Batched
from bpeds.structures.heapy import Heapy
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.protocols import Multiset, TieKey
from bpeds.testing.multisets import (
    MultisetModel,
    multiset_machine,
    negated,
    priorities,
    quick_settings,
)
from tests.budget import examples

MACHINE_SETTINGS = settings(
    max_examples=examples(ci=60, local=10), stateful_step_count=40, database=None
)

Factory = Callable[..., Any]

# One factory per implementation, keyed by a readable id. ``initial`` is passed positionally.
FACTORIES: dict[str, Factory] = {
    "Heapy": lambda initial=None, tie=None: Heapy(initial, tie=tie),
    "HeapyKiYay": lambda initial=None, tie=None: HeapyKiYay(initial, tie=tie),
    "Batched(Heapy)": lambda initial=None, tie=None: Batched(Heapy(initial, tie=tie)),
    "Batched(HeapyKiYay)": lambda initial=None, tie=None: Batched(HeapyKiYay(initial, tie=tie)),
    # Tiny rebuild thresholds, so rebuilds happen constantly under test.
    "HeapqMultiset": lambda initial=None, tie=None: HeapqMultiset(
        initial, tie=tie, stale_factor=1, stale_min=2
    ),
    "SortedMultiset": lambda initial=None, tie=None: SortedMultiset(initial, tie=tie),
    "CounterMultiset": lambda initial=None, tie=None: CounterMultiset(initial, tie=tie),
}
HEAPS = ["Heapy", "HeapyKiYay", "Batched(Heapy)", "Batched(HeapyKiYay)"]

# -- the state machine, once per implementation ---------------------------------------------


# Each run builds the heap either from the constructor's initial mapping or by updates.
TestHeapyMachine = multiset_machine(
    lambda tie: Heapy(tie=tie), initial_factory=lambda initial, tie: Heapy(initial, tie=tie)
).TestCase
TestHeapyMachine.settings = MACHINE_SETTINGS
TestHeapyKiYayMachine = multiset_machine(
    lambda tie: HeapyKiYay(tie=tie),
    initial_factory=lambda initial, tie: HeapyKiYay(initial, tie=tie),
).TestCase
TestHeapyKiYayMachine.settings = MACHINE_SETTINGS
TestBatchedHeapyMachine = multiset_machine(lambda tie: Batched(Heapy(tie=tie))).TestCase
TestBatchedHeapyMachine.settings = MACHINE_SETTINGS
TestBatchedHeapyKiYayMachine = multiset_machine(lambda tie: Batched(HeapyKiYay(tie=tie))).TestCase
TestBatchedHeapyKiYayMachine.settings = MACHINE_SETTINGS
TestHeapqMachine = multiset_machine(
    lambda tie: HeapqMultiset(tie=tie, stale_factor=1, stale_min=2)
).TestCase
TestHeapqMachine.settings = MACHINE_SETTINGS
TestSortedMachine = multiset_machine(lambda tie: SortedMultiset(tie=tie)).TestCase
TestSortedMachine.settings = MACHINE_SETTINGS
TestCounterMachine = multiset_machine(lambda tie: CounterMultiset(tie=tie)).TestCase
TestCounterMachine.settings = MACHINE_SETTINGS

# order="min": the same machine, its model ranking the smallest priority first.
TestMinHeapyKiYayMachine = multiset_machine(
    lambda tie: HeapyKiYay(tie=tie, order="min"),
    order="min",
    initial_factory=lambda initial, tie: HeapyKiYay(initial, tie=tie, order="min"),
).TestCase
TestMinHeapyKiYayMachine.settings = MACHINE_SETTINGS
TestMinHeapyMachine = multiset_machine(
    lambda tie: Heapy(tie=tie, order="min"),
    order="min",
    initial_factory=lambda initial, tie: Heapy(initial, tie=tie, order="min"),
).TestCase
TestMinHeapyMachine.settings = MACHINE_SETTINGS
TestMinBatchedMachine = multiset_machine(
    lambda tie: Batched(HeapyKiYay(tie=tie, order="min")), order="min"
).TestCase
TestMinBatchedMachine.settings = MACHINE_SETTINGS


def test_min_order_is_not_max_order() -> None:
    """A max-heap under the min machine (and the reverse) is caught: the order is really tested."""
    cases: list[tuple[Factory, Literal["max", "min"]]] = [
        (lambda tie: HeapyKiYay(tie=tie), "min"),
        (lambda tie: HeapyKiYay(tie=tie, order="min"), "max"),
        (lambda tie: Heapy(tie=tie), "min"),
        (lambda tie: Heapy(tie=tie, order="min"), "max"),
    ]
    for factory, order in cases:
        machine = multiset_machine(factory, kinds=["int"], order=order)
        with pytest.raises(AssertionError, match="implementation gave"):
            run_state_machine_as_test(
                machine,
                settings=settings(
                    max_examples=100, stateful_step_count=30, database=None, phases=[Phase.generate]
                ),
            )


def test_order_argument() -> None:
    h: HeapyKiYay[str, tuple[int, int]] = HeapyKiYay({"a": (2, 0), "b": (1, 5)}, order="min")
    assert h.order == "min"
    assert HeapyKiYay().order == "max"
    assert Batched(HeapyKiYay(order="min")).order == "min"
    assert Heapy(order="min").order == "min"
    assert isinstance(h, HeapyKiYay)
    assert h.top() == ("b", (1, 5))
    assert repr(h) == "HeapyKiYay({'b': (1, 5), 'a': (2, 0)}, order='min')"
    with pytest.raises(ValueError, match="order must be 'max'"):
        HeapyKiYay(order="smallest")  # type: ignore[arg-type]

    class Mine(HeapyKiYay[str, int]):
        __slots__ = ()

    with pytest.raises(TypeError, match="order='min' is built by HeapyKiYay itself"):
        Mine(order="min")
    assert Mine({"a": 1}).top() == ("a", 1)


class _LargestTieWins(CounterMultiset[Any, Any]):
    """A deliberately wrong implementation: ties go to the *largest* tie key."""

    def top(self) -> tuple[Any, Any]:
        if not self._prio:
            raise EmptyError("empty")
        best = max(self._prio.values())
        return max((self._ties[k], k) for k, p in self._prio.items() if p == best)[1], best


def test_machine_catches_a_wrong_tie_rule() -> None:
    machine = multiset_machine(lambda tie: _LargestTieWins(tie=tie), kinds=["int"])
    with pytest.raises(AssertionError, match="implementation gave"):
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=100, stateful_step_count=30, database=None, phases=[Phase.generate]
            ),
        )


class _RemovesOne(HeapyKiYay[Any, Any]):
    """A subtle bug: ``remove(key, n)`` subtracts 1 whatever ``n`` is."""

    __slots__ = ()

    def remove(self, key: Any, n: int = 1) -> None:
        super().remove(key, min(n, 1))


def test_quick_settings_catch_a_subtle_bug_and_say_what_happened() -> None:
    # Seeded: 50 random runs miss this bug about one time in ten, and a test that fails by
    # chance says nothing about the settings. (Derandomizing is not enough: its seed comes
    # from the machine's source, which a class made at run time may or may not have.)
    machine = seed(0)(multiset_machine(lambda tie: _RemovesOne(tie=tie)))
    quick = quick_settings(shrink=False, database=None)
    assert (quick.max_examples, quick.stateful_step_count) == (50, 20)
    assert Phase.shrink not in quick.phases
    assert Phase.shrink in quick_settings().phases
    with pytest.raises(AssertionError, match=r"implementation (did not raise|gave)"):
        run_state_machine_as_test(machine, settings=quick)


def test_failure_messages_name_what_was_raised() -> None:
    class RaisesIndexError(HeapyKiYay[Any, Any]):
        __slots__ = ()

        def top(self) -> Any:
            if not self:
                raise IndexError("empty")  # EmptyError is an IndexError, but not exactly
            return super().top()

    machine = multiset_machine(lambda tie: RaisesIndexError(tie=tie), kinds=["int"])
    expected = r"top\(\): implementation raised IndexError\('empty'\); the model raised EmptyError"
    with pytest.raises(AssertionError, match=expected):
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=200, stateful_step_count=10, database=None, phases=[Phase.generate]
            ),
        )


# -- construction ---------------------------------------------------------------------------


@pytest.mark.parametrize("name", list(FACTORIES))
@given(
    initial=st.dictionaries(st.integers(0, 40), priorities("int"), max_size=40),
    tie=st.sampled_from([None, negated]),
)
@settings(max_examples=examples(ci=25, local=10), database=None)
def test_initial_mapping(name: str, initial: dict[int, int], tie: TieKey | None) -> None:
    real = FACTORIES[name](initial, tie)
    real.check()
    model = MultisetModel(initial, tie=tie)
    assert len(real) == len(model)
    assert real.most_common() == model.most_common()
    assert real.most_common(3) == model.most_common(3)
    assert [real.pop() for _ in range(len(model))] == [model.pop() for _ in range(len(model))]
    real.check()


@pytest.mark.parametrize("name", ["Heapy", "HeapyKiYay"])
def test_large_heapify_and_drain(name: str) -> None:
    initial = {(i, (i * 37) % 101): (i * 7919) % 13 for i in range(2000)}
    real = FACTORIES[name](initial, None)
    real.check()
    for i in range(0, 2000, 3):
        real.add((i, (i * 37) % 101), i % 5)
    for i in range(1, 2000, 7):
        real.discard((i, (i * 37) % 101))
    real.check()
    model = MultisetModel(dict(real.items()))
    assert real.most_common(10) == model.most_common(10)
    drained = [real.pop() for _ in range(len(real))]
    assert drained == model.most_common()
    real.check()


@pytest.mark.parametrize("name", list(FACTORIES))
def test_protocol_edges(name: str) -> None:
    real = FACTORIES[name]()
    with pytest.raises(EmptyError):
        real.top()
    with pytest.raises(IndexError):  # EmptyError is an IndexError
        real.pop()
    real.add("a", 0)  # a count of 0 is absence: add(k, 0) inserts nothing
    assert "a" not in real
    real.update("a", 0)  # update keeps any priority, 0 included
    assert "a" in real
    assert real.count("a") == 0
    assert real.top() == ("a", 0)
    with pytest.raises(ValueError, match="n >= 0"):
        real.add("a", -1)
    with pytest.raises(PreconditionError, match="not present"):
        real.remove("b")
    with pytest.raises(PreconditionError, match="only 0"):
        real.remove("a", 1)
    real.remove("a", 0)  # reaching 0 by remove: the key leaves
    assert "a" not in real
    assert real.count("a") == 0
    real.update("n", -3)
    real.add("n", 3)  # reaching 0 by add: the key leaves too (one rule for both)
    assert "n" not in real
    real.update("z", 0)
    real.add("z", 0)  # add(k, 0) on a key at 0: it is at 0 after a counting call, so it leaves
    assert "z" not in real
    real.update("b", 0)  # update never removes
    assert "b" in real
    with pytest.raises(ValueError, match="most_common"):
        real.most_common(-1)
    real.discard("zz")
    real.check()


@pytest.mark.parametrize("name", list(FACTORIES))
def test_bad_arguments(name: str) -> None:
    with pytest.raises(TypeError, match="tie must be a callable"):
        FACTORIES[name](None, "not callable")


def test_batched_rejects_a_non_multiset() -> None:
    with pytest.raises(TypeError, match="Batched wraps a Multiset"):
        Batched({"a": 1})  # type: ignore[arg-type]


def test_heapq_rejects_bad_thresholds() -> None:
    with pytest.raises(ValueError, match="stale_factor"):
        HeapqMultiset(stale_factor=-1)
    with pytest.raises(ValueError, match="stale_min"):
        HeapqMultiset(stale_min=1.5)  # type: ignore[arg-type]


# -- check() catches corruption ---------------------------------------------------------------


def _filled(name: str) -> Any:
    return FACTORIES[name]({k: k % 4 + 1 for k in range(20)}, None)


def _corruptions() -> list[tuple[str, Callable[[Any], None]]]:
    def heapy_order(h: Any) -> None:
        h._root.prio = -100

    def heapy_parent(h: Any) -> None:
        h._root.left.parent = h._root.right

    def heapy_shape(h: Any) -> None:
        h._root.left.left = None  # drops a subtree: a gap in level order

    def heapy_dict(h: Any) -> None:
        h._index[999] = h._root

    def kiyay_order(h: Any) -> None:
        h._heap[5].prio = 100

    def kiyay_pos(h: Any) -> None:
        h._heap[3].pos = 4

    def kiyay_tie(h: Any) -> None:
        h._heap[7].tie = -7

    def kiyay_index(h: Any) -> None:
        del h._index[h._heap[2].key]

    def heapq_order(h: Any) -> None:
        h._heap[4].prio = 100

    def heapq_lost(h: Any) -> None:
        h._heap.pop()

    def sorted_order(h: Any) -> None:
        h._sorted._lists[0][0].prio = -5

    def counter_ties(h: Any) -> None:
        del h._ties[3]

    def batched_delta(h: Any) -> None:
        h._pending[3] = 1.5  # deltas are ints: a float would round at every flush

    def batched_inner(h: Any) -> None:
        h._inner._heap[1].pos = 0

    return [
        ("Heapy", heapy_order),
        ("Heapy", heapy_parent),
        ("Heapy", heapy_shape),
        ("Heapy", heapy_dict),
        ("HeapyKiYay", kiyay_order),
        ("HeapyKiYay", kiyay_pos),
        ("HeapyKiYay", kiyay_tie),
        ("HeapyKiYay", kiyay_index),
        ("HeapqMultiset", heapq_order),
        ("HeapqMultiset", heapq_lost),
        ("SortedMultiset", sorted_order),
        ("CounterMultiset", counter_ties),
        ("Batched(Heapy)", batched_delta),
        ("Batched(HeapyKiYay)", batched_inner),
    ]


@pytest.mark.parametrize(
    ("name", "corrupt"), _corruptions(), ids=[f"{n}-{f.__name__}" for n, f in _corruptions()]
)
def test_check_catches_corruption(name: str, corrupt: Callable[[Any], None]) -> None:
    real = _filled(name)
    real.check()
    corrupt(real)
    with pytest.raises(InvariantError) as info:
        real.check()
    assert info.value.state is not None
    assert "state:" in str(info.value)


# -- comparators that raise -------------------------------------------------------------------


class Bomb:
    """A priority that refuses every comparison."""

    def __lt__(self, other: object) -> bool:
        raise RuntimeError("Bomb compared")

    def __gt__(self, other: object) -> bool:
        raise RuntimeError("Bomb compared")


class Fused:
    """An int-like priority that compares normally ``fuse`` times, then raises."""

    def __init__(self, value: int, fuse: int) -> None:
        self.value = value
        self.fuse = fuse

    def _other(self, other: object) -> int:
        if self.fuse <= 0:
            raise RuntimeError("fuse burnt")
        self.fuse -= 1
        return other.value if isinstance(other, Fused) else int(other)  # type: ignore[call-overload]

    def __lt__(self, other: object) -> bool:
        return self.value < self._other(other)

    def __gt__(self, other: object) -> bool:
        return self.value > self._other(other)


def _snapshot(real: Any) -> tuple[dict[Any, Any], list[tuple[Any, Any]]]:
    return dict(real.items()), real.most_common()


RAISING_CASES = [
    # (implementations, make the priority, key): key 27 sits deep, key 4 is the top, 99 is new.
    pytest.param(list(FACTORIES)[:-1], lambda: Bomb(), 27, id="bomb-existing"),
    pytest.param(list(FACTORIES)[:-1], lambda: Bomb(), 99, id="bomb-new"),
    # Compares fine for a level or two of sifting, then raises mid-sift.
    pytest.param(HEAPS, lambda: Fused(100, 4), 27, id="fused-up-existing"),
    pytest.param(HEAPS, lambda: Fused(100, 2), 99, id="fused-up-new"),
    pytest.param(HEAPS, lambda: Fused(-100, 4), 4, id="fused-down-existing"),
]


@pytest.mark.parametrize(("names", "make", "key"), RAISING_CASES)
def test_raising_comparator_is_undone(names: list[str], make: Callable[[], Any], key: int) -> None:
    """Documented: an update whose comparisons raise is undone, then the error propagates."""
    for name in names:
        real = FACTORIES[name]({k: k % 5 for k in range(31)}, None)
        before = _snapshot(real)
        with pytest.raises(RuntimeError):
            real.update(key, make())
        real.check()
        assert _snapshot(real) == before, name
        real.add(3, 10)  # still fully usable
        assert real.top() == (3, 13)
        real.check()


def test_counter_baseline_stores_a_raising_priority_until_discarded() -> None:
    """Documented: CounterMultiset compares only in queries, which raise until it is gone."""
    real: CounterMultiset[int, Any] = CounterMultiset({1: 1, 2: 2})
    real.update(3, Bomb())
    real.check()
    with pytest.raises(RuntimeError):
        real.top()
    real.discard(3)
    assert real.top() == (2, 2)


def test_batched_deferred_add_on_a_tuple_priority() -> None:
    """Documented: the TypeError surfaces at the flush; the key's delta is dropped."""
    real: Batched[str, Any] = Batched(HeapyKiYay({"s": (0, 5)}))
    real.update("t", (1, 2))
    real.add("t")  # accepted now: Batched does no arithmetic at call time
    with pytest.raises(TypeError):
        real.top()
    real.check()
    assert real.count("t") == (1, 2)
    assert real.most_common() == [("t", (1, 2)), ("s", (0, 5))]
    real.check()


# -- Batched specifics --------------------------------------------------------------------------


def test_batched_nets_deltas_and_validates_removes_at_call_time() -> None:
    inner: HeapyKiYay[str, int] = HeapyKiYay({"ab": 5, "bc": 4, "cd": 1})
    real = Batched(inner)
    sifts = inner.sifts
    for _ in range(50):
        real.add("bc")
        real.remove("bc")
    real.remove("cd")  # down to 0: must leave
    assert "cd" not in real
    with pytest.raises(PreconditionError):
        real.remove("cd")
    with pytest.raises(PreconditionError):
        real.remove("ab", 6)
    real.add("cd", 2)  # back, from 0
    assert real.count("cd") == 2
    assert inner.sifts == sifts  # nothing applied yet
    assert real.top() == ("ab", 5)
    assert (real.flushes, real.applied, real.netted) == (1, 1, 1)  # "bc" cost nothing
    assert dict(real.items()) == {"ab": 5, "bc": 4, "cd": 2}
    real.check()


def test_batched_presence_at_zero() -> None:
    real: Batched[str, Any] = Batched(Heapy())
    real.add("x", 2)
    real.remove("x", 2)
    assert "x" not in real
    real.add("x", 0)  # add at 0 on an absent key: still absent
    assert "x" not in real
    real.update("y", -3)
    real.add("y", 3)  # add landing on 0: the key leaves (the same rule as remove)
    assert "y" not in real
    assert real.count("y") == 0
    real.update("z", 0)
    real.add("z", 2)
    real.remove("z", 2)  # netted out on a key held at 0: the flush must take it out
    assert "z" not in real
    real.update("w", 4)
    real.remove("w", 4)
    real.add("w", 1)  # gone, then back
    assert "w" in real
    real.check()
    assert dict(real.items()) == {"w": 1}
    assert "z" not in real.inner
    real.check()


def test_batched_update_and_discard_keep_other_keys_pending() -> None:
    real: Batched[str, int] = Batched(Heapy({"a": 1, "b": 1}))
    real.add("a", 5)
    real.add("b", 5)
    real.update("a", 2)
    real.discard("zz")
    assert real.count("a") == 2
    assert real.count("b") == 6
    assert len(real._pending) == 1
    assert real.most_common() == [("b", 6), ("a", 2)]


def test_heapq_lazy_deletion_counters() -> None:
    real: HeapqMultiset[int, int] = HeapqMultiset(
        dict.fromkeys(range(10), 1), stale_factor=1, stale_min=0
    )
    for k in range(10):
        real.add(k)
    assert real.rebuilds == 0
    real.add(0)  # 21 entries for 10 live keys: rebuild
    assert real.rebuilds == 1
    real.add(1)
    real.add(1)
    assert real.pop() == (1, 4)
    assert real.stale_skipped == 0  # the front was live
    real.discard(0)
    real.check()
    assert real.stale_skipped + real.rebuilds >= 1


# -- types --------------------------------------------------------------------------------------


def test_types_are_pinned() -> None:
    h = Heapy({"a": 1})
    assert_type(h, Heapy[str, int])
    assert_type(h.top(), tuple[str, int])
    assert_type(h.count("a"), int)
    assert_type(h.most_common(2), list[tuple[str, int]])
    k = HeapyKiYay({("a", "b"): 1.5})
    assert_type(k, HeapyKiYay[tuple[str, str], float])
    assert_type(k.count(("x", "y")), float | int)
    b = Batched(k)
    assert_type(b, Batched[tuple[str, str], float])
    assert_type(b.top(), tuple[tuple[str, str], float])
    assert_type(k.pop(), tuple[tuple[str, str], float])
    assert_type(HeapqMultiset({1: (0, 1)}).top(), tuple[int, tuple[int, int]])
    assert_type(SortedMultiset({1: 2}).pop(), tuple[int, int])
    assert_type(CounterMultiset({1: 2}).most_common(), list[tuple[int, int]])
    # Structural conformance to the protocol, statically and at run time.
    implementations: list[Multiset[str, int]] = [
        Heapy[str, int](),
        HeapyKiYay[str, int](),
        Batched(Heapy[str, int]()),
        HeapqMultiset[str, int](),
        SortedMultiset[str, int](),
        CounterMultiset[str, int](),
    ]
    assert all(isinstance(m, Multiset) for m in implementations)
