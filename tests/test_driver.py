"""The merge driver against the brute-force oracle, minbpe's rule, rustbpe and Hugging Face."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.corpus import SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord, train_merges
from bpeds.errors import InvariantError
from bpeds.scoring.base import (
    Declaration,
    Dependency,
    DependencyError,
    RescoreAll,
    Score,
    Stats,
    score_function,
)
from bpeds.scoring.strategies import (
    NPMI,
    PMI,
    Frequency,
    GroupFrequency,
    LengthWeighted,
    LikelihoodGain,
)
from bpeds.scoring.ties import (
    Leftmost,
    Lexicographic,
    SmallestIds,
    TieRule,
)
from bpeds.structures.baselines import CounterMultiset, HeapqMultiset, SortedMultiset
from bpeds.structures.batched import Batched
from bpeds.structures.heapy import Heapy
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.lazyheap import LazyHeap
from bpeds.testing.oracle import brute_force_merges
from bpeds.tokenizer.pretokenize import GPT2_PATTERN, GPT4_PATTERN, split
from tests.budget import examples, matrix
from tests.golden import minbpe_golden
from tests.hf_reference import hf_byte_level_trained, hf_merges_as_bytes
from tests.minbpe_rule import minbpe_merges

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")


@score_function(Dependency.PARTS, name="user_parts")
def user_parts(count: int, left: int, right: int, stats: Stats) -> int | None:
    """A user's own score: frequency penalised by how common the left token is."""
    return 4 * count - stats.unigram(left) if count >= 2 else None


class UserPair(Score):
    """A user's own score as a small class: prefer pairs of equal tokens."""

    name = "user_pair"

    def score(self, count: int, left: int, right: int, stats: Stats) -> Any:
        return (count, left == right)


SCORES: dict[str, Callable[[], Score]] = {
    "frequency": Frequency,
    "length_weighted": lambda: LengthWeighted(2),
    "pmi": lambda: PMI(min_count=2),
    "likelihood_gain": LikelihoodGain,
    "npmi": lambda: NPMI(min_count=2),
    "group_frequency": GroupFrequency,
    "user_parts": lambda: user_parts,
    "user_pair": UserPair,
}
TIES: dict[str, Callable[[], TieRule]] = {
    "leftmost": Leftmost,
    "smallest_ids": SmallestIds,
    "hf_order": lambda: SmallestIds(list(reversed(range(256)))),
    "lexicographic": Lexicographic,
}
MULTISETS: dict[str, Callable[..., Any] | None] = {
    "default": None,
    "HeapyKiYay": HeapyKiYay,
    "Heapy": Heapy,
    "Batched(HeapyKiYay)": lambda tie: Batched(HeapyKiYay(tie=tie)),
    "HeapqMultiset": HeapqMultiset,
    "SortedMultiset": SortedMultiset,
    "CounterMultiset": CounterMultiset,
}
CORPORA: dict[str, Callable[..., Any]] = {
    "type": TypeCorpus,
    "sequence": SequenceCorpus,
    "sequence-indexed-list": lambda chunks, groups=None: SequenceCorpus(
        chunks, groups, structure="indexed_list"
    ),
    "sequence-leap": lambda chunks, groups=None: SequenceCorpus(chunks, groups, structure="leap"),
}

# Tiny alphabets and short chunks: many equal counts, many runs, many ties.
chunk = st.lists(st.sampled_from(b"abc\xff"), min_size=0, max_size=10).map(bytes)
corpora = st.lists(st.tuples(chunk, st.integers(0, 2)), min_size=1, max_size=8)


def as_tuples(records: list[MergeRecord]) -> list[tuple[Any, ...]]:
    return [(r.pair, r.new_id, r.count, r.score) for r in records]


def oracle(items: list[tuple[bytes, int]], merges: int, **options: Any) -> list[tuple[Any, ...]]:
    """The brute-force oracle's records (they depend on neither representation nor multiset)."""
    chunks = [c for c, _ in items]
    groups = [g for _, g in items]
    return as_tuples(brute_force_merges(chunks, merges, groups=groups, **options))


def driven(
    items: list[tuple[bytes, int]], merges: int, representation: str, **options: Any
) -> list[tuple[Any, ...]]:
    """The driver's records over one representation of ``items``."""
    corpus = CORPORA[representation]([c for c, _ in items], [g for _, g in items])
    return as_tuples(train_merges(corpus, merges, **options))


