"""Protocols shared by the structures and the merge driver.

A *priority* is any value that supports ``<`` and ``==`` against the other
priorities of the same multiset: an ``int`` count, a ``float`` score, or a
tuple. ``add``/``remove`` additionally need ``priority + int`` (counts).

Tie rule. Among keys of equal priority, every multiset returns the key whose
*tie key* is **smallest**. The tie key of ``key`` is ``tie(key)`` for the
``tie`` callable given to the constructor, or ``key`` itself when none is
given. It is computed once, when the key enters the multiset, so it must not
change while the key is present. Heap shape, insertion order and hashing never
decide a tie: two multisets fed the same operations return the same ``top()``.
The tie function must be injective on the keys present at the same time.

Zero and negative priorities, one rule for every implementation and the
model. ``update`` sets any priority (zero and negative included) and never
removes a key. The counting calls ``add`` and ``remove`` treat a count of 0 as
absence: a key whose priority they bring to exactly 0 leaves (``remove(k, 3)``
on a count of 3; ``add(k, 3)`` after ``update(k, -3)``; ``add(k, 0)`` or
``remove(k, 0)`` on a key at 0), and ``add(k, 0)`` on an absent key leaves it
absent. So after any ``add``/``remove``, ``k in m`` is ``m.count(k) != 0``.
``remove`` never goes below 0 (it raises PreconditionError instead), and
``count`` answers 0 for an absent key, like ``collections.Counter``.
``discard`` and ``pop`` remove a key whatever its priority. ``n < 0`` is a
ValueError for ``add``, ``remove`` and ``most_common``.

Order. Every multiset is a max-heap by default: ``top()`` is the largest
priority. The heaps also take ``order="min"`` (smallest priority first, for
Dijkstra-style use and for tuple priorities that cannot be negated); the tie
rule is the same in both orders (smallest tie key first).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any, Literal, Protocol, TypeVar, runtime_checkable

__all__ = ["CompactionPolicy", "CompactionStats", "Multiset", "Order", "TieKey"]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")
KC = TypeVar("KC", bound=Hashable, contravariant=True)

#: A function from a key to the value that orders keys of equal priority
#: (smallest first).
TieKey = Callable[[Any], Any]

#: Which priority comes first: ``"max"`` (the default) or ``"min"``.
Order = Literal["max", "min"]


@runtime_checkable
class Multiset(Protocol[K, P]):
    """A map from keys to priorities that answers "which key is largest?".

    Counter vocabulary (``add``/``remove``/``count``/``most_common``) for the
    counting use, heap vocabulary (``update``/``top``/``pop``) for scores.
    ``top()`` is the key with the largest priority, ties broken by the
    smallest tie key (see the module docstring).
    """

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (an absent key starts at 0).

        A result of exactly 0 removes the key (so ``add(k, 0)`` leaves an absent
        key absent); ``n < 0`` raises ValueError; an ``n`` that is not an ``int``
        raises TypeError, with nothing changed.
        """
        ...

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n``; the key leaves when it reaches 0.

        Raises :class:`~bpeds.errors.PreconditionError` (a ValueError) if the key
        is absent or its count is smaller than ``n``; ValueError if ``n < 0``.
        """
        ...

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority (inserting it if absent); any value, 0 included, keeps the key.

        A priority without a total order (NaN) raises ValueError with nothing changed.
        """
        ...

    def discard(self, key: K) -> None:
        """Remove ``key`` whatever its priority; no error if it is absent."""
        ...

    def count(self, key: K) -> P | int:
        """The priority of ``key``, or ``0`` if it is absent (like ``Counter``)."""
        ...

    def top(self) -> tuple[K, P]:
        """The ``(key, priority)`` with the largest priority (smallest with ``order="min"``).

        Raises :class:`~bpeds.errors.EmptyError` (an IndexError) if empty.
        """
        ...

    def pop(self) -> tuple[K, P]:
        """Remove and return ``top()``; EmptyError if empty."""
        ...

    def most_common(self, n: int | None = None) -> list[tuple[K, P]]:
        """The first ``n`` items in ``top()`` order (all if ``None``), ties by tie key."""
        ...

    def items(self) -> Iterator[tuple[K, P]]:
        """Every ``(key, priority)``, in no particular order."""
        ...

    def check(self) -> None:
        """Verify every invariant in O(n); raise InvariantError with the state if broken."""
        ...

    def __len__(self) -> int: ...

    def __contains__(self, key: object) -> bool: ...

    def __iter__(self) -> Iterator[K]: ...


class CompactionStats:
    """Counters a compaction policy keeps: they hold on a noisy machine."""

    __slots__ = ("compactions", "entries_dropped", "entries_scanned")

    def __init__(self) -> None:
        self.entries_scanned = 0
        self.compactions = 0
        self.entries_dropped = 0

    def __repr__(self) -> str:
        return (
            f"CompactionStats(entries_scanned={self.entries_scanned}, "
            f"compactions={self.compactions}, entries_dropped={self.entries_dropped})"
        )


class CompactionPolicy(Protocol[KC]):
    """Decides when a :class:`~bpeds.structures.LazyIndex` rewrites a key's list.

    The index calls ``after_read`` each time a read of ``key`` has finished
    (``scanned`` entries looked at, ``live`` of them valid, the list being
    ``size`` long) and ``after_append`` after each append. When either returns
    True the index drops the stale and duplicate entries of that key and then
    calls ``compacted(key, before, after)``.

    ``live`` is the number of entries the read yielded. The index updates
    ``stats`` (``entries_scanned`` when a read finishes, ``compactions`` and
    ``entries_dropped`` on each compaction); a policy reads it and must
    neither edit nor replace it. A policy instance serves one index. Optional
    members, used when present: ``append_floor: int`` (``after_append`` is
    only called once a list is at least that long), ``forget(key)`` (the key
    left the index), ``check()`` (verify the policy's own state, raising
    InvariantError).
    """

    stats: CompactionStats

    def after_read(self, key: KC, scanned: int, live: int, size: int) -> bool: ...

    def after_append(self, key: KC, size: int) -> bool: ...

    def compacted(self, key: KC, before: int, after: int) -> None: ...
