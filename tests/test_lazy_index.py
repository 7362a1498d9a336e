"""Tests of LazyIndex and its compaction policies.

The core is the state machine of :mod:`bpeds.testing.lazy_index`, run once per
policy with thresholds shrunk to 1-4 so that compactions happen constantly;
the unit tests below pin the documented details (snapshot semantics, the
arguments policies receive, the policies' rules) and show that ``check()``
catches corrupted instances.
"""

from __future__ import annotations

import gc
from collections.abc import Generator, Iterator
from typing import assert_type

import pytest
from hypothesis import settings

from bpeds.errors import InvariantError, PreconditionError
from bpeds.structures.compaction import AdaptiveCompaction, NeverCompact, ThresholdCompaction
from bpeds.structures.lazy_index import LazyIndex
from bpeds.structures.protocols import CompactionPolicy, CompactionStats
from bpeds.testing.lazy_index import Predicate, lazy_index_machine
from tests.budget import examples

MACHINE_SETTINGS = settings(
    max_examples=examples(ci=150, local=20), stateful_step_count=50, database=None
)


class AlwaysCompact:
    """A custom policy: compact after every read and every append."""

    def __init__(self) -> None:
        self.stats = CompactionStats()

    def after_read(self, key: object, scanned: int, live: int, size: int) -> bool:
        return True

    def after_append(self, key: object, size: int) -> bool:
        return True

    def compacted(self, key: object, before: int, after: int) -> None:
        pass


class Recorder:
    """A policy that records its calls and says yes when told to."""

    def __init__(self, on_read: bool = False, on_append: bool = False) -> None:
        self.stats = CompactionStats()
        self.on_read = on_read
        self.on_append = on_append
        self.calls: list[tuple[object, ...]] = []

    def after_read(self, key: str, scanned: int, live: int, size: int) -> bool:
        self.calls.append(("read", key, scanned, live, size))
        return self.on_read

    def after_append(self, key: str, size: int) -> bool:
        self.calls.append(("append", key, size))
        return self.on_append

    def compacted(self, key: str, before: int, after: int) -> None:
        self.calls.append(("compacted", key, before, after))


# ----------------------------------------------------------------- state machines


def _never(is_live: Predicate) -> LazyIndex[int, int]:
    return LazyIndex(is_live)


def _threshold(is_live: Predicate) -> LazyIndex[int, int]:
    return LazyIndex(is_live, ThresholdCompaction(size_threshold=3, min_touched=2, live_ratio=0.6))


def _adaptive(is_live: Predicate) -> LazyIndex[int, int]:
    policy = AdaptiveCompaction(
        min_touched=2,
        waste=0.3,
        cooldown=1,
        history=3,
        step=0.2,
        min_waste=0.1,
        max_waste=0.9,
        size_threshold=4,
    )
    return LazyIndex(is_live, policy)


def _always(is_live: Predicate) -> LazyIndex[int, int]:
    return LazyIndex(is_live, AlwaysCompact())


TestNeverCompactMachine = lazy_index_machine(_never).TestCase
TestNeverCompactMachine.settings = MACHINE_SETTINGS
TestThresholdMachine = lazy_index_machine(_threshold).TestCase
TestThresholdMachine.settings = MACHINE_SETTINGS
TestAdaptiveMachine = lazy_index_machine(_adaptive).TestCase
TestAdaptiveMachine.settings = MACHINE_SETTINGS
TestAlwaysCompactMachine = lazy_index_machine(_always).TestCase
TestAlwaysCompactMachine.settings = MACHINE_SETTINGS


# ------------------------------------------------------------------------ reads


def _index(dead: set[int], policy: CompactionPolicy[str] | None = None) -> LazyIndex[str, int]:
    return LazyIndex(lambda key, value: value not in dead, policy)


def test_types_are_inferred() -> None:
    index = _index(set())
    assert_type(index, LazyIndex[str, int])
    assert_type(index.live("k"), Generator[int, None, None])
    assert_type(index.raw("k"), list[int])
    assert_type(index.stats, CompactionStats)


def test_absent_key_yields_nothing_and_consults_no_policy() -> None:
    policy = Recorder(on_read=True)
    index = _index(set(), policy)
    assert list(index.live("nope")) == []
    assert policy.calls == []
    assert index.stats.entries_scanned == 0


def test_read_yields_live_in_first_append_order() -> None:
    index = _index({2})
    index.extend("k", [3, 1, 2, 3, 1, 4])
    assert list(index.live("k")) == [3, 1, 4]
    assert list(index.live("k", unique=False)) == [3, 1, 3, 1, 4]


