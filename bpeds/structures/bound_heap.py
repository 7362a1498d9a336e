"""``BoundHeap``: a lazy max-heap of upper bounds, checked at the top, with low bounds parked.

The heap answers "which key has the largest priority?" when priorities only
*fall* on their own and every rise is pushed: each key's entries store upper
bounds of its current priority, and :meth:`BoundHeap.pop` asks a ``current``
callback for the exact priority of the top key. A top whose bound is exact is
the maximum (every other key's best bound is no larger, and bounds are never
below the truth); a top whose bound is stale is pushed back with the exact
value and the next top is tried; a key whose priority is ``None`` is dropped.
This is the selection rule of BPE training: a pair's count falls when a
neighbouring merge eats its occurrences, and rises only when the pair is born.

**Parked bounds.** A bound far below the last selected priority is not pushed
into the heap: it waits in a bucket by its binary exponent ``e`` (bucket ``e``
holds bounds ``< 2**e``; for ints, ``e = bound.bit_length()``). Priorities only
fall, so a bucket's keys stay below ``2**e``; when the heap's top falls under
the top bucket's bound, that bucket's keys are let into the heap at their exact
priorities, before anything is selected. Most parked keys die (or are never
needed) before that, so they cost a list append instead of a heap push.

**Entries.** With ``integer=True`` and no ``rank``, an entry is one int,
``key - (priority << KEY_BITS)``: ordered like ``(-priority, key)`` and much
cheaper to compare than a tuple (keys must be ints in ``[0, 2**KEY_BITS)``).
Otherwise an entry is ``(-priority, rank(key), key)`` (or ``(-priority, key)``
without a rank). Ties go to the smallest rank, or the smallest key.

>>> live = {3: 10, 5: 7, 9: 10}
>>> h = BoundHeap(live.get, live.items())
>>> h.pop()              # 3 and 9 tie at 10; the smaller key wins
(3, 10)
>>> live[9] = 4          # 9's priority fell: its stored bound (10) is stale
>>> h.pop()              # re-checked, pushed back at 4; 5 wins
(5, 7)
>>> h.push(11, 6); live[11] = 6   # a rise is pushed
>>> [h.pop(), h.pop(), h.pop()]
[(11, 6), (9, 4), None]

======================== ===================================================
operation                cost
======================== ===================================================
``push``                 O(log n), or O(1) when parked
``extend(items)``        O(k log n) for k items (one call)
``pop``                  O(log n) per entry examined; each stale entry is
                         examined once per fall of its key
letting a bucket in      O(b log n) for b parked keys, once per bucket
``rebuild``              O(live) (automatic with ``source``)
``check``                O(n)
======================== ===================================================
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from heapq import heapify, heappop, heappush
from math import frexp, ldexp, nextafter
from typing import Any

from bpeds.errors import InvariantError

__all__ = ["KEY_BITS", "BoundError", "BoundHeap", "MultisetBounds", "exponent"]

#: Packed int entries: ``key - (priority << KEY_BITS)``; keys are below ``2**KEY_BITS``.
KEY_BITS = 64
_KEY_MASK = (1 << KEY_BITS) - 1

Number = int | float


def exponent(value: Number) -> int:
    """The binary exponent ``e`` with ``value < 2**e`` (and ``value >= 2**(e-1)`` if > 0).

    >>> exponent(1), exponent(7), exponent(8), exponent(0.75)
    (1, 3, 4, 0)
    """
    if type(value) is int:
        return value.bit_length()
    return frexp(value)[1]


def _largest_below(e: int, like: Any) -> Any:
    """The largest value below ``2**e`` of ``like``'s kind: an int, or a float."""
    if type(like) is int:
        return (1 << e) - 1
    return nextafter(ldexp(1.0, e), 0.0)


