"""Sequence mode: every chunk in order as one linked token sequence (see :mod:`bpeds.corpus`)."""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from heapq import heapify, heappop, heappush, heapreplace
from itertools import islice, repeat
from operator import lshift, or_
from typing import Literal

from bpeds._corpus_base import (
    KEY_BITS,
    KEY_MASK,
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
from bpeds.scoring.ties import Leftmost, SmallestIds, TieRule
from bpeds.structures.indexed_list import IndexedList, ListNode
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, Vocab

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
        #: The fused loop's pair index (a pair seen once maps to its position), for check().
        self.fused_index: dict[int, list[int] | int] | None = None
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

        def move(lost: int, born: int, at: int) -> None:
            # One occurrence of `lost` became one of `born`, which starts at position `at`.
            d[lost] = get(lost, 0) - 1
            d[born] = get(born, 0) + 1
            lst = index.get(born)
            if lst is None:
                index[born] = [at]
                if first is not None:
                    first[born] = at
            else:
                lst.append(at)

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
                move(pv | a, pv | new, p)
            if q >= 0:
                qv = vals[q]
                move((b << PAIR_SHIFT) | qv, (new << PAIR_SHIFT) | qv, i)
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
        vals = self.vals
        _site_group_deltas(
            out,
            self._group_of(i),
            self.num_groups,
            (a, b, new),
            vals[p] if p >= 0 else None,
            vals[q] if q >= 0 else None,
        )

    def _indexed(self, k: int, i: int) -> bool:
        if self.fused_index is None:
            return i in self.index.get(k, ())
        got = self.fused_index.get(k, ())
        return got == i if isinstance(got, int) else i in got

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

    def frequency_merges(
        self, num_merges: int, min_count: int, tie: TieRule, vocab: Vocab
    ) -> Iterator[tuple[int, int, int, int]] | None:
        """The driver's fused loop for plain frequency counts (see
        :meth:`bpeds.driver.MergeDriver.fused_loop`), or None to decline.

        Implements ``leftmost`` (:class:`~bpeds.scoring.ties.Leftmost`) and
        ``smallest_ids`` without a byte order; declines other tie rules and
        per-group runs. The returned iterator yields ``(left, right, new_id,
        count)`` per merge, calling ``vocab.add`` itself, and stops when no pair
        with count >= ``min_count`` is left or after ``num_merges`` merges.
        Consumes this run. See :func:`_array_frequency_merges` for costs.
        """
        if self.want_groups:
            return None
        if type(tie) is Leftmost:
            leftmost = True
        elif type(tie) is SmallestIds and tie.byte_order is None:
            leftmost = False
        else:
            return None
        return _array_frequency_merges(self, num_merges, min_count, leftmost, vocab)

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
                if not self._indexed(k, i):
                    raise InvariantError(f"pair at {i} is not indexed", {"i": i, "key": k})


def _array_frequency_merges(
    run: _ArraySequenceRun, num_merges: int, min_count: int, leftmost: bool, vocab: Vocab
) -> Iterator[tuple[int, int, int, int]]:
    """The fused frequency loop over a run's arrays: count, select, merge, update.

    The heap (C ``heapq``) holds one int per pair, ``(-priority << 64) | pair``, so
    the smallest entry is the best pair and equal priorities fall to the smallest
    packed pair (``smallest_ids``). Under ``leftmost`` the priority is
    ``(count << shift) - first_position``. Counts only fall for existing pairs and
    first positions only move right (new pairs all contain the new token), so a
    stored priority is an upper bound: the top is re-validated against the exact
    count and first position (the first live entry of the pair's sorted position
    list; stale entries before it are cut off) and re-pushed if lower. Each pair
    has at most one heap entry (none if it starts below ``min_count``; new pairs
    seen once wait outside the heap until the best count is 1). A merge
    visits the pair's position list once and gathers the new pairs' positions per
    neighbour token (exact lists: when sites are adjacent, the ``(new, a)`` pairs
    the next site ended are filtered out after the loop); the ended pairs' counts
    then fall in bulk, one update per neighbour token, from those lists' lengths,
    and each new pair is pushed once.

    Costs: O(n) to count (n tokens); per merge O(entries in the pair's list +
    new pairs x log heap). Every position list entry is created once and read or
    cut at most once, so all merges together cost O(n + pairs created x log heap
    + re-validations x log heap).
    """
    vals, nxt, prv = run.vals, run.nxt, run.prv
    n = len(vals)
    counts: dict[int, int] = {}
    lists: dict[int, list[int]] = {}
    if n >= 2:
        # Tokens are bytes here: count under small keys (a << 8 | b), pack once per pair.
        keys = list(map(or_, map(lshift, vals[: n - 1], repeat(8)), vals[1:]))
        for s in run._starts[1:]:
            keys[s - 1] = -1  # the last token of a chunk has no pair
        grouped: defaultdict[int, list[int]] = defaultdict(list)
        for i, k in enumerate(keys):
            grouped[k].append(i)
        grouped.pop(-1, None)
        lists = {((k >> 8) << PAIR_SHIFT) | (k & 255): lst for k, lst in grouped.items()}
        counts = {k: len(lst) for k, lst in lists.items()}
        del keys, grouped
    # Positions of each pair, sorted; a new pair seen once maps to its one position (an
    # int, not a list: fewer objects for the garbage collector to track and traverse).
    index: dict[int, list[int] | int] = dict(lists)
    run.fused_index = index
    # A sentinel after the last position: vals[nxt[i]] reads it when nxt[i] == -1.
    vals.append(-2)
    shift = max(1, n).bit_length() + 1
    kbits = KEY_BITS
    kmask = KEY_MASK
    pmask = PAIR_MASK
    if leftmost:
        heap = [
            ((lists[k][0] - (c << shift)) << kbits) | k for k, c in counts.items() if c >= min_count
        ]
    else:
        heap = [(-c << kbits) | k for k, c in counts.items() if c >= min_count]
    heapify(heap)
    counts_get = counts.get
    add = vocab.add
    # New pairs seen once wait in `ones` (not the heap) while a pair counted more often
    # is left: they can only win once the best count is 1, and most end before that.
    defer = min_count <= 1
    ones: list[int] = []
    ones_append = ones.append
    done = 0
    while done < num_merges:
        # 1. select: re-validate the top until its stored priority is exact.
        while True:
            if heap:
                e = heap[0]
                pk = e & kmask
                c = counts_get(pk, 0)
                if c < min_count:
                    heappop(heap)
                    continue
                if leftmost:
                    a = pk >> PAIR_SHIFT
                    b = pk & pmask
                    lst = index[pk]
                    if isinstance(lst, int):
                        pos = lst  # its only occurrence, live as c >= 1
                    elif vals[lst[0]] == a and vals[nxt[lst[0]]] == b:
                        pos = lst[0]
                    else:
                        s = 1
                        for pos in islice(lst, 1, None):
                            if vals[pos] == a and vals[nxt[pos]] == b:
                                break
                            s += 1
                        del lst[:s]
                    fresh = pos - (c << shift)
                else:
                    fresh = -c
                if fresh != e >> kbits:
                    heapreplace(heap, (fresh << kbits) | pk)
                    continue
                if c > 1 or not ones:
                    heappop(heap)
                    break
            elif not ones:
                return
            # The best count is 1 now (or the heap is empty): the waiting pairs join it.
            for k in ones:
                if counts[k]:
                    first = index[k]  # an int: the pair was seen once
                    if not isinstance(first, int):  # pragma: no cover - never a list
                        first = first[0]
                    heap.append(
                        ((first - (1 << shift)) << kbits) | k if leftmost else (-1 << kbits) | k
                    )
            heapify(heap)
            ones.clear()
            defer = False
        a = pk >> PAIR_SHIFT
        b = pk & pmask
        new = add(a, b)

        # 2. merge every live site left to right, gathering the new pairs by neighbour.
        left_new: defaultdict[int, list[int]] = defaultdict(list)  # (new, qv): positions
        right_new: defaultdict[int, list[int]] = defaultdict(list)  # (pv, new): positions
        sites = index.pop(pk)
        for i in (sites,) if isinstance(sites, int) else sites:
            if vals[i] != a:
                continue
            j = nxt[i]
            if vals[j] != b:
                continue
            p = prv[i]
            if p >= 0:
                # vals[p] is new if p was the previous site: the pair is (new, new) then.
                right_new[vals[p]].append(p)
            q = nxt[j]
            if q >= 0:
                left_new[vals[q]].append(i)
                prv[q] = i
            vals[i] = new
            vals[j] = -1
            nxt[i] = q
        popped = 0
        if new in right_new:
            # Adjacent sites: each (new, a) made by one site and ended by the next one is
            # still in left_new[a]; keep only those whose right token is still a.
            popped = len(right_new[new])
            kept = [x for x in left_new[a] if vals[nxt[x]] == a]
            left_new[a] = kept

        # 3. count changes by neighbour, in bulk: each (pv, a) ended once per entry of
        # right_new[pv] (pv != new), each (b, qv) once per entry of left_new[qv] plus, for
        # qv == a, once per (new, a) popped, which is once per entry of right_new[new].
        # Then the new pairs: count, index and push each once.
        hi = new << PAIR_SHIFT
        bhi = b << PAIR_SHIFT
        for on_left, side in ((True, right_new), (False, left_new)):
            for v, lst in side.items():
                c2 = len(lst)
                if on_left:  # (v, a) ended, (v, new) made
                    if v != new:
                        counts[(v << PAIR_SHIFT) | a] -= c2
                    k = (v << PAIR_SHIFT) | new
                else:  # (b, v) ended, (new, v) made
                    counts[bhi | v] -= c2 + popped if v == a else c2
                    if not c2:
                        continue
                    k = hi | v
                counts[k] = c2
                index[k] = lst if c2 > 1 else lst[0]
                if c2 >= min_count:
                    if c2 == 1 and defer:
                        ones_append(k)
                    elif leftmost:
                        heappush(heap, ((lst[0] - (c2 << shift)) << kbits) | k)
                    else:
                        heappush(heap, (-c2 << kbits) | k)
        del counts[pk]  # after the bulk changes, which touch it when a == b
        done += 1
        yield a, b, new, c


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
