"""Scores written the way a user writes one, for the suite and ``bench_user_scores.py``.

The suite's children run ``jobs.py`` from this folder, so ``bpeds.train(...,
score="user_scores:length_weighted")`` imports this module there (see
:func:`bpeds.scoring.registry.get_score`).
"""

from __future__ import annotations

from bpeds.scoring import Declaration, Dependency, Priority, Score, Stats, score_function


@score_function(Dependency.PAIR, priority="int", count_fall_raises=False)
def length_weighted(count: int, left: int, right: int, stats: Stats) -> int:
    """``count * (len(left) + len(right))``: the shipped ``length_weighted`` (alpha 1),
    written as a plain function. Its declarations: an int score (packed heap
    entries), and a fall of the pair's count never raises it (nothing to re-score
    but the new pairs)."""
    return count * (stats.length(left) + stats.length(right))


def _scaled(bound: float, count: int, then: int, now: int) -> float:
    return bound * then / now


class Dice(Score):
    """``2 count / (c(left) + c(right))``, as ``docs/scoring.md`` writes it: with the
    declarations that put it on the fast path."""

    name = "dice"

    def __init__(self, min_count: int = 2) -> None:
        self.min_count = min_count
        self.declaration = Declaration(
            Dependency.PARTS,
            priority="real",
            min_count=min_count,
            count_fall_raises=False,
            unigram_fall_raises=True,
            kernel=self.kernel,
            unigram_bound=_scaled,
        )

    def kernel(self, count: int, c_left: int, c_right: int, n_tokens: int) -> Priority | None:
        return 2 * count / (c_left + c_right) if count >= self.min_count else None

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return self.kernel(count, stats.unigram(left), stats.unigram(right), 0)

    def options(self) -> dict[str, int]:
        return {"min_count": self.min_count}


class UndeclaredDice(Dice):
    """The same formula declaring only what it reads (the general path)."""

    name = "dice_undeclared"

    def __init__(self, min_count: int = 2) -> None:
        super().__init__(min_count)
        self.declaration = Declaration(Dependency.PARTS)
