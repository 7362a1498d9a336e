"""Tests of BoundHeap and MultisetBounds: the state machine of bpeds.testing.bound_heap, plus
hand-checked cases.

The machine runs once per family of knobs: BoundHeap (packed int entries, or tuple entries for
ints with ``integer=False`` or a rank, and floats); tracked bounds with ``raise_bounds``;
rebuilds from a ``source`` with a slack of 0..3, tracked or not; MultisetBounds over
HeapyKiYay, Heapy and LazyHeap. Within a family ``park``, ``gap`` (0..2), ``integer`` and the
rank are drawn per run. The unit tests pin what the machine does not reach: the
``BoundError`` of an unpushed rise, negative and zero priorities once parking is on, the
exponent buckets, let-ins, rebuild bounds, the ``guard`` hook, and ``check()`` catching
corrupted instances.

The machine found three defects, now fixed and kept as regression tests: with ``track=True``
and parking, a tracked bound could outlive the entry that backs it (a dead key let in kept it;
a parked key's was recorded as ``2**e`` though its bucket holds only priorities below that);
a parked key's unpushed rise was never reported as a ``BoundError``; and a bucket's largest
value was a float for an int priority above ``2**53``.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import Phase, given, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, run_state_machine_as_test

from bpeds.errors import InvariantError
from bpeds.structures.bound_heap import KEY_BITS, BoundError, BoundHeap, MultisetBounds, exponent
from bpeds.structures.heapy import Heapy
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.lazyheap import LazyHeap
from bpeds.testing.bound_heap import (
    BoundModel,
    BoundSetup,
    Rise,
    bound_heap_machine,
    priority_domain,
)
from bpeds.testing.multisets import negated, scrambled
from tests.budget import examples

MACHINE_SETTINGS = settings(
    max_examples=examples(ci=100, local=12), stateful_step_count=40, database=None
)

# -- the state machine, once per family of knobs ----------------------------------------------


@dataclass(frozen=True)
class Knobs:
    """BoundHeap's knobs for one run (``integer`` is ignored for float priorities)."""

    park: bool = True
    gap: int = 1
    integer: bool = True
    track: bool = False
    rebuild: bool = False
    slack: int = 1024


def knobs(
    *,
    park: bool | None = None,
    track: bool = False,
    rebuild: bool = False,
    integer: bool | None = None,
) -> st.SearchStrategy[Knobs]:
    """Knobs with ``gap`` (0..2) drawn, and ``park`` and ``integer`` unless fixed; ``slack``
    0..3 when rebuilding (else the default)."""
    return st.builds(
        Knobs,
        park=st.booleans() if park is None else st.just(park),
        gap=st.integers(0, 2),
        integer=st.booleans() if integer is None else st.just(integer),
        track=st.just(track),
        rebuild=st.just(rebuild),
        slack=st.integers(0, 3) if rebuild else st.just(1024),
    )


def make_bound_heap(s: BoundSetup) -> BoundHeap:
    """The BoundHeap a run asks for: packed entries when the priorities are ints, ``integer``
    is drawn True and there is no rank."""
    k: Knobs = s.options
    return BoundHeap(
        s.current,
        s.items,
        integer=s.kind in ("int", "bigint") and k.integer,
        rank=s.rank,
        park=k.park,
        gap=k.gap,
        track=k.track,
        source=s.source if k.rebuild else None,
        slack=k.slack,
    )


def _case(machine: type[RuleBasedStateMachine]) -> Any:
    case = machine.TestCase
    case.settings = MACHINE_SETTINGS
    return case


ALL_RISES: tuple[Rise, ...] = ("push", "extend", "raise_bounds")

