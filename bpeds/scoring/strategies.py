"""The scoring strategies bpeds ships.

Each states its formula, its :class:`~bpeds.scoring.base.Dependency` class and
why that class is right. ``count`` is the pair's count under the run's counting
rule, ``c(t)`` a token's unigram count, ``N`` the number of tokens, ``P`` the
sum of pair counts, ``len(t)`` a token's length in bytes.
"""

from __future__ import annotations

import math
from typing import Any

from bpeds.scoring.base import (
    Declaration,
    Dependency,
    Epochs,
    Kernel,
    Priority,
    RescoreAll,
    RiseBound,
    Score,
    Stats,
    Totals,
    Views,
)

__all__ = [
    "NPMI",
    "PMI",
    "Frequency",
    "GroupFrequency",
    "LengthWeighted",
    "LikelihoodGain",
    "WordPiece",
    "worst_group",
]


class Frequency(Score):
    """``count``: classic BPE. ``PAIR`` class.

    >>> Frequency().describe()
    {'name': 'frequency'}
    """

    name = "frequency"
    declaration = Declaration(Dependency.PAIR, priority="count", count_fall_raises=False)

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return count


class LengthWeighted(Score):
    """``count * (len(left) + len(right)) ** alpha``: favours long merges. ``PAIR`` class
    (byte lengths are fixed properties of a pair).

    With an integer ``alpha`` the score is an exact integer. ``alpha`` is an int or
    a float from 0 to :attr:`MAX_ALPHA`: beyond it the weights of long tokens
    overflow a float, or are integers of hundreds of digits (``ValueError``; a
    ``bool`` or another type, ``TypeError``).
    """

    name = "length_weighted"
    #: The largest ``alpha``: a token pair of 64 KiB is weighted 2**512 at most.
    MAX_ALPHA = 32

    def __init__(self, alpha: float = 1) -> None:
        if isinstance(alpha, bool) or not isinstance(alpha, int | float):
            raise TypeError(f"alpha must be an int or a float, got {type(alpha).__name__}")
        if not 0 <= alpha <= self.MAX_ALPHA:
            raise ValueError(f"alpha must be from 0 to {self.MAX_ALPHA}, got {alpha!r}")
        self.alpha = alpha
        # count times a fixed weight; an int alpha gives int scores (packed heap entries)
        self.declaration = Declaration(
            Dependency.PAIR,
            priority="int" if type(alpha) is int else "real",
            count_fall_raises=False,
        )

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return count * (stats.length(left) + stats.length(right)) ** self.alpha

    def options(self) -> dict[str, Any]:
        return {"alpha": self.alpha}


class _MinCount(Score):
    """A score with a ``min_count``: pairs seen fewer times are not eligible."""

    def __init__(self, min_count: int = 1) -> None:
        if not (isinstance(min_count, int) and min_count >= 1):
            raise ValueError(f"min_count must be an int >= 1, got {min_count!r}")
        self.min_count = min_count
        self.declaration = self.declare(min_count)

    def declare(self, min_count: int) -> Declaration:
        """The declaration of this score with this ``min_count``."""
        raise NotImplementedError

    def options(self) -> dict[str, Any]:
        return {"min_count": self.min_count}


class PMI(_MinCount):
    """``count / (c(left) * c(right))``, for pairs seen at least ``min_count`` times.

    The WordPiece training score. ``PARTS`` class: it reads the unigram counts
    of both tokens, and when those fall (a merge consumed some of them) the
    score of every pair containing them rises, so the driver re-scores those.
    """

    name = "pmi"

    def declare(self, min_count: int) -> Declaration:
        """Grows with the count; ``c(t)`` is a divisor, so a fall of ``c(t)`` from
        ``then`` to ``now`` multiplies the score by exactly ``then / now``."""
        return Declaration(
            Dependency.PARTS,
            priority="real",
            min_count=min_count,
            count_fall_raises=False,
            unigram_fall_raises=True,
            kernel=_pmi_kernel(min_count),
            unigram_bound=_scaled,
        )

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        if count < self.min_count:
            return None
        return count / (stats.unigram(left) * stats.unigram(right))


