"""The corpus representations behind the driver's seam: each equal to the oracle and to the others.

Type mode has three representations (strings of id characters, id lists past
``CHAR_IDS``, recounting for non-overlapping and per-group counts); sequence mode two
(int arrays, an IndexedList). Every one reports a merge's count changes through
``MergeDeltas``; these tests check each against the brute-force oracle, the
representations' own ``check()`` after every merge, and minbpe on real text.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds.corpus.type_mode as type_corpus
from bpeds.corpus import MergeDeltas, SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord, train_merges
from bpeds.scoring.ties import Leftmost, Lexicographic, SmallestIds, TieRule, hf_byte_order
from bpeds.testing.oracle import brute_force_merges
from bpeds.tokenizer.pretokenize import GPT2_PATTERN, GPT4_PATTERN, split
from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, Vocab
from tests.budget import examples
from tests.golden import minbpe_golden
from tests.minbpe_rule import minbpe_merges

TEXT = (Path(__file__).parent / "data" / "taylorswift.txt").read_text(encoding="utf-8")

TIES: dict[str, Callable[[], TieRule]] = {
    "leftmost": Leftmost,
    "smallest_ids": SmallestIds,
    "hf_order": lambda: SmallestIds(hf_byte_order()),
    "lexicographic": Lexicographic,
}

# Tiny alphabets, short and empty chunks, long runs: many equal counts and overlaps.
chunk = st.one_of(
    st.lists(st.sampled_from(b"abc\xff"), max_size=12).map(bytes),
    st.builds(lambda c, n: c * n, st.sampled_from([b"a", b"ab", b"aab"]), st.integers(0, 9)),
)
corpora = st.lists(chunk, min_size=1, max_size=8)


def as_tuples(records: list[MergeRecord]) -> list[tuple[Any, ...]]:
    return [(r.pair, r.new_id, r.count, r.score) for r in records]


@pytest.mark.parametrize("tie", TIES)
@settings(max_examples=examples(ci=60, local=20), deadline=None)
@given(chunks=corpora, merges=st.integers(0, 30), min_count=st.integers(1, 3))
def test_every_representation_equals_the_oracle(
    tie: str, chunks: list[bytes], merges: int, min_count: int
) -> None:
    want = as_tuples(brute_force_merges(chunks, merges, tie=TIES[tie](), min_count=min_count))
    for corpus in (
        TypeCorpus(chunks),
        SequenceCorpus(chunks),
        SequenceCorpus(chunks, structure="indexed_list"),
        SequenceCorpus(chunks, structure="leap"),
    ):
        got = train_merges(corpus, merges, tie=TIES[tie](), min_count=min_count)
        assert as_tuples(got) == want, corpus


@settings(max_examples=examples(ci=80, local=25), deadline=None)
@given(chunks=corpora, merges=st.integers(1, 25))
def test_reported_changes_are_the_true_changes(chunks: list[bytes], merges: int) -> None:
    """After every merge: ``MergeDeltas`` equals a recount, and ``check()`` holds."""
    for corpus in (
        TypeCorpus(chunks),
        SequenceCorpus(chunks),
        SequenceCorpus(chunks, structure="indexed_list"),
        SequenceCorpus(chunks, structure="leap"),
    ):
        vocab = Vocab()
        run: Any = corpus.start("overlapping", False, vocab.length)
        counts = dict(run.initial().pairs)
        for _ in merge_most_frequent(run, vocab, counts, merges, MergeDeltas(1)):
            run.check()
            truth = brute_force_counts(corpus, vocab)
            assert counts == truth


def merge_most_frequent(
    run: Any, vocab: Vocab, counts: dict[int, int], merges: int, out: MergeDeltas
) -> Iterator[tuple[int, MergeDeltas]]:
    """Up to ``merges`` times, merge the most frequent pair (the smallest on ties) and
    apply the reported changes to ``counts`` (``out`` reused, as the driver does);
    yield each merged pair with its changes."""
    for _ in range(merges):
        if not counts:
            return
        pk = max(counts, key=lambda k: (counts[k], -k))
        a, b = pk >> PAIR_SHIFT, pk & PAIR_MASK
        new = vocab.add(a, b)
        out.reset()
        run.merge(a, b, new, out)
        for k, v in out.net(a, b, new).items():
            counts[k] = counts.get(k, 0) + v
        counts.pop(pk, None)
        for k in [k for k, c in counts.items() if not c]:
            del counts[k]
        yield pk, out


@settings(max_examples=examples(ci=60, local=20), deadline=None)
@given(
    items=st.lists(st.tuples(chunk.filter(bool), st.integers(0, 2)), min_size=1, max_size=8),
    merges=st.integers(1, 25),
)
def test_reported_group_changes_are_the_true_changes(
    items: list[tuple[bytes, int]], merges: int
) -> None:
    """Per group, after every merge (one ``MergeDeltas`` reused, as the driver does):
    the pair counts and the tokens equal a recount."""
    chunks = [c for c, _ in items]
    groups = [g for _, g in items]
    size = max(groups) + 1
    for corpus in (
        TypeCorpus(chunks, groups),
        SequenceCorpus(chunks, groups),
        SequenceCorpus(chunks, groups, structure="indexed_list"),
    ):
        vocab = Vocab()
        run: Any = corpus.start("overlapping", True, vocab.length)
        init = run.initial()
        counts = dict(init.pairs)
        gcounts = {k: list(row) for k, row in init.group_pairs.items()}
        gtokens = list(init.group_tokens)
        for pk, out in merge_most_frequent(run, vocab, counts, merges, MergeDeltas(size)):
            for k, row in out.group_pairs.items():
                cur = gcounts.setdefault(k, [0] * size)
                for g, v in enumerate(row):
                    cur[g] += v
            gcounts.pop(pk, None)  # (the merged pair occurs nowhere now)
            gcounts = {k: row for k, row in gcounts.items() if any(row)}
            for g, v in enumerate(out.group_sites):
                gtokens[g] -= v
            want_pairs, want_tokens = brute_force_group_counts(chunks, groups, vocab)
            assert (gcounts, gtokens) == (want_pairs, want_tokens), type(corpus).__name__


def brute_force_group_counts(
    chunks: list[bytes], groups: list[int], vocab: Vocab
) -> tuple[dict[int, list[int]], list[int]]:
    """Per-group pair counts and tokens of ``chunks`` encoded with the vocabulary."""
    from bpeds.corpus import count_pairs
    from bpeds.testing.oracle import apply_merge

    seqs = [list(c) for c in chunks]
    for new, (a, b) in enumerate(vocab.merges(), 256):
        seqs = [apply_merge(c, a, b, new) for c in seqs]
    pairs: dict[int, list[int]] = {}
    size = max(groups) + 1
    tokens = [0] * size
    for seq, g in zip(seqs, groups, strict=True):
        tokens[g] += len(seq)
        for k, v in count_pairs(seq).items():
            pairs.setdefault(k, [0] * size)[g] += v
    return pairs, tokens


def brute_force_counts(corpus: Any, vocab: Vocab) -> dict[int, int]:
    """Pair counts of the corpus encoded with the vocabulary's merges, recounted."""
    from bpeds.corpus import count_pairs
    from bpeds.testing.oracle import apply_merge

    chunks = [list(c) for c in corpus._chunks]
    counts_of = getattr(corpus, "_counts", [1] * len(chunks))
    for new, (a, b) in enumerate(vocab.merges(), 256):
        chunks = [apply_merge(c, a, b, new) for c in chunks]
    out: dict[int, int] = {}
    for c, n in zip(chunks, counts_of, strict=True):
        for k, v in count_pairs(c).items():
            out[k] = out.get(k, 0) + v * n
    return out