# Packed int entries, tuple entries (ints with integer=False or a rank; floats), parked or not.
BoundHeapMachine = bound_heap_machine(make_bound_heap, kinds=("int", "float"), options=knobs())
TestBoundHeapMachine = _case(BoundHeapMachine)
# track=True: rises told through raise_bounds too (items may carry None), and keys set to at
# most their bound_of, which raise_bounds may ignore.
TrackedMachine = bound_heap_machine(
    make_bound_heap, kinds=("int", "float"), rises=ALL_RISES, options=knobs(track=True)
)
TestTrackedMachine = _case(TrackedMachine)
# A source and a slack of 0..3: the heap rebuilds itself every few pops.
RebuildMachine = bound_heap_machine(
    make_bound_heap, kinds=("int", "float"), options=knobs(rebuild=True)
)
TestRebuildMachine = _case(RebuildMachine)
RebuildTrackedMachine = bound_heap_machine(
    make_bound_heap,
    kinds=("int", "float"),
    rises=ALL_RISES,
    options=knobs(track=True, rebuild=True),
)
TestRebuildTrackedMachine = _case(RebuildTrackedMachine)
# Ints beyond 2**53 in packed entries (tuple entries: test_big_ints_in_tuple_entries_machine).
BigIntMachine = bound_heap_machine(
    make_bound_heap,
    kinds=("bigint",),
    ranks=False,
    rises=ALL_RISES,
    options=knobs(track=True, integer=True),
)
TestBigIntMachine = _case(BigIntMachine)

MULTISETS: dict[str, Callable[[Callable[[int], Any] | None], Any]] = {
    "HeapyKiYay": lambda tie: HeapyKiYay(tie=tie),
    "Heapy": lambda tie: Heapy(tie=tie),
    "LazyHeap": lambda tie: LazyHeap(tie=tie, stale_factor=1),
}


def make_multiset_bounds(s: BoundSetup) -> MultisetBounds:
    """MultisetBounds over the drawn multiset (LazyHeap takes numbers only: HeapyKiYay then)."""
    name = "HeapyKiYay" if s.kind == "tuple" and s.options == "LazyHeap" else s.options
    return MultisetBounds(MULTISETS[name](s.rank), s.current, s.items)


MultisetBoundsMachine = bound_heap_machine(
    make_multiset_bounds,
    kinds=("tuple", "int", "float", "bigint"),
    rises=ALL_RISES,
    options=st.sampled_from(list(MULTISETS)),
)
TestMultisetBoundsMachine = _case(MultisetBoundsMachine)

# -- big ints in tuple entries (a defect the machine found: a float cap below the int) ---------


def test_big_ints_in_tuple_entries_machine() -> None:
    """Ints beyond 2**53 with tuple entries: a bucket's largest value is an int for an int
    priority (a float cap, 2**e less 256 for e = 60, let a parked key in under itself)."""
    machine = bound_heap_machine(make_bound_heap, kinds=("bigint",), options=knobs(integer=False))
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples(ci=100, local=12),
            stateful_step_count=40,
            database=None,
            derandomize=True,
            phases=[Phase.generate],
        ),
    )


@pytest.mark.parametrize(
    "kw",
    [
        pytest.param({}, id="packed"),
        pytest.param({"rank": negated}, id="rank"),
        pytest.param({"integer": False}, id="integer=False"),
        pytest.param({"integer": False, "track": True}, id="integer=False, track"),
    ],
)
def test_a_parked_big_int_comes_back_exactly(kw: dict[str, Any]) -> None:
    live = {1: 2**62, 2: 1}
    h = BoundHeap(live.get, live.items(), gap=0, **kw)
    assert h.pop() == (1, 2**62)  # parking starts below 2**63
    del live[1]
    live[3] = 2**60 - 1
    h.push(3, 2**60 - 1)  # parked in bucket 60: its largest int is 2**60 - 1
    assert h.parked() == 1
    # (with tuple entries: BoundError: key 3: priority 1152921504606846975 is above its
    # stored bound 1.1529215046068468e+18, the float 2**60 - 256)
    assert _drain(h, live) == [(3, 2**60 - 1), (2, 1)]


# -- defects fixed (found by the machine): regression tests -------------------------------------


def test_tracked_parked_machine_finds_nothing() -> None:
    """track=True with parking always on, derandomized: a regression test for the two defects
    below, which this machine found."""
    machine = bound_heap_machine(
        make_bound_heap,
        kinds=("int", "float"),
        rises=ALL_RISES,
        options=knobs(park=True, track=True),
    )
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=examples(ci=100, local=12),
            stateful_step_count=40,
            database=None,
            derandomize=True,
            phases=[Phase.generate],
        ),
    )


