"""``IndexedList``: a doubly linked token list with a *stale* pair index.

A BPE merge of the pair ``(a, b)`` must visit every node holding ``a`` that is
followed by ``b``. :class:`IndexedList` keeps, for every pair, a plain Python
list of the nodes that held that pair *at some point* (the stale index). Edits
only ever append to it; readers validate each entry when they reach it, which
costs exactly what keeping the index exact would cost, and nothing up front.

    "abcd", merge (b, c) -> X at node 1:
        delete(node 2)        index[(b, d)] += [node 1]     (now "abd")
        set_value(node 1, X)  index[(a, X)] += [node 0],
                              index[(X, d)] += [node 1]     (now "aXd")

``merge_with_next(node, X)`` does both steps without the intermediate
``(b, d)`` entry.

Not handled here: inserting nodes (positions ``pos`` are assigned once, at
construction, and only ever disappear), pairs spanning two chunks, or choosing
*which* pair to merge (that is the multiset's and the driver's job). The index
is never compacted automatically: call :meth:`IndexedList.compact` when its
stale entries start to matter.
"""

from __future__ import annotations

from collections.abc import Hashable, Iterable, Iterator
from itertools import islice
from operator import attrgetter, length_hint
from typing import Any, Generic, TypeVar

from bpeds.errors import InvariantError, PreconditionError

__all__ = ["IndexedList", "ListNode"]

T = TypeVar("T", bound=Hashable)

_POS = attrgetter("pos")


class ListNode(Generic[T]):
    """One token of an :class:`IndexedList`.

    ``val`` is the token, ``prev``/``next`` its neighbours in its chunk (None at
    a chunk's ends), ``pos`` its original index in the whole list (positions
    only disappear, so ``pos`` orders nodes), and ``owner`` the list it lives in,
    or None once it has been deleted. A deleted node also has ``prev`` and
    ``next`` set to None. Treat every attribute as read-only: change a list only
    through its methods.
    """

    __slots__ = ("next", "owner", "pos", "prev", "val")

    def __init__(
        self,
        val: T,
        prev: ListNode[T] | None,
        next: ListNode[T] | None,
        pos: int,
        owner: IndexedList[T] | None,
    ) -> None:
        self.val = val
        self.prev = prev
        self.next = next
        self.pos = pos
        self.owner = owner

    def __repr__(self) -> str:
        dead = "" if self.owner is not None else ", dead"
        return f"ListNode(val={self.val!r}, pos={self.pos}{dead})"


