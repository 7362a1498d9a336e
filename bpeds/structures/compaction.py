"""Compaction policies for :class:`~bpeds.structures.lazy_index.LazyIndex`.

A policy decides *when* a lazy index rewrites one key's list to its live,
unique entries; the index decides *how*. Three policies ship here:

* :class:`NeverCompact` -- the lists only grow;
* :class:`ThresholdCompaction` -- fixed thresholds;
* :class:`AdaptiveCompaction` -- a waste ratio, a per-key cooldown and a
  rolling payoff history that tunes the waste threshold.

The protocol (:class:`~bpeds.structures.protocols.CompactionPolicy`) is three
hooks and a ``stats`` attribute. The index calls ``after_read(key, scanned,
live, size)`` when a read of ``key`` finishes (``scanned`` entries looked at,
``live`` of them yielded, the list now ``size`` long), ``after_append(key,
size)`` after an ``add``/``extend``, and ``compacted(key, before, after)``
after it rewrote a list. The *index* updates ``stats`` (entries scanned,
compactions, entries dropped); a policy only reads it and must not replace it.

Two optional members, used by the index when present, make policies cheaper:

* ``append_floor: int`` -- ``after_append`` is only called once a list is at
  least this long (``NeverCompact`` sets it to ``sys.maxsize``, so the
  append path makes no policy call at all);
* ``forget(key)`` -- the key left the index (``discard``, or a compaction
  found nothing live), so per-key state can be dropped;

and ``check()``, called by the index's ``check()``, verifies the policy's own
state. A policy instance serves one index: its per-key state is keyed by key.

A custom policy is a small class. This one compacts a key whenever a read
found at most half of what it scanned live:

>>> from bpeds.structures.lazy_index import LazyIndex
>>> from bpeds.structures.protocols import CompactionStats
>>> class HalfStale:
...     def __init__(self) -> None:
...         self.stats = CompactionStats()
...     def after_read(self, key: str, scanned: int, live: int, size: int) -> bool:
...         return 2 * live <= scanned
...     def after_append(self, key: str, size: int) -> bool:
...         return False
...     def compacted(self, key: str, before: int, after: int) -> None:
...         pass
>>> dead = {2}
>>> index = LazyIndex(lambda key, v: v not in dead, HalfStale())
>>> index.extend("ab", [1, 2, 2, 3])
>>> list(index.live("ab"))
[1, 3]
>>> index.raw("ab")
[1, 3]
>>> index.stats
CompactionStats(entries_scanned=4, compactions=1, entries_dropped=2)

Not handled here: policies shared between indices, clocks or randomness
(every policy is a deterministic function of the calls it received).
"""

from __future__ import annotations

import sys
from collections import deque
from collections.abc import Hashable

from bpeds.errors import InvariantError, PreconditionError
from bpeds.structures.protocols import CompactionStats

__all__ = ["AdaptiveCompaction", "NeverCompact", "ThresholdCompaction"]


def _check_int(name: str, value: object, minimum: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}")
    if value < minimum:
        raise PreconditionError(f"{name} must be >= {minimum}, got {value}")
    return value


def _check_ratio(name: str, value: object, low: float = 0.0, high: float = 1.0) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"{name} must be a number, got {type(value).__name__}")
    if not low <= value <= high:
        raise PreconditionError(f"{name} must be between {low} and {high}, got {value}")
    return float(value)


def _check_growth(value: object) -> float | None:
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"growth must be a number or None, got {type(value).__name__}")
    if not value > 1.0:
        raise PreconditionError(f"growth must be > 1 (or None to disable), got {value}")
    return float(value)


class _KeyState:
    """Per-key counters of a policy, reset by each compaction of the key."""

    __slots__ = ("base", "live", "reads", "touched")

    def __init__(self, base: int = 0, reads: int = 0) -> None:
        self.touched = 0  # entries scanned by reads since the last compaction
        self.live = 0  # entries those reads yielded
        self.reads = reads  # reads since the last compaction
        self.base = base  # list length right after the last compaction

    def __repr__(self) -> str:
        return (
            f"_KeyState(touched={self.touched}, live={self.live}, "
            f"reads={self.reads}, base={self.base})"
        )

    def problems(self) -> str | None:
        """A description of what is wrong with the counters, or None."""
        if min(self.touched, self.live, self.reads, self.base) < 0:
            return "negative counter"
        if self.live > self.touched:
            return "more live entries than touched ones"
        return None


