"""Continued training: start from an existing tokenizer, keep every id and rank, rank new merges
after them. Checked against a run from scratch, the brute-force oracle and bpe-continue."""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds
from bpeds.cli import main
from bpeds.corpus import TypeCorpus
from bpeds.driver import MergeDriver
from bpeds.testing.oracle import brute_force_run
from bpeds.vocab import Vocab
from tests.budget import examples

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")

words = st.lists(st.text(alphabet="ab c", min_size=1, max_size=10), min_size=1, max_size=12)


@pytest.mark.parametrize(
    ("score", "tie"),
    [
        ("frequency", "smallest_ids"),
        ("frequency", "leftmost"),
        ("frequency", "lexicographic"),
        ("pmi", "smallest_ids"),
        ("likelihood_gain", "lexicographic"),
    ],
)
@pytest.mark.filterwarnings("ignore:training stopped after")
@settings(max_examples=examples(ci=25, local=8))
@given(data=words, first=st.integers(0, 6), more=st.integers(1, 8))
def test_continuing_a_run_gives_the_rest_of_the_run(
    data: list[str], first: int, more: int, score: str, tie: str
) -> None:
    """Training k merges, then continuing to k + m, gives the first k + m merges of one
    run from scratch (BPE is greedy), for scores of every dependency and every tie rule."""
    scratch = bpeds.train(data, 256 + first + more, pattern=None, score=score, tie=tie)
    base = bpeds.train(data, 256 + first, pattern=None, score=score, tie=tie)
    assert base.merges == scratch.merges[: base.num_merges]
    if base.num_merges < first:  # (the data ran out of pairs)
        return
    cont = bpeds.train(data, 256 + first + more, base=base, score=score, tie=tie)
    assert cont.merges == scratch.merges
    assert cont.options["base"]["merges"] == base.num_merges


@settings(max_examples=examples(ci=25, local=8))
@given(data=words, first=st.integers(0, 5), more=st.integers(1, 6))
def test_the_driver_equals_the_oracle_from_a_starting_vocabulary(
    data: list[str], first: int, more: int
) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # (small data may run out of pairs)
        base = bpeds.train(data, 256 + first, pattern=None)
    vocab = Vocab()
    for a, b in base.merges:
        vocab.add(a, b)
    seqs = [base.encode_ordinary(t) for t in data]
    corpus = TypeCorpus.from_token_counts([(s, 1) for s in seqs], vocab.length)
    ours = MergeDriver(corpus, more, vocab=vocab, tie="leftmost").run()
    ref, _ = brute_force_run(seqs, more, vocab=base_vocab(base), tie="leftmost")
    assert [(r.pair, r.new_id, r.count) for r in ours] == [(r.pair, r.new_id, r.count) for r in ref]


def base_vocab(tok: bpeds.Tokenizer) -> Vocab:
    vocab = Vocab()
    for a, b in tok.merges:
        vocab.add(a, b)
    return vocab


def test_every_base_token_keeps_its_id_and_special_tokens_move_only_when_needed() -> None:
    base = bpeds.train(TEXT[:60000], 700, special_tokens=["<eos>"])
    assert base.special_tokens == {"<eos>": 699}
    with pytest.warns(UserWarning, match=r"'<eos>'\] had ids the new merges take"):
        cont = bpeds.train(TEXT[60000:], 1100, base=base, special_tokens=["<pad>", "<eos>"])
    assert cont.merges[: base.num_merges] == base.merges
    assert cont.special_tokens == {"<eos>": 1098, "<pad>": 1099}
    assert cont.vocab_size == 1100
    for i in range(256, 256 + base.num_merges):
        assert cont.token_bytes(i) == base.token_bytes(i)
    # New merges only glue whole base tokens: the new encoding coarsens the old one.
    sample = TEXT[60000:62000]
    old = b"".join(cont.token_bytes(i) for i in base.encode(sample))
    assert cont.decode_bytes(cont.encode(sample)) == old
    assert len(cont.encode(sample)) < len(base.encode(sample))
    # A base whose specials sit above the new merges keeps them where they are.
    high = bpeds.Tokenizer(base.merges, special_tokens={"<eos>": 5000})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kept = bpeds.train(TEXT[60000:], 900, base=high)
    assert kept.special_tokens == {"<eos>": 5000}


def test_bad_bases_are_refused_clearly(tmp_path: Path) -> None:
    picky = bpeds.train(TEXT[:30000], 400, variant={"name": "picky", "threshold": 0.5})
    assert picky.replays
    with pytest.raises(ValueError, match="loop variant"):
        bpeds.train(TEXT, 500, base=picky)
    base = bpeds.train(TEXT[:30000], 400)
    with pytest.raises(ValueError, match="at least 400"):
        bpeds.train(TEXT, 399, base=base)
    with pytest.raises(ValueError, match="representation='type'"):
        bpeds.train(TEXT, 500, base=base, representation="sequence")
    with pytest.raises(TypeError, match="base must be a Tokenizer or the path"):
        bpeds.train(TEXT, 500, base=42)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="as a list of texts"):
        bpeds.train(TEXT, 500, base=base, special_tokens={"<x>": 499})


def test_continues_from_model_files_of_other_formats(tmp_path: Path) -> None:
    from bpeds.tokenizer.formats import save_minbpe

    base = bpeds.train(TEXT[:50000], 500, preset="minbpe-regex")
    save_minbpe(base, tmp_path / "base")
    cont = bpeds.train(TEXT[50000:], 700, base=tmp_path / "base.model")
    assert cont.merges[: base.num_merges] == base.merges
    assert cont.pattern == base.pattern


def test_equals_bpe_continue() -> None:
    """bpe-continue (PyPI) extends a Hugging Face tokenizer.json; from the same base and
    text it learns the same merges as bpeds with ties by smallest ids (the base's ids)."""
    bpe_continue = pytest.importorskip("bpe_continue")
    from bpeds.tokenizer.formats.hf import hf_tokenizer_json

    base = bpeds.train(TEXT[:90000], 600, preset="hf")
    extended = bpe_continue.continue_training(
        json.dumps(hf_tokenizer_json(base)),
        texts=[TEXT[90000:]],
        vocab_size=1200,
        show_progress=False,
    )
    theirs = _pairs(json.loads(extended.to_str())["model"]["merges"])
    ours = bpeds.train(TEXT[90000:], 1200, base=base, tie="smallest_ids", pattern=base.pattern)
    assert _pairs(hf_tokenizer_json(ours)["model"]["merges"]) == theirs
    assert len(theirs) == 1200 - 256


def _pairs(merges: list[Any]) -> list[tuple[str, ...]]:
    return [tuple(m.split(" ")) if isinstance(m, str) else tuple(m) for m in merges]


def test_cli_continues_from_a_model(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """In process (``python -m bpeds`` itself is tested in tests/test_cli.py)."""
    base = tmp_path / "base.json"
    bpeds.train(TEXT[:50000], 500).save(base)
    out = tmp_path / "more.json"
    argv = ["train", str(DATA / "tinyshakespeare_100k.txt"), "--base", str(base)]
    code = main([*argv, "--vocab-size", "700", "-o", str(out)])
    assert code == 0, capsys.readouterr().err
    tok = bpeds.Tokenizer.load(out)
    assert tok.merges[:244] == bpeds.Tokenizer.load(base).merges
    assert tok.vocab_size == 700
