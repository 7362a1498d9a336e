"""Sequence mode: every chunk in order as one linked token sequence (see :mod:`bpeds.corpus`)."""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from itertools import islice, pairwise, repeat
from operator import lshift, or_
from typing import Literal

from bpeds.corpus.base import (
    Chunk,
    CorpusRun,
    Counting,
    Initial,
    MergeDeltas,
    NoRewrites,
    _as_bytes,
    _check_counting,
    _groups_for,
    _lose,
    _take,
)
from bpeds.errors import InvariantError
from bpeds.structures.indexed_list import IndexedList, ListNode
from bpeds.structures.leap import Leap, LeapNode
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT

__all__ = ["SequenceCorpus"]


class SequenceCorpus:
    """Sequence mode: every chunk in order, as one linked sequence of tokens.

    ``structure`` picks how the sequence is stored; both give identical merges:

    - ``"arrays"`` (default): structure of arrays. Token values and links are
      int lists indexed by position, and the pair index maps packed pairs to
      position lists. A merge creates pairs only around the new token and visits
      its sites left to right, so every index list is appended in position order,
      exactly once per pair: lists stay sorted and free of duplicates, and only
      stale entries (pairs that changed since) are skipped on read.
    - ``"indexed_list"``: an :class:`~bpeds.structures.IndexedList` of node
      objects with its own stale pair index.
    - ``"leap"``: a :class:`~bpeds.structures.Leap`, no pair index at all: a
      merge of ``(a, b)`` walks the chain of ``a``'s nodes and merges those
      followed by ``b`` (cost O(occurrences of ``a``), where the others pay
      O(occurrences of the pair) plus their index upkeep).

    >>> SequenceCorpus([b"aaab", b"daaabac"]).num_tokens
    11
    """

    def __init__(
        self,
        chunks: Iterable[Chunk],
        groups: Iterable[int] | None = None,
        *,
        structure: Literal["arrays", "indexed_list", "leap"] = "arrays",
    ) -> None:
        if structure not in ("arrays", "indexed_list", "leap"):
            raise ValueError(
                f"structure must be 'arrays', 'indexed_list' or 'leap', got {structure!r}"
            )
        self.structure = structure
        self._chunks = [list(_as_bytes(c)) for c in chunks]
        self._groups = _groups_for(groups, len(self._chunks))
        self.num_groups = max(self._groups, default=0) + 1

    @property
    def num_tokens(self) -> int:
        """Tokens in the original corpus (bytes)."""
        return sum(len(c) for c in self._chunks)

    def start(
        self, counting: Counting, want_groups: bool, length: Callable[[int], int]
    ) -> CorpusRun:
        """Fresh working state for one training run."""
        _check_counting(counting)
        if counting != "overlapping":
            raise ValueError(
                "sequence mode counts pairs overlapping only (as minbpe does); "
                "use TypeCorpus for counting='non_overlapping'"
            )
        if self.structure == "arrays":
            return _ArraySequenceRun(self, want_groups)
        if self.structure == "leap":
            return _LeapSequenceRun(self, want_groups)
        return _SequenceRun(self, want_groups)


def _site_group_deltas(
    out: MergeDeltas,
    g: int,
    num_groups: int,
    merge: tuple[int, int, int],
    before: int | None,
    after: int | None,
) -> None:
    """Per-group count changes of one site of ``merge = (a, b, new)`` in group ``g``:
    ``(a, b)`` goes, and each neighbour token (``before``/``after``, None at a chunk
    edge) moves its pair from ``a``/``b`` to ``new``. O(1)."""
    a, b, new = merge
    out.group_sites[g] += 1
    changes = [((a << PAIR_SHIFT) | b, -1)]
    if before is not None:
        changes += (((before << PAIR_SHIFT) | a, -1), ((before << PAIR_SHIFT) | new, 1))
    if after is not None:
        changes += (((b << PAIR_SHIFT) | after, -1), ((new << PAIR_SHIFT) | after, 1))
    rows = out.group_pairs
    for k, step in changes:
        row = rows.get(k)
        if row is None:
            row = rows[k] = [0] * num_groups
        row[g] += step


