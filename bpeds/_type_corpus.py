"""Type mode: unique pre-tokens with counts, a lazy pair -> types index (see bpeds.corpus)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator
from heapq import heapify, heappop, heappush
from itertools import pairwise
from operator import add
from typing import TYPE_CHECKING, Any

from bpeds._corpus_base import (
    KEY_BITS,
    KEY_MASK,
    Chunk,
    Counting,
    Initial,
    MergeDeltas,
    _as_bytes,
    _check_counting,
    _groups_for,
    count_pairs,
)
from bpeds.structures.compaction import ThresholdCompaction
from bpeds.structures.lazy_index import LazyIndex
from bpeds.structures.protocols import CompactionPolicy
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT

#: The fused loop's heap is rebuilt from the counts once it holds more than
#: ``2 * live entries + HEAP_SLACK`` entries (dead ones are the rest).
HEAP_SLACK = 1024

#: The fused loop stores token ids as characters: it runs while every id is below this.
CHAR_IDS = 0x110000

if TYPE_CHECKING:
    from bpeds.scoring.ties import TieRule
    from bpeds.vocab import Vocab

__all__ = ["TypeCorpus"]


class TypeCorpus:
    """Type mode: unique chunks with counts, a lazy pair -> types index.

    ``TypeCorpus(chunks)`` counts equal chunks (same bytes and group) as one
    type; types are numbered in order of first appearance, which is what makes
    the ``leftmost`` tie rule agree with sequence mode. ``TypeCorpus.from_counts``
    takes ``(chunk, count)`` pairs directly (a pre-counted corpus). ``policy``: the
    compaction policy of the generic loop's pair index (default
    ``ThresholdCompaction()``); the fused frequency loop has no use for one (see
    :meth:`_TypeRun.frequency_merges`).

    >>> c = TypeCorpus([b"low", b"low", b"lower"])
    >>> c.num_types, c.num_tokens
    (2, 11)
    """

    def __init__(
        self,
        chunks: Iterable[Chunk],
        groups: Iterable[int] | None = None,
        *,
        policy: CompactionPolicy[int] | None = None,
    ) -> None:
        if groups is None:
            # Count first, convert once per distinct chunk: most chunks repeat.
            raw = Counter(c if type(c) is bytes else _as_bytes(c) for c in chunks)
            raw.pop(b"", None)
            self._init_types(((c, n, 0) for c, n in raw.items()), policy)
            return
        chunk_list = [_as_bytes(c) for c in chunks]
        group_list = _groups_for(groups, len(chunk_list))
        counts: dict[tuple[int, bytes], int] = {}
        for c, g in zip(chunk_list, group_list, strict=True):
            if c:
                counts[(g, c)] = counts.get((g, c), 0) + 1
        self._init_types(((c, n, g) for (g, c), n in counts.items()), policy)

    @classmethod
    def from_counts(
        cls,
        counts: Iterable[tuple[Chunk, int]] | Iterable[tuple[Chunk, int, int]],
        *,
        policy: CompactionPolicy[int] | None = None,
    ) -> TypeCorpus:
        """A corpus from ``(chunk, count)`` or ``(chunk, count, group)`` items, in order.

        Equal chunks of one group are added together. Complexity: O(total bytes).
        """
        self = cls.__new__(cls)
        # Group-0 types are keyed by their bytes alone (no tuple per item: the common
        # case is millions of items of one group); others by (group, bytes). One dict
        # keeps the order of first appearance across groups.
        merged: dict[bytes | tuple[int, bytes], int] = {}
        get = merged.get
        for item in counts:
            if len(item) == 2:
                chunk, n = item
                key: bytes | tuple[int, bytes] = chunk if type(chunk) is bytes else _as_bytes(chunk)
                empty = not key
            elif len(item) == 3:
                chunk, n, g = item
                _groups_for([g], 1)
                raw = _as_bytes(chunk)
                key = (g, raw) if g else raw
                empty = not raw
            else:
                raise ValueError(
                    f"an item is (chunk, count) or (chunk, count, group), got {len(item)} values"
                )
            if not isinstance(n, int) or n < 1:
                raise ValueError(f"a type's count must be an int >= 1, got {n!r}")
            if not empty:
                merged[key] = get(key, 0) + n

        def items() -> Iterator[tuple[bytes, int, int]]:
            for k, n in merged.items():
                if isinstance(k, bytes):
                    yield k, n, 0
                else:
                    yield k[1], n, k[0]

        self._init_types(items(), policy)
        return self

    @classmethod
    def _from_pieces(cls, pieces: dict[str, int]) -> TypeCorpus:
        """A group-0 corpus from distinct non-empty pieces with counts >= 1, in order.

        For :func:`bpeds.train`, whose counts are built that way: nothing to check
        or add together (UTF-8 keeps distinct strings distinct). O(total length).
        """
        self = cls.__new__(cls)
        self._set_types([p.encode("utf-8") for p in pieces], list(pieces.values()), None, None)
        return self

    def _init_types(
        self, items: Iterable[tuple[bytes, int, int]], policy: CompactionPolicy[int] | None
    ) -> None:
        chunks: list[bytes] = []
        counts: list[int] = []
        groups: list[int] = []
        for c, n, g in items:
            chunks.append(c)
            counts.append(n)
            groups.append(g)
        self._set_types(chunks, counts, groups, policy)

    def _set_types(
        self,
        chunks: list[bytes],
        counts: list[int],
        groups: list[int] | None,
        policy: CompactionPolicy[int] | None,
    ) -> None:
        """Store the types (``groups=None``: all in group 0)."""
        self._chunks = chunks
        self._counts = counts
        self._groups = [0] * len(chunks) if groups is None else groups
        self._policy = policy
        self.num_groups = max(self._groups, default=0) + 1
        self._stride = max(map(len, self._chunks), default=0) + 1

    @property
    def num_types(self) -> int:
        """Number of distinct (chunk, group) types."""
        return len(self._chunks)

    @property
    def num_tokens(self) -> int:
        """Tokens in the original corpus (bytes, weighted by type counts)."""
        return sum(len(c) * n for c, n in zip(self._chunks, self._counts, strict=True))

    # -- the run-time interface the driver uses ---------------------------------

    def start(
        self, counting: Counting, want_groups: bool, length: Callable[[int], int]
    ) -> _TypeRun:
        """Fresh working state for one training run (``length``: token -> byte length)."""
        _check_counting(counting)
        return _TypeRun(self, counting, want_groups, length)


def _has_pair(w: list[int], a: int, b: int) -> bool:
    """Does ``w`` hold ``a`` immediately followed by ``b``? O(len(w))."""
    index = w.index
    last = len(w) - 1
    try:
        i = index(a)
        while i < last:
            if w[i + 1] == b:
                return True
            i = index(a, i + 1)
    except ValueError:
        return False
    return False


def _merge_sites(
    types: Iterable[int],
    words: list[list[int]],
    counts: list[int],
    a: int,
    b: int,
    new: int,
    d: defaultdict[int, int],
    fresh: defaultdict[int, list[int]],
) -> int:
    """Merge every non-overlapping ``(a, b)``, left to right, in each listed type.

    Sites are found with ``list.index`` jumps (C speed); count changes are
    windowed (each site changes only the pairs next to it) and netted into
    ``d``, weighted by the type's count; each type that gains a pair is listed
    under that pair in ``fresh``. A listed type that no longer holds the pair
    (a stale or repeated index entry) costs one scan. Returns the merge sites
    weighted by type counts. The pair's own count is left to the caller.

    Complexity: O(total length of the listed types) in C, plus O(1) Python work
    per occurrence of ``a`` in them.
    """
    total = 0
    ls, rs = new << PAIR_SHIFT, b << PAIR_SHIFT
    for t in types:
        w = words[t]
        last = len(w) - 1
        try:
            j = w.index(a)
        except ValueError:
            continue
        c = counts[t]
        res: list[int] | None = None
        start = 0
        sites = 0
        while j < last:
            if w[j + 1] == b:
                if res is None:
                    res = w[:j]
                elif start < j:
                    res.extend(w[start:j])
                if res:
                    p = res[-1] << PAIR_SHIFT
                    d[p | a] -= c
                    k = p | new
                    d[k] += c
                    fresh[k].append(t)
                if j + 2 <= last:
                    q = w[j + 2]
                    d[rs | q] -= c
                    k = ls | q
                    d[k] += c
                    fresh[k].append(t)
                res.append(new)
                sites += 1
                start = j + 2
                if start > last:
                    break
                try:
                    j = w.index(a, start)
                except ValueError:
                    break
            else:
                try:
                    j = w.index(a, j + 1)
                except ValueError:
                    break
        if res is None:
            continue
        if start <= last:
            res.extend(w[start:])
        words[t] = res
        total += sites * c
    return total


class _TypeRun:
    """One run's mutable state over a :class:`TypeCorpus`."""

    def __init__(
        self,
        corpus: TypeCorpus,
        counting: Counting,
        want_groups: bool,
        length: Callable[[int], int],
    ) -> None:
        self.counting = counting
        self.length = length
        self.chunks = corpus._chunks
        #: The types as id lists, made by :meth:`initial` (the fused loop keeps its own).
        self.words: list[list[int]] = []
        self.counts = corpus._counts
        self.groups = corpus._groups
        self.num_groups = corpus.num_groups
        self.stride = corpus._stride
        #: Every position :meth:`first_position` returns is below this.
        self.position_limit = max(1, len(self.chunks) * self.stride)
        self.want_groups = want_groups
        self.overlapping = counting == "overlapping"
        words = self.words

        def is_live(key: int, t: int) -> bool:
            return _has_pair(words[t], key >> PAIR_SHIFT, key & PAIR_MASK)

        policy = corpus._policy if corpus._policy is not None else ThresholdCompaction()
        self.index: LazyIndex[int, int] = LazyIndex(is_live, policy)

    def initial(self) -> Initial:
        """Pair counts, unigram counts, per-group pair counts and per-group tokens.

        Complexity: O(total length of the types).
        """
        if not self.words:
            self.words.extend(map(list, self.chunks))
        ngroups = self.num_groups
        gtokens = [0] * ngroups
        uni: defaultdict[int, int] = defaultdict(int)
        for w, c, g in zip(self.words, self.counts, self.groups, strict=True):
            gtokens[g] += len(w) * c
            for x in w:
                uni[x] += c
        gpairs: dict[int, list[int]] = {}
        # Overlapping counts without groups (the common case) read the pairs directly;
        # otherwise each type's pairs are counted (non-overlapping, per group).
        direct = self.overlapping and not self.want_groups
        where: defaultdict[int, list[int]] = defaultdict(list)
        acc: defaultdict[int, int] = defaultdict(int)
        for t, w in enumerate(self.words):
            c = self.counts[t]
            if direct:
                for k in [(x << PAIR_SHIFT) | y for x, y in pairwise(w)]:
                    acc[k] += c
                    where[k].append(t)
                continue
            g = self.groups[t]
            for k, n in count_pairs(w, self.counting).items():
                acc[k] += n * c
                where[k].append(t)
                if self.want_groups:
                    gp = gpairs.get(k)
                    if gp is None:
                        gp = gpairs[k] = [0] * ngroups
                    gp[g] += n * c
        # Every entry is live now: load, so the policy does not compact these lists.
        load = self.index.load
        for k, ts in where.items():
            load(k, ts)
        return Initial(dict(acc), dict(uni), gpairs, gtokens)

    def merge(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """Merge every non-overlapping ``(a, b)``, left to right, in every type.

        Sites are found with ``list.index`` jumps (C speed), and count changes
        are windowed: each site changes only the pairs around it. New pairs'
        index entries are collected per key and appended once per key.

        Complexity: O(entries of the pair's index + length of the types holding it).
        """
        if not self.overlapping or self.want_groups:
            self._merge_recount(a, b, new, out)
            return
        pk = (a << PAIR_SHIFT) | b
        fresh: defaultdict[int, list[int]] = defaultdict(list)
        # After this merge the pair occurs nowhere, so its whole list is taken and dropped:
        # the merge checks each type itself, so no predicate call per entry is needed.
        index = self.index
        total = _merge_sites(index.take(pk), self.words, self.counts, a, b, new, out.pairs, fresh)
        if total:
            out.pairs[pk] -= total
            out.sites += total
        extend = index.extend
        for k, ts in fresh.items():
            extend(k, ts)

    def frequency_merges(
        self, num_merges: int, min_count: int, tie: TieRule, vocab: Vocab
    ) -> Iterator[tuple[int, int, int, int]] | None:
        """The fused frequency loop (see :meth:`bpeds.driver.MergeDriver.fused_loop`).

        Applies to overlapping counts without groups under a static tie rule
        (``smallest_ids``, with or without a byte order, ``lexicographic``) while
        every id fits in one character (``len(vocab) + num_merges <= CHAR_IDS``);
        returns None otherwise (``leftmost`` needs first positions: the generic
        loop has them). Yields ``(left, right, new_id, count)`` per merge. The run
        is consumed: use a fresh one for anything else.

        **Representation.** Each type is a ``str`` whose characters are token ids
        (``chr(id)``; bytes decode as Latin-1), so a pair is a two-character string
        and the C string operations do the scanning: ``pair in word`` skips a stale
        index entry, ``partition`` splits a type at its first site (a type with one
        site is its two sides joined by the new token), and ``replace`` merges every
        site of the others at once, left to right and non-overlapping, which is
        BPE's rule. (``partition`` and ``in`` take no argument tuple, unlike
        ``find``: measured cheaper.) The key order of two-character strings is the
        order of ``(left, right)``, so ``smallest_ids`` needs no tie key.

        **Counts.** A merge of ``(a, b)`` into ``n`` changes only pairs next to its
        sites: ``(x, a) -> (x, n)`` for the token ``x`` before a site and
        ``(b, y) -> (n, y)`` for the one after. The loop lists each visited type
        under its neighbour (twice for two sites), then per distinct neighbour
        adds the types' counts in C (``sum(map(...))``) and moves that weight from
        the old pair to the new one. Two adjacent sites (``abab``) are netted by
        taking the left neighbour of the second from the merged text, ``n``: its
        ``-(n, a) + (n, n)`` cancels the ``+(n, a)`` of the first site's right side.

        **Index.** A pair's list of types is made once, whole (by the first pass,
        or by the merge that makes the pair's newest token), and never extended:
        a pair of two older tokens gains no occurrence later. So the lists live in
        a plain dict; each is taken whole when its pair merges, and entries made
        stale meanwhile cost one ``in`` test each. The corpus's compaction policy
        (which acts on appends) has nothing to act on here. Entries in all: at
        most the first pass's pairs plus two per merge site.

        **Selection** is exact by the generic loop's argument: a C ``heapq`` of
        entries ordered like ``(-count, left, right)`` (one int; with a tie key,
        ``(-count, tie(key), key)`` tuples) gets an entry whenever a pair's count
        rises (here: when the pair is made), so every pair's best entry stores an
        upper bound of its count; a popped entry whose count fell is pushed back
        with the current count, and the first popped entry that is current is the
        maximum (ties by the rule, which the entry order implements). A pair born
        with fewer bits than the current count minus one (below half of it) waits
        in a bucket per bit length instead: its count can only fall, so it stays
        below ``2 ** bits``, and a selected count under ``2 ** top bucket`` sends
        that bucket into the heap (at current counts) before anything is chosen.
        Most such pairs never get there. The heap is rebuilt from the counts (O(n),
        emptying the buckets) once it holds more than ``2 * live pairs +
        HEAP_SLACK`` entries.

        Complexity: per merge, O(index entries of the pair + length of the
        types holding it) in C, O(1) Python work per site and per distinct
        neighbour, and O(log n) per new pair.
        """
        if tie.dynamic or not self.overlapping or self.want_groups:
            return None
        if len(vocab) + num_merges > CHAR_IDS:
            return None
        return self._frequency_loop(num_merges, min_count, tie.heap_tie(vocab), vocab)

    def _frequency_loop(
        self,
        num_merges: int,
        min_count: int,
        tie_key: Callable[[int], Any] | None,
        vocab: Vocab,
    ) -> Iterator[tuple[int, int, int, int]]:
        words = [c.decode("latin-1") for c in self.chunks]
        wcount = self.counts.__getitem__
        # -- first pass: each pair's types, one entry per occurrence; its count is the
        # sum of those types' counts (overlapping: "aaa" lists its type twice for "aa").
        first: defaultdict[str, list[int]] = defaultdict(list)
        for t, w in enumerate(words):
            for k in map(add, w, w[1:]):
                first[k].append(t)
        where: dict[str, list[int]] = first  # (only pop and store from here on)
        counts = {k: sum(map(wcount, ts)) for k, ts in where.items()}

        # Heap entries: without a tie key one int, ``packed pair - (count << KEY_BITS)``
        # (ordered like (-count, left, right), and much cheaper to compare than a tuple;
        # ``>> KEY_BITS`` gives -count back, ``& KEY_MASK`` the pair); with one,
        # ``(-count, tie(packed), packed)``.
        plain = tie_key is None
        shift = KEY_BITS

        def entry(pk: int, c: int) -> Any:
            if tie_key is None:
                return pk - (c << shift)
            return (-c, tie_key(pk), pk)

        def packed(k: str) -> int:
            return (ord(k[0]) << PAIR_SHIFT) | ord(k[1])

        def rebuilt() -> list[Any]:
            fresh = [entry(packed(k), c) for k, c in counts.items() if c >= min_count]
            heapify(fresh)
            for waiting in pending:
                waiting.clear()
            return fresh

        # A new pair born below half the count of the merge that made it waits in
        # pending[j] (j: its birth count's bit length) instead of the heap: most never
        # come near the top. Its count only falls (a pair gains no occurrence after its
        # birth), so it stays below 2 ** j; a popped count under 2 ** top_bucket lets
        # that bucket into the heap first (at the pairs' current counts).
        most = max(counts.values(), default=0)
        pending: list[list[str]] = [[] for _ in range(most.bit_length() + 1)]
        top_bucket = 0

        def let_in(j: int) -> int:
            """Push bucket j's pairs at their current counts; return the next top bucket."""
            for k2 in pending[j]:
                c2 = counts.get(k2, 0)
                if c2 >= min_count:
                    heappush(heap, entry(packed(k2), c2))
            pending[j].clear()
            while j and not pending[j]:
                j -= 1
            return j

        heap = rebuilt()
        limit = 2 * len(heap) + HEAP_SLACK
        lefts: defaultdict[str, list[int]] = defaultdict(list)
        rights: defaultdict[str, list[int]] = defaultdict(list)
        take = where.pop
        add_token = vocab.add
        done = 0
        while done < num_merges:
            if not heap:
                if not top_bucket:
                    break
                top_bucket = let_in(top_bucket)
                continue
            top = heappop(heap)
            if plain:
                stored, pk = -(top >> shift), top & KEY_MASK
            else:
                stored, pk = -top[0], top[-1]
            left, right = pk >> PAIR_SHIFT, pk & PAIR_MASK
            a, b = chr(left), chr(right)
            k = a + b
            c = counts.get(k, 0)
            if c != stored:
                # Stale: the count fell since (a count that rose has a newer entry above).
                if c >= min_count:
                    heappush(heap, entry(pk, c))
                continue
            if c.bit_length() <= top_bucket:
                # A waiting pair may reach c: let the top bucket in, then select again.
                heappush(heap, top)
                top_bucket = let_in(top_bucket)
                continue
            low = c.bit_length() - 1  # a birth count of fewer bits is below c / 2
            new = add_token(left, right)
            n = chr(new)
            high = new << PAIR_SHIFT
            # -- merge: each visited type listed under its neighbours (if it has them).
            lefts.clear()
            rights.clear()
            for t in take(k):
                w = words[t]
                if k not in w:
                    continue  # stale entry, or a repeat of a type already merged
                head, _, tail = w.partition(k)
                if k not in tail:  # one site (the common case)
                    words[t] = head + n + tail
                    if head:
                        lefts[head[-1]].append(t)
                    if tail:
                        rights[tail[0]].append(t)
                    continue
                words[t] = w.replace(k, n)
                i = len(head)
                last = len(w) - 2
                end = -1
                while i >= 0:
                    if i:
                        lefts[n if i == end else w[i - 1]].append(t)
                    if i < last:
                        rights[w[i + 2]].append(t)
                    end = i + 2
                    i = w.find(k, end)
            # -- move each neighbour's weight to the new pair; a new pair's list is
            # its types. Right side first: (n, a) of adjacent sites exists before the
            # left side's (n, a) loses it.
            for side, on_right in ((rights, True), (lefts, False)):
                for z, ts in side.items():
                    weight = sum(map(wcount, ts)) if len(ts) > 1 else wcount(ts[0])
                    k2 = b + z if on_right else z + a
                    left_over = counts[k2] - weight
                    if left_over:
                        counts[k2] = left_over
                    else:
                        del counts[k2]
                    k2 = n + z if on_right else z + n
                    counts[k2] = weight
                    where[k2] = ts
                    if weight >= min_count:
                        j = weight.bit_length()
                        if j < low:
                            pending[j].append(k2)
                            if j > top_bucket:
                                top_bucket = j
                        else:
                            pk = high | ord(z) if on_right else (ord(z) << PAIR_SHIFT) | new
                            heappush(heap, pk - (weight << shift) if plain else entry(pk, weight))
            # The merged pair is gone everywhere ("aaa" took some of its count above).
            counts.pop(k, None)
            if len(heap) > limit:
                heap = rebuilt()
                top_bucket = 0
                limit = 2 * len(heap) + HEAP_SLACK
            done += 1
            yield left, right, new, c

    def _merge_recount(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """The general path (non-overlapping counts, per-group counts): recount each
        changed type before and after. O(length of the types holding the pair)."""
        pk = (a << PAIR_SHIFT) | b
        d = out.pairs
        words, counts, groups = self.words, self.counts, self.groups
        counting = self.counting
        want_groups = self.want_groups
        ngroups = self.num_groups
        add = self.index.add
        types = self.index.raw(pk)
        self.index.discard(pk)
        for t in types:
            w = words[t]
            res: list[int] = []
            n = len(w)
            i = 0
            sites = 0
            while i < n:
                x = w[i]
                if x == a and i + 1 < n and w[i + 1] == b:
                    sites += 1
                    res.append(new)
                    i += 2
                else:
                    res.append(x)
                    i += 1
            if not sites:
                continue
            words[t] = res
            c = counts[t]
            before = count_pairs(w, counting)
            after = count_pairs(res, counting)
            for k, v in before.items():
                d[k] = d.get(k, 0) - v * c
            for k, v in after.items():
                d[k] = d.get(k, 0) + v * c
                if (k >> PAIR_SHIFT) == new or (k & PAIR_MASK) == new:
                    add(k, t)
            out.sites += sites * c
            if want_groups:
                g = groups[t]
                out.group_sites[g] += sites * c
                gd = out.group_pairs
                for sign, table in ((1, after), (-1, before)):
                    for k, v in table.items():
                        row = gd.get(k)
                        if row is None:
                            row = gd[k] = [0] * ngroups
                        row[g] += sign * v * c

    def check(self) -> None:
        """The pair index's own invariants. O(index size)."""
        self.index.check()

    def first_position(self, pk: int) -> int | None:
        """Position of the pair's first occurrence: type id * stride + byte offset.

        Types are numbered by first appearance, so this orders occurrences as
        the chunk sequence does. O(entries of the pair's index + type lengths).
        """
        a, b = pk >> PAIR_SHIFT, pk & PAIR_MASK
        best: int | None = None
        for t in self.index.live(pk, unique=False):
            if best is None or t < best:
                best = t
        if best is None:
            return None
        w = self.words[best]
        off = 0
        for i in range(len(w) - 1):
            if w[i] == a and w[i + 1] == b:
                break
            off += self.length(w[i])
        return best * self.stride + off
