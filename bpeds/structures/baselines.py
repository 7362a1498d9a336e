"""Baseline :class:`Multiset` implementations the heaps are measured against.

* :class:`HeapqMultiset`: CPython's :mod:`heapq` with lazy deletion, the
  design the ``heapq`` documentation recommends instead of decrease-key: every
  change pushes a fresh entry and the old one goes stale; ``top``/``pop`` skip
  stale entries, and the heap is rebuilt from the live entries when the stale
  ones outnumber them by a configurable factor.
* :class:`SortedMultiset`: a ``sortedcontainers.SortedList`` of entries kept
  best first, plus a dict key -> entry.
* :class:`CounterMultiset`: a dict and a linear scan for ``top`` (what
  ``collections.Counter.most_common(1)`` does); the naive baseline.

All three follow the same protocol and tie rule as the heaps and are exact;
they exist to be measured against (``benchmarks/bench_structures.py``) and as
independent implementations for the shared tests. Entries are ordered by a
``__lt__`` that means "ranks before" (see :mod:`bpeds.structures.multiset`).

Not handled: tie functions that map two present keys to equal tie keys (the
protocol leaves their order unspecified; ``SortedMultiset`` needs them
distinct to find an entry again).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from heapq import heapify, heappop, heappush, nsmallest
from itertools import islice
from typing import Any, Generic, TypeVar

from sortedcontainers import SortedList

from bpeds.errors import InvariantError
from bpeds.structures.multiset import (
    IndexedMultiset,
    MultisetBase,
    Ranked,
    check_most_common_n,
    check_priorities,
    count_error,
    empty_error,
    is_ordered,
    rank_sorted,
    remove_absent_error,
    remove_too_many_error,
    unordered_error,
)
from bpeds.structures.protocols import TieKey

__all__ = ["CounterMultiset", "HeapqMultiset", "SortedMultiset"]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")


class _Entry(Generic[K, P]):
    """An immutable-by-convention ``(priority, tie, key)`` whose ``<`` means "ranks before"."""

    __slots__ = ("key", "prio", "tie")

    def __init__(self, prio: P, tie: Any, key: K) -> None:
        self.prio = prio
        self.tie = tie
        self.key = key

    def __lt__(self, other: _Entry[K, P]) -> bool:
        sp: Any = self.prio
        op: Any = other.prio
        if op < sp:
            return True
        if sp < op:
            return False
        return bool(self.tie < other.tie)

    def __repr__(self) -> str:
        return f"_Entry(prio={self.prio!r}, tie={self.tie!r}, key={self.key!r})"


class _Replacing(IndexedMultiset[K, P, _Entry[K, P]]):
    """A multiset whose changes replace a key's entry by a new one (never edit it in place).

    Writes add/remove/update once on top of two primitives: ``_replace(old,
    new)`` (``new`` becomes its key's entry instead of ``old``, None for an
    absent key) and ``_delete(entry)``.
    """

    __slots__ = ()

    def __init__(self, initial: Mapping[K, P] | None, tie: TieKey | None) -> None:
        super().__init__(tie)
        if initial:
            check_priorities(initial.values())
            tie_of = self._tie
            index = self._index
            for key, prio in initial.items():
                index[key] = _Entry(prio, key if tie_of is None else tie_of(key), key)

    def _replace(self, old: _Entry[K, P] | None, new: _Entry[K, P]) -> None:
        raise NotImplementedError

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (an absent key starts at 0); replaces its entry.

        A result of exactly 0 removes the key; ``n < 0`` raises ValueError.

        Complexity: O(log n); HeapqMultiset: O(log n) amortised (rebuilds are
        O(n), paid for by the stale entries).
        """
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        entry = self._index.get(key)
        if entry is None:
            if n:
                tie_of = self._tie
                self._replace(None, _Entry(n, key if tie_of is None else tie_of(key), key))  # type: ignore[arg-type]
            return
        old: Any = entry.prio
        new = old + n
        if new == 0:
            self._delete(entry)
        elif n:
            self._replace(entry, _Entry(new, entry.tie, key))

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``; the key leaves when it reaches 0.

        Raises :class:`~bpeds.errors.PreconditionError` (a ValueError) if the key
        is absent or its count is smaller than ``n``; ValueError if ``n < 0``.

        Complexity: O(log n); HeapqMultiset: O(log n) amortised.
        """
        if type(n) is not int or n < 0:
            raise count_error("remove", n)
        entry = self._index.get(key)
        if entry is None:
            raise remove_absent_error(key)
        old: Any = entry.prio
        if old < n:
            raise remove_too_many_error(key, old, n)
        new = old - n
        if new == 0:
            self._delete(entry)
        elif n:
            self._replace(entry, _Entry(new, entry.tie, key))

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority (inserting it if absent) by replacing its entry.

        If a comparison raises, the new entry is taken out again (O(n) in
        HeapqMultiset) and the key keeps its old priority.

        Complexity: O(log n); HeapqMultiset: O(log n) amortised.
        """
        if type(priority) is not int and not is_ordered(priority):
            raise unordered_error(priority)
        entry = self._index.get(key)
        if entry is None:
            tie_of = self._tie
            self._replace(None, _Entry(priority, key if tie_of is None else tie_of(key), key))
        else:
            self._replace(entry, _Entry(priority, entry.tie, key))

    def _check_entries(self) -> None:
        """For ``check()``: each entry is under its key, with the right tie key."""
        for key, entry in self._index.items():
            if entry.key != key:
                raise InvariantError(f"index[{key!r}] holds key {entry.key!r}", self._dump(entry))
            problem = self._tie_problem(key, entry.tie)
            if problem is not None:
                raise InvariantError(f"{key!r} {problem}", self._dump(entry))

    def _dump(self, at: object = None) -> dict[str, object]:
        raise NotImplementedError


