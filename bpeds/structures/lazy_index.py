"""A lazy, append-only ``key -> list of values`` index validated on read.

This is the pair -> pre-token-types index of a type-level BPE trainer: when a
merge creates a pair in a type, the trainer
appends the type id to that pair's list and never removes it. Entries that went
stale (the type lost the pair) or were appended twice stay in the list; a read
filters them with the caller's predicate ``is_live(key, value)``. A pluggable
:mod:`compaction policy <bpeds.structures.compaction>` decides when a key's
list is rewritten to its live, unique entries.

The contract with the predicate:

* it is pure and cheap, and does not touch the index;
* once ``is_live(key, v)`` is False, it may become True again only together
  with a new ``add(key, v)`` (a compaction may drop a dead entry at any time,
  so a revived value that was not re-added may be lost). The BPE trainer
  satisfies this: a type regains a pair only through a merge, which appends.

Not handled: removal of single entries (there is none; let them go stale),
thread safety, and reads that mutate the index from inside the predicate.
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Hashable, Iterable, Iterator, KeysView
from itertools import islice
from operator import length_hint
from typing import Any, Generic, TypeVar

from bpeds.errors import InvariantError, PreconditionError
from bpeds.structures.compaction import NeverCompact
from bpeds.structures.protocols import CompactionPolicy, CompactionStats

__all__ = ["LazyIndex"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V", bound=Hashable)

_POLICY_MEMBERS = ("after_read", "after_append", "compacted", "stats")


def _nothing() -> Generator[Any, None, None]:
    """The read of an absent key: a generator, so ``close()`` works, that yields nothing."""
    yield from ()


class LazyIndex(Generic[K, V]):
    """A ``key -> append-only list of values`` index that filters stale entries on read.

    ``live(key)`` yields the entries of ``key`` that ``is_live(key, value)``
    accepts at the moment they are yielded, in the order they are stored
    (first-append order, minus what compactions dropped). ``add``/``extend``
    only append. The ``policy`` (default :class:`NeverCompact`) is asked after
    every finished read and (past its ``append_floor``) every append whether
    the key's list should be rewritten to its live unique entries.

    >>> present = {("a", "b"): {0, 2}}
    >>> def is_live(pair, type_id):
    ...     return type_id in present.get(pair, ())
    >>> index = LazyIndex(is_live)
    >>> index.extend(("a", "b"), [0, 1, 2, 0])
    >>> list(index.live(("a", "b")))
    [0, 2]
    >>> list(index.live(("a", "b"), unique=False))
    [0, 2, 0]
    >>> index.raw(("a", "b")), index.total_entries
    ([0, 1, 2, 0], 4)
    >>> index.compact(("a", "b"))
    2
    >>> index.raw(("a", "b")), index.stats
    ([0, 2], CompactionStats(entries_scanned=8, compactions=1, entries_dropped=2))
    """

    __slots__ = (
        "_after_append",
        "_after_read",
        "_append_floor",
        "_base",
        "_compactions",
        "_dropped",
        "_forget",
        "_is_live",
        "_lists",
        "_policy",
        "_policy_check",
        "_scanned",
        "_stats",
        "_total",
    )

    def __init__(
        self,
        is_live: Callable[[K, V], bool],
        policy: CompactionPolicy[K] | None = None,
    ) -> None:
        """Create an empty index reading through ``is_live`` and compacting per ``policy``.

        ``policy=None`` means :class:`NeverCompact`. A policy instance must
        serve a single index. Raises TypeError if ``is_live`` is not callable
        or ``policy`` lacks a protocol member.

        Complexity: O(1).
        """
        if not callable(is_live):
            raise TypeError(f"is_live must be callable, got {type(is_live).__name__}")
        if policy is None:
            policy = NeverCompact()
        missing = [name for name in _POLICY_MEMBERS if not hasattr(policy, name)]
        if missing:
            raise TypeError(
                f"policy {policy!r} does not implement CompactionPolicy: missing {missing}"
            )
        stats = policy.stats
        if not isinstance(stats, CompactionStats):
            raise TypeError(f"policy.stats must be a CompactionStats, got {type(stats).__name__}")
        floor = getattr(policy, "append_floor", 1)
        if isinstance(floor, bool) or not isinstance(floor, int):
            raise TypeError(f"policy.append_floor must be an int, got {type(floor).__name__}")
        self._is_live = is_live
        self._policy = policy
        self._stats = stats
        self._after_read = policy.after_read
        self._after_append = policy.after_append
        self._append_floor = max(floor, 1)
        self._forget: Callable[[K], object] | None = getattr(policy, "forget", None)
        self._policy_check: Callable[[], object] | None = getattr(policy, "check", None)
        self._lists: dict[K, list[V]] = {}
        self._total = 0
        # What this index did, to check the policy's stats against (they may
        # not start at zero if the policy was used before).
        self._base = (stats.entries_scanned, stats.compactions, stats.entries_dropped)
        self._scanned = 0
        self._compactions = 0
        self._dropped = 0

    def __repr__(self) -> str:
        return f"LazyIndex(keys={len(self._lists)}, entries={self._total}, policy={self._policy!r})"

    # ------------------------------------------------------------------ appends

    def add(self, key: K, value: V) -> None:
        """Append ``value`` to ``key``'s list (creating it), then consult the policy.

        No deduplication: appending a value already present stores it twice
        (reads with ``unique=True`` and compaction remove duplicates).
        Raises TypeError if ``key`` is unhashable (nothing is stored).

        Complexity: O(1) amortised, plus ``after_append`` once the list is at
        least the policy's ``append_floor`` long, plus a compaction (O(size)
        predicate calls) when the policy asks for one.
        """
        lists = self._lists
        lst = lists.get(key)
        if lst is None:
            lists[key] = [value]
            size = 1
        else:
            lst.append(value)
            size = len(lst)
        self._total += 1
        if size >= self._append_floor and self._after_append(key, size):
            self.compact(key)

    def extend(self, key: K, values: Iterable[V]) -> None:
        """Append every value of ``values`` to ``key``'s list, then consult the policy once.

        Atomic: ``values`` is materialised first, so an iterable that raises
        half-way leaves the index unchanged. An empty ``values`` does nothing
        (no empty list is created, no policy call).

        Complexity: O(len(values)) amortised, plus one ``after_append`` and at
        most one compaction, as for :meth:`add`.
        """
        # (type() first: isinstance against a union costs more than the rest of a call.)
        if type(values) is not list and not isinstance(values, tuple):
            values = list(values)
        if not values:
            return
        lists = self._lists
        lst = lists.get(key)
        if lst is None:
            lst = lists[key] = list(values)
        else:
            lst.extend(values)
        self._total += len(values)
        size = len(lst)
        if size >= self._append_floor and self._after_append(key, size):
            self.compact(key)

    def load(self, key: K, values: Iterable[V]) -> None:
        """Start ``key``'s list with ``values``, all live now, as if just compacted.

        For building an index in bulk from data known to be current (a trainer's
        first pass over its corpus): the list is stored as given (duplicates
        kept) and the policy is told ``compacted(key, n, n)``, so a growth rule
        counts from here instead of compacting a list that has nothing stale.
        No compaction is counted in ``stats``. An empty ``values`` does nothing.
        Raises :class:`~bpeds.errors.PreconditionError` (a ValueError) if
        ``key`` already has a list (use :meth:`extend`).

        Complexity: O(len(values)).
        """
        lists = self._lists
        if key in lists:
            raise PreconditionError(f"load({key!r}): the key already has entries; use extend()")
        lst = list(values)
        if not lst:
            return
        lists[key] = lst
        self._total += len(lst)
        self._policy.compacted(key, len(lst), len(lst))

    # -------------------------------------------------------------------- reads

    def live(self, key: K, *, unique: bool = True) -> Generator[V, None, None]:
        """Yield the entries of ``key`` that are live when yielded, in stored order.

        Each entry's ``is_live(key, value)`` is evaluated right before it would
        be yielded, so a caller that kills an entry (the current or a later
        one) while processing is handled. With ``unique=True`` each value is
        yielded at most once (a value already yielded is skipped without a
        predicate call); ``unique=False`` skips the bookkeeping (the BPE
        trainer's predicate turns false once a type is processed, which
        already hides duplicates).

        The read walks a snapshot taken **when ``live`` is called**: the first
        ``size(key)`` entries of the list at that moment. Entries appended
        later (even during the iteration) are not visited; a compaction or
        ``discard`` of the key during the read does not disturb it (lists are
        replaced, never edited in place). An absent key yields nothing.

        When the read finishes -- exhausted, closed, or garbage-collected
        after being started -- ``stats.entries_scanned`` grows by the entries
        looked at and, if the key is still present, the policy's
        ``after_read(key, scanned, yielded, size)`` is called; when it returns
        True the key is compacted (predicate re-evaluated then; entries
        appended during the read are kept if live). To end a read early, call
        the generator's ``close()`` (or break out of the loop and drop it). A
        read that is never started does not count. If ``is_live`` raises, the exception
        propagates, the scanned entries are counted, and the policy is not
        consulted.

        Complexity: O(size) predicate calls for a full read (O(1) per entry),
        O(1) extra memory, or O(distinct values) with ``unique=True``.
        """
        lst = self._lists.get(key)
        if lst is None:
            return _nothing()
        return self._read(key, lst, len(lst), unique)

    def _read(self, key: K, lst: list[V], n: int, unique: bool) -> Generator[V, None, None]:
        is_live = self._is_live
        # ``it`` is a list iterator: its position (len(lst) - length_hint) is the
        # number of entries scanned, without a counter in the loop. islice never
        # pulls more than ``n`` items from it.
        it = iter(lst)
        yielded = 0
        try:
            if unique:
                seen: set[V] = set()
                for value in islice(it, n):
                    if value not in seen and is_live(key, value):
                        seen.add(value)
                        yielded += 1
                        yield value
            else:
                for value in islice(it, n):
                    if is_live(key, value):
                        yielded += 1
                        yield value
        except GeneratorExit:
            self._end_read(key, len(lst) - length_hint(it), yielded)
            raise
        except BaseException:
            scanned = len(lst) - length_hint(it)
            self._stats.entries_scanned += scanned
            self._scanned += scanned
            raise
        self._end_read(key, n, yielded)

    def _end_read(self, key: K, scanned: int, yielded: int) -> None:
        self._stats.entries_scanned += scanned
        self._scanned += scanned
        lst = self._lists.get(key)
        if lst is not None and self._after_read(key, scanned, yielded, len(lst)):
            self.compact(key)

    def raw(self, key: K) -> list[V]:
        """A copy of ``key``'s stored entries, stale and duplicate ones included.

        ``[]`` for an absent key.

        Complexity: O(size).
        """
        lst = self._lists.get(key)
        return [] if lst is None else list(lst)

    def take(self, key: K) -> list[V]:
        """Remove ``key`` and return its stored list itself (stale and duplicate entries
        included); ``[]`` for an absent key.

        :meth:`raw` then :meth:`discard` in one step, without the copy: for a
        caller that is about to make every entry of the key stale (a merge of
        that very pair). The policy's optional ``forget(key)`` is called.

        Complexity: O(1).
        """
        lst = self._lists.pop(key, None)
        if lst is None:
            return []
        self._total -= len(lst)
        if self._forget is not None:
            self._forget(key)
        return lst

    def size(self, key: K) -> int:
        """The number of stored entries of ``key`` (stale included), 0 if absent.

        Complexity: O(1).
        """
        lst = self._lists.get(key)
        return 0 if lst is None else len(lst)

    def keys(self) -> KeysView[K]:
        """A live view of the keys that have a (non-empty) list.

        Complexity: O(1) to create; iterating is O(number of keys).
        """
        return self._lists.keys()

    def __iter__(self) -> Iterator[K]:
        """Iterate over the keys, like ``keys()``.

        Complexity: O(number of keys) for the whole iteration.
        """
        return iter(self._lists)

    def __len__(self) -> int:
        """The number of keys.

        Complexity: O(1).
        """
        return len(self._lists)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` has a list (live entries or not).

        Complexity: O(1).
        """
        try:
            return key in self._lists
        except TypeError:  # unhashable: cannot be a key
            return False

    @property
    def total_entries(self) -> int:
        """The sum of the lengths of all lists, stale entries included.

        Complexity: O(1).
        """
        return self._total

    @property
    def stats(self) -> CompactionStats:
        """The policy's counters: entries scanned, compactions, entries dropped.

        Complexity: O(1).
        """
        return self._stats

    @property
    def policy(self) -> CompactionPolicy[K]:
        """The compaction policy this index consults.

        Complexity: O(1).
        """
        return self._policy

    # -------------------------------------------------------------- maintenance

    def discard(self, key: K) -> None:
        """Remove ``key`` and all its entries; no error if it is absent.

        The policy's optional ``forget(key)`` is called. A read of the key in
        progress carries on over its snapshot.

        Complexity: O(1).
        """
        lst = self._lists.pop(key, None)
        if lst is not None:
            self._total -= len(lst)
            if self._forget is not None:
                self._forget(key)

    def compact(self, key: K) -> int:
        """Rewrite ``key``'s list to its live entries, each once, in stored order.

        The predicate is evaluated now, once per distinct value. A key left
        with no live entry is removed (and the policy's optional ``forget``
        called). Counts one compaction and the dropped entries in ``stats``
        and calls the policy's ``compacted(key, before, after)``. Returns the
        number of entries dropped; an absent key returns 0 and counts nothing.
        If ``is_live`` raises, the list is left untouched.

        Complexity: O(size) hashing plus one predicate call per distinct value.
        """
        lst = self._lists.get(key)
        if lst is None:
            return 0
        is_live = self._is_live
        kept = [value for value in dict.fromkeys(lst) if is_live(key, value)]
        before = len(lst)
        after = len(kept)
        dropped = before - after
        if after:
            self._lists[key] = kept
        else:
            del self._lists[key]
        self._total -= dropped
        stats = self._stats
        stats.compactions += 1
        stats.entries_dropped += dropped
        self._compactions += 1
        self._dropped += dropped
        self._policy.compacted(key, before, after)
        if not after and self._forget is not None:
            self._forget(key)
        return dropped

    def compact_all(self) -> int:
        """Compact every key (see :meth:`compact`); return the total entries dropped.

        Complexity: O(total_entries) hashing plus one predicate call per
        distinct (key, value).
        """
        return sum(self.compact(key) for key in list(self._lists))

    # -------------------------------------------------------------------- check

    def _dump(self) -> dict[str, Any]:
        return {
            "lists": {key: list(lst) for key, lst in self._lists.items()},
            "total": self._total,
            "stats": repr(self._stats),
            "own": (self._scanned, self._compactions, self._dropped),
            "base": self._base,
            "policy": repr(self._policy),
        }

    def check(self) -> None:
        """Verify every invariant; raise InvariantError with a state dump if one is broken.

        Checked: every stored list is a non-empty ``list``; ``total_entries``
        equals the sum of their lengths; the policy's stats are non-negative
        ints that advanced exactly by what this index did (so a policy that
        edits its own stats, or is shared between indices, is caught); a
        compaction count of zero implies nothing dropped; and the policy's own
        ``check()``, when it has one.

        Complexity: O(number of keys), plus the policy's check.
        """
        total = 0
        for key, lst in self._lists.items():
            if type(lst) is not list:
                raise InvariantError(f"list of {key!r} is a {type(lst).__name__}", self._dump())
            if not lst:
                raise InvariantError(f"empty list kept for {key!r}", self._dump())
            total += len(lst)
        if total != self._total:
            raise InvariantError(
                f"total_entries is {self._total} but the lists hold {total}", self._dump()
            )
        own = (self._scanned, self._compactions, self._dropped)
        if min(own) < 0 or (self._dropped > 0 and self._compactions == 0):
            raise InvariantError("index counters inconsistent", self._dump())
        stats = self._policy.stats
        if stats is not self._stats:
            raise InvariantError("the policy replaced its stats object", self._dump())
        names = ("entries_scanned", "compactions", "entries_dropped")
        for name, base, mine in zip(names, self._base, own, strict=True):
            value = getattr(stats, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise InvariantError(f"stats.{name} is {value!r}", self._dump())
            if value - base != mine:
                raise InvariantError(
                    f"stats.{name} advanced by {value - base} but this index counted {mine} "
                    "(policy shared, or stats edited outside the index?)",
                    self._dump(),
                )
        if self._policy_check is not None:
            self._policy_check()