def test_a_dead_keys_tracked_bound_leaves_with_its_bucket() -> None:
    """Parked, dead, let in, born again lower: the rebirth is pushed (its bound was kept)."""
    live = {1: 100, 2: 1}
    h = BoundHeap(live.get, live.items(), gap=0, track=True)
    assert h.pop() == (1, 100)  # parking starts below 2**(7 - 0)
    del live[1]
    live[3] = 2
    h.raise_bounds([(3, 2)])  # parked in bucket 2
    assert h.parked() == 1
    del live[3]  # 3 dies
    assert h.pop() == (2, 1)  # lets bucket 2 in: 3 is dropped, and so is its tracked bound
    assert h.bound_of(3) is None
    del live[2]
    live[3] = 1
    h.raise_bounds([(3, 1)])  # born again at 1: pushed
    h.check(keys=live)
    assert _drain(h, live) == [(3, 1)]


def test_a_rise_to_a_power_of_two_above_a_parked_bound_is_pushed() -> None:
    """Parked at 32 (bucket 6 holds 32..63): a rise to 64 is a rise, and wins its tie."""
    live = {1: 1000, 9: 64}
    h = BoundHeap(live.get, live.items(), gap=0, track=True)
    assert h.pop() == (1, 1000)  # parking starts below 2**10
    del live[1]
    live[3] = 32
    h.raise_bounds([(3, 32)])  # parked in bucket 6
    assert h.bound_of(3) == 63
    live[3] = 64
    h.raise_bounds([(3, 64)])
    h.check(keys=live)
    assert _drain(h, live) == [(3, 64), (9, 64)]  # the smaller key wins the tie at 64


# -- the machine catches broken implementations ---------------------------------------------


class _TrustsBounds(BoundHeap):
    """A deliberately wrong bound heap: pops the top bound without asking ``current``."""

    def pop(self) -> tuple[int, Any] | None:
        while self._heap or self._buckets:
            if not self._heap:
                self._let_in()
                continue
            entry = self._heap[0]
            key, stored = self._split(entry)
            self._heap.remove(entry)
            self._heap.sort()
            if self._current(key) is not None:
                return key, stored
        return None


class _LargestKeyWins(MultisetBounds):
    """A deliberately wrong bound heap: ties go to the largest key."""

    def __init__(self, current: Callable[[int], Any], items: list[tuple[int, Any]]) -> None:
        super().__init__(HeapyKiYay(tie=negated), current, items)


@pytest.mark.parametrize(
    "factory",
    [
        lambda s: _TrustsBounds(s.current, s.items, park=False),
        lambda s: _LargestKeyWins(s.current, s.items),
    ],
    ids=["trusts-bounds", "largest-key-wins"],
)
def test_machine_catches_a_wrong_implementation(factory: Callable[[BoundSetup], Any]) -> None:
    machine = bound_heap_machine(factory, kinds=("int",), ranks=False)
    with pytest.raises(AssertionError, match="implementation gave"):
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=100, stateful_step_count=30, database=None, phases=[Phase.generate]
            ),
        )


class _Counting(BoundHeap):
    """BoundHeap counting its parks, let-ins and rebuilds (class-wide, for one test)."""

    parks = let_ins = rebuilds = 0

    def _park_key(self, key: int, e: int, priority: Any) -> None:
        type(self).parks += 1
        super()._park_key(key, e, priority)

    def _let_in(self) -> None:
        type(self).let_ins += 1
        super()._let_in()

    def rebuild(self, items: Any) -> None:
        type(self).rebuilds += 1
        super().rebuild(items)


def test_machine_reaches_parking_let_ins_and_rebuilds() -> None:
    """The machine is not vacuous: its runs park bounds, let buckets in and rebuild."""

    def factory(s: BoundSetup) -> BoundHeap:
        k: Knobs = s.options
        return _Counting(
            s.current,
            s.items,
            integer=s.kind == "int",
            rank=s.rank,
            gap=k.gap,
            source=s.source,
            slack=k.slack,
        )

    _Counting.parks = _Counting.let_ins = _Counting.rebuilds = 0
    machine = bound_heap_machine(factory, kinds=("int", "float"), options=knobs(rebuild=True))
    run_state_machine_as_test(
        machine,
        settings=settings(
            max_examples=30,
            stateful_step_count=40,
            database=None,
            derandomize=True,
            phases=[Phase.generate],
        ),
    )
    assert _Counting.parks > 0
    assert _Counting.let_ins > 0
    assert _Counting.rebuilds > 30  # one per construction, and more from the source


