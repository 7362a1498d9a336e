"""BoundlessBPE: both passes equal the authors' trainer event for event, the saved model
encodes as the authors' inference does, and the driver equals the brute-force oracle."""

from __future__ import annotations

import collections
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds
from bpeds.corpus import TypeCorpus
from bpeds.driver import MergeDriver
from bpeds.testing.oracle import brute_force_run
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.boundless import WordPass
from bpeds.tokenizer.pretokenize import compile_pattern, split
from bpeds.tokenizer.replay import EventLogError, Replay, Supermerger, check_events
from bpeds.tokenizer.trained import TrainedModel
from bpeds.variants import BoundlessBPE, Supermerges
from bpeds.vocab import Vocab
from tests.budget import examples

DATA = Path(__file__).parent / "data"
#: The authors' sizes count the 243 byte values valid in UTF-8; bpeds counts all 256.
BYTES_NOT_IN_UTF8 = 13
AUTHORS: dict[str, Any] = {
    "pattern": "gpt4o",
    "tie": "lexicographic",
    "counting": "non_overlapping",
}


@cache
def golden() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / "boundless_golden.json").read_text("utf-8"))
    source = (DATA / doc["source"]).read_bytes()
    assert hashlib.sha256(source).hexdigest() == doc["sha256"], "stale: see SOURCES.md"
    return doc


def documents() -> list[str]:
    text = (DATA / golden()["source"]).read_text(encoding="utf-8")
    return [line for line in text.split("\n") if line]


def heldout() -> list[str]:
    text = (DATA / "tinyshakespeare_100k.txt").read_text(encoding="utf-8")[:6000]
    lines = [line for line in text.split("\n") if line]
    digest = hashlib.sha256("\n".join(lines).encode()).hexdigest()
    assert digest == golden()["heldout_sha256"]
    return lines


def tau_of(case: dict[str, Any]) -> float | None:
    return None if case["tau"] > 1 else float(case["tau"])


def vocab_size(case: dict[str, Any]) -> int:
    return int(case["vocab_size"]) + BYTES_NOT_IN_UTF8


CASES = pytest.mark.parametrize("case", [0, 1], ids=["no_deletions", "tau0.9"])


@CASES
def test_word_pass_equals_the_authors_trainer(case: int) -> None:
    """The word-level pass (their BpeTrainer, blowup=True): every merge with its count and
    every deletion, in order, on the GPT-4o pre-tokens of the same documents."""
    expected = golden()["cases"][case]
    chunks = [p for d in documents() for p in split(d, "gpt4o")]
    driver = MergeDriver(
        TypeCorpus(chunks),
        vocab_size(expected) - 256,
        tie="lexicographic",
        counting="non_overlapping",
        variant=BoundlessBPE(tau_of(expected), supermerges=False),
    )
    records = iter(driver.run())
    hexed = driver.vocab.token_bytes
    ours: list[list[Any]] = []
    for e in driver.events:
        if e.kind == "merge":
            left, right = (hexed(p).hex() for p in e.parts)
            ours.append(["merge", left, right, next(records).count])
        else:
            assert e.parts == tuple(driver.vocab.token_bytes(e.token))  # (into bytes)
            ours.append(["remove", hexed(e.token).hex()])
    assert ours == expected["words"]
    if case == 1:
        assert sum(op[0] == "remove" for op in ours) > 50  # (the case exercises deletions)


def _second_pass(case: dict[str, Any]) -> tuple[WordPass, MergeDriver, Supermerges]:
    """The two passes through the pieces bpeds.train uses, keeping the second driver."""
    counts: list[int] = []
    first = bpeds.tokenizer.trainer.train_model(
        documents(),
        vocab_size(case),
        bpeds.tokenizer.trainer.TrainArguments(
            **AUTHORS,
            variant=BoundlessBPE(tau_of(case), supermerges=False),
            workers=1,
            on_merge=lambda record, _: counts.append(record.count),
        ),
    )
    word = WordPass(first, counts)
    runs = word.runs(documents(), "gpt4o", BoundlessBPE().superword, (), "strict", 1 << 20)
    second = BoundlessBPE(tau_of(case)).second_pass(word.counts, word.sizes)
    driver = MergeDriver(
        word.corpus(runs),
        len(counts) + 1,
        tie="lexicographic",
        counting="non_overlapping",
        vocab=word.vocab,
        variant=second,
        max_merges=len(counts) + 1,
    )
    driver.run()
    return word, driver, second


@CASES
def test_supermerges_equal_the_authors_trainer(case: int) -> None:
    """The second pass (their BoundlessBpeTrainer): each supermerge, its count, and how many
    word-level operations were kept when it won; and the word-level operations kept."""
    expected = golden()["cases"][case]
    _, driver, second = _second_pass(expected)
    hexed = driver.vocab.token_bytes
    ops_before_merge = [i for i, op in enumerate(expected["words"]) if op[0] == "merge"]

    def ops_kept(merges: int) -> int:
        """The operations the reference had kept with this many merges kept (a merge's
        removals are processed right after it)."""
        return (
            ops_before_merge[merges] if merges < len(ops_before_merge) else len(expected["words"])
        )

    ours = [
        [hexed(r.pair[0]).hex(), hexed(r.pair[1]).hex(), r.count, ops_kept(at)]
        for r, at in zip(driver.records, second.at, strict=True)
    ]
    assert ours == expected["supermerges"]
    assert ops_kept(second.kept) == expected["kept_ops"]
    assert len(ours) > 40


