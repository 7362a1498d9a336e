"""Pricing: the priority a pair is selected by, from its count and the run's rules."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from bpeds.corpus import CorpusRun
from bpeds.driver.counts import CountTable
from bpeds.driver.plan import Plan
from bpeds.errors import InvariantError
from bpeds.scoring.base import DeclarationError, Kernel, Priority, Stats
from bpeds.scoring.ties import TieRule
from bpeds.variants import Variant
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, Vocab

__all__ = ["Pricing"]


class Pricing:
    """The priority of a pair: its score under the run's rules, the tie folded in.

    A pair is not eligible (None) below ``min_count``, past ``max_token_length``
    bytes or when a variant's filter refuses it; otherwise its priority is the
    count (``priority="count"``), the inline ``kernel`` or the score's
    ``score_fn`` (with an :class:`~bpeds.scoring.base.Epochs` policy, the epoch
    bound and its kernel). A NaN from the kernel or the score raises
    :class:`~bpeds.scoring.base.DeclarationError` naming the score and the pair
    (:meth:`~bpeds.driver.checks.check_shortcuts` sees only the first pairs). A
    dynamic tie rule (``leftmost``) folds in the pair's first position:
    :meth:`bound` folds a stored lower bound of it (positions only move right, so
    the fold is an upper bound), :meth:`current` the exact one.

    Every method is O(1) per pair plus one score call, except :meth:`current` with
    a dynamic rule, which asks the corpus run for the pair's first position.

    >>> from bpeds.corpus import TypeCorpus
    >>> from bpeds.scoring import Frequency, Leftmost, Stats
    >>> from bpeds.vocab import Vocab
    >>> run = TypeCorpus([b"abab", b"ba"]).start("overlapping", False, lambda t: 1)
    >>> table = CountTable(run.initial(), 256, unigrams=False, groups=False, totals=False,
    ...                    watch=False)
    >>> plan = Plan.of(Frequency().declaration, Leftmost(), min_count=2)
    >>> stats = Stats(plan.declaration.reads, lambda t: 1, None, table.current_totals)
    >>> p = Pricing(plan, table, run, Vocab(), Leftmost(), stats, Frequency().score, None,
    ...             max_token_length=None, variant=None)
    >>> ab, ba = 97 << 32 | 98, 98 << 32 | 97
    >>> table.pairs[ab], table.pairs[ba], p.value(ab, 2), p.value(ba, 1)  # (ba: below 2)
    (2, 2, 2, None)
    >>> p.current(ab) > p.current(ba)          # equal counts: ab occurs first
    True
    >>> p.check()
    """

    __slots__ = (
        "counts_get",
        "current",
        "eligible",
        "first_position",
        "fold",
        "fold_many",
        "is_count",
        "kernel",
        "length",
        "max_len",
        "min_count",
        "plan",
        "positions",
        "score_fn",
        "score_name",
        "shift",
        "stats",
        "table",
        "unigram",
        "vocab",
    )

    def __init__(
        self,
        plan: Plan,
        table: CountTable,
        run: CorpusRun,
        vocab: Vocab,
        tie: TieRule,
        stats: Stats,
        score_fn: Callable[[int, int, int, Stats], Priority | None],
        kernel: Kernel | None,
        *,
        max_token_length: int | None,
        variant: Variant | None,
        score_name: str = "?",
    ) -> None:
        self.plan = plan
        self.score_name = score_name
        self.table = table
        self.counts_get = table.pairs.get
        self.unigram = table.unigram
        self.vocab = vocab
        self.length = vocab.length
        self.stats = stats
        self.score_fn = score_fn
        self.kernel = kernel
        self.min_count = plan.min_count
        self.max_len = max_token_length
        self.eligible = variant.eligible if variant is not None and variant.filters else None
        self.is_count = plan.is_count
        self.fold = tie.fold
        self.fold_many = tie.fold_many
        self.shift = run.position_limit.bit_length() + 1
        self.first_position = run.first_position
        #: dynamic ties: a lower bound of each pair's first position (0 if absent)
        self.positions: dict[int, int] = {}
        #: the selection structure's check: the pair's exact priority now
        self.current: Callable[[int], Any]
        if plan.counted:
            self.current = self._current_count_folded if plan.dynamic else self._current_count
        else:
            self.current = self._current

    def value(self, k: int, c: int) -> Priority | None:
        """The pair ``k``'s score at count ``c`` (None: not eligible)."""
        if c < self.min_count:
            return None
        left, right = k >> PAIR_SHIFT, k & PAIR_MASK
        if self.max_len is not None and self.length(left) + self.length(right) > self.max_len:
            return None
        eligible = self.eligible
        if eligible is not None and not eligible(self.vocab, left, right):
            return None
        if self.is_count:
            return c
        kernel = self.kernel
        if kernel is not None and left != right:
            uni = self.unigram
            s = kernel(c, uni[left], uni[right], self.table.totals.tokens)
        else:
            s = self.score_fn(c, left, right, self.stats)
        if s != s:  # NaN: unordered, it would corrupt the selection structure
            raise self._nan(left, right, s, kernel is not None and left != right)
        return s

    def _nan(self, left: int, right: int, s: object, by_kernel: bool) -> DeclarationError:
        where = "its kernel" if by_kernel else "its score"
        return DeclarationError(
            f"score {self.score_name!r}: {where} gave {s!r} for pair ({left}, {right}), which "
            "is not a priority: NaN is unordered (neither larger nor smaller than any "
            "other), so no pair could be selected by it; return a number, or None to leave "
            "the pair out"
        )

    def bound(self, k: int, c: int) -> Priority | None:
        """An upper bound of the pair's priority at count ``c``: its score, with a
        dynamic tie's stored position folded in."""
        s = self.value(k, c)
        if s is None or not self.plan.dynamic:
            return s
        return self.fold(s, self.positions.get(k, 0), self.shift)

    def bounds(self, born: dict[int, int]) -> Iterable[tuple[int, Priority]]:
        """The bounds of the pairs of ``born`` (pair -> count) that are eligible: a
        merge's new pairs, or every pair for a rebuild. O(len(born))."""
        plan = self.plan
        if plan.counted:  # the count itself; leftmost folds in each pair's position
            least = self.min_count
            items = born.items() if least <= 1 else [x for x in born.items() if x[1] >= least]
            return items if not plan.dynamic else self.fold_many(items, self.positions, self.shift)
        bound = self.bound
        return [(k, p) for k, c in born.items() if (p := bound(k, c)) is not None]

    def all_bounds(self) -> Iterable[tuple[int, Priority]]:
        """Every pair's bound now (a selection structure's rebuild). O(pairs)."""
        return self.bounds(self.table.pairs)

    def check(self) -> None:
        """Every stored position is a lower bound of its pair's first position now.
        O(stored positions x the run's first_position)."""
        for k, pos in self.positions.items():
            first = self.first_position(k)
            if first is not None and pos > first:
                raise InvariantError(f"pair {k}'s stored position {pos} is past {first}", k)

    def _current(self, k: int) -> Priority | None:
        s = self.value(k, self.counts_get(k, 0))
        if s is None or not self.plan.dynamic:
            return s
        pos = self.first_position(k)
        if pos is None:  # pragma: no cover - a counted pair always occurs
            raise InvariantError(f"pair {k} is counted but not found", k)
        self.positions[k] = pos
        return self.fold(s, pos, self.shift)

    def _current_count(self, k: int) -> Priority | None:
        c = self.counts_get(k, 0)
        return c if c >= self.min_count else None

    def _current_count_folded(self, k: int) -> Priority | None:
        c = self.counts_get(k, 0)
        if c < self.min_count:
            return None
        return self.fold(c, self.first_position(k) or 0, self.shift)
