"""What the driver checks of a score's declaration before training, and what it advises."""

from __future__ import annotations

import warnings
from itertools import islice

from bpeds.driver.counts import CountTable
from bpeds.scoring.base import (
    DeclarationError,
    Dependency,
    Epochs,
    Score,
    SlowScoreWarning,
    Stats,
)
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT

__all__ = ["SAMPLE", "check_shortcuts", "warn_if_slow"]

#: How many of the first pairs :func:`check_shortcuts` scores both ways.
SAMPLE = 64

_warned: set[tuple[str, tuple[str, ...]]] = set()


def check_shortcuts(score: Score, table: CountTable, exact: Stats, bounds: Stats) -> None:
    """Score the first :data:`SAMPLE` pairs with :meth:`~bpeds.scoring.Score.score` and
    hold the shortcuts the declaration takes against it: ``priority="count"`` (the
    score is the count), ``kernel`` (equal to the score), the priority's type
    (``"int"``, ``"real"``: no NaN) and, with :class:`~bpeds.scoring.base.Epochs`, an
    epoch bound (read with ``bounds``) at least the score (read with ``exact``). A disagreement is a
    :class:`~bpeds.scoring.base.DeclarationError` naming the declaration (a subclass
    that changed the formula and kept its parent's declaration, say). O(SAMPLE).
    """
    d = score.declaration
    name = score.name
    uni = table.unigram
    policy = d.policy
    for k, c in islice(table.pairs.items(), SAMPLE):
        left, right = k >> PAIR_SHIFT, k & PAIR_MASK
        s = score.score(c, left, right, exact)
        if not d.accepts(s):
            raise DeclarationError(
                f"score {name!r} declares priority={d.priority!r}, but scored pair "
                f"({left}, {right}) {s!r}: declare the kind its score() returns"
            )
        if d.priority == "count" and s is not None and s != c:
            raise DeclarationError(
                f"score {name!r} declares priority='count', but scored pair ({left}, {right}), "
                f"counted {c} times, {s!r}: a score that is not the count must not declare it "
                "(a subclass that changes score() declares again)"
            )
        if (
            d.kernel is not None
            and d.reads >= Dependency.PARTS
            and not isinstance(policy, Epochs)
            and left != right
        ):
            fast = d.kernel(c, uni[left], uni[right], table.totals.tokens)
            if fast != s:
                raise DeclarationError(
                    f"score {name!r}'s kernel gives {fast!r} for pair ({left}, {right}) where "
                    f"score() gives {s!r}: the kernel must equal score() (a subclass that "
                    "changes score() declares again)"
                )
        if isinstance(policy, Epochs) and s is not None:
            bound = policy.bound(c, left, right, bounds)
            if bound is None or bound < s:
                raise DeclarationError(
                    f"score {name!r}'s epoch bound {bound!r} is below its score {s!r} for "
                    f"pair ({left}, {right}): Epochs.bound must bound the score"
                )


def warn_if_slow(score: Score) -> None:
    """Tell the user once (per score name and advice, per process) which declarations
    would let the driver do less work (see
    :meth:`~bpeds.scoring.base.Declaration.advice`), as a
    :class:`~bpeds.scoring.base.SlowScoreWarning`."""
    tips = tuple(score.declaration.advice())
    key = (score.name, tips)
    if not tips or key in _warned:
        return
    _warned.add(key)
    lines = "\n".join(f"  - {tip}" for tip in tips)
    warnings.warn(
        f"score {score.name!r} trains exactly, but slower than it could: it could declare\n"
        f"{lines}\n(see 'What a score declares' in docs/scoring.md)",
        SlowScoreWarning,
        stacklevel=4,
    )