#: ``_SMALL_KEYS[k] == k`` for the pair keys ``a << 8 | b`` of two bytes: one shared object each.
_SMALL_KEYS = list(range(1 << 16))


def _note_site(
    d: dict[int, int],
    first: dict[int, int] | None,
    merge: tuple[int, int, int],
    before: int | None,
    after: int | None,
    positions: tuple[int, int],
) -> None:
    """Count changes of one merge site of ``merge = (a, b, new)`` into ``d``: each
    neighbour token (``before``/``after``, None at a chunk edge) moves its pair from
    ``a``/``b`` to ``new``; a new pair seen for the first time records its position
    (``positions``: the left neighbour's and the site's) in ``first``. O(1). (The
    linked representations' sites; the arrays inline this.)"""
    a, b, new = merge
    get = d.get
    if before is not None:
        pv = before << PAIR_SHIFT
        k = pv | a
        d[k] = get(k, 0) - 1
        k = pv | new
        d[k] = get(k, 0) + 1
        if first is not None and k not in first:
            first[k] = positions[0]
    if after is not None:
        k = (b << PAIR_SHIFT) | after
        d[k] = get(k, 0) - 1
        k = (new << PAIR_SHIFT) | after
        d[k] = get(k, 0) + 1
        if first is not None and k not in first:
            first[k] = positions[1]


