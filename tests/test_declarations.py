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
    PMI,
    Declaration,
    DeclarationError,
    Dependency,
    Frequency,
    Priority,
    RescoreAll,
    Score,
    SlowScoreWarning,
    Stats,
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
    declaration = Declaration(Dependency.PAIR, priority="real", count_fall_raises=False)

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        a, b = stats.token_bytes(left), stats.token_bytes(right)
        mixed = a[-1:].isdigit() != b[:1].isdigit()
        return count / 2 if mixed else float(count)


@score_function(Dependency.PAIR, priority="int", count_fall_raises=False)
def long_pairs(count: int, left: int, right: int, stats: Stats) -> Priority | None:
    return count * (stats.length(left) + stats.length(right))


@score_function(Dependency.PAIR)
def long_pairs_undeclared(count: int, left: int, right: int, stats: Stats) -> Priority | None:
    return count * (stats.length(left) + stats.length(right))


class Squared(Frequency):
    """A subclass with its own formula declares again (here: nothing)."""

    name = "squared"
    declaration = Declaration()

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


class Doubled(Frequency):
    """A new formula that keeps its parent's declaration (``priority="count"``)."""

    name = "doubled"

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return 2 * count


class Halved(PMI):
    """A new formula that keeps PMI's kernel."""

    name = "halved"

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        pmi = super().score(count, left, right, stats)
        return None if pmi is None else pmi / 2


@pytest.mark.parametrize(
    ("score", "fault"),
    [
        (Doubled(), r"declares priority='count', but scored pair .* counted \d+ times, \d+"),
        (Halved(), r"kernel gives .* where score\(\) gives"),
    ],
)
def test_a_new_formula_under_its_parents_shortcut_is_refused(score: Score, fault: str) -> None:
    with pytest.raises(DeclarationError, match=fault):
        MergeDriver(TypeCorpus([b"abcab", b"abd"]), 3, score=score).run()


def test_score_function_refuses_an_unknown_or_malformed_declaration() -> None:
    with pytest.raises(TypeError, match=r"no declaration 'interger'.*priority"):
        score_function(Dependency.PAIR, interger=True)(lambda c, a, b, s: c)
    with pytest.raises(DeclarationError, match="priority must be 'count', 'int', 'real' or None"):
        score_function(Dependency.PAIR, priority=int)(lambda c, a, b, s: c)
    with pytest.raises(DeclarationError, match="count_fall_raises must be True or False"):
        score_function(Dependency.PAIR, count_fall_raises=1)(lambda c, a, b, s: c)
    with pytest.raises(DeclarationError, match="totals= is for GLOBAL scores"):
        score_function(Dependency.PARTS, totals=RescoreAll())(lambda c, a, b, s: c)


def test_score_function_declares_everything_a_class_can() -> None:
    pmi = PMI(min_count=2)

    @score_function(pmi.declaration)
    def my_pmi(count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return pmi.score(count, left, right, stats)

    assert my_pmi.declaration == pmi.declaration
    chunks = [b"the cat sat on the mat", b"the hat", b"that cat"] * 3
    want = MergeDriver(TypeCorpus(chunks), 10, score=pmi).run()
    assert MergeDriver(TypeCorpus(chunks), 10, score=my_pmi).run() == want


def test_a_score_that_could_declare_more_is_told_once(recwarn: pytest.WarningsRecorder) -> None:
    @score_function(Dependency.PARTS, name="told_once")
    def dice(count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return 2 * count / (stats.unigram(left) + stats.unigram(right))

    corpus = TypeCorpus([b"abcab", b"abd"])
    MergeDriver(corpus, 3, score=dice).run()
    MergeDriver(corpus, 3, score=dice).run()
    told = [w for w in recwarn if issubclass(w.category, SlowScoreWarning)]
    assert len(told) == 1
    text = str(told[0].message)
    for member in ("priority='real'", "count_fall_raises=False", "kernel=", "unigram_fall_raises"):
        assert member in text
    # A score that declares what it can is not told anything.
    MergeDriver(corpus, 3, score=PMI()).run()
    assert len([w for w in recwarn if issubclass(w.category, SlowScoreWarning)]) == 1


class FallRaises(Score):
    """Rises when its count falls, but declares it does not."""

    name = "fall_raises"
    declaration = Declaration(priority="int", count_fall_raises=False)

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return 100 - count


class LyingGlobal(Score):
    """Reads N, rises when N falls, and says totals can never raise it."""

    name = "lying_global"
    declaration = Declaration(
        Dependency.GLOBAL, priority="real", totals=RescoreAll(lambda before, after: False)
    )

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return count * 1000.0 - stats.totals().tokens


@pytest.mark.parametrize(
    ("score", "fault"),
    [
        (FallRaises(), "declares count_fall_raises=False, but a fall of its count raised it"),
        (LyingGlobal(), r"RescoreAll.can_raise returned False"),
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