def _pmi_kernel(least: int) -> Kernel:
    """PMI as a kernel: ``count / (c(left) c(right))``, None below ``least``."""

    def pmi(count: int, c_left: int, c_right: int, tokens: int) -> float | None:
        return None if count < least else count / (c_left * c_right)

    return pmi


def _scaled(bound: float, count: int, then: int, now: int) -> float:
    return bound * then / now


class WordPiece(PMI):
    """Alias of :class:`PMI` under the name users of WordPiece know."""

    name = "wordpiece"


class LikelihoodGain(_MinCount):
    """Gain in corpus log-likelihood under a unigram model if the pair is merged.

    With ``k = count``, the merge turns ``k`` pairs into ``k`` new tokens: ``N``
    falls by ``k``, ``c(left)`` and ``c(right)`` by ``k`` each (``2k`` when
    ``left == right``). With ``f(x) = x log x``, the gain is::

        f(k) + f(c(l) - k) + f(c(r) - k) - f(c(l)) - f(c(r)) + f(N) - f(N - k)

    (``f`` of a non-positive number is 0: with overlapping counts a run such as
    ``aaa`` counts 2 pairs but merges once, so this is an estimate there).
    ``GLOBAL`` class: it reads ``N``. ``f(N) - f(N - k)`` grows with ``N``, and
    ``N`` only falls during training, so a change of totals can only *lower*
    an untouched pair's score: ``totals_can_raise`` is false unless ``N`` grew,
    and the lazy heap stays exact without re-scoring everything.
    """

    name = "likelihood_gain"

    def declare(self, min_count: int) -> Declaration:
        """Its own count moves it either way (``count_fall_raises``); a fall of
        ``c(t)`` raises it by at most :func:`_gain_bound`; the totals only lower it
        while ``N`` falls (see the class docstring)."""
        return Declaration(
            Dependency.GLOBAL,
            priority="real",
            min_count=min_count,
            count_fall_raises=True,
            unigram_fall_raises=True,
            kernel=_gain_kernel(min_count),
            unigram_bound=_gain_bound,
            totals=RescoreAll(_tokens_grew),
        )

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        if count < self.min_count:
            return None
        n = stats.totals().tokens
        cl = stats.unigram(left)
        if left == right:
            return _gain(count, cl, 0, n)  # (no second token: cl loses 2k)
        return _gain(count, cl, stats.unigram(right), n)


def _tokens_grew(before: Totals, after: Totals) -> bool:
    """LikelihoodGain's ``can_raise``: only ``f(N) - f(N - k)`` reads the totals, and
    it grows with ``N``."""
    return after.tokens > before.tokens


def _gain_kernel(least: int) -> Kernel:
    """LikelihoodGain as a kernel, None below ``least``."""

    def gain(count: int, c_left: int, c_right: int, n: int) -> float | None:
        return None if count < least else _gain(count, c_left, c_right, n)

    return gain


def _gain(count: int, cl: int, cr: int, n: int) -> float:
    """LikelihoodGain's one formula (score and kernel both call it: the same floats).
    ``cr == 0`` stands for a pair ``(t, t)``: ``c(t) = cl`` loses ``2 * count``."""
    log = math.log
    gain = count * log(count) + n * log(n)
    rest = n - count
    if rest > 0:
        gain -= rest * log(rest)
    gain -= cl * log(cl)
    rest = cl - (2 * count if cr == 0 else count)
    if rest > 0:
        gain += rest * log(rest)
    if cr:
        gain -= cr * log(cr)
        rest = cr - count
        if rest > 0:
            gain += rest * log(rest)
    return gain


def _xlogx(x: float) -> float:
    return x * math.log(x) if x > 0 else 0.0


def _gain_bound(bound: float, count: int, then: int, now: int) -> float:
    """A fall of ``c(t)`` from ``then`` to ``now`` changes only the term ``h(c) =
    f(c - k) - f(c)`` of ``t``, which falls as ``c`` grows (``h'(c) = log((c - k) / c)
    < 0``): the gain rises by exactly ``h(now) - h(then)``. That rise grows with ``k``
    (its derivative in ``k`` is ``log((then - k) / (now - k)) > 0``) and with
    ``then``, so the pair's count (or any larger one, up to ``now``) gives the bound."""
    k = min(count, now)
    return bound + (_xlogx(now - k) - _xlogx(now)) - (_xlogx(then - k) - _xlogx(then))


