"""``Heapy``: a pointer-based binary max-heap :class:`Multiset`.

Every key owns one node for as long as it is present; a node knows its
parent and its two children, and a dict maps each key to its node. Sifting
relinks nodes (a node swaps places with its parent) instead of moving
payloads, so the dict is never rewritten during a sift. The tree is kept
complete: slot ``s`` (1-based, in level order) is reached from the root by
reading the binary digits of ``s`` after the leading 1 (0 = left,
1 = right), which is how the next free slot and the last node are found.

Ties among equal priorities go to the smallest tie key; ``_sift_up`` moves
towards the root (see :mod:`bpeds.structures.multiset`).

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
    is_ordered,
    ranks_before,
    ranks_before_min,
    remove_absent_error,
    remove_too_many_error,
    unordered_error,
)
from bpeds.structures.protocols import Order, TieKey

__all__ = ["Heapy"]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")


class _Node(Generic[K, P]):
    """A key's node: payload plus links to its parent and children."""

    __slots__ = ("key", "left", "parent", "prio", "right", "tie")

    def __init__(self, prio: P, tie: Any, key: K) -> None:
        self.prio = prio
        self.tie = tie
        self.key = key
        self.parent: _Node[K, P] | None = None
        self.left: _Node[K, P] | None = None
        self.right: _Node[K, P] | None = None

    def __repr__(self) -> str:
        parent = None if self.parent is None else self.parent.key
        return f"_Node(prio={self.prio!r}, tie={self.tie!r}, key={self.key!r}, parent={parent!r})"