# -- BoundError: an unpushed rise --------------------------------------------------------------

STRUCTURES: dict[str, Callable[[Callable[[int], Any], Any], Any]] = {
    "packed": lambda cur, items: BoundHeap(cur, items),
    "packed-unparked": lambda cur, items: BoundHeap(cur, items, park=False),
    "ranked": lambda cur, items: BoundHeap(cur, items, rank=scrambled, gap=0),
    "tuple-entries": lambda cur, items: BoundHeap(cur, items, integer=False, gap=2),
    "tracked": lambda cur, items: BoundHeap(cur, items, track=True),
    "MultisetBounds(HeapyKiYay)": lambda cur, items: MultisetBounds(HeapyKiYay(), cur, items),
    "MultisetBounds(Heapy)": lambda cur, items: MultisetBounds(Heapy(), cur, items),
}


@pytest.mark.parametrize("name", list(STRUCTURES))
def test_unpushed_rise_raises_bound_error(name: str) -> None:
    live = {1: 5, 2: 3, 4: 1}
    h = STRUCTURES[name](live.get, live.items())
    live[2] = 9  # a rise nobody pushed
    assert h.pop() == (1, 5)  # (wrong, and undetectable: 2 is not at the top yet)
    del live[1]
    with pytest.raises(BoundError, match=r"key 2: priority 9 is above its stored bound 3") as e:
        h.pop()
    assert (e.value.key, e.value.stored, e.value.fresh) == (2, 3, 9)
    assert isinstance(e.value, InvariantError)
    assert e.value.state == {"key": 2, "stored": 3, "fresh": 9}
    with pytest.raises(InvariantError, match="key 2"):
        h.check(keys=live)
    # Nothing was lost: once the rise is pushed, selection goes on exactly.
    h.push(2, 9)
    h.check(keys=live)
    assert _drain(h, live) == [(2, 9), (4, 1)]


@pytest.mark.parametrize("name", list(STRUCTURES))
@given(
    initial=st.dictionaries(st.integers(0, 12), st.integers(-3, 40), min_size=1, max_size=12),
    data=st.data(),
)
@settings(max_examples=examples(ci=60, local=15), database=None)
def test_unpushed_rise_is_reported_when_it_reaches_the_top(
    name: str, initial: dict[int, int], data: st.DataObject
) -> None:
    """Raise one key above every bound without pushing: draining reports that key."""
    live = dict(initial)
    h = STRUCTURES[name](live.get, live.items())
    key = data.draw(st.sampled_from(sorted(live)), label="key")
    live[key] = max(live.values()) + data.draw(st.integers(1, 100), label="rise")
    popped: list[int] = []

    def drain() -> None:
        for _ in range(len(initial)):
            found = h.pop()
            assert found is not None
            popped.append(found[0])
            del live[found[0]]

    with pytest.raises(BoundError) as e:
        drain()
    assert key not in popped
    assert e.value.key == key
    assert f"key {key}:" in str(e.value)


@pytest.mark.parametrize("track", [False, True])
def test_unpushed_rise_of_a_parked_key_raises_bound_error(track: bool) -> None:
    """A parked key is let in at most at its bound (tracked: its bucket's largest value;
    untracked: what was pushed): the rise surfaces as an error."""
    live = {1: 100, 2: 1}
    h = BoundHeap(live.get, live.items(), gap=0, track=track)
    assert h.pop() == (1, 100)  # parking starts below 2**7
    del live[1]
    live[3] = 2
    h.push(3, 2)  # parked in bucket 2 (bounds < 4)
    live[3] = 50  # a rise nobody pushed
    with pytest.raises(InvariantError, match="key 3"):
        h.check(keys=live)
    stored = 3 if track else 2
    with pytest.raises(BoundError, match=f"key 3: priority 50 is above its stored bound {stored}"):
        h.pop()


# -- parking: negative, zero and fractional priorities ----------------------------------------


def _drain(h: Any, live: dict[int, Any]) -> list[tuple[int, Any]]:
    out = []
    while (found := h.pop()) is not None:
        out.append(found)
        del live[found[0]]
        h.check(keys=live)
    return out


