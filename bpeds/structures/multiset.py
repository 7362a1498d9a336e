"""Shared vocabulary of the :class:`~bpeds.structures.protocols.Multiset` implementations.

The implementations live in their own modules (:mod:`~bpeds.structures.heapy`,
:mod:`~bpeds.structures.heapykiyay`, :mod:`~bpeds.structures.batched`,
:mod:`~bpeds.structures.baselines`); this module holds what they share: the
ranking rule, argument checks and the error messages, so that every
implementation says the same thing for the same mistake.

Ranking. ``a`` *ranks before* ``b`` when ``b.priority < a.priority``, or when
neither priority is smaller than the other and ``a.tie < b.tie`` (the
smallest tie key wins). Priorities are compared with ``<`` only, and the tie
key is consulted only when the priorities are equal: never negated, never
packed into a tuple. The heaps inline this rule in their sift loops; it is
correct for priorities that are totally ordered by ``<`` (ints, floats
without NaN, tuples of those) and tie functions that are injective on the
keys present (the default, the key itself, is).

Sift direction. Every heap in bpeds names its sifts in the textbook sense:
``_sift_up`` moves an entry *towards the root*, ``_sift_down`` *away from
it*. (CPython's :mod:`heapq` uses the opposite names.)

Not handled here: priorities that cannot be compared with each other (mixing
``int`` and ``tuple``) make the comparison raise; see each class for what it
leaves behind in that case.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable
from typing import Any, Generic, TypeVar

from bpeds.errors import EmptyError, PreconditionError
from bpeds.structures.protocols import TieKey

__all__ = [
    "Ranked",
    "check_most_common_n",
    "empty_error",
    "negative_n_error",
    "rank_sorted",
    "ranks_before",
    "remove_absent_error",
    "remove_too_many_error",
    "resolve_tie",
]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")
T = TypeVar("T")


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


def rank_sorted(triples: Iterable[tuple[K, P, Any]]) -> list[tuple[K, P]]:
    """Sort ``(key, priority, tie)`` triples best first and drop the tie keys.

    Two stable sorts: by tie key ascending, then by priority descending
    (``reverse=True`` keeps equal priorities in their tie-key order), so no
    per-item wrapper or comparison function is needed.

    >>> rank_sorted([("a", 1, 9), ("b", 3, 0), ("c", 1, 2)])
    [('b', 3), ('c', 1), ('a', 1)]

    Complexity: O(n log n).
    """
    rows = list(triples)
    rows.sort(key=_tie_of)
    rows.sort(key=_prio_of, reverse=True)
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
