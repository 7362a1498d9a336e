"""``Batched``: a :class:`Multiset` wrapper that nets ``add``/``remove`` calls per key.

A BPE merge changes the counts of the pairs around every occurrence it
rewrites, often the same pair up and down many times, and only then asks for
the next ``top()``. ``Batched(inner)`` records those ``add``/``remove`` calls
as one net integer delta per key and applies them to ``inner`` (any
Multiset) when a query needs the whole multiset: ``top``, ``pop``,
``most_common``, ``items``, ``len``, ``iter``. A key whose deltas cancel out
costs nothing at that flush.

What stays eager:

* ``remove`` is validated at call time against ``inner.count(key)`` plus the
  pending delta, so removing more than is present raises
  :class:`~bpeds.errors.PreconditionError` immediately, exactly like the
  unbatched structure.
* ``count`` and ``in`` combine the inner value and the pending delta of that
  one key; they do not flush.
* ``update`` and ``discard`` act on ``inner`` directly and drop that key's
  pending delta; ``add(key, 0)`` applies that key's delta first. None of
  them flushes other keys.

Presence. A key removed down to 0 leaves; ``add`` never makes a key leave.
So when a pending key's effective count is 0, it is absent exactly when
its last zero was reached by a ``remove``; those keys are kept in a small
set (``_zeroed``).

Not handled: ``add`` on a key whose priority does not support ``+ int``
(say a tuple set by ``update``) raises TypeError at the next flush instead
of at the call; that key's delta is then dropped and the other keys are
still applied or kept pending. Float priorities changed by ``add``/``remove``
get one rounding for the net delta instead of one per call.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterator
from typing import Any, Generic, TypeVar

from bpeds.errors import InvariantError
from bpeds.structures.multiset import (
    count_error,
    remove_absent_error,
    remove_too_many_error,
)
from bpeds.structures.protocols import Multiset

__all__ = ["Batched"]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")


class Batched(Generic[K, P]):
    """Wrap any Multiset; net ``add``/``remove`` per key and apply them when a query needs them.

    Counters: ``flushes`` (flushes that had work), ``applied`` (inner calls made
    by flushes), ``netted`` (pending keys whose deltas cancelled: no inner call).

    >>> from bpeds.structures.heapykiyay import HeapyKiYay
    >>> b = Batched(HeapyKiYay({"ab": 5, "bc": 4}))
    >>> b.remove("ab"); b.remove("ab"); b.add("bc"); b.add("ab")
    >>> b.count("ab"), len(b._pending)       # answered without flushing
    (4, 2)
    >>> b.top()                               # flushes: 2 inner calls for 4 changes
    ('bc', 5)
    >>> b.applied, b.netted
    (2, 0)
    >>> b.remove("zz")
    Traceback (most recent call last):
    ...
    bpeds.errors.PreconditionError: remove('zz'): key is not present; use discard() to ignore that
    """

    __slots__ = ("_count", "_inner", "_pending", "_zeroed", "applied", "flushes", "netted")

    def __init__(self, inner: Multiset[K, P]) -> None:
        """Wrap ``inner``; its ties, priorities and complexity stay its own.

        Complexity: O(1).
        """
        if not isinstance(inner, Multiset):
            raise TypeError(
                f"Batched wraps a Multiset (add/remove/update/top/...), got {type(inner).__name__}"
            )
        self._inner: Multiset[K, P] = inner
        self._count = inner.count  # bound once: remove() calls it every time
        self._pending: dict[K, int] = {}
        self._zeroed: set[K] = set()
        #: Flushes that found pending work.
        self.flushes = 0
        #: Calls made on the inner multiset by flushes.
        self.applied = 0
        #: Pending keys whose deltas cancelled out (no inner call at flush).
        self.netted = 0

    @property
    def inner(self) -> Multiset[K, P]:
        """The wrapped multiset (flush first if you read it directly). Complexity: O(1)."""
        return self._inner

    # -- applying pending deltas ----------------------------------------------------------------

    def _apply(self, key: K, delta: int) -> bool:
        """Apply one key's net ``delta`` to the inner multiset; False if nothing to do."""
        inner = self._inner
        zeroed = self._zeroed
        if zeroed and key in zeroed:
            # Removed down to 0 at some point: absent again iff the net value is 0.
            current: Any = self._count(key)
            value = current + delta
            if value == 0:
                inner.discard(key)
            else:
                inner.update(key, value)
        elif delta > 0:
            inner.add(key, delta)
        elif delta:
            # A net removal that was validated call by call: the result is > 0 here.
            inner.remove(key, -delta)
        else:
            return False
        return True

    def flush(self) -> None:
        """Apply every pending delta to the inner multiset now: one inner call per key.

        Queries call this themselves. If an inner call raises, that key's
        delta is dropped, the keys not yet applied stay pending, and the error
        propagates.

        Complexity: O(k * inner op) for k pending keys; O(1) for keys that netted out.
        """
        pending = self._pending
        if not pending:
            return
        inner = self._inner
        add = inner.add
        remove = inner.remove
        zeroed = self._zeroed
        applied = 0
        done = 0
        try:
            for key, delta in pending.items():
                if zeroed and key in zeroed:
                    if self._apply(key, delta):
                        applied += 1
                elif delta > 0:
                    add(key, delta)
                    applied += 1
                elif delta:
                    remove(key, -delta)
                    applied += 1
                done += 1
        except BaseException:
            rest = list(pending.items())[done + 1 :]
            pending.clear()
            pending.update(rest)
            if zeroed:
                zeroed.intersection_update(pending)
            raise
        finally:
            self.flushes += 1
            self.applied += applied
            self.netted += done - applied
        pending.clear()
        zeroed.clear()

    def _flush_key(self, key: K) -> None:
        delta = self._pending.pop(key, None)
        if delta is not None:
            try:
                self._apply(key, delta)
            finally:
                self._zeroed.discard(key)

    # -- the Multiset protocol ------------------------------------------------------------------

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (an absent key starts at 0); deferred.

        ``n == 0`` inserts an absent key with priority 0 (applied at once);
        ``n < 0`` raises ValueError, an ``n`` that is not an ``int`` TypeError.

        Complexity: O(1).
        """
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        if n:
            pending = self._pending
            pending[key] = pending.get(key, 0) + n
            return
        self._flush_key(key)
        self._inner.add(key, 0)

    def remove(self, key: K, n: int = 1) -> None:
        """Decrease ``key``'s priority by ``n`` (deferred); the key leaves when it reaches 0.

        Validated now: raises :class:`~bpeds.errors.PreconditionError` (a
        ValueError) if the key is absent or its count is smaller than ``n``;
        ValueError if ``n < 0``.

        Complexity: O(1) plus one ``inner.count``.
        """
        if type(n) is not int or n < 0:
            raise count_error("remove", n)
        pending = self._pending
        delta = pending.get(key, 0)
        current: Any = self._count(key)
        value = current + delta
        if value < n:
            if key in self:
                raise remove_too_many_error(key, value, n)
            raise remove_absent_error(key)
        if not value and key not in self:  # value == n == 0
            raise remove_absent_error(key)
        pending[key] = delta - n
        if value == n:
            self._zeroed.add(key)

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority on the inner multiset now, dropping its pending delta.

        If the inner update raises, the pending delta is kept.

        Complexity: one inner ``update``.
        """
        self._inner.update(key, priority)
        if self._pending.pop(key, None) is not None:
            self._zeroed.discard(key)

    def discard(self, key: K) -> None:
        """Remove ``key`` whatever its priority (and its pending delta); no error if absent.

        Complexity: one inner ``discard``.
        """
        self._inner.discard(key)
        if self._pending.pop(key, None) is not None:
            self._zeroed.discard(key)

    def count(self, key: K) -> P | int:
        """The priority of ``key`` including its pending delta, or ``0`` if absent.

        Complexity: O(1) plus one ``inner.count``; no flush.
        """
        delta = self._pending.get(key)
        current: Any = self._count(key)
        if delta is None:
            return current  # type: ignore[no-any-return]
        value = current + delta
        if value == 0 and key in self._zeroed:
            return 0
        return value  # type: ignore[no-any-return]

    def top(self) -> tuple[K, P]:
        """Flush, then the inner ``top()``; EmptyError if empty.

        Complexity: a flush plus the inner ``top``.
        """
        if self._pending:
            self.flush()
        return self._inner.top()

    def pop(self) -> tuple[K, P]:
        """Flush, then the inner ``pop()``; EmptyError if empty.

        Complexity: a flush plus the inner ``pop``.
        """
        if self._pending:
            self.flush()
        return self._inner.pop()

    def most_common(self, n: int | None = None) -> list[tuple[K, P]]:
        """Flush, then the inner ``most_common(n)``.

        Complexity: a flush plus the inner ``most_common``.
        """
        if self._pending:
            self.flush()
        return self._inner.most_common(n)

    def items(self) -> Iterator[tuple[K, P]]:
        """Flush, then every ``(key, priority)``, in no particular order.

        Complexity: a flush plus O(1) per item.
        """
        if self._pending:
            self.flush()
        return self._inner.items()

    def check(self) -> None:
        """Verify every invariant in O(n); raise InvariantError with the state if broken.

        Does not flush. Checked: pending deltas are ints; every zeroed key is
        pending and its effective count is >= 0 (after a key was removed down
        to 0 only adds and valid removes follow); the counters are sane; then
        the inner multiset's own ``check()``.

        Complexity: O(pending) plus the inner ``check()``.
        """
        pending = self._pending
        zeroed = self._zeroed
        inner = self._inner
        for name in ("flushes", "applied", "netted"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise InvariantError(f"counter {name} is {value!r}", self._dump())
        for key, delta in pending.items():
            if not isinstance(delta, int):
                raise InvariantError(f"pending delta of {key!r} is {delta!r}", self._dump())
        for key in zeroed:
            if key not in pending:
                raise InvariantError(f"zeroed key {key!r} has no pending delta", self._dump())
            current: Any = inner.count(key)
            if current + pending[key] < 0:
                raise InvariantError(
                    f"zeroed key {key!r} has effective count {current + pending[key]!r}",
                    self._dump(),
                )
        inner.check()

    def _dump(self) -> dict[str, object]:
        return {
            "pending": dict(list(self._pending.items())[:32]),
            "pending_size": len(self._pending),
            "zeroed": list(self._zeroed)[:32],
            "flushes": self.flushes,
            "applied": self.applied,
            "netted": self.netted,
            "inner": type(self._inner).__name__,
        }

    def __len__(self) -> int:
        """Flush, then the number of keys. Complexity: a flush plus O(1)."""
        if self._pending:
            self.flush()
        return len(self._inner)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is present, counting its pending delta; no flush.

        Complexity: O(1) plus one inner lookup.
        """
        pending = self._pending
        if key not in pending:
            return key in self._inner
        delta = pending[key]
        current: Any = self._count(key)
        if current + delta != 0:
            return True
        return key not in self._zeroed

    def __iter__(self) -> Iterator[K]:
        """Flush, then every key, in no particular order. Complexity: a flush plus O(1) per key."""
        if self._pending:
            self.flush()
        return iter(self._inner)

    def __repr__(self) -> str:
        """``Batched(<inner repr>)`` after a flush. Complexity: the inner repr."""
        if self._pending:
            self.flush()
        return f"{type(self).__name__}({self._inner!r})"