def test_snapshot_is_taken_when_live_is_called() -> None:
    index = _index(set())
    index.extend("k", [1, 2])
    reader = index.live("k")
    index.add("k", 3)  # before the first next(): still not visited
    seen = []
    for value in reader:
        seen.append(value)
        index.add("k", 10 + value)  # appended during the read: not visited
    assert seen == [1, 2]
    assert index.raw("k") == [1, 2, 3, 11, 12]


def test_predicate_is_evaluated_when_each_entry_is_reached() -> None:
    dead: set[int] = set()
    index = _index(dead)
    index.extend("k", [1, 2, 3, 2])
    seen = []
    for value in index.live("k", unique=False):
        seen.append(value)
        dead.add(value)  # processing kills this entry ...
        dead.add(3)  # ... and a later one
    assert seen == [1, 2]


def test_compaction_during_a_read_does_not_disturb_it() -> None:
    dead: set[int] = set()
    index = _index(dead)
    index.extend("k", [1, 2, 1, 3])
    seen = []
    for value in index.live("k", unique=False):
        seen.append(value)
        if value == 1 and len(seen) == 1:
            dead.add(2)
            index.compact("k")
            index.discard("k")
    assert seen == [1, 1, 3]
    assert "k" not in index


def test_after_read_gets_scanned_yielded_and_current_size() -> None:
    policy = Recorder()
    index = _index({2}, policy)
    index.extend("k", [1, 2, 1, 3])
    assert list(index.live("k")) == [1, 3]
    assert policy.calls[-1] == ("read", "k", 4, 2, 4)
    reader = index.live("k", unique=False)
    assert next(reader) == 1
    index.add("k", 5)
    reader.close()
    assert policy.calls[-2:] == [("append", "k", 5), ("read", "k", 1, 1, 5)]
    assert index.stats.entries_scanned == 5


def test_read_of_a_key_discarded_meanwhile_consults_no_policy() -> None:
    policy = Recorder(on_read=True)
    index = _index(set(), policy)
    index.extend("k", [1, 2])
    seen = []
    for value in index.live("k"):
        seen.append(value)
        index.discard("k")
    assert seen == [1, 2]
    assert [call for call in policy.calls if call[0] != "append"] == []
    assert index.stats.entries_scanned == 2


def test_unique_read_skips_seen_values_without_calling_the_predicate() -> None:
    calls: list[int] = []

    def is_live(key: str, value: int) -> bool:
        calls.append(value)
        return True

    index = LazyIndex(is_live)
    index.extend("k", [1, 1, 2, 1, 2])
    assert list(index.live("k")) == [1, 2]
    assert calls == [1, 2]
    assert index.compact("k") == 3
    assert calls == [1, 2, 1, 2]  # compaction: once per distinct value


def test_abandoned_reader_finishes_when_collected() -> None:
    policy = Recorder()
    index = _index(set(), policy)
    index.extend("k", [1, 2, 3])
    assert next(index.live("k")) == 1  # the generator is dropped at once
    gc.collect()
    assert policy.calls[-1] == ("read", "k", 1, 1, 3)


def test_unstarted_reader_does_not_count() -> None:
    policy = Recorder(on_read=True)
    index = _index(set(), policy)
    index.add("k", 1)
    index.live("k").close()
    assert [call for call in policy.calls if call[0] == "read"] == []
    assert index.stats.entries_scanned == 0


def test_raising_predicate_propagates_and_does_not_compact() -> None:
    policy = Recorder(on_read=True)

    def is_live(key: str, value: int) -> bool:
        if value == 2:
            raise LookupError(value)
        return True

    index = LazyIndex(is_live, policy)
    index.extend("k", [1, 2, 3])
    with pytest.raises(LookupError):
        list(index.live("k"))
    assert index.raw("k") == [1, 2, 3]
    assert index.stats.entries_scanned == 2
    assert index.stats.compactions == 0
    with pytest.raises(LookupError):
        index.compact("k")  # a failed compaction leaves the list untouched
    assert index.raw("k") == [1, 2, 3]
    index.check()


# ------------------------------------------------------------------ maintenance


def test_compaction_shrinks_storage_and_counts_it() -> None:
    dead: set[int] = set()
    policy = ThresholdCompaction(size_threshold=4, min_touched=2, live_ratio=0.5)
    index = _index(dead, policy)
    for value in range(8):
        index.add("k", value % 4)  # duplicates
    # The growth rule compacted at sizes 4 (no drop) and 8 (4 duplicates dropped).
    assert index.raw("k") == [0, 1, 2, 3]
    assert index.stats.compactions == 2
    assert index.stats.entries_dropped == 4
    dead.update({0, 1, 2})
    assert list(index.live("k")) == [3]  # live ratio 1/4 < 0.5, touched 4 >= 2
    assert index.raw("k") == [3]
    assert index.size("k") == 1
    assert index.total_entries == 1
    assert (index.stats.compactions, index.stats.entries_dropped) == (3, 7)
    assert index.stats.entries_scanned == 4
    index.check()


