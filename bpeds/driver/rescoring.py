"""Re-scoring: after a merge, store a new bound for every pair whose score can have risen.

The selection structure holds an upper bound of every pair's priority; a fall
needs nothing, a rise must be pushed. Which pairs can have risen follows from
the score's declaration, so the strategy is chosen once (:func:`rescoring_for`):

=========================== =======================================================
strategy                    after each merge
=========================== =======================================================
:class:`PushNewPairs`       push the new pairs (the score only falls with its
                            count and reads nothing else that moves)
:class:`RescoreTouched`     re-score the new pairs, the pairs whose count fell
                            (``count_fall_raises``), the pairs whose group counts
                            moved (``groups``), and every awake pair of the two
                            merged tokens (``PARTS``, ``unigram_fall_raises``;
                            pairs far below the top sleep, see
                            :class:`~bpeds.structures.SleepingPairs`)
:class:`RescoreAllWhenRaised` the same, or every pair when the totals policy's
                            ``can_raise(before, after)`` says untouched scores can
                            have risen (:class:`~bpeds.scoring.base.RescoreAll`)
:class:`RescoreInEpochs`    the same within an epoch; every pair bounded again
                            when it ends (:class:`~bpeds.scoring.base.Epochs`)
:class:`RescoreInViews`     the touched pairs that can have risen, in every view
                            built (:class:`~bpeds.scoring.base.Views`)
=========================== =======================================================

Costs per merge: O(new pairs) for :class:`PushNewPairs`; O(touched pairs) for the
others, plus O(pairs) when every pair is re-scored (a new epoch, or the totals
raising untouched scores).

>>> from bpeds.corpus import TypeCorpus
>>> from bpeds.driver import MergeDriver
>>> def strategy(score, groups=None):
...     d = MergeDriver(TypeCorpus([b"abab", b"abc"], groups), 1, score=score)
...     _ = d.run()
...     return type(d.state.rescoring).__name__
>>> [strategy(s) for s in ("frequency", "pmi", "likelihood_gain", "npmi")]
['PushNewPairs', 'RescoreTouched', 'RescoreAllWhenRaised', 'RescoreInEpochs']
>>> strategy("group_frequency", [0, 1])
'RescoreInViews'
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from bpeds.corpus import MergeDeltas
from bpeds.driver.counts import Changes, CountTable
from bpeds.driver.plan import Plan
from bpeds.driver.pricing import Pricing
from bpeds.driver.selection import EpochClock, Selection, ViewSelection
from bpeds.scoring.base import RescoreAll, Score, Stats, Totals
from bpeds.structures.sleeping_pairs import SleepingPairs
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT

__all__ = [
    "PushNewPairs",
    "RescoreAllWhenRaised",
    "RescoreInEpochs",
    "RescoreInViews",
    "RescoreTouched",
    "Rescoring",
    "rescoring_for",
]


class Rescoring:
    """The base of the strategies: bookkeeping every merge needs, and :meth:`rescore`.

    ``sleeping``: each token's pairs, for scores whose unigram falls raise them
    (None otherwise); ``sleep_below``: a pair scoring below this fraction of the
    last merge's score falls asleep (0: none does; needs a rise bound).
    ``drop_dead``: forget pairs that died from a ``Multiset`` at once. The score's
    ``begin_step`` is called before each re-scoring when the score defines one.
    """

    __slots__ = (
        "before",
        "begin_step",
        "drop_dead",
        "plan",
        "pricing",
        "score",
        "select",
        "settles",
        "sleep_below",
        "sleeping",
        "stats",
        "table",
    )

    def __init__(
        self,
        plan: Plan,
        table: CountTable,
        pricing: Pricing,
        select: Selection,
        sleeping: SleepingPairs | None,
        score: Score,
        stats: Stats,
        *,
        sleep_below: float,
        drop_dead: bool,
    ) -> None:
        self.plan = plan
        self.table = table
        self.pricing = pricing
        self.select = select
        self.sleeping = sleeping
        self.score = score
        self.stats = stats
        self.sleep_below = sleep_below if sleeping is not None and sleeping.rise else 0.0
        self.drop_dead = drop_dead
        #: the totals before the last merge
        self.before = table.totals
        #: the score's per-step hook (None when it keeps no per-step state)
        self.begin_step = score.begin_step if _defines_begin_step(score) else None
        #: is there bookkeeping before re-scoring (see :meth:`settle`) on every merge?
        #: (a dynamic tie's new positions alone are taken without it)
        self.settles = drop_dead or self.begin_step is not None

    def start(self) -> None:
        """Index the first pairs (before the first merge)."""
        if self.sleeping is not None:
            least = self.plan.min_count  # (a pair below min_count never reaches it again)
            self.sleeping.add(k for k, c in self.table.pairs.items() if c >= least)

    def after_merge(
        self,
        pair: int,
        left: int,
        right: int,
        changes: Changes,
        deltas: MergeDeltas,
        remade: bool,
        priority: Any,
    ) -> None:
        """Settle the merge of ``pair`` (``left``, ``right``) and store a new bound
        for every pair whose score can have risen."""
        if remade or self.settles:
            self.settle(pair, changes, deltas, remade)
        elif deltas.first_positions:
            self.pricing.positions.update(deltas.first_positions)
        self.rescore_after(left, right, changes, deltas, priority)

    def settle(self, pair: int, changes: Changes, deltas: MergeDeltas, remade: bool) -> None:
        """Bookkeeping before re-scoring: positions of a dynamic tie, dead pairs of a
        ``Multiset``, the score's ``begin_step``. O(changed pairs)."""
        positions = self.pricing.positions
        if remade:  # (its pairs may occur earlier than this merge's)
            for pk in changes.born:
                positions.pop(pk, None)
        discard = self.select.discard if self.drop_dead else None
        if discard is not None:
            discard(pair)
            for pk in changes.died:
                discard(pk)
        if deltas.first_positions:
            positions.update(deltas.first_positions)
        if self.begin_step is not None:
            self.begin_step(self.stats)

    def rescore_after(
        self, left: int, right: int, changes: Changes, deltas: MergeDeltas, priority: Any
    ) -> None:
        """Store new bounds after a merge (each strategy's own rule)."""
        raise NotImplementedError

    def after_split(self, changes: Changes) -> None:
        """After a variant split a token everywhere: every pair's score may have risen
        (its tokens' counts rose), so every pair is re-scored, in every view. O(pairs)."""
        positions = self.pricing.positions
        for pk in changes.born:  # (a split can move a pair's first occurrence earlier)
            positions.pop(pk, None)
        discard = self.select.discard if self.drop_dead else None
        if discard is not None:
            for pk in changes.died:
                discard(pk)
        if self.begin_step is not None:
            self.begin_step(self.stats)
        self.rescore_split(changes)

    def rescore_split(self, changes: Changes) -> None:
        """Store new bounds after a split (every pair, but for :class:`PushNewPairs`)."""
        if self.sleeping is not None:
            self.sleeping.wake_all()
            self.sleeping.add(pk for pk, c in changes.born.items() if c >= self.plan.min_count)
        self.rescore_everything(list(self.table.pairs))
        self.before = self.table.totals

    def rescore_everything(self, pairs: list[int]) -> None:
        """Re-score ``pairs`` (the views' override does it in every view)."""
        self.rescore(pairs)

    def rescore(
        self, pairs: Iterable[int], drowsy_below: float = 0.0
    ) -> tuple[list[int], list[int]]:
        """Re-score ``pairs`` and push the rises. Returns the pairs that can never be
        eligible again and, for ``drowsy_below > 0``, the awake ones scoring below it (the
        candidates to fall asleep).
        O(pairs) plus a push per rise."""
        gone: list[int] = []
        low: list[int] = []
        rises: list[tuple[int, Any]] = []
        plan, pricing = self.plan, self.pricing
        counts_get, uni, kernel = pricing.counts_get, pricing.unigram, pricing.kernel
        value, fold, positions, shift = (
            pricing.value,
            pricing.fold,
            pricing.positions,
            pricing.shift,
        )
        least, dynamic, fixed_rule = plan.min_count, plan.dynamic, plan.fixed_rule
        inline = plan.inline and kernel is not None
        n_tokens = self.table.totals.tokens
        sleeping = self.sleeping
        band_of = sleeping.band_of if sleeping is not None else {}
        select = self.select
        bounds, bounds_get = select.bounds, select.bound_of
        for pk in pairs:
            c = counts_get(pk, 0)
            left, right = pk >> PAIR_SHIFT, pk & PAIR_MASK
            if inline and left != right:  # (no value() checks: see Plan.inline)
                p = kernel(c, uni[left], uni[right], n_tokens) if c >= least else None  # type: ignore[misc]
            else:
                p = value(pk, c)
            if p is None:
                if c < least or fixed_rule:  # counts never rise
                    gone.append(pk)
                continue
            if dynamic:
                p = fold(p, positions.get(pk, 0), shift)
            elif drowsy_below > 0 and p < drowsy_below and pk not in band_of and left != right:
                low.append(pk)  # ((t, t) has c(t) twice: it never sleeps)
            was = bounds_get(pk)
            if was is None or was < p:
                rises.append((pk, p))
                if bounds is not None:
                    bounds[pk] = p
        select.extend(rises)  # (rises only: compared with the stored bounds above)
        if band_of and sleeping is not None:
            # A sleeping pair's band covers its bound (as stored: parked, 2**e).
            for pk, _ in rises:
                band = band_of.get(pk)
                if band is not None:
                    sleeping.record_rise(band, bounds_get(pk) or 0.0, counts_get(pk, 0))
        return gone, low

    def check(self) -> None:
        """Every eligible pair's priority is covered: by its stored bound, or, asleep
        in a band whose cover was pushed, by that cover (and the sleeping pairs' own
        invariants hold). O(pairs)."""
        covered: dict[int, float] = {}
        sleeping = self.sleeping
        if sleeping is not None:
            sleeping.check()
            cover = sleeping.cover
            covered = {pk: cover[b] for pk, b in sleeping.band_of.items() if b in cover}
        # (a pair that joined a band since its cover was computed is still held by its
        # own stored bound: those above their cover are checked with the others)
        current = self.pricing.current
        self.select.check(
            pk for pk in self.table.pairs if pk not in covered or _above(current(pk), covered[pk])
        )

    def wake(self, stored: Any) -> bool:
        """The selection structure's guard: wake the sleeping band whose cover reaches
        the top's bound ``stored`` and re-score it; True if one did."""
        sleeping = self.sleeping
        if sleeping is None:
            return False
        woken = sleeping.wake_reaching(stored)
        if woken is None:
            return False
        for pk in self.rescore(woken)[0]:
            sleeping.forget(pk)
        return True

    def forget(self, pairs: Iterable[int]) -> None:
        """``pairs`` can never be eligible again: drop them from the token index."""
        if self.sleeping is not None:
            for pk in pairs:
                self.sleeping.forget(pk)

    def add_new(self, born: dict[int, int]) -> None:
        """Index a merge's new pairs under their tokens (scores that re-score the
        merged tokens' pairs)."""
        if self.sleeping is not None:
            least = self.plan.min_count
            self.sleeping.add(pk for pk, c in born.items() if c >= least)

    def visit_merged(self, left: int, right: int, priority: Any) -> None:
        """``PARTS``: re-score the merged tokens' awake pairs (every pair whose count
        fell is one); pairs far below the last merge's score fall asleep, each under
        its more frequent token (the one merged more often, whose merges would
        otherwise re-score it again and again)."""
        sleeping = self.sleeping
        if sleeping is None:
            return
        drowsy_below = priority * self.sleep_below if self.sleep_below else 0.0
        uni = self.table.unigram
        for tok in (left,) if left == right else (left, right):
            mine = sleeping.awake.get(tok)
            if mine:
                never, low = self.rescore(list(mine), drowsy_below)
                self.forget(never)
                if low:
                    under: dict[int, list[int]] = {}
                    for pk in low:
                        a, b = pk >> PAIR_SHIFT, pk & PAIR_MASK
                        under.setdefault(a if uni[a] >= uni[b] else b, []).append(pk)
                    bounds_get, counts_get = self.select.bound_of, self.pricing.counts_get
                    for t, pks in under.items():
                        sleeping.sleep(
                            t,
                            pks,
                            [bounds_get(pk) or 0.0 for pk in pks],
                            [counts_get(pk, 0) for pk in pks],
                        )
            if sleeping.rise is not None:
                sleeping.token_fell(tok)

    def touched(self, changes: Changes, deltas: MergeDeltas, rises_only: bool = False) -> set[int]:
        """The pairs a merge touched whose score can have risen: new pairs, pairs
        whose count fell (``count_fall_raises``), pairs whose group counts moved (with
        ``rises_only``, those that rose in some group)."""
        again = set(changes.born)
        if self.plan.rescore_fell:
            again.update(changes.fell)
        if self.plan.groups:
            if rises_only:
                # (a pair that rose in one group and fell by as much in another is not
                # born: the shipped representations never report one, the seam allows it)
                born = changes.born  # (already in: their rows need no look)
                again.update(
                    pk
                    for pk, row in deltas.group_pairs.items()
                    if pk not in born and any(d > 0 for d in row)
                )
            else:
                again.update(deltas.group_pairs)
        return again


