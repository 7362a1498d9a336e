"""Scores and options that break training from inside: NaN priorities past the first pairs,
a user score that raises, options whose numbers are out of range."""

from __future__ import annotations

import pytest

import bpeds
from bpeds.scoring import Dependency, score_function
from bpeds.scoring.base import DeclarationError, Score

# 3,000 distinct words: pairs made by merges (ids >= 256) appear only after the first
# merges, out of reach of the check of the first pairs before training.
TEXT = " ".join("w" + "".join(chr(97 + int(d)) for d in str(i)) for i in range(3000))


@score_function(Dependency.PAIR, priority="real", count_fall_raises=False)
def nan_for_new_tokens(count: int, left: int, right: int, stats: object) -> float:
    return float("nan") if left >= 260 else float(count)


@score_function(
    Dependency.PARTS,
    priority="real",
    count_fall_raises=False,
    unigram_fall_raises=False,
    kernel=lambda c, a, b, n: float("nan") if n < 16_500 else float(c),
)
def nan_kernel_later(count: int, left: int, right: int, stats: object) -> float:
    return float(count)


@score_function(Dependency.PAIR, count_fall_raises=False)
def nan_undeclared(count: int, left: int, right: int, stats: object) -> float:
    return float("nan") if left >= 260 else float(count)


@pytest.mark.parametrize(
    ("score", "where"),
    [(nan_for_new_tokens, "its score"), (nan_kernel_later, "its kernel"), (nan_undeclared, "")],
    ids=["score", "kernel", "undeclared"],
)
def test_a_nan_priority_anywhere_in_the_run_is_a_clear_error(score: Score, where: str) -> None:
    with pytest.raises(DeclarationError, match=f"{where}.* gave nan for pair") as info:
        bpeds.train(TEXT, 300, score=score, pattern="gpt2")
    assert score.name in str(info.value)
