"""Character-safe merges: SCRIPT-BPE's character-boundary rule as a declared pair rule, equal
to the paper's trainer on FLORES text and to the brute-force oracle."""

from __future__ import annotations

import hashlib
import json
from functools import cache
from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds
from bpeds.cli import main
from bpeds.corpus import TypeCorpus
from bpeds.driver import MergeDriver
from bpeds.testing.oracle import brute_force_run
from bpeds.tokenizer import Tokenizer
from bpeds.variants import CharSafe, partial_character
from tests.budget import examples

DATA = Path(__file__).parent / "data"
LANGUAGES = ("en", "ru", "zh", "ja", "ko")


@cache
def documents() -> list[str]:
    out: list[str] = []
    for lang in LANGUAGES:
        out += (DATA / "flores" / f"{lang}.txt").read_text(encoding="utf-8").splitlines()[:120]
    return out


@cache
def trained() -> Tokenizer:
    return bpeds.train(
        documents(), 256 + 600, pattern="gpt4o", tie="smallest_ids", variant="charsafe", workers=1
    )


def test_merges_equal_script_bpe() -> None:
    """SCRIPT-BPE's trainer (pre-tokenizer ``bytes_gpt4o_cb``: the GPT-4o pattern, bytes,
    character boundaries) makes the same 600 merges; its byte ids are bpeds' plus one, so
    its ties (the smallest pair of ids) are bpeds' ``smallest_ids``."""
    golden: dict[str, Any] = json.loads((DATA / "charsafe_golden.json").read_text("utf-8"))
    assert hashlib.sha256("\n".join(documents()).encode()).hexdigest() == golden["sha256"]
    tok = trained()
    ours = [[tok.token_bytes(a).hex(), tok.token_bytes(b).hex()] for a, b in tok.merges]
    assert ours == golden["merges"]


def test_no_token_ends_inside_a_character_but_a_characters_own_prefix() -> None:
    tok = trained()
    for t in range(256, 256 + len(tok.merges)):
        raw = tok.token_bytes(t)
        kind, partial = partial_character(raw)
        if partial:  # the first bytes of one character, nothing else
            assert kind in (2, 3, 4)
            assert len(raw) < kind
        else:
            raw.decode("utf-8")  # whole characters
    plain = bpeds.train(documents(), 256 + 600, pattern="gpt4o", workers=1)
    assert any(
        partial_character(plain.token_bytes(a))[1] != partial_character(plain.token_bytes(b))[1]
        for a, b in plain.merges
    )


chunk = st.lists(st.sampled_from(["a", "é", "한", "😀", " "]), min_size=1, max_size=6).map(
    lambda cs: "".join(cs).encode()
)


@settings(max_examples=examples(ci=40, local=12), deadline=None)
@given(
    chunks=st.lists(chunk, min_size=1, max_size=8),
    n=st.integers(1, 12),
    tie=st.sampled_from(["smallest_ids", "lexicographic", "leftmost"]),
    score=st.sampled_from(["frequency", "pmi"]),
)
def test_driver_equals_the_oracle(chunks: list[bytes], n: int, tie: str, score: str) -> None:
    driver = MergeDriver(TypeCorpus(chunks), n, variant=CharSafe(), tie=tie, score=score)
    records = driver.run()
    ref = brute_force_run(chunks, n, variant=CharSafe(), tie=tie, score=score)
    assert driver.events == ref[1]
    assert [(r.pair, r.count) for r in records] == [(r.pair, r.count) for r in ref[0]]


def test_command_line_save_load_and_compare(tmp_path: Path) -> None:
    corpus = tmp_path / "t.txt"
    corpus.write_text("\n".join(documents()), encoding="utf-8")
    out = tmp_path / "c.json"
    args = ["train", str(corpus), "--vocab-size", "500", "--variant", "charsafe", "-o", str(out)]
    assert main([*args, "--pattern", "gpt4o", "-q"]) == 0
    tok = Tokenizer.load(out)
    assert tok == bpeds.train(corpus, 500, pattern="gpt4o", variant="charsafe", workers=1)
    assert not tok.replays  # (ordinary ranked merges: other formats can hold it)
    heldout = {lang: documents()[i * 120 + 100] for i, lang in enumerate(LANGUAGES)}
    c = bpeds.compare(
        {"bpe": {"pattern": "gpt4o"}, "charsafe": {"pattern": "gpt4o", "variant": "charsafe"}},
        train={
            lang: "\n".join(documents()[i * 120 : i * 120 + 100])
            for i, lang in enumerate(LANGUAGES)
        },
        heldout=heldout,
        vocab_size=700,
        sizes=1,
        workers=1,
    )
    assert {r["config"] for r in c.rows} == {"bpe", "charsafe"}
    assert all(f"tokens_per_byte[{lang}]" in c.row("charsafe") for lang in LANGUAGES)