def _check_stats(stats: object, owner: object) -> None:
    if not isinstance(stats, CompactionStats):
        raise InvariantError("policy.stats is not a CompactionStats", owner)
    for name in ("entries_scanned", "compactions", "entries_dropped"):
        value = getattr(stats, name)
        if not isinstance(value, int) or value < 0:
            raise InvariantError(f"stats.{name} must be an int >= 0, got {value!r}", owner)


class NeverCompact:
    """The policy that never compacts: lists only grow.

    Reads stay correct (the predicate filters stale entries) but every stale or
    duplicate entry is kept and re-scanned forever. ``append_floor`` is
    ``sys.maxsize``, so ``add`` makes no policy call at all.

    >>> from bpeds.structures.lazy_index import LazyIndex
    >>> index = LazyIndex(lambda key, v: v % 2 == 1, NeverCompact())
    >>> index.extend("k", [1, 2, 3, 3])
    >>> list(index.live("k")), index.raw("k")
    ([1, 3], [1, 2, 3, 3])
    """

    __slots__ = ("stats",)

    #: ``after_append`` is never needed.
    append_floor: int = sys.maxsize

    def __init__(self) -> None:
        self.stats = CompactionStats()

    def __repr__(self) -> str:
        return "NeverCompact()"

    def after_read(self, key: object, scanned: int, live: int, size: int) -> bool:
        """Never compact after a read.

        Complexity: O(1).
        """
        return False

    def after_append(self, key: object, size: int) -> bool:
        """Never compact after an append.

        Complexity: O(1).
        """
        return False

    def compacted(self, key: object, before: int, after: int) -> None:
        """Nothing to record (a forced ``compact`` still counts in ``stats``).

        Complexity: O(1).
        """

    def check(self) -> None:
        """Verify the stats counters are non-negative ints.

        Complexity: O(1).
        """
        _check_stats(self.stats, self)


class _PerKeyPolicy:
    """What the policies with per-key state share: that state and the append (growth) rule.

    Subclasses validate their arguments (in their own order) and pass the
    validated ``size_threshold`` and ``growth`` on.
    """

    __slots__ = ("_states", "append_floor", "growth", "size_threshold", "stats")

    def __init__(self, size_threshold: int, growth: float | None) -> None:
        self.size_threshold = size_threshold
        self.growth = growth
        #: ``after_append`` cannot say yes below ``size_threshold``.
        self.append_floor = size_threshold if growth is not None else sys.maxsize
        self.stats = CompactionStats()
        self._states: dict[Hashable, _KeyState] = {}

    def after_append(self, key: Hashable, size: int) -> bool:
        """True if the list reached ``size_threshold`` and grew ``growth``-fold.

        Complexity: O(1).
        """
        if self.growth is None or size < self.size_threshold:
            return False
        state = self._states.get(key)
        return state is None or size >= self.growth * state.base

    def forget(self, key: Hashable) -> None:
        """Drop the state of a key that left the index (a payoff history, if any, stays).

        Complexity: O(1).
        """
        self._states.pop(key, None)

    def _check_states(self) -> None:
        for key, state in self._states.items():
            problem = state.problems()
            if problem is not None:
                raise InvariantError(f"key {key!r}: {problem}", (self, state))