class _ArraySequenceRun(NoRewrites):
    """Sequence mode over int arrays: position ``i`` is a token; -1 means none.

    The pair index maps each pair to its positions, sorted. A merge makes pairs
    only around the new token and visits its sites left to right, so each new
    pair's list is made whole, in position order and exactly (pairs a later site
    of the same merge ended are left out); lists are never extended, and only
    entries made stale by later merges are skipped on read.
    """

    def __init__(self, corpus: SequenceCorpus, want_groups: bool) -> None:
        vals: list[int] = []
        nxt: list[int] = []
        prv: list[int] = []
        self._starts: list[int] = []
        self._chunk_groups: list[int] = []
        # One int object per position, shared by the links and the pair index (slices
        # and appends copy references): each position costs one object, not three.
        pos = list(range(sum(map(len, corpus._chunks))))
        self._pos: list[int] | None = pos
        for c, g in zip(corpus._chunks, corpus._groups, strict=True):
            if not c:
                continue
            start = len(vals)
            self._starts.append(start)
            self._chunk_groups.append(g)
            end = start + len(c)
            vals.extend(c)
            nxt.extend(pos[start + 1 : end])
            nxt.append(-1)
            prv.append(-1)
            prv.extend(pos[start : end - 1])
        self.position_limit = max(1, len(vals))
        self.size = len(vals)
        # A sentinel after the last position: vals[nxt[i]] reads it when nxt[i] == -1.
        vals.append(-2)
        self.vals, self.nxt, self.prv = vals, nxt, prv
        self.index: dict[int, list[int]] = {}
        self.num_groups = corpus.num_groups
        self.want_groups = want_groups

    def _group_of(self, pos: int) -> int:
        return self._chunk_groups[bisect.bisect_right(self._starts, pos) - 1]

    def initial(self) -> Initial:
        """Counts and the pair index, in one pass. O(n)."""
        vals = self.vals
        n = self.size
        ngroups = self.num_groups
        gpairs: dict[int, list[int]] = {}
        gtokens = [0] * ngroups
        lists: dict[int, list[int]] = {}
        pos = self._pos if self._pos is not None else list(range(n))
        self._pos = None  # from here on the lists below hold the position objects
        if n >= 2:
            # Tokens are bytes here: group under small keys (a << 8 | b), pack once per pair;
            # each key is the one object of _SMALL_KEYS, not a new int per position.
            keys = list(
                map(
                    _SMALL_KEYS.__getitem__,
                    map(or_, map(lshift, islice(vals, n - 1), repeat(8)), islice(vals, 1, n)),
                )
            )
            for s in self._starts[1:]:
                keys[s - 1] = -1  # the last token of a chunk has no pair
            grouped: defaultdict[int, list[int]] = defaultdict(list)
            for i, k in zip(pos, keys, strict=False):  # keys: one fewer (no pair at the end)
                grouped[k].append(i)
            grouped.pop(-1, None)
            lists = {((k >> 8) << PAIR_SHIFT) | (k & 255): lst for k, lst in grouped.items()}
            del keys, grouped
        self.index = lists
        pairs = {k: len(lst) for k, lst in lists.items()}
        unigram = dict(Counter(islice(vals, n)))
        if self.want_groups:
            nxt = self.nxt
            for i in range(n):
                g = self._group_of(i)
                gtokens[g] += 1
                j = nxt[i]
                if j >= 0:
                    k = (vals[i] << PAIR_SHIFT) | vals[j]
                    row = gpairs.get(k)
                    if row is None:
                        row = gpairs[k] = [0] * ngroups
                    row[g] += 1
        else:
            gtokens[0] = n
        return Initial(pairs, unigram, gpairs, gtokens)

    def merge(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """Merge every non-overlapping ``(a, b)`` left to right; changes by neighbour.

        Each site's neighbours are gathered with their positions; the weights are
        the lists' lengths, and the lists become the new pairs' index lists (when
        sites are adjacent, the ``(new, a)`` pairs the next site ended are filtered
        out of the index; the deltas keep them, as :class:`MergeDeltas` says).
        O(entries of the pair's list + distinct neighbours).
        """
        pk = (a << PAIR_SHIFT) | b
        sites = self.index.pop(pk, None)
        if sites is None:
            return
        vals, nxt, prv = self.vals, self.nxt, self.prv
        lefts: defaultdict[int, list[int]] = defaultdict(list)  # v -> positions of (v, new)
        rights: defaultdict[int, list[int]] = defaultdict(list)  # v -> positions of (new, v)
        want_groups = self.want_groups
        count = 0
        for i in sites:
            if vals[i] != a:
                continue
            j = nxt[i]
            if vals[j] != b:
                continue
            p = prv[i]
            q = nxt[j]
            if want_groups:
                self._group_deltas(i, p, q, a, b, new, out)
            if p >= 0:
                # vals[p] is new if p was the previous site: the pair is (new, new) then.
                lefts[vals[p]].append(p)
            if q >= 0:
                rights[vals[q]].append(i)
                prv[q] = i
            vals[i] = new
            vals[j] = -1
            nxt[i] = q
            count += 1
        out.sites += count
        born = out.born
        lost: dict[int, int] = {}
        hi, lo = new << PAIR_SHIFT, b << PAIR_SHIFT
        for v, lst in rights.items():
            born[hi | v] = lost[lo | v] = len(lst)
        for v, lst in lefts.items():
            vs = v << PAIR_SHIFT
            w = born[vs | new] = len(lst)
            if v == new:  # (new, a) of an adjacent site, made above: never in the table
                _take(born, hi | a, w)
            else:
                lost[vs | a] = lost.get(vs | a, 0) + w
        _lose(out, lost)
        if new in lefts:
            # Adjacent sites: keep in the index only the (new, a) whose right token is a.
            rights[a] = [x for x in rights[a] if vals[nxt[x]] == a]
        index = self.index
        first = out.first_positions
        for v, lst in rights.items():
            if lst:
                index[hi | v] = lst
                if first is not None:
                    first[hi | v] = lst[0]
        for v, lst in lefts.items():
            k = (v << PAIR_SHIFT) | new
            index[k] = lst
            if first is not None:
                first[k] = lst[0]

    def _group_deltas(
        self, i: int, p: int, q: int, a: int, b: int, new: int, out: MergeDeltas
    ) -> None:
        vals = self.vals
        _site_group_deltas(
            out,
            self._group_of(i),
            self.num_groups,
            (a, b, new),
            vals[p] if p >= 0 else None,
            vals[q] if q >= 0 else None,
        )

    def first_position(self, pk: int) -> int | None:
        """The first live occurrence: index lists are sorted, so the first valid entry
        (stale entries before it are cut off: each is read once). Amortised O(1)."""
        lst = self.index.get(pk)
        if lst is None:
            return None
        a, b = pk >> PAIR_SHIFT, pk & PAIR_MASK
        vals, nxt = self.vals, self.nxt
        for s, i in enumerate(lst):
            if vals[i] == a and vals[nxt[i]] == b:
                if s:
                    del lst[:s]
                return i
        return None

    def check(self) -> None:
        """Links mirror, dead positions unreachable, and every live pair is indexed. O(n)."""
        vals, nxt, prv = self.vals, self.nxt, self.prv
        listed = {(k, i) for k, lst in self.index.items() for i in lst}
        for i in range(self.size):
            x = vals[i]
            if x < 0:
                continue
            j = nxt[i]
            if j >= 0:
                if vals[j] < 0 or prv[j] != i:
                    raise InvariantError(f"broken link {i} -> {j}", {"i": i, "j": j})
                k = (x << PAIR_SHIFT) | vals[j]
                if (k, i) not in listed:
                    raise InvariantError(f"pair at {i} is not indexed", {"i": i, "key": k})
        for k, lst in self.index.items():
            if any(x >= y for x, y in pairwise(lst)):
                raise InvariantError(f"index list of {k} is not sorted", {"key": k})


class _SequenceRun(NoRewrites):
    def __init__(self, corpus: SequenceCorpus, want_groups: bool) -> None:
        chunks = [c for c in corpus._chunks if c]
        groups = [g for c, g in zip(corpus._chunks, corpus._groups, strict=True) if c]
        self.list: IndexedList[int] = IndexedList.from_chunks(chunks)
        self.num_groups = corpus.num_groups
        self.want_groups = want_groups
        self._starts: list[int] = []
        self._chunk_groups = groups
        pos = 0
        for c in chunks:
            self._starts.append(pos)
            pos += len(c)
        self.position_limit = max(1, pos)

    def _group_of(self, node: ListNode[int]) -> int:
        return self._chunk_groups[bisect.bisect_right(self._starts, node.pos) - 1]

    def initial(self) -> Initial:
        pairs: dict[int, int] = {}
        unigram: dict[int, int] = {}
        gpairs: dict[int, list[int]] = {}
        ngroups = self.num_groups
        gtokens = [0] * ngroups
        for node in self.list:
            g = self._group_of(node) if self.want_groups else 0
            gtokens[g] += 1
            unigram[node.val] = unigram.get(node.val, 0) + 1
            nxt = node.next
            if nxt is None:
                continue
            k = (node.val << PAIR_SHIFT) | nxt.val
            pairs[k] = pairs.get(k, 0) + 1
            if self.want_groups:
                gp = gpairs.get(k)
                if gp is None:
                    gp = gpairs[k] = [0] * ngroups
                gp[g] += 1
        return Initial(pairs, unigram, gpairs, gtokens)

    def merge(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """Merge every non-overlapping ``(a, b)`` left to right; record new pairs' exact
        first positions when asked. O(stale index entries)."""
        pk = (a << PAIR_SHIFT) | b
        d = out.pairs
        get = d.get
        # Sites come in list order, so the first site creating a pair is its first position.
        first = out.first_positions
        lst = self.list
        merge_with_next = lst.merge_with_next
        want_groups = self.want_groups
        sites = 0
        for n in lst.occurrences((a, b)):
            m = n.next
            if m is None:  # pragma: no cover - occurrences() guarantees a successor
                continue
            p, q = n.prev, m.next
            _note_site(
                d,
                first,
                (a, b, new),
                None if p is None else p.val,
                None if q is None else q.val,
                (0 if p is None else p.pos, n.pos),
            )
            if want_groups:
                self._group_deltas(n, p, q, a, b, new, out)
            sites += 1
            merge_with_next(n, new)
        if sites:
            d[pk] = get(pk, 0) - sites
        out.sites += sites

    def _group_deltas(
        self,
        n: ListNode[int],
        p: ListNode[int] | None,
        q: ListNode[int] | None,
        a: int,
        b: int,
        new: int,
        out: MergeDeltas,
    ) -> None:
        """Per-group count changes of one merge site (only for per-group scores)."""
        _site_group_deltas(
            out,
            self._group_of(n),
            self.num_groups,
            (a, b, new),
            None if p is None else p.val,
            None if q is None else q.val,
        )

    def first_position(self, pk: int) -> int | None:
        for n in self.list.occurrences((pk >> PAIR_SHIFT, pk & PAIR_MASK)):
            return n.pos
        return None

    def check(self) -> None:
        """The list's own invariants. O(n)."""
        self.list.check()

    def nodes(self) -> Iterator[ListNode[int]]:
        return iter(self.list)


#: The value between two chunks in a :class:`_LeapSequenceRun` (never a token).
_SEP = -1


class _LeapSequenceRun(NoRewrites):
    """Sequence mode over a :class:`~bpeds.structures.Leap`: chunks in order, one
    separator node between two chunks; no pair index (see :class:`SequenceCorpus`).

    Positions are the nodes' append numbers (``seq``), which order occurrences as
    the chunk sequence does.
    """

    def __init__(self, corpus: SequenceCorpus, want_groups: bool) -> None:
        self.leap: Leap[int] = Leap()
        self.num_groups = corpus.num_groups
        self.want_groups = want_groups
        self._starts: list[int] = []
        self._chunk_groups: list[int] = []
        append = self.leap.append
        for c, g in zip(corpus._chunks, corpus._groups, strict=True):
            if not c:
                continue
            if self._starts:
                append(_SEP)
            self._starts.append(len(self.leap))
            self._chunk_groups.append(g)
            for x in c:
                append(x)
        self.position_limit = max(1, len(self.leap))

    def _group_of(self, node: LeapNode[int]) -> int:
        return self._chunk_groups[bisect.bisect_right(self._starts, node.seq) - 1]

    def initial(self) -> Initial:
        """Pair, unigram and per-group counts. O(n)."""
        pairs: dict[int, int] = {}
        unigram: dict[int, int] = {}
        gpairs: dict[int, list[int]] = {}
        gtokens = [0] * self.num_groups
        for node in self.leap:
            v = node.val
            if v == _SEP:
                continue
            g = self._group_of(node) if self.want_groups else 0
            gtokens[g] += 1
            unigram[v] = unigram.get(v, 0) + 1
            nxt = node.next
            if nxt is None or nxt.val == _SEP:
                continue
            k = (v << PAIR_SHIFT) | nxt.val
            pairs[k] = pairs.get(k, 0) + 1
            if self.want_groups:
                gp = gpairs.get(k)
                if gp is None:
                    gp = gpairs[k] = [0] * self.num_groups
                gp[g] += 1
        return Initial(pairs, unigram, gpairs, gtokens)

    def merge(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """Walk ``a``'s chain left to right and merge each node followed by ``b``
        (non-overlapping: a ``b`` merged into the previous site is gone). ``new`` is
        fresh, so relabelling a node appends it to ``new``'s chain in order.
        O(occurrences of ``a``)."""
        leap = self.leap
        d = out.pairs
        get = d.get
        first = out.first_positions
        sites = 0
        n = leap.first(a)
        while n is not None:
            ahead = n.vnext
            m = n.next
            if m is None or m.val != b:
                n = ahead
                continue
            if m is ahead:  # (a == b: the partner is the chain's next node)
                ahead = m.vnext
            p, q = n.prev, m.next
            if p is not None and p.val == _SEP:
                p = None
            if q is not None and q.val == _SEP:
                q = None
            _note_site(
                d,
                first,
                (a, b, new),
                None if p is None else p.val,
                None if q is None else q.val,
                (0 if p is None else p.seq, n.seq),
            )
            if self.want_groups:
                _site_group_deltas(
                    out,
                    self._group_of(n),
                    self.num_groups,
                    (a, b, new),
                    None if p is None else p.val,
                    None if q is None else q.val,
                )
            leap.set_value(n, new)
            leap.delete(m)
            sites += 1
            n = ahead
        if sites:
            pk = (a << PAIR_SHIFT) | b
            d[pk] = get(pk, 0) - sites
        out.sites += sites

    def first_position(self, pk: int) -> int | None:
        """The first node of ``a``'s chain followed by ``b``. O(occurrences of ``a``)."""
        b = pk & PAIR_MASK
        for n in self.leap.nodes(pk >> PAIR_SHIFT):
            m = n.next
            if m is not None and m.val == b:
                return n.seq
        return None

    def check(self) -> None:
        """The Leap's own invariants. O(n)."""
        self.leap.check()
