"""Corpus representations the merge driver trains on.

- :class:`TypeCorpus` (*type mode*): unique pre-tokens ("types") with their
  counts, a pair -> types :class:`~bpeds.structures.LazyIndex` with a
  compaction policy, and windowed updates around each merge site. A merge
  costs O(size of the types that contain the pair). This is the mode that
  scales: a corpus of gigabytes has a few million types.
- :class:`SequenceCorpus` (*sequence mode*): the whole token sequence in an
  :class:`~bpeds.structures.IndexedList`, chunks separated so no pair spans
  two chunks. This is what minbpe's Basic (one chunk) and Regex tokenizers do;
  a merge costs O(occurrences of the pair).

Both take *chunks*: byte strings (or sequences of byte values 0..255) that
pairs never cross, optionally each with a *group* (a language, for per-group
scores). Both count pairs *overlapping* (``aaaa`` holds ``(a, a)`` three times,
as minbpe, Hugging Face and rustbpe do) or, in type mode only,
*non-overlapping* (greedy from the left: twice).

A corpus object keeps its input and builds fresh working state for each run,
so it can be trained on more than once. Not handled here: splitting text into
chunks (see :mod:`bpeds.pretokenize`) and special tokens.
"""

from __future__ import annotations

import bisect
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import pairwise
from typing import Literal, NamedTuple, Protocol

from bpeds.errors import InvariantError
from bpeds.structures.compaction import ThresholdCompaction
from bpeds.structures.indexed_list import IndexedList, ListNode
from bpeds.structures.lazy_index import LazyIndex
from bpeds.structures.protocols import CompactionPolicy
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT

__all__ = [
    "Corpus",
    "CorpusRun",
    "Counting",
    "Initial",
    "MergeDeltas",
    "SequenceCorpus",
    "TypeCorpus",
    "count_pairs",
]

Counting = Literal["overlapping", "non_overlapping"]
_COUNTINGS = ("overlapping", "non_overlapping")

Chunk = bytes | Sequence[int]


def count_pairs(tokens: Sequence[int], counting: Counting = "overlapping") -> dict[int, int]:
    """Packed-pair counts of one chunk.

    Non-overlapping counting is greedy from the left: within a run of equal
    tokens of length L, ``(x, x)`` counts ``L // 2``.

    >>> from bpeds.vocab import pack_pair
    >>> count_pairs([1, 1, 1, 1]) == {pack_pair(1, 1): 3}
    True
    >>> count_pairs([1, 1, 1, 1], "non_overlapping") == {pack_pair(1, 1): 2}
    True

    Complexity: O(len(tokens)).
    """
    out: dict[int, int] = {}
    skip = False
    overlapping = counting == "overlapping"
    for i in range(len(tokens) - 1):
        x, y = tokens[i], tokens[i + 1]
        if not overlapping and x == y:
            if skip:
                skip = False
                continue
            skip = True
        else:
            skip = False
        k = (x << PAIR_SHIFT) | y
        out[k] = out.get(k, 0) + 1
    return out


def _check_counting(counting: str) -> None:
    if counting not in _COUNTINGS:
        raise ValueError(f"counting must be one of {_COUNTINGS}, got {counting!r}")


def _as_bytes(chunk: Chunk) -> bytes:
    """``chunk`` as bytes; anything but bytes or a sequence of ints 0..255 is refused."""
    if type(chunk) is bytes:
        return chunk
    if isinstance(chunk, int | str):
        raise TypeError(
            f"a chunk is bytes or a sequence of ints 0..255, not {type(chunk).__name__}"
        )
    try:
        return bytes(chunk)
    except (TypeError, ValueError):
        raise ValueError(f"a chunk must hold bytes (ints 0..255); got {chunk!r:.60}") from None


def _groups_for(groups: Iterable[int] | None, n: int) -> list[int]:
    if groups is None:
        return [0] * n
    out = list(groups)
    if len(out) != n:
        raise ValueError(f"got {len(out)} group labels for {n} chunks: give one per chunk")
    for g in out:
        if not (isinstance(g, int) and g >= 0):
            raise ValueError(f"group labels must be ints >= 0, found {g!r}")
    return out


class Initial(NamedTuple):
    """A run's starting statistics (every table keyed by packed pair or token id)."""

    pairs: dict[int, int]
    unigram: dict[int, int]
    group_pairs: dict[int, list[int]]
    group_tokens: list[int]