class ThresholdCompaction(_PerKeyPolicy):
    """Fixed thresholds (by default 2048 / 512 / 0.25).

    For each key the policy counts, since the key's last compaction (or since
    it was first seen), ``touched`` -- the entries scanned by reads of it --
    and ``live`` -- the entries those reads yielded. The *observed live ratio*
    is ``live / touched``.

    * After a read: compact when the observed live ratio is below
      ``live_ratio`` **and** either the list is at least ``size_threshold``
      long or ``touched >= min_touched``.
    * After an append: compact when the list is at least ``size_threshold``
      long **and** at least ``growth`` times its length right after its last
      compaction (0 if never compacted). This bounds the memory of keys that
      are appended to but rarely read, and the geometric growth keeps the
      cost amortised O(1) per append. ``growth=None`` disables it.

    >>> from bpeds.structures.lazy_index import LazyIndex
    >>> dead = {1, 2}
    >>> policy = ThresholdCompaction(size_threshold=4, min_touched=4, live_ratio=0.5)
    >>> index = LazyIndex(lambda key, v: v not in dead, policy)
    >>> index.extend("k", [1, 2, 3])
    >>> list(index.live("k"))
    [3]
    >>> index.raw("k")
    [1, 2, 3]
    >>> index.add("k", 4)
    >>> index.raw("k")
    [3, 4]
    >>> index.stats
    CompactionStats(entries_scanned=3, compactions=1, entries_dropped=2)
    """

    __slots__ = ("live_ratio", "min_touched")

    def __init__(
        self,
        size_threshold: int = 2048,
        min_touched: int = 512,
        live_ratio: float = 0.25,
        growth: float | None = 2.0,
    ) -> None:
        size_threshold = _check_int("size_threshold", size_threshold, 1)
        self.min_touched = _check_int("min_touched", min_touched, 1)
        self.live_ratio = _check_ratio("live_ratio", live_ratio)
        super().__init__(size_threshold, _check_growth(growth))

    def __repr__(self) -> str:
        return (
            f"ThresholdCompaction(size_threshold={self.size_threshold}, "
            f"min_touched={self.min_touched}, live_ratio={self.live_ratio}, "
            f"growth={self.growth})"
        )

    def after_read(self, key: Hashable, scanned: int, live: int, size: int) -> bool:
        """Add the read to the key's counters; True if the read rule fires.

        Complexity: O(1).
        """
        state = self._states.get(key)
        if state is None:
            state = self._states[key] = _KeyState()
        state.reads += 1
        state.touched += scanned
        state.live += live
        touched = state.touched
        return state.live < self.live_ratio * touched and (
            size >= self.size_threshold or touched >= self.min_touched
        )

    def compacted(self, key: Hashable, before: int, after: int) -> None:
        """Reset the key's counters; remember its new length for the growth rule.

        Complexity: O(1).
        """
        self._states[key] = _KeyState(base=after)

    def state(self, key: Hashable) -> dict[str, int]:
        """The key's counters (``touched``, ``live``, ``reads``, ``base``), for inspection.

        Complexity: O(1).
        """
        state = self._states.get(key)
        if state is None:
            return {"touched": 0, "live": 0, "reads": 0, "base": 0}
        return {
            "touched": state.touched,
            "live": state.live,
            "reads": state.reads,
            "base": state.base,
        }

    def check(self) -> None:
        """Verify the stats and every per-key counter; InvariantError if broken.

        Complexity: O(number of keys with state).
        """
        _check_stats(self.stats, self)
        self._check_states()


