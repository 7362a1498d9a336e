"""Scores written the way a user writes one, for the suite (``"user_scores:NAME"``).

The suite's children run ``jobs.py`` from this folder, so ``bpeds.train(...,
score="user_scores:length_weighted")`` imports this module there (see
:func:`bpeds.scoring.registry.get_score`).
"""

from __future__ import annotations

from bpeds.scoring import Dependency, Stats, score_function


@score_function(Dependency.PAIR, priority="int", count_fall_raises=False)
def length_weighted(count: int, left: int, right: int, stats: Stats) -> int:
    """``count * (len(left) + len(right))``: the shipped ``length_weighted`` (alpha 1),
    written as a plain function. Its declarations: an int score (packed heap
    entries), and a fall of the pair's count never raises it (nothing to re-score
    but the new pairs)."""
    return count * (stats.length(left) + stats.length(right))