class PushNewPairs(Rescoring):
    """Only new pairs can have risen: push their bounds, visit nothing else."""

    __slots__ = ()

    def rescore_after(
        self, left: int, right: int, changes: Changes, deltas: MergeDeltas, priority: Any
    ) -> None:
        self.select.extend(self.pricing.bounds(changes.born))

    def rescore_split(self, changes: Changes) -> None:
        self.select.extend(self.pricing.bounds(changes.born))


class RescoreTouched(Rescoring):
    """Re-score the pairs a merge touched (see :meth:`Rescoring.touched`) and the
    merged tokens' awake pairs (see :meth:`Rescoring.visit_merged`)."""

    __slots__ = ()

    def rescore_after(
        self, left: int, right: int, changes: Changes, deltas: MergeDeltas, priority: Any
    ) -> None:
        if self.sleeping is not None:
            self.add_new(changes.born)
            self.visit_merged(left, right, priority)
        self.forget(self.rescore(self.touched(changes, deltas))[0])


class RescoreAllWhenRaised(RescoreTouched):
    """:class:`RescoreTouched`, or every pair when the totals policy's ``can_raise``
    says the merge's change of totals can raise untouched scores."""

    __slots__ = ("policy",)

    def __init__(self, *args: Any, policy: RescoreAll, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.policy = policy

    def rescore_after(
        self, left: int, right: int, changes: Changes, deltas: MergeDeltas, priority: Any
    ) -> None:
        before, now = self.before, self.table.totals
        self.before = now
        if not self.policy.can_raise(before, now):
            super().rescore_after(left, right, changes, deltas, priority)
            return
        self.add_new(changes.born)
        self.rescore(list(self.table.pairs))
        if self.sleeping is not None and self.sleeping.rise is not None:
            for tok in {left, right}:
                self.sleeping.token_fell(tok)


class RescoreInEpochs(RescoreTouched):
    """:class:`RescoreTouched` within an epoch; when the totals leave it, a new epoch
    begins and every pair is bounded again (the structure is rebuilt). O(pairs)
    once per epoch."""

    __slots__ = ("clock",)

    def __init__(self, *args: Any, clock: EpochClock, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.clock = clock

    def check(self) -> None:
        self.clock.check(self.table.totals)
        super().check()

    def new_epoch(self, now: Totals) -> bool:
        """Begin a new epoch if ``now`` left the current one: the pricing's kernel and
        the sleeping pairs' rise bound are the new epoch's; every pair is awake."""
        if not self.clock.advance(now):
            return False
        self.pricing.kernel = self.clock.kernel()
        if self.sleeping is not None:
            self.sleeping.wake_all()
            self.sleeping.rise = self.clock.rise()
        return True

    def rescore_after(
        self, left: int, right: int, changes: Changes, deltas: MergeDeltas, priority: Any
    ) -> None:
        if not self.new_epoch(self.table.totals):
            super().rescore_after(left, right, changes, deltas, priority)
            return
        # every stored bound is the old epoch's: bound everything again
        self.select.rebuild(self.pricing.all_bounds())
        self.add_new(changes.born)

    def rescore_everything(self, pairs: list[int]) -> None:
        self.new_epoch(self.table.totals)  # (re-scoring everything bounds it)
        super().rescore_everything(pairs)


class RescoreInViews(RescoreTouched):
    """The touched pairs that can have risen (new pairs, pairs that rose in some
    group, fallen ones if ``count_fall_raises``, the merged tokens' pairs if
    ``unigram_fall_raises``), re-scored in every view built; then selection moves
    to the view of the new totals. O(touched pairs x views)."""

    __slots__ = ()

    def rescore_after(
        self, left: int, right: int, changes: Changes, deltas: MergeDeltas, priority: Any
    ) -> None:
        rising = self.touched(changes, deltas, rises_only=True)
        if self.sleeping is not None:  # (no pair sleeps: see rescoring_for)
            self.add_new(changes.born)
            for tok in {left, right}:
                rising.update(self.sleeping.awake.get(tok, ()))
        select = self.select
        assert isinstance(select, ViewSelection)
        select.move_to(self.table.totals)
        pairs = list(rising)
        gone: list[int] = []
        for _ in select.each_view():
            gone = self.rescore(pairs)[0]  # (the same in every view: counts and rules)
        self.forget(gone)

    def rescore_everything(self, pairs: list[int]) -> None:
        select = self.select
        assert isinstance(select, ViewSelection)
        select.move_to(self.table.totals)
        for _ in select.each_view():
            self.rescore(pairs)


def _defines_begin_step(score: Score) -> bool:
    """Does the score keep per-step state (define ``begin_step``)?"""
    return type(score).begin_step is not Score.begin_step


def _above(priority: Any, cover: float) -> bool:
    return priority is not None and priority > cover


def rescoring_for(
    plan: Plan, *args: Any, clock: EpochClock | None = None, **kwargs: Any
) -> Rescoring:
    """The strategy ``plan`` calls for (the arguments are :class:`Rescoring`'s)."""
    if plan.born_only:
        return PushNewPairs(*args, **kwargs)
    policy = plan.policy
    if isinstance(policy, RescoreAll):
        return RescoreAllWhenRaised(*args, policy=policy, **kwargs)
    if plan.epochs is not None:
        assert clock is not None
        return RescoreInEpochs(*args, clock=clock, **kwargs)
    if plan.views is not None:
        return RescoreInViews(*args, **kwargs)
    return RescoreTouched(*args, **kwargs)
