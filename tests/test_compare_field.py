"""The field's comparison metrics: fertility per group and the Gini coefficient of token cost
equal TokEval's on FLORES text; the share of tokens that split a character, digit-group
alignment and LiteToken's residue share equal their definitions computed plainly."""

from __future__ import annotations

import json
import re
from functools import cache
from pathlib import Path
from typing import Any

import pytest

import bpeds
from bpeds.comparison.metrics import gini
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import load_hf
from bpeds.tokenizer.pruning import token_use

DATA = Path(__file__).parent / "data"


@cache
def golden() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads((DATA / "metrics_golden.json").read_text("utf-8"))
    return doc


@cache
def heldout() -> dict[str, str]:
    out = {}
    for lang in golden()["fertility"]:
        lines = (DATA / "flores" / f"{lang}.txt").read_text(encoding="utf-8").splitlines(True)
        out[lang] = "".join(lines[120:])
    return out


@cache
def row() -> dict[str, Any]:
    tok = load_hf(DATA / "metrics_tokenizer.json", renumber=True)
    c = bpeds.compare({"t": tok}, train="unused", heldout=heldout(), workers=1)
    return c.row("t")


def test_fertility_per_group_and_gini_equal_tokeval() -> None:
    expected = golden()
    for lang, value in expected["fertility"].items():
        assert row()[f"tokens_per_word[{lang}]"] == pytest.approx(value, rel=1e-12)
    for lang, value in expected["tokens_per_byte"].items():
        assert row()[f"tokens_per_byte[{lang}]"] == pytest.approx(value, rel=1e-12)
    assert row()["token_gini"] == pytest.approx(expected["token_gini"], rel=1e-12)


def test_gini_definition() -> None:
    assert gini([2.0, 2.0]) == 0.0
    assert gini([1.0]) is None
    assert gini([1.0, 3.0]) == pytest.approx(abs(1 - 3) * 2 / (2 * 4 * 2))


@cache
def english() -> tuple[Tokenizer, str]:
    text = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
    digits = r"\p{N}{1,3}(?=(?:\p{N}{3})*(?!\p{N}))"  # (groups of three from the right)
    return bpeds.train(text[:60000], 500, workers=1, pattern=digits + "|[^\\p{N}]+"), text[
        60000:90000
    ]


def _metrics(tok: Tokenizer, text: str) -> dict[str, Any]:
    return bpeds.compare({"t": tok}, train="unused", heldout=text, workers=1).row("t")


def test_char_split_share_is_the_share_of_tokens_that_are_not_utf8() -> None:
    text = heldout()["ja"] + heldout()["ru"]
    tok = bpeds.train(text[:3000], 300, workers=1)
    ids = tok.encode(text)
    broken = 0
    for t in ids:
        try:
            tok.token_bytes(t).decode("utf-8")
        except UnicodeDecodeError:
            broken += 1
    share = _metrics(tok, text)["char_split_share"]
    assert share == pytest.approx(broken / len(ids))
    assert 0 < share < 1


def _aligned_share(tok: Tokenizer, text: str) -> float:
    """Over every run of two or more ASCII digits, whether each token boundary inside it
    has a multiple of three digits to its right, from the encoding of the whole text."""
    data = text.encode()
    cuts, pos = set(), 0
    for t in tok.encode(text):
        pos += len(tok.token_bytes(t))
        cuts.add(pos)
    runs = [m.span() for m in re.finditer(rb"[0-9]{2,}", data)]
    ok = sum(all((hi - p) % 3 == 0 for p in cuts if lo < p < hi) for lo, hi in runs)
    return ok / len(runs)


def test_digit_alignment_is_the_share_of_numbers_cut_at_place_value_groups() -> None:
    right, text = english()
    train = (DATA / "taylorswift.txt").read_text(encoding="utf-8")[:60000]
    shares = {}
    for name, tok in (("right", right), ("gpt4", bpeds.train(train, 500, workers=1))):
        shares[name] = _metrics(tok, text)["digit_alignment"]
        assert shares[name] == pytest.approx(_aligned_share(tok, text))
    # GPT-4's pattern cuts digits in threes from the left: numbers of 4 or 5 digits misalign
    assert 0 < shares["gpt4"] < 1.0
    assert 0 < shares["right"] < 1.0  # (a group of three may still be two tokens)


def test_residue_share_counts_litetoken_residues_on_the_heldout_text() -> None:
    tok, text = english()
    use = token_use(tok, text, workers=1)
    residues = [
        t for t in range(256, 256 + len(tok.merges)) if (r := use.ratio(t)) is not None and r < 0.05
    ]
    assert _metrics(tok, text)["residue_share"] == pytest.approx(len(residues) / len(tok.merges))
    assert residues