# -- every score x tie rule x representation x priority structure = the oracle ----------


# Score x tie rule grids: CI runs all 32 combinations; a local run the 8 of the diagonal, which
# meet every score and every tie rule (``matrix`` in tests/budget.py).
SCORE_TIE = matrix(list(SCORES), list(TIES))


@pytest.mark.parametrize(("score", "tie"), SCORE_TIE)
@settings(max_examples=examples(ci=24, local=8))
@given(items=corpora, merges=st.integers(1, 12))
def test_driver_equals_oracle(
    score: str, tie: str, items: list[tuple[bytes, int]], merges: int
) -> None:
    """Each input goes through every representation x priority structure (21 driver runs)
    against one oracle run. Under CI every combination sees 24 inputs and every structure
    768 (as many as when each combination was a case of 8 examples), for a fraction of the
    input generation and oracle cost; locally 8 and 256."""
    expected = oracle(items, merges, score=SCORES[score](), tie=TIES[tie]())
    for representation, multiset in itertools.product(CORPORA, MULTISETS):
        got = driven(
            items,
            merges,
            representation,
            score=SCORES[score](),
            tie=TIES[tie](),
            multiset=MULTISETS[multiset],
        )
        assert got == expected, f"representation={representation}, multiset={multiset}"


# LazyHeap holds numeric priorities: every numeric score under every static tie rule, and
# counts under leftmost (folded into one int). Other scores under leftmost keep tuples.
# CI runs all 19 combinations; a local run the diagonal of the first 18 (6, which meet every
# numeric score and static tie rule) and frequency under leftmost.
NUMERIC_SCORES = ("frequency", "length_weighted", "pmi", "likelihood_gain", "npmi", "user_parts")
LAZY_COMBOS = [
    *matrix(NUMERIC_SCORES, ("smallest_ids", "hf_order", "lexicographic")),
    ("frequency", "leftmost"),
]


@pytest.mark.parametrize(("score", "tie"), LAZY_COMBOS)
@settings(max_examples=examples(ci=30, local=10))
@given(items=corpora, merges=st.integers(1, 12))
def test_lazy_heap_equals_oracle(
    score: str, tie: str, items: list[tuple[bytes, int]], merges: int
) -> None:
    """The LazyHeap under every numeric score it can hold, over every representation."""
    expected = oracle(items, merges, score=SCORES[score](), tie=TIES[tie]())
    for representation in CORPORA:
        got = driven(
            items,
            merges,
            representation,
            score=SCORES[score](),
            tie=TIES[tie](),
            multiset=LazyHeap,
        )
        assert got == expected, f"representation={representation}"


@pytest.mark.parametrize(("score", "tie"), SCORE_TIE)
@settings(max_examples=examples(ci=25, local=10))
@given(items=corpora, merges=st.integers(1, 12))
def test_non_overlapping_counting_equals_oracle(
    score: str, tie: str, items: list[tuple[bytes, int]], merges: int
) -> None:
    options: dict[str, Any] = {"counting": "non_overlapping"}
    got = driven(items, merges, "type", score=SCORES[score](), tie=TIES[tie](), **options)
    assert got == oracle(items, merges, score=SCORES[score](), tie=TIES[tie](), **options)


@settings(max_examples=examples(ci=40, local=15))
@given(
    items=corpora,
    merges=st.integers(1, 12),
    min_count=st.integers(1, 4),
    max_len=st.none() | st.integers(2, 5),
)
def test_min_count_and_max_token_length_equal_oracle(
    items: list[tuple[bytes, int]], merges: int, min_count: int, max_len: int | None
) -> None:
    options: dict[str, Any] = {"min_count": min_count, "max_token_length": max_len}
    expected = oracle(items, merges, tie=Leftmost(), **options)
    for representation in CORPORA:
        got = driven(items, merges, representation, tie=Leftmost(), **options)
        assert got == expected, f"representation={representation}"


@settings(max_examples=40)
@given(text=st.text(alphabet="ab c\n'1é", max_size=60), merges=st.integers(1, 15))
def test_type_and_sequence_mode_agree_with_minbpe_regex(text: str, merges: int) -> None:
    chunks = list(split(text, GPT4_PATTERN))
    want = minbpe_merges(text, merges, GPT4_PATTERN)
    for make in CORPORA.values():
        got = [r.pair for r in train_merges(make(chunks), merges, tie="leftmost")]
        assert got == want


