"""Sequence mode: every chunk in order as one linked token sequence (see :mod:`bpeds.corpus`)."""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Literal

from bpeds._corpus_base import (
    Chunk,
    CorpusRun,
    Counting,
    Initial,
    MergeDeltas,
    _as_bytes,
    _check_counting,
    _groups_for,
)
from bpeds.errors import InvariantError
from bpeds.structures.indexed_list import IndexedList, ListNode
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

    >>> SequenceCorpus([b"aaab", b"daaabac"]).num_tokens
    11
    """

    def __init__(
        self,
        chunks: Iterable[Chunk],
        groups: Iterable[int] | None = None,
        *,
        structure: Literal["arrays", "indexed_list"] = "arrays",
    ) -> None:
        if structure not in ("arrays", "indexed_list"):
            raise ValueError(f"structure must be 'arrays' or 'indexed_list', got {structure!r}")
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
        return _SequenceRun(self, want_groups)


class _ArraySequenceRun:
    """Sequence mode over int arrays: position ``i`` is a token; -1 means none."""

    def __init__(self, corpus: SequenceCorpus, want_groups: bool) -> None:
        vals: list[int] = []
        nxt: list[int] = []
        prv: list[int] = []
        self._starts: list[int] = []
        self._chunk_groups: list[int] = []
        for c, g in zip(corpus._chunks, corpus._groups, strict=True):
            if not c:
                continue
            start = len(vals)
            self._starts.append(start)
            self._chunk_groups.append(g)
            end = start + len(c)
            vals.extend(c)
            nxt.extend(range(start + 1, end + 1))
            nxt[-1] = -1
            prv.extend(range(start - 1, end - 1))
            prv[start] = -1
        self.vals, self.nxt, self.prv = vals, nxt, prv
        self.index: dict[int, list[int]] = {}
        self.num_groups = corpus.num_groups
        self.want_groups = want_groups
        self.position_limit = max(1, len(vals))

    def _group_of(self, pos: int) -> int:
        return self._chunk_groups[bisect.bisect_right(self._starts, pos) - 1]

    def initial(self) -> Initial:
        """Counts and the pair index, in one pass. O(n)."""
        vals, nxt = self.vals, self.nxt
        pairs: dict[int, int] = {}
        index = self.index
        want_groups = self.want_groups
        ngroups = self.num_groups
        gpairs: dict[int, list[int]] = {}
        gtokens = [0] * ngroups
        for i, x in enumerate(vals):
            j = nxt[i]
            if j < 0:
                continue
            k = (x << PAIR_SHIFT) | vals[j]
            pairs[k] = pairs.get(k, 0) + 1
            lst = index.get(k)
            if lst is None:
                index[k] = [i]
            else:
                lst.append(i)
        unigram = dict(Counter(vals))
        if want_groups:
            for i, x in enumerate(vals):
                g = self._group_of(i)
                gtokens[g] += 1
                j = nxt[i]
                if j >= 0:
                    k = (x << PAIR_SHIFT) | vals[j]
                    row = gpairs.get(k)
                    if row is None:
                        row = gpairs[k] = [0] * ngroups
                    row[g] += 1
        else:
            gtokens[0] = len(vals)
        return Initial(pairs, unigram, gpairs, gtokens)

    def merge(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """Merge every non-overlapping ``(a, b)`` left to right. O(index entries of the pair)."""
        pk = (a << PAIR_SHIFT) | b
        sites_list = self.index.pop(pk, None)
        if sites_list is None:
            return
        vals, nxt, prv = self.vals, self.nxt, self.prv
        index = self.index
        d = out.pairs
        get = d.get
        first = out.first_positions
        want_groups = self.want_groups
        sites = 0
        for i in sites_list:
            if vals[i] != a:
                continue
            j = nxt[i]
            if j < 0 or vals[j] != b:
                continue
            p = prv[i]
            q = nxt[j]
            if p >= 0:
                pv = vals[p] << PAIR_SHIFT
                k = pv | a
                d[k] = get(k, 0) - 1
                k = pv | new
                d[k] = get(k, 0) + 1
                lst = index.get(k)
                if lst is None:
                    index[k] = [p]
                    if first is not None:
                        first[k] = p
                else:
                    lst.append(p)
            if q >= 0:
                qv = vals[q]
                k = (b << PAIR_SHIFT) | qv
                d[k] = get(k, 0) - 1
                k = (new << PAIR_SHIFT) | qv
                d[k] = get(k, 0) + 1
                lst = index.get(k)
                if lst is None:
                    index[k] = [i]
                    if first is not None:
                        first[k] = i
                else:
                    lst.append(i)
                prv[q] = i
            if want_groups:
                self._group_deltas(i, p, q, a, b, new, out)
            vals[i] = new
            vals[j] = -1
            nxt[i] = q
            sites += 1
        if sites:
            d[pk] = get(pk, 0) - sites
        out.sites += sites

    def _group_deltas(
        self, i: int, p: int, q: int, a: int, b: int, new: int, out: MergeDeltas
    ) -> None:
        g = self._group_of(i)
        out.group_sites[g] += 1
        vals = self.vals
        changes = [((a << PAIR_SHIFT) | b, -1)]
        if p >= 0:
            pv = vals[p] << PAIR_SHIFT
            changes += ((pv | a, -1), (pv | new, 1))
        if q >= 0:
            qv = vals[q]
            changes += (((b << PAIR_SHIFT) | qv, -1), ((new << PAIR_SHIFT) | qv, 1))
        rows = out.group_pairs
        for k, step in changes:
            row = rows.get(k)
            if row is None:
                row = rows[k] = [0] * self.num_groups
            row[g] += step

    def first_position(self, pk: int) -> int | None:
        """The first live occurrence: index lists are sorted, so the first valid entry."""
        lst = self.index.get(pk)
        if lst is None:
            return None
        a, b = pk >> PAIR_SHIFT, pk & PAIR_MASK
        vals, nxt = self.vals, self.nxt
        for i in lst:
            if vals[i] == a:
                j = nxt[i]
                if j >= 0 and vals[j] == b:
                    return i
        return None

    def check(self) -> None:
        """Links mirror, dead positions unreachable, and every live pair is indexed. O(n)."""
        vals, nxt, prv = self.vals, self.nxt, self.prv
        for i, x in enumerate(vals):
            if x < 0:
                continue
            j = nxt[i]
            if j >= 0:
                if vals[j] < 0 or prv[j] != i:
                    raise InvariantError(f"broken link {i} -> {j}", {"i": i, "j": j})
                k = (x << PAIR_SHIFT) | vals[j]
                if i not in self.index.get(k, ()):
                    raise InvariantError(f"pair at {i} is not indexed", {"i": i, "key": k})


class _SequenceRun:
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
            if p is not None:
                pv = p.val << PAIR_SHIFT
                k = pv | a
                d[k] = get(k, 0) - 1
                k = pv | new
                d[k] = get(k, 0) + 1
                if first is not None and k not in first:
                    first[k] = p.pos
            if q is not None:
                qv = q.val
                k = (b << PAIR_SHIFT) | qv
                d[k] = get(k, 0) - 1
                k = (new << PAIR_SHIFT) | qv
                d[k] = get(k, 0) + 1
                if first is not None and k not in first:
                    first[k] = n.pos
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
        g = self._group_of(n)
        out.group_sites[g] += 1
        changes = [((a << PAIR_SHIFT) | b, -1)]
        if p is not None:
            changes += (((p.val << PAIR_SHIFT) | a, -1), ((p.val << PAIR_SHIFT) | new, 1))
        if q is not None:
            changes += (((b << PAIR_SHIFT) | q.val, -1), ((new << PAIR_SHIFT) | q.val, 1))
        rows = out.group_pairs
        for k, step in changes:
            row = rows.get(k)
            if row is None:
                row = rows[k] = [0] * self.num_groups
            row[g] += step

    def first_position(self, pk: int) -> int | None:
        for n in self.list.occurrences((pk >> PAIR_SHIFT, pk & PAIR_MASK)):
            return n.pos
        return None

    def check(self) -> None:
        """The list's own invariants. O(n)."""
        self.list.check()

    def nodes(self) -> Iterator[ListNode[int]]:
        return iter(self.list)
