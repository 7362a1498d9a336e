"""Shared vocabulary of the :class:`~bpeds.structures.protocols.Multiset` implementations.

The implementations live in their own modules (:mod:`~bpeds.structures.heapy`,
:mod:`~bpeds.structures.heapykiyay`, :mod:`~bpeds.structures.batched`,
:mod:`~bpeds.structures.baselines`); this module holds what they share: the
ranking rule, argument checks and the error messages, so that every
implementation says the same thing for the same mistake, and the base classes
that write the Counter vocabulary once on top of each structure's primitives:

* :class:`MultisetBase`: the tie function, ``repr`` and the tie-key check;
* :class:`IndexedMultiset`: a dict ``_index`` from each key to its entry
  (``count``, ``discard``, ``items``, ``len``, ``in``, ``iter``);
* :class:`BinaryHeap`: a max-heap of those entries (``top``, ``pop``,
  ``most_common``, the ``sifts`` counter).

The hot paths (``add``/``remove``/``update`` and the sift loops) stay written
out in each structure: a shared version would cost a Python call per operation.

Ranking. ``a`` *ranks before* ``b`` when ``b.priority < a.priority``, or when
neither priority is smaller than the other and ``a.tie < b.tie`` (the
smallest tie key wins). Priorities are compared with ``<`` only, and the tie
key is consulted only when the priorities are equal: never negated, never
packed into a tuple. The heaps inline this rule in their sift loops; it is
correct for priorities that are totally ordered by ``<`` (ints, floats
without NaN, tuples of those) and tie functions that are injective on the
keys present (the default, the key itself, is).

Min-ordering. A heap built with ``order="min"`` ranks by the *smallest*
priority first: ``a`` ranks before ``b`` when ``a.priority < b.priority``,
ties (equal priorities) still going to the smallest tie key. The min
variants are separate subclasses with the comparisons of their sift loops
written out the other way round, so neither order pays a branch per step.

Sift direction. Every heap in bpeds names its sifts in the textbook sense:
``_sift_up`` moves an entry *towards the root*, ``_sift_down`` *away from
it*. (CPython's :mod:`heapq` uses the opposite names.)

Not handled here: priorities that cannot be compared with each other (mixing
``int`` and ``tuple``) make the comparison raise; see each class for what it
leaves behind in that case.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import Any, Generic, Protocol, TypeVar

from bpeds.errors import EmptyError, PreconditionError
from bpeds.structures.protocols import Order, TieKey

__all__ = [
    "BinaryHeap",
    "IndexedMultiset",
    "MultisetBase",
    "Ranked",
    "RankedMin",
    "check_most_common_n",
    "check_order",
    "check_priorities",
    "count_error",
    "empty_error",
    "is_ordered",
    "negative_n_error",
    "rank_sorted",
    "ranks_before",
    "ranks_before_min",
    "remove_absent_error",
    "remove_too_many_error",
    "resolve_tie",
    "unordered_error",
]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")
T = TypeVar("T")


class _Entry(Protocol):
    """What an :class:`IndexedMultiset` keeps for each key."""

    key: Any
    prio: Any
    tie: Any


E = TypeVar("E", bound=_Entry)


def ranks_before(prio_a: Any, tie_a: Any, prio_b: Any, tie_b: Any) -> bool:
    """Whether ``(prio_a, tie_a)`` ranks strictly before ``(prio_b, tie_b)``.

    The reference statement of the ranking rule (the heaps inline it):

    >>> ranks_before(3, "b", 2, "a"), ranks_before(2, "a", 2, "b"), ranks_before(2, "b", 2, "b")
    (True, True, False)

    Complexity: O(1) comparisons.
    """
    if prio_b < prio_a:
        return True
    if prio_a < prio_b:
        return False
    return bool(tie_a < tie_b)


def ranks_before_min(prio_a: Any, tie_a: Any, prio_b: Any, tie_b: Any) -> bool:
    """:func:`ranks_before` for ``order="min"``: the smaller priority first, ties alike.

    >>> ranks_before_min(2, "b", 3, "a"), ranks_before_min(2, "a", 2, "b")
    (True, True)

    Complexity: O(1) comparisons.
    """
    if prio_a < prio_b:
        return True
    if prio_b < prio_a:
        return False
    return bool(tie_a < tie_b)


def check_order(order: object) -> Order:
    """Validate an ``order=`` argument: ``"max"`` or ``"min"``. Complexity: O(1)."""
    if order != "max" and order != "min":
        raise ValueError(
            f"order must be 'max' (largest first) or 'min' (smallest first), got {order!r}"
        )
    return order


class Ranked(Generic[T]):
    """A wrapper whose ``<`` means "ranks before", so :mod:`heapq` yields the best first.

    ``payload`` is carried along untouched (a node, an index, a key).

    >>> import heapq
    >>> h = [Ranked(1, "z", "low"), Ranked(5, "b", "tied-b"), Ranked(5, "a", "tied-a")]
    >>> heapq.heapify(h)
    >>> [heapq.heappop(h).payload for _ in range(3)]
    ['tied-a', 'tied-b', 'low']
    """

    __slots__ = ("payload", "prio", "tie")

    def __init__(self, prio: Any, tie: Any, payload: T) -> None:
        self.prio = prio
        self.tie = tie
        self.payload = payload

    def __lt__(self, other: Ranked[T]) -> bool:
        """Whether ``self`` ranks before ``other``. Complexity: O(1)."""
        sp = self.prio
        op = other.prio
        if op < sp:
            return True
        if sp < op:
            return False
        return bool(self.tie < other.tie)


class RankedMin(Ranked[T]):
    """:class:`Ranked` for ``order="min"``: ``<`` means "smaller priority, then smaller tie".

    >>> import heapq
    >>> h = [RankedMin(1, "z", "low"), RankedMin(5, "b", "b"), RankedMin(1, "a", "a")]
    >>> heapq.heapify(h)
    >>> [heapq.heappop(h).payload for _ in range(3)]
    ['a', 'low', 'b']
    """

    __slots__ = ()

    def __lt__(self, other: Ranked[T]) -> bool:
        """Whether ``self`` ranks before ``other`` (smallest first). Complexity: O(1)."""
        sp = self.prio
        op = other.prio
        if sp < op:
            return True
        if op < sp:
            return False
        return bool(self.tie < other.tie)


def rank_sorted(triples: Iterable[tuple[K, P, Any]], order: Order = "max") -> list[tuple[K, P]]:
    """Sort ``(key, priority, tie)`` triples best first and drop the tie keys.

    Two stable sorts: by tie key ascending, then by priority (descending for
    ``"max"``: ``reverse=True`` keeps equal priorities in their tie-key
    order), so no per-item wrapper or comparison function is needed.

    >>> rank_sorted([("a", 1, 9), ("b", 3, 0), ("c", 1, 2)])
    [('b', 3), ('c', 1), ('a', 1)]
    >>> rank_sorted([("a", 1, 9), ("b", 3, 0), ("c", 1, 2)], "min")
    [('c', 1), ('a', 1), ('b', 3)]

    Complexity: O(n log n).
    """
    rows = list(triples)
    rows.sort(key=_tie_of)
    rows.sort(key=_prio_of, reverse=order == "max")
    return [(row[0], row[1]) for row in rows]


def _tie_of(row: tuple[Any, Any, Any]) -> Any:
    return row[2]


def _prio_of(row: tuple[Any, Any, Any]) -> Any:
    return row[1]


def check_most_common_n(n: int | None) -> None:
    """Reject a negative ``n`` for ``most_common`` (``None`` means all).

    Complexity: O(1).
    """
    if n is not None and n < 0:
        raise ValueError(f"most_common(n) needs n >= 0 or None, got {n!r}")


def negative_n_error(method: str, n: int) -> ValueError:
    """The ValueError for ``add``/``remove`` with ``n < 0``. Complexity: O(1)."""
    other = "remove" if method == "add" else "add"
    return ValueError(
        f"{method}(key, n) needs n >= 0, got {n!r}; use {other}() to go the other way"
    )


def count_error(method: str, n: object) -> Exception:
    """The error for ``add``/``remove`` with a bad ``n``: a count is an ``int >= 0``.

    ``TypeError`` for anything but an ``int`` (``1.5``, ``nan``, ``True``),
    ``ValueError`` for a negative one. Complexity: O(1).

    >>> count_error("add", 1.5)
    TypeError('add(key, n) needs n to be an int count, got float 1.5')
    """
    if type(n) is not int:
        return TypeError(
            f"{method}(key, n) needs n to be an int count, got {type(n).__name__} {n!r}"
        )
    return negative_n_error(method, n)


def is_ordered(priority: object) -> bool:
    """Whether ``priority`` is totally ordered by ``<``: not NaN, nor a tuple holding one.

    >>> is_ordered(3), is_ordered(2.5), is_ordered((1, float("nan"))), is_ordered(float("nan"))
    (True, True, False, False)

    Ints are checked by type alone; floats by ``p == p``; tuples element by
    element; anything else by ``p == p`` (``Decimal("NaN")`` is not equal to
    itself). Complexity: O(size of the priority).
    """
    kind = type(priority)
    if kind is int:
        return True
    if kind is float:
        return priority == priority
    if kind is tuple:
        return all(is_ordered(x) for x in priority)  # type: ignore[attr-defined]
    try:
        return bool(priority == priority)
    except Exception:
        return False


def unordered_error(priority: object) -> PreconditionError:
    """The error for a priority that breaks the total order (NaN). Complexity: O(1)."""
    return PreconditionError(
        f"priority {priority!r} has no order (NaN compares false with everything), so a heap "
        "holding it would answer wrongly; nothing was changed"
    )


def check_priorities(priorities: Iterable[object]) -> None:
    """Raise :func:`unordered_error` for the first priority that is not ordered. O(n)."""
    for p in priorities:
        if type(p) is not int and not is_ordered(p):
            raise unordered_error(p)


def remove_absent_error(key: object) -> PreconditionError:
    """The PreconditionError for removing a key that is not present. Complexity: O(1)."""
    return PreconditionError(f"remove({key!r}): key is not present; use discard() to ignore that")


def remove_too_many_error(key: object, count: object, n: int) -> PreconditionError:
    """The PreconditionError for removing more than a key's count. Complexity: O(1)."""
    return PreconditionError(
        f"remove({key!r}, {n!r}): its count is only {count!r}; remove at most that, or discard()"
    )


