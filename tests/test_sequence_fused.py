"""The sequence arrays' fused frequency loop against the generic loop, the oracle and minbpe."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bpeds.corpus import SequenceCorpus
from bpeds.driver import MergeDriver, MergeRecord, train_merges
from bpeds.pretokenize import GPT4_PATTERN, split
from bpeds.scoring.ties import Leftmost, Lexicographic, SmallestIds, hf_byte_order
from bpeds.testing.oracle import brute_force_merges
from bpeds.vocab import Vocab
from tests.golden import minbpe_golden
from tests.minbpe_rule import minbpe_merges

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")

FUSED_TIES = {"leftmost": Leftmost, "smallest_ids": SmallestIds}
OTHER_TIES: dict[str, Any] = {
    "lexicographic": Lexicographic,
    "hf": lambda: SmallestIds(hf_byte_order()),
    "reversed_bytes": lambda: SmallestIds(list(reversed(range(256)))),
}

# Tiny alphabets, short and empty chunks, long runs: many equal counts and overlaps.
chunk = st.one_of(
    st.lists(st.sampled_from(b"abc\xff"), max_size=12).map(bytes),
    st.builds(lambda c, n: c * n, st.sampled_from([b"a", b"ab", b"aab"]), st.integers(0, 9)),
)
corpora = st.lists(chunk, min_size=1, max_size=8)


def as_tuples(records: list[MergeRecord]) -> list[tuple[Any, ...]]:
    return [(r.pair, r.new_id, r.count, r.score) for r in records]


def driver(chunks: list[bytes], merges: int, fast: bool, **options: Any) -> MergeDriver:
    d = MergeDriver(SequenceCorpus(chunks), merges, **options)
    d.fast_path = fast
    return d


def uses_fused(chunks: list[bytes], merges: int, **options: Any) -> bool:
    d = driver(chunks, merges, True, **options)
    run = d.corpus.start("overlapping", False, d.vocab.length)
    return d.fused_loop(run) is not None


@pytest.mark.parametrize("tie", FUSED_TIES)
@settings(max_examples=150, deadline=None)
@given(chunks=corpora, merges=st.integers(0, 40), min_count=st.integers(1, 3))
def test_fused_equals_generic_and_oracle(
    tie: str, chunks: list[bytes], merges: int, min_count: int
) -> None:
    options: dict[str, Any] = {"tie": FUSED_TIES[tie](), "min_count": min_count}
    assert uses_fused(chunks, merges, **options)
    fused = as_tuples(driver(chunks, merges, True, **options).run())
    generic = as_tuples(driver(chunks, merges, False, **options).run())
    expected = as_tuples(brute_force_merges(chunks, merges, **options))
    assert fused == generic == expected


@pytest.mark.parametrize("tie", OTHER_TIES)
@settings(max_examples=25, deadline=None)
@given(chunks=corpora, merges=st.integers(0, 20))
def test_unsupported_ties_fall_back(tie: str, chunks: list[bytes], merges: int) -> None:
    make = OTHER_TIES[tie]
    assert not uses_fused(chunks, merges, tie=make())
    got = as_tuples(driver(chunks, merges, True, tie=make()).run())
    assert got == as_tuples(brute_force_merges(chunks, merges, tie=make()))


def test_declines_what_it_does_not_implement() -> None:
    corpus = SequenceCorpus([b"abab"])
    run: Any = corpus.start("overlapping", False, Vocab().length)
    assert run.frequency_merges(3, 1, Lexicographic(), Vocab()) is None
    assert run.frequency_merges(3, 1, SmallestIds(hf_byte_order()), Vocab()) is None

    class MyLeftmost(Leftmost):
        pass

    assert run.frequency_merges(3, 1, MyLeftmost(), Vocab()) is None
    grouped: Any = corpus.start("overlapping", True, Vocab().length)
    assert grouped.frequency_merges(3, 1, Leftmost(), Vocab()) is None
    # The indexed-list structure has no fused loop: the generic loop runs, same merges.
    listed = SequenceCorpus([b"abab"], structure="indexed_list")
    d = MergeDriver(listed, 3, tie="leftmost")
    assert d.fused_loop(listed.start("overlapping", False, d.vocab.length)) is None


@pytest.mark.parametrize("tie", FUSED_TIES)
def test_arrays_stay_consistent_while_fused(tie: str) -> None:
    """The run's own check() between merges of the fused loop on real text."""
    corpus = SequenceCorpus([TEXT[:3000].encode(), b"", b"aaaaaaa", TEXT[3000:4000].encode()])
    run: Any = corpus.start("overlapping", False, Vocab().length)
    seen = 0
    for _ in run.frequency_merges(300, 1, FUSED_TIES[tie](), Vocab()):
        run.check()
        seen += 1
    assert seen == 300


