"""One run of the merge driver: the corpus run and every mechanism, built from the plan."""

from __future__ import annotations

from typing import Any, Protocol

from bpeds.corpus import Corpus, CorpusRun, Counting, MergeDeltas
from bpeds.driver.checks import check_shortcuts, warn_if_slow
from bpeds.driver.counts import CountTable
from bpeds.driver.plan import Plan
from bpeds.driver.pricing import Pricing
from bpeds.driver.rescoring import Rescoring, rescoring_for
from bpeds.driver.selection import (
    EpochClock,
    EpochSelection,
    MultisetFactory,
    Selection,
    ViewSelection,
)
from bpeds.driver.variant_loop import VariantLoop
from bpeds.scoring.base import Score, Stats
from bpeds.scoring.ties import TieRule
from bpeds.structures.sleeping_pairs import SleepingPairs
from bpeds.variants import Event, Variant, make_token
from bpeds.vocab import Vocab, pack_pair

__all__ = ["DriverOptions", "RunState"]


class DriverOptions(Protocol):
    """What a run is built from: a :class:`~bpeds.driver.MergeDriver`'s options."""

    corpus: Corpus
    num_merges: int
    score: Score
    tie: TieRule
    multiset: MultisetFactory | None
    counting: Counting
    min_count: int
    max_token_length: int | None
    vocab: Vocab
    variant: Variant | None
    events: list[Event]
    drop_dead: bool
    sleep_below: float