def test_long_unsplit_input_merges_as_sequence_mode() -> None:
    """One long type, listed once per occurrence of each pair (its cost, linear in the
    input, is measured by the benchmark suite's unsplit-input workload)."""
    text = ("ACGT" * 50 + "ACGGT" * 37) * 400  # one 150 KB type
    got = [r.pair for r in MergeDriver(TypeCorpus([text.encode()]), 40).run()]
    want = [r.pair for r in MergeDriver(SequenceCorpus([text.encode()]), 40).run()]
    assert got == want


def test_too_many_ids_for_characters_switch_to_id_lists(monkeypatch: pytest.MonkeyPatch) -> None:
    """Strings hold ids as characters; past CHAR_IDS the run converts itself to id lists."""
    items = [(c, 1) for c in split(TEXT[:8000], GPT2_PATTERN)]
    want = as_tuples(MergeDriver(TypeCorpus.from_counts(items), 60).run())
    monkeypatch.setattr(type_corpus, "CHAR_IDS", 256 + 5)
    corpus = TypeCorpus.from_counts(items)
    d = MergeDriver(corpus, 60)
    assert as_tuples(d.run()) == want


def test_ids_in_the_surrogate_range() -> None:
    """Ids 0xD800-0xDFFF are lone surrogates as characters; the strings must not care."""
    items = [(c, 1) for c in split(TEXT[:20_000], GPT2_PATTERN)]
    offset = 0xD800 - 256 - 40  # the 41st merge gets id 0xD800
    wide = Vocab()
    for _ in range(offset):
        wide.add(0, 0)

    def shifted(i: int) -> int:
        return i if i < 256 else i - offset

    d = MergeDriver(TypeCorpus.from_counts(items), 300, vocab=wide)
    got = [(shifted(r.pair[0]), shifted(r.pair[1]), shifted(r.new_id), r.count) for r in d.run()]
    assert max(r.new_id for r in d.records) >= 0xD800 + 200
    plain = MergeDriver(SequenceCorpus([c for c, _ in items]), 300)
    assert got == [(*r.pair, r.new_id, r.count) for r in plain.run()]