class HeapqMultiset(_Replacing[K, P]):
    """:mod:`heapq` with lazy deletion: changes push new entries, stale ones are skipped.

    ``_index`` maps each key to its current entry; an entry in the heap list
    that is not its key's current entry is *stale*. ``top``/``pop`` discard
    stale entries from the front (counted in ``stale_skipped``); when the
    stale entries exceed ``stale_factor * live + stale_min`` the list is
    rebuilt from the live entries (counted in ``rebuilds``).

    >>> h = HeapqMultiset({"a": 1, "b": 1}, stale_factor=1, stale_min=0)
    >>> h.add("b", 2); h.remove("b"); h.top()
    ('b', 2)
    >>> h.pop(), h.stale_skipped
    (('b', 2), 1)
    >>> h.most_common()
    [('a', 1)]
    >>> h.discard("a"); len(h), h.rebuilds
    (0, 1)
    """

    __slots__ = ("_heap", "_stale_factor", "_stale_min", "rebuilds", "stale_skipped")

    def __init__(
        self,
        initial: Mapping[K, P] | None = None,
        *,
        tie: TieKey | None = None,
        stale_factor: int = 2,
        stale_min: int = 64,
    ) -> None:
        """Build from ``initial`` (key -> priority) with one heapify.

        ``stale_factor``/``stale_min`` (non-negative ints) set the rebuild
        threshold; tiny values make rebuilds frequent (useful in tests).

        Complexity: O(n).
        """
        if not isinstance(stale_factor, int) or stale_factor < 0:
            raise ValueError(f"stale_factor must be an int >= 0, got {stale_factor!r}")
        if not isinstance(stale_min, int) or stale_min < 0:
            raise ValueError(f"stale_min must be an int >= 0, got {stale_min!r}")
        super().__init__(initial, tie)
        self._stale_factor = stale_factor
        self._stale_min = stale_min
        #: Stale entries thrown away by ``top``/``pop``.
        self.stale_skipped = 0
        #: Times the heap list was rebuilt from the live entries.
        self.rebuilds = 0
        self._heap: list[_Entry[K, P]] = list(self._index.values())
        heapify(self._heap)

    def _replace(self, old: _Entry[K, P] | None, new: _Entry[K, P]) -> None:
        # Push the new entry; the old one goes stale.
        heap = self._heap
        try:
            heappush(heap, new)
        except BaseException:
            # heappush appended the entry before a comparison raised: take it out again.
            if heap and heap[-1] is new:
                heap.pop()
            else:
                for i, e in enumerate(heap):
                    if e is new:
                        del heap[i]
                        break
                heapify(heap)
            raise
        live = self._index
        live[new.key] = new
        if len(heap) > (self._stale_factor + 1) * len(live) + self._stale_min:
            self._rebuild()

    def _rebuild(self) -> None:
        heap = list(self._index.values())
        heapify(heap)
        self._heap = heap
        self.rebuilds += 1

    def _delete(self, entry: _Entry[K, P]) -> None:
        # The entry goes stale.
        live = self._index
        del live[entry.key]
        if len(self._heap) > (self._stale_factor + 1) * len(live) + self._stale_min:
            self._rebuild()

    def discard(self, key: K) -> None:
        """Remove ``key`` whatever its priority; its entry goes stale. No error if absent.

        Complexity: O(1) amortised.
        """
        entry = self._index.get(key)
        if entry is not None:
            self._delete(entry)

    def top(self) -> tuple[K, P]:
        """The ``(key, priority)`` with the largest priority; EmptyError if empty.

        Throws away the stale entries in front of it.

        Complexity: O(1) amortised (each stale entry is skipped once).
        """
        heap = self._heap
        live = self._index
        while heap:
            entry = heap[0]
            if live.get(entry.key) is entry:
                return entry.key, entry.prio
            heappop(heap)
            self.stale_skipped += 1
        raise empty_error("top")

    def pop(self) -> tuple[K, P]:
        """Remove and return ``top()``; EmptyError if empty.

        Complexity: O(log n) amortised.
        """
        heap = self._heap
        live = self._index
        while heap:
            entry = heappop(heap)
            key = entry.key
            if live.get(key) is entry:
                del live[key]
                if len(heap) > (self._stale_factor + 1) * len(live) + self._stale_min:
                    self._rebuild()
                return key, entry.prio
            self.stale_skipped += 1
        raise empty_error("pop")

    def most_common(self, n: int | None = None) -> list[tuple[K, P]]:
        """The ``n`` largest items (all if ``None``), largest first, ties by tie key.

        Pops entries until ``n`` live ones have surfaced, then pushes those
        back; the stale entries met on the way are dropped for good (as
        ``top`` drops them), so each is paid for once.

        Complexity: O(n log size) amortised; O(size log size) for all.
        """
        check_most_common_n(n)
        live = self._index
        if n is None or 4 * n >= len(live):
            return [(e.key, e.prio) for e in sorted(live.values())][:n]
        heap = self._heap
        keep: list[_Entry[K, P]] = []
        dropped = 0
        try:
            while heap and len(keep) < n:
                entry = heappop(heap)
                if live.get(entry.key) is entry:
                    keep.append(entry)
                else:
                    dropped += 1
        finally:
            for entry in keep:
                heappush(heap, entry)
            self.stale_skipped += dropped
        return [(e.key, e.prio) for e in keep]

    def check(self) -> None:
        """Verify every invariant in O(n); raise InvariantError with the state if broken.

        Checked: the list is a heap under "ranks before"; every live entry is
        in it exactly once; stale entries stay within the rebuild threshold;
        each live tie key equals ``tie(key)``; the counters are sane.

        Complexity: O(n + stale).
        """
        heap = self._heap
        live = self._index
        for name in ("stale_skipped", "rebuilds"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise InvariantError(f"counter {name} is {value!r}", self._dump())
        for i in range(1, len(heap)):
            if heap[i] < heap[(i - 1) >> 1]:
                raise InvariantError(
                    f"heap order: heap[{i}] ranks before its parent", self._dump(heap[i])
                )
        found = 0
        for entry in heap:
            if live.get(entry.key) is entry:
                found += 1
        if found != len(live):
            raise InvariantError(
                f"{len(live)} live keys but {found} live entries in the heap", self._dump()
            )
        stale = len(heap) - len(live)
        if stale > self._stale_factor * len(live) + self._stale_min:
            raise InvariantError(f"{stale} stale entries exceed the rebuild bound", self._dump())
        self._check_entries()

    def _dump(self, at: object = None) -> dict[str, object]:
        return {
            "live": len(self._index),
            "heap": len(self._heap),
            "head": self._heap[:16],
            "stale_skipped": self.stale_skipped,
            "rebuilds": self.rebuilds,
            "at": at,
        }


class SortedMultiset(_Replacing[K, P]):
    """A ``SortedList`` of entries, best first, plus a dict key -> entry.

    Every change replaces the key's entry (add the new one, then remove the
    old one, so a comparison that raises leaves nothing changed).

    >>> s = SortedMultiset({"x": 2, "y": 5}, tie=str.upper)
    >>> s.add("x", 3); s.most_common()    # 5 == 5: tie keys "X" < "Y"
    [('x', 5), ('y', 5)]
    >>> s.pop(), len(s)
    (('x', 5), 1)
    """

    __slots__ = ("_sorted",)

    def __init__(self, initial: Mapping[K, P] | None = None, *, tie: TieKey | None = None) -> None:
        """Build from ``initial`` (key -> priority).

        Complexity: O(n log n).
        """
        super().__init__(initial, tie)
        self._sorted: Any = SortedList(self._index.values())

    def _replace(self, old: _Entry[K, P] | None, new: _Entry[K, P]) -> None:
        self._sorted.add(new)
        if old is not None:
            self._sorted.remove(old)
        self._index[new.key] = new

    def _delete(self, entry: _Entry[K, P]) -> None:
        self._sorted.remove(entry)
        del self._index[entry.key]

    def top(self) -> tuple[K, P]:
        """The ``(key, priority)`` with the largest priority; EmptyError if empty.

        Complexity: O(1).
        """
        if not self._index:
            raise empty_error("top")
        entry: _Entry[K, P] = self._sorted[0]
        return entry.key, entry.prio

    def pop(self) -> tuple[K, P]:
        """Remove and return ``top()``; EmptyError if empty.

        Complexity: O(log n).
        """
        if not self._index:
            raise empty_error("pop")
        entry: _Entry[K, P] = self._sorted.pop(0)
        del self._index[entry.key]
        return entry.key, entry.prio

    def most_common(self, n: int | None = None) -> list[tuple[K, P]]:
        """The ``n`` largest items (all if ``None``), largest first, ties by tie key.

        Complexity: O(n) for the n returned (plus O(log size) to start).
        """
        check_most_common_n(n)
        return [(e.key, e.prio) for e in islice(self._sorted, n)]

    def check(self) -> None:
        """Verify every invariant in O(n); raise InvariantError with the state if broken.

        Checked: the SortedList's sublists and maxes; strict "ranks before" order
        between neighbours; the list and the dict hold the same entries; each
        tie key equals ``tie(key)``.

        Complexity: O(n).
        """
        sl = self._sorted
        live = self._index
        # SortedList._check() compares with <= (and prints); check its bookkeeping directly.
        lists = sl._lists
        maxes = sl._maxes
        if len(lists) != len(maxes) or any(
            not sub or mx is not sub[-1] for sub, mx in zip(lists, maxes, strict=False)
        ):
            raise InvariantError("SortedList sublists and maxes disagree", self._dump())
        if sum(map(len, lists)) != len(sl):
            raise InvariantError("SortedList length disagrees with its sublists", self._dump())
        if len(sl) != len(live):
            raise InvariantError(f"{len(sl)} sorted entries, {len(live)} keys", self._dump())
        entries: list[_Entry[K, P]] = list(sl)
        previous: _Entry[K, P] | None = None
        for i, entry in enumerate(entries):
            if live.get(entry.key) is not entry:
                raise InvariantError(f"sorted[{i}] is not its key's entry", self._dump(entry))
            if previous is not None and not previous < entry:
                raise InvariantError(
                    f"order: sorted[{i - 1}] does not rank before sorted[{i}]", self._dump(entry)
                )
            previous = entry
        self._check_entries()

    def _dump(self, at: object = None) -> dict[str, object]:
        return {"size": len(self._index), "head": list(islice(self._sorted, 16)), "at": at}


_UNSET: Any = object()


class CounterMultiset(MultisetBase[K, P]):
    """A dict of priorities and a linear scan for the top: the naive baseline.

    ``add``/``remove``/``update`` are O(1); ``top``/``pop`` scan every key.

    >>> c = CounterMultiset({"a": 1, "b": 4, "c": 4})
    >>> c.top()
    ('b', 4)
    >>> c.remove("b", 4); c.pop(), c.most_common()
    (('c', 4), [('a', 1)])
    """

    __slots__ = ("_prio", "_ties")

    def __init__(self, initial: Mapping[K, P] | None = None, *, tie: TieKey | None = None) -> None:
        """Build from ``initial`` (key -> priority).

        Complexity: O(n).
        """
        super().__init__(tie)
        self._prio: dict[K, P] = {}
        self._ties: dict[K, Any] = {}
        if initial:
            check_priorities(initial.values())
            for key, prio in initial.items():
                self._insert(key, prio)

    def _insert(self, key: K, prio: P) -> None:
        tie_of = self._tie
        self._ties[key] = key if tie_of is None else tie_of(key)
        self._prio[key] = prio

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (an absent key starts at 0).

        A result of exactly 0 removes the key; ``n < 0`` raises ValueError.

        Complexity: O(1).
        """
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        prio = self._prio
        if key in prio:
            old: Any = prio[key]
            new = old + n
            if new == 0:
                del prio[key]
                del self._ties[key]
            else:
                prio[key] = new
        elif n:
            self._insert(key, n)  # type: ignore[arg-type]

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``; the key leaves when it reaches 0.

        Raises :class:`~bpeds.errors.PreconditionError` (a ValueError) if the key
        is absent or its count is smaller than ``n``; ValueError if ``n < 0``.

        Complexity: O(1).
        """
        if type(n) is not int or n < 0:
            raise count_error("remove", n)
        prio = self._prio
        if key not in prio:
            raise remove_absent_error(key)
        old: Any = prio[key]
        if old < n:
            raise remove_too_many_error(key, old, n)
        new = old - n
        if new == 0:
            del prio[key]
            del self._ties[key]
        else:
            prio[key] = new

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority (inserting it if absent). Never compares, so never raises.

        Complexity: O(1).
        """
        if type(priority) is not int and not is_ordered(priority):
            raise unordered_error(priority)
        if key in self._prio:
            self._prio[key] = priority
        else:
            self._insert(key, priority)

    def discard(self, key: K) -> None:
        """Remove ``key`` whatever its priority; no error if it is absent. Complexity: O(1)."""
        if self._prio.pop(key, _UNSET) is not _UNSET:
            del self._ties[key]

    def count(self, key: K) -> P | int:
        """The priority of ``key``, or ``0`` if it is absent. Complexity: O(1)."""
        return self._prio.get(key, 0)

    def top(self) -> tuple[K, P]:
        """The ``(key, priority)`` with the largest priority; EmptyError if empty.

        A priority that cannot be compared makes this raise until it is
        updated or discarded (nothing is changed by the failed scan).

        Complexity: O(n): one pass; tie keys are read only on equal priorities.
        """
        prio = self._prio
        if not prio:
            raise empty_error("top")
        ties = self._ties
        it = iter(prio.items())
        best_key, best = next(it)
        best_tie = _UNSET
        for key, p in it:
            if p < best:  # type: ignore[operator]
                continue
            if best < p:  # type: ignore[operator]
                best_key = key
                best = p
                best_tie = _UNSET
                continue
            tie = ties[key]
            if best_tie is _UNSET:
                best_tie = ties[best_key]
            if tie < best_tie:
                best_key = key
                best = p
                best_tie = tie
        return best_key, best

    def pop(self) -> tuple[K, P]:
        """Remove and return ``top()``; EmptyError if empty. Complexity: O(n)."""
        key, prio = self.top()
        del self._prio[key]
        del self._ties[key]
        return key, prio

    def most_common(self, n: int | None = None) -> list[tuple[K, P]]:
        """The ``n`` largest items (all if ``None``), largest first, ties by tie key.

        Complexity: O(size log n) (one pass keeping the n best, like
        ``Counter.most_common``); O(size log size) for all. The one multiset
        whose ``most_common`` is not O(n log size): it has no order to walk.
        """
        check_most_common_n(n)
        ties = self._ties
        if n is None or 4 * n >= len(ties):
            return rank_sorted((k, p, ties[k]) for k, p in self._prio.items())[:n]
        best = nsmallest(n, (Ranked(p, ties[k], k) for k, p in self._prio.items()))
        return [(r.payload, r.prio) for r in best]

    def items(self) -> Iterator[tuple[K, P]]:
        """Every ``(key, priority)``, in no particular order. Complexity: O(1) per item."""
        return iter(self._prio.items())

    def check(self) -> None:
        """Verify every invariant in O(n); raise InvariantError with the state if broken.

        Checked: the priority and tie-key dicts have the same keys, and each
        tie key equals ``tie(key)``.

        Complexity: O(n).
        """
        prio = self._prio
        ties = self._ties
        if prio.keys() != ties.keys():
            raise InvariantError(
                "priority and tie-key dicts disagree on the keys",
                {"only_prio": prio.keys() - ties.keys(), "only_ties": ties.keys() - prio.keys()},
            )
        for key, tie in ties.items():
            problem = self._tie_problem(key, tie)
            if problem is not None:
                raise InvariantError(
                    f"{key!r} {problem}", {"key": key, "prio": prio[key], "tie": tie}
                )

    def __len__(self) -> int:
        """The number of keys. Complexity: O(1)."""
        return len(self._prio)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is present. Complexity: O(1)."""
        return key in self._prio

    def __iter__(self) -> Iterator[K]:
        """Every key, in no particular order. Complexity: O(1) per key."""
        return iter(self._prio)
