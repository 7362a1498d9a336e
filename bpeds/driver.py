"""The generic merge driver: corpus representation x priority structure x score.

``MergeDriver(corpus, num_merges, score=..., tie=..., multiset=...)`` is an
iterable of :class:`MergeRecord`, one per merge, so a caller can stop, log or
plot as training goes. It stops cleanly (no exception) when no eligible pair
is left.

How a step works:

1. *Select.* The heap holds, for every eligible pair, a priority that is an
   upper bound of the pair's current score (for ``leftmost`` ties the priority
   is ``(score, -first_position)``). The top is re-scored; if the fresh value
   is lower it is re-pushed and the next top is tried; an ineligible pair is
   dropped. The first top whose stored priority equals its fresh one is the
   exact maximum (ties by the rule).
2. *Merge.* The corpus representation merges every non-overlapping occurrence,
   left to right, and reports the count changes (:class:`~bpeds.corpus.MergeDeltas`).
3. *Re-score* exactly what the score's declared dependency says can change
   (see :mod:`bpeds.scoring.base`): pairs whose counts changed; for ``PARTS``
   scores also every pair containing the merged tokens; for ``GLOBAL`` scores
   everything when ``totals_can_raise``. A fresh score higher than the stored
   one is a broken contract and raises :class:`~bpeds.errors.InvariantError`
   naming the score.

``PMI`` and ``WordPiece`` (those classes exactly, not subclasses; with
``fast_path``) have a fast path. The formula is computed inline. Only pairs
containing a merged token and new pairs are re-scored (a pair whose count fell
contains a merged token). Pairs that can never be eligible again (below
``min_count``, or over the length cap) are left out of the token -> pairs
index: a pair's count never rises after the merge that created it. A rise to a
score below the last merge's score is not pushed: the pair goes to a bucket by
its binary exponent (bucket ``e`` holds scores ``< 2**e``). A PMI score rises
only when the driver re-scores the pair, so ``2**max(buckets)`` bounds every
bucketed score (a sleeping pair's, below, is bounded by its token); when the
heap's top falls to that bound, the top bucket's pairs are pushed with their
exact scores. Most rises (pairs of frequent tokens, far below the top) so cost
a dict update instead of a heap update.
A pair far below the last merge's score (``sleep_below`` of it) is put to
sleep under one of its tokens ``t`` (never a pair ``(t, t)``): merges of ``t``
stop visiting it, its other token's still do, and a bound on every sleeping
pair of ``t`` (their largest stored bound times ``c_then(t) / c(t)``) is
checked against the heap's top like the buckets' bound; when it reaches the
top, ``t``'s pairs wake and are re-scored.
Scores are the same floats as
:meth:`PMI.score <bpeds.scoring.strategies.PMI.score>` computes.

Costs per merge: O(occurrences) for the merge and count updates, O(log n) per
re-scored pair (O(1) for a bucketed PMI rise), plus the score's dependency class
(``PARTS``: pairs adjacent to the merged tokens; ``GLOBAL`` when totals can
raise: all pairs).
"""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterable, Iterator
from dataclasses import dataclass
from heapq import heappop, heappush
from math import frexp, ldexp
from typing import Any

from bpeds._gc import gc_paused
from bpeds.corpus import Corpus, Counting, MergeDeltas
from bpeds.errors import InvariantError
from bpeds.scoring.base import Dependency, Score, Stats, Totals
from bpeds.scoring.strategies import PMI, Frequency, WordPiece, get_score
from bpeds.scoring.ties import TieRule, tie_rule
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.lazyheap import LazyHeap
from bpeds.structures.protocols import Multiset
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, Vocab, pack_pair

__all__ = ["MergeDriver", "MergeRecord", "Progress", "train_merges"]

#: ``progress(done, total)``, called after each merge.
Progress = Callable[[int, int], None]

MultisetFactory = Callable[..., Multiset[int, Any]]


@dataclass(frozen=True, slots=True)
class MergeRecord:
    """One merge: ``pair`` became ``new_id``; it occurred ``count`` times and scored ``score``."""

    pair: tuple[int, int]
    new_id: int
    count: int
    score: Any