class BoundError(InvariantError):
    """A key's current priority is above the bound the heap stored for it.

    Whoever pushes must push every rise; ``key``, ``stored`` and ``fresh`` say
    which key broke that and by how much.
    """

    def __init__(self, key: int, stored: Any, fresh: Any) -> None:
        super().__init__(
            f"key {key}: priority {fresh!r} is above its stored bound {stored!r} (a rise "
            "was not pushed)",
            {"key": key, "stored": stored, "fresh": fresh},
        )
        self.key, self.stored, self.fresh = key, stored, fresh


class BoundHeap:
    """Lazy max-heap of upper bounds over int keys (see the module docstring).

    ``current(key)``: the key's exact priority now, or None if it is no longer
    eligible. ``items``: the initial ``(key, priority)`` pairs. ``integer``:
    priorities are ints (packed entries, unless ``rank`` is given). ``rank``:
    the tie key (smallest wins; default the key). ``park``: park low bounds in
    buckets (exact either way; a speed knob), ``gap``: a bound is parked when
    its exponent is below the last selected priority's minus ``gap``.
    ``source()``: every eligible key with its exact priority; when given, the
    heap rebuilds itself from it once it holds more than ``2 * live + slack``
    entries (``live``: the size of the last build). ``guard(stored)``: bounds held
    outside the heap; called with the top's stored bound (None when nothing is
    left) before the top is checked, it returns True when it pushed something
    (the check then starts again).
    """

    __slots__ = (
        "_bounds",
        "_buckets",
        "_current",
        "_guard",
        "_heap",
        "_limit",
        "_low",
        "_packed",
        "_park",
        "_rank",
        "_slack",
        "_source",
        "_top_bucket",
        "_top_bucket_popped",
        "gap",
    )

    def __init__(
        self,
        current: Callable[[int], Any],
        items: Iterable[tuple[int, Any]] = (),
        *,
        integer: bool = True,
        rank: Callable[[int], Any] | None = None,
        park: bool = True,
        gap: int = 1,
        source: Callable[[], Iterable[tuple[int, Any]]] | None = None,
        slack: int = 1024,
        track: bool = False,
        guard: Callable[[Any], bool] | None = None,
    ) -> None:
        if not (isinstance(gap, int) and gap >= 0):
            raise ValueError(f"gap must be an int >= 0, got {gap!r}")
        self._current = current
        self._guard = guard
        self._packed = integer and rank is None
        self._rank = rank
        self._park = park
        self.gap = gap
        self._source = source
        self._slack = slack
        #: buckets[e]: parked bounds below 2**e (tracked: keys; untracked: heap entries).
        self._buckets: dict[int, list[Any]] = {}
        self._top_bucket = -(1 << 30)  # no bucket
        self._top_bucket_popped = 0
        #: Bounds with an exponent below this are parked (none until something is selected).
        self._low = -(1 << 30)
        #: With ``track``: each key's newest stored bound (for :meth:`raise_bounds`).
        self._bounds: dict[int, Any] | None = {} if track else None
        self._heap: list[Any] = []
        self.rebuild(items)
        self._limit = 2 * len(self._heap) + slack

    # -- entries -------------------------------------------------------------

    def _entry(self, key: int, priority: Any) -> Any:
        if self._packed:
            return key - (priority << KEY_BITS)
        if self._rank is None:
            return (-priority, key)
        return (-priority, self._rank(key), key)

    def _split(self, entry: Any) -> tuple[int, Any]:
        """``(key, priority)`` of an entry."""
        if self._packed:
            return entry & _KEY_MASK, -(entry >> KEY_BITS)
        return entry[-1], -entry[0]

    # -- pushing -------------------------------------------------------------

    def push(self, key: int, priority: Any) -> None:
        """Store ``priority`` as an upper bound of ``key``'s (a rise must be pushed)."""
        self.extend(((key, priority),))

    def extend(self, items: Iterable[tuple[int, Any]]) -> None:
        """``push`` each ``(key, priority)``; one call for a merge's new bounds."""
        heap = self._heap
        low = self._low if self._park else -(1 << 30)
        if self._packed:
            # (a negative int parks by its magnitude: 2**e still bounds it, and a stored
            # top <= 0 lets every bucket in first)
            buckets = self._buckets
            tracked = self._bounds is not None
            for key, p in items:
                e = p.bit_length()
                if e >= low:
                    heappush(heap, key - (p << KEY_BITS))
                elif e in buckets and not tracked:
                    buckets[e].append(key - (p << KEY_BITS))
                else:
                    self._park_key(key, e, p)
            return
        entry = self._entry
        bounds = self._bounds
        buckets = self._buckets
        for key, p in items:
            if p > 0:
                e = p.bit_length() if type(p) is int else frexp(p)[1]
                if e < low:
                    if bounds is None and e in buckets:
                        buckets[e].append(entry(key, p))
                    else:
                        self._park_key(key, e, p)
                    continue
            heappush(heap, entry(key, p))

    def raise_bounds(self, items: Iterable[tuple[int, Any]]) -> None:
        """Push each ``(key, priority)`` whose priority is above the key's stored bound.

        For callers that re-score keys whose priority may or may not have risen;
        needs ``track=True`` (the heap then remembers each key's newest bound: a
        lowered re-push lowers it, so a later rise is never lost). A None
        priority is skipped. O(1) per item, plus a push per rise.
        """
        bounds = self._bounds
        if bounds is None:
            raise ValueError("raise_bounds needs a BoundHeap made with track=True")
        rises = []
        for key, p in items:
            if p is None:
                continue
            was = bounds.get(key)
            if was is None or was < p:
                bounds[key] = p
                rises.append((key, p))
        self.extend(rises)

    def bound_of(self, key: int) -> Any:
        """The newest bound stored for ``key`` (``track=True``), or None. O(1)."""
        return None if self._bounds is None else self._bounds.get(key)

    @property
    def bounds(self) -> dict[int, Any] | None:
        """With ``track=True``, each key's newest bound (None otherwise). A caller that
        compares with it before pushing a rise must record the rise here too."""
        return self._bounds

    def _park_key(self, key: int, e: int, priority: Any) -> None:
        """Park ``key`` in bucket ``e``: tracked, the key (its bound becomes the
        bucket's); untracked, its heap entry at ``priority``, as pushed."""
        item: Any
        if self._bounds is not None:
            # The key's bound is now its bucket's, the largest value below 2**e: a rise
            # that stays below it needs nothing (a rise to 2**e itself is pushed).
            self._bounds[key] = _largest_below(e, priority)
            item = key
        else:
            item = self._entry(key, priority)
        bucket = self._buckets.get(e)
        if bucket is None:
            self._buckets[e] = [item]
            if e > self._top_bucket:
                self._top_bucket = e
        else:
            bucket.append(item)

    def _let_in(self) -> None:
        """Push the top bucket into the heap: untracked, its entries as they were
        pushed (one ``heapify`` when they are many); tracked, its keys at their exact
        priorities (a tracked key's bound is its bucket's, not what was pushed)."""
        keys = self._buckets.pop(self._top_bucket)
        self._top_bucket_popped = self._top_bucket
        self._top_bucket = max(self._buckets, default=-(1 << 30))
        current, entry, heap, bounds = self._current, self._entry, self._heap, self._bounds
        if bounds is None:
            if 4 * len(keys) > len(heap):
                heap.extend(keys)
                heapify(heap)
            else:
                for item in keys:
                    heappush(heap, item)
            return
        e = self._top_bucket_popped
        for key in keys:
            p = current(key)
            if p is None:
                bounds.pop(key, None)
                continue
            cap = _largest_below(e, p)
            if p > cap:
                # Above the bucket's bound: a higher entry of the key's, or a bound held
                # outside (guard), may cover p. The capped entry keeps the bucket's
                # promise; if nothing covers p it surfaces below p and pop() reports it.
                p = cap
            bounds[key] = p
            heappush(heap, entry(key, p))

    # -- selecting -----------------------------------------------------------

    def pop(self) -> tuple[int, Any] | None:
        """Remove and return the exact best ``(key, priority)``; None when nothing is left.

        Raises :class:`BoundError` if a key's current priority is above
        its stored bound (a rise that was not pushed).
        """
        heap = self._heap
        current = self._current
        packed = self._packed
        while True:
            if not heap:
                if self._buckets:
                    self._let_in()
                    continue
                if self._guard is not None and self._guard(None):
                    continue
                return None
            top = heap[0]
            if packed:
                key, stored = top & _KEY_MASK, -(top >> KEY_BITS)
            else:
                key, stored = top[-1], -top[0]
            if self._buckets and (
                stored <= 0
                or (stored.bit_length() if packed else exponent(stored)) <= self._top_bucket
            ):
                self._let_in()  # a parked key may reach the top's bound
                continue
            if self._guard is not None and self._guard(stored):
                continue
            fresh = current(key)
            if fresh is None:
                heappop(heap)
                if self._bounds is not None:
                    self._bounds.pop(key, None)
                continue
            if fresh != stored:
                if fresh > stored:
                    raise BoundError(key, stored, fresh)
                heappop(heap)
                heappush(heap, self._entry(key, fresh))
                if self._bounds is not None:
                    self._bounds[key] = fresh
                continue
            heappop(heap)
            if self._bounds is not None:
                self._bounds.pop(key, None)
            if self._park and fresh > 0:
                self._low = (fresh.bit_length() if packed else exponent(fresh)) - self.gap
            if len(heap) > self._limit and self._source is not None:
                self.rebuild(self._source())
            return key, fresh

    def rebuild(self, items: Iterable[tuple[int, Any]]) -> None:
        """Replace every entry (parked ones too) with ``items``' exact priorities. O(n)."""
        entry = self._entry
        live = [(k, p) for k, p in items if p is not None]
        self._heap[:] = [entry(k, p) for k, p in live]
        heapify(self._heap)
        if self._bounds is not None:
            self._bounds.clear()  # (in place: callers may hold it, see bounds)
            self._bounds.update(live)
        self._buckets.clear()
        self._top_bucket = -(1 << 30)
        self._limit = 2 * len(self._heap) + self._slack

    def __len__(self) -> int:
        """Entries held (heap and parked), stale ones included."""
        return len(self._heap) + sum(map(len, self._buckets.values()))

    def parked(self) -> int:
        """Keys waiting in buckets (stale ones included)."""
        return sum(map(len, self._buckets.values()))

    # -- invariants ----------------------------------------------------------

    def check(self, keys: Iterable[int] | None = None) -> None:
        """Verify the invariants; with ``keys``, also that each one's bound holds. O(n).

        The heap array is a heap; the top bucket is the largest non-empty one;
        and every key of ``keys`` whose ``current`` priority is not None has an
        entry whose bound is at least that priority, or is parked in a bucket
        whose bound ``2**e`` is above it.
        """
        heap = self._heap
        for i in range(1, len(heap)):
            if heap[i] < heap[(i - 1) >> 1]:
                raise InvariantError(f"heap order broken at {i}", {"entries": len(heap)})
        if self._buckets:
            if self._top_bucket != max(self._buckets):
                raise InvariantError(
                    "top bucket is not the largest",
                    {"top": self._top_bucket, "buckets": sorted(self._buckets)},
                )
            if any(not b for b in self._buckets.values()):
                raise InvariantError("an empty bucket is kept", sorted(self._buckets))
        elif self._top_bucket != -(1 << 30):
            raise InvariantError("a top bucket without buckets", self._top_bucket)
        if keys is None:
            return
        best: dict[int, Any] = {}
        for entry in heap:
            k, p = self._split(entry)
            if k not in best or p > best[k]:
                best[k] = p
        parked_bound: dict[int, int] = {}
        for e, bucket in self._buckets.items():
            for item in bucket:
                if self._bounds is None:  # (an entry: its own bound counts, as in the heap)
                    k, p = self._split(item)
                    if k not in best or p > best[k]:
                        best[k] = p
                    continue
                parked_bound[item] = max(parked_bound.get(item, e), e)
        for k in keys:
            p = self._current(k)
            if p is None:
                continue
            if k in best and best[k] >= p:
                continue
            if k in parked_bound and (p <= 0 or exponent(p) <= parked_bound[k]):
                continue
            raise InvariantError(
                f"key {k} (priority {p!r}) has no bound at or above it",
                {"key": k, "priority": p, "stored": best.get(k), "parked": parked_bound.get(k)},
            )


