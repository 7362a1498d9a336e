"""What a score declares: the driver trusts it where it can, and names the one at fault.

Scores written as a user would (a class, ``@score_function``), with and without
declarations, against the brute-force oracle; and declarations that lie, which the
driver must report with the pair's ids and bytes and the declaration at fault.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.corpus import SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord
from bpeds.errors import InvariantError
from bpeds.scoring import (
    Dependency,
    Frequency,
    Priority,
    Score,
    Stats,
    Totals,
    declared,
    score_function,
)
from bpeds.testing.oracle import brute_force_merges
from tests.budget import examples

chunk = st.lists(st.sampled_from(b"ab1c2"), max_size=12).map(bytes)
corpora = st.lists(chunk, min_size=1, max_size=8)


def as_tuples(records: list[MergeRecord]) -> list[tuple[Any, ...]]:
    return [(r.pair, r.new_id, r.count, r.score) for r in records]


class NoDigitLetter(Score):
    """Content-aware: a merge across a digit/letter boundary scores half (reads bytes)."""

    name = "no_digit_letter"
    depends = Dependency.PAIR
    numeric = True
    count_fall_raises = False

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        a, b = stats.token_bytes(left), stats.token_bytes(right)
        mixed = a[-1:].isdigit() != b[:1].isdigit()
        return count / 2 if mixed else float(count)


@score_function(Dependency.PAIR, integer=True, count_fall_raises=False)
def long_pairs(count: int, left: int, right: int, stats: Stats) -> Priority | None:
    return count * (stats.length(left) + stats.length(right))


@score_function(Dependency.PAIR)
def long_pairs_undeclared(count: int, left: int, right: int, stats: Stats) -> Priority | None:
    return count * (stats.length(left) + stats.length(right))


class Squared(Frequency):
    """A subclass with its own formula inherits none of Frequency's formula declarations."""

    name = "squared"

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return count * count - 3 * count


USER_SCORES = {
    "content-aware class": NoDigitLetter,
    "declared function": lambda: long_pairs,
    "undeclared function": lambda: long_pairs_undeclared,
    "subclass of Frequency": Squared,
}


@pytest.mark.parametrize("name", USER_SCORES)
@settings(max_examples=examples(ci=60, local=25), deadline=None)
@given(chunks=corpora, merges=st.integers(1, 20), tie=st.sampled_from(["leftmost", "hf"]))
def test_user_scores_equal_the_oracle(
    name: str, chunks: list[bytes], merges: int, tie: str
) -> None:
    want = as_tuples(brute_force_merges(chunks, merges, score=USER_SCORES[name](), tie=tie))
    for corpus in (TypeCorpus(chunks), SequenceCorpus(chunks)):
        got = MergeDriver(corpus, merges, score=USER_SCORES[name](), tie=tie).run()
        assert as_tuples(got) == want, type(corpus).__name__


def test_formula_declarations_are_not_inherited_by_a_new_formula() -> None:
    assert declared(Frequency(), "is_count")
    assert declared(Frequency(), "integer")
    assert not declared(Squared(), "is_count")
    assert not declared(Squared(), "integer")
    assert declared(long_pairs, "integer")
    assert declared(long_pairs, "numeric")


def test_score_function_refuses_an_unknown_declaration() -> None:
    with pytest.raises(TypeError, match=r"no declaration 'interger'.*integer"):
        score_function(Dependency.PAIR, interger=True)(lambda c, a, b, s: c)
    with pytest.raises(TypeError, match="integer must be bool"):
        score_function(Dependency.PAIR, integer=1)(lambda c, a, b, s: c)


class FallRaises(Score):
    """Rises when its count falls, but declares it does not."""

    name = "fall_raises"
    numeric = True
    integer = True
    count_fall_raises = False

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return 100 - count


class LyingGlobal(Score):
    """Reads N, rises when N falls, and says totals can never raise it."""

    name = "lying_global"
    depends = Dependency.GLOBAL
    numeric = True

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return count * 1000.0 - stats.totals().tokens

    def totals_can_raise(self, before: Totals, after: Totals) -> bool:
        return False


@pytest.mark.parametrize(
    ("score", "fault"),
    [
        (FallRaises(), "declares count_fall_raises = False, but a fall of its count raised it"),
        (LyingGlobal(), r"totals_can_raise\(\) returned False"),
    ],
)
def test_a_wrong_declaration_is_named_with_the_pair(score: Score, fault: str) -> None:
    # (b, c) merges first; (a, b) then falls from 4 to 1 and surfaces with its old bound.
    corpus = TypeCorpus([b"abc"] * 3 + [b"ab", b"xyz" * 40])
    with pytest.raises(InvariantError, match=fault) as err:
        MergeDriver(corpus, 20, score=score).run()
    # The pair is shown as ids and bytes, not as a packed int.
    assert "rose from" in str(err.value)
    assert "= b'" in str(err.value)
