"""Type mode: unique pre-tokens with counts, a lazy pair -> types index (see bpeds.corpus)."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from operator import add

from bpeds.corpus.base import (
    Chunk,
    Counting,
    Initial,
    MergeDeltas,
    _as_bytes,
    _check_counting,
    _groups_for,
    _lose,
    _take,
    count_pairs,
)
from bpeds.errors import InvariantError
from bpeds.structures.compaction import ThresholdCompaction
from bpeds.structures.lazy_index import LazyIndex
from bpeds.structures.protocols import CompactionPolicy
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT

#: The strings representation stores token ids as characters: it serves while every
#: id is below this (a run converts itself to id lists when one is not).
CHAR_IDS = 0x110000

__all__ = ["TypeCorpus"]


class TypeCorpus:
    """Type mode: unique chunks with counts, a lazy pair -> types index.

    ``TypeCorpus(chunks)`` counts equal chunks (same bytes and group) as one
    type; types are numbered in order of first appearance, which is what makes
    the ``leftmost`` tie rule agree with sequence mode. ``TypeCorpus.from_counts``
    takes ``(chunk, count)`` pairs directly (a pre-counted corpus). ``policy``: the
    compaction policy of the id-list representations' pair index (default
    ``ThresholdCompaction()``); the strings representation of overlapping counts has
    no use for one (see :meth:`_TypeRun.merge`).

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

    @classmethod
    def from_token_counts(
        cls,
        items: Iterable[tuple[Sequence[int], int]],
        length: Callable[[int], int],
    ) -> TypeCorpus:
        """A corpus whose types start as token ids, not bytes: ``(ids, count)`` items,
        in order (equal sequences are added together). ``length(id)`` is a token's
        byte length (for positions: the ``leftmost`` rule orders occurrences by byte
        offset). For training that continues from an existing vocabulary: pass the
        same vocabulary to the driver (``MergeDriver(vocab=...)``).

        Ids must be below 1,114,112. Complexity: O(total tokens).

        >>> length = lambda t: 2 if t > 255 else 1
        >>> c = TypeCorpus.from_token_counts([([256, 99], 2), ([99], 1)], length)
        >>> c.num_types, c.num_tokens
        (2, 5)
        """
        merged: dict[str, int] = {}
        for ids, n in items:
            if not isinstance(n, int) or isinstance(n, bool) or n < 1:
                raise ValueError(f"a type's count must be an int >= 1, got {n!r}")
            if any(not 0 <= t < CHAR_IDS for t in ids):
                raise ValueError(f"token ids must be in 0..{CHAR_IDS - 1}, got {list(ids)!r}")
            key = "".join(map(chr, ids))
            if key:
                merged[key] = merged.get(key, 0) + n
        self = cls.__new__(cls)
        keys = list(merged)
        self._chunks = keys  # type: ignore[assignment]  # (strings of ids: see _tokens)
        self._counts = list(merged.values())
        self._groups = [0] * len(keys)
        self._policy = None
        self.num_groups = 1
        self._stride = max((sum(map(length, map(ord, k))) for k in keys), default=0) + 1
        self._tokens = True
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
        #: The types are strings of token ids (from_token_counts), not bytes.
        self._tokens = False

    @property
    def num_types(self) -> int:
        """Number of distinct (chunk, group) types."""
        return len(self._chunks)

    @property
    def num_tokens(self) -> int:
        """Tokens in the original corpus (bytes, weighted by type counts; for
        :meth:`from_token_counts`, the starting tokens)."""
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


def _merge_lists(
    types: Iterable[int],
    words: list[list[int]],
    counts: list[int],
    a: int,
    b: int,
    new: int,
    out: MergeDeltas,
    fresh: defaultdict[int, list[int]],
) -> None:
    """Merge every non-overlapping ``(a, b)``, left to right, in each listed type
    (id lists: the representation past :data:`CHAR_IDS`).

    Count changes go to ``out`` grouped by neighbour (see :class:`MergeDeltas`),
    weighted by the types' counts; each type that gains a pair is listed under it
    in ``fresh``. Sites are found with ``list.index`` jumps (C speed). A type
    listed twice is merged once. O(total length of the listed types) in C, plus
    O(1) Python work per occurrence of ``a`` in them.
    """
    total = 0
    born = out.born
    lost: dict[int, int] = {}
    ls, rs = new << PAIR_SHIFT, b << PAIR_SHIFT
    na = ls | a
    for t in dict.fromkeys(types):
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
                    x = res[-1] << PAIR_SHIFT
                    if x == ls:  # (new, a) of the previous, adjacent site
                        _take(born, na, c)
                    else:
                        lost[x | a] = lost.get(x | a, 0) + c
                    born[x | new] = born.get(x | new, 0) + c
                    fresh[x | new].append(t)
                if j + 2 <= last:
                    q = w[j + 2]
                    lost[rs | q] = lost.get(rs | q, 0) + c
                    born[ls | q] = born.get(ls | q, 0) + c
                    fresh[ls | q].append(t)
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
    out.sites += total
    _lose(out, lost)


