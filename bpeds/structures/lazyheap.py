"""``LazyHeap``: a lazy max-heap for numeric priorities, in CPython's C ``heapq``.

Each entry is a small tuple, ``(-priority, key)``, or ``(-priority, tie(key), key)``
when a tie function is given, so the smallest entry has the largest priority
and, among equal priorities, the smallest tie key. Every push, pop and
comparison runs inside C ``heapq``; there are no entry objects and no
Python-level sifting. (Packing priority and tie into one int measured the same
under callgrind, 5.359 G against 5.362 G instructions for a taylorswift run, so
the simpler tuples stay.)

The heap is *lazy*: ``update``, ``add`` and ``remove`` push a new entry and
leave the old one behind; ``discard`` only forgets the key. An entry is live
when its priority is the key's current one; ``top`` drops dead entries from the
root until a live one is there. When dead entries outnumber live ones by
``stale_factor`` the heap is rebuilt from the live keys (O(n)), so memory and
``log n`` stay bounded.

Restrictions (checked): priorities are ``int`` or ``float`` (not NaN), because
they are negated; tie keys must be totally ordered and distinct for distinct
keys. For other priorities (tuples, custom objects) use
:class:`~bpeds.structures.HeapyKiYay`.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator, Mapping
from heapq import heapify, heappop, heappush
from typing import Any, Generic, TypeVar

from bpeds.errors import InvariantError
from bpeds.structures.multiset import (
    check_most_common_n,
    count_error,
    empty_error,
    remove_absent_error,
    remove_too_many_error,
    resolve_tie,
)
from bpeds.structures.protocols import TieKey

__all__ = ["LazyHeap"]

K = TypeVar("K", bound=Hashable)

_ABSENT: Any = object()

#: The priorities a LazyHeap holds.
Number = int | float


class LazyHeap(Generic[K]):
    """Max-heap of numeric priorities, lazy, in C ``heapq``.

    >>> h = LazyHeap({"b": 3, "a": 5, "c": 5})
    >>> h.top()            # 5 is the largest priority; "a" < "c" breaks the tie
    ('a', 5)
    >>> h.update("a", 1); h.discard("c")
    >>> h.pop(), len(h)
    (('b', 3), 1)

    ========================= ===============================================
    operation                 cost
    ========================= ===============================================
    update / add / remove     O(log n) (one C ``heappush``), amortised
    discard / count / in      O(1)
    top / pop                 O(log n) amortised (dead entries are popped once)
    most_common(k)            O(n log n)
    ========================= ===============================================
    """

    __slots__ = ("_heap", "_prio", "_tie", "rebuilds", "stale_factor", "stale_skipped")

    def __init__(
        self,
        initial: Mapping[K, Number] | None = None,
        *,
        tie: TieKey | None = None,
        stale_factor: int = 2,
    ) -> None:
        self._tie = resolve_tie(tie)
        self._prio: dict[K, Number] = {}
        self._heap: list[tuple[Any, ...]] = []
        self.stale_factor = stale_factor
        #: Dead entries dropped from the root, and full rebuilds (operation counters).
        self.stale_skipped = 0
        self.rebuilds = 0
        if initial:
            for key, prio in initial.items():
                self._check_prio(prio)
                self._prio[key] = prio
            self._rebuild()

    @staticmethod
    def _check_prio(prio: object) -> None:
        if type(prio) is not int and type(prio) is not float:
            raise TypeError(
                f"LazyHeap priorities are int or float, got {prio!r} (use HeapyKiYay for others)"
            )
        if prio != prio:
            raise ValueError("a LazyHeap priority cannot be NaN: NaN has no order")

    def _entry(self, key: K, prio: Number) -> tuple[Any, ...]:
        tie = self._tie
        return (-prio, key) if tie is None else (-prio, tie(key), key)

    def _rebuild(self) -> None:
        entry = self._entry
        self._heap = [entry(k, p) for k, p in self._prio.items()]
        heapify(self._heap)
        self.rebuilds += 1

    # -- the Multiset protocol -----------------------------------------------

    def update(self, key: K, priority: Number) -> None:
        """Set ``key``'s priority (inserting it). Complexity: O(log n) amortised.

        If the new entry cannot be compared with the others (keys of another
        type at an equal priority raise ``TypeError``), the change is undone
        (O(n)) and the error propagates.
        """
        self._check_prio(priority)
        prio = self._prio
        old = prio.get(key, _ABSENT)
        prio[key] = priority
        entry = self._entry(key, priority)
        heap = self._heap
        try:
            heappush(heap, entry)
        except BaseException:
            if old is _ABSENT:
                del prio[key]
            else:
                prio[key] = old
            for i, e in enumerate(heap):
                if e is entry:  # heappush left it in the list: take it out again
                    heap[i] = heap[-1]
                    heap.pop()
                    heapify(heap)
                    break
            raise
        self._bound()

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (absent keys start at 0). O(log n) amortised."""
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        self.update(key, self._prio.get(key, 0) + n)

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``; at exactly 0 the key leaves. O(log n) am."""
        if type(n) is not int or n < 0:
            raise count_error("remove", n)
        cur = self._prio.get(key)
        if cur is None:
            raise remove_absent_error(key)
        if cur < n:
            raise remove_too_many_error(key, cur, n)
        if cur == n:
            del self._prio[key]
            self._bound()
        else:
            self.update(key, cur - n)

    def discard(self, key: K) -> None:
        """Forget ``key`` (its entries die in place). Complexity: O(1) amortised."""
        if self._prio.pop(key, _ABSENT) is not _ABSENT:
            self._bound()

    def _bound(self) -> None:
        """Rebuild when dead entries pass the bound ``check()`` holds: a key that leaves
        shrinks the bound as much as a push grows the heap. O(1), O(n) on a rebuild."""
        if len(self._heap) > self.stale_factor * len(self._prio) + 64:
            self._rebuild()

    def count(self, key: K) -> Number:
        """``key``'s priority, or 0 if absent. Complexity: O(1)."""
        return self._prio.get(key, 0)

    def top(self) -> tuple[K, Number]:
        """The live entry with the largest priority (smallest tie key among equals).

        Complexity: O(log n) amortised; raises EmptyError when empty.
        """
        heap, prio = self._heap, self._prio
        while heap:
            entry = heap[0]
            key = entry[-1]
            p = -entry[0]
            if prio.get(key) == p:
                return key, prio[key]
            heappop(heap)
            self.stale_skipped += 1
        raise empty_error("top")

    def pop(self) -> tuple[K, Number]:
        """Remove and return :meth:`top`. Complexity: O(log n) amortised."""
        key, p = self.top()
        heappop(self._heap)
        del self._prio[key]
        self._bound()
        return key, p

    def most_common(self, n: int | None = None) -> list[tuple[K, Number]]:
        """The ``n`` largest items, largest first (all when ``None``). O(n log n)."""
        check_most_common_n(n)
        entry = self._entry
        ranked = sorted(self._prio.items(), key=lambda kv: entry(*kv))
        return ranked if n is None else ranked[:n]

    def items(self) -> Iterator[tuple[K, Number]]:
        """Every ``(key, priority)``, in no particular order. O(1) per item."""
        return iter(list(self._prio.items()))

    def check(self) -> None:
        """Heap order, a live entry for every key, and the rebuild bound. O(n)."""
        heap = self._heap
        for i in range(1, len(heap)):
            if heap[i] < heap[(i - 1) // 2]:
                raise InvariantError(f"heap order broken at {i}", self._dump())
        prio = self._prio
        live = {e[-1] for e in heap if e[-1] in prio and prio[e[-1]] == -e[0]}
        if len(live) != len(prio):
            missing = sorted(map(repr, prio.keys() - live))
            raise InvariantError(f"keys without a live heap entry: {missing}", self._dump())
        if self._tie is not None:
            for e in heap:
                if e[-1] in prio and prio[e[-1]] == -e[0] and e[1] != self._tie(e[-1]):
                    raise InvariantError(f"stale tie key in {e!r}", self._dump())
        if len(heap) > self.stale_factor * len(prio) + 64:
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
        return f"LazyHeap({dict(self._prio)!r})"