def _expected(live: dict[int, Any], rank: Callable[[int], Any] | None = None) -> list[Any]:
    model = BoundModel(live.items(), rank=rank)
    return [model.pop() for _ in range(len(live))]


def test_negative_and_zero_priorities_park_and_come_back_in_order() -> None:
    live = {1: 1000, 2: 5}
    h = BoundHeap(live.get, live.items(), gap=0)
    assert h.pop() == (1, 1000)  # parking starts below 2**10
    del live[1]
    new = {3: 0, 4: -1, 5: -300, 6: 3, 7: 0, 8: -2000}
    live.update(new)
    h.extend(list(new.items())[:3])  # extend parks 0 and negatives by magnitude
    for key, p in list(new.items())[3:]:
        h.push(key, p)  # push parks only positive bounds
    assert h.parked() >= 4
    h.check(keys=live)
    assert _drain(h, live) == [(2, 5), (6, 3), (3, 0), (7, 0), (4, -1), (5, -300), (8, -2000)]
    assert h.pop() is None
    assert len(h) == 0


@given(
    gap=st.integers(0, 2),
    integer=st.booleans(),
    rank=st.sampled_from([None, negated, scrambled]),
    first=st.sampled_from([7, 64, 128, 1000]),
    batch=st.lists(
        st.tuples(st.integers(0, 12), st.sampled_from(priority_domain("int"))), max_size=12
    ),
    split=st.integers(0, 12),
    scale=st.sampled_from([1, 8]),
)
@settings(max_examples=examples(ci=200, local=50), database=None)
def test_parked_priorities_drain_in_exact_order(
    gap: int,
    integer: bool,
    rank: Callable[[int], Any] | None,
    first: int,
    batch: list[tuple[int, int]],
    split: int,
    scale: int,
) -> None:
    """After a large pop, any batch (negatives, zero, powers of two, fractions) pushed
    through ``extend`` and ``push`` drains exactly as the model orders it."""
    as_float = scale != 1 or not integer
    top = first / scale if as_float else first
    live: dict[int, Any] = {13: top}
    h = BoundHeap(live.get, live.items(), integer=not as_float, rank=rank, gap=gap)
    assert h.pop() == (13, top)  # parking starts below 2**(exponent(top) - gap)
    del live[13]
    items = [(k, p / scale if as_float else p) for k, p in batch]
    h.extend(items[:split])
    for k, p in items[split:]:
        h.push(k, p)
    live.update(items)
    h.check(keys=live)
    expected = _expected(live, rank)
    assert _drain(h, live) == expected


def test_exponent_buckets() -> None:
    assert [exponent(v) for v in (1, 2, 3, 4, 7, 8, 1 << 70)] == [1, 2, 2, 3, 3, 4, 71]
    assert [exponent(v) for v in (0.5, 0.75, 1.0, 1.5, 2.0, 0.125)] == [0, 0, 1, 1, 2, -2]
    assert exponent(8.0) == exponent(8)


@given(st.integers(1, 1 << 80))
def test_exponent_brackets_an_int(value: int) -> None:
    e = exponent(value)
    assert 1 << (e - 1) <= value < 1 << e


@given(st.floats(min_value=1e-300, max_value=1e300))
def test_exponent_brackets_a_float(value: float) -> None:
    e = exponent(value)
    assert math.ldexp(1.0, e - 1) <= value < math.ldexp(1.0, e)


def test_a_bucket_is_let_in_when_the_top_falls_below_it() -> None:
    live = {1: 1000, 2: 40}
    h = BoundHeap(live.get, live.items(), gap=0)
    assert h.pop() == (1, 1000)
    del live[1]
    live.update({3: 100, 4: 20})
    h.extend([(3, 100), (4, 20)])  # exponents 7 and 5: parked (below 10)
    assert h.parked() == 2
    live[2] = 30  # 40 stored, 30 now: the top is stale but still above bucket 5
    assert h.pop() == (3, 100)  # bucket 7 came in first: 40 has exponent 6 <= 7
    del live[3]
    assert h.pop() == (2, 30)
    del live[2]
    assert h.pop() == (4, 20)
    assert h.parked() == 0


