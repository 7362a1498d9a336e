"""The ASCII fast path of the split: exactly ``regex``'s ``findall``, piece for piece."""

from __future__ import annotations

from pathlib import Path

import pytest
import regex
from hypothesis import example, given, settings
from hypothesis import strategies as st

import bpeds.tokenizer.fastsplit
import bpeds.tokenizer.pieces
from bpeds.tokenizer.encoder import Encoder
from bpeds.tokenizer.fastsplit import FastSplit, fast_findall, narrow, splitter
from bpeds.tokenizer.pretokenize import PATTERNS, compile_pattern, cut_points
from bpeds.tokenizer.training import count_pieces
from tests.budget import examples

NAMES = sorted(PATTERNS)
TAYLOR = Path(__file__).parent / "data" / "taylorswift.txt"

ASCII = st.characters(max_codepoint=0x7F)
#: ASCII near every decision the patterns make: each whitespace character (and U+001C..1F,
#: whitespace to ``re`` but not to ``regex``), CRLF, digits, apostrophes and contraction
#: letters in both cases, punctuation and GPT-4o's ``/``.
ASCII_BIASED = st.sampled_from(
    [
        *"    \t\n\n\r\x0b\x0c\x1c\x1f\x00\x7f",
        *["\r\n", "  ", "\n  "],
        *"0123456789'sStTdDlLmMvVrReE,./-!?\"_",
        *"aBcXyzk",
    ]
)
ASCII_TEXT = st.one_of(
    st.text(ASCII, max_size=80), st.lists(ASCII_BIASED, max_size=40).map("".join)
)
#: Non-ASCII near the same decisions: letters and marks that glue to ASCII words (a combining
#: acute, é, Cyrillic, CJK), curly apostrophes before contraction letters, non-ASCII digits
#: (Arabic-Indic, fullwidth, superscript), non-ASCII whitespace (NBSP, NEL, LINE SEPARATOR,
#: ideographic space), characters that fold to ASCII letters (long s, Kelvin sign), and one
#: outside the BMP.
NON_ASCII = st.sampled_from(
    list("\u0301\u00e9\u00c9\u0436\u4e2d\u2019\u2018\u201c\u0663\uff13\u00b2")
    + list("\u00a0\u0085\u2028\u3000\u017f\u212a\u00ad\U0001f600")
    + ["\u2019s", "\u2019LL", "e\u0301", "\u00e9\u00e9"]
)
#: Mixed text: mostly ASCII with scattered non-ASCII, so that islands and stretches alternate.
MIXED = st.lists(
    st.one_of(
        st.text(ASCII, min_size=1, max_size=12),
        st.lists(ASCII_BIASED, min_size=1, max_size=6).map("".join),
        NON_ASCII,
    ),
    max_size=24,
).map("".join)
TEXTS = st.one_of(MIXED, st.text(max_size=60), st.text(ASCII, max_size=60))
#: Places where a wrong cut or a wrong narrowing shows.
TRICKY = [
    "caf\u00e9 au lait",
    "a\u0301 b",
    "x \u0301y",
    "it\u2019s it's IT'S it\u2019LL",
    "12\u0663 \uff134 5\u00b2",
    "a\r\n\u00a0\r\n b",
    "a  \u3000  b\n\n\u2028c",
    ".\n/\u00e9",
    "\u00e9\n/x",
    "x\x1c y\x1c\u00e9",
    "\u017ftar \u212aelvin 's 'S",
]


def _split(name: str) -> tuple[regex.Pattern[str], FastSplit]:
    compiled = compile_pattern(name)
    return compiled, FastSplit(compiled)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(ci=500, local=60), deadline=None)
@given(text=TEXTS)
@example(text="".join(TRICKY))
def test_findall_is_regex_findall_on_any_text(name: str, text: str) -> None:
    compiled, fs = _split(name)
    assert fs.findall(text) == compiled.findall(text)


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("gap", [0, 3, 10_000])
@settings(max_examples=examples(ci=300, local=25), deadline=None)
@given(text=MIXED)
@example(text="".join(TRICKY))
def test_cut_split_is_exact_whatever_the_gap(name: str, gap: int, text: str) -> None:
    """The islands path, without the gate that sends dense non-ASCII text to ``regex``."""
    compiled, fs = _split(name)
    assert fs._cut_split(text, gap) == compiled.findall(text)


@pytest.mark.parametrize("name", NAMES)
@settings(max_examples=examples(ci=500, local=50), deadline=None)
@given(text=ASCII_TEXT)
def test_narrowed_pattern_splits_ascii_as_regex(name: str, text: str) -> None:
    compiled = compile_pattern(name)
    narrowed = narrow(compiled)
    assert narrowed is not None
    assert narrowed.findall(text) == compiled.findall(text)


