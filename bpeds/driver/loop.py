"""The merge driver: one loop over a corpus representation, a selection structure and a score.

``MergeDriver(corpus, num_merges, score=..., tie=..., multiset=...)`` is an
iterable of :class:`MergeRecord`, one per merge, so a caller can stop, log or
plot as training goes. It stops cleanly (no exception) when no eligible pair
is left.

The loop (:meth:`MergeDriver.__iter__`) is minbpe's, a step at a time:

1. **select** the best pair (:mod:`bpeds.driver.selection`: an upper bound of
   every pair's priority, checked at the top; ties by the rule);
2. **make the token** (a new id, or an earlier token's, for variants that make
   equal bytes once);
3. **merge everywhere** (the corpus representation; it reports the count
   changes grouped by neighbour token, :class:`~bpeds.corpus.MergeDeltas`);
4. **apply the count changes** (:class:`~bpeds.driver.counts.CountTable`:
   pair, unigram and per-group counts, totals);
5. **re-score what can have risen** (:mod:`bpeds.driver.rescoring`, the strategy
   the score's declaration calls for); a fall needs nothing, since the stored
   bound still holds;
6. call the **variant's hooks** (:class:`~bpeds.driver.variant_loop.VariantLoop`).

Every mechanism is chosen once from what the score declares
(:class:`~bpeds.driver.plan.Plan`), never from its class. A rise that was not
declared is caught at the top and raised as
:class:`~bpeds.errors.InvariantError` naming the score and the declaration that
is wrong. See ``docs/architecture.md`` and ``docs/scoring.md``.

Costs per merge: O(occurrences) for the merge and count updates (in C for type
mode), O(log n) per pushed bound (O(1) when the heap parks it), plus the
re-scoring the score declares (``PARTS``: pairs of the merged tokens; ``GLOBAL``
when the totals can raise untouched scores: all pairs).
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any

from bpeds.corpus import Corpus, Counting
from bpeds.driver.selection import MultisetFactory
from bpeds.driver.state import RunState
from bpeds.errors import InvariantError
from bpeds.scoring.base import Dependency, Epochs, RescoreAll, Score, Views
from bpeds.scoring.registry import get_score
from bpeds.scoring.strategies import Frequency
from bpeds.scoring.ties import TieRule, tie_rule
from bpeds.structures.bound_heap import BoundError
from bpeds.variants import Event, Variant, get_variant
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, Vocab

__all__ = ["MergeDriver", "MergeRecord", "Progress", "train_merges"]

#: ``progress(done, total)``, called after each merge.
Progress = Callable[[int, int], None]


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
    :class:`~bpeds.structures.protocols.Multiset`, to select through it
    (:class:`~bpeds.structures.MultisetBounds`) instead of the default
    :class:`~bpeds.structures.BoundHeap` (which needs int or real priorities:
    others get a ``HeapyKiYay``).
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
        variant: Variant | str | dict[str, Any] | None = None,
        max_merges: int | None = None,
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
        self.variant = None if variant is None else get_variant(variant)
        if max_merges is not None and not (isinstance(max_merges, int) and max_merges >= 0):
            raise ValueError(f"max_merges must be an int >= 0, got {max_merges!r}")
        #: With a variant: the most merges a run makes (a variant that removes or marks
        #: as fast as it merges would never reach the vocabulary target).
        self.max_merges = 4 * num_merges + 256 if max_merges is None else max_merges
        self.records: list[MergeRecord] = []
        #: Every merge, removal, mark and unmark, in order (see :mod:`bpeds.variants`).
        self.events: list[Event] = []
        #: With a ``multiset``: remove a pair from it as soon as its count reaches zero
        #: (True), or only when it surfaces at the top (False). Both are exact; a speed
        #: knob. (The default BoundHeap drops dead pairs when they surface.)
        self.drop_dead = True
        #: Scores that declare ``unigram_bound``: a pair scoring below this fraction of
        #: the last merge's score is put to sleep under one of its tokens (see
        #: :class:`~bpeds.structures.SleepingPairs`); 0 never. Exact for any value >= 0;
        #: a speed knob (1/16 measured best of 1/64, 1/16, 1/4 for PMI on en13).
        self.sleep_below = 1 / 16
        #: Pause the cyclic garbage collector while a step runs (see :meth:`__iter__`).
        self.pause_gc = True
        #: The run under way (its mechanisms; ``state.check()`` between steps), or None.
        self.state: RunState | None = None

    def options(self) -> dict[str, Any]:
        """The options that determine this run's merges (recorded with a model)."""
        return {
            "score": self.score.describe(),
            "tie": self.tie.describe(),
            "counting": self.counting,
            "min_count": self.min_count,
            "max_token_length": self.max_token_length,
            **({} if self.variant is None else {"variant": self.variant.describe()}),
        }

    def run(self) -> list[MergeRecord]:
        """Run to the end and return every record."""
        for _ in self:
            pass
        return self.records

    def __iter__(self) -> Generator[MergeRecord, None, None]:
        """Run the merges, yielding one :class:`MergeRecord` each.

        One step, as minbpe writes it: select the best pair; make its token; merge
        it everywhere; apply the count changes; re-score what can have risen; call
        the variant's hooks. Each step's mechanism is a named object chosen once from
        the score's declaration (:class:`~bpeds.driver.state.RunState`).

        While a step runs, Python's cyclic garbage collector is paused (unless
        ``pause_gc`` is False): training keeps millions of small containers alive,
        and the collector would re-scan all of them again and again (see
        :mod:`bpeds._gc`). It runs again between steps, while the caller has the
        record, so a suspended iterator leaves the process as it found it.
        """
        paused = self.pause_gc and gc.isenabled()
        if paused:
            gc.disable()
        try:
            state = self.state = RunState(self)
            table, select, rescoring = state.table, state.select, state.rescoring
            hooks = state.variant
            counted = state.plan.is_count
            limit = self.num_merges if hooks is None else self.max_merges
            done = 0
            while done < limit:
                if paused:
                    gc.disable()  # (again: the caller ran between steps)
                if hooks is not None and hooks.finished(done):
                    return
                # 1. select the best pair (a variant may still stop the run here)
                try:
                    best = select.best()
                except BoundError as exc:
                    raise self._undeclared_rise(exc) from None
                if best is None:
                    return
                pair, priority = best
                left, right = pair >> PAIR_SHIFT, pair & PAIR_MASK
                count = table.pairs[pair]
                if hooks is not None and hooks.before_merge(left, right, count):
                    return
                # 2. make its token; 3. merge it everywhere; 4. apply the count changes
                new, remade = state.make_token(left, right)
                deltas = state.merge_everywhere(left, right, new, remade)
                changes = table.apply_merge(pair, left, right, new, deltas)
                # 5. re-score what can have risen
                rescoring.after_merge(pair, left, right, changes, deltas, remade, priority)
                score = count if counted else state.score_of(count, priority)
                record = MergeRecord((left, right), new, count, score)
                self.events.append(Event("merge", new, (left, right), done))
                self.records.append(record)
                done += 1
                # 6. the variant's hooks
                if hooks is not None:
                    hooks.after_merge(done, left, right, new, count, deltas.sites)
                if self.progress is not None:
                    self.progress(done, self.num_merges)
                if paused:
                    gc.enable()
                yield record
        finally:
            if paused:
                gc.enable()

    def _show(self, k: int) -> str:
        """A packed pair as ids and bytes, for messages."""
        left, right = k >> PAIR_SHIFT, k & PAIR_MASK
        try:
            text = self.vocab.token_bytes(left) + self.vocab.token_bytes(right)
            return f"({left}, {right}) = {text!r}"
        except (IndexError, KeyError, ValueError):
            return f"({left}, {right})"

    def _undeclared_rise(self, exc: BoundError) -> InvariantError:
        """Name the declaration that let a score rise without being re-scored."""
        score = self.score
        d = score.declaration
        policy = d.policy
        if isinstance(policy, Epochs):
            fault = (
                "its epoch bound fell below a score it bounds: Epochs.bound must bound the "
                "score at every totals for which Epochs.holds is true, and grow as its "
                "declaration says (count_fall_raises, unigram_fall_raises)"
            )
        elif isinstance(policy, RescoreAll) and d.totals is not None:
            fault = (
                "its RescoreAll.can_raise returned False for a change of totals that raised "
                "it: return True whenever a change of totals can raise a pair's score"
            )
        elif isinstance(policy, Views):
            fault = (
                "it declares Views, but its score rose within a view: in a view it may rise "
                "only as count_fall_raises and unigram_fall_raises allow"
            )
        elif d.reads is Dependency.PARTS and d.unigram_fall_raises is False:
            fault = (
                "it declares unigram_fall_raises=False, but a fall of a token's unigram "
                "count raised it"
            )
        elif d.count_fall_raises is False:
            fault = "it declares count_fall_raises=False, but a fall of its count raised it"
        else:
            fault = (
                f"it declares reads={d.reads.name}, but its value depends on more "
                "(e.g. a statistic it reads without declaring it, or state of its own)"
            )
        return InvariantError(
            f"the score of pair {self._show(exc.key)} rose from {exc.stored!r} to "
            f"{exc.fresh!r} without being re-scored: {score!r}: {fault}",
            {"pair": self._show(exc.key), "stored": exc.stored, "fresh": exc.fresh},
        )


def train_merges(corpus: Corpus, num_merges: int, **options: Any) -> list[MergeRecord]:
    """Run a :class:`MergeDriver` to the end; the options are the driver's."""
    return MergeDriver(corpus, num_merges, **options).run()