def empty_error(method: str) -> EmptyError:
    """The EmptyError for ``top``/``pop`` on an empty multiset. Complexity: O(1)."""
    return EmptyError(f"{method}() on an empty multiset; check len() first")


def resolve_tie(tie: TieKey | None) -> TieKey | None:
    """Validate the ``tie`` argument: ``None`` or a callable. Complexity: O(1)."""
    if tie is not None and not callable(tie):
        raise TypeError(f"tie must be a callable key -> tie key, or None; got {tie!r}")
    return tie


class MultisetBase(Generic[K, P]):
    """What every multiset of bpeds shares, whatever it stores: the tie function and ``repr``.

    Subclasses call ``super().__init__(tie)`` and implement the protocol.
    """

    __slots__ = ("_tie",)

    #: True in the ``order="min"`` variants (a class attribute: the order never changes).
    _min = False
    #: The name ``repr`` shows (the min variants are private subclasses).
    _public_name = ""

    def __init__(self, tie: TieKey | None) -> None:
        self._tie = resolve_tie(tie)

    @property
    def order(self) -> Order:
        """``"max"`` (largest priority first) or ``"min"`` (smallest first). Complexity: O(1)."""
        return "min" if self._min else "max"

    def most_common(self, n: int | None = None) -> list[tuple[K, P]]:
        raise NotImplementedError

    def _tie_problem(self, key: object, tie: object) -> str | None:
        """For ``check()``: what is wrong with ``key``'s stored tie key, or None."""
        tie_of = self._tie
        expected = key if tie_of is None else tie_of(key)
        if expected != tie:
            return f"has tie key {tie!r}, tie(key) is {expected!r}"
        return None

    def __repr__(self) -> str:
        """``ClassName({key: priority, ...})``, best first.

        Complexity: that of ``most_common()`` plus O(n): O(n log n) at most.
        """
        body = ", ".join(f"{k!r}: {p!r}" for k, p in self.most_common())
        name = self._public_name or type(self).__name__
        order = ", order='min'" if self._min else ""
        return f"{name}({{{body}}}{order})"