@pytest.mark.parametrize("name", NAMES)
def test_tricky_texts_and_real_text(name: str) -> None:
    compiled, fs = _split(name)
    text = TAYLOR.read_text(encoding="utf-8")
    assert not text.isascii()
    for t in [*TRICKY, text, text * 2, text[:1000] + "\u4e2d" * 3000 + text[1000:3000]]:
        assert fs.findall(t) == compiled.findall(t)
        assert fs._cut_split(t, 0) == compiled.findall(t)


def test_dense_non_ascii_is_split_whole_by_regex() -> None:
    """Where cutting would cost more than ``re`` saves, nothing is cut (and it is exact)."""
    compiled, fs = _split("gpt2")
    dense = "\u0436\u0443\u043a a " * 2000
    calls: list[int] = []

    def spy(text: str, *_: int) -> list[str]:
        calls.append(len(text))
        return compiled.findall(text)

    fs._slow = spy  # type: ignore[assignment]
    assert fs.findall(dense) == compiled.findall(dense)
    assert calls == [len(dense)]


def test_applies_says_where_re_splits() -> None:
    _, fs = _split("gpt4")
    english = ("The caf\u00e9 opened in 1999. " + "It serves tea and cake. " * 12) * 100
    dense = "\u0436\u0443\u043a a " * 2000
    assert fs.applies("plain ASCII text")
    assert fs.applies(english)
    assert not fs.applies(dense)
    custom = FastSplit(regex.compile(r"\p{L}+|\s+|\P{L}"))
    assert custom.applies("plain")
    assert not custom.applies(english)
    assert not FastSplit(regex.compile(r"\b\w+|\W")).applies("plain")


# -- which patterns qualify -----------------------------------------------------------------

# Each of these changes what a match depends on, or what the narrowing could express.
NOT_NARROWED = [
    r"(\w+)",  # capturing group
    r"(?P<w>\w+)",
    r"(?:(a)\1)",  # backreference
    r"(?<=a)b",  # lookbehind
    r"(?<!a)b",
    r"^a",  # anchors
    r"a$",
    r"\ba",
    r"\Aa",
    r"a*",  # can match the empty string
    r"a|",
    r"(?=a)",
    r"(?i)a",  # global flag
    r"(?x:a b)",  # a scoped flag that changes the syntax
    r"(?:a){e<=1}",  # fuzzy matching
    r"[[:alpha:]]+",  # POSIX class / nested set
    r"\X",  # grapheme cluster (more than one character)
    r"(?|a|b)",  # branch reset
    r"(?(1)a|b)",  # conditional
    r"a{1, 3}",  # a brace that is not a quantifier
    r"(?#c)a",  # comment group
]


@pytest.mark.parametrize("pattern", NOT_NARROWED)
def test_patterns_outside_the_rule_are_not_narrowed(pattern: str) -> None:
    assert narrow(pattern) is None


def test_flags_other_than_the_defaults_are_not_narrowed() -> None:
    assert narrow(regex.compile(PATTERNS["gpt2"], regex.IGNORECASE)) is None
    assert narrow(regex.compile(PATTERNS["gpt2"], regex.VERSION1)) is None
    assert narrow(regex.compile(PATTERNS["gpt2"])) is not None


def test_a_pattern_outside_the_rule_splits_with_regex_alone() -> None:
    compiled = regex.compile(r"\b\w+|\W")
    fs = FastSplit(compiled)
    assert not fs.ascii
    assert not fs.mixed
    assert fs.findall == compiled.findall


def test_shipped_patterns_take_the_fast_path_everywhere() -> None:
    for name in NAMES:
        compiled, fs = _split(name)
        assert fs.ascii
        assert fs.mixed
        assert splitter(compiled).mixed
        assert cut_points(compiled.pattern) is not None
        # the same source given literally is the same pattern
        assert splitter(regex.compile(PATTERNS[name])).mixed


def test_a_custom_pattern_takes_the_fast_path_on_ascii_text_only() -> None:
    compiled = regex.compile(r"\p{L}+|\p{N}+|[^\s\p{L}\p{N}]+|\s+")
    fs = FastSplit(compiled)
    assert fs.ascii
    assert not fs.mixed
    for t in ["a b 12 !!", "caf\u00e9 12\u0663", ""]:
        assert fs.findall(t) == compiled.findall(t)


# -- the narrowing rule on patterns of its own ----------------------------------------------