class _TypeRun:
    """One run's mutable state over a :class:`TypeCorpus`.

    Three representations behind :meth:`merge`, chosen by the run's needs:

    - **strings** (overlapping counts, no groups, every id below
      :data:`CHAR_IDS`): each type is a ``str`` whose characters are token ids
      (bytes decode as Latin-1), so a pair is a two-character string and C string
      operations do the scanning (``in``, ``partition``, ``replace``); the pair
      index is a plain dict from two-character strings to type lists, each made
      whole once (see :meth:`merge`);
    - **id lists** with a :class:`~bpeds.structures.LazyIndex` (the same counts
      once an id no longer fits a character: the strings are converted then);
    - **recount** (non-overlapping counts, per-group counts): id lists, each
      changed type recounted before and after.
    """

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
        self.tokens = corpus._tokens
        self.counts = corpus._counts
        self.groups = corpus._groups
        self.num_groups = corpus.num_groups
        self.stride = corpus._stride
        #: Every position :meth:`first_position` returns is below this.
        self.position_limit = max(1, len(self.chunks) * self.stride)
        self.want_groups = want_groups
        self.overlapping = counting == "overlapping"
        #: The types as strings of id characters (the strings representation), or None.
        self.strings: list[str] | None = None
        #: Two-character pair -> types holding it (entries may be stale or repeated).
        self.where: dict[str, list[int]] = {}
        #: Report unigram counts and weighted merge sites (``MergeDeltas.sites``); the
        #: driver turns this off when its score reads neither unigram counts nor totals.
        self.count_sites = True
        #: Tokens can be split and made again (loop variants): see start_holders().
        self.rewrites = True
        #: Token -> types that held it when it was made (entries may be stale or
        #: repeated), for :meth:`split`; None (not kept) unless the driver asks.
        self.holders: dict[int, list[int]] | None = None
        #: The types as id lists (the other representations).
        self.words: list[list[int]] = []
        words = self.words

        def is_live(key: int, t: int) -> bool:
            return _has_pair(words[t], key >> PAIR_SHIFT, key & PAIR_MASK)

        policy = corpus._policy if corpus._policy is not None else ThresholdCompaction()
        self.index: LazyIndex[int, int] = LazyIndex(is_live, policy)

    def initial(self) -> Initial:
        """Pair counts, unigram counts, per-group pair counts and per-group tokens.

        Complexity: O(total length of the types).
        """
        counts = self.counts
        ngroups = self.num_groups
        gtokens = [0] * ngroups
        uni: defaultdict[int, int] = defaultdict(int)
        for chunk, c, g in zip(self.chunks, counts, self.groups, strict=True):
            gtokens[g] += len(chunk) * c
        if self.count_sites:  # (token statistics: only for scores that read them)
            for chunk, c in zip(self.chunks, counts, strict=True):
                for x, n in Counter(chunk).items():
                    uni[ord(x) if isinstance(x, str) else x] += n * c
        gpairs: dict[int, list[int]] = {}
        if self.overlapping:
            # Each pair's types, one entry per occurrence ("aaa" lists its type twice
            # for "aa"); its count is the sum of those types' counts (per group too).
            strings = self.strings = (
                list(self.chunks)  # type: ignore[arg-type]
                if self.tokens
                else [c.decode("latin-1") for c in self.chunks]
            )
            first: defaultdict[str, list[int]] = defaultdict(list)
            for t, w in enumerate(strings):
                for k in map(add, w, w[1:]):
                    first[k].append(t)
            self.where = first
            wcount = counts.__getitem__
            pairs = {
                (ord(k[0]) << PAIR_SHIFT) | ord(k[1]): sum(map(wcount, ts))
                for k, ts in first.items()
            }
            if self.want_groups:
                for k, ts in first.items():
                    gpairs[(ord(k[0]) << PAIR_SHIFT) | ord(k[1])] = self._group_row(ts)
            return Initial(pairs, dict(uni), gpairs, gtokens)
        if self.tokens:
            self.words.extend([[ord(x) for x in str(c)] for c in self.chunks])
        else:
            self.words.extend(map(list, self.chunks))
        where: defaultdict[int, list[int]] = defaultdict(list)
        acc: defaultdict[int, int] = defaultdict(int)
        for t, ids in enumerate(self.words):
            c = counts[t]
            g = self.groups[t]
            for k, n in count_pairs(ids, self.counting).items():
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

    def _group_row(self, ts: list[int]) -> list[int]:
        """Per group, the summed counts of the listed types (an entry per occurrence)."""
        row = [0] * self.num_groups
        groups, counts = self.groups, self.counts
        for t in ts:
            row[groups[t]] += counts[t]
        return row

    def _group_changes(
        self,
        out: MergeDeltas,
        rights: dict[str, list[int]],
        lefts: dict[str, list[int]],
        a: int,
        b: int,
        new: int,
    ) -> None:
        """Per-group changes of a strings merge: each neighbour's types moved their
        counts from ``(b, z)`` to ``(new, z)`` and from ``(z, a)`` to ``(z, new)``.
        O(entries of the neighbour lists)."""
        gp = out.group_pairs
        size = self.num_groups

        def move(key: int, row: list[int], sign: int) -> None:
            cur = gp.get(key)
            if cur is None:
                cur = gp[key] = [0] * size
            for g, v in enumerate(row):
                cur[g] += sign * v

        for z, ts in rights.items():
            row = self._group_row(ts)
            move((new << PAIR_SHIFT) | ord(z), row, 1)
            move((b << PAIR_SHIFT) | ord(z), row, -1)
        for z, ts in lefts.items():
            row = self._group_row(ts)
            move((ord(z) << PAIR_SHIFT) | new, row, 1)
            move((ord(z) << PAIR_SHIFT) | a, row, -1)  # ((new, a): born above, taken back)

    def _to_lists(self) -> None:
        """Leave the strings representation (an id will not fit a character). O(total)."""
        self.words.extend([list(map(ord, w)) for w in self.strings or ()])
        for k, ts in self.where.items():
            self.index.extend((ord(k[0]) << PAIR_SHIFT) | ord(k[1]), ts)
        self.strings = None
        self.where = {}

    def merge(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """Merge every non-overlapping ``(a, b)``, left to right, in every type, and
        report the count changes grouped by neighbour (see :class:`MergeDeltas`).

        **Strings.** The pair is a two-character string ``k``; its type list is
        taken whole (the pair occurs nowhere after this merge). A listed type that
        no longer holds ``k`` (a stale entry, or a repeat: a type is listed once per
        occurrence, and the first visit merges them all) is skipped by ``k in w``
        (a repeat is skipped before any scan, so a long type costs one scan per
        merge, not one per occurrence). A type with one site is its two sides
        around the new token (``partition``); the others are merged by ``replace``
        (left to right, non-overlapping: BPE's rule). Each visited type is listed
        under its neighbour tokens; per distinct neighbour the types' counts are
        added in C (``sum(map(...))``), and that list becomes the new pair's index
        list, made whole here and never extended (a pair of two older tokens gains
        no occurrence later).

        Complexity: O(entries of the pair's list + length of the types holding
        it) in C; O(1) Python work per type, per site and per distinct neighbour.
        """
        if self.strings is not None and new >= CHAR_IDS:
            self._to_lists()
        if self.strings is None:
            if not self.overlapping or self.want_groups:
                self.merge_into(a, b, new, out)  # (recounts each changed type)
                return
            fresh: defaultdict[int, list[int]] = defaultdict(list)
            types = self.index.take((a << PAIR_SHIFT) | b)
            _merge_lists(types, self.words, self.counts, a, b, new, out, fresh)
            extend = self.index.extend
            for k2, ts in fresh.items():
                extend(k2, ts)
            if self.holders is not None:  # (stale entries are skipped on use)
                self.holders[new] = list(types)
            return
        words = self.strings
        where = self.where
        k = chr(a) + chr(b)
        n = chr(new)
        lefts: defaultdict[str, list[int]] = defaultdict(list)
        rights: defaultdict[str, list[int]] = defaultdict(list)
        count_sites = self.count_sites
        singles: list[int] = []  # types with one site (when sites are counted)
        multi = 0  # weighted sites of the others
        gsites = out.group_sites if self.want_groups else None
        groups = self.groups
        hold: list[int] | None = None if self.holders is None else []
        last_t = -1
        for t in where.pop(k, ()):
            if t == last_t:
                continue  # a repeat (one type's entries in a list are adjacent)
            last_t = t
            w = words[t]
            if k not in w:
                continue  # stale entry
            head, _, tail = w.partition(k)
            if k not in tail:  # one site (the common case)
                words[t] = head + n + tail
                if head:
                    lefts[head[-1]].append(t)
                if tail:
                    rights[tail[0]].append(t)
                if count_sites:
                    singles.append(t)
                if gsites is not None:
                    gsites[groups[t]] += self.counts[t]
                if hold is not None:
                    hold.append(t)
                continue
            merged = words[t] = w.replace(k, n)
            if gsites is not None:
                gsites[groups[t]] += self.counts[t] * (len(w) - len(merged))
            if hold is not None:
                hold.append(t)
            if count_sites:
                multi += self.counts[t] * (len(w) - len(merged))
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
        if gsites is not None:
            self._group_changes(out, rights, lefts, a, b, new)
        wcount = self.counts.__getitem__
        born, lost, counts = out.born, out.lost, out.counts
        hi, lo = new << PAIR_SHIFT, b << PAIR_SHIFT
        for z, ts in rights.items():
            weight = sum(map(wcount, ts)) if len(ts) > 1 else wcount(ts[0])
            where[n + z] = ts
            zi = ord(z)
            born[hi | zi] = weight
            key = lo | zi
            if counts is not None:
                c = counts[key] - weight
                if c:
                    counts[key] = c
                else:
                    del counts[key]
            if lost is not None:
                lost[key] = weight
        for z, ts in lefts.items():
            weight = sum(map(wcount, ts)) if len(ts) > 1 else wcount(ts[0])
            where[z + n] = ts
            zi = ord(z) << PAIR_SHIFT
            born[zi | new] = weight
            key = zi | a
            if z == n:  # (new, a) of an adjacent site, made above: never in the table
                _take(born, key, weight)
                continue
            if counts is not None:
                c = counts[key] - weight
                if c:
                    counts[key] = c
                else:
                    del counts[key]
            if lost is not None:
                lost[key] = lost.get(key, 0) + weight
        if self.count_sites:
            out.sites += sum(map(wcount, singles)) + multi
        if hold is not None and self.holders is not None:
            self.holders[new] = hold

    def split(self, token: int, parts: tuple[int, ...], out: MergeDeltas) -> None:
        """Replace every occurrence of ``token`` by ``parts``, in every type, and
        report the count changes (``out.pairs``; ``out.sites``: the occurrences,
        weighted; per group, ``out.group_sites`` is minus the tokens gained).

        Needs :attr:`holders` (:meth:`start_holders` before the first merge).
        Complexity: O(length of the types that held ``token``).
        """
        holders = self.holders
        if holders is None:
            raise ValueError("split needs the run's token holders: call start_holders() first")
        if self.strings is not None and self.want_groups:
            self._to_lists()  # (the strings rewrite keeps no per-group counts)
        self._rewrite(holders.pop(token, []), (token,), parts, out)

    def merge_into(self, a: int, b: int, new: int, out: MergeDeltas) -> None:
        """:meth:`merge` into an id that may already occur (a token made again by
        another pair, or one removed and made again): every non-overlapping
        ``(a, b)``, left to right, becomes ``new``; changes as :meth:`split` reports
        them (``out.sites``: the sites). O(length of the types holding the pair)."""
        if self.strings is not None and (new >= CHAR_IDS or self.want_groups):
            self._to_lists()  # (the strings rewrite keeps no per-group counts)
        if self.strings is not None:
            types = self.where.pop(chr(a) + chr(b), [])
        else:
            pk = (a << PAIR_SHIFT) | b
            types = list(self.index.raw(pk))
            self.index.discard(pk)
        self._rewrite(types, (a, b), (new,), out)

    def _rewrite(
        self, types: list[int], find: tuple[int, ...], repl: tuple[int, ...], out: MergeDeltas
    ) -> None:
        """Replace every non-overlapping ``find``, left to right, by ``repl`` in the
        listed types (stale or repeated entries are skipped); recount each changed
        type before and after, list it under the pairs it gained and as a holder of
        the merged tokens of ``repl``. O(length of the listed types)."""
        holders = self.holders
        d = out.pairs
        counts, groups = self.counts, self.groups
        gained = len(repl) - len(find)
        merged_parts = [p for p in dict.fromkeys(repl) if p >= 256]
        if holders is not None:
            for p in merged_parts:
                holders.setdefault(p, [])
        strings = self.strings
        if strings is not None and max(repl) < CHAR_IDS:
            old, rep = "".join(map(chr, find)), "".join(map(chr, repl))
            where = self.where
            for t in dict.fromkeys(types):
                w = strings[t]
                if old not in w:
                    continue
                nw = strings[t] = w.replace(old, rep)
                occ = (len(nw) - len(w)) // gained if gained else w.count(old)
                c = counts[t]
                before = Counter(map(add, w, w[1:]))
                after = Counter(map(add, nw, nw[1:]))
                for k2, v in before.items():
                    dv = after.get(k2, 0) - v
                    if dv:
                        key = (ord(k2[0]) << PAIR_SHIFT) | ord(k2[1])
                        d[key] = d.get(key, 0) + dv * c
                for k2, v in after.items():
                    dv = v - before.get(k2, 0)
                    if dv > 0:
                        if k2 not in before:
                            key = (ord(k2[0]) << PAIR_SHIFT) | ord(k2[1])
                            d[key] = d.get(key, 0) + v * c
                        where.setdefault(k2, []).append(t)
                out.sites += occ * c
                if holders is not None:
                    for p in merged_parts:
                        holders[p].append(t)
            return
        if strings is not None:  # (an id past CHAR_IDS: leave strings first)
            self._to_lists()
        words = self.words
        add_index = self.index.add
        width = len(find)
        head, rest = find[0], list(find[1:])
        for t in dict.fromkeys(types):
            ids = words[t]
            out_ids: list[int] = []
            occ = 0
            i, n = 0, len(ids)
            while i < n:
                if ids[i] == head and ids[i + 1 : i + width] == rest:
                    out_ids.extend(repl)
                    occ += 1
                    i += width
                else:
                    out_ids.append(ids[i])
                    i += 1
            if not occ:
                continue
            words[t] = out_ids
            c = counts[t]
            was = count_pairs(ids, self.counting)
            got = count_pairs(out_ids, self.counting)
            for k2, v in was.items():
                d[k2] = d.get(k2, 0) - v * c
            for k2, v in got.items():
                d[k2] = d.get(k2, 0) + v * c
                if v > was.get(k2, 0):
                    add_index(k2, t)
            out.sites += occ * c
            if holders is not None:
                for p in merged_parts:
                    holders[p].append(t)
            if self.want_groups:
                g = groups[t]
                out.group_sites[g] -= occ * c * gained
                gd = out.group_pairs
                for sign, table in ((1, got), (-1, was)):
                    for k2, v in table.items():
                        row = gd.get(k2)
                        if row is None:
                            row = gd[k2] = [0] * self.num_groups
                        row[g] += sign * v * c
        for k2 in [k2 for k2, v in d.items() if v == 0]:
            del d[k2]

    def start_holders(self) -> None:
        """Keep, from now on, which types each new token is made in (for :meth:`split`).
        Call before the first merge. O(1)."""
        if self.holders is None:
            self.holders = {}

    def check(self) -> None:
        """The pair index's own invariants; with strings, that every pair of every
        type is listed under it. O(index size + total length)."""
        self.index.check()
        if self.strings is None:
            return
        listed = {(k, t) for k, ts in self.where.items() for t in ts}
        for t, w in enumerate(self.strings):
            for k in map(add, w, w[1:]):
                if (k, t) not in listed:
                    raise InvariantError(
                        f"type {t} holds pair {ord(k[0]), ord(k[1])} but is not listed under it",
                        {"type": t, "pair": (ord(k[0]), ord(k[1]))},
                    )

    def first_position(self, pk: int) -> int | None:
        """Position of the pair's first occurrence: type id * stride + byte offset.

        Types are numbered by first appearance, so this orders occurrences as
        the chunk sequence does. O(entries of the pair's index + type lengths).
        """
        a, b = pk >> PAIR_SHIFT, pk & PAIR_MASK
        if self.strings is not None:
            k = chr(a) + chr(b)
            strings = self.strings
            # (one type's entries are adjacent: a long type is scanned once, not once per
            # occurrence)
            live = [t for t in dict.fromkeys(self.where.get(k, ())) if k in strings[t]]
            if not live:
                return None
            t = min(live)
            head = strings[t][: strings[t].find(k)]
            return t * self.stride + sum(self.length(ord(x)) for x in head)
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
