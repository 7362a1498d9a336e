"""Parity-aware BPE as published: every mode equals the paper's code merge for merge on
FLORES text, Hugging Face's ParityBpeTrainer where it agrees with the paper, and the
brute-force oracle; development sets through bpeds.train."""

from __future__ import annotations

import collections
import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from tokenizers import Tokenizer as HFTokenizer
from tokenizers import pre_tokenizers
from tokenizers.models import BPE
from tokenizers.pre_tokenizers import ByteLevel, Whitespace
from tokenizers.trainers import ParityBpeTrainer

import bpeds
from bpeds.corpus import TypeCorpus
from bpeds.driver import MergeDriver
from bpeds.scoring import ParityAware, gpt2_byte_to_unicode
from bpeds.testing.oracle import brute_force_run
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.pretokenize import split
from bpeds.variants import Picky
from tests.budget import examples

DATA = Path(__file__).parent / "data"
TO_CHAR = gpt2_byte_to_unicode()
TO_BYTE = {c: b for b, c in TO_CHAR.items()}


@cache
def golden() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / "parity_golden.json").read_text("utf-8"))
    for lang, digest in doc["sha256"].items():
        text = (DATA / "flores" / f"{lang}.txt").read_bytes()
        assert hashlib.sha256(text).hexdigest() == digest, "stale: see SOURCES.md"
    return doc


def lines(lang: str) -> tuple[list[str], list[str]]:
    """A language's training and development lines (with their newlines)."""
    text = (DATA / "flores" / f"{lang}.txt").read_text(encoding="utf-8").splitlines(True)
    cut = golden()["train_lines"]
    return text[:cut], text[cut:]


def _words(text: list[str]) -> collections.Counter[bytes]:
    """The reference's words: Hugging Face Whitespace then ByteLevel with a prefix space,
    per line, as bytes."""
    pre = pre_tokenizers.Sequence([Whitespace(), ByteLevel(use_regex=False)])
    out: collections.Counter[bytes] = collections.Counter()
    for line in text:
        for word, _ in pre.pre_tokenize_str(line):
            out[bytes(TO_BYTE[c] for c in word)] += 1
    return out


def _options(arguments: list[str]) -> dict[str, Any]:
    """The reference's command line as ParityAware options."""
    langs = golden()["languages"]
    out: dict[str, Any] = {}
    if "--ratio" in arguments:
        out["ratio"] = [1.0] * len(langs)
    else:
        out["dev"] = {lang: f"{lang}.dev" for lang in langs}  # (names: the corpus holds them)
    if "--variant" in arguments:
        out["window"] = 100
    if "--global-merges" in arguments:
        out["global_merges"] = int(arguments[arguments.index("--global-merges") + 1])
    return out


def _byte_level(driver: MergeDriver) -> list[list[str]]:
    text = driver.vocab.token_bytes
    return [["".join(TO_CHAR[b] for b in text(t)) for t in r.pair] for r in driver.records]


@pytest.mark.parametrize("case", range(6), ids=lambda i: golden()["cases"][i]["case"])
def test_merges_equal_the_papers_code(case: int) -> None:
    """On the reference's own words of each language (training groups, then development
    groups), the score with the paper's options and ``tie="subword_nmt"`` makes the
    reference's merges, in order."""
    expected = golden()["cases"][case]
    options = _options(expected["arguments"])
    langs = golden()["languages"]
    items = []
    for g, lang in enumerate(langs):
        items += [(w, n, g) for w, n in _words(lines(lang)[0]).items()]
    if "dev" in options:
        for g, lang in enumerate(langs):
            items += [(w, n, len(langs) + g) for w, n in _words(lines(lang)[1]).items()]
    driver = MergeDriver(
        TypeCorpus.from_counts(items),
        golden()["symbols"],
        score=ParityAware(**options),
        tie="subword_nmt",
    )
    driver.run()
    assert _byte_level(driver) == expected["merges"]


@pytest.mark.parametrize("case", range(5), ids=lambda i: golden()["cases"][i]["case"])
def test_hugging_face_parity_trainer_agrees(case: int) -> None:
    """``tokenizers.trainers.ParityBpeTrainer`` makes the paper's merges in these modes (in
    hybrid mode with the moving window it passes over a language at ``alpha / L`` where the
    paper's code uses ``alpha / (L + 1)``; see docs/variants.md)."""
    expected = golden()["cases"][case]
    arguments = expected["arguments"]
    langs = golden()["languages"]
    kw: dict[str, Any] = {"num_merges": golden()["symbols"], "min_frequency": 2}
    if "--variant" in arguments:
        kw["variant"] = "window"
    if "--global-merges" in arguments:
        kw["global_merges"] = int(arguments[arguments.index("--global-merges") + 1])
    ratio = "--ratio" in arguments
    if ratio:
        kw["ratio"] = [1.0] * len(langs)
    tok = HFTokenizer(BPE())
    tok.pre_tokenizer = pre_tokenizers.Sequence([Whitespace(), ByteLevel(use_regex=False)])
    ParityBpeTrainer(**kw).train_from_iterator(
        tok,
        train_iterators=[iter(lines(lang)[0]) for lang in langs],
        dev_iterators=None if ratio else [iter(lines(lang)[1]) for lang in langs],
    )
    merges = json.loads(tok.to_str())["model"]["merges"]
    merges = [m.split(" ") if isinstance(m, str) else list(m) for m in merges]
    assert merges == expected["merges"]


chunk = st.lists(st.sampled_from(b"abc "), min_size=1, max_size=8).map(bytes)