# -- real text ---------------------------------------------------------------------------


@pytest.mark.parametrize("tie", FUSED_TIES)
@pytest.mark.parametrize("pattern", [None, GPT4_PATTERN], ids=["basic", "regex"])
def test_fused_equals_generic_on_real_text(tie: str, pattern: str | None) -> None:
    chunks = [TEXT.encode()] if pattern is None else list(split(TEXT, pattern))
    assert uses_fused(chunks, 2500, tie=tie)
    fused = as_tuples(driver(chunks, 2500, True, tie=tie).run())
    generic = as_tuples(driver(chunks, 2500, False, tie=tie).run())
    assert len(fused) == 2500
    assert fused == generic


def test_fused_equals_generic_with_min_count_on_real_text() -> None:
    chunks = [TEXT[:60000].encode()]
    fused = as_tuples(driver(chunks, 10**9, True, tie="leftmost", min_count=4).run())
    generic = as_tuples(driver(chunks, 10**9, False, tie="leftmost", min_count=4).run())
    assert fused == generic
    assert fused[-1][2] >= 4


@pytest.mark.parametrize("tie", FUSED_TIES)
def test_fused_equals_generic_to_the_last_merge(tie: str) -> None:
    """Until one token per chunk is left: the end, where every count is 1, included."""
    chunks = [TEXT[:2500].encode(), b"", TEXT[2500:3000].encode()]
    fused = as_tuples(driver(chunks, 10**9, True, tie=tie).run())
    generic = as_tuples(driver(chunks, 10**9, False, tie=tie).run())
    assert fused == generic
    assert sum(r[2] == 1 for r in fused) > 100
    # Nothing is left to merge: the last token of each chunk is the whole chunk.
    d = driver(chunks, 10**9, True, tie=tie)
    d.run()
    lengths = {d.vocab.length(r.new_id) for r in d.records}
    assert {len(c) for c in chunks if c} <= lengths


def test_fused_is_minbpe_basic_on_real_text() -> None:
    text = TEXT[:20000]
    want = minbpe_golden(text, 300, None)
    d = driver([text.encode()], 300, True, tie="leftmost")
    assert [r.pair for r in d.run()] == want


def test_fused_is_minbpe_regex_on_real_text() -> None:
    text = TEXT[:40000]
    want = minbpe_golden(text, 300, GPT4_PATTERN)
    d = driver(list(split(text, GPT4_PATTERN)), 300, True, tie="leftmost")
    assert [r.pair for r in d.run()] == want


@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet="ab c\n'1é", max_size=60), merges=st.integers(1, 15))
def test_fused_is_minbpe_regex(text: str, merges: int) -> None:
    got = train_merges(SequenceCorpus(split(text, GPT4_PATTERN)), merges, tie="leftmost")
    assert [r.pair for r in got] == minbpe_merges(text, merges, GPT4_PATTERN)


# -- behaviour as in the generic path ----------------------------------------------------


@pytest.mark.parametrize("fast", [True, False])
def test_stops_cleanly_and_reports_progress(fast: bool) -> None:
    assert driver([b"", b"a"], 5, fast, tie="leftmost").run() == []
    assert driver([], 5, fast, tie="smallest_ids").run() == []
    records = driver([b"ab", b"b"], 50, fast, tie="leftmost").run()
    assert [(r.pair, r.new_id, r.count) for r in records] == [((97, 98), 256, 1)]
    assert driver([b"abab", b"cd"], 50, fast, min_count=3).run() == []

    seen: list[tuple[int, int]] = []
    d = MergeDriver(SequenceCorpus([TEXT[:5000].encode()]), 20, tie="leftmost")
    d.fast_path = fast
    d.progress = lambda done, total: seen.append((done, total))
    it = iter(d)
    first = next(it)
    assert first.new_id == 256
    assert seen == [(1, 20)]
    rest = list(it)
    assert seen == [(i, 20) for i in range(1, 21)]
    assert d.records == [first, *rest]
    assert d.vocab.merges() == [r.pair for r in d.records]


def test_vocab_is_extended_in_merge_order() -> None:
    vocab = Vocab()
    d = MergeDriver(SequenceCorpus([b"aaabdaaabac"]), 3, tie="leftmost", vocab=vocab)
    assert [(r.pair, r.new_id, r.count) for r in d.run()] == [
        ((97, 97), 256, 4),
        ((256, 97), 257, 2),
        ((257, 98), 258, 2),
    ]
    assert vocab.token_bytes(258) == b"aaab"