class MergeDriver:
    """Learn up to ``num_merges`` merges from ``corpus``; iterate to run.

    >>> from bpeds.corpus import SequenceCorpus
    >>> d = MergeDriver(SequenceCorpus([b"aaabdaaabac"]), 3, tie="leftmost")
    >>> [(r.pair, r.new_id, r.count) for r in d]
    [((97, 97), 256, 4), ((256, 97), 257, 2), ((257, 98), 258, 2)]
    >>> d.vocab.token_bytes(258)
    b'aaab'

    ``score``: a :class:`~bpeds.scoring.base.Score`, a name or a describe-dict
    (default :class:`~bpeds.scoring.strategies.Frequency`). ``tie``: a
    :class:`~bpeds.scoring.ties.TieRule` or its name (default ``smallest_ids``).
    ``multiset``: a factory ``f(tie=...)`` of any
    :class:`~bpeds.structures.protocols.Multiset` (default: ``LazyHeap`` for
    frequency counts, else ``HeapyKiYay``).
    ``counting``: ``"overlapping"`` or ``"non_overlapping"``. Pairs seen fewer
    than ``min_count`` times, or longer than ``max_token_length`` bytes, are
    never merged.
    """

    def __init__(
        self,
        corpus: Corpus,
        num_merges: int,
        *,
        score: Score | str | dict[str, Any] | None = None,
        tie: TieRule | str = "smallest_ids",
        multiset: MultisetFactory | None = None,
        counting: Counting = "overlapping",
        min_count: int = 1,
        max_token_length: int | None = None,
        progress: Progress | None = None,
        vocab: Vocab | None = None,
    ) -> None:
        if not (isinstance(num_merges, int) and num_merges >= 0):
            raise ValueError(f"num_merges must be an int >= 0, got {num_merges!r}")
        if not (isinstance(min_count, int) and min_count >= 1):
            raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
        if max_token_length is not None and not (
            isinstance(max_token_length, int) and max_token_length >= 2
        ):
            raise ValueError(f"max_token_length must be an int >= 2, got {max_token_length!r}")
        self.corpus = corpus
        self.num_merges = num_merges
        self.score = Frequency() if score is None else get_score(score)
        self.tie = tie_rule(tie)
        self.multiset = multiset
        self.counting = counting
        self.min_count = min_count
        self.max_token_length = max_token_length
        self.progress = progress
        self.vocab = Vocab() if vocab is None else vocab
        self.records: list[MergeRecord] = []
        #: Remove a pair from the heap as soon as its count reaches zero (True), or only
        #: when it surfaces at the top (False). Both are exact; this is a speed knob.
        self.drop_dead = True
        #: Let the corpus representation run its own fused loop when one applies
        #: (see :meth:`fused_loop`), and use the PMI/WordPiece fast path (see the
        #: module docstring). Both paths give identical merges; tests compare them
        #: with each other and with the brute-force oracle. False forces the
        #: generic loop.
        self.fast_path = True
        #: PMI/WordPiece fast path: a pair scoring below this fraction of the last merge's
        #: score is put to sleep (see the module docstring); 0 never. Exact for any value
        #: >= 0; a speed knob (1/16 measured best of 1/64, 1/16, 1/4 on en13).
        self.sleep_below = 1 / 16
        #: Pause the cyclic garbage collector while iterating (see :meth:`__iter__`).
        self.pause_gc = True

    def options(self) -> dict[str, Any]:
        """The options that determine this run's merges (recorded with a model)."""
        return {
            "score": self.score.describe(),
            "tie": self.tie.describe(),
            "counting": self.counting,
            "min_count": self.min_count,
            "max_token_length": self.max_token_length,
        }

    def run(self) -> list[MergeRecord]:
        """Run to the end and return every record."""
        for _ in self:
            pass
        return self.records

    def fused_loop(self, run: Any) -> Iterator[tuple[int, int, int, int]] | None:
        """The representation's fused loop for this run, or None if none applies.

        A fused loop applies to plain frequency counts (``Frequency``, overlapping
        counting, no length cap, no per-group counts, the default priority
        structure) on a representation that offers ``frequency_merges(num_merges,
        min_count, tie, vocab)``: it merges, counts and selects in one function,
        without :class:`~bpeds.corpus.MergeDeltas` or per-pair calls, and yields
        ``(left, right, new_id, count)`` per merge. It may decline a tie rule it
        does not implement by returning None; the generic loop then runs.
        """
        if not (
            self.fast_path
            and type(self.score) is Frequency
            and self.multiset is None
            and self.max_token_length is None
            and self.counting == "overlapping"
        ):
            return None
        fused = getattr(run, "frequency_merges", None)
        if fused is None:
            return None
        loop: Iterator[tuple[int, int, int, int]] | None = fused(
            self.num_merges, self.min_count, self.tie, self.vocab
        )
        return loop

    def __iter__(self) -> Generator[MergeRecord, None, None]:
        """Run the merges, yielding one :class:`MergeRecord` each.

        While the iteration is under way (between its first ``next`` and its end,
        ``close()`` or an exception) Python's cyclic garbage collector is paused,
        unless ``pause_gc`` is False: training keeps millions of small containers
        alive, and the collector would re-scan all of them again and again (see
        :mod:`bpeds._gc`; about 15% of the merge loop on 13 MB of English, 30% on
        multilingual text). Reference counting still frees everything; only
        objects in reference cycles wait. An iterator dropped half-way restores
        the collector when it is closed or freed.
        """
        if not self.pause_gc:
            yield from self._merges()
            return
        with gc_paused():
            yield from self._merges()

    def _merges(self) -> Iterator[MergeRecord]:
        score = self.score
        depends = score.depends
        want_parts = depends >= Dependency.PARTS
        want_groups = score.needs_groups
        leftmost = self.tie.dynamic
        vocab = self.vocab
        length = vocab.length
        run = self.corpus.start(self.counting, want_groups, length)
        fused = None if want_groups else self.fused_loop(run)
        if fused is not None:
            for done, (left, right, new, count) in enumerate(fused, 1):
                record = MergeRecord((left, right), new, count, count)
                self.records.append(record)
                if self.progress is not None:
                    self.progress(done, self.num_merges)
                yield record
            return
        init = run.initial()
        counts = init.pairs
        # Unigram counts by id (ids are dense; a new token's count is appended): a list
        # indexes faster than a dict looks up, and scores read it in the innermost loop.
        uni = [0] * len(vocab)
        for t, c in init.unigram.items():
            uni[t] = c
        gcounts = init.group_pairs
        gtokens = init.group_tokens
        gbytes: tuple[int, ...] = tuple(gtokens)
        num_groups = len(gtokens)
        # Totals change once per merge: build them then, not at every read.
        # Per-group totals are kept only for scores that declare needs_groups.
        if not want_groups:
            gbytes = ()
        now = [
            Totals(
                sum(gtokens), sum(counts.values()), tuple(gtokens) if want_groups else (), gbytes
            )
        ]

        def totals() -> Totals:
            return now[0]

        stats = Stats(
            depends,
            length,
            uni if want_parts else None,
            totals,
            gcounts if want_groups else None,
            pack_pair,
        )
        pos_lb: dict[int, int] = {}
        fast_count = type(score) is Frequency
        # PMI/WordPiece (exactly those classes, with fast_path): the formula inline, and
        # low rises kept out of the heap (see rescore_pmi below).
        pmi = self.fast_path and type(score) in (PMI, WordPiece)
        # For integer counts, fold the leftmost tie into one int: (count << shift) - position
        # orders like (count, -position) but compares much faster than a tuple.
        shift = run.position_limit.bit_length() + 1
        min_count = self.min_count
        if pmi:
            min_count = max(min_count, score.min_count)  # type: ignore[attr-defined]
        max_len = self.max_token_length

        def never_eligible(k: int, c: int) -> bool:
            # For PMI: a pair's count only falls once its merge created it, and the length
            # cap is fixed, so such a pair is never eligible again; adj can leave it out.
            if c < min_count:
                return True
            return max_len is not None and length(k >> PAIR_SHIFT) + length(k & PAIR_MASK) > max_len

        adj: dict[int, set[int]] = {}
        empty: set[int] = set()
        if want_parts:
            for k, c in counts.items():
                if pmi and never_eligible(k, c):
                    continue
                adj.setdefault(k >> PAIR_SHIFT, set()).add(k)
                adj.setdefault(k & PAIR_MASK, set()).add(k)
        raw_score = score.score

        def priority(k: int, exact: bool) -> Any:
            c = counts.get(k, 0)
            if c < min_count:
                return None
            left, right = k >> PAIR_SHIFT, k & PAIR_MASK
            if max_len is not None and length(left) + length(right) > max_len:
                return None
            s: Any
            if fast_count:
                s = c
            elif pmi:
                s = c / (uni[left] * uni[right])
            else:
                s = raw_score(c, left, right, stats)
            if s is None or not leftmost:
                return s
            if exact:
                pos = run.first_position(k)
                if pos is None:  # pragma: no cover - a counted pair always occurs
                    raise InvariantError(f"pair {left, right} is counted but not found", k)
                pos_lb[k] = pos
            else:
                pos = pos_lb.get(k, 0)
            return (s << shift) - pos if fast_count else (s, -pos)

        factory = self.multiset
        if factory is None:
            # Counts only ever rise for new pairs, which suits LazyHeap (C heapq, a push
            # per rise). Scores that rise often (PARTS: every pair of the merged tokens)
            # would fill it with dead entries; HeapyKiYay updates those in place.
            factory = LazyHeap if fast_count else HeapyKiYay
        heap: Multiset[int, Any] = factory(tie=None if leftmost else self.tie.heap_tie(vocab))
        score.begin_step(stats)
        # What the driver last stored in the heap, per pair (outside the one-pass case; for a
        # bucketed PMI pair, its bucket's bound): the pair's current upper bound, so one
        # dict lookup answers "absent or lower?" for any kind of priority.
        pushed: dict[int, Any] = {}
        for k in counts:
            p = priority(k, False)
            if p is not None:
                heap.update(k, p)
                pushed[k] = p

        drop_dead = self.drop_dead
        # The common case (frequency, no length cap): priorities are ints > 0, computed
        # inline while the count changes are applied, in one pass. count() is 0 for an
        # absent key, so one lookup answers "absent or lower".
        one_pass = fast_count and max_len is None
        heap_count, heap_update, heap_discard = heap.count, heap.update, heap.discard
        counts_get, pos_lb_get, pushed_get = counts.get, pos_lb.get, pushed.get
        if one_pass:
            pushed.clear()  # not used there: step 3 asks the heap itself

        # PMI/WordPiece without leftmost ties: a rise to a score below `low_limit` (the last
        # merge's score; measured against 0.25x..4x of it, flat from 0.5x to 2x) is not pushed;
        # the pair goes to a bucket instead, by the binary exponent of the score (bucket e
        # holds scores < 2**e), and `pushed` records 2**e as its bound. A PMI score only rises
        # when the driver re-scores the pair, so 2**max(buckets) bounds every score in the
        # buckets (but a sleeping pair's, which its token's cover bounds, see below); once it
        # reaches the heap's top, that bucket's pairs get their exact scores in the heap.
        # (Under leftmost, priorities are tuples: every rise is pushed.)
        tiers = pmi and not leftmost
        buckets: dict[int, set[int]] = {}
        low_e = 0
        low_top = -1.0  # 2.0 ** max(buckets), or -1.0 when there is none
        low_limit = 0.0

        # Dormant pairs (PMI without leftmost ties): a visit of token t that finds a pair
        # scoring below `deep` (a fraction of the last merge's score) puts it to sleep under
        # t: later merges of t no longer visit it. sleep[t]: t's dormant pairs; sleeper: pair
        # -> its token (one at most); since[t]: c(t) when sleep[t] was last empty; drowse[t]:
        # an upper bound of the bounds stored for them. A dormant pair is still re-scored
        # through its other token, and its score rises otherwise only with c(t) falling, so
        # it stays below cover[t] = drowse[t] * since[t] / c(t) (times 1 + 1e-9 against
        # rounding). wakes: a min-heap of (-cover, t), stale once cover[t] moved on. When the
        # largest cover reaches the heap's top, that token's pairs are woken and re-scored.
        sleep: dict[int, set[int]] = {}
        sleeper: dict[int, int] = {}
        sleeper_get = sleeper.get
        since: dict[int, int] = {}
        drowse: dict[int, float] = {}
        cover: dict[int, float] = {}
        wakes: list[tuple[float, int]] = []
        margin = 1.0 + 1e-9
        sleep_below = self.sleep_below

        def push_cover(tok: int) -> None:
            cv = drowse[tok] * since[tok] / uni[tok] * margin
            if cv > cover.get(tok, -1.0):
                cover[tok] = cv
                heappush(wakes, (-cv, tok))

        def raise_cover(tok: int, bound: float) -> None:
            if bound > drowse[tok]:
                drowse[tok] = bound
                push_cover(tok)

        def forget(pk: int) -> None:
            # pk can never be eligible again: out of adj and of any sleep set.
            adj.get(pk >> PAIR_SHIFT, empty).discard(pk)
            adj.get(pk & PAIR_MASK, empty).discard(pk)
            owner = sleeper.pop(pk, None)
            if owner is not None:
                sleep[owner].discard(pk)

        def rescore_pmi(
            pairs: Iterable[int], limit: float, deep: float
        ) -> tuple[list[int], list[int]]:
            # PMI/WordPiece: the score inline; push only rises (a fall leaves an upper bound).
            # Returns the pairs whose count fell below min_count (never eligible again) and
            # those scoring below `deep` that are not dormant yet.
            nonlocal low_e, low_top
            gone = []
            drowsy = []
            for pk in pairs:
                c = counts_get(pk, 0)
                if c < min_count:
                    gone.append(pk)
                    continue
                left_, right_ = pk >> PAIR_SHIFT, pk & PAIR_MASK
                p = c / (uni[left_] * uni[right_])
                if p < deep and left_ != right_ and pk not in sleeper:
                    drowsy.append(pk)  # (a pair (t, t) has c(t) twice: never asleep)
                was = pushed_get(pk)
                if was is not None and was >= p:
                    continue
                if p < limit:
                    e = frexp(p)[1]
                    bound = pushed[pk] = ldexp(1.0, e)
                    bucket = buckets.get(e)
                    if bucket is None:
                        buckets[e] = {pk}
                        if low_top < 0.0 or e > low_e:
                            low_e, low_top = e, bound
                    else:
                        bucket.add(pk)
                else:
                    heap_update(pk, p)
                    bound = pushed[pk] = p
                owner = sleeper_get(pk)
                if owner is not None:
                    raise_cover(owner, bound)
            return gone, drowsy

        def visit(tok: int) -> None:
            # After a merge lowered c(tok): re-score tok's awake pairs, put the low ones to
            # sleep, and raise tok's cover.
            pairs = adj.get(tok)
            if pairs:
                gone, drowsy = rescore_pmi(pairs, low_limit, low_limit * sleep_below)
                for pk in gone:
                    forget(pk)
                if drowsy:
                    asleep = sleep.get(tok)
                    if not asleep:
                        asleep = sleep[tok] = set()
                        since[tok] = uni[tok]
                        drowse[tok] = 0.0
                    top = drowse[tok]
                    for pk in drowsy:
                        pairs.discard(pk)
                        asleep.add(pk)
                        sleeper[pk] = tok
                        bound = pushed[pk]
                        if bound > top:
                            top = bound
                    drowse[tok] = top
            if sleep.get(tok):
                push_cover(tok)

        def wake(entry: tuple[float, int]) -> None:
            neg, tok = entry
            if cover.get(tok) != -neg:
                return  # stale
            del cover[tok]
            asleep = sleep.pop(tok)
            del since[tok], drowse[tok]
            pairs = adj.setdefault(tok, set())
            for pk in asleep:
                del sleeper[pk]
                pairs.add(pk)
            gone, _ = rescore_pmi(asleep, low_limit, 0.0)
            for pk in gone:
                forget(pk)

        def flush_low() -> None:
            # The top bucket's pairs get their exact scores in the heap (exact is always a
            # valid bound, even where a stale membership would lower a stored value).
            nonlocal low_e, low_top
            members = buckets.pop(low_e)
            if buckets:
                low_e = max(buckets)
                low_top = ldexp(1.0, low_e)
            else:
                low_top = -1.0
            for pk in members:
                c = counts_get(pk, 0)
                if c >= min_count:  # (the length cap was checked when it was bucketed)
                    p = c / (uni[pk >> PAIR_SHIFT] * uni[pk & PAIR_MASK])
                    heap_update(pk, p)
                    pushed[pk] = p
                    owner = sleeper_get(pk)
                    if owner is not None:
                        raise_cover(owner, p)

        done = 0
        while done < self.num_merges:
            # 1. select: re-validate the top until its stored priority is exact.
            while True:
                if not len(heap):
                    if low_top >= 0.0:
                        flush_low()
                        continue
                    if wakes:
                        wake(heappop(wakes))
                        continue
                    return
                k, stored = heap.top()
                if tiers:
                    if low_top >= stored:
                        flush_low()
                        continue
                    if wakes and -wakes[0][0] >= stored:
                        wake(heappop(wakes))
                        continue
                fresh = priority(k, True)
                if fresh is None:
                    heap.discard(k)
                    pushed.pop(k, None)
                elif fresh == stored:
                    break
                elif fresh > stored:
                    raise InvariantError(
                        f"the score of pair {k >> PAIR_SHIFT, k & PAIR_MASK} rose from "
                        f"{stored!r} to {fresh!r} without being re-scored: {score!r} declares "
                        f"depends={depends.name}, but its value depends on more",
                        {"pair": k, "stored": stored, "fresh": fresh},
                    )
                else:
                    heap.update(k, fresh)
                    pushed[k] = fresh
            left, right = k >> PAIR_SHIFT, k & PAIR_MASK
            new = vocab.add(left, right)
            # The score without the tie component folded into the priority.
            chosen = counts[k] if fast_count else (fresh[0] if leftmost else fresh)
            record = MergeRecord((left, right), new, counts[k], chosen)

            # 2. merge.
            before = totals() if depends is Dependency.GLOBAL else None
            deltas = MergeDeltas(num_groups, positions=leftmost)
            run.merge(left, right, new, deltas)
            if deltas.first_positions:
                pos_lb.update(deltas.first_positions)

            # 3. update statistics (and, for plain counts, the heap in the same pass).
            pair_sum = 0
            if one_pass:
                # A count that fell needs no heap work (the stored priority is an upper
                # bound); a count that rose is pushed; a pair that died is dropped.
                for pk, dv in deltas.pairs.items():
                    if dv > 0:
                        c = counts_get(pk, 0) + dv
                        counts[pk] = c
                        if c >= min_count:
                            p = (c << shift) - pos_lb_get(pk, 0) if leftmost else c
                            if heap_count(pk) < p:
                                heap_update(pk, p)
                    elif dv < 0:
                        c = counts[pk] + dv
                        if c > 0:
                            counts[pk] = c
                        elif c == 0:
                            del counts[pk]
                            if leftmost:
                                pos_lb.pop(pk, None)
                            if drop_dead:
                                heap_discard(pk)
                        else:  # pragma: no cover - would be a representation bug
                            raise InvariantError(f"pair count went negative: {pk}", {"count": c})
                    pair_sum += dv
            for pk, dv in () if one_pass else deltas.pairs.items():
                if not dv:
                    continue
                pair_sum += dv
                c = counts.get(pk, 0) + dv
                if c > 0:
                    if want_parts and pk not in counts and not (pmi and never_eligible(pk, c)):
                        adj.setdefault(pk >> PAIR_SHIFT, set()).add(pk)
                        adj.setdefault(pk & PAIR_MASK, set()).add(pk)
                    counts[pk] = c
                elif c == 0:
                    del counts[pk]
                    pos_lb.pop(pk, None)
                    if pmi:  # (the PMI path leaves some pairs out of adj, or asleep)
                        forget(pk)
                    elif want_parts:
                        adj[pk >> PAIR_SHIFT].discard(pk)
                        adj[pk & PAIR_MASK].discard(pk)
                else:  # pragma: no cover - would be a representation bug
                    raise InvariantError(f"pair count went negative: {pk}", {"count": c})
            sites = deltas.sites
            old = now[0]
            if want_parts:
                uni[left] -= sites
                uni[right] -= sites
                uni.append(sites)
            if want_groups:
                for pk, row in deltas.group_pairs.items():
                    cur = gcounts.get(pk)
                    if cur is None:
                        cur = gcounts[pk] = [0] * num_groups
                    for g, v in enumerate(row):
                        cur[g] += v
                    if not any(cur):
                        del gcounts[pk]
                for g, v in enumerate(deltas.group_sites):
                    gtokens[g] -= v
            now[0] = Totals(
                old.tokens - sites,
                old.pairs + pair_sum,
                tuple(gtokens) if want_groups else (),
                gbytes,
            )

            # 4. re-score what can have changed (plain counts were handled in step 3).
            score.begin_step(stats)
            rescore: Iterable[int]
            if one_pass:
                rescore = ()
            elif before is not None and score.totals_can_raise(before, totals()):
                rescore = list(counts)
                for pk in [pk for pk in pushed if pk not in counts]:
                    heap.discard(pk)
                    del pushed[pk]
            elif tiers:
                # New pairs (all of the new token's) now; pairs that died are dropped. A
                # pair whose count fell contains left or right, so visit() covers it.
                # (PMI under leftmost ties takes the general branch below.)
                low_limit = chosen
                fresh_pairs = [pk for pk, dv in deltas.pairs.items() if dv > 0]
                for tok in (left,) if left == right else (left, right):
                    visit(tok)
                if max_len is not None:
                    fresh_pairs = [pk for pk in fresh_pairs if not never_eligible(pk, counts[pk])]
                rescore_pmi(fresh_pairs, low_limit, 0.0)
                if drop_dead:
                    for pk in deltas.pairs:
                        if pk not in counts and pk in pushed:
                            heap_discard(pk)
                            del pushed[pk]
                rescore = ()
            elif want_groups or want_parts:
                rescore = set(deltas.pairs)
                if want_groups:
                    rescore.update(deltas.group_pairs)
                if want_parts:
                    # The new token's pairs are all new, so already in deltas.pairs.
                    for tok in (left, right):
                        rescore.update(adj.get(tok, ()))
            else:
                rescore = deltas.pairs  # keys are unique already
            # As in step 3: only rises are pushed; a fall leaves an upper bound behind.
            # (The priority is computed inline unless leftmost needs positions: this loop
            # runs for every pair of the merged tokens under PARTS scores.)
            for pk in rescore:
                if leftmost:
                    p = priority(pk, False)
                else:
                    c = counts_get(pk, 0)
                    if c < min_count:
                        p = None
                    else:
                        left_, right_ = pk >> PAIR_SHIFT, pk & PAIR_MASK
                        if max_len is not None and length(left_) + length(right_) > max_len:
                            p = None
                        else:
                            p = c if fast_count else raw_score(c, left_, right_, stats)
                if p is None:
                    if drop_dead and pk not in counts and pk in pushed:
                        heap_discard(pk)
                        del pushed[pk]
                    continue
                was = pushed_get(pk)
                if was is None or was < p:
                    heap_update(pk, p)
                    pushed[pk] = p

            done += 1
            self.records.append(record)
            if self.progress is not None:
                self.progress(done, self.num_merges)
            yield record


def train_merges(corpus: Corpus, num_merges: int, **options: Any) -> list[MergeRecord]:
    """Run a :class:`MergeDriver` to the end; the options are the driver's."""
    return MergeDriver(corpus, num_merges, **options).run()