@CASES
def test_trained_model_encodes_as_the_authors_inference(case: int, tmp_path: Path) -> None:
    """bpeds.train with the variant gives the same supermerges, and its tokenizer (and the
    word-level one) encodes held-out lines exactly as the authors' Tokenizer does; saved
    and loaded, it encodes the same."""
    expected = golden()["cases"][case]
    tok = bpeds.train(
        documents(), vocab_size(expected), variant=BoundlessBPE(tau_of(expected)), **AUTHORS
    )
    events = tok.events
    assert events is not None
    supermerges = [
        [tok.token_bytes(e[2]).hex(), tok.token_bytes(e[3]).hex()]
        for e in events
        if e[0] == "supermerge"
    ]
    assert supermerges == [s[:2] for s in expected["supermerges"]]
    lines = heldout()

    def encoded(t: Tokenizer) -> list[str]:
        return [" ".join(t.token_bytes(i).hex() for i in t.encode(line)) for line in lines]

    assert encoded(tok) == expected["encoded"]
    assert any(b" " in tok.token_bytes(i)[1:] for line in lines for i in tok.encode(line))
    words = bpeds.train(
        documents(),
        vocab_size(expected),
        variant=BoundlessBPE(tau_of(expected), supermerges=False),
        **AUTHORS,
    )
    assert encoded(words) == expected["encoded_words"]
    tok.save(tmp_path / "boundless.json")
    again = Tokenizer.load(tmp_path / "boundless.json")
    assert again == tok
    assert encoded(again) == expected["encoded"]
    assert tok.replays  # (formats that hold ranked merges refuse it)


corpora = st.lists(
    st.lists(st.sampled_from(b"ab c"), min_size=1, max_size=10).map(bytes), min_size=1, max_size=8
)


@settings(max_examples=examples(ci=40, local=10))
@given(chunks=corpora, n=st.integers(1, 10), tau=st.sampled_from([None, 0.3, 0.6, 0.9, 1.0]))
def test_word_pass_equals_the_oracle(chunks: list[bytes], n: int, tau: float | None) -> None:
    options: dict[str, Any] = {
        "tie": "lexicographic",
        "counting": "non_overlapping",
        "max_merges": 3 * n + 2,
    }
    variant = BoundlessBPE(tau, supermerges=False)
    driver = MergeDriver(TypeCorpus(chunks), n, variant=variant, **options)
    driver.run()
    assert driver.events == brute_force_run(chunks, n, variant=variant, **options)[1]


def _word_vocab() -> Vocab:
    vocab = Vocab()
    for a, b in [(97, 98), (32, 256), (99, 100), (32, 258), (101, 102)]:
        vocab.add(a, b)
    return vocab  # 256 ab, 257 " ab", 258 cd, 259 " cd", 260 ef


runs = st.lists(
    st.lists(st.sampled_from([256, 257, 258, 259, 260]), min_size=2, max_size=6),
    min_size=1,
    max_size=8,
)


@settings(max_examples=examples(ci=40, local=10))
@given(
    seqs=runs,
    counts=st.lists(st.integers(1, 6), min_size=0, max_size=6),
    removals=st.lists(st.booleans(), min_size=6, max_size=6),
)
def test_supermerge_pass_equals_the_oracle(
    seqs: list[list[int]], counts: list[int], removals: list[bool]
) -> None:
    """The second pass's competition on the one loop, against the oracle running the same
    variant over the same sequences of word-level tokens."""
    counts = sorted(counts, reverse=True)
    sizes = [0]
    for k in range(len(counts)):
        sizes.append(sizes[-1] + (0 if removals[k] and sizes[-1] else 1))
    sizes[-1] += 2  # (room for supermerges past the word-level merges)
    options: dict[str, Any] = {"tie": "lexicographic", "counting": "non_overlapping"}
    vocab = _word_vocab()
    ours = Supermerges(counts, sizes)
    corpus = TypeCorpus.from_token_counts(
        collections.Counter(map(tuple, seqs)).items(), vocab.length
    )
    driver = MergeDriver(corpus, 20, vocab=vocab, variant=ours, max_merges=20, **options)
    driver.run()
    theirs = Supermerges(counts, sizes)
    ref = brute_force_run(seqs, 20, vocab=_word_vocab(), variant=theirs, max_merges=20, **options)
    assert driver.events == ref[1]
    assert (ours.kept, ours.at) == (theirs.kept, theirs.at)


