"""Selection: the structure that finds the best pair, and the policies built on it.

:class:`Selection` is one :class:`~bpeds.structures.BoundHeap` (or any
:class:`~bpeds.structures.Multiset` through
:class:`~bpeds.structures.MultisetBounds`): it stores an upper bound of every
eligible pair's priority and checks its top against the exact priority
(``Pricing.current``); the first exact top is the best pair. Two policies a
``GLOBAL`` score can declare build on it:

- :class:`EpochSelection` (:class:`~bpeds.scoring.base.Epochs`): the bounds are
  epoch bounds, which hold for every totals the epoch can reach; selection takes
  the best *exact* score among the pairs whose bound reaches it, and everything is
  bounded again when the epoch ends (:class:`EpochClock`).
- :class:`ViewSelection` (:class:`~bpeds.scoring.base.Views`): one structure per
  view, each built when its view is first selected; rises go to every view.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from bpeds.driver.plan import Plan
from bpeds.driver.pricing import Pricing
from bpeds.errors import InvariantError
from bpeds.scoring.base import Epochs, Kernel, Priority, RiseBound, Stats, Totals, Views
from bpeds.scoring.ties import TieRule
from bpeds.structures.bound_heap import BoundError, BoundHeap, MultisetBounds
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.protocols import Multiset
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, Vocab

__all__ = ["EpochClock", "EpochSelection", "MultisetFactory", "Selection", "ViewSelection"]

#: ``f(tie=...)``: a :class:`~bpeds.structures.protocols.Multiset` to select through.
MultisetFactory = Callable[..., Multiset[int, Any]]

Entry = tuple[int, Priority]


def _default_multiset(tie: Any = None) -> Multiset[int, Any]:
    return HeapyKiYay(tie=tie)


class Selection:
    """One selection structure over the run's pairs.

    ``best()`` removes and returns the exact best ``(pair, priority)`` (None when
    nothing is eligible; ``BoundError`` when a pair's priority rose above its stored
    bound, a rise nobody pushed); ``extend(items)`` stores rises; ``bounds`` (a
    ``BoundHeap`` that tracks them) or ``bound_of(pair)`` read what is stored;
    ``discard`` (a ``Multiset`` only, else None) forgets a dead pair. Costs are the
    structure's: O(log n) per push and per entry examined.

    The structure is built by :meth:`start` (not at construction, so that a
    ``guard``, the sleeping pairs' wake-up, can be attached first) and again by
    :meth:`rebuild`.

    >>> from bpeds.driver.counts import CountTable
    >>> from bpeds.corpus import TypeCorpus
    >>> from bpeds.scoring import Frequency, SmallestIds, Stats
    >>> run = TypeCorpus([b"abab", b"ba"]).start("overlapping", False, lambda t: 1)
    >>> table = CountTable(run.initial(), 256, unigrams=False, groups=False, totals=False,
    ...                    watch=False)
    >>> plan = Plan.of(Frequency().declaration, SmallestIds(), min_count=1)
    >>> stats = Stats(plan.declaration.reads, lambda t: 1, None, table.current_totals)
    >>> pricing = Pricing(plan, table, run, Vocab(), SmallestIds(), stats, Frequency().score,
    ...                   None, max_token_length=None, variant=None)
    >>> select = Selection(plan, pricing, SmallestIds(), Vocab())
    >>> select.start(pricing.all_bounds())
    >>> select.check(table.pairs)
    >>> select.best()                  # (a, b) and (b, a) both twice: the smaller ids win
    (416611827810, 2)
    """

    __slots__ = (
        "best",
        "bound_of",
        "bounds",
        "discard",
        "extend",
        "guard",
        "multiset",
        "plan",
        "pricing",
        "rank",
        "structure",
        "tie",
    )

    def __init__(
        self,
        plan: Plan,
        pricing: Pricing,
        tie: TieRule,
        vocab: Vocab,
        multiset: MultisetFactory | None = None,
    ) -> None:
        self.plan = plan
        self.pricing = pricing
        self.tie = tie
        self.multiset = multiset
        #: the static tie rule's rank of a pair (None: the packed pair itself)
        self.rank = None if plan.dynamic else tie.heap_tie(vocab)
        #: called with the top's stored bound before it is checked (see BoundHeap)
        self.guard: Callable[[Any], bool] | None = None
        self.structure: BoundHeap | MultisetBounds
        self.bounds: dict[int, Any] | None = None
        self.bound_of: Callable[[int], Any]
        self.extend: Callable[[Iterable[Entry]], None]
        self.best: Callable[[], Entry | None]
        self.discard: Callable[[int], None] | None = None

    def start(self, items: Iterable[Entry]) -> None:
        """Build the structure from ``items`` and select through it. O(n)."""
        self._use(self.build(items))

    def rebuild(self, items: Iterable[Entry]) -> None:
        """Replace the structure by one built from ``items`` (every bound again). O(n)."""
        self._use(self.build(items))

    def checker(self) -> Callable[[int], Priority | None]:
        """The exact priority the structure checks its top against."""
        return self.pricing.current

    def source(self) -> Iterable[Entry]:
        """What a ``BoundHeap`` compacts itself from: every pair's bound now."""
        return self.pricing.all_bounds()

    def build(self, items: Iterable[Entry]) -> BoundHeap | MultisetBounds:
        """A new structure holding ``items``: a ``BoundHeap`` for int or real
        priorities (not with a multiset given), else the multiset's ``MultisetBounds``."""
        plan = self.plan
        current = self.checker()
        if not plan.on_heap:
            factory = self.multiset or _default_multiset
            return MultisetBounds(factory(tie=self.rank), current, items)
        return BoundHeap(
            current,
            items,
            integer=plan.integer,
            rank=self.rank,
            source=self.source,
            track=not plan.born_only,
            guard=self.guard,
            gap=1 if plan.integer else 0,
        )

    def check(self, pairs: Iterable[int]) -> None:
        """The structure's invariants, and that every eligible pair of ``pairs`` has a
        bound at least its priority. O(n + pairs)."""
        self.structure.check(pairs)

    def _use(self, structure: BoundHeap | MultisetBounds) -> None:
        self.structure = structure
        if isinstance(structure, BoundHeap):
            self.bounds = structure.bounds
            self.discard = None
        else:
            self.bounds = None
            self.discard = structure.discard
        self.bound_of = self.bounds.get if self.bounds is not None else structure.bound_of
        self.extend = structure.extend
        self.best = structure.pop


class EpochClock:
    """The epoch of a score with an :class:`~bpeds.scoring.base.Epochs` policy.

    ``epoch``: the totals the current epoch's bounds are computed at (what
    ``stats.totals()`` returns to ``Epochs.bound``). :meth:`advance` starts a new
    epoch once the totals leave the current one. O(1) per merge.

    >>> from bpeds.scoring import NPMI
    >>> clock = EpochClock(NPMI().declaration.totals, Totals(tokens=1000, pairs=900))
    >>> clock.current()
    Totals(tokens=1000, pairs=886, group_tokens=(), group_bytes=())
    >>> clock.advance(Totals(990, 890)), clock.advance(Totals(980, 880)), clock.current().pairs
    (False, True, 867)
    """

    __slots__ = ("epoch", "policy")

    def __init__(self, policy: Epochs, totals: Totals) -> None:
        self.policy = policy
        self.epoch = policy.start(totals)

    def current(self) -> Totals:
        """The epoch's totals."""
        return self.epoch

    def kernel(self) -> Kernel | None:
        """The epoch bound as an inline kernel (None: ``Epochs.bound`` is called)."""
        return None if self.policy.kernel is None else self.policy.kernel(self.epoch)

    def rise(self) -> RiseBound | None:
        """The epoch bounds' rise bound (None: no pair sleeps)."""
        return None if self.policy.unigram_bound is None else self.policy.unigram_bound(self.epoch)

    def check(self, now: Totals) -> None:
        """The totals ``now`` are still in the current epoch (the driver advanced it)."""
        if not self.policy.holds(now, self.epoch):
            raise InvariantError(f"totals {now} left the epoch {self.epoch}", now)

    def advance(self, now: Totals) -> bool:
        """Start a new epoch at ``now`` if ``now`` left the current one; True if it did."""
        if self.policy.holds(now, self.epoch):
            return False
        self.epoch = self.policy.start(now)
        return True


class EpochSelection(Selection):
    """Selection over epoch bounds: the best exact score among the pairs whose
    bound reaches it.

    The structure's top has the best *bound*. :meth:`best` takes pairs off in bound
    order, computing each one's exact score (``score_fn`` at the current totals,
    ``exact_stats``), until the next bound is below the best exact score found
    (equal scores go to the tie rule's smaller rank); the others are put back. A
    pair held off the structure meanwhile has no other live entry (its older,
    lower entries are dropped, not checked). An exact score above its bound raises
    ``BoundError``, as an undeclared rise does. O(k log n) for the k pairs examined.
    """

    __slots__ = ("exact_stats", "holding", "score_fn")

    def __init__(
        self,
        plan: Plan,
        pricing: Pricing,
        tie: TieRule,
        vocab: Vocab,
        score_fn: Callable[[int, int, int, Stats], Priority | None],
        exact_stats: Stats,
        multiset: MultisetFactory | None = None,
    ) -> None:
        super().__init__(plan, pricing, tie, vocab, multiset)
        self.score_fn = score_fn
        self.exact_stats = exact_stats
        #: pairs taken off the structure while selecting
        self.holding: set[int] = set()

    def _use(self, structure: BoundHeap | MultisetBounds) -> None:
        super()._use(structure)
        self.best = self.best_exact

    def checker(self) -> Callable[[int], Priority | None]:
        return self.current

    def current(self, k: int) -> Priority | None:
        """The pair's epoch bound now; None for a pair held off the structure."""
        if self.holding and k in self.holding:
            return None
        return self.pricing.current(k)

    def source(self) -> Iterable[Entry]:
        """Compacted from the stored bounds, which hold for the whole epoch."""
        return list((self.bounds or {}).items())

    def exact(self, entry: Entry) -> Priority | None:
        """The exact score of a pair taken off with its epoch bound (never above it)."""
        k, stored = entry
        pricing = self.pricing
        s = self.score_fn(
            pricing.counts_get(k, 0), k >> PAIR_SHIFT, k & PAIR_MASK, self.exact_stats
        )
        if s is not None and self.plan.dynamic:
            s = pricing.fold(s, pricing.positions.get(k, 0), pricing.shift)
        if s is not None and s > stored:
            self.holding.clear()
            raise BoundError(k, stored, s)
        return s

    def best_exact(self) -> Entry | None:
        """The best exact ``(pair, score)`` (see the class docstring)."""
        pop, holding = self.structure.pop, self.holding
        top = pop()
        if top is None:
            return None
        win, win_s = top[0], self.exact(top)
        held = [top]
        holding.add(win)
        while True:
            nxt = pop()
            if nxt is None:
                break
            held.append(nxt)
            holding.add(nxt[0])
            if win_s is not None and nxt[1] < win_s:
                break
            s = self.exact(nxt)
            if s is None:
                continue
            if win_s is None or s > win_s or (s == win_s and self._ranks_before(nxt[0], win)):
                win, win_s = nxt[0], s
        holding.clear()
        back = [entry for entry in held if entry[0] != win]
        if self.bounds is not None:
            self.bounds.update(back)
        self.extend(back)
        return None if win_s is None else (win, win_s)

    def _ranks_before(self, k: int, other: int) -> bool:
        if self.plan.dynamic:  # (folded into the score)
            return False
        rank = self.rank
        return (rank(k) < rank(other)) if rank is not None else k < other


class ViewSelection(Selection):
    """One selection structure per view of a :class:`~bpeds.scoring.base.Views` score.

    ``view``: the view of the current totals (set by :meth:`move_to`); ``best()``
    selects in it. A view's structure is built from every pair's bound the first
    time the view is selected; after that every rise is pushed into every built
    view (:meth:`each_view`), so each keeps upper bounds of its view's priorities
    and switching is free. O(views) per rise.
    """

    __slots__ = ("policy", "stats", "structures", "view")

    def __init__(
        self,
        plan: Plan,
        pricing: Pricing,
        tie: TieRule,
        vocab: Vocab,
        policy: Views,
        stats: Stats,
        multiset: MultisetFactory | None = None,
    ) -> None:
        super().__init__(plan, pricing, tie, vocab, multiset)
        self.policy = policy
        self.stats = stats
        if policy.reset is not None:
            policy.reset()
        self.view = stats.view = policy.view(pricing.table.totals)
        self.structures: dict[int, BoundHeap | MultisetBounds] = {}

    def start(self, items: Iterable[Entry]) -> None:
        self.structures[self.view] = self.build(items)
        self.activate(self.view)

    def move_to(self, totals: Totals) -> None:
        """Select in the view of ``totals`` from now on (after :meth:`each_view`)."""
        self.view = self.policy.view(totals)

    def activate(self, view: int) -> None:
        """Score in ``view`` and push to its structure (built from every pair's bound
        the first time)."""
        self.stats.view = view
        structure = self.structures.get(view)
        if structure is None:
            structure = self.structures[view] = self.build(self.pricing.all_bounds())
        self._use(structure)

    def check(self, pairs: Iterable[int]) -> None:
        """Every built view's structure, each against its view's priorities."""
        keys = list(pairs)
        for _ in self.each_view():
            self.structure.check(keys)

    def each_view(self) -> Iterator[int]:
        """Activate every built view in turn, ending in the current one."""
        for view in [v for v in self.structures if v != self.view]:
            self.activate(view)
            yield view
        self.activate(self.view)
        yield self.view