def test_nothing_is_parked_before_a_selection_or_without_park() -> None:
    live = {1: 1000}
    h = BoundHeap(live.get, live.items(), gap=0)
    h.push(2, 1)
    assert h.parked() == 0  # nothing selected yet: no parking threshold
    unparked = BoundHeap(live.get, live.items(), park=False)
    unparked.pop()
    unparked.extend([(3, 1), (4, -5)])
    unparked.push(5, 0)
    assert unparked.parked() == 0


def test_guard_wakes_bounds_held_outside_the_heap() -> None:
    live = {1: 50, 2: 10, 3: 30}
    asleep = {3: 30}  # 3's bound is held outside the heap, under a cover of 40
    calls: list[Any] = []

    def guard(stored: Any) -> bool:
        calls.append(stored)
        if asleep and (stored is None or stored <= 40):
            h.extend(asleep.items())
            asleep.clear()
            return True  # pushed something: the top is looked at again
        return False

    h = BoundHeap(live.get, [(1, 50), (2, 10)], guard=guard)
    out = []
    while (found := h.pop()) is not None:
        out.append(found)
        del live[found[0]]
    assert out == [(1, 50), (3, 30), (2, 10)]
    assert calls == [50, 10, 30, 10, None]  # the top's stored bound; None when empty


# -- raise_bounds and rebuilds -----------------------------------------------------------------


def test_raise_bounds_pushes_only_rises() -> None:
    live = {1: 10, 2: 5}
    h = BoundHeap(live.get, live.items(), track=True)
    live.update({1: 8, 2: 7, 3: 1})  # 1 fell (no push needed), 2 and 3 rose
    h.raise_bounds([(1, 8), (2, 7), (3, 1), (4, None)])
    assert len(h) == 4  # 2 initial entries + 2 rises
    h.check(keys=live)
    assert _drain(h, live) == [(1, 8), (2, 7), (3, 1)]


NOTHING: dict[int, int] = {}


def test_raise_bounds_needs_track() -> None:
    h = BoundHeap(NOTHING.get)
    with pytest.raises(ValueError, match="track=True"):
        h.raise_bounds([(1, 2)])


def test_a_stale_re_push_lowers_the_tracked_bound() -> None:
    live = {1: 10, 2: 6}
    h = BoundHeap(live.get, live.items(), track=True, park=False)
    live[1] = 3  # fell, not told
    assert h.pop() == (2, 6)  # 1 re-pushed at 3: its tracked bound is now 3
    del live[2]
    live[1] = 5
    h.raise_bounds([(1, 5)])  # 5 > 3: pushed
    h.check(keys=live)
    assert h.pop() == (1, 5)


@pytest.mark.parametrize("slack", [0, 2, 16])
def test_source_rebuilds_keep_the_heap_within_its_bound(slack: int) -> None:
    live = {k: 1000 - k for k in range(50)}
    calls = []

    def source() -> list[tuple[int, int]]:
        calls.append(len(live))
        return list(live.items())

    h = BoundHeap(live.get, live.items(), source=source, slack=slack, park=False)
    for step in range(40):
        for k in list(live)[:10]:  # told falls (re-pushes): stale entries pile up
            live[k] -= 3
            h.push(k, live[k])
        found = h.pop()
        assert found is not None
        assert found == _expected(live)[0], step
        del live[found[0]]
        # a build of L keys lets the heap grow to 2 L + slack entries before the next one
        assert len(h) <= 2 * (calls[-1] if calls else 50) + slack
        h.check(keys=live)
    assert calls  # it did rebuild
    expected = _expected(live)
    assert _drain(h, live) == expected


def test_rebuild_replaces_every_entry() -> None:
    live = {1: 1000, 2: 3, 3: 9}
    h = BoundHeap(live.get, live.items(), gap=0)
    h.pop()
    del live[1]
    h.push(4, 2)
    live[4] = 2
    assert h.parked() == 1
    h.rebuild(live.items())
    assert h.parked() == 0
    assert len(h) == 3
    h.check(keys=live)
    assert _drain(h, live) == [(3, 9), (2, 3), (4, 2)]


def test_bad_knobs_are_refused() -> None:
    with pytest.raises(ValueError, match="gap must be an int >= 0"):
        BoundHeap(NOTHING.get, gap=-1)
    with pytest.raises(ValueError, match="gap must be an int >= 0"):
        BoundHeap(NOTHING.get, gap=1.5)  # type: ignore[arg-type]


