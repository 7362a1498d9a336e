"""Scoring strategies and tie rules for the merge driver (see ``docs/scoring.md``)."""

from __future__ import annotations

from bpeds.scoring.base import (
    Dependency,
    DependencyError,
    Priority,
    Score,
    ScoreFunction,
    Stats,
    Totals,
    declared,
    score_function,
)
from bpeds.scoring.registry import get_score
from bpeds.scoring.strategies import (
    NPMI,
    PMI,
    Frequency,
    GroupFrequency,
    LengthWeighted,
    LikelihoodGain,
    WordPiece,
    worst_group,
)
from bpeds.scoring.ties import (
    Leftmost,
    Lexicographic,
    SmallestIds,
    TieRule,
    gpt2_byte_to_unicode,
    hf_byte_order,
    tie_rule,
)

__all__ = [
    "NPMI",
    "PMI",
    "Dependency",
    "DependencyError",
    "Frequency",
    "GroupFrequency",
    "Leftmost",
    "LengthWeighted",
    "Lexicographic",
    "LikelihoodGain",
    "Priority",
    "Score",
    "ScoreFunction",
    "SmallestIds",
    "Stats",
    "TieRule",
    "Totals",
    "WordPiece",
    "declared",
    "get_score",
    "gpt2_byte_to_unicode",
    "hf_byte_order",
    "score_function",
    "tie_rule",
    "worst_group",
]