class MultisetBounds:
    """The :class:`BoundHeap` interface over any :class:`~bpeds.structures.Multiset`.

    For priorities a ``BoundHeap`` cannot hold (tuples, custom objects) and for
    comparing priority structures: the multiset keeps one priority per key, the
    largest bound pushed since the key was last checked (``update`` in place,
    as a position-aware heap does it in O(log n)); ``pop`` checks the top with
    ``current`` exactly as ``BoundHeap.pop`` does. Nothing is parked.

    >>> from bpeds.structures import HeapyKiYay
    >>> live = {1: (2, 5), 2: (2, 7)}
    >>> h = MultisetBounds(HeapyKiYay(), live.get, live.items())
    >>> h.pop()
    (2, (2, 7))
    """

    __slots__ = ("_current", "_ms")

    def __init__(
        self,
        multiset: Any,
        current: Callable[[int], Any],
        items: Iterable[tuple[int, Any]] = (),
    ) -> None:
        self._ms = multiset
        self._current = current
        for k, p in items:
            if p is not None:
                multiset.update(k, p)

    def push(self, key: int, priority: Any) -> None:
        """Store ``priority`` as ``key``'s bound if it is above the one stored. O(log n)."""
        ms = self._ms
        if key not in ms or ms.count(key) < priority:
            ms.update(key, priority)

    def extend(self, items: Iterable[tuple[int, Any]]) -> None:
        """``push`` each item."""
        for key, p in items:
            self.push(key, p)

    def raise_bounds(self, items: Iterable[tuple[int, Any]]) -> None:
        """``push`` each item whose priority is not None (a push keeps the larger)."""
        for key, p in items:
            if p is not None:
                self.push(key, p)

    def bound_of(self, key: int) -> Any:
        """The bound stored for ``key``, or None. O(1)."""
        return self._ms.count(key) if key in self._ms else None

    def discard(self, key: int) -> None:
        """Forget ``key`` (it will never be eligible again). O(log n)."""
        self._ms.discard(key)

    def pop(self) -> tuple[int, Any] | None:
        """The exact best ``(key, priority)``, removed; None when nothing is left."""
        ms = self._ms
        current = self._current
        while len(ms):
            key, stored = ms.top()
            fresh = current(key)
            if fresh is None:
                ms.discard(key)
            elif fresh == stored:
                ms.discard(key)
                return key, fresh
            elif fresh > stored:
                raise BoundError(key, stored, fresh)
            else:
                ms.update(key, fresh)
        return None

    def __len__(self) -> int:
        return len(self._ms)

    def check(self, keys: Iterable[int] | None = None) -> None:
        """The multiset's own invariants; with ``keys``, that each one's bound holds."""
        self._ms.check()
        if keys is None:
            return
        for k in keys:
            p = self._current(k)
            if p is not None and (k not in self._ms or self._ms.count(k) < p):
                raise InvariantError(
                    f"key {k} (priority {p!r}) has no bound at or above it",
                    {"key": k, "priority": p},
                )