def test_compaction_that_finds_nothing_live_removes_the_key() -> None:
    index = _index({1, 2})
    index.extend("k", [1, 2])
    index.extend("j", [3])
    assert index.compact("k") == 2
    assert "k" not in index
    assert list(index) == ["j"]
    assert index.compact("absent") == 0
    assert index.compact_all() == 0
    assert index.stats.compactions == 2


def test_queries_and_discard() -> None:
    index = _index(set())
    index.extend("a", (1, 1))
    index.extend("b", iter([2]))
    index.extend("c", [])
    assert len(index) == 2
    assert set(index.keys()) == {"a", "b"}
    assert "c" not in index
    assert [] not in index  # unhashable: simply not a key
    assert (index.size("a"), index.size("c"), index.raw("c")) == (2, 0, [])
    index.discard("a")
    index.discard("a")
    assert index.total_entries == 1
    assert repr(index) == "LazyIndex(keys=1, entries=1, policy=NeverCompact())"
    index.check()


def test_extend_is_atomic() -> None:
    index = _index(set())
    index.add("k", 1)

    def failing() -> Iterator[int]:
        yield 2
        raise OSError("disk")

    with pytest.raises(OSError, match="disk"):
        index.extend("k", failing())
    with pytest.raises(OSError, match="disk"):
        index.extend("new", failing())
    assert index.raw("k") == [1]
    assert "new" not in index
    index.check()


def test_never_compact_makes_no_append_calls() -> None:
    class Counting(NeverCompact):
        __slots__ = ("appends",)

        def __init__(self) -> None:
            super().__init__()
            self.appends = 0

        def after_append(self, key: object, size: int) -> bool:
            self.appends += 1
            return False

    policy = Counting()
    index: LazyIndex[int, int] = LazyIndex(lambda key, value: True, policy)
    for value in range(100):
        index.add(0, value)
    assert policy.appends == 0


def test_policy_without_append_floor_sees_every_append() -> None:
    policy = Recorder(on_append=True)
    index = _index({1}, policy)
    index.add("k", 1)
    assert policy.calls == [("append", "k", 1), ("compacted", "k", 1, 0)]
    assert "k" not in index


# ----------------------------------------------------------------- validation


def test_constructor_validates() -> None:
    with pytest.raises(TypeError, match="is_live must be callable"):
        LazyIndex(3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="missing"):
        LazyIndex(lambda key, value: True, object())  # type: ignore[arg-type]

    class BadStats(AlwaysCompact):
        def __init__(self) -> None:
            self.stats = {}  # type: ignore[assignment]

    with pytest.raises(TypeError, match="CompactionStats"):
        LazyIndex(lambda key, value: True, BadStats())
    with pytest.raises(TypeError, match="unhashable"):
        _index(set()).add([1], 1)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("make", "error"),
    [
        (lambda: ThresholdCompaction(size_threshold=0), PreconditionError),
        (lambda: ThresholdCompaction(min_touched=1.5), TypeError),  # type: ignore[arg-type]
        (lambda: ThresholdCompaction(live_ratio=1.5), PreconditionError),
        (lambda: ThresholdCompaction(growth=1.0), PreconditionError),
        (lambda: ThresholdCompaction(growth="2"), TypeError),  # type: ignore[arg-type]
        (lambda: AdaptiveCompaction(cooldown=-1), PreconditionError),
        (lambda: AdaptiveCompaction(history=0), PreconditionError),
        (lambda: AdaptiveCompaction(waste=0.1, min_waste=0.2), PreconditionError),
        (lambda: AdaptiveCompaction(min_waste=0.5, max_waste=0.4), PreconditionError),
        (lambda: AdaptiveCompaction(step=True), TypeError),
    ],
)
def test_policy_knobs_are_validated(make: object, error: type[Exception]) -> None:
    assert callable(make)
    with pytest.raises(error):
        make()


# ------------------------------------------------------------------- policies


def test_threshold_read_rule() -> None:
    policy = ThresholdCompaction(size_threshold=10, min_touched=4, live_ratio=0.5)
    assert not policy.after_read("k", 2, 0, 2)  # touched 2 < 4 and size 2 < 10
    assert policy.after_read("k", 2, 0, 2)  # touched 4, ratio 0 < 0.5
    policy.compacted("k", 2, 1)
    assert policy.state("k") == {"touched": 0, "live": 0, "reads": 0, "base": 1}
    assert not policy.after_read("k", 4, 2, 4)  # ratio 0.5 is not < 0.5
    assert policy.after_read("j", 1, 0, 10)  # size reaches size_threshold
    policy.forget("j")
    assert policy.state("j")["touched"] == 0
    policy.check()


