"""The count table: every statistic a score may read, kept up to date merge by merge."""

from __future__ import annotations

from bpeds.corpus import Initial, MergeDeltas
from bpeds.errors import InvariantError
from bpeds.scoring.base import Totals
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT

__all__ = ["Changes", "CountTable"]


class Changes:
    """What one merge (or split) did to the pair counts: the pairs that rose, with
    their new counts (``born``: new pairs, and old ones whose count went up); the
    pairs whose count fell and stayed above zero (``fell``); those that reached zero
    (``died``). ``fell`` and ``died`` are filled only when the table watches falls.
    (The table fills one object again at every merge: read it before the next.)"""

    __slots__ = ("born", "died", "fell")

    def __init__(self) -> None:
        self.born: dict[int, int] = {}
        self.fell: list[int] = []
        self.died: list[int] = []


class CountTable:
    """Pair counts, unigram counts, per-group counts and corpus totals of one run.

    ``pairs``: packed pair -> count, every count > 0 (the table a representation's
    :class:`~bpeds.corpus.MergeDeltas` subtracts losses from). ``unigram``: token id
    -> occurrences, a list (ids are dense; a new token's count is appended), kept
    when ``unigrams``. ``group_pairs`` (packed pair -> a count per group) and
    ``group_tokens`` (tokens per group), kept when ``groups``. ``totals``: the
    :class:`~bpeds.scoring.base.Totals` a ``GLOBAL`` score reads, kept when
    ``totals`` (otherwise those of the start). ``watch``: list the pairs whose count
    fell or died (a score re-scores them, or a selection structure drops them).

    Applying a merge is O(pairs it changed) (plus O(groups) for each changed pair
    with ``groups``); :meth:`check` is O(pairs + tokens).

    >>> from bpeds.corpus import TypeCorpus
    >>> run = TypeCorpus([b"abab"]).start("overlapping", False, lambda t: 1)
    >>> table = CountTable(run.initial(), 256, unigrams=True, groups=False, totals=True,
    ...                    watch=True)
    >>> table.pairs == {97 << 32 | 98: 2, 98 << 32 | 97: 1}, table.totals
    (True, Totals(tokens=4, pairs=3, group_tokens=(), group_bytes=()))
    >>> deltas = MergeDeltas(1, counts=table.pairs)
    >>> run.merge(97, 98, 256, deltas)
    >>> changes = table.apply_merge(97 << 32 | 98, 97, 98, 256, deltas)
    >>> changes.born == {256 << 32 | 256: 1}, changes.died == [98 << 32 | 97]
    (True, True)
    >>> table.unigram[97:99], table.unigram[256], table.totals.tokens, table.totals.pairs
    ([0, 0], 2, 2, 1)
    >>> table.check()
    """

    __slots__ = (
        "changes",
        "group_bytes",
        "group_pairs",
        "group_tokens",
        "groups",
        "pairs",
        "totals",
        "track_totals",
        "unigram",
        "unigrams",
        "watch",
    )

    def __init__(
        self,
        initial: Initial,
        vocab_size: int,
        *,
        unigrams: bool,
        groups: bool,
        totals: bool,
        watch: bool,
    ) -> None:
        self.pairs = initial.pairs
        self.unigrams, self.groups, self.track_totals, self.watch = unigrams, groups, totals, watch
        self.unigram = [0] * vocab_size
        for t, c in initial.unigram.items():
            self.unigram[t] = c
        self.group_pairs = initial.group_pairs
        self.group_tokens = initial.group_tokens
        self.group_bytes = tuple(initial.group_tokens) if groups else ()
        #: what the last merge or split changed (one object, filled again each time)
        self.changes = Changes()
        self.totals = Totals(
            sum(initial.group_tokens),
            sum(self.pairs.values()),
            self.group_bytes,
            self.group_bytes,
        )

    def current_totals(self) -> Totals:
        """The totals now (what :class:`~bpeds.scoring.base.Stats` hands a score). O(1)."""
        return self.totals

    def apply(self, deltas: MergeDeltas) -> Changes:
        """Apply a merge's or split's pair-count changes (``deltas.born``,
        ``deltas.lost``, ``deltas.pairs``); the losses of the grouped form were
        subtracted by the representation already. O(changes)."""
        counts = self.pairs
        fell: list[int] = []
        died: list[int] = []
        add_fell = fell.append
        born = deltas.born
        counts.update(born)
        if self.watch:  # which pairs fell, which died
            for pk in deltas.lost or ():
                if pk in counts:
                    add_fell(pk)
                else:
                    died.append(pk)
        for pk, dv in deltas.pairs.items():
            c = counts.get(pk, 0) + dv
            if c > 0:
                counts[pk] = c
                if dv > 0:
                    born[pk] = c
                else:
                    add_fell(pk)
            elif c == 0:
                counts.pop(pk, None)
                died.append(pk)
            else:  # pragma: no cover - would be a representation bug
                pair = (pk >> PAIR_SHIFT, pk & PAIR_MASK)
                raise InvariantError(f"pair count went negative: {pair}", c)
        changes = self.changes
        changes.born, changes.fell, changes.died = born, fell, died
        return changes

    def apply_merge(
        self, pair: int, left: int, right: int, new: int, deltas: MergeDeltas
    ) -> Changes:
        """Apply the merge of ``pair = (left, right)`` into ``new``: pair counts (the
        merged pair occurs nowhere now), unigram counts, per-group counts and totals.
        O(changes)."""
        changes = self.apply(deltas)
        gone = self.pairs.pop(pair, 0)
        sites = deltas.sites
        if self.unigrams:
            uni = self.unigram
            uni[left] -= sites
            uni[right] -= sites
            if new == len(uni):
                uni.append(sites)
            else:
                uni[new] += sites
        if self.groups:
            self._apply_groups(deltas)
            self.group_pairs.pop(pair, None)
        if self.track_totals:
            # born and lost move counts between pairs: only the others change the sum
            before = self.totals
            self.totals = Totals(
                before.tokens - sites,
                before.pairs + sum(deltas.pairs.values()) - gone,
                tuple(self.group_tokens) if self.groups else (),
                self.group_bytes,
            )
        return changes

    def apply_split(self, token: int, parts: tuple[int, ...], deltas: MergeDeltas) -> Changes:
        """Apply the split of ``token`` into ``parts`` everywhere it occurs. O(changes)."""
        changes = self.apply(deltas)
        sites = deltas.sites
        if self.unigrams:
            self.unigram[token] -= sites
            for p in parts:
                self.unigram[p] += sites
        if self.groups:
            self._apply_groups(deltas)
        if self.track_totals:
            before = self.totals
            self.totals = Totals(
                before.tokens + sites * (len(parts) - 1),
                before.pairs + sum(deltas.pairs.values()),
                tuple(self.group_tokens) if self.groups else (),
                self.group_bytes,
            )
        return changes

    def _apply_groups(self, deltas: MergeDeltas) -> None:
        gcounts, size = self.group_pairs, len(self.group_tokens)
        for pk, row in deltas.group_pairs.items():
            cur = gcounts.get(pk)
            if cur is None:
                cur = gcounts[pk] = [0] * size
            for g, v in enumerate(row):
                cur[g] += v
            if not any(cur):
                del gcounts[pk]
        for g, v in enumerate(deltas.group_sites):
            self.group_tokens[g] -= v

    def check(self) -> None:
        """Every pair count is positive; per-group rows are non-negative and sum to
        their pair's count; kept totals agree with the tables. O(pairs + tokens)."""
        for pk, c in self.pairs.items():
            if c <= 0:
                raise InvariantError(f"pair {pk} has count {c}", pk)
        if self.groups:
            for pk, row in self.group_pairs.items():
                if min(row) < 0 or sum(row) != self.pairs.get(pk, 0):
                    raise InvariantError(f"pair {pk}'s group counts do not add up", row)
        if self.track_totals:
            if self.totals.pairs != sum(self.pairs.values()):
                raise InvariantError("the pairs total is not the sum of pair counts", self.totals)
            if self.groups and self.totals.group_tokens != tuple(self.group_tokens):
                raise InvariantError("the group totals are stale", self.totals)
            if self.unigrams and self.totals.tokens != sum(self.unigram):
                raise InvariantError("the tokens total is not the unigram counts' sum", self.totals)