class NPMI(_MinCount):
    """Normalised PMI: ``log(p(lr) / (p(l) p(r))) / -log p(lr)``, in ``[-1, 1]``.

    ``p(lr) = count / P`` and ``p(t) = c(t) / N``. Pairs seen fewer than
    ``min_count`` times are not eligible. ``GLOBAL`` class: a fall of ``P`` raises
    every untouched score, so it declares ``epochs``. With ``A = log(N² / (c(l)
    c(r))) >= 0`` and ``h = log P - log count > 0`` the score is ``A / h - 1``: it
    falls with ``N`` and rises as ``P`` falls. An epoch starting at totals ``(N, P)``
    lasts while ``P`` stays at or above ``P_e = P (1 - 1/epoch_parts)`` (and ``N`` does
    not grow); the score at ``(N, P_e)`` bounds every score of the epoch. Within an
    epoch the bound grows with the pair's count and falls with its tokens' counts,
    which the declarations say (``count_fall_raises = False``; ``unigram_fall_raises``).

    >>> from bpeds.scoring.base import Dependency, Stats, Totals
    >>> s = NPMI()
    >>> e = s.epoch(Totals(tokens=1000, pairs=900))
    >>> e.pairs, s.in_epoch(Totals(990, 890), e), s.in_epoch(Totals(900, 870), e)
    (886, True, False)
    """

    name = "npmi"
    #: An epoch lasts while ``P`` falls by less than ``1 / epoch_parts`` of itself: a
    #: speed knob (shorter epochs: tighter bounds, more re-scoring), exact for any value.
    epoch_parts = 64

    def declare(self, min_count: int) -> Declaration:
        """Bounded over epochs of ``P``; at an epoch's totals the bound grows with the
        pair's count and rises when a token's count falls (see the class docstring)."""
        return Declaration(
            Dependency.GLOBAL,
            priority="real",
            min_count=min_count,
            count_fall_raises=False,
            unigram_fall_raises=True,
            totals=Epochs(
                start=self.epoch,
                holds=self.in_epoch,
                bound=self.epoch_bound,
                kernel=self.epoch_kernel,
                unigram_bound=self.epoch_unigram_bound,
            ),
        )

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        if count < self.min_count:
            return None
        totals = stats.totals()
        p_pair = count / totals.pairs
        if p_pair >= 1.0:
            return 1.0
        n = totals.tokens
        pmi = math.log(p_pair * n * n / (stats.unigram(left) * stats.unigram(right)))
        return pmi / -math.log(p_pair)

    def epoch(self, totals: Totals) -> Totals:
        """The same tokens; pairs lowered by ``1 / epoch_parts`` (at least by one)."""
        pairs = totals.pairs
        return Totals(totals.tokens, pairs - max(1, pairs // self.epoch_parts))

    def in_epoch(self, totals: Totals, epoch: Totals) -> bool:
        return totals.pairs >= epoch.pairs and totals.tokens <= epoch.tokens

    def epoch_bound(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        """The score at the epoch's ``(N, P_e)`` (plus a margin for rounding): ``A``
        only falls within the epoch and ``h`` is smallest at ``P_e``. A pair counted
        ``P_e`` times or more could come to hold nearly all pairs, where the score has
        no useful bound: it gets an enormous one (and is checked at every selection).
        """
        if count < self.min_count:
            return None
        if count >= stats.totals().pairs:
            return _NO_BOUND
        bound = self.score(count, left, right, stats)
        assert bound is not None
        return bound + _MARGIN

    def epoch_unigram_bound(self, epoch: Totals) -> RiseBound:
        """The epoch bounds' :data:`~bpeds.scoring.base.RiseBound` (see :func:`_npmi_rise`)."""
        return _npmi_rise(epoch.pairs)

    def epoch_kernel(self, epoch: Totals) -> Kernel:
        """:meth:`epoch_bound` as ``(2 log N - log c(l) c(r)) / (log P_e - log count) - 1``
        (the same real number as the score's formula at the epoch's totals; the margin
        covers the two formulas' rounding)."""
        least, pairs = self.min_count, epoch.pairs
        log = math.log
        # (no pairs: every count is at least P_e, and the formula is never reached)
        two_log_n = 2 * log(epoch.tokens) if epoch.tokens > 0 else 0.0
        log_p = log(pairs) if pairs > 0 else 0.0

        def bound(count: int, c_left: int, c_right: int, tokens: int) -> float | None:
            if count < least:
                return None
            if count >= pairs:
                return _NO_BOUND
            return (two_log_n - log(c_left * c_right)) / (log_p - log(count)) - 1 + _MARGIN

        return bound


def _npmi_rise(pairs: int) -> RiseBound:
    """NPMI's epoch bound ``(2 log N - log c(l) c(r)) / (log P_e - log count) - 1`` after
    a fall of ``c(t)`` from ``then`` to ``now``: up by ``log(then / now) / (log P_e -
    log count)``, more for a larger count (below ``P_e``) and a larger ``then``."""
    log = math.log
    log_p = log(pairs) if pairs > 0 else 0.0

    def rise(bound: float, count: int, then: int, now: int) -> float:
        if count >= pairs:
            return _NO_BOUND
        return bound + log(then / now) / (log_p - log(count))

    return rise


#: Added to NPMI's epoch bounds: far above the rounding of either formula (scores are
#: near 1; a double carries 16 digits).
_MARGIN = 1e-9


#: A bound above any score (finite: heaps bucket bounds by binary exponent).
_NO_BOUND = 1e300


def worst_group(totals: Totals) -> int:
    """The group with the most tokens per byte (worst compression); lowest index on ties.

    Groups without bytes are skipped; -1 if there is none.
    """
    best = -1
    bt, bb = 0, 1
    for g, (t, b) in enumerate(zip(totals.group_tokens, totals.group_bytes, strict=True)):
        if b > 0 and (best < 0 or t * bb > bt * b):
            best, bt, bb = g, t, b
    return best


class GroupFrequency(Score):
    """Parity-aware frequency for multilingual corpora.

    Counts are kept per group (language); each step serves the group that is
    compressed worst so far (most tokens per byte of its text) with the pair
    most frequent *in that group*, and when that group has no pair left the
    overall count decides. The priority is the int ``g * 2**48 + count``, with
    ``g`` the count in the worst group: ordered as the pair ``(g, count)`` (counts
    must stay below ``2**48``; a larger one raises ``ValueError``).

    ``GLOBAL`` class reading per-group counts (``groups``), and its totals policy is
    :class:`~bpeds.scoring.base.Views`: the totals matter only through which group
    is worst (:func:`worst_group`), so the driver keeps one heap per group rather
    than re-scoring every pair when the worst group changes. Within a view the
    priority falls when the pair's counts fall (``count_fall_raises = False``) and
    reads no unigram counts.

    >>> from bpeds.scoring.base import Dependency, Stats, Totals
    >>> groups = {5: [3, 1]}  # pair key 5: 3 times in group 0, once in group 1
    >>> stats = Stats(Dependency.GLOBAL, len, None, lambda: Totals(10, 9, (4, 6), (4, 12)),
    ...               groups, lambda left, right: 5)
    >>> s = GroupFrequency()
    >>> worst_group(stats.totals())  # group 0: 4 tokens for 4 bytes, group 1: 6 for 12
    0
    >>> divmod(s.score(4, 1, 2, stats), 2**48)
    (3, 4)
    """

    name = "group_frequency"
    declaration = Declaration(
        Dependency.GLOBAL,
        groups=True,
        priority="int",
        count_fall_raises=False,  # both parts of the priority fall with the pair's counts
        unigram_fall_raises=False,  # reads no unigram counts
        totals=Views(worst_group),
    )

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        g = stats.view
        if g is None:
            g = worst_group(stats.totals())
        if count >= _GROUP_SHIFT_LIMIT:
            raise ValueError(
                f"group_frequency packs counts into 48 bits; a pair counted {count} times "
                "is too many (train on less text per group)"
            )
        in_group = stats.group_count(left, right, g) if g >= 0 else 0
        return (in_group << 48) + count


_GROUP_SHIFT_LIMIT = 1 << 48