class RunState:
    """A run's mechanisms, each chosen once from the :class:`~bpeds.driver.plan.Plan`.

    ``run``: the corpus representation's run; ``table``: the
    :class:`~bpeds.driver.counts.CountTable`; ``pricing``, ``select``,
    ``rescoring``: how pairs are priced, selected and re-scored; ``variant``: the
    :class:`~bpeds.driver.variant_loop.VariantLoop` (None without a variant).
    :meth:`merge_everywhere` and :meth:`split_token` change the corpus; the loop in
    :class:`~bpeds.driver.MergeDriver` calls the rest. One step, by hand:

    >>> from bpeds.corpus import TypeCorpus
    >>> from bpeds.driver import MergeDriver
    >>> state = RunState(MergeDriver(TypeCorpus([b"abab", b"abc"]), 1))
    >>> pair, priority = state.select.best()
    >>> left, right = pair >> 32, pair & 0xFFFFFFFF
    >>> new, remade = state.make_token(left, right)
    >>> deltas = state.merge_everywhere(left, right, new, remade)
    >>> changes = state.table.apply_merge(pair, left, right, new, deltas)
    >>> state.rescoring.after_merge(pair, left, right, changes, deltas, remade, priority)
    >>> (left, right, new), sorted(state.table.pairs.values())  # (X, X) and (X, c) once each
    ((97, 98, 256), [1, 1])
    >>> state.check()
    """

    def __init__(self, driver: DriverOptions) -> None:
        score, vocab, variant = driver.score, driver.vocab, driver.variant
        declaration = score.declaration
        plan = self.plan = Plan.of(
            declaration,
            driver.tie,
            min_count=driver.min_count,
            max_token_length=driver.max_token_length,
            variant=variant,
            multiset=driver.multiset,
        )
        rewrites = variant is not None and (variant.removes or variant.same_bytes_same_token)
        run = self.run = _start(driver, plan, rewrites)
        drop_dead = driver.drop_dead and not plan.on_heap
        table = self.table = CountTable(
            run.initial(),
            len(vocab),
            unigrams=plan.unigrams,
            groups=plan.groups,
            totals=plan.parts,
            watch=drop_dead or not plan.born_only,
        )
        epochs, views = plan.epochs, plan.views
        clock = EpochClock(epochs, table.totals) if epochs is not None else None
        self.stats = stats = Stats(
            declaration.reads,
            vocab.length,
            table.unigram if plan.parts else None,
            clock.current if clock is not None else table.current_totals,
            table.group_pairs if plan.groups else None,
            pack_pair,
            vocab.token_bytes,
        )
        kernel = declaration.kernel if plan.parts else None
        self.pricing = pricing = Pricing(
            plan,
            table,
            run,
            vocab,
            driver.tie,
            stats,
            epochs.bound if epochs is not None else score.score,
            clock.kernel() if clock is not None else kernel,
            max_token_length=driver.max_token_length,
            variant=variant,
            score_name=score.name,
        )
        select: Selection
        exact_stats = stats
        if epochs is not None:
            exact_stats = Stats(
                declaration.reads,
                vocab.length,
                table.unigram if plan.parts else None,
                table.current_totals,
                table.group_pairs if plan.groups else None,
                pack_pair,
                vocab.token_bytes,
            )
            select = EpochSelection(
                plan, pricing, driver.tie, vocab, score.score, exact_stats, driver.multiset
            )
        elif views is not None:
            select = ViewSelection(plan, pricing, driver.tie, vocab, views, stats, driver.multiset)
        else:
            select = Selection(plan, pricing, driver.tie, vocab, driver.multiset)
        self.select = select
        check_shortcuts(score, table, exact_stats if epochs is not None else stats, stats)
        warn_if_slow(score)
        # Scores whose unigram falls raise them: each token's pairs; with a rise bound,
        # those far below the top asleep (never across views: bounds differ per view).
        rise = None
        if plan.on_heap and views is None:
            rise = clock.rise() if clock is not None else declaration.unigram_bound
        sleeping = SleepingPairs(table.unigram, rise) if plan.rescore_parts else None
        self.rescoring: Rescoring = rescoring_for(
            plan,
            plan,
            table,
            pricing,
            select,
            sleeping,
            score,
            stats,
            clock=clock,
            sleep_below=driver.sleep_below,
            drop_dead=drop_dead,
        )
        if rise is not None:
            select.guard = self.rescoring.wake
        score.begin_step(stats)
        select.start(pricing.all_bounds())
        self.rescoring.start()
        self.deltas = MergeDeltas(
            len(table.group_tokens), positions=plan.dynamic, counts=table.pairs, lost=table.watch
        )
        #: bytes -> id of every token made, for variants that make one token of equal bytes
        self.made: dict[bytes, int] | None = (
            {} if variant is not None and variant.same_bytes_same_token else None
        )
        self.vocab = vocab
        self.tie = driver.tie
        self.variant: VariantLoop | None = None
        if variant is not None:
            self.variant = VariantLoop(
                variant,
                vocab,
                driver.events,
                driver.num_merges,
                table.unigram if plan.unigrams else None,
                self.split_token,
            )
            self.variant.begin()

    def check(self) -> None:
        """Every mechanism's invariants, between two steps: the corpus run's, the count
        table's, the pricing's stored positions, every eligible pair's bound (or its
        band's cover), the variant's removals and marks. O(corpus + pairs)."""
        self.run.check()
        self.table.check()
        self.pricing.check()
        self.rescoring.check()
        if self.variant is not None:
            self.variant.check()

    def score_of(self, count: int, priority: Any) -> Any:
        """The score a merge was selected with: its priority, a dynamic tie's
        position taken out (the count itself for ``priority="count"``). O(1)."""
        if self.plan.is_count:
            return count
        return self.tie.unfold(priority, self.pricing.shift)

    def make_token(self, left: int, right: int) -> tuple[int, bool]:
        """The id the merge of ``(left, right)`` makes, and whether it is made again
        (see :func:`bpeds.variants.make_token`)."""
        if self.made is None:
            return self.vocab.add(left, right), False
        new, remade = make_token(self.vocab, left, right, self.made)
        if remade and self.variant is not None:
            self.variant.removed.discard(new)  # (made again, if it was removed)
        return new, remade

    def merge_everywhere(self, left: int, right: int, new: int, remade: bool) -> MergeDeltas:
        """Merge every occurrence of ``(left, right)`` into ``new``; the count changes.
        O(occurrences) (in C for type mode's strings)."""
        deltas = self.deltas
        deltas.reset()
        if remade:
            self.run.merge_into(left, right, new, deltas)
        else:
            self.run.merge(left, right, new, deltas)
        return deltas

    def split_token(self, token: int, parts: tuple[int, ...]) -> tuple[int, ...]:
        """Split ``token`` into ``parts`` everywhere and re-score what rose (a variant's
        removal). O(occurrences + pairs)."""
        deltas = self.deltas
        deltas.reset()
        self.run.split(token, parts, deltas)
        self.rescoring.after_split(self.table.apply_split(token, parts, deltas))
        return parts


def _start(driver: DriverOptions, plan: Plan, rewrites: bool) -> CorpusRun:
    """Start the corpus run: it reports unigram counts only if they are kept, and keeps
    each token's holders for a variant that splits or remakes tokens."""
    corpus, variant = driver.corpus, driver.variant
    run = corpus.start(driver.counting, plan.groups, driver.vocab.length)
    run.count_sites = plan.unigrams
    if rewrites:
        if not run.rewrites:
            assert variant is not None
            does = "removes tokens" if variant.removes else "makes tokens again"
            raise ValueError(
                f"variant {variant.name!r} {does}, which {type(corpus).__name__} cannot do: "
                "train it in type mode (a TypeCorpus)"
            )
        run.start_holders()
    return run
