"""Encoding and decoding against the real tiktoken, and the encoder's own algorithms."""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds.tokenizer.encoder
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.encoder import (
    SpecialTokenError,
    UnknownTokenError,
    _bpe_heap,
    _bpe_short,
    bpe,
    fix_surrogates,
)
from bpeds.tokenizer.training import train
from tests.budget import examples

tiktoken = pytest.importorskip("tiktoken")

DATA = Path(__file__).parent / "data"
TEXT = (DATA / "taylorswift.txt").read_text(encoding="utf-8")
SPECIALS = ["<|endoftext|>", "<|fim_prefix|>", "<|endofprompt|>"]
MULTILINGUAL = (
    "Taylor Swift's 2024 tour: 152 shows, $2.1B!\n"
    "Тейлор Свифт — американская певица.  Её альбомы...\n"
    "テイラー・スウィフトはアメリカの歌手です。\n"
    "泰勒·斯威夫特是美国创作歌手。\r\n"
    "تايلور سويفت مغنية أمريكية.\t\n"
    "टेलर स्विफ्ट एक अमेरिकी गायिका हैं।\n"
    "Ο Τέιλορ Σουίφτ     είναι τραγουδίστρια 😀👩‍👩‍👧 café naïve e\u0301\n\n\n   "  # noqa: RUF001
)


@functools.cache
def trained(name: str | None) -> tuple[Tokenizer, Any]:
    """A tokenizer trained on taylorswift (1000 merges) and the tiktoken Encoding built from it."""
    text = TEXT if name is not None else TEXT[:30000]
    tok = train(text, 256 + 1000 + len(SPECIALS), pattern=name, special_tokens=SPECIALS)
    assert len(tok.merges) == 1000
    pat = tok.pattern if tok.pattern is not None else r"[\s\S]+"
    enc = tiktoken.Encoding(
        f"bpeds-{name}",
        pat_str=pat,
        mergeable_ranks=tok.mergeable_ranks(),
        special_tokens=tok.special_tokens,
    )
    return tok, enc


PATTERN_NAMES = ["gpt2", "gpt4", None]


@pytest.mark.parametrize("name", PATTERN_NAMES)
@settings(max_examples=examples(ci=150, local=25))
@given(text=st.text())
def test_encode_equals_tiktoken_on_any_text(name: str | None, text: str) -> None:
    tok, enc = trained(name)
    ids = tok.encode(text)
    assert ids == enc.encode(text)
    assert tok.encode_ordinary(text) == ids
    assert tok.decode(ids) == text


@pytest.mark.parametrize("name", PATTERN_NAMES)
@settings(max_examples=examples(ci=60, local=20))
@given(
    parts=st.lists(
        st.sampled_from(["the", " Swift", "  ", "\n", "1989", "!", "é", *SPECIALS]), max_size=20
    )
)
def test_special_token_semantics_equal_tiktoken(name: str | None, parts: list[str]) -> None:
    tok, enc = trained(name)
    text = "".join(parts)
    for allowed in ("all", {"<|endoftext|>"}, set()):
        for disallowed in ("all", (), {"<|fim_prefix|>"}):
            try:
                want = enc.encode(text, allowed_special=allowed, disallowed_special=disallowed)
            except ValueError:
                with pytest.raises(SpecialTokenError):
                    tok.encode(text, allowed_special=allowed, disallowed_special=disallowed)
            else:
                got = tok.encode(text, allowed_special=allowed, disallowed_special=disallowed)
                assert got == want
                assert tok.decode(got) == text


@pytest.mark.parametrize("name", PATTERN_NAMES)
def test_real_and_multilingual_text_equal_tiktoken(name: str | None) -> None:
    tok, enc = trained(name)
    samples = [MULTILINGUAL, TEXT[:60000] if name is None else TEXT, MULTILINGUAL * 7]
    for text in samples:
        ids = tok.encode(text)
        assert ids == enc.encode(text)
        assert tok.decode(ids) == text
        assert tok.decode_bytes(ids) == text.encode("utf-8")
    assert tok.encode_batch(samples, workers=1) == [enc.encode(t) for t in samples]