class AdaptiveCompaction(_PerKeyPolicy):
    """Waste ratio, per-key cooldown and payoff feedback.

    Per key, since its last compaction, the policy counts ``touched`` (entries
    scanned by reads), ``live`` (entries those reads yielded) and ``reads``.
    The key's *waste* is ``1 - live / touched``.

    After a read it compacts the key when all of these hold:

    * ``touched >= min_touched`` -- enough evidence;
    * the key has been read at least ``cooldown`` times since its last
      compaction (a key never compacted has no cooldown) -- hot keys are not
      rewritten on every read;
    * ``waste >= threshold``, where ``threshold`` starts at ``waste`` and is
      tuned by the payoff history below.

    Payoff history: each compaction (whatever triggered it) records its payoff
    ``(before - after) / before``, the fraction of the list it dropped; the
    last ``history`` payoffs are kept. After each compaction, if their mean is
    below ``target_payoff`` the threshold rises by ``step`` (compactions were
    not worth their cost: wait for more waste), if above it falls by ``step``
    (compact sooner), always staying within ``[min_waste, max_waste]``.

    After an append it uses the growth rule of :class:`ThresholdCompaction`
    (``size_threshold``, ``growth``; ``growth=None`` disables it).

    Deterministic: no clocks, no randomness.

    >>> from bpeds.structures.lazy_index import LazyIndex
    >>> dead = {1, 2, 3}
    >>> policy = AdaptiveCompaction(min_touched=2, waste=0.5, cooldown=1)
    >>> index = LazyIndex(lambda key, v: v not in dead, policy)
    >>> index.extend("k", [1, 2, 3, 4])
    >>> list(index.live("k")), index.raw("k")
    ([4], [4])
    >>> policy.threshold  # payoff 0.75 > target 0.5: compact sooner
    0.45
    """

    __slots__ = (
        "_history",
        "cooldown",
        "max_waste",
        "min_touched",
        "min_waste",
        "step",
        "target_payoff",
        "threshold",
    )

    def __init__(
        self,
        *,
        min_touched: int = 512,
        waste: float = 0.75,
        cooldown: int = 4,
        history: int = 32,
        target_payoff: float = 0.5,
        step: float = 0.05,
        min_waste: float = 0.25,
        max_waste: float = 0.95,
        size_threshold: int = 2048,
        growth: float | None = 2.0,
    ) -> None:
        self.min_touched = _check_int("min_touched", min_touched, 1)
        self.cooldown = _check_int("cooldown", cooldown, 0)
        self.target_payoff = _check_ratio("target_payoff", target_payoff)
        self.step = _check_ratio("step", step)
        self.min_waste = _check_ratio("min_waste", min_waste)
        self.max_waste = _check_ratio("max_waste", max_waste, self.min_waste)
        #: The waste ratio the read rule currently acts on.
        self.threshold = _check_ratio("waste", waste, self.min_waste, self.max_waste)
        super().__init__(_check_int("size_threshold", size_threshold, 1), _check_growth(growth))
        self._history: deque[float] = deque(maxlen=_check_int("history", history, 1))

    def __repr__(self) -> str:
        return (
            f"AdaptiveCompaction(min_touched={self.min_touched}, "
            f"threshold={self.threshold:.3f}, cooldown={self.cooldown}, "
            f"history={list(self._history)!r})"
        )

    @property
    def history(self) -> list[float]:
        """The payoffs of the most recent compactions, oldest first.

        Complexity: O(history).
        """
        return list(self._history)

    def after_read(self, key: Hashable, scanned: int, live: int, size: int) -> bool:
        """Add the read to the key's counters; True if the waste rule fires.

        Complexity: O(1).
        """
        state = self._states.get(key)
        if state is None:
            # Never compacted: start "cooled down".
            state = self._states[key] = _KeyState(reads=self.cooldown)
        state.reads += 1
        state.touched += scanned
        state.live += live
        touched = state.touched
        return (
            touched >= self.min_touched
            and state.reads > self.cooldown
            and touched - state.live >= self.threshold * touched
        )

    def compacted(self, key: Hashable, before: int, after: int) -> None:
        """Record the payoff, retune the threshold and reset the key's counters.

        Complexity: O(history).
        """
        self._states[key] = _KeyState(base=after)
        history = self._history
        history.append((before - after) / before if before > 0 else 0.0)
        mean = sum(history) / len(history)
        if mean < self.target_payoff:
            self.threshold = min(self.max_waste, self.threshold + self.step)
        elif mean > self.target_payoff:
            self.threshold = max(self.min_waste, self.threshold - self.step)

    def check(self) -> None:
        """Verify the stats, threshold bounds, history and per-key counters.

        Complexity: O(number of keys with state + history).
        """
        _check_stats(self.stats, self)
        if not self.min_waste <= self.threshold <= self.max_waste:
            raise InvariantError("threshold outside [min_waste, max_waste]", self)
        if any(not 0.0 <= payoff <= 1.0 for payoff in self._history):
            raise InvariantError("a payoff outside [0, 1]", self)
        self._check_states()