class MergeDeltas:
    """What one merge changed: filled by a representation, read by the driver.

    ``pairs``: packed pair -> change of count (zero entries kept: a pair whose
    per-group counts moved but whose total did not is still *touched*);
    ``sites``: merge sites weighted by type counts (each turns two tokens into
    one); ``group_pairs``: packed pair -> per-group changes; ``group_sites``;
    ``first_positions``: optional lower bounds of new pairs' first positions.
    """

    __slots__ = ("first_positions", "group_pairs", "group_sites", "pairs", "sites")

    def __init__(self, groups: int, *, positions: bool = False) -> None:
        self.pairs: defaultdict[int, int] = defaultdict(int)
        self.sites = 0
        self.group_pairs: dict[int, list[int]] = {}
        self.group_sites = [0] * groups
        #: When asked for (``positions=True``), a representation that can may record
        #: here a lower bound of each new pair's first position.
        self.first_positions: dict[int, int] | None = {} if positions else None


class CorpusRun(Protocol):
    """One training run's mutable state over a corpus (what the driver drives)."""

    num_groups: int
    position_limit: int  # every first_position() is below it

    def initial(self) -> Initial: ...

    def merge(self, a: int, b: int, new: int, out: MergeDeltas) -> None: ...

    def first_position(self, pk: int) -> int | None: ...

    def check(self) -> None: ...


class Corpus(Protocol):
    """A corpus representation: anything that starts a :class:`CorpusRun`."""

    num_groups: int

    def start(
        self, counting: Counting, want_groups: bool, length: Callable[[int], int]
    ) -> CorpusRun: ...


class TypeCorpus:
    """Type mode: unique chunks with counts, a lazy pair -> types index.

    ``TypeCorpus(chunks)`` counts equal chunks (same bytes and group) as one
    type; types are numbered in order of first appearance, which is what makes
    the ``leftmost`` tie rule agree with sequence mode. ``TypeCorpus.from_counts``
    takes ``(chunk, count)`` pairs directly (a pre-counted corpus).

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
        merged: dict[tuple[int, bytes], int] = {}
        for item in counts:
            chunk, n = item[0], item[1]
            g = item[2] if len(item) > 2 else 0
            if not (isinstance(n, int) and n >= 1):
                raise ValueError(f"a type's count must be an int >= 1, got {n!r}")
            _groups_for([g], 1)
            key = (g, _as_bytes(chunk))
            if key[1]:
                merged[key] = merged.get(key, 0) + n
        self._init_types(((c, n, g) for (g, c), n in merged.items()), policy)
        return self

    def _init_types(
        self, items: Iterable[tuple[bytes, int, int]], policy: CompactionPolicy[int] | None
    ) -> None:
        self._chunks: list[bytes] = []
        self._counts: list[int] = []
        self._groups: list[int] = []
        for c, n, g in items:
            self._chunks.append(c)
            self._counts.append(n)
            self._groups.append(g)
        self._policy = policy
        self.num_groups = max(self._groups, default=0) + 1
        self._stride = max((len(c) for c in self._chunks), default=0) + 1

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
        self.words: list[list[int]] = [list(c) for c in corpus._chunks]
        self.counts = corpus._counts
        self.groups = corpus._groups
        self.num_groups = corpus.num_groups
        self.stride = corpus._stride
        #: Every position :meth:`first_position` returns is below this.
        self.position_limit = max(1, len(self.words) * self.stride)
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
        gpairs: dict[int, list[int]] = {}
        ngroups = self.num_groups
        gtokens = [0] * ngroups
        where: defaultdict[int, list[int]] = defaultdict(list)
        counting = self.counting
        want_groups = self.want_groups
        uni: defaultdict[int, int] = defaultdict(int)
        acc: defaultdict[int, int] = defaultdict(int)
        for t, w in enumerate(self.words):
            c, g = self.counts[t], self.groups[t]
            gtokens[g] += len(w) * c
            for x in w:
                uni[x] += c
            if counting == "overlapping" and not want_groups:
                # The common case, without a per-type dict: packed keys straight from zip.
                for k in [(x << PAIR_SHIFT) | y for x, y in pairwise(w)]:
                    acc[k] += c
                    where[k].append(t)
                continue
            for k, n in count_pairs(w, counting).items():
                acc[k] += n * c
                where[k].append(t)
                if want_groups:
                    gp = gpairs.get(k)
                    if gp is None:
                        gp = gpairs[k] = [0] * ngroups
                    gp[g] += n * c
        extend = self.index.extend
        for k, ts in where.items():
            extend(k, ts)
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
        d = out.pairs
        words, counts = self.words, self.counts
        fresh: defaultdict[int, list[int]] = defaultdict(list)
        total = 0
        # After this merge the pair occurs nowhere, so its whole list is taken and dropped:
        # the loop below checks each type itself, so no predicate call per entry is needed.
        index = self.index
        types = index.raw(pk)
        index.discard(pk)
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
        if total:
            d[pk] -= total
            out.sites += total
        extend = index.extend
        for k, ts in fresh.items():
            extend(k, ts)

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