def test_packed_entries_hold_keys_up_to_key_bits() -> None:
    big = (1 << KEY_BITS) - 1
    live = {big: 3, 0: 3, 5: 4}
    h = BoundHeap(live.get, live.items())
    assert _drain(h, live) == [(5, 4), (0, 3), (big, 3)]


# -- MultisetBounds ------------------------------------------------------------------------


def test_multiset_bounds_keeps_the_largest_bound_and_discards() -> None:
    live = {1: (1, 2), 2: (0, 5)}
    h = MultisetBounds(HeapyKiYay(), live.get, live.items())
    live[1] = (0, 1)  # fell, not told
    h.push(1, (0, 0))  # a lower push keeps the stored (1, 2)
    h.raise_bounds([(2, (0, 9)), (3, None)])
    live[2] = (0, 9)
    h.check(keys=live)
    h.discard(1)
    del live[1]
    assert len(h) == 1
    assert _drain(h, live) == [(2, (0, 9))]


def test_multiset_bounds_tie_rule_is_the_multisets() -> None:
    live = {1: 4, 2: 4, 3: 4}
    h = MultisetBounds(Heapy(tie=negated), live.get, live.items())
    assert _expected(live, negated) == [(3, 4), (2, 4), (1, 4)]
    assert _drain(h, live) == [(3, 4), (2, 4), (1, 4)]


# -- check() catches corruption ------------------------------------------------------------


def _parked_heap() -> tuple[BoundHeap, dict[int, int]]:
    live = {k: 10 * k for k in range(1, 20)}
    h = BoundHeap(live.get, live.items(), gap=0)
    assert h.pop() == (19, 190)
    del live[19]
    live.update({30: 5, 31: 20})
    h.extend([(30, 5), (31, 20)])
    assert h.parked() == 2
    h.check(keys=live)
    return h, live


def _corruptions() -> list[tuple[str, Callable[[BoundHeap, dict[int, int]], None]]]:
    def heap_order(h: BoundHeap, live: dict[int, int]) -> None:
        h._heap.reverse()

    def lost_entry(h: BoundHeap, live: dict[int, int]) -> None:
        h._heap.pop()

    def top_bucket(h: BoundHeap, live: dict[int, int]) -> None:
        h._top_bucket -= 1

    def empty_bucket(h: BoundHeap, live: dict[int, int]) -> None:
        h._buckets[99] = []
        h._top_bucket = 99

    def phantom_top(h: BoundHeap, live: dict[int, int]) -> None:
        h._buckets.clear()

    def unpushed_rise(h: BoundHeap, live: dict[int, int]) -> None:
        live[30] = 40  # parked in bucket 3 (< 8): the bucket no longer bounds it

    return [
        ("heap order", heap_order),
        ("no bound at or above", lost_entry),
        ("top bucket is not the largest", top_bucket),
        ("an empty bucket is kept", empty_bucket),
        ("a top bucket without buckets", phantom_top),
        ("key 30", unpushed_rise),
    ]


@pytest.mark.parametrize(
    ("message", "corrupt"), _corruptions(), ids=[f.__name__ for _, f in _corruptions()]
)
def test_check_catches_corruption(
    message: str, corrupt: Callable[[BoundHeap, dict[int, int]], None]
) -> None:
    h, live = _parked_heap()
    corrupt(h, live)
    with pytest.raises(InvariantError, match=message) as info:
        h.check(keys=live)
    assert info.value.state is not None


def test_multiset_bounds_check_catches_a_missing_bound() -> None:
    live = {1: 3, 2: 4}
    h = MultisetBounds(HeapyKiYay(), live.get, live.items())
    live[3] = 1  # born, not pushed
    with pytest.raises(InvariantError, match="key 3"):
        h.check(keys=live)
    h._ms._heap[0].pos = 1
    with pytest.raises(InvariantError):
        h.check()


def test_model_fall_refuses_a_rise() -> None:
    m = BoundModel({1: 3})
    with pytest.raises(ValueError, match="current priority is 3"):
        m.fall(1, 3)
    with pytest.raises(ValueError, match="current priority is None"):
        m.fall(2, 1)
    assert len(m) == 1