def test_threshold_append_rule_grows_geometrically() -> None:
    policy = ThresholdCompaction(size_threshold=4, growth=2.0)
    assert policy.append_floor == 4
    assert not policy.after_append("k", 3)
    assert policy.after_append("k", 4)
    policy.compacted("k", 4, 3)
    assert not policy.after_append("k", 5)
    assert policy.after_append("k", 6)
    assert ThresholdCompaction(growth=None).append_floor > 10**9


def test_adaptive_cooldown_blocks_recompaction() -> None:
    policy = AdaptiveCompaction(min_touched=1, waste=0.5, cooldown=2, min_waste=0.5)
    assert policy.after_read("k", 4, 0, 4)  # never compacted: no cooldown
    policy.compacted("k", 4, 2)
    assert not policy.after_read("k", 4, 0, 4)  # 1st read since
    assert not policy.after_read("k", 4, 0, 4)  # 2nd read since
    assert policy.after_read("k", 4, 0, 4)  # 3rd read: cooled down


def test_adaptive_payoff_history_moves_the_threshold() -> None:
    policy = AdaptiveCompaction(
        waste=0.5, history=2, target_payoff=0.5, step=0.1, min_waste=0.2, max_waste=0.7
    )
    policy.compacted("a", 10, 1)  # payoff 0.9: compactions pay, compact sooner
    assert policy.threshold == pytest.approx(0.4)
    policy.compacted("a", 10, 0)
    policy.compacted("a", 10, 0)
    assert policy.threshold == pytest.approx(0.2)  # clamped at min_waste
    for _ in range(6):
        policy.compacted("a", 10, 10)  # payoff 0: wait for more waste
    assert policy.threshold == pytest.approx(0.7)  # clamped at max_waste
    assert policy.history == [0.0, 0.0]
    policy.check()


def test_adaptive_needs_evidence() -> None:
    policy = AdaptiveCompaction(min_touched=8, waste=0.5, cooldown=0)
    assert not policy.after_read("k", 4, 0, 4)
    assert policy.after_read("k", 4, 4, 8)  # touched 8, waste 0.5
    assert "threshold=0.500" in repr(policy)


# ------------------------------------------------------------------- check()


def _populated(policy: CompactionPolicy[str] | None = None) -> LazyIndex[str, int]:
    index = _index({1}, policy)
    index.extend("a", [1, 2, 2])
    index.add("b", 3)
    list(index.live("a"))
    index.compact("a")
    index.check()
    return index


@pytest.mark.parametrize(
    "corrupt",
    [
        pytest.param(lambda index: index._lists.__setitem__("e", []), id="empty-list"),
        pytest.param(lambda index: index._lists["a"].append(9), id="total-out-of-sync"),
        pytest.param(lambda index: setattr(index, "_total", 7), id="total-wrong"),
        pytest.param(lambda index: index._lists.__setitem__("b", (3,)), id="tuple-list"),
        pytest.param(lambda index: setattr(index.stats, "compactions", 5), id="stats-edited"),
        pytest.param(lambda index: setattr(index.stats, "entries_dropped", -1), id="negative"),
        pytest.param(lambda index: setattr(index, "_dropped", 3), id="own-counter"),
        pytest.param(
            lambda index: setattr(index.policy, "stats", CompactionStats()), id="stats-replaced"
        ),
    ],
)
def test_check_catches_corrupted_index(corrupt: object) -> None:
    index = _populated()
    assert callable(corrupt)
    corrupt(index)
    with pytest.raises(InvariantError) as info:
        index.check()
    assert info.value.state is not None


def test_check_catches_corrupted_policies() -> None:
    threshold = ThresholdCompaction(size_threshold=1, min_touched=1)
    index = _populated(threshold)
    threshold._states["a"].live = 10**6
    with pytest.raises(InvariantError, match="more live"):
        index.check()

    adaptive = AdaptiveCompaction(min_touched=1, cooldown=0)
    index = _populated(adaptive)
    adaptive.threshold = 2.0
    with pytest.raises(InvariantError, match="threshold"):
        index.check()


def test_check_catches_a_policy_that_counts_itself() -> None:
    class SelfCounting(AlwaysCompact):
        def compacted(self, key: object, before: int, after: int) -> None:
            self.stats.compactions += 1  # the index already does this

    index = _index(set(), SelfCounting())
    index.add("k", 1)
    with pytest.raises(InvariantError, match="advanced by 2"):
        index.check()


def test_policy_used_before_is_accepted() -> None:
    policy = AlwaysCompact()
    policy.stats.compactions = 4
    index = _index(set(), policy)
    index.add("k", 1)
    index.check()
    assert index.stats.compactions == 5