class IndexedList(Generic[T]):
    """A linked list of tokens, split into chunks, with a lazily validated pair index.

    Merging the pair ``("a", "a")`` into ``"Z"`` in the Wikipedia example:

    >>> lst = IndexedList("aaabdaaabac")
    >>> for node in lst.occurrences(("a", "a")):
    ...     lst.delete(node.next)
    ...     lst.set_value(node, "Z")
    >>> "".join(lst.values())
    'ZabdZabac'
    >>> lst.pair_counts()[("Z", "a")], len(lst)
    (2, 9)
    >>> chunked = IndexedList.from_chunks(["ab", "", "ba"])
    >>> chunked.chunks(), list(chunked.occurrences(("b", "b")))
    ([['a', 'b'], ['b', 'a']], [])
    >>> lst.check()

    Counters (plain ints, for benchmarks): ``entries_scanned`` index entries
    read by :meth:`occurrences`, ``entries_skipped`` of them stale or duplicate,
    ``entries_dropped`` removed by :meth:`compact`, ``sorts`` key lists that had
    to be re-sorted.
    """

    __slots__ = (
        "_head_slot",
        "_heads",
        "_index",
        "_len",
        "_npos",
        "_unsorted",
        "entries_dropped",
        "entries_scanned",
        "entries_skipped",
        "sorts",
    )

    def __init__(self, values: Iterable[T] = ()) -> None:
        """Build a list of one chunk holding ``values``.

        Complexity: O(n).
        """
        # _heads[i] is the first live node of chunk i (None once it is empty);
        # _head_slot maps the pos of each non-None head to its i.
        self._heads: list[ListNode[T] | None] = []
        self._head_slot: dict[int, int] = {}
        # pair -> nodes that held that pair at some point (stale entries allowed).
        self._index: dict[tuple[T, T], list[ListNode[T]]] = {}
        # Keys whose list may not be in pos order (something was appended out of order).
        self._unsorted: set[tuple[T, T]] = set()
        self._len = 0
        self._npos = 0
        self.entries_scanned = 0
        self.entries_skipped = 0
        self.entries_dropped = 0
        self.sorts = 0
        self._add_chunk(values)

    @classmethod
    def from_chunks(cls, chunks: Iterable[Iterable[T]]) -> IndexedList[T]:
        """Build a list of several chunks; no pair ever spans two chunks.

        Empty chunks are ignored. ``pos`` numbers all nodes in order, across
        chunks.

        Complexity: O(n).
        """
        lst: IndexedList[T] = cls()
        for chunk in chunks:
            lst._add_chunk(chunk)
        return lst

    def _add_chunk(self, values: Iterable[T]) -> None:
        start = pos = self._npos
        index = self._index
        owner = self
        head: ListNode[T] | None = None
        prev: ListNode[T] | None = None
        for value in values:
            node = ListNode(value, prev, None, pos, owner)
            pos += 1
            if prev is None:
                head = node
            else:
                prev.next = node
                key = (prev.val, value)
                entries = index.get(key)
                if entries is None:
                    index[key] = [prev]
                else:
                    entries.append(prev)
            prev = node
        if head is not None:
            self._head_slot[start] = len(self._heads)
            self._heads.append(head)
        self._npos = pos
        self._len += pos - start

    # -- reading ---------------------------------------------------------------------

    def __len__(self) -> int:
        """The number of live nodes.

        Complexity: O(1).
        """
        return self._len

    def __iter__(self) -> Iterator[ListNode[T]]:
        """Yield the live nodes in list order, chunk after chunk.

        The links are read lazily, so the caller may relabel any node, delete
        nodes after the current one, or delete the current node itself while
        iterating. Deleting both the current node and its successor before
        resuming raises RuntimeError (iterate over ``list(lst)`` for that).

        Complexity: O(1) per node.
        """
        heads = self._heads
        for i in range(len(heads)):
            node = heads[i]
            while node is not None:
                after = node.next
                yield node
                if node.owner is self:
                    node = node.next
                elif after is None or after.owner is self:
                    node = after
                else:
                    raise RuntimeError(
                        "IndexedList changed during iteration: the node just yielded and its "
                        "successor were both deleted; iterate over list(lst) instead"
                    )

    def values(self) -> list[T]:
        """The values of the live nodes, in order, all chunks concatenated.

        Complexity: O(n).
        """
        out: list[T] = []
        append = out.append
        for node in self._heads:
            while node is not None:
                append(node.val)
                node = node.next
        return out

    def chunks(self) -> list[list[T]]:
        """The values chunk by chunk; chunks with no live node are left out.

        Complexity: O(n).
        """
        out: list[list[T]] = []
        for node in self._heads:
            if node is None:
                continue
            chunk: list[T] = []
            while node is not None:
                chunk.append(node.val)
                node = node.next
            out.append(chunk)
        return out

    def pair_counts(self, *, overlapping: bool = True) -> dict[tuple[T, T], int]:
        """Count the adjacent pairs of live nodes, within chunks.

        With ``overlapping=False`` a run of one value is counted the way a
        left-to-right merge consumes it: in ``aaaa`` the pair ``(a, a)`` counts
        2, in ``aaa`` it counts 1. Other pairs cannot overlap themselves and
        count the same either way.

        Complexity: O(n).
        """
        counts: dict[tuple[T, T], int] = {}
        get = counts.get
        for node in self._heads:
            if node is None:
                continue
            after = node.next
            run = False  # the previous pair was (v, v) and was counted
            while after is not None:
                a = node.val
                b = after.val
                if run and a == b:
                    run = False
                else:
                    key = (a, b)
                    counts[key] = get(key, 0) + 1
                    run = not overlapping and a == b
                node = after
                after = after.next
        return counts

    def occurrences(self, pair: tuple[T, T]) -> Iterator[ListNode[T]]:
        """Yield the live nodes ``n`` with ``n.val == a`` and ``n.next.val == b``.

        Each such node is yielded once, in list order (by ``pos``). An entry is
        validated at the moment the iterator reaches it, so the caller may
        mutate the list between yields; a left-to-right merge of ``(a, b)``
        (``delete(n.next); set_value(n, new)`` on each node yielded) is the
        intended use. Every node that holds the pair when the iterator reaches
        it *and* held it when iteration started is yielded; entries appended
        to this pair's index during the iteration need not be visited. An
        absent pair yields nothing.

        The index list is re-sorted (into a new list, so other iterators over
        the same pair are unaffected) only when something was appended to it
        out of order.

        Complexity: O(k) for the k index entries of the pair, O(k log k) if
        they were appended out of order.
        """
        index = self._index
        entries = index.get(pair)
        if entries is None:
            return
        if pair in self._unsorted:
            entries = sorted(entries, key=_POS)
            index[pair] = entries
            self._unsorted.discard(pair)
            self.sorts += 1
        a, b = pair
        last = -1
        yielded = 0
        cursor = iter(entries)
        try:
            # islice: entries appended from here on are not visited.
            for node in islice(cursor, len(entries)):
                if node.val == a and node.pos > last:
                    after = node.next
                    if after is not None and after.val == b:
                        last = node.pos
                        yielded += 1
                        yield node
        finally:
            # A list iterator's length hint is what it has not read yet, so
            # the entries scanned are counted without a per-entry counter.
            scanned = len(entries) - length_hint(cursor)
            self.entries_scanned += scanned
            self.entries_skipped += scanned - yielded

    def index_size(self) -> int:
        """The number of entries in the pair index, stale ones included.

        Complexity: O(number of distinct pairs in the index).
        """
        return sum(map(len, self._index.values()))

    # -- writing ---------------------------------------------------------------------

    def _reject(self, node: object) -> Exception:
        """The exception for a node this list may not operate on."""
        owner = getattr(node, "owner", self)
        if not isinstance(node, ListNode):
            return TypeError(f"expected a ListNode of this IndexedList, got {type(node).__name__}")
        if owner is None:
            return PreconditionError(f"{node!r} is dead: it was deleted from its list")
        return PreconditionError(f"{node!r} belongs to another IndexedList, not this one")

    def delete(self, node: ListNode[T]) -> None:
        """Unlink a live node; its neighbours become adjacent.

        The new pair ``(node.prev.val, node.next.val)`` is appended to the
        index. The node becomes dead: ``owner``, ``prev`` and ``next`` are set
        to None. A dead node, or one of another list, raises PreconditionError.

        Complexity: O(1) amortised.
        """
        try:
            owner = node.owner
        except AttributeError:
            owner = None
        if owner is not self:
            raise self._reject(node)
        prev = node.prev
        after = node.next
        if prev is None:
            slot = self._head_slot.pop(node.pos)
            self._heads[slot] = after
            if after is not None:
                self._head_slot[after.pos] = slot
                after.prev = None
        else:
            if after is not None:
                # Index first: if hashing fails, nothing has changed yet.
                key = (prev.val, after.val)
                entries = self._index.get(key)
                if entries is None:
                    self._index[key] = [prev]
                else:
                    if entries[-1].pos > prev.pos:
                        self._unsorted.add(key)
                    entries.append(prev)
                after.prev = prev
            prev.next = after
        node.prev = node.next = None
        node.owner = None
        self._len -= 1

    def set_value(self, node: ListNode[T], value: T) -> None:
        """Relabel a live node, indexing the pairs it now forms.

        ``node.prev`` is appended to the index of ``(node.prev.val, value)``
        and ``node`` to that of ``(value, node.next.val)``. Setting a node to
        its current value does nothing. A dead node, or one of another list,
        raises PreconditionError; an unhashable value raises TypeError and
        leaves the list as it was.

        Complexity: O(1) amortised.
        """
        try:
            owner = node.owner
        except AttributeError:
            owner = None
        if owner is not self:
            raise self._reject(node)
        if node.val == value:
            return
        # Index first, relabel last: if hashing ``value`` fails the list is
        # unchanged (at worst one extra entry, which is merely stale).
        index = self._index
        prev = node.prev
        if prev is None and node.next is None:
            hash(value)  # a node alone in its chunk forms no pair: refuse unhashable values too
        if prev is not None:
            key = (prev.val, value)
            entries = index.get(key)
            if entries is None:
                index[key] = [prev]
            else:
                if entries[-1].pos > prev.pos:
                    self._unsorted.add(key)
                entries.append(prev)
        after = node.next
        if after is not None:
            key = (value, after.val)
            entries = index.get(key)
            if entries is None:
                index[key] = [node]
            else:
                if entries[-1].pos > node.pos:
                    self._unsorted.add(key)
                entries.append(node)
        node.val = value

    def merge_with_next(self, node: ListNode[T], value: T) -> None:
        """Merge ``node`` with its successor into one node holding ``value``.

        Equivalent to ``delete(node.next); set_value(node, value)``, minus the
        index entry for the short-lived pair between the two steps. Raises
        PreconditionError if ``node`` is dead, foreign or the last of its chunk;
        an unhashable value raises TypeError and leaves the list as it was.

        Complexity: O(1) amortised.
        """
        try:
            owner = node.owner
        except AttributeError:
            owner = None
        if owner is not self:
            raise self._reject(node)
        gone = node.next
        if gone is None:
            raise PreconditionError(
                f"{node!r} is the last node of its chunk: there is no successor to merge with"
            )
        after = gone.next
        # Index first, relink and relabel last (see set_value).
        index = self._index
        prev = node.prev
        if prev is None and after is None:
            hash(value)  # the merged node forms no pair: refuse unhashable values too
        if prev is not None:
            key = (prev.val, value)
            entries = index.get(key)
            if entries is None:
                index[key] = [prev]
            else:
                if entries[-1].pos > prev.pos:
                    self._unsorted.add(key)
                entries.append(prev)
        if after is not None:
            key = (value, after.val)
            entries = index.get(key)
            if entries is None:
                index[key] = [node]
            else:
                if entries[-1].pos > node.pos:
                    self._unsorted.add(key)
                entries.append(node)
            after.prev = node
        node.next = after
        node.val = value
        gone.prev = gone.next = None
        gone.owner = None
        self._len -= 1

    def compact(self, pair: tuple[T, T] | None = None) -> int:
        """Drop stale and duplicate index entries; return how many were dropped.

        With ``pair`` only that pair's list is rewritten, otherwise the whole
        index. Lists are rewritten into new list objects, so running
        :meth:`occurrences` iterators are unaffected. Pairs left with no live
        entry disappear from the index.

        Complexity: O(k) for the k entries rewritten (O(k log k) for lists
        appended out of order).
        """
        index = self._index
        keys = list(index) if pair is None else ([pair] if pair in index else [])
        dropped = 0
        for key in keys:
            entries = index[key]
            if key in self._unsorted:
                entries = sorted(entries, key=_POS)
                self._unsorted.discard(key)
            a, b = key
            kept: list[ListNode[T]] = []
            last = -1
            for node in entries:
                if node.val == a and node.pos > last:
                    after = node.next
                    if after is not None and after.val == b:
                        last = node.pos
                        kept.append(node)
            dropped += len(entries) - len(kept)
            if kept:
                index[key] = kept
            else:
                del index[key]
        self.entries_dropped += dropped
        return dropped

    # -- debugging -------------------------------------------------------------------

    def __repr__(self) -> str:
        chunks = self.chunks()
        if len(chunks) <= 1:
            return f"IndexedList({chunks[0] if chunks else []!r})"
        return f"IndexedList.from_chunks({chunks!r})"

    def _dump(self) -> dict[str, Any]:
        """The internal state, with nodes written as ``pos`` (``~pos`` if dead)."""

        def ref(node: ListNode[T] | None) -> int | None:
            if node is None:
                return None
            return node.pos if node.owner is self else ~node.pos

        chunks: list[list[tuple[int, T]]] = []
        for head in self._heads:
            chunk: list[tuple[int, T]] = []
            node = head
            steps = 0
            while node is not None and steps <= self._npos:  # bounded even if links loop
                chunk.append((node.pos, node.val))
                node = node.next
                steps += 1
            chunks.append(chunk)
        return {
            "len": self._len,
            "npos": self._npos,
            "chunks": chunks,
            "heads": [ref(h) for h in self._heads],
            "head_slot": dict(self._head_slot),
            "index": {key: [ref(n) for n in entries] for key, entries in self._index.items()},
            "unsorted": sorted(self._unsorted, key=repr),
        }

    def _fail(self, message: str) -> InvariantError:
        return InvariantError(f"IndexedList: {message}", self._dump())

    def check(self) -> None:
        """Verify every invariant; raise InvariantError with a state dump if one is broken.

        Checked: each chunk's links mirror (``n.next.prev is n``), heads have no
        ``prev`` and are recorded in the head table, ``pos`` strictly increases
        along the list, every reachable node is live and owned by this list,
        ``len`` matches, every index entry is a node of this list (live or
        dead), lists not marked unsorted are in ``pos`` order, and the index is
        complete: every live adjacent pair ``(n, n.next)`` has ``n`` in
        ``index[(n.val, n.next.val)]``.

        Complexity: O(n + size of the index).
        """
        heads = self._heads
        live_heads = {h.pos: i for i, h in enumerate(heads) if h is not None}
        if live_heads != self._head_slot:
            raise self._fail(f"head table {self._head_slot} does not match the heads {live_heads}")
        members: dict[tuple[T, T], set[int]] = {}
        for key, entries in self._index.items():
            if not isinstance(key, tuple) or len(key) != 2:
                raise self._fail(f"index key {key!r} is not a pair")
            ids: set[int] = set()
            last = -1
            in_order = key not in self._unsorted
            for entry in entries:
                if not isinstance(entry, ListNode) or (
                    entry.owner is not self and entry.owner is not None
                ):
                    raise self._fail(f"index[{key!r}] holds {entry!r}, not a node of this list")
                if in_order and entry.pos < last:
                    raise self._fail(f"index[{key!r}] is out of pos order but not marked unsorted")
                last = entry.pos
                ids.add(id(entry))
            members[key] = ids
        for key in self._unsorted:
            if key not in self._index:
                raise self._fail(f"unsorted key {key!r} is not in the index")
        count = 0
        last_pos = -1
        for head in heads:
            if head is None:
                continue
            if head.prev is not None:
                raise self._fail(f"chunk head {head!r} has a prev link")
            node: ListNode[T] | None = head
            while node is not None:
                if node.owner is not self:
                    raise self._fail(f"{node!r} is reachable but not a live node of this list")
                if node.pos <= last_pos:
                    raise self._fail(f"pos does not increase at {node!r} (after {last_pos})")
                if node.pos >= self._npos:
                    raise self._fail(f"{node!r} has a pos beyond the {self._npos} assigned")
                last_pos = node.pos
                count += 1
                if count > self._npos:
                    raise self._fail("the links loop")
                after = node.next
                if after is not None:
                    if after.prev is not node:
                        raise self._fail(f"{after!r}.prev is not {node!r}")
                    key = (node.val, after.val)
                    if id(node) not in members.get(key, ()):
                        raise self._fail(f"index is incomplete: {node!r} missing from {key!r}")
                node = after
        if count != self._len:
            raise self._fail(f"len is {self._len} but {count} nodes are reachable")
        for name in ("entries_scanned", "entries_skipped", "entries_dropped", "sorts"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 0:
                raise self._fail(f"counter {name} = {value!r} is not a non-negative int")
