"""PARTS-class scores (PMI, WordPiece): the driver's bound machinery against plain bounds and
the brute-force oracle.

PMI and WordPiece declare a kernel and a ``unigram_bound``, so by default the driver calls the
kernel inline, parks low bounds in the BoundHeap's buckets and puts pairs far below the top
to sleep under one of their tokens. The reference path ("plain") selects with a
``MultisetBounds`` over ``HeapyKiYay``: no parking, no sleeping, every rise stored. Both must
give the oracle's merges, scores included, on every option that reaches that code.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.corpus import SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord
from bpeds.scoring.base import Declaration, Dependency, Priority, RescoreAll, Score, Stats
from bpeds.scoring.strategies import NPMI, PMI, LikelihoodGain, WordPiece
from bpeds.structures.heapy import Heapy
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.lazyheap import LazyHeap
from bpeds.testing.oracle import brute_force_merges
from bpeds.tokenizer.pretokenize import split
from tests.budget import FULL, examples, matrix

TEXT = (Path(__file__).parent / "data" / "taylorswift.txt").read_text(encoding="utf-8")

CORPORA: dict[str, Callable[[list[bytes]], Any]] = {
    "type": TypeCorpus,
    "sequence": SequenceCorpus,
}
TIES = ("smallest_ids", "leftmost", "lexicographic")

# Small alphabets and repeated chunks: many pairs share tokens, so merges lower the unigram
# counts under many other pairs (the rises the fast path handles).
chunk = st.lists(st.sampled_from(b"abcd"), min_size=0, max_size=14).map(bytes)
corpora = st.lists(chunk, min_size=1, max_size=12)


def records(
    chunks: list[bytes], merges: int, representation: str, fast: bool, **options: Any
) -> list[tuple[Any, ...]]:
    """A run with the declared machinery (``fast``) or with plain bounds."""
    if not fast:
        options.setdefault("multiset", HeapyKiYay)
    driver = MergeDriver(CORPORA[representation](chunks), merges, **options)
    return as_tuples(driver.run())


def as_tuples(recs: list[MergeRecord]) -> list[tuple[Any, ...]]:
    return [(r.pair, r.new_id, r.count, r.score) for r in recs]


# CI runs both scores under every tie rule; a local run the diagonal, 3 cases that meet both
# scores and every tie rule (``matrix`` in tests/budget.py).
@pytest.mark.parametrize(
    ("cls", "tie"), matrix([PMI, WordPiece], TIES, ids=[["PMI", "WordPiece"], list(TIES)])
)
@settings(max_examples=examples(ci=60, local=30), deadline=None)
@given(
    chunks=corpora,
    merges=st.integers(1, 20),
    score_min=st.integers(1, 3),
    min_count=st.integers(1, 3),
    max_len=st.none() | st.integers(2, 4),
)
def test_fast_path_equals_generic_loop_and_oracle(
    cls: type[PMI],
    tie: str,
    chunks: list[bytes],
    merges: int,
    score_min: int,
    min_count: int,
    max_len: int | None,
) -> None:
    """Both representations, fast and generic, against one oracle run per input."""
    options: dict[str, Any] = {
        "tie": tie,
        "min_count": min_count,
        "max_token_length": max_len,
    }
    expected = as_tuples(brute_force_merges(chunks, merges, score=cls(score_min), **options))
    for representation in CORPORA:
        fast = records(chunks, merges, representation, True, score=cls(score_min), **options)
        slow = records(chunks, merges, representation, False, score=cls(score_min), **options)
        assert fast == slow == expected, f"representation={representation}"


@pytest.mark.parametrize("multiset", [Heapy, LazyHeap])
@settings(max_examples=examples(ci=30, local=10), deadline=None)
@given(chunks=corpora, merges=st.integers(1, 20))
def test_fast_path_with_other_priority_structures(
    multiset: Callable[..., Any], chunks: list[bytes], merges: int
) -> None:
    fast = records(chunks, merges, "type", True, score=PMI(2), multiset=multiset)
    expected = as_tuples(brute_force_merges(chunks, merges, score=PMI(2)))
    assert fast == expected


@settings(max_examples=examples(ci=30, local=10), deadline=None)
@given(chunks=corpora, merges=st.integers(1, 20))
def test_non_overlapping_counting(chunks: list[bytes], merges: int) -> None:
    options: dict[str, Any] = {"score": PMI(2), "counting": "non_overlapping"}
    fast = records(chunks, merges, "type", True, **options)
    expected = as_tuples(brute_force_merges(chunks, merges, **options))
    assert fast == expected


# The oracle takes about a second per tie rule here: CI runs both, a local run leftmost (the
# small random corpora above run every tie rule locally).
@pytest.mark.parametrize("tie", ["smallest_ids", "leftmost"] if FULL else ["leftmost"])
def test_real_text_equals_oracle(tie: str) -> None:
    """Enough merges on real text that low rises are bucketed and buckets flushed."""
    chunks = list(split(TEXT[:6000], "gpt2"))
    expected = as_tuples(brute_force_merges(chunks, 150, score=PMI(2), tie=tie))
    for representation in CORPORA:
        fast = records(chunks, 150, representation, True, score=PMI(2), tie=tie)
        assert fast == expected, f"representation={representation}"


def test_real_text_long_run_equals_plain_bounds() -> None:
    """A long run (down to the low scores late in training) against plain bounds."""
    chunks = list(split(TEXT[:60000], "gpt2"))
    fast = records(chunks, 1500, "type", True, score=WordPiece(2))
    slow = records(chunks, 1500, "type", False, score=WordPiece(2))
    assert len(fast) == 1500
    assert fast == slow


class DoubledPMI(PMI):
    """A subclass with its own formula declares again: no kernel, no unigram_bound."""

    name = "doubled_pmi"

    def declare(self, min_count: int) -> Declaration:
        return Declaration(Dependency.PARTS, min_count=min_count)

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        if count < self.min_count:
            return None
        return -count / (stats.unigram(left) + stats.unigram(right))


@settings(max_examples=examples(ci=30, local=10), deadline=None)
@given(chunks=corpora, merges=st.integers(1, 12))
def test_a_subclass_keeps_its_own_formula(chunks: list[bytes], merges: int) -> None:
    score: Score = DoubledPMI(1)
    got = records(chunks, merges, "type", True, score=score)
    assert got == as_tuples(brute_force_merges(chunks, merges, score=DoubledPMI(1)))


@settings(max_examples=examples(ci=180, local=60), deadline=None)
@given(chunks=corpora, merges=st.integers(1, 24), score_min=st.integers(1, 2))
def test_sleeping_pairs_stay_exact(chunks: list[bytes], merges: int, score_min: int) -> None:
    """Put many pairs to sleep (up to all of a merged token's): merges stay the oracle's, for
    every threshold and representation (one oracle run per input)."""
    expected = as_tuples(brute_force_merges(chunks, merges, score=PMI(score_min)))
    for sleep_below, representation in itertools.product([0.0, 1.0, 64.0], CORPORA):
        driver = MergeDriver(CORPORA[representation](chunks), merges, score=PMI(score_min))
        driver.sleep_below = sleep_below
        got = as_tuples(driver.run())
        assert got == expected, f"sleep_below={sleep_below}, representation={representation}"


@settings(max_examples=examples(ci=120, local=40), deadline=None)
@given(chunks=corpora, merges=st.integers(1, 24), score_min=st.integers(1, 2))
def test_likelihood_gain_sleeping_pairs_stay_exact(
    chunks: list[bytes], merges: int, score_min: int
) -> None:
    """LikelihoodGain declares an additive unigram_bound: its sleeping pairs too."""
    expected = as_tuples(brute_force_merges(chunks, merges, score=LikelihoodGain(score_min)))
    for sleep_below in (0.0, 1.0, 64.0):
        driver = MergeDriver(TypeCorpus(chunks), merges, score=LikelihoodGain(score_min))
        driver.sleep_below = sleep_below
        assert as_tuples(driver.run()) == expected, f"sleep_below={sleep_below}"


def test_likelihood_gain_sleeping_pairs_on_real_text() -> None:
    chunks = list(split(TEXT[:60000], "gpt2"))
    plain = records(chunks, 800, "type", False, score=LikelihoodGain(2))
    assert len(plain) == 800
    for sleep_below in (1 / 16, 1.0):
        driver = MergeDriver(TypeCorpus(chunks), 800, score=LikelihoodGain(2))
        driver.sleep_below = sleep_below
        assert as_tuples(driver.run()) == plain, f"sleep_below={sleep_below}"


def test_sleeping_pairs_on_real_text() -> None:
    """The whole file, 3,000 merges: late in training most rises are parked (their bound
    is their bucket's) while their pairs sleep, the case where a token's cover must take
    the parked bound, not the score (a cover taken from the score let a pair outgrow it)."""
    chunks = list(split(TEXT, "gpt2"))
    plain = records(chunks, 3000, "type", False, score=PMI(2))
    assert len(plain) == 3000
    for sleep_below in (1 / 16, 1.0):
        driver = MergeDriver(TypeCorpus(chunks), 3000, score=PMI(2))
        driver.sleep_below = sleep_below
        assert as_tuples(driver.run()) == plain, f"sleep_below={sleep_below}"


class ShortEpochs(NPMI):
    """NPMI whose epochs end after every ``P`` fall of a 1/1000: many restarts."""

    epoch_parts = 1000


class LongEpochs(NPMI):
    """NPMI whose epochs last while ``P`` falls by up to half: loose bounds."""

    epoch_parts = 2


@pytest.mark.parametrize("tie", ["smallest_ids", "leftmost"])
def test_npmi_epochs_on_real_text_equal_the_oracle(tie: str) -> None:
    """Epoch bounds (short and long epochs, sleeping pairs or none) give the oracle's
    merges: each epoch's bounds hold until ``P`` leaves it, and the best exact score is
    found among the pairs whose bound reaches it."""
    chunks = list(split(TEXT[:5000], "gpt2"))
    expected = as_tuples(brute_force_merges(chunks, 120, score=NPMI(2), tie=tie))
    for score in (NPMI(2), ShortEpochs(2), LongEpochs(2)):
        for sleep in (1 / 16, 0.0):
            driver = MergeDriver(TypeCorpus(chunks), 120, score=score, tie=tie)
            driver.sleep_below = sleep
            assert as_tuples(driver.run()) == expected, (type(score).__name__, sleep)
    for representation in CORPORA:
        fast = records(chunks, 120, representation, True, score=NPMI(2), tie=tie)
        assert fast == expected, representation


def test_npmi_epochs_equal_rescoring_everything_on_a_long_run() -> None:
    """A long run (1,500 merges under CI, 500 locally): NPMI with epochs against NPMI
    re-scored in full after every merge."""

    class EveryMerge(NPMI):
        def declare(self, min_count: int) -> Declaration:  # (re-scored whenever totals move)
            return replace(super().declare(min_count), totals=RescoreAll())

    merges = 1500 if FULL else 500
    chunks = list(split(TEXT[:30000], "gpt2"))
    fast = as_tuples(MergeDriver(TypeCorpus(chunks), merges, score=NPMI(2)).run())
    slow = as_tuples(MergeDriver(TypeCorpus(chunks), merges, score=EveryMerge(2)).run())
    assert len(fast) == merges
    assert fast == slow
