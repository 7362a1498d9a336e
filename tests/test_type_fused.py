"""Type mode's fused frequency loop: equal to the generic loop and to the brute-force oracle."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds._type_corpus as type_corpus
from bpeds.corpus import TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord
from bpeds.pretokenize import GPT2_PATTERN, GPT4_PATTERN, split
from bpeds.scoring.ties import Leftmost, Lexicographic, SmallestIds, TieRule, hf_byte_order
from bpeds.structures.compaction import NeverCompact, ThresholdCompaction
from bpeds.testing.oracle import brute_force_merges

TEXT = (Path(__file__).parent / "data" / "taylorswift.txt").read_text(encoding="utf-8")

STATIC_TIES: dict[str, Callable[[], TieRule]] = {
    "smallest_ids": SmallestIds,
    "hf_order": lambda: SmallestIds(hf_byte_order()),
    "reversed_bytes": lambda: SmallestIds(list(reversed(range(256)))),
    "lexicographic": Lexicographic,
}

chunk = st.lists(st.sampled_from(b"abc\xff"), min_size=0, max_size=12).map(bytes)
corpora = st.lists(st.tuples(chunk, st.integers(1, 4)), min_size=1, max_size=8)


def records(d: MergeDriver) -> list[tuple[Any, ...]]:
    return [(r.pair, r.new_id, r.count, r.score) for r in d.run()]


def drivers(
    items: list[tuple[bytes, int]], merges: int, **options: Any
) -> tuple[MergeDriver, MergeDriver]:
    """The same run twice: fused (the default) and generic (``fast_path=False``)."""
    fused = MergeDriver(TypeCorpus.from_counts(items), merges, **options)
    generic = MergeDriver(TypeCorpus.from_counts(items), merges, **options)
    generic.fast_path = False
    return fused, generic


def uses_fused_loop(d: MergeDriver) -> bool:
    run = d.corpus.start(d.counting, False, d.vocab.length)
    return d.fused_loop(run) is not None


@pytest.mark.parametrize("tie", STATIC_TIES)
@settings(max_examples=60)
@given(items=corpora, merges=st.integers(1, 20), min_count=st.integers(1, 3))
def test_fused_equals_generic_and_oracle(
    tie: str, items: list[tuple[bytes, int]], merges: int, min_count: int
) -> None:
    fused, generic = drivers(items, merges, tie=STATIC_TIES[tie](), min_count=min_count)
    assert uses_fused_loop(fused)
    assert not uses_fused_loop(generic)
    chunks = [c for c, n in items for _ in range(n)]
    expected = [
        (r.pair, r.new_id, r.count, r.score)
        for r in brute_force_merges(chunks, merges, tie=STATIC_TIES[tie](), min_count=min_count)
    ]
    assert records(fused) == expected
    assert records(generic) == expected


@settings(max_examples=30)
@given(items=corpora, merges=st.integers(1, 20))
def test_heap_rebuilds_keep_results_exact(items: list[tuple[bytes, int]], merges: int) -> None:
    """With no slack the heap is rebuilt from the counts after almost every merge."""
    fused, generic = drivers(items, merges)
    expected = records(generic)
    with pytest.MonkeyPatch.context() as m:
        m.setattr(type_corpus, "HEAP_SLACK", 0)
        assert records(fused) == expected


@pytest.mark.parametrize("policy", [NeverCompact, lambda: ThresholdCompaction(2, 1, 0.9)])
@settings(max_examples=30)
@given(items=corpora, merges=st.integers(1, 20))
def test_fused_loop_keeps_the_compaction_policy_contract(
    policy: Callable[[], Any], items: list[tuple[bytes, int]], merges: int
) -> None:
    """A corpus's compaction policy changes no merge (the fused loop's lists are never
    extended, so it has nothing to compact; the generic loop compacts eagerly here)."""
    corpus = TypeCorpus.from_counts(items, policy=policy())
    fused = MergeDriver(corpus, merges)
    _, generic = drivers(items, merges)
    assert records(fused) == records(generic)


@pytest.mark.parametrize(
    "options",
    [
        {"tie": Leftmost()},
        {"counting": "non_overlapping"},
        {"max_token_length": 3},
        {"score": "pmi"},
    ],
)
def test_other_options_decline_the_fused_loop(options: dict[str, Any]) -> None:
    d = MergeDriver(TypeCorpus([b"aaab", b"abab"]), 3, **options)
    assert not uses_fused_loop(d)
    assert len(d.run()) >= 1


@pytest.mark.parametrize(
    ("pattern", "tie"),
    [(GPT2_PATTERN, SmallestIds()), (GPT4_PATTERN, SmallestIds(hf_byte_order()))],
)
def test_fused_equals_generic_on_real_text(pattern: str, tie: TieRule) -> None:
    chunks = list(split(TEXT, pattern))
    fused = MergeDriver(TypeCorpus(chunks), 2000, tie=tie)
    generic = MergeDriver(TypeCorpus(chunks), 2000, tie=tie)
    generic.fast_path = False
    assert uses_fused_loop(fused)
    assert records(fused) == records(generic)


def test_fused_loop_streams_records_and_progress() -> None:
    seen: list[tuple[int, int]] = []
    d = MergeDriver(TypeCorpus(split(TEXT[:5000], "gpt2")), 20, progress=lambda *a: seen.append(a))
    it = iter(d)
    first = next(it)
    assert isinstance(first, MergeRecord)
    assert first.new_id == 256
    assert first.score == first.count
    assert seen == [(1, 20)]
    assert len(d.records) == 1
    rest = list(it)
    assert len(rest) == 19
    assert seen[-1] == (20, 20)


def test_fused_loop_stops_cleanly() -> None:
    d = MergeDriver(TypeCorpus([b"ab", b"b"]), 50)
    assert uses_fused_loop(d)
    assert [r.pair for r in d.run()] == [(97, 98)]


def test_iterating_pauses_the_cyclic_gc_and_restores_it() -> None:
    import gc

    d = MergeDriver(TypeCorpus(split(TEXT[:3000], "gpt2")), 5)
    it = iter(d)
    next(it)
    assert not gc.isenabled()
    it.close()  # abandoned half-way
    assert gc.isenabled()
    assert len(list(MergeDriver(TypeCorpus([b"abab"]), 5))) == 2
    assert gc.isenabled()
    d = MergeDriver(TypeCorpus([b"abab"]), 5)
    d.pause_gc = False
    seen = [gc.isenabled() for _ in d]
    assert seen == [True, True]


def test_too_many_ids_for_characters_decline_the_fused_loop(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The fused loop stores ids as characters; past CHAR_IDS the generic loop runs."""
    items = [(b"abcabcab", 3), (b"cabbage", 2)]
    fused, generic = drivers(items, 6)
    expected = records(generic)
    monkeypatch.setattr(type_corpus, "CHAR_IDS", 256 + 5)
    assert not uses_fused_loop(fused)
    assert records(fused) == expected


def test_ids_in_the_surrogate_range() -> None:
    """Ids 0xD800-0xDFFF are lone surrogates as characters; the loop must not care."""
    from bpeds.vocab import Vocab

    items = [(c, 1) for c in split(TEXT[:20_000], GPT2_PATTERN)]
    offset = 0xD800 - 256 - 40  # the 41st merge gets id 0xD800
    wide = Vocab()
    for _ in range(offset):
        wide.add(0, 0)

    def shifted(i: int) -> int:
        return i if i < 256 else i - offset

    run = TypeCorpus.from_counts(items).start("overlapping", False, wide.length)
    loop = run.frequency_merges(300, 1, SmallestIds(), wide)
    assert loop is not None
    got = [(shifted(a), shifted(b), shifted(new), c) for a, b, new, c in loop]
    assert max(new for _, _, new, _ in got) + offset >= 0xD800 + 200
    _, generic = drivers(items, 300)
    assert got == [(*r.pair, r.new_id, r.count) for r in generic.run()]