#: Atoms whose ASCII members differ in interesting ways between ``re`` and ``regex``.
ATOMS = [
    r"\p{L}",
    r"\p{N}",
    r"\p{Lu}",
    r"\p{Ll}",
    r"\p{M}",
    r"\P{L}",
    r"\s",
    r"\S",
    r"\d",
    r"\w",
    r"\W",
    r".",
    r"[^\s\p{L}\p{N}]",
    r"[\r\n]",
    r"[a-f]",
    r"[^\r\n\p{L}\p{N}]",
    r"'",
    r"s",
    r"k",
    "\u017f",
    "\u212a",
    r"\x1c",
    r"\t",
    r" ",
    r"\/",
]
QUANTIFIERS = ["", "+", "*", "?", "{1,3}", "{2}", "++", "*+", "?+", "+?", "{1,2}+", "{,2}"]


NULLABLE_QUANTIFIERS = {"*", "?", "*+", "?+", "{,2}"}


@st.composite
def patterns(draw: st.DrawFn, depth: int = 0) -> tuple[str, bool]:
    """A random pattern of the narrowable constructs, and whether it can match the empty
    string (then it is not narrowed), worked out as it is built."""
    branches = []
    for _ in range(draw(st.integers(1, 3))):
        items = []
        for _ in range(draw(st.integers(1, 3))):
            q = draw(st.sampled_from(QUANTIFIERS))
            if depth < 2 and draw(st.integers(0, 4)) == 0:
                opener = draw(st.sampled_from(["(?:", "(?>", "(?i:", "(?-i:", "(?s:"]))
                inner, nullable = draw(patterns(depth + 1))
                items.append((f"{opener}{inner}){q}", nullable or q in NULLABLE_QUANTIFIERS))
            elif depth < 2 and draw(st.integers(0, 6)) == 0:
                look = draw(st.sampled_from(["(?=", "(?!"]))
                items.append((f"{look}{draw(patterns(depth + 1))[0]})", True))
            else:
                items.append((draw(st.sampled_from(ATOMS)) + q, q in NULLABLE_QUANTIFIERS))
        branches.append(("".join(t for t, _ in items), all(n for _, n in items)))
    return "|".join(t for t, _ in branches), any(n for _, n in branches)


@settings(max_examples=examples(ci=600, local=60), deadline=None)
@given(
    drawn=patterns(),
    text=ASCII_TEXT,
)
@example(drawn=(r"(?i:\u017f|\u212a)+", False), text="sSkK")
@example(drawn=(r"\s+(?!\S)|\s+", False), text="a\x1c  b \x1c")
def test_the_narrowing_rule_is_exact_on_ascii(drawn: tuple[str, bool], text: str) -> None:
    pattern, nullable = drawn
    compiled = regex.compile(pattern)
    narrowed = narrow(compiled)
    if nullable:
        assert narrowed is None
        return
    assert narrowed is not None
    assert narrowed.findall(text) == compiled.findall(text)
    assert FastSplit(compiled).findall(text) == compiled.findall(text)


# -- where the split is used ------------------------------------------------------------------


def test_encoding_and_counting_use_the_fast_split() -> None:
    compiled = compile_pattern("gpt4")
    findall = fast_findall(compiled)
    assert findall.__self__.mixed  # type: ignore[attr-defined]
    enc = Encoder([bytes([b]) for b in range(256)], compiled, {})
    assert enc._findall == findall
    assert bpeds.tokenizer.pieces._findall(compiled.pattern) == findall


@pytest.mark.parametrize("name", NAMES)
def test_counting_agrees_with_regex(name: str) -> None:
    text = TAYLOR.read_text(encoding="utf-8")
    units = [text, "x\u00e9 y", text[:3000] + "\u2019s"]
    compiled = compile_pattern(name)
    want: dict[str, int] = {}
    ordered: list[str] = []
    for u in units:
        for p in compiled.findall(u):
            want[p] = want.get(p, 0) + 1
            ordered.append(p)
    got = count_pieces(units, compiled.pattern)
    assert got == want
    assert list(got) == list(want)
    assert count_pieces(units, compiled.pattern, sequence=True) == ordered


@pytest.mark.parametrize("name", NAMES)
@pytest.mark.parametrize("block_size", [64, 1 << 20])
def test_streamed_file_counts_as_regex_on_the_whole(
    tmp_path: Path, name: str, block_size: int
) -> None:
    """The streaming reader's pieces, counted with the fast split, in both processes."""
    from bpeds.tokenizer.io import iter_segments

    text = TAYLOR.read_text(encoding="utf-8")[:20_000] + "".join(TRICKY) + " caf\u00e9\n" * 50
    path = tmp_path / "mixed.txt"
    path.write_text(text, encoding="utf-8")
    compiled = compile_pattern(name)
    want: dict[str, int] = {}
    for p in compiled.findall(text):
        want[p] = want.get(p, 0) + 1
    for workers in (1, 2):
        segments = iter_segments(path, pattern=compiled.pattern, block_size=block_size)
        got = count_pieces(segments, compiled.pattern, workers=workers, batch_chars=4096)
        assert got == want
        assert list(got) == list(want)