def _naive_encode(tok: Tokenizer, text: str) -> list[int]:
    """Every piece replayed through the whole word-level log, then the pieces joined by the
    supermerges in order (the authors' inference, written plainly)."""
    events = tok.events
    assert events is not None
    assert tok.pattern is not None
    pieces = []
    for piece in compile_pattern(tok.pattern).findall(text):
        ids = list(piece.encode("utf-8"))
        for e in events:
            if e[0] == "merge":
                ids = bpeds.vocab.apply_merge(ids, e[2], e[3], e[1])
            elif e[0] == "remove":
                ids = [p for t in ids for p in (e[2:] if t == e[1] else [t])]
        pieces.append(ids)
    out: list[int] = []
    run: list[int] = []
    for ids in [*pieces, [-1, -1]]:
        if len(ids) == 1:
            run.append(ids[0])
            continue
        for e in events:
            if e[0] == "supermerge":
                run = bpeds.vocab.apply_merge(run, e[2], e[3], e[1])
        out += run + (ids if ids != [-1, -1] else [])
        run = []
    return out


@cache
def _small() -> Tokenizer:
    text = (DATA / "taylorswift.txt").read_text(encoding="utf-8")[:30000]
    return bpeds.train(text.split("\n"), 420, variant=BoundlessBPE(0.5), **AUTHORS)


@settings(max_examples=examples(ci=60, local=15), deadline=None)
@given(text=st.text(alphabet="the of and a in to Swift album 's,.\n", max_size=60))
def test_encoding_is_the_replay_then_the_supermerges(text: str) -> None:
    tok = _small()
    assert tok.encode(text) == _naive_encode(tok, text)
    assert tok.decode(tok.encode(text)) == text


def test_supermerger_and_replay_keep_passes_apart() -> None:
    log, _, _ = check_events(
        [(97, 98), (256, 256)], [["merge", 256, 97, 98], ["supermerge", 257, 256, 256]]
    )
    assert Replay(log, {256: (97, 98), 257: (256, 256)}, frozenset())(b"abab") == [256, 256]
    assert Supermerger(log)([[256], [256], [97]]) == [257, 97]


@pytest.mark.parametrize(
    ("events", "message"),
    [
        ([["supermerge", 256, 97, 98], ["merge", 257, 256, 99]], "only supermerges may follow"),
        ([["merge", 256, 97, 98], ["supermerge", 257, 300, 99]], "not present"),
        ([["merge", 256, 97, 98], ["supermerge", 257, 99, 99]], "merges list makes it"),
        ([["merge", 256, 97, 98], ["supermerge", 256, 97, 99]], "same bytes"),
    ],
)
def test_bad_supermerge_logs_are_refused(events: list[list[Any]], message: str) -> None:
    with pytest.raises(EventLogError, match=message):
        check_events([(97, 98), (256, 99)], events)


def test_arguments_are_checked() -> None:
    with pytest.raises(ValueError, match="tau"):
        BoundlessBPE(1.5)
    with pytest.raises(ValueError, match="does not compile"):
        BoundlessBPE(superword="(")
    with pytest.raises(ValueError, match="pattern=None"):
        bpeds.train("a b", 260, variant="boundless", pattern=None)
    with pytest.raises(ValueError, match="reads the data twice"):
        bpeds.train(iter(["a b"]), 260, variant="boundless")
    counts = bpeds.count("the cat the cat")
    with pytest.raises(ValueError, match="second run"):
        bpeds.train(counts, 260, variant="boundless")


def test_first_pass_only_is_an_ordinary_variant_run() -> None:
    """supermerges=False gives the word-level pass alone; its log has no supermerge."""
    tok = bpeds.train(documents()[:40], 400, variant={"name": "boundless", "supermerges": False})
    assert tok.options["variant"]["supermerges"] is False
    assert "supermerges" not in tok.options
    model = TrainedModel(tok.merges, tok.pattern, {}, {}, tok.events)
    assert model.replays


def test_command_line_and_compare(tmp_path: Path) -> None:
    """``bpeds train --variant boundless`` gives bpeds.train's tokenizer; compare measures it
    as one more configuration (at its full size)."""
    from bpeds.cli import main

    corpus = tmp_path / "t.txt"
    corpus.write_text("\n".join(documents()[:120]), encoding="utf-8")
    out = tmp_path / "b.json"
    argv = ["train", str(corpus), "--vocab-size", "600", "-o", str(out), "-q"]
    argv += ["--variant", "boundless", "--variant-options", '{"tau": 0.9}', "--pattern", "gpt4o"]
    argv += ["--tie", "lexicographic", "--counting", "non_overlapping"]
    assert main(argv) == 0
    expected = bpeds.train(corpus, 600, variant=BoundlessBPE(0.9), **AUTHORS)
    assert Tokenizer.load(out) == expected
    assert any(e[0] == "supermerge" for e in expected.events or [])
    c = bpeds.compare(
        {"boundless": {"variant": {"name": "boundless", "tau": 0.9}, **AUTHORS}},
        train=corpus,
        heldout=heldout()[0],
        vocab_size=600,
        workers=1,
    )
    assert [r["vocab_size"] for r in c.rows] == [expected.vocab_size]
