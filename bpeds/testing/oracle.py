"""A brute-force merge oracle: full recount and full rescoring at every step.

Deliberately naive: it keeps every chunk as a Python list, recounts every pair
of every chunk, scores every pair and picks the best by a plain ``max``/``min``
over all candidates, then rewrites every chunk. O(corpus x merges): only for
small corpora, which is what property tests use. It shares nothing with the
driver but the score objects and the tie rules' definitions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from bpeds.corpus import Counting, count_pairs
from bpeds.driver import MergeRecord
from bpeds.scoring.base import Dependency, Score, Stats, Totals, Views
from bpeds.scoring.registry import get_score
from bpeds.scoring.strategies import Frequency
from bpeds.scoring.ties import (
    Leftmost,
    Lexicographic,
    SmallestIds,
    SubwordNmt,
    TieRule,
    hf_byte_order,
    tie_rule,
)
from bpeds.variants import Event, Variant, get_variant, make_token
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, Vocab, apply_merge, pack_pair

__all__ = ["apply_merge", "brute_force_merges", "brute_force_run"]


def brute_force_merges(
    chunks: Iterable[bytes | Sequence[int]],
    num_merges: int,
    *,
    groups: Iterable[int] | None = None,
    score: Score | str | dict[str, Any] | None = None,
    tie: TieRule | str = "smallest_ids",
    counting: Counting = "overlapping",
    min_count: int = 1,
    max_token_length: int | None = None,
) -> list[MergeRecord]:
    """The merges a correct driver must produce, computed the slow, obvious way.

    >>> [r.pair for r in brute_force_merges([b"aaabdaaabac"], 3, tie="leftmost")]
    [(97, 97), (256, 97), (257, 98)]
    """
    return brute_force_run(
        chunks,
        num_merges,
        groups=groups,
        score=score,
        tie=tie,
        counting=counting,
        min_count=min_count,
        max_token_length=max_token_length,
    )[0]


def brute_force_run(
    chunks: Iterable[bytes | Sequence[int]],
    num_merges: int,
    *,
    groups: Iterable[int] | None = None,
    score: Score | str | dict[str, Any] | None = None,
    tie: TieRule | str = "smallest_ids",
    counting: Counting = "overlapping",
    min_count: int = 1,
    max_token_length: int | None = None,
    variant: Variant | str | dict[str, Any] | None = None,
    max_merges: int | None = None,
    vocab: Vocab | None = None,
) -> tuple[list[MergeRecord], list[Event]]:
    """Records and the event log a correct driver must produce with ``variant``.

    The variant's hooks get a :class:`~bpeds.variants.Loop` whose statistics
    are recounted from scratch and whose removals rewrite every chunk. The run
    stops as the driver's does (see :mod:`bpeds.variants`). ``vocab``: the
    starting vocabulary when ``chunks`` are token ids of an existing one
    (continued training; it is not modified).

    >>> recs, events = brute_force_run([b"abab", b"abc"], 2, variant="picky")
    >>> [(e.kind, e.token) for e in events]
    [('merge', 256), ('merge', 257)]
    """
    seqs = [list(c) for c in chunks]
    labels = [0] * len(seqs) if groups is None else list(groups)
    scorer = Frequency() if score is None else get_score(score)
    rule = tie_rule(tie)
    plugin = None if variant is None else get_variant(variant)
    start = vocab
    vocab = Vocab()
    if start is not None:
        for t in range(256, len(start)):
            parents = start.parents(t)
            assert parents is not None
            vocab.add(*parents)
    initial = len(vocab)
    num_groups = max(labels, default=0) + 1
    group_bytes = [0] * num_groups
    for s, g in zip(seqs, labels, strict=True):
        group_bytes[g] += len(s)
    records: list[MergeRecord] = []
    loop = _OracleLoop(vocab, plugin)
    loop.target = num_merges
    loop.initial = initial
    events = loop.events
    limit = (
        num_merges
        if plugin is None
        else (4 * num_merges + 256 if max_merges is None else max_merges)
    )
    reuse: dict[bytes, int] | None = (
        {} if plugin is not None and plugin.same_bytes_same_token else None
    )

    def size() -> int:
        return len(vocab) - initial - len(loop.removed) - len(loop.marked)

    if plugin is not None:
        loop.seqs = seqs
        plugin.begin(loop)
    views = scorer.declaration.totals if isinstance(scorer.declaration.totals, Views) else None
    if views is not None and views.reset is not None:
        views.reset()

    while len(records) < limit:
        loop.seqs = seqs
        loop.merges_done = len(records)
        if plugin is not None and (size() >= num_merges or loop.stopped):
            break
        pairs: dict[int, int] = {}
        gpairs: dict[int, list[int]] = {}
        unigram: dict[int, int] = {}
        first: dict[int, tuple[int, int]] = {}
        gtokens = [0] * num_groups
        for ci, (s, g) in enumerate(zip(seqs, labels, strict=True)):
            gtokens[g] += len(s)
            for t in s:
                unigram[t] = unigram.get(t, 0) + 1
            for k, n in count_pairs(s, counting).items():
                pairs[k] = pairs.get(k, 0) + n
                gpairs.setdefault(k, [0] * num_groups)[g] += n
            off = 0
            for i in range(len(s) - 1):
                k = pack_pair(s[i], s[i + 1])
                if k not in first:
                    first[k] = (ci, off)
                off += vocab.length(s[i])
        declaration = scorer.declaration
        if declaration.groups:
            totals = Totals(sum(gtokens), sum(pairs.values()), tuple(gtokens), tuple(group_bytes))
        else:
            totals = Totals(sum(gtokens), sum(pairs.values()))
        stats = Stats(
            declaration.reads,
            vocab.length,
            unigram if declaration.reads >= Dependency.PARTS else None,
            lambda totals=totals: totals,  # type: ignore[misc]
            gpairs if declaration.groups else None,
            pack_pair,
            vocab.token_bytes,
        )
        if views is not None:  # (asked once a step: a view may keep state)
            stats.view = views.view(totals)
        scorer.begin_step(stats)
        scored: dict[int, Any] = {}
        for k, c in pairs.items():
            left, right = k >> PAIR_SHIFT, k & PAIR_MASK
            if c < min_count:
                continue
            if max_token_length is not None and (
                vocab.length(left) + vocab.length(right) > max_token_length
            ):
                continue
            if plugin is not None and plugin.filters and not plugin.eligible(vocab, left, right):
                continue
            value = scorer.score(c, left, right, stats)
            if value is not None:
                scored[k] = value
        if not scored:
            break
        best = max(scored.values())
        tied = [k for k, s in scored.items() if s == best]
        k = min(tied, key=_tie_key(rule, vocab, first))
        left, right = k >> PAIR_SHIFT, k & PAIR_MASK
        if plugin is not None:
            loop.phase = "before"
            plugin.before_merge(loop, (left, right), pairs[k])
            loop.phase = ""
            if size() >= num_merges or loop.stopped:
                break
        new, remade = make_token(vocab, left, right, reuse)
        if remade:
            loop.removed.discard(new)
        records.append(MergeRecord((left, right), new, pairs[k], best))
        before = sum(map(len, seqs))
        seqs = [apply_merge(s, left, right, new) for s in seqs]
        events.append(Event("merge", new, (left, right), len(records) - 1))
        if plugin is not None:
            loop.seqs = seqs
            loop.merges_done = len(records)
            loop.sites = before - sum(map(len, seqs))
            loop.phase = "after"
            plugin.after_merge(loop, (left, right), new, pairs[k])
            loop.phase = ""
            seqs = loop.seqs
    return records, events


class _OracleLoop:
    """The oracle's :class:`~bpeds.variants.Loop`: statistics recounted, removals
    by rewriting every chunk."""

    def __init__(self, vocab: Vocab, variant: Variant | None) -> None:
        self.vocab = vocab
        self.variant = variant
        self.seqs: list[list[int]] = []
        self.removed: set[int] = set()
        self.marked: set[int] = set()
        self.events: list[Event] = []
        self.merges_done = 0
        self.target = 0
        self.initial = 256
        self.sites = 0
        self.phase = ""
        self.stopped = False

    def unigram(self, token: int) -> int:
        return sum(s.count(token) for s in self.seqs)

    def merged_sites(self) -> int:
        return self.sites

    def remaining(self) -> int:
        return self.target - (len(self.vocab) - self.initial - len(self.removed) - len(self.marked))

    def remove(self, token: int, into: str = "parts") -> tuple[int, ...]:
        if self.phase != "after":
            raise ValueError("a variant removes tokens from after_merge only")
        if token < 256 or token in self.removed:
            raise ValueError(f"cannot remove token {token}")
        parts = (
            tuple(self.vocab.token_bytes(token)) if into == "bytes" else tuple(self._expand(token))
        )
        rewritten = []
        for s in self.seqs:
            out: list[int] = []
            for t in s:
                if t == token:
                    out.extend(parts)
                else:
                    out.append(t)
            rewritten.append(out)
        self.seqs = rewritten
        self.removed.add(token)
        self.marked.discard(token)
        self.events.append(Event("remove", token, parts, self.merges_done))
        return parts

    def _expand(self, token: int) -> list[int]:
        parents = self.vocab.parents(token)
        assert parents is not None
        out: list[int] = []
        for p in parents:
            out.extend(self._expand(p) if p in self.removed else [p])
        return out

    def mark(self, token: int) -> None:
        if token < 256 or token in self.removed:
            raise ValueError(f"cannot mark token {token}")
        if token not in self.marked:
            self.marked.add(token)
            self.events.append(Event("mark", token, (), self.merges_done))

    def unmark(self, token: int) -> None:
        if token not in self.marked:
            raise ValueError(f"cannot unmark token {token}: it is not marked")
        self.marked.discard(token)
        self.events.append(Event("unmark", token, (), self.merges_done))

    def stop(self) -> None:
        self.stopped = True


def _tie_key(rule: TieRule, vocab: Vocab, first: dict[int, tuple[int, int]]) -> Any:
    if isinstance(rule, Leftmost):
        return first.__getitem__
    if isinstance(rule, Lexicographic):
        return lambda k: (vocab.token_bytes(k >> PAIR_SHIFT), vocab.token_bytes(k & PAIR_MASK))
    if isinstance(rule, SmallestIds):
        order = rule.byte_order
        if order is None:
            return lambda k: (k >> PAIR_SHIFT, k & PAIR_MASK)

        def ranked(k: int) -> tuple[int, int]:
            left, right = k >> PAIR_SHIFT, k & PAIR_MASK
            return (order[left] if left < 256 else left, order[right] if right < 256 else right)

        return ranked
    if isinstance(rule, SubwordNmt):  # (the largest pair of byte-level strings first)
        table = bytes(hf_byte_order())
        return lambda k: _Descending(
            (
                vocab.token_bytes(k >> PAIR_SHIFT).translate(table),
                vocab.token_bytes(k & PAIR_MASK).translate(table),
            )
        )
    raise TypeError(f"the oracle does not know tie rule {rule!r}")


class _Descending:
    """Orders its value the other way round (``min`` finds the largest)."""

    def __init__(self, value: tuple[bytes, bytes]) -> None:
        self.value = value

    def __lt__(self, other: _Descending) -> bool:
        return other.value < self.value
