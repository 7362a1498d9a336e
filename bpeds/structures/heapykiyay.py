"""``HeapyKiYay``: an array-based, position-aware binary max-heap :class:`Multiset`.

The heap is a Python list of entries; each entry records its own index in the
list, and a dict maps every key to its entry, so changing any key's priority
is one dict lookup plus one sift: O(log n). Ties among equal priorities go to
the smallest tie key (see :mod:`bpeds.structures.multiset` for the ranking
rule and the sift naming: ``_sift_up`` moves towards the root).

Entries are slotted objects rather than small lists ``[prio, tie, key, pos]``:
on CPython 3.11 a sift over slotted entries measured about 10-15% faster
(slot reads are specialised like list subscripts, and ``e.pos = i`` avoids
the index bounds check) and each entry is smaller.

A priority that is not totally ordered by ``<`` (NaN, a tuple holding NaN)
is refused before anything changes (:func:`~bpeds.structures.multiset.is_ordered`),
as is an ``add``/``remove`` count that is not an ``int``. Not handled:
mutating the structure while iterating over ``items()``.
"""

from __future__ import annotations

from collections.abc import Hashable, Mapping
from heapq import heappop, heappush
from typing import Any, Generic, TypeVar

from bpeds.errors import InvariantError
from bpeds.structures.multiset import (
    BinaryHeap,
    Ranked,
    RankedMin,
    check_order,
    check_priorities,
    count_error,
    empty_error,
    is_ordered,
    ranks_before,
    ranks_before_min,
    remove_absent_error,
    remove_too_many_error,
    unordered_error,
)
from bpeds.structures.protocols import Order, TieKey

__all__ = ["HeapyKiYay"]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")


class _Entry(Generic[K, P]):
    """One key of the heap: its priority, tie key, key and current index."""

    __slots__ = ("key", "pos", "prio", "tie")

    def __init__(self, prio: P, tie: Any, key: K, pos: int) -> None:
        self.prio = prio
        self.tie = tie
        self.key = key
        self.pos = pos

    def __repr__(self) -> str:
        return f"_Entry(prio={self.prio!r}, tie={self.tie!r}, key={self.key!r}, pos={self.pos})"


