"""*Leap*: an append-only list whose nodes are also chained by value.

Every node sits on two doubly linked lists at once: the list of all nodes in
order (``prev``/``next``) and the chain of nodes holding the same value
(``vprev``/``vnext``), also in order. So besides the usual list operations, a
Leap answers in O(1) "first/last node with value x" and "next/previous node
with the same value as n", and iterates over the nodes of one value without
looking at the others.

The price is that nodes can only be *appended* (there is no insert), and
:meth:`Leap.set_value` may only move a node to the **end** of its new value's
chain: ``set_value(n, x)`` requires every node that already holds ``x`` to
come before ``n``. That is exactly what a left-to-right BPE merge does when
``x`` is a fresh token.

Not handled here: inserting in the middle, relabelling a node into the middle
of a chain, or any notion of pairs (an :class:`~bpeds.structures.indexed_list.
IndexedList` is the pair-indexed token list).
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from typing import Any, Generic, TypeVar

from bpeds.errors import InvariantError, PreconditionError

__all__ = ["Leap", "LeapNode"]

T = TypeVar("T", bound=Hashable)


class LeapNode(Generic[T]):
    """One node of a :class:`Leap`.

    ``val`` is its value, ``prev``/``next`` its neighbours in the list,
    ``vprev``/``vnext`` its neighbours on its value's chain, ``seq`` its append
    number (strictly increasing along the list and along every chain) and
    ``owner`` the Leap it lives in, or None once deleted. A deleted node keeps
    its forward links as they were when it died (running iterators resume from
    them); they mean nothing else. Treat every attribute as read-only.
    """

    __slots__ = ("next", "owner", "prev", "seq", "val", "vnext", "vprev")

    def __init__(
        self,
        val: T,
        prev: LeapNode[T] | None,
        vprev: LeapNode[T] | None,
        seq: int,
        owner: Leap[T] | None,
    ) -> None:
        self.val = val
        self.prev = prev
        self.next: LeapNode[T] | None = None
        self.vprev = vprev
        self.vnext: LeapNode[T] | None = None
        self.seq = seq
        self.owner = owner

    def __repr__(self) -> str:
        dead = "" if self.owner is not None else ", dead"
        return f"LeapNode(val={self.val!r}, seq={self.seq}{dead})"


class Leap(Generic[T]):
    """A list with O(1) jumps between nodes of equal value.

    >>> leap = Leap("abcab")
    >>> leap.values(), leap.count("a"), "z" in leap
    (['a', 'b', 'c', 'a', 'b'], 2, False)
    >>> a = leap.first("a")
    >>> leap.leap(a) is leap.last("a"), leap.next(a).val
    (True, 'b')
    >>> leap.set_value(a, "c")
    Traceback (most recent call last):
      ...
    bpeds.errors.PreconditionError: set_value(LeapNode(val='a', seq=0), 'c'): ...
    >>> leap.set_value(leap.last("b"), "c")     # every "c" comes before it: fine
    >>> leap.values(), [n.seq for n in leap.nodes("c")]
    (['a', 'b', 'c', 'a', 'c'], [2, 4])
    >>> leap.delete(a)
    >>> leap.head.val, leap.tail.val, len(leap)
    ('b', 'c', 4)
    >>> leap.check()
    """

    __slots__ = ("_count", "_first", "_head", "_last", "_len", "_seq", "_tail")

    def __init__(self, values: Iterable[T] = ()) -> None:
        """Build a Leap holding ``values`` in order.

        Complexity: O(n).
        """
        self._head: LeapNode[T] | None = None
        self._tail: LeapNode[T] | None = None
        self._first: dict[T, LeapNode[T]] = {}
        self._last: dict[T, LeapNode[T]] = {}
        self._count: dict[T, int] = {}
        self._len = 0
        self._seq = 0
        append = self.append
        for value in values:
            append(value)

    # -- reading ---------------------------------------------------------------------

    @property
    def head(self) -> LeapNode[T] | None:
        """The first node, or None if the Leap is empty.

        Complexity: O(1).
        """
        return self._head

    @property
    def tail(self) -> LeapNode[T] | None:
        """The last node, or None if the Leap is empty.

        Complexity: O(1).
        """
        return self._tail

    def __len__(self) -> int:
        """The number of nodes.

        Complexity: O(1).
        """
        return self._len

    def __contains__(self, value: object) -> bool:
        """Whether some node holds ``value``.

        Complexity: O(1).
        """
        return value in self._count

    def count(self, value: T) -> int:
        """How many nodes hold ``value`` (0 if none).

        Complexity: O(1).
        """
        return self._count.get(value, 0)

    def first(self, value: T) -> LeapNode[T] | None:
        """The first node holding ``value``, or None.

        Complexity: O(1).
        """
        return self._first.get(value)

    def last(self, value: T) -> LeapNode[T] | None:
        """The last node holding ``value``, or None.

        Complexity: O(1).
        """
        return self._last.get(value)

    def _reject(self, node: object) -> Exception:
        """The exception for a node this Leap may not operate on."""
        if not isinstance(node, LeapNode):
            return TypeError(f"expected a LeapNode of this Leap, got {type(node).__name__}")
        if node.owner is None:
            return PreconditionError(f"{node!r} is dead: it was deleted from its Leap")
        return PreconditionError(f"{node!r} belongs to another Leap, not this one")

    def next(self, node: LeapNode[T]) -> LeapNode[T] | None:
        """The node after ``node``, or None. PreconditionError if ``node`` is dead or foreign.

        Complexity: O(1).
        """
        if getattr(node, "owner", None) is not self:
            raise self._reject(node)
        return node.next

    def prev(self, node: LeapNode[T]) -> LeapNode[T] | None:
        """The node before ``node``, or None. PreconditionError if ``node`` is dead or foreign.

        Complexity: O(1).
        """
        if getattr(node, "owner", None) is not self:
            raise self._reject(node)
        return node.prev

    def leap(self, node: LeapNode[T]) -> LeapNode[T] | None:
        """The next node after ``node`` holding the same value, or None.

        PreconditionError if ``node`` is dead or foreign.

        Complexity: O(1).
        """
        if getattr(node, "owner", None) is not self:
            raise self._reject(node)
        return node.vnext

    def leapback(self, node: LeapNode[T]) -> LeapNode[T] | None:
        """The last node before ``node`` holding the same value, or None.

        PreconditionError if ``node`` is dead or foreign.

        Complexity: O(1).
        """
        if getattr(node, "owner", None) is not self:
            raise self._reject(node)
        return node.vprev

    def __iter__(self) -> Iterator[LeapNode[T]]:
        """Yield every node in order.

        Links are read lazily and deleted nodes keep their forward link, so
        the caller may append, delete (the current node included) and relabel
        while iterating: every node alive from start to end is yielded once,
        in order, and no dead node is yielded.

        Complexity: O(1) per node (amortised over deleted nodes skipped).
        """
        node = self._head
        while node is not None:
            yield node
            node = node.next
            while node is not None and node.owner is not self:
                node = node.next

    def nodes(self, value: T) -> Iterator[LeapNode[T]]:
        """Yield the nodes holding ``value``, in order.

        The chain is read lazily, so the caller may mutate the Leap between
        yields. Every node yielded holds ``value`` at that moment, in
        increasing ``seq`` order, and every node that holds ``value`` from the
        start of the iteration to its end is yielded. In particular a
        left-to-right merge (delete the nodes after the current one, relabel
        the current one) is safe. If the node just yielded was relabelled or
        deleted *and* the node the iterator would resume from has since moved
        to another value's chain, it cannot follow the chain any more and
        raises RuntimeError rather than silently skip nodes; it never does so
        while the node just yielded still holds ``value``.

        Complexity: O(1) per node (amortised over deleted nodes skipped).
        """
        node = self._first.get(value)
        while node is not None:
            after = node.vnext
            yield node
            # A node still holding `value` (live, or dead since it was on this
            # chain when it died) knows its successor best; one relabelled
            # away has a link into another chain, so use the prefetched one.
            node = node.vnext if node.val == value else after
            while node is not None and node.owner is not self:
                if node.val != value:
                    break
                node = node.vnext
            if node is not None and node.val != value:
                raise RuntimeError(
                    f"Leap.nodes({value!r}): the chain changed under the iterator "
                    f"({node!r} left it while the iterator was away)"
                )

    def values(self) -> list[T]:
        """The values in order.

        Complexity: O(n).
        """
        out: list[T] = []
        append = out.append
        node = self._head
        while node is not None:
            append(node.val)
            node = node.next
        return out

    # -- writing ---------------------------------------------------------------------

    def append(self, value: T) -> LeapNode[T]:
        """Append a node holding ``value`` at the end; return it.

        Complexity: O(1).
        """
        tail = self._tail
        last = self._last.get(value)
        node = LeapNode(value, tail, last, self._seq, self)
        self._seq += 1
        if tail is None:
            self._head = node
        else:
            tail.next = node
        self._tail = node
        if last is None:
            self._first[value] = node
            self._count[value] = 1
        else:
            last.vnext = node
            self._count[value] += 1
        self._last[value] = node
        self._len += 1
        return node

    def delete(self, node: LeapNode[T]) -> None:
        """Remove a live node from the list and from its value's chain.

        The node becomes dead (``owner`` is None). PreconditionError if it is
        already dead or belongs to another Leap.

        Complexity: O(1).
        """
        if getattr(node, "owner", None) is not self:
            raise self._reject(node)
        prev = node.prev
        after = node.next
        if prev is None:
            self._head = after
        else:
            prev.next = after
        if after is None:
            self._tail = prev
        else:
            after.prev = prev
        self._unchain(node)
        # node.next / node.vnext are kept: they let running iterators resume.
        node.prev = node.vprev = None
        node.owner = None
        self._len -= 1

    def _unchain(self, node: LeapNode[T]) -> None:
        """Take ``node`` off its value's chain (its own links are left as they were)."""
        value = node.val
        remaining = self._count[value] - 1
        if remaining:
            self._count[value] = remaining
            vprev = node.vprev
            vnext = node.vnext
            if vprev is None:
                self._first[value] = vnext  # type: ignore[assignment]  # not None: remaining > 0
            else:
                vprev.vnext = vnext
            if vnext is None:
                self._last[value] = vprev  # type: ignore[assignment]  # not None: remaining > 0
            else:
                vnext.vprev = vprev
        else:
            del self._count[value]
            del self._first[value]
            del self._last[value]

    def set_value(self, node: LeapNode[T], value: T) -> None:
        """Relabel ``node`` to ``value``, keeping its place in the list.

        **Precondition: every node that already holds ``value`` comes before
        ``node``**, so that ``node`` becomes the last node of ``value``'s chain
        and can be appended to it in O(1). A violation raises
        PreconditionError and changes nothing. Setting a node to its current
        value does nothing (whatever comes after it). PreconditionError also
        for a dead or foreign node.

        Complexity: O(1).
        """
        if getattr(node, "owner", None) is not self:
            raise self._reject(node)
        if node.val == value:
            return
        last = self._last.get(value)
        if last is not None and last.seq > node.seq:
            raise PreconditionError(
                f"set_value({node!r}, {value!r}): {last!r} already holds {value!r} and comes "
                f"after the node; set_value may only make a node the *last* node of its new "
                f"value (every node holding {value!r} must come before it)"
            )
        self._unchain(node)
        node.val = value
        node.vprev = last
        node.vnext = None
        if last is None:
            self._first[value] = node
            self._count[value] = 1
        else:
            last.vnext = node
            self._count[value] += 1
        self._last[value] = node

    # -- debugging -------------------------------------------------------------------

    def __repr__(self) -> str:
        return f"Leap({self.values()!r})"

    def _dump(self) -> dict[str, Any]:
        """The internal state, nodes written as ``seq`` (``~seq`` if dead)."""

        def ref(node: LeapNode[T] | None) -> int | None:
            if node is None:
                return None
            return node.seq if node.owner is self else ~node.seq

        nodes: list[tuple[int, T, int | None, int | None, int | None, int | None]] = []
        node = self._head
        while node is not None and len(nodes) <= self._seq:  # bounded even if links loop
            nodes.append(
                (
                    node.seq,
                    node.val,
                    ref(node.prev),
                    ref(node.next),
                    ref(node.vprev),
                    ref(node.vnext),
                )
            )
            node = node.next
        return {
            "len": self._len,
            "seq": self._seq,
            "nodes (seq, val, prev, next, vprev, vnext)": nodes,
            "head": ref(self._head),
            "tail": ref(self._tail),
            "first": {k: ref(v) for k, v in self._first.items()},
            "last": {k: ref(v) for k, v in self._last.items()},
            "count": dict(self._count),
        }

    def _fail(self, message: str) -> InvariantError:
        return InvariantError(f"Leap: {message}", self._dump())

    def check(self) -> None:
        """Verify every invariant; raise InvariantError with a state dump if one is broken.

        Checked: the list links mirror and ``seq`` strictly increases along
        them, head and tail are the ends, every reachable node is live and
        owned by this Leap, ``len`` matches; for every value, its chain runs
        from ``first`` to ``last`` with mirrored links, increasing ``seq`` and
        only live nodes of that value, and its length equals ``count`` and the
        number of nodes of that value in the list (so every node is on its
        value's chain and no other); the first/last/count maps have the same
        keys, exactly the values present.

        Complexity: O(n).
        """
        seen: dict[T, int] = {}
        prev: LeapNode[T] | None = None
        node = self._head
        length = 0
        while node is not None:
            if node.owner is not self:
                raise self._fail(f"{node!r} is reachable but not a live node of this Leap")
            if node.prev is not prev:
                raise self._fail(f"{node!r}.prev is {node.prev!r}, expected {prev!r}")
            if prev is not None and node.seq <= prev.seq:
                raise self._fail(f"seq does not increase at {node!r}")
            if node.seq >= self._seq:
                raise self._fail(f"{node!r} has a seq beyond the {self._seq} assigned")
            seen[node.val] = seen.get(node.val, 0) + 1
            length += 1
            prev = node
            node = node.next
        if self._tail is not prev:
            raise self._fail(f"tail is {self._tail!r}, the list ends at {prev!r}")
        if length != self._len:
            raise self._fail(f"len is {self._len} but {length} nodes are reachable")
        if not (self._first.keys() == self._last.keys() == self._count.keys() == seen.keys()):
            raise self._fail("the first/last/count maps do not cover exactly the values present")
        for value, number in seen.items():
            if self._count[value] != number:
                raise self._fail(
                    f"count[{value!r}] is {self._count[value]}, {number} nodes hold it"
                )
            vprev: LeapNode[T] | None = None
            chained = 0
            link: LeapNode[T] | None = self._first[value]
            while link is not None:
                if link.owner is not self or link.val != value:
                    raise self._fail(f"{link!r} is on the chain of {value!r}")
                if link.vprev is not vprev:
                    raise self._fail(f"{link!r}.vprev is {link.vprev!r}, expected {vprev!r}")
                if vprev is not None and link.seq <= vprev.seq:
                    raise self._fail(f"seq does not increase along the chain at {link!r}")
                chained += 1
                if chained > number:
                    break
                vprev = link
                link = link.vnext
            if chained != number:
                raise self._fail(f"the chain of {value!r} has {chained} nodes, expected {number}")
            if self._last[value] is not vprev:
                raise self._fail(
                    f"last[{value!r}] is {self._last[value]!r}, chain ends at {vprev!r}"
                )