class IndexedMultiset(MultisetBase[K, P], Generic[K, P, E]):
    """A multiset that keeps a dict ``_index`` from each key to its entry.

    An entry has ``key``, ``prio`` and ``tie`` attributes. Subclasses implement
    ``_delete(entry)`` (take a present key's entry out) and the rest of the
    protocol.
    """

    __slots__ = ("_index",)

    def __init__(self, tie: TieKey | None) -> None:
        super().__init__(tie)
        self._index: dict[K, E] = {}

    def _delete(self, entry: E) -> None:
        raise NotImplementedError

    def discard(self, key: K) -> None:
        """Remove ``key`` whatever its priority; no error if it is absent.

        Complexity: O(log n).
        """
        entry = self._index.get(key)
        if entry is not None:
            self._delete(entry)

    def count(self, key: K) -> P | int:
        """The priority of ``key``, or ``0`` if it is absent (like ``Counter``).

        Complexity: O(1).
        """
        entry = self._index.get(key)
        return 0 if entry is None else entry.prio

    def items(self) -> Iterator[tuple[K, P]]:
        """Every ``(key, priority)``, in no particular order.

        Complexity: O(1) per item.
        """
        for entry in self._index.values():
            yield entry.key, entry.prio

    def __len__(self) -> int:
        """The number of keys. Complexity: O(1)."""
        return len(self._index)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is present. Complexity: O(1)."""
        return key in self._index

    def __iter__(self) -> Iterator[K]:
        """Every key, in no particular order. Complexity: O(1) per key."""
        return iter(self._index)


class BinaryHeap(IndexedMultiset[K, P, E]):
    """An :class:`IndexedMultiset` whose entries form a binary max-heap under "ranks before".

    Subclasses implement ``_first()`` (the root entry, or None if empty),
    ``_delete(entry)`` and ``_walk(n)`` (the ``n`` best items, by a best-first
    walk of their own shape), and add to ``sifts`` the entries their sifts
    move one level.
    """

    __slots__ = ("sifts",)

    def __init__(self, tie: TieKey | None) -> None:
        super().__init__(tie)
        #: Entries moved one level by sifting (a machine-independent cost).
        self.sifts = 0

    def _first(self) -> E | None:
        raise NotImplementedError

    def _walk(self, n: int) -> list[tuple[K, P]]:
        raise NotImplementedError

    def top(self) -> tuple[K, P]:
        """The ``(key, priority)`` with the largest priority; EmptyError if empty.

        Complexity: O(1).
        """
        first = self._first()
        if first is None:
            raise empty_error("top")
        return first.key, first.prio

    def pop(self) -> tuple[K, P]:
        """Remove and return ``top()``; EmptyError if empty.

        Complexity: O(log n).
        """
        first = self._first()
        if first is None:
            raise empty_error("pop")
        self._delete(first)
        return first.key, first.prio

    def most_common(self, n: int | None = None) -> list[tuple[K, P]]:
        """The ``n`` largest items (all if ``None``), largest first, ties by tie key.

        With ``order="min"``: the ``n`` smallest, smallest first. Small ``n``
        walks the heap best-first (a frontier of candidates); large ``n`` sorts
        everything. ``n < 0`` raises ValueError.

        Complexity: O(n log n) for the n returned (the walk); when ``n`` is
        None or at least a quarter of the size, one sort, O(size log size),
        which is then O(n log n) too.
        """
        check_most_common_n(n)
        index = self._index
        if n is None or 4 * n >= len(index):
            order: Order = "min" if self._min else "max"
            return rank_sorted(((e.key, e.prio, e.tie) for e in index.values()), order)[:n]
        return self._walk(n)