@settings(max_examples=examples(ci=40, local=12), deadline=None)
@given(
    items=st.lists(st.tuples(chunk, st.integers(0, 2), st.booleans()), min_size=3, max_size=14),
    n=st.integers(1, 10),
    window=st.sampled_from([None, 1, 3]),
    global_merges=st.integers(0, 2),
    ties=st.sampled_from(["rule", "total"]),
    dev=st.booleans(),
    min_frequency=st.integers(1, 2),
    tie=st.sampled_from(["subword_nmt", "lexicographic", "smallest_ids"]),
)
@example(  # (development sets named but empty: no group past the first has text)
    items=[(b"a", 0, False), (b"a", 0, False), (b"aa", 0, False)],
    n=1,
    window=None,
    global_merges=0,
    ties="rule",
    dev=True,
    min_frequency=1,
    tie="subword_nmt",
)
def test_driver_equals_the_oracle(
    items: list[tuple[bytes, int, bool]],
    n: int,
    window: int | None,
    global_merges: int,
    ties: str,
    dev: bool,
    min_frequency: int,
    tie: str,
) -> None:
    """Three groups; with ``dev``, items marked so are development text (groups 3..5)."""
    chunks = [c for c, _, _ in items]
    groups = [g + (3 if dev and held else 0) for _, g, held in items]

    def score() -> ParityAware:
        return ParityAware(
            dev={"a": "a", "b": "b", "c": "c"} if dev else None,
            window=window,
            global_merges=global_merges,
            ties=ties,
            min_frequency=min_frequency,
        )

    driver = MergeDriver(TypeCorpus(chunks, groups), n, score=score(), tie=tie)
    records = driver.run()
    ref = brute_force_run(chunks, n, groups=groups, score=score(), tie=tie)[0]
    assert [(r.pair, r.count) for r in records] == [(r.pair, r.count) for r in ref]


def _files(tmp: Path) -> tuple[dict[str, Path], dict[str, str]]:
    train, dev = {}, {}
    for lang in golden()["languages"][:3]:
        a, b = lines(lang)
        train[lang] = tmp / f"{lang}.train"
        train[lang].write_text("".join(a), encoding="utf-8")
        (tmp / f"{lang}.dev").write_text("".join(b), encoding="utf-8")
        dev[lang] = str(tmp / f"{lang}.dev")
    return train, dev


def test_train_adds_the_development_sets_as_groups(tmp_path: Path) -> None:
    """bpeds.train with ``dev`` files merges as the driver does on the training groups
    followed by the development groups; the model records the training groups only, and
    round-trips through save and load."""
    train, dev = _files(tmp_path)
    score = {"name": "parity_aware", "dev": dev, "window": 50}
    tok = bpeds.train(train, 600, score=score, tie="subword_nmt", pattern="gpt4", workers=1)
    items = []
    for g, path in enumerate(train.values()):
        text = path.read_text(encoding="utf-8")
        items += [(p, 1, g) for p in split(text, "gpt4")]
    for g, lang in enumerate(train):
        text = Path(dev[lang]).read_text(encoding="utf-8")
        items += [(p, 1, len(train) + g) for p in split(text, "gpt4")]
    driver = MergeDriver(
        TypeCorpus.from_counts(items),
        600 - 256,
        score=ParityAware(dev=dev, window=50),
        tie="subword_nmt",
    )
    driver.run()
    assert tok.merges == [r.pair for r in driver.records]
    assert tok.options["groups"] == list(train)
    assert tok.options["score"]["dev"] == {k: [v] for k, v in dev.items()}
    tok.save(tmp_path / "p.json")
    assert Tokenizer.load(tmp_path / "p.json") == tok


def test_bad_development_sets_are_refused(tmp_path: Path) -> None:
    train, dev = _files(tmp_path)
    with pytest.raises(ValueError, match="one development set per group"):
        bpeds.train(train, 300, score={"name": "parity_aware", "dev": {"en": dev["en"]}})
    with pytest.raises(ValueError, match="compares groups"):
        bpeds.train("text", 300, score=ParityAware(dev=dev))
    with pytest.raises(FileNotFoundError, match="development set of group"):
        bpeds.train(train, 300, score=ParityAware(dev={**dev, "en": str(tmp_path / "none")}))
    with pytest.raises(ValueError, match="not both"):
        ParityAware(dev=dev, ratio=[1, 1, 1])
    with pytest.raises(ValueError, match="window"):
        ParityAware(window=0)
    with pytest.raises(ValueError, match="ties"):
        ParityAware(ties="lowest")
    with pytest.raises(TypeError, match="file path"):
        ParityAware(dev={"en": 3})
    with pytest.raises(ValueError, match="keeps state"):
        MergeDriver(TypeCorpus([b"ab"], [0]), 1, score=ParityAware(window=3), variant=Picky()).run()


def test_command_line_and_compare(tmp_path: Path) -> None:
    from bpeds.cli import main

    train, dev = _files(tmp_path)
    out = tmp_path / "p.json"
    argv = ["train", "--vocab-size", "400", "-o", str(out), "-q", "--score", "parity_aware"]
    argv += [x for lang, path in train.items() for x in ("--group", f"{lang}={path}")]
    argv += ["--score-options", json.dumps({"dev": dev}), "--tie", "subword_nmt"]
    assert main(argv) == 0
    score = {"name": "parity_aware", "dev": dev}
    expected = bpeds.train(train, 400, score=score, tie="subword_nmt")
    assert Tokenizer.load(out) == expected
    c = bpeds.compare(
        {"parity": {"score": score, "tie": "subword_nmt"}, "bpe": {}},
        train=train,
        heldout={lang: Path(path) for lang, path in dev.items()},
        vocab_size=400,
        sizes=1,
        workers=1,
    )
    assert c.row("parity")["token_gini"] is not None