# -- golden and reference runs ---------------------------------------------------------


def test_wikipedia_example_smallest_ids() -> None:
    """aaabdaaabac: aa -> Z, ab -> Y, ZY -> X, leaving XdXac (Wikipedia's walk-through)."""
    for corpus in (TypeCorpus([b"aaabdaaabac"]), SequenceCorpus([b"aaabdaaabac"])):
        d = MergeDriver(corpus, 10)
        records = d.run()
        assert [(r.pair, r.count) for r in records[:3]] == [
            ((97, 97), 4),
            ((97, 98), 2),
            ((256, 257), 2),
        ]
        assert [d.vocab.token_bytes(r.new_id) for r in records[:3]] == [b"aa", b"ab", b"aaab"]
        # After XdXac every pair occurs once; training goes on until one token is left.
        assert d.vocab.token_bytes(records[-1].new_id) == b"aaabdaaabac"


def test_wikipedia_example_leftmost_is_minbpe() -> None:
    want = minbpe_merges("aaabdaaabac", 3, None)
    assert want == [(97, 97), (256, 97), (257, 98)]
    for corpus in (TypeCorpus([b"aaabdaaabac"]), SequenceCorpus([b"aaabdaaabac"])):
        assert [r.pair for r in train_merges(corpus, 3, tie="leftmost")] == want


def test_minbpe_basic_on_real_text() -> None:
    text = TEXT[:20000]
    want = minbpe_golden(text, 300, None)
    for make in (CORPORA["sequence"], CORPORA["sequence-indexed-list"]):
        got = [r.pair for r in train_merges(make([text.encode()]), 300, tie="leftmost")]
        assert got == want


def test_minbpe_regex_on_real_text() -> None:
    text = TEXT[:40000]
    want = minbpe_golden(text, 300, GPT4_PATTERN)
    chunks = list(split(text, GPT4_PATTERN))
    for corpus in (SequenceCorpus(chunks), TypeCorpus(chunks)):
        assert [r.pair for r in train_merges(corpus, 300, tie="leftmost")] == want


def test_rustbpe_parity_on_real_text() -> None:
    rustbpe = pytest.importorskip("rustbpe")
    merges = 1500
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter([TEXT]), vocab_size=256 + merges, pattern=GPT4_PATTERN)
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda item: item[1])
    theirs = [token for token, rank in ranks if rank >= 256]
    d = MergeDriver(TypeCorpus(split(TEXT, GPT4_PATTERN)), merges, tie="smallest_ids")
    ours = [d.vocab.token_bytes(r.new_id) for r in d.run()]
    assert len(ours) == merges
    assert ours == theirs


def test_hf_tokenizers_parity_on_real_text() -> None:
    pytest.importorskip("tokenizers")
    merges = 1500
    theirs = hf_merges_as_bytes(hf_byte_level_trained([TEXT], 256 + merges))
    d = MergeDriver(TypeCorpus(split(TEXT, GPT2_PATTERN)), merges, tie="hf")
    ours = [(d.vocab.token_bytes(r.pair[0]), d.vocab.token_bytes(r.pair[1])) for r in d.run()]
    assert len(ours) == merges
    assert ours == theirs


# -- behaviour of the driver -------------------------------------------------------------


def test_stops_cleanly_when_no_pair_is_left() -> None:
    records = train_merges(TypeCorpus([b"ab", b"b"]), 50)
    assert [r.pair for r in records] == [(97, 98)]
    assert train_merges(SequenceCorpus([b"", b"a"]), 5) == []


def test_records_stream_and_progress_is_reported() -> None:
    seen: list[tuple[int, int]] = []
    d = MergeDriver(TypeCorpus(split(TEXT[:5000], "gpt2")), 20, progress=lambda *a: seen.append(a))
    first = next(iter(d))
    assert first.new_id == 256
    assert seen == [(1, 20)]


def test_undeclared_dependency_is_refused() -> None:
    @score_function(Dependency.PAIR)
    def sneaky(count: int, left: int, right: int, stats: Stats) -> float:
        return count / stats.unigram(left)

    with pytest.raises(DependencyError, match=r"Dependency\.PARTS"):
        train_merges(TypeCorpus([b"abab"]), 2, score=sneaky)