@pytest.mark.parametrize("name", PATTERN_NAMES)
def test_surrogates_are_replaced_like_tiktoken(name: str | None) -> None:
    tok, enc = trained(name)
    for text in ["a\ud800b", "x \ud83d\ude00 y", "\udfff", "Swift\ud800<|endoftext|>"]:
        assert tok.encode(text, allowed_special="all") == enc.encode(text, allowed_special="all")
        assert tok.encode_ordinary(text) == enc.encode_ordinary(text)
        assert tok.decode(tok.encode_ordinary(text)) == fix_surrogates(text)


def test_disallowed_special_raises_a_value_error_that_says_what_to_do() -> None:
    tok, _ = trained("gpt4")
    with pytest.raises(ValueError, match="allowed_special=") as info:
        tok.encode("hi <|endoftext|>")
    assert isinstance(info.value, SpecialTokenError)
    assert "disallowed_special=()" in str(info.value)
    assert tok.encode("<|endoftext|>", allowed_special={"<|endoftext|>"}) == [
        tok.special_tokens["<|endoftext|>"]
    ]
    with pytest.raises(TypeError, match="allowed_special"):
        tok.encode("x", allowed_special="<|endoftext|>")
    with pytest.raises(TypeError, match="disallowed_special must hold str"):
        tok.encode("x", disallowed_special=[1])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="text must be a str"):
        tok.encode(b"x")  # type: ignore[arg-type]


def test_overlapping_special_tokens_take_the_longest() -> None:
    tok = Tokenizer(pattern="gpt2", special_tokens={"<a>": 256, "<a>b": 257, "b": 258})
    assert tok.encode("<a>bb<a>", allowed_special="all") == [257, 258, 256]
    assert tok.encode("<a>bb", allowed_special={"<a>", "b"}, disallowed_special=()) == [
        256,
        258,
        258,
    ]


# -- the merge algorithm --------------------------------------------------------------------


def naive(piece: bytes, ranks: dict[bytes, int]) -> list[int]:
    """The definition, as plainly as possible."""
    parts = [bytes([b]) for b in piece]
    while True:
        cands = [
            (ranks[parts[i] + parts[i + 1]], i)
            for i in range(len(parts) - 1)
            if parts[i] + parts[i + 1] in ranks
        ]
        if not cands:
            return [ranks[p] for p in parts]
        _, i = min(cands)
        parts[i : i + 2] = [parts[i] + parts[i + 1]]


@settings(max_examples=examples(ci=200, local=60))
@given(piece=st.binary(max_size=200) | st.text(alphabet="ab ", max_size=300).map(str.encode))
def test_short_and_heap_algorithms_equal_the_definition(piece: bytes) -> None:
    tok, _ = trained(None)
    ranks = tok.mergeable_ranks()
    want = naive(piece, ranks) if piece else []
    if piece:
        assert _bpe_short(piece, ranks) == want
        assert _bpe_heap(piece, ranks) == want
    assert bpe(piece, ranks) == want


def test_tiny_vocab_with_many_ties() -> None:
    ranks = {bytes([b]): b for b in range(256)} | {b"aa": 256, b"aaa": 257, b"aaaa": 258}
    assert bpe(b"", ranks) == []
    for n in range(1, 150):
        piece = b"a" * n
        want = naive(piece, ranks)
        assert _bpe_heap(piece, ranks) == want
        assert _bpe_short(piece, ranks) == want
        assert bpe(piece, ranks) == want
    # By rank, leftmost on ties: a.a.a.a.a -> aa.a.a.a -> aa.aa.a -> aa.aaa (aaa ranks below aaaa).
    assert naive(b"aaaaa", ranks) == [256, 257]


