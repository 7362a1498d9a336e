"""The safe-cut segmenter: cutting never changes a built-in pattern's split or counts."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

import bpeds.tokenizer.fastsplit
import bpeds.tokenizer.pieces
from bpeds.tokenizer.pretokenize import GLUED, PATTERNS, Segmenter, compile_pattern, segmenter
from bpeds.tokenizer.training import count_pieces
from tests.budget import examples

NAMES = ("gpt2", "gpt4", "gpt4o")
TAYLOR = Path(__file__).parent / "data" / "taylorswift.txt"

# Characters near every decision the patterns make: whitespace of each kind (including
# U+001C, whitespace to str.isspace but not to the regex module), digits, apostrophes and
# contraction letters, punctuation and the "/" of GPT-4o's tail, letters of each case, CJK,
# combining marks, and the sentinel the segmenter uses for glued spaces.
BIASED = st.text(
    st.sampled_from(
        list("    \t\n\n\r\x0b\x0c\x1c\x85\xa0\u2028\u3000")
        + list("0123456789'sStdlmvre,./-!?\"")
        + list("aBcXyz\u00e9\u0301\u4e2d\u6587\u00c0\u01c5")
        + [GLUED, "\U0001f600"]
    ),
    max_size=60,
)
TEXTS = st.one_of(st.text(max_size=60), BIASED)
#: Texts where a wrong cut rule shows (cutting before every space, after every newline).
TRICKY = ["a\n  b", "x  \ny", " \n\t z", "a.\n/b", "q\n\nr", "it's  12345 \r\n"]


def _seg(name: str) -> Segmenter:
    seg = segmenter(name)
    assert seg is not None
    return seg


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(ci=400, local=120), deadline=None)
@given(text=TEXTS)
@example(text="".join(TRICKY))
def test_segments_split_exactly_as_the_whole(name: str, text: str) -> None:
    seg = _seg(name)
    segments = seg.segments(text)
    assert "".join(segments) == text
    assert [p for s in segments for p in seg.findall(s)] == seg.findall(text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(ci=300, local=100), deadline=None)
@given(texts=st.lists(TEXTS, max_size=8))
@example(texts=TRICKY)
def test_count_cut_equals_counter_in_first_appearance_order(name: str, texts: list[str]) -> None:
    text = "".join(texts)
    seg = _seg(name)
    want = dict(Counter(seg.findall(text)))
    got = seg.count_cut(text)
    assert got == want
    assert list(got) == list(want)
    assert seg.count(text) == want


@pytest.mark.parametrize("name", NAMES)
def test_count_on_real_text(name: str) -> None:
    text = TAYLOR.read_text(encoding="utf-8")
    seg = _seg(name)
    want = dict(Counter(seg.findall(text)))
    for got in (seg.count_cut(text), seg.count(text)):
        assert got == want
        assert list(got) == list(want)
    assert [p for s in seg.segments(text) for p in seg.findall(s)] == seg.findall(text)


def test_counting_for_training_uses_the_segmenter_and_agrees(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    text = TAYLOR.read_text(encoding="utf-8")
    units = [text, text[:5000], " x  y\n\n z"]
    # the segmenter counts only where the ASCII fast path is not taken
    monkeypatch.setattr(bpeds.tokenizer.fastsplit.FastSplit, "applies", lambda self, text: False)
    for name in NAMES:
        source = PATTERNS[name]
        monkeypatch.setattr(bpeds.tokenizer.pieces, "SEGMENT_MIN_CHARS", 1 << 62)
        want = count_pieces(units, source)
        monkeypatch.setattr(bpeds.tokenizer.pieces, "SEGMENT_MIN_CHARS", 1)
        got = count_pieces(units, source)
        assert isinstance(got, dict)
        assert isinstance(want, dict)
        assert got == want
        assert list(got) == list(want)


def test_unsafe_places_are_not_cut() -> None:
    gpt2, gpt4, gpt4o = (_seg(n) for n in NAMES)
    # a space after whitespace, unless a non-space character follows it
    assert gpt2.segments("a\n  b") == ["a\n ", " b"]
    assert gpt4.segments("a  \nb") == ["a", "  \nb"]
    # a newline between whitespace; GPT-4o's "/" after a newline
    assert gpt2.segments("a\n\nb") == ["a\n\nb"]
    assert gpt4o.segments("a.\n/b") == ["a.\n/b"]
    assert gpt4.segments("a.\n/b") == ["a.\n", "/b"]
    assert gpt4o.findall("a.\n/b") == ["a", ".\n/", "b"]


def test_text_holding_the_sentinel_is_split_whole() -> None:
    seg = _seg("gpt2")
    text = f"a b{GLUED} c"
    assert seg.parts(text) is None
    assert seg.segments(text) == [text]
    assert seg.count_cut(text) == dict(Counter(seg.findall(text)))


def test_only_the_proven_patterns_get_a_segmenter() -> None:
    assert segmenter(None) is None
    assert segmenter(r"\w+ |\s+") is None
    for name in NAMES:
        assert segmenter(compile_pattern(name)) is not None
        assert segmenter(PATTERNS[name]) is not None
    flagged = regex.compile(PATTERNS["gpt2"], regex.IGNORECASE)
    assert segmenter(flagged) is None
