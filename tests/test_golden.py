"""The golden merge lists in tests/data/ are current and are what their reference computes."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
import regex

from bpeds.tokenizer.pretokenize import GPT4_PATTERN
from tests.golden import MINBPE_GOLDEN, REGENERATE, minbpe_golden, minbpe_golden_doc
from tests.minbpe_rule import minbpe_merges

ROOT = Path(__file__).parent.parent
DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
CASES: list[dict[str, Any]] = minbpe_golden_doc()["cases"]

#: Merges recomputed live per case, a small share of the reference's cost. What could make
#: the rest stale is checked directly: the reference's source, the text and its split.
LIVE_PREFIX = 10


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def test_minbpe_golden_is_made_from_the_current_reference_and_text() -> None:
    doc = minbpe_golden_doc()
    stale = f"{MINBPE_GOLDEN.name} is stale: run {REGENERATE}"
    assert doc["reference_sha256"] == sha256((ROOT / "tests" / "minbpe_rule.py").read_bytes()), (
        stale
    )
    assert doc["source_sha256"] == sha256((DATA / "taylorswift.txt").read_bytes()), stale
    # Regex cases use minbpe's GPT-4 pattern, which must be the one bpeds calls GPT4_PATTERN.
    assert {c["pattern"] for c in CASES} == {None, GPT4_PATTERN}


@pytest.mark.parametrize(
    "case",
    CASES,
    ids=[f"{'regex' if c['pattern'] else 'basic'}-{c['chars'][0]}-{c['chars'][1]}" for c in CASES],
)
def test_minbpe_golden_case_is_what_the_reference_computes(case: dict[str, Any]) -> None:
    start, end = case["chars"]
    text = TEXT[start:end]
    assert sha256(text.encode("utf-8")) == case["text_sha256"]
    # The chunks the reference trained on are today's: a new regex module splits the same.
    pieces = [text] if case["pattern"] is None else regex.findall(case["pattern"], text)
    assert (
        sha256(json.dumps(pieces, ensure_ascii=False).encode("utf-8")) == case["pieces_sha256"]
    ), f"the split changed: run {REGENERATE}"
    assert len(case["merges"]) == case["num_merges"]
    want = minbpe_merges(text, LIVE_PREFIX, case["pattern"])
    assert minbpe_golden(text, LIVE_PREFIX, case["pattern"]) == want
    assert minbpe_golden(text, case["num_merges"], case["pattern"])[:LIVE_PREFIX] == want


def test_minbpe_golden_refuses_an_input_it_was_not_made_from() -> None:
    with pytest.raises(LookupError, match=r"make_golden\.py"):
        minbpe_golden(TEXT[:12_001], 10, None)
    with pytest.raises(LookupError, match="no golden"):
        minbpe_golden(TEXT[:12_000], 151, None)  # more merges than the case holds
    with pytest.raises(LookupError, match="no golden"):
        minbpe_golden(TEXT[:12_000], 10, GPT4_PATTERN)
