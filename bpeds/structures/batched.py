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
  pending delta. Neither flushes other keys.

Presence. ``add`` and ``remove`` follow the protocol's rule (a key they
bring to exactly 0 leaves), so a key with a pending delta is present exactly
when its effective count (inner count plus delta) is not 0; a flush applies
the net delta with one inner ``add`` or ``remove``, whose own rule gives the
same presence, or, for a delta that netted to 0 on a key the inner multiset
holds at 0, one ``discard``.

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
from bpeds.structures.protocols import Multiset, Order

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

    __slots__ = ("_count", "_inner", "_pending", "applied", "flushes", "netted")

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
        #: Flushes that found pending work.
        self.flushes = 0
        #: Calls made on the inner multiset by flushes.
        self.applied = 0
        #: Pending keys whose deltas cancelled out (no inner call at flush).
        self.netted = 0

    @property
    def order(self) -> Order:
        """The inner multiset's order: ``"max"`` or ``"min"``. Complexity: O(1)."""
        order: Order = getattr(self._inner, "order", "max")
        return order

    @property
    def inner(self) -> Multiset[K, P]:
        """The wrapped multiset (flush first if you read it directly). Complexity: O(1)."""
        return self._inner

    # -- applying pending deltas ----------------------------------------------------------------

    def _apply(self, key: K, delta: int) -> bool:
        """Apply one key's net ``delta`` to the inner multiset; False if nothing to do."""
        inner = self._inner
        if delta > 0:
            inner.add(key, delta)
        elif delta:
            # A net removal that was validated call by call: the result is >= 0 here.
            inner.remove(key, -delta)
        elif key in inner and self._count(key) == 0:
            # Netted out on a key held at 0 (by update): the last add/remove left it at 0.
            inner.discard(key)
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
        applied = 0
        done = 0
        try:
            for key, delta in pending.items():
                if delta > 0:
                    add(key, delta)
                    applied += 1
                elif delta:
                    remove(key, -delta)
                    applied += 1
                elif self._apply(key, 0):
                    applied += 1
                done += 1
        except BaseException:
            rest = list(pending.items())[done + 1 :]
            pending.clear()
            pending.update(rest)
            raise
        finally:
            self.flushes += 1
            self.applied += applied
            self.netted += done - applied
        pending.clear()

    # -- the Multiset protocol ------------------------------------------------------------------

    def add(self, key: K, n: int = 1) -> None:
        """Increase ``key``'s priority by ``n`` (an absent key starts at 0); deferred.

        A result of exactly 0 removes the key (``add(k, 0)`` leaves an absent
        key absent and takes out a key held at 0); ``n < 0`` raises ValueError, an
        ``n`` that is not an ``int`` TypeError.

        Complexity: O(1).
        """
        if type(n) is not int or n < 0:
            raise count_error("add", n)
        pending = self._pending
        pending[key] = pending.get(key, 0) + n

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
        if value < n or (not value and key not in self):
            if key in self:
                raise remove_too_many_error(key, value, n)
            raise remove_absent_error(key)
        pending[key] = delta - n

    def update(self, key: K, priority: P) -> None:
        """Set ``key``'s priority on the inner multiset now, dropping its pending delta.

        If the inner update raises, the pending delta is kept.

        Complexity: one inner ``update``.
        """
        self._inner.update(key, priority)
        self._pending.pop(key, None)

    def discard(self, key: K) -> None:
        """Remove ``key`` whatever its priority (and its pending delta); no error if absent.

        Complexity: one inner ``discard``.
        """
        self._inner.discard(key)
        self._pending.pop(key, None)

    def count(self, key: K) -> P | int:
        """The priority of ``key`` including its pending delta, or ``0`` if absent.

        Complexity: O(1) plus one ``inner.count``; no flush.
        """
        delta = self._pending.get(key)
        current: Any = self._count(key)
        if delta is None:
            return current  # type: ignore[no-any-return]
        return current + delta  # type: ignore[no-any-return]

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

        Does not flush. Checked: pending deltas are ints; the counters are
        sane; then the inner multiset's own ``check()``.

        Complexity: O(pending) plus the inner ``check()``.
        """
        pending = self._pending
        for name in ("flushes", "applied", "netted"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise InvariantError(f"counter {name} is {value!r}", self._dump())
        for key, delta in pending.items():
            if type(delta) is not int:
                raise InvariantError(f"pending delta of {key!r} is {delta!r}", self._dump())
        self._inner.check()

    def _dump(self) -> dict[str, object]:
        return {
            "pending": dict(list(self._pending.items())[:32]),
            "pending_size": len(self._pending),
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
        current: Any = self._count(key)
        return bool(current + pending[key] != 0)

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