def test_a_lying_totals_contract_is_detected() -> None:
    class Lying(NPMI):
        def declare(self, min_count: int) -> Declaration:  # re-scored by a can_raise that lies
            return replace(super().declare(min_count), totals=RescoreAll(lambda b, a: False))

    text = TEXT[:3000].encode()
    with pytest.raises(InvariantError, match=r"rose.*can_raise"):
        train_merges(
            TypeCorpus([text[i : i + 7] for i in range(0, len(text), 7)]), 200, score=Lying()
        )


def test_a_lying_epoch_is_detected() -> None:
    class EndlessEpoch(NPMI):
        def in_epoch(self, totals: Any, epoch: Any) -> bool:
            return True  # (P falls far below the epoch's: its bounds no longer hold)

    text = TEXT[:3000].encode()
    with pytest.raises(InvariantError, match=r"rose.*Epochs.bound"):
        train_merges(
            TypeCorpus([text[i : i + 7] for i in range(0, len(text), 7)]),
            400,
            score=EndlessEpoch(),
        )


def test_bad_options_are_rejected_clearly() -> None:
    corpus = TypeCorpus([b"ab"])
    with pytest.raises(ValueError, match="num_merges"):
        MergeDriver(corpus, -1)
    with pytest.raises(ValueError, match="unknown tie rule"):
        MergeDriver(corpus, 1, tie="random")
    with pytest.raises(ValueError, match="unknown score"):
        MergeDriver(corpus, 1, score="nope")
    with pytest.raises(ValueError, match="counting"):
        train_merges(corpus, 1, counting="sometimes")
    with pytest.raises(ValueError, match="overlapping only"):
        train_merges(SequenceCorpus([b"ab"]), 1, counting="non_overlapping")
    with pytest.raises(ValueError, match="bytes"):
        TypeCorpus([[300]])
    with pytest.raises(ValueError, match="group labels"):
        TypeCorpus([b"ab"], groups=[0, 1])
    with pytest.raises(ValueError, match="structure"):
        SequenceCorpus([b"ab"], structure="rope")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="chunk"):
        TypeCorpus(["text"])  # type: ignore[list-item]


def test_array_sequence_invariants_hold_while_training() -> None:
    """The arrays representation's own check() after every merge of a real run."""
    corpus = SequenceCorpus([TEXT[:3000].encode(), b"", TEXT[3000:4000].encode()])
    run = corpus.start("overlapping", False, lambda t: 1)
    init = run.initial()
    counts = dict(init.pairs)
    from bpeds.corpus import MergeDeltas

    new = 256
    for _ in range(200):
        if not counts:
            break
        pk = max(counts, key=lambda k: (counts[k], -k))
        deltas = MergeDeltas(1)
        run.merge(pk >> 32, pk & 0xFFFFFFFF, new, deltas)
        for k, v in deltas.pairs.items():
            counts[k] = counts.get(k, 0) + v
            if not counts[k]:
                del counts[k]
        run.check()
        new += 1
    assert new > 256


def test_options_are_recorded() -> None:
    d = MergeDriver(TypeCorpus([b"ab"]), 1, score=PMI(min_count=3), tie="hf")
    opts = d.options()
    assert opts["score"] == {"name": "pmi", "min_count": 3}
    assert opts["tie"]["name"] == "smallest_ids"
    assert len(opts["tie"]["byte_order"]) == 256


def test_likelihood_gain_is_the_real_log_likelihood_change() -> None:
    """The score equals the measured change of unigram log-likelihood after the merge."""
    chunks = [b"abcab", b"bcab", b"cc"]

    def loglik(seqs: list[list[int]]) -> float:
        counts: dict[int, int] = {}
        for s in seqs:
            for t in s:
                counts[t] = counts.get(t, 0) + 1
        n = sum(counts.values())
        return sum(c * math.log(c / n) for c in counts.values())

    first = train_merges(TypeCorpus(chunks), 1, score=LikelihoodGain())[0]
    from bpeds.testing.oracle import apply_merge

    before = [list(c) for c in chunks]
    after = [apply_merge(s, *first.pair, first.new_id) for s in before]
    assert math.isclose(first.score, loglik(after) - loglik(before), rel_tol=1e-12)