class HeapyKiYay(BinaryHeap[K, P, _Entry[K, P]]):
    """An array-based binary max-heap whose entries know their position.

    Counter vocabulary (``add``/``remove``/``count``/``most_common``) and heap
    vocabulary (``update``/``top``/``pop``); among equal priorities the key with
    the smallest tie key (``tie(key)``, computed once at insertion; the key
    itself by default) comes first. ``sifts`` counts entries moved one level.

    >>> h = HeapyKiYay({("a", "b"): 3, ("b", "c"): 1})
    >>> h.add(("c", "d"), 3)
    >>> h.top()                      # 3 == 3: the smaller key wins the tie
    (('a', 'b'), 3)
    >>> h.remove(("a", "b"))
    >>> h.pop()
    (('c', 'd'), 3)
    >>> h.most_common()
    [(('a', 'b'), 2), (('b', 'c'), 1)]
    >>> h.check()

    ``order="min"`` gives the smallest priority first (Dijkstra, tuple
    priorities that cannot be negated); ties still go to the smallest tie key:

    >>> d = HeapyKiYay({"a": (3, 1), "b": (2, 9), "c": (2, 9)}, order="min")
    >>> d.update("a", (1, 0)); d.pop(), d.pop(), d.top()
    (('a', (1, 0)), ('b', (2, 9)), ('c', (2, 9)))
    """

    __slots__ = ("_heap",)
    _public_name = "HeapyKiYay"

    def __new__(
        cls,
        initial: Mapping[K, P] | None = None,
        *,
        tie: TieKey | None = None,
        order: Order = "max",
    ) -> HeapyKiYay[K, P]:
        """Pick the class for ``order``: the min variant is a private subclass."""
        if order == "min" and cls is HeapyKiYay:
            return super().__new__(_MinHeapyKiYay)
        return super().__new__(cls)

    def __init__(
        self,
        initial: Mapping[K, P] | None = None,
        *,
        tie: TieKey | None = None,
        order: Order = "max",
    ) -> None:
        """Build a heap from ``initial`` (key -> priority) in O(n) by bottom-up heapify.

        ``order`` is ``"max"`` (largest priority first, the default) or ``"min"``.

        Complexity: O(n) for n initial keys (plus n calls to ``tie``).
        """
        if (check_order(order) == "min") != self._min:
            raise TypeError(
                f"{type(self).__name__} cannot take order={order!r}; "
                "order='min' is built by HeapyKiYay itself"
            )
        super().__init__(tie)
        self._heap: list[_Entry[K, P]] = []
        if initial:
            check_priorities(initial.values())
            heap = self._heap
            index = self._index
            tie_of = self._tie
            for key, prio in initial.items():
                entry = _Entry(prio, key if tie_of is None else tie_of(key), key, len(heap))
                heap.append(entry)
                index[key] = entry
            for i in range((len(heap) >> 1) - 1, -1, -1):
                self._sift_down(heap[i], i)

    def _first(self) -> _Entry[K, P] | None:
        heap = self._heap
        return heap[0] if heap else None

    def _walk(self, n: int) -> list[tuple[K, P]]:
        """The ``n`` best items (4 * n < size), walking the array best-first."""
        heap = self._heap
        size = len(heap)
        out: list[tuple[K, P]] = []
        first = heap[0]
        wrap = RankedMin if self._min else Ranked
        frontier = [wrap(first.prio, first.tie, 0)]
        while len(out) < n:
            i = heappop(frontier).payload
            entry = heap[i]
            out.append((entry.key, entry.prio))
            for c in (2 * i + 1, 2 * i + 2):
                if c < size:
                    child = heap[c]
                    heappush(frontier, wrap(child.prio, child.tie, c))
        return out

    # -- sifting (textbook names: _sift_up moves towards the root) ---------------------------

    def _sift_up(self, entry: _Entry[K, P], i: int) -> None:
        """Move ``entry`` (logically at index ``i``) towards the root while it ranks first.

        Hole method: parents move down into the hole, ``entry`` is written once.
        Even if a comparison raises, ``entry`` lands at the current hole, so
        every index stays consistent.
        """
        heap = self._heap
        prio: Any = entry.prio
        tie = entry.tie
        moved = 0
        try:
            while i:
                parent_i = (i - 1) >> 1
                parent = heap[parent_i]
                pp: Any = parent.prio
                if prio < pp:
                    break
                if not pp < prio and not tie < parent.tie:
                    break
                heap[i] = parent
                parent.pos = i
                i = parent_i
                moved += 1
        finally:
            heap[i] = entry
            entry.pos = i
            self.sifts += moved

    def _sift_down(self, entry: _Entry[K, P], i: int) -> None:
        """Move ``entry`` (logically at index ``i``) away from the root while a child ranks first.

        Same hole method and the same guarantee as :meth:`_sift_up`.
        """
        heap = self._heap
        size = len(heap)
        prio: Any = entry.prio
        tie = entry.tie
        moved = 0
        try:
            while True:
                c = 2 * i + 1
                if c >= size:
                    break
                child = heap[c]
                r = c + 1
                if r < size:
                    right = heap[r]
                    cp: Any = child.prio
                    rp = right.prio
                    if cp < rp or (not rp < cp and right.tie < child.tie):
                        c = r
                        child = right
                cp = child.prio
                if cp < prio:
                    break
                if not prio < cp and not child.tie < tie:
                    break
                heap[i] = child
                child.pos = i
                i = c
                moved += 1
        finally:
            heap[i] = entry
            entry.pos = i
            self.sifts += moved

    def _resift(self, entry: _Entry[K, P]) -> None:
        """Restore heap order around ``entry`` after its priority changed either way."""
        i = entry.pos
        self._sift_up(entry, i)
        if entry.pos == i:
            self._sift_down(entry, i)

    def _insert(self, key: K, prio: P) -> None:
        tie_of = self._tie
        tie = key if tie_of is None else tie_of(key)
        heap = self._heap
        entry = _Entry(prio, tie, key, len(heap))
        heap.append(entry)
        self._index[key] = entry
        try:
            self._sift_up(entry, entry.pos)
        except BaseException:
            self._delete(entry)
            raise

    def _delete(self, entry: _Entry[K, P]) -> None:
        heap = self._heap
        del self._index[entry.key]
        last = heap.pop()
        if last is entry:
            return
        i = entry.pos
        heap[i] = last
        last.pos = i
        if i:
            parent = heap[(i - 1) >> 1]
            pp: Any = parent.prio
            lp = last.prio
            if pp < lp or (not lp < pp and last.tie < parent.tie):
                self._sift_up(last, i)
                return
        self._sift_down(last, i)

    # -- the Multiset protocol ------------------------------------------------------------------

    def pop(self) -> tuple[K, P]:
        """Remove and return ``top()``; EmptyError if empty.

        Written out (the last entry takes the root's place and sifts down)
        rather than through the generic delete: a Dijkstra loop pops once per
        node.

        Complexity: O(log n).
        """
        heap = self._heap
        if not heap:
            raise empty_error("pop")
        first = heap[0]
        del self._index[first.key]
        last = heap.pop()
        if last is not first:
            self._refill_root(last)
        return first.key, first.prio

    def _refill_root(self, entry: _Entry[K, P]) -> None:
        """Put ``entry`` (the former last one) in place of the removed root.

        Bottom-up, as CPython's ``heapq.heappop`` does: the hole at the root
        moves down to a leaf, taking the better child at each level (one
        comparison of the two children), then ``entry`` sifts up from there.
        The former last entry nearly always belongs near the bottom, so this
        makes about half the comparisons of a top-down sift.
        """
        heap = self._heap
        size = len(heap)
        i = 0
        moved = 0
        try:
            c = 1
            while c < size:
                child = heap[c]
                r = c + 1
                if r < size:
                    right = heap[r]
                    cp: Any = child.prio
                    rp = right.prio
                    if cp < rp or (not rp < cp and right.tie < child.tie):
                        c = r
                        child = right
                heap[i] = child
                child.pos = i
                i = c
                c = 2 * i + 1
                moved += 1
        finally:
            heap[i] = entry
            entry.pos = i
            self.sifts += moved
        self._sift_up(entry, i)

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (an absent key starts at 0).

        A result of exactly 0 removes the key (``add(k, 0)`` leaves an absent
        key absent); ``n < 0`` raises ValueError. Assumes ``priority + n >=
        priority`` (true of numbers). If a comparison raises, the change is
        undone and the error propagates.

        Complexity: O(log n); O(1) when the key does not overtake its parent.
        """
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        entry = self._index.get(key)
        if entry is None:
            if n:
                self._insert(key, n)  # type: ignore[arg-type]  # counts are ints
            return
        old: Any = entry.prio
        new = old + n
        if new == 0:
            self._delete(entry)
            return
        entry.prio = new
        if not n:
            return
        i = entry.pos
        if i:
            try:
                if not new < self._heap[(i - 1) >> 1].prio:
                    self._sift_up(entry, i)
            except BaseException:
                entry.prio = old
                self._resift(entry)
                raise

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``; the key leaves when it reaches 0.

        Raises :class:`~bpeds.errors.PreconditionError` (a ValueError) if the key
        is absent or its count is smaller than ``n``; ValueError if ``n < 0``.

        Complexity: O(log n).
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
            return
        entry.prio = new
        if not n:
            return
        heap = self._heap
        i = entry.pos
        c = 2 * i + 1
        size = len(heap)
        if c < size:
            try:
                # Cheap pre-check: both children strictly lower means no move.
                if not heap[c].prio < new or (c + 1 < size and not heap[c + 1].prio < new):
                    self._sift_down(entry, i)
            except BaseException:
                entry.prio = old
                self._resift(entry)
                raise

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority (inserting it if absent), sifting either way.

        Any priority, 0 and negatives included, keeps the key present. If a
        comparison raises (say the new priority cannot be compared with its
        neighbours'), the change is undone and the error propagates.

        Complexity: O(log n).
        """
        if type(priority) is not int and not is_ordered(priority):
            raise unordered_error(priority)
        entry = self._index.get(key)
        if entry is None:
            self._insert(key, priority)
            return
        old: Any = entry.prio
        entry.prio = priority
        try:
            if old < priority:
                self._sift_up(entry, entry.pos)
            elif priority < old:
                self._sift_down(entry, entry.pos)
        except BaseException:
            entry.prio = old
            self._resift(entry)
            raise

    def check(self) -> None:
        """Verify every invariant in O(n); raise InvariantError with the state if broken.

        Checked: each entry's ``pos`` is its index; the dict and the list hold
        the same entries; each tie key equals ``tie(key)``; no entry ranks
        before its parent (priority, then tie key).

        Complexity: O(n).
        """
        heap = self._heap
        index = self._index
        before = ranks_before_min if self._min else ranks_before
        if not isinstance(self.sifts, int) or self.sifts < 0:
            raise InvariantError(f"sifts counter is {self.sifts!r}", self._dump())
        if len(heap) != len(index):
            raise InvariantError(
                f"heap holds {len(heap)} entries but the index {len(index)}", self._dump()
            )
        for i, entry in enumerate(heap):
            if not isinstance(entry, _Entry):
                raise InvariantError(f"heap[{i}] is not an entry: {entry!r}", self._dump(i))
            if entry.pos != i:
                raise InvariantError(f"heap[{i}] believes it is at {entry.pos}", self._dump(i))
            if index.get(entry.key) is not entry:
                raise InvariantError(
                    f"index[{entry.key!r}] is not the entry at heap[{i}]", self._dump(i)
                )
            problem = self._tie_problem(entry.key, entry.tie)
            if problem is not None:
                raise InvariantError(f"heap[{i}] {problem}", self._dump(i))
            if i:
                parent = heap[(i - 1) >> 1]
                if before(entry.prio, entry.tie, parent.prio, parent.tie):
                    raise InvariantError(
                        f"heap order: heap[{i}] ranks before its parent heap[{(i - 1) >> 1}]",
                        self._dump(i),
                    )

    def _dump(self, at: int | None = None) -> dict[str, object]:
        heap = self._heap
        state: dict[str, object] = {
            "size": len(heap),
            "index_size": len(self._index),
            "sifts": self.sifts,
            "head": heap[:16],
        }
        if at is not None:
            state["at"] = heap[at]
            if at:
                state["parent"] = heap[(at - 1) >> 1]
        return state