def test_repeated_bytes_keep_the_lowest_id() -> None:
    a, b, c = ord("a"), ord("b"), ord("c")
    # ab=256, abc=257 (ab+c), bc=258, abc again=259 (a+bc)
    tok = Tokenizer([(a, b), (256, c), (b, c), (a, 258)], pattern=None)
    assert tok.token_bytes(257) == tok.token_bytes(259) == b"abc"
    assert tok.encode("abcabc") == [257, 257]
    assert tok.mergeable_ranks()[b"abc"] == 257
    assert 259 not in tok.mergeable_ranks().values()
    assert tok.token_to_id(b"abc") == 257
    assert tok.decode([259, 258]) == "abcbc"
    enc = tiktoken.Encoding(
        "dup", pat_str=r"[\s\S]+", mergeable_ranks=tok.mergeable_ranks(), special_tokens={}
    )
    assert enc.encode("abcabcbcab") == tok.encode("abcabcbcab")


def test_piece_cache_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(bpeds.tokenizer.encoder, "CACHE_SIZE", 8)
    tok = train(TEXT[:20000], 256 + 200, pattern="gpt4")
    text = TEXT[20000:40000]
    ids = tok.encode(text)
    enc = tok._enc()
    assert len(enc._cache) <= 8
    fresh = Tokenizer(tok.merges, pattern=tok.pattern)
    monkeypatch.setattr(bpeds.tokenizer.encoder, "CACHE_SIZE", 1 << 16)
    assert fresh.encode(text) == ids


# -- batches, decoding, lookups ---------------------------------------------------------------


def test_encode_batch_in_processes_equals_sequential() -> None:
    tok, enc = trained("gpt4")
    texts = [TEXT[i : i + 5000] for i in range(0, 100000, 5000)] + ["", MULTILINGUAL]
    want = [enc.encode(t) for t in texts]
    assert tok.encode_batch(texts, workers=2) == want
    assert tok.encode_batch(texts) == want
    assert tok.encode_ordinary_batch(texts, workers=2) == want
    bad = [*texts[:3], "oops <|endoftext|>"]
    with pytest.raises(SpecialTokenError):
        tok.encode_batch(bad, workers=2)
    assert (
        tok.encode_batch(bad, workers=2, allowed_special="all")[-1][-1]
        == tok.special_tokens["<|endoftext|>"]
    )
    with pytest.raises(TypeError, match="a list"):
        tok.encode_batch("one text")
    with pytest.raises(TypeError, match="position 1"):
        tok.encode_batch(["a", 2])  # type: ignore[list-item]
    with pytest.raises(ValueError, match="workers"):
        tok.encode_batch(["a"], workers=0)


def test_decode_rejects_unknown_ids_clearly() -> None:
    tok, _ = trained("gpt2")
    top = 256 + 1000 + len(SPECIALS)
    for bad in (top, -1, 10**20):
        with pytest.raises(UnknownTokenError, match=rf"unknown token id {bad} at position 2"):
            tok.decode([104, 105, bad])
    with pytest.raises(TypeError, match=r"position 1 holds 'x'"):
        tok.decode([1, "x"])  # type: ignore[list-item]
    with pytest.raises(TypeError, match="iterable of ints"):
        tok.decode("abc")  # type: ignore[arg-type]
    with pytest.raises(LookupError):
        tok.decode([1], errors="no-such-handler")
    assert tok.decode(iter([104, 105])) == "hi"
    assert tok.decode([0xE2, 0x98]) == "\ufffd"
    assert tok.decode([0xE2, 0x98], errors="ignore") == ""
    with pytest.raises(UnicodeDecodeError):
        tok.decode([0xE2, 0x98], errors="strict")


def test_token_lookups() -> None:
    tok, enc = trained("gpt4")
    eot = tok.special_tokens["<|endoftext|>"]
    assert tok.token_to_id("<|endoftext|>") == eot
    assert tok.token_to_id(b"<|endoftext|>") == eot
    assert tok.id_to_token(eot) == b"<|endoftext|>"
    for i in (0, 65, 256, 700, 1255):
        b = tok.id_to_token(i)
        assert b == enc.decode_single_token_bytes(i)
        assert tok.token_to_id(b) == i
    assert tok.token_to_id(" Swift") == enc.encode_single_token(" Swift")
    assert tok.token_to_id(b"\xff\xfe-not-a-token") is None
    with pytest.raises(UnknownTokenError, match="unknown token id"):
        tok.id_to_token(10**6)
    with pytest.raises(TypeError):
        tok.token_to_id(5)  # type: ignore[arg-type]