@pytest.mark.parametrize("representation", ["type", "sequence"])
def test_stops_cleanly_and_reports_progress(representation: str) -> None:
    make: Any = TypeCorpus if representation == "type" else SequenceCorpus
    assert MergeDriver(make([b"", b"a"]), 5, tie="leftmost").run() == []
    assert MergeDriver(make([]), 5).run() == []
    records = MergeDriver(make([b"ab", b"b"]), 50, tie="leftmost").run()
    assert [(r.pair, r.new_id, r.count) for r in records] == [((97, 98), 256, 1)]
    assert MergeDriver(make([b"abab", b"cd"]), 50, min_count=3).run() == []

    seen: list[tuple[int, int]] = []
    d = MergeDriver(make([TEXT[:5000].encode()]), 20, progress=lambda *a: seen.append(a))
    it = iter(d)
    first = next(it)
    assert first.new_id == 256
    assert first.score == first.count
    assert seen == [(1, 20)]
    rest = list(it)
    assert seen == [(i, 20) for i in range(1, 21)]
    assert d.records == [first, *rest]
    assert d.vocab.merges() == [r.pair for r in d.records]


def test_the_cyclic_gc_is_paused_only_while_a_step_runs() -> None:
    inside: list[bool] = []
    d = MergeDriver(
        TypeCorpus(split(TEXT[:3000], "gpt2")), 5, progress=lambda *_: inside.append(gc.isenabled())
    )
    it = iter(d)
    next(it)
    assert inside == [False]  # paused while the step ran
    assert gc.isenabled()  # and running again while the caller holds the record
    it.close()  # abandoned half-way
    assert gc.isenabled()
    assert len(list(MergeDriver(TypeCorpus([b"abab"]), 5))) == 2
    assert gc.isenabled()
    d = MergeDriver(TypeCorpus([b"abab"]), 5, progress=lambda *_: inside.append(gc.isenabled()))
    d.pause_gc = False
    inside.clear()
    assert [gc.isenabled() for _ in d] == [True, True]
    assert inside == [True, True]
    gc.disable()  # a caller that paused it itself: left paused
    try:
        assert [gc.isenabled() for _ in MergeDriver(TypeCorpus([b"abab"]), 5)] == [False, False]
    finally:
        gc.enable()


def test_sequence_arrays_are_minbpe_basic_on_real_text() -> None:
    text = TEXT[:20000]
    want = minbpe_golden(text, 300, None)
    d = MergeDriver(SequenceCorpus([text.encode()]), 300, tie="leftmost")
    assert [r.pair for r in d.run()] == want


def test_sequence_arrays_are_minbpe_regex_on_real_text() -> None:
    text = TEXT[:40000]
    want = minbpe_golden(text, 300, GPT4_PATTERN)
    d = MergeDriver(SequenceCorpus(list(split(text, GPT4_PATTERN))), 300, tie="leftmost")
    assert [r.pair for r in d.run()] == want


@settings(max_examples=40, deadline=None)
@given(text=st.text(alphabet="ab c\n'1é", max_size=60), merges=st.integers(1, 15))
def test_sequence_arrays_are_minbpe_regex(text: str, merges: int) -> None:
    got = train_merges(SequenceCorpus(split(text, GPT4_PATTERN)), merges, tie="leftmost")
    assert [r.pair for r in got] == minbpe_merges(text, merges, GPT4_PATTERN)


@pytest.mark.parametrize("tie", ["leftmost", "smallest_ids", "lexicographic"])
def test_type_and_sequence_agree_on_real_text(tie: str) -> None:
    chunks = list(split(TEXT[:30000], GPT4_PATTERN))
    a = [r.pair for r in MergeDriver(TypeCorpus(chunks), 400, tie=tie).run()]
    b = [r.pair for r in MergeDriver(SequenceCorpus(chunks), 400, tie=tie).run()]
    assert a == b


@pytest.mark.parametrize(
    ("score", "tie", "representation"),
    [
        ("frequency", "leftmost", "sequence"),
        ({"name": "pmi", "min_count": 2}, "smallest_ids", "type"),
        ({"name": "likelihood_gain", "min_count": 2}, "leftmost", "type"),
        ({"name": "npmi", "min_count": 2}, "smallest_ids", "type"),
        ("length_weighted", "lexicographic", "sequence"),
    ],
)
def test_every_mechanism_checks_out_between_steps(
    score: Any, tie: str, representation: str
) -> None:
    chunks = split(TEXT[:4000], "gpt2")
    corpus = TypeCorpus(chunks) if representation == "type" else SequenceCorpus(chunks)
    d = MergeDriver(corpus, 120, score=score, tie=tie)
    d.sleep_below = 0.5  # (many pairs asleep)
    for _ in d:
        assert d.state is not None
        d.state.check()
    assert len(d.records) == 120