class _MinHeapyKiYay(HeapyKiYay[K, P]):
    """``HeapyKiYay(order="min")``: the smallest priority first, ties still by smallest tie key.

    The methods whose loops compare priorities are written out again with
    the comparisons the other way round (no per-step branch on the order);
    everything else is inherited.
    """

    __slots__ = ()
    _min = True

    def _sift_up(self, entry: _Entry[K, P], i: int) -> None:
        heap = self._heap
        prio: Any = entry.prio
        tie = entry.tie
        moved = 0
        try:
            while i:
                parent_i = (i - 1) >> 1
                parent = heap[parent_i]
                pp: Any = parent.prio
                if pp < prio:
                    break
                if not prio < pp and not tie < parent.tie:
                    break
                heap[i] = parent
                parent.pos = i
                i = parent_i
                moved += 1
        finally:
            heap[i] = entry
            entry.pos = i
            self.sifts += moved

    def _sift_down(self, entry: _Entry[K, P], i: int) -> None:
        heap = self._heap
        size = len(heap)
        prio: Any = entry.prio
        tie = entry.tie
        moved = 0
        try:
            while True:
                c = 2 * i + 1
                if c >= size:
                    break
                child = heap[c]
                r = c + 1
                if r < size:
                    right = heap[r]
                    cp: Any = child.prio
                    rp = right.prio
                    if rp < cp or (not cp < rp and right.tie < child.tie):
                        c = r
                        child = right
                cp = child.prio
                if prio < cp:
                    break
                if not cp < prio and not child.tie < tie:
                    break
                heap[i] = child
                child.pos = i
                i = c
                moved += 1
        finally:
            heap[i] = entry
            entry.pos = i
            self.sifts += moved

    def _delete(self, entry: _Entry[K, P]) -> None:
        heap = self._heap
        del self._index[entry.key]
        last = heap.pop()
        if last is entry:
            return
        i = entry.pos
        heap[i] = last
        last.pos = i
        if i:
            parent = heap[(i - 1) >> 1]
            pp: Any = parent.prio
            lp = last.prio
            if lp < pp or (not pp < lp and last.tie < parent.tie):
                self._sift_up(last, i)
                return
        self._sift_down(last, i)

    def _refill_root(self, entry: _Entry[K, P]) -> None:
        heap = self._heap
        size = len(heap)
        i = 0
        moved = 0
        try:
            c = 1
            while c < size:
                child = heap[c]
                r = c + 1
                if r < size:
                    right = heap[r]
                    cp: Any = child.prio
                    rp = right.prio
                    if rp < cp or (not cp < rp and right.tie < child.tie):
                        c = r
                        child = right
                heap[i] = child
                child.pos = i
                i = c
                c = 2 * i + 1
                moved += 1
        finally:
            heap[i] = entry
            entry.pos = i
            self.sifts += moved
        self._sift_up(entry, i)

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n``: it moves away from the top. See HeapyKiYay.add.

        Complexity: O(log n).
        """
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        entry = self._index.get(key)
        if entry is None:
            if n:
                self._insert(key, n)  # type: ignore[arg-type]  # counts are ints
            return
        old: Any = entry.prio
        new = old + n
        if new == 0:
            self._delete(entry)
            return
        entry.prio = new
        if not n:
            return
        heap = self._heap
        i = entry.pos
        c = 2 * i + 1
        size = len(heap)
        if c < size:
            try:
                # Cheap pre-check: both children strictly higher means no move.
                if not new < heap[c].prio or (c + 1 < size and not new < heap[c + 1].prio):
                    self._sift_down(entry, i)
            except BaseException:
                entry.prio = old
                self._resift(entry)
                raise

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``: it moves towards the top. See HeapyKiYay.remove.

        Complexity: O(log n).
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
            return
        entry.prio = new
        if not n:
            return
        i = entry.pos
        if i:
            try:
                if not self._heap[(i - 1) >> 1].prio < new:
                    self._sift_up(entry, i)
            except BaseException:
                entry.prio = old
                self._resift(entry)
                raise

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority (inserting it if absent). See HeapyKiYay.update.

        Complexity: O(log n).
        """
        if type(priority) is not int and not is_ordered(priority):
            raise unordered_error(priority)
        entry = self._index.get(key)
        if entry is None:
            self._insert(key, priority)
            return
        old: Any = entry.prio
        entry.prio = priority
        try:
            if priority < old:
                self._sift_up(entry, entry.pos)
            elif old < priority:
                self._sift_down(entry, entry.pos)
        except BaseException:
            entry.prio = old
            self._resift(entry)
            raise
