"""``IntHeap``: a lazy max-heap for int priorities and int tie keys, in one C heapq.

Each entry is a single Python int, ``(-priority << 64) | (tie + 2**63)``: the
smallest entry has the largest priority and, among equal priorities, the
smallest tie key. So every push, pop and comparison runs inside CPython's C
``heapq`` on plain ints, with no entry objects and no Python-level sifting.

The heap is *lazy*: ``update``, ``add`` and ``remove`` push a new entry and
leave the old one behind; ``discard`` only forgets the key. An entry is live
when its priority is the key's current one; ``top`` drops dead entries from the
root until a live one is there. When dead entries outnumber live ones by
``stale_factor`` the heap is rebuilt from the live keys (O(n)), so memory and
``log n`` stay bounded.

Restrictions (checked): priorities are ints; tie keys (the key itself by
default) are ints with ``abs(tie) < 2**63``, distinct for distinct keys. For
other priorities or ties use :class:`~bpeds.structures.HeapyKiYay`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from heapq import heapify, heappop, heappush
from typing import Any, Generic, TypeVar

from bpeds.errors import InvariantError
from bpeds.structures.multiset import (
    check_most_common_n,
    empty_error,
    negative_n_error,
    remove_absent_error,
    remove_too_many_error,
    resolve_tie,
)
from bpeds.structures.protocols import TieKey

__all__ = ["IntHeap"]

K = TypeVar("K", bound=Hashable)

_SHIFT = 64
_OFFSET = 1 << 63
_MASK = (1 << _SHIFT) - 1


class IntHeap(Generic[K]):
    """Max-heap of int priorities over keys with int tie keys, lazy, in C ``heapq``.

    >>> h = IntHeap({10: 3, 11: 5, 12: 5})
    >>> h.top()            # 5 is the largest priority; 11 < 12 breaks the tie
    (11, 5)
    >>> h.update(11, 1); h.discard(12)
    >>> h.pop(), len(h)
    ((10, 3), 1)

    ========================= ===============================================
    operation                 cost
    ========================= ===============================================
    update / add / remove     O(log n) (one C ``heappush``), amortised
    discard / count / in      O(1)
    top / pop                 O(log n) amortised (dead entries are popped once)
    most_common(k)            O(n log n)
    ========================= ===============================================
    """

    __slots__ = ("_by_tie", "_heap", "_prio", "_tie", "rebuilds", "stale_factor", "stale_skipped")

    def __init__(
        self,
        initial: Mapping[K, int] | None = None,
        *,
        tie: TieKey | None = None,
        stale_factor: int = 2,
    ) -> None:
        self._tie = resolve_tie(tie)
        self._prio: dict[K, int] = {}
        #: tie key -> key, kept only when a tie function is given.
        self._by_tie: dict[int, K] | None = None if tie is None else {}
        self._heap: list[int] = []
        self.stale_factor = stale_factor
        #: Dead entries dropped from the root, and full rebuilds (operation counters).
        self.stale_skipped = 0
        self.rebuilds = 0
        if initial:
            for key, prio in initial.items():
                self._check_prio(prio)
                self._prio[key] = prio
            self._rebuild()

    # -- encoding ------------------------------------------------------------

    def _tie_of(self, key: K) -> int:
        t = key if self._tie is None else self._tie(key)
        if type(t) is not int or not -_OFFSET <= t < _OFFSET:
            raise TypeError(
                f"IntHeap needs int tie keys with abs(tie) < 2**63; got {t!r} for key {key!r} "
                "(use HeapyKiYay for other tie keys)"
            )
        if self._by_tie is not None:
            self._by_tie[t] = key
        return t

    @staticmethod
    def _check_prio(prio: object) -> None:
        if type(prio) is not int:
            raise TypeError(
                f"IntHeap priorities are ints, got {prio!r} (use HeapyKiYay for others)"
            )

    def _key_of(self, entry: int) -> Any:
        t = (entry & _MASK) - _OFFSET
        return t if self._by_tie is None else self._by_tie[t]

    def _push(self, key: K, prio: int) -> None:
        heap = self._heap
        heappush(heap, (-prio << _SHIFT) | (self._tie_of(key) + _OFFSET))
        if len(heap) > self.stale_factor * len(self._prio) + 64:
            self._rebuild()

    def _rebuild(self) -> None:
        self._heap = [(-p << _SHIFT) | (self._tie_of(k) + _OFFSET) for k, p in self._prio.items()]
        heapify(self._heap)
        self.rebuilds += 1

    # -- the Multiset protocol -----------------------------------------------

    def update(self, key: K, priority: int) -> None:
        """Set ``key``'s priority (inserting it). Complexity: O(log n) amortised."""
        self._check_prio(priority)
        self._prio[key] = priority
        self._push(key, priority)

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (absent keys start at 0). O(log n) amortised."""
        if n < 0:
            raise negative_n_error("add", n)
        self.update(key, self._prio.get(key, 0) + n)

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``; at exactly 0 the key leaves. O(log n) am."""
        if n < 0:
            raise negative_n_error("remove", n)
        cur = self._prio.get(key)
        if cur is None:
            raise remove_absent_error(key)
        if cur < n:
            raise remove_too_many_error(key, cur, n)
        if cur == n:
            del self._prio[key]
        else:
            self.update(key, cur - n)

    def discard(self, key: K) -> None:
        """Forget ``key`` (its entries die in place). Complexity: O(1)."""
        self._prio.pop(key, None)

    def count(self, key: K) -> int:
        """``key``'s priority, or 0 if absent. Complexity: O(1)."""
        return self._prio.get(key, 0)

    def top(self) -> tuple[K, int]:
        """The live entry with the largest priority (smallest tie key among equals).

        Complexity: O(log n) amortised; raises EmptyError when empty.
        """
        heap, prio = self._heap, self._prio
        while heap:
            entry = heap[0]
            key = self._key_of(entry)
            p = -(entry >> _SHIFT)
            if prio.get(key) == p:
                return key, p
            heappop(heap)
            self.stale_skipped += 1
        raise empty_error("top")

    def pop(self) -> tuple[K, int]:
        """Remove and return :meth:`top`. Complexity: O(log n) amortised."""
        key, p = self.top()
        heappop(self._heap)
        del self._prio[key]
        return key, p

    def most_common(self, n: int | None = None) -> list[tuple[K, int]]:
        """The ``n`` largest items, largest first (all when ``None``). O(n log n)."""
        check_most_common_n(n)
        tie = self._tie_of
        ranked = sorted(self._prio.items(), key=lambda kv: (-kv[1], tie(kv[0])))
        return ranked if n is None else ranked[:n]

    def items(self) -> Iterator[tuple[K, int]]:
        """Every ``(key, priority)``, in no particular order. O(1) per item."""
        return iter(list(self._prio.items()))

    def check(self) -> None:
        """Heap order, and a live entry for every key. O(n)."""
        heap = self._heap
        for i in range(1, len(heap)):
            if heap[i] < heap[(i - 1) // 2]:
                raise InvariantError(f"heap order broken at {i}", self._dump())
        live: dict[Any, int] = {}
        for entry in heap:
            t = (entry & _MASK) - _OFFSET
            key = t if self._by_tie is None else self._by_tie.get(t)
            p = -(entry >> _SHIFT)
            if key in self._prio and self._prio[key] == p:
                live[key] = p
        if live != self._prio:
            missing = {k: p for k, p in self._prio.items() if live.get(k) != p}
            raise InvariantError(f"keys without a live heap entry: {missing!r}", self._dump())
        if len(heap) > self.stale_factor * len(self._prio) + 64:
            raise InvariantError("dead entries exceed the rebuild bound", self._dump())

    def _dump(self) -> dict[str, object]:
        return {"priorities": dict(self._prio), "heap": list(self._heap)}

    def __len__(self) -> int:
        return len(self._prio)

    def __contains__(self, key: object) -> bool:
        return key in self._prio

    def __iter__(self) -> Iterator[K]:
        return iter(list(self._prio))

    def __repr__(self) -> str:
        return f"IntHeap({dict(self._prio)!r})"