class Heapy(BinaryHeap[K, P, _Node[K, P]]):
    """A node-based binary heap (max-first; ``order="min"`` for min-first): linked nodes.

    Each key owns a node linked to its parent and children; sifting relinks
    nodes. Same behaviour and sifts as the array-based
    :class:`~bpeds.structures.HeapyKiYay`, which is usually the one to pick.

    Same behaviour as every :class:`~bpeds.structures.protocols.Multiset`:
    among equal priorities the smallest tie key (``tie(key)``, computed once
    at insertion; the key itself by default) comes first. ``sifts`` counts
    nodes moved one level.

    >>> h = Heapy({"ab": 2, "bc": 2, "cd": 1}, tie=lambda k: k[::-1])
    >>> h.top()                      # tie keys "ba" < "cb": "ab" wins
    ('ab', 2)
    >>> h.add("cd", 2)
    >>> h.pop(), h.pop()
    (('cd', 3), ('ab', 2))
    >>> h.top(), len(h), "ab" in h
    (('bc', 2), 1, False)
    >>> h.check()
    >>> Heapy({"x": 5, "y": 2}, order="min").top()   # smallest first
    ('y', 2)
    """

    __slots__ = ("_root",)
    _public_name = "Heapy"

    def __new__(
        cls,
        initial: Mapping[K, P] | None = None,
        *,
        tie: TieKey | None = None,
        order: Order = "max",
    ) -> Heapy[K, P]:
        """Pick the class for ``order``: the min variant is a private subclass."""
        if order == "min" and cls is Heapy:
            return super().__new__(_MinHeapy)
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
                "order='min' is built by Heapy itself"
            )
        super().__init__(tie)
        self._root: _Node[K, P] | None = None
        if initial:
            check_priorities(initial.values())
            tie_of = self._tie
            nodes = self._index
            slots: list[_Node[K, P]] = []
            for key, prio in initial.items():
                node = _Node(prio, key if tie_of is None else tie_of(key), key)
                nodes[key] = node
                i = len(slots)
                if i:
                    parent = slots[(i - 1) >> 1]
                    node.parent = parent
                    if i & 1:
                        parent.left = node
                    else:
                        parent.right = node
                slots.append(node)
            self._root = slots[0]
            # Bottom-up: the node first placed at slot i is still there when its turn comes,
            # because the sifts before it only moved nodes inside subtrees of later slots.
            for i in range((len(slots) >> 1) - 1, -1, -1):
                self._sift_down(slots[i])

    # -- shape ----------------------------------------------------------------------------------

    def _node_at(self, slot: int) -> _Node[K, P]:
        """The node at 1-based level-order ``slot`` (1 <= slot <= len)."""
        node = self._root
        bit = 1 << (slot.bit_length() - 1) >> 1
        while node is not None:
            if not bit:
                return node
            node = node.right if slot & bit else node.left
            bit >>= 1
        raise InvariantError(f"no node at slot {slot} of a heap of {len(self)}", self._dump())

    def _first(self) -> _Node[K, P] | None:
        return self._root

    def _walk(self, n: int) -> list[tuple[K, P]]:
        """The ``n`` best items (4 * n < size), walking the tree best-first."""
        root = self._root
        assert root is not None
        out: list[tuple[K, P]] = []
        wrap = RankedMin if self._min else Ranked
        frontier = [wrap(root.prio, root.tie, root)]
        while len(out) < n:
            x = heappop(frontier).payload
            out.append((x.key, x.prio))
            left = x.left
            if left is not None:
                heappush(frontier, wrap(left.prio, left.tie, left))
                right = x.right
                if right is not None:
                    heappush(frontier, wrap(right.prio, right.tie, right))
        return out

    # -- sifting (textbook names: _sift_up moves towards the root) ---------------------------

    def _rise(self, x: _Node[K, P]) -> None:
        """Swap ``x`` with its parent by relinking: ``x`` takes the parent's place, the
        parent takes ``x``'s (the one step of every sift). O(1)."""
        p = x.parent
        assert p is not None
        g = p.parent
        xl = x.left
        xr = x.right
        if p.left is x:
            s = p.right
            x.left = p
            x.right = s
        else:
            s = p.left
            x.left = s
            x.right = p
        if s is not None:
            s.parent = x
        p.left = xl
        p.right = xr
        if xl is not None:
            xl.parent = p
            if xr is not None:
                xr.parent = p
        p.parent = x
        x.parent = g
        if g is None:
            self._root = x
        elif g.left is p:
            g.left = x
        else:
            g.right = x

    def _sift_up(self, x: _Node[K, P]) -> None:
        """Swap ``x`` with its parent while ``x`` ranks before it.

        Every comparison happens before the relinking it decides, so the tree
        is well formed even if a comparison raises.
        """
        prio: Any = x.prio
        tie = x.tie
        moved = 0
        try:
            while True:
                p = x.parent
                if p is None:
                    break
                pp: Any = p.prio
                if prio < pp:
                    break
                if not pp < prio and not tie < p.tie:
                    break
                self._rise(x)
                moved += 1
        finally:
            self.sifts += moved

    def _sift_down(self, x: _Node[K, P]) -> None:
        """Swap ``x`` with its better child while that child ranks before it."""
        prio: Any = x.prio
        tie = x.tie
        moved = 0
        try:
            while True:
                c = x.left
                if c is None:
                    break
                r = x.right
                if r is not None:
                    cp: Any = c.prio
                    rp = r.prio
                    if cp < rp or (not rp < cp and r.tie < c.tie):
                        c = r
                cp = c.prio
                if cp < prio:
                    break
                if not prio < cp and not c.tie < tie:
                    break
                self._rise(c)
                moved += 1
        finally:
            self.sifts += moved

    def _resift(self, x: _Node[K, P]) -> None:
        """Restore heap order around ``x`` after its priority changed either way."""
        parent = x.parent
        self._sift_up(x)
        if x.parent is parent:
            self._sift_down(x)

    def _insert(self, key: K, prio: P) -> None:
        tie_of = self._tie
        node = _Node(prio, key if tie_of is None else tie_of(key), key)
        nodes = self._index
        slot = len(nodes) + 1
        if slot == 1:
            self._root = node
        else:
            parent = self._node_at(slot >> 1)
            node.parent = parent
            if slot & 1:
                parent.right = node
            else:
                parent.left = node
        nodes[key] = node
        try:
            self._sift_up(node)
        except BaseException:
            self._delete(node)
            raise

    def _delete(self, x: _Node[K, P]) -> None:
        nodes = self._index
        last = self._node_at(len(nodes))
        del nodes[x.key]
        lp = last.parent
        if lp is None:  # the only node
            self._root = None
            return
        if lp.right is last:
            lp.right = None
        else:
            lp.left = None
        if last is x:
            x.parent = None
            return
        # ``last`` takes x's place (x's children are read after detaching ``last``).
        xp = x.parent
        xl = x.left
        xr = x.right
        last.parent = xp
        last.left = xl
        last.right = xr
        if xl is not None:
            xl.parent = last
        if xr is not None:
            xr.parent = last
        if xp is None:
            self._root = last
        elif xp.left is x:
            xp.left = last
        else:
            xp.right = last
        x.parent = x.left = x.right = None
        if xp is not None:
            pp: Any = xp.prio
            lpr = last.prio
            if pp < lpr or (not lpr < pp and last.tie < xp.tie):
                self._sift_up(last)
                return
        self._sift_down(last)

    # -- the Multiset protocol ------------------------------------------------------------------

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (an absent key starts at 0).

        A result of exactly 0 removes the key (``add(k, 0)`` leaves an absent
        key absent); ``n < 0`` raises ValueError. Assumes ``priority + n >=
        priority`` (true of numbers).
        If a comparison raises, the change is undone and the error propagates.

        Complexity: O(log n) (an absent key also walks to the free slot).
        """
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        node = self._index.get(key)
        if node is None:
            if n:
                self._insert(key, n)  # type: ignore[arg-type]  # counts are ints
            return
        old: Any = node.prio
        new = old + n
        if new == 0:
            self._delete(node)
            return
        node.prio = new
        if not n:
            return
        parent = node.parent
        if parent is not None:
            try:
                if not new < parent.prio:
                    self._sift_up(node)
            except BaseException:
                node.prio = old
                self._resift(node)
                raise

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``; the key leaves when it reaches 0.

        Raises :class:`~bpeds.errors.PreconditionError` (a ValueError) if the key
        is absent or its count is smaller than ``n``; ValueError if ``n < 0``.

        Complexity: O(log n).
        """
        if type(n) is not int or n < 0:
            raise count_error("remove", n)
        node = self._index.get(key)
        if node is None:
            raise remove_absent_error(key)
        old: Any = node.prio
        if old < n:
            raise remove_too_many_error(key, old, n)
        new = old - n
        if new == 0:
            self._delete(node)
            return
        node.prio = new
        if not n:
            return
        left = node.left
        if left is not None:
            try:
                # Cheap pre-check: both children strictly lower means no move.
                right = node.right
                if not left.prio < new or (right is not None and not right.prio < new):
                    self._sift_down(node)
            except BaseException:
                node.prio = old
                self._resift(node)
                raise

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority (inserting it if absent), sifting either way.

        Any priority, 0 and negatives included, keeps the key. If a comparison raises, the
        change is undone and the error propagates.

        Complexity: O(log n).
        """
        if type(priority) is not int and not is_ordered(priority):
            raise unordered_error(priority)
        node = self._index.get(key)
        if node is None:
            self._insert(key, priority)
            return
        old: Any = node.prio
        node.prio = priority
        try:
            if old < priority:
                self._sift_up(node)
            elif priority < old:
                self._sift_down(node)
        except BaseException:
            node.prio = old
            self._resift(node)
            raise

    def check(self) -> None:
        """Verify every invariant in O(n); raise InvariantError with the state if broken.

        Checked: the root has no parent; every child points back to its
        parent; the tree is complete (level order has no gaps) and holds
        exactly the dict's nodes; each tie key equals ``tie(key)``; no node
        ranks before its parent.

        Complexity: O(n).
        """
        nodes = self._index
        size = len(nodes)
        before = ranks_before_min if self._min else ranks_before
        if not isinstance(self.sifts, int) or self.sifts < 0:
            raise InvariantError(f"sifts counter is {self.sifts!r}", self._dump())
        root = self._root
        if root is None:
            if size:
                raise InvariantError(f"no root but {size} keys in the dict", self._dump())
            return
        if root.parent is not None:
            raise InvariantError("the root has a parent", self._dump(root))
        order = [root]
        for i, x in enumerate(order):
            if len(order) > size:
                raise InvariantError(
                    f"more than {size} nodes reachable from the root", self._dump(x)
                )
            if nodes.get(x.key) is not x:
                raise InvariantError(f"dict[{x.key!r}] is not its node", self._dump(x))
            problem = self._tie_problem(x.key, x.tie)
            if problem is not None:
                raise InvariantError(f"node {x.key!r} {problem}", self._dump(x))
            parent = x.parent
            if parent is not None and before(x.prio, x.tie, parent.prio, parent.tie):
                raise InvariantError(
                    f"heap order: {x.key!r} ranks before its parent {parent.key!r}",
                    self._dump(x),
                )
            left = x.left
            right = x.right
            if left is None:
                if right is not None:
                    raise InvariantError(f"{x.key!r} has a right but no left child", self._dump(x))
                continue
            for slot, child in ((2 * i + 1, left), (2 * i + 2, right)):
                if child is None:
                    continue
                if child.parent is not x:
                    raise InvariantError(
                        f"child {child.key!r} of {x.key!r} points to another parent",
                        self._dump(child),
                    )
                if slot != len(order):
                    raise InvariantError(
                        f"shape: {child.key!r} sits at level-order slot {len(order)}, "
                        f"expected {slot} (the tree is not complete)",
                        self._dump(child),
                    )
                order.append(child)
        if len(order) != size:
            raise InvariantError(
                f"{len(order)} nodes reachable from the root, {size} in the dict", self._dump()
            )

    def _dump(self, at: _Node[K, P] | None = None) -> dict[str, object]:
        state: dict[str, object] = {"size": len(self._index), "sifts": self.sifts}
        head: list[_Node[K, P]] = []
        root = self._root
        if root is not None:
            head.append(root)
            for x in head:
                if len(head) >= 16:
                    break
                for child in (x.left, x.right):
                    if child is not None and len(head) < 16:
                        head.append(child)
        state["head"] = head
        if at is not None:
            state["at"] = at
            state["parent"] = at.parent
        return state


class _MinHeapy(Heapy[K, P]):
    """``Heapy(order="min")``: the smallest priority first, ties still by smallest tie key.

    The methods whose loops compare priorities are written out again with
    the comparisons the other way round (no per-step branch on the order);
    everything else is inherited.
    """

    __slots__ = ()
    _min = True

    def _sift_up(self, x: _Node[K, P]) -> None:
        prio: Any = x.prio
        tie = x.tie
        moved = 0
        try:
            while True:
                p = x.parent
                if p is None:
                    break
                pp: Any = p.prio
                if pp < prio:
                    break
                if not prio < pp and not tie < p.tie:
                    break
                self._rise(x)
                moved += 1
        finally:
            self.sifts += moved

    def _sift_down(self, x: _Node[K, P]) -> None:
        prio: Any = x.prio
        tie = x.tie
        moved = 0
        try:
            while True:
                c = x.left
                if c is None:
                    break
                r = x.right
                if r is not None:
                    cp: Any = c.prio
                    rp = r.prio
                    if rp < cp or (not cp < rp and r.tie < c.tie):
                        c = r
                cp = c.prio
                if prio < cp:
                    break
                if not cp < prio and not c.tie < tie:
                    break
                self._rise(c)
                moved += 1
        finally:
            self.sifts += moved

    def _delete(self, x: _Node[K, P]) -> None:
        nodes = self._index
        last = self._node_at(len(nodes))
        del nodes[x.key]
        lp = last.parent
        if lp is None:  # the only node
            self._root = None
            return
        if lp.right is last:
            lp.right = None
        else:
            lp.left = None
        if last is x:
            x.parent = None
            return
        # ``last`` takes x's place (x's children are read after detaching ``last``).
        xp = x.parent
        xl = x.left
        xr = x.right
        last.parent = xp
        last.left = xl
        last.right = xr
        if xl is not None:
            xl.parent = last
        if xr is not None:
            xr.parent = last
        if xp is None:
            self._root = last
        elif xp.left is x:
            xp.left = last
        else:
            xp.right = last
        x.parent = x.left = x.right = None
        if xp is not None:
            pp: Any = xp.prio
            lpr = last.prio
            if lpr < pp or (not pp < lpr and last.tie < xp.tie):
                self._sift_up(last)
                return
        self._sift_down(last)

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n``: it moves away from the top. See Heapy.add.

        Complexity: O(log n).
        """
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        node = self._index.get(key)
        if node is None:
            if n:
                self._insert(key, n)  # type: ignore[arg-type]  # counts are ints
            return
        old: Any = node.prio
        new = old + n
        if new == 0:
            self._delete(node)
            return
        node.prio = new
        if not n:
            return
        left = node.left
        if left is not None:
            try:
                # Cheap pre-check: both children strictly higher means no move.
                right = node.right
                if not new < left.prio or (right is not None and not new < right.prio):
                    self._sift_down(node)
            except BaseException:
                node.prio = old
                self._resift(node)
                raise

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``: it moves towards the top. See Heapy.remove.

        Complexity: O(log n).
        """
        if type(n) is not int or n < 0:
            raise count_error("remove", n)
        node = self._index.get(key)
        if node is None:
            raise remove_absent_error(key)
        old: Any = node.prio
        if old < n:
            raise remove_too_many_error(key, old, n)
        new = old - n
        if new == 0:
            self._delete(node)
            return
        node.prio = new
        if not n:
            return
        parent = node.parent
        if parent is not None:
            try:
                if not parent.prio < new:
                    self._sift_up(node)
            except BaseException:
                node.prio = old
                self._resift(node)
                raise

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority (inserting it if absent). See Heapy.update.

        Complexity: O(log n).
        """
        if type(priority) is not int and not is_ordered(priority):
            raise unordered_error(priority)
        node = self._index.get(key)
        if node is None:
            self._insert(key, priority)
            return
        old: Any = node.prio
        node.prio = priority
        try:
            if priority < old:
                self._sift_up(node)
            elif old < priority:
                self._sift_down(node)
        except BaseException:
            node.prio = old
            self._resift(node)
            raise
