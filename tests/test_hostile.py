"""Model files that attack the machine: patterns, nesting, huge numbers, lone surrogates.

Every loader treats a model file as untrusted input: whatever is in it, loading
ends in the documented error (``ModelFormatError`` for bpeds JSON,
``FormatError`` for other formats) quickly and without a large allocation,
and the command line prints one line and exits with status 1.
"""

from __future__ import annotations

import io
import json
import os
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import regex
from hypothesis import given, settings
from hypothesis import strategies as st

import bpeds.tokenizer.pattern_safety as safety
from bpeds.cli import EXIT_DATA, main
from bpeds.errors import ModelFormatError
from bpeds.tokenizer import Tokenizer, TokenizerError, limits
from bpeds.tokenizer.formats import (
    FormatError,
    from_hf_json,
    hf_tokenizer_json,
    load_hf,
    load_hf_vocab_merges,
    load_minbpe,
    load_model,
    parse_minbpe_model,
)
from bpeds.tokenizer.pattern_safety import (
    MAX_GROUP_DEPTH,
    MAX_PATTERN_LENGTH,
    MAX_PATTERN_SIZE,
    PatternTimeoutError,
    check_pattern,
    pattern_size,
)
from bpeds.tokenizer.persist import dumps, loads
from bpeds.tokenizer.pretokenize import PATTERNS
from tests.budget import examples

# -- helpers ---------------------------------------------------------------------------------

EVIL_PATTERNS = [
    "a{100000000}",
    "(?:(?:a{1000}){1000}){1000}",
    r"\p{L}{1,200000}",
    "(?:ab){50001}",
    "(?x) (?:a{1000}) {1000}",  # verbose mode: the space does not separate the repeat
    "[{](?:b{400}){400}",  # a set holding "{" does not hide the repeats after it
    "(?:" * (MAX_GROUP_DEPTH + 1) + "a" + ")" * (MAX_GROUP_DEPTH + 1),
    "(" * 400 + "a" + ")" * 400,  # deep enough to exhaust regex's recursion when compiling
    "a{99999999999999999999}",
    "x" * (MAX_PATTERN_LENGTH + 1),
]


def bpeds_json(pattern: object = None, specials: object = None, options: object = None) -> str:
    return json.dumps(
        {
            "format": "bpeds",
            "version": 1,
            "pattern": pattern,
            "special_tokens": specials or {},
            "options": options or {},
            "merges": [[97, 98]],
        }
    )


def hf_json(pattern: str | None = None, added: list[dict[str, object]] | None = None) -> str:
    d = hf_tokenizer_json(Tokenizer([(97, 98)], pattern="gpt2"))
    if pattern is not None:
        d["pre_tokenizer"]["pretokenizers"][0]["pattern"] = {"Regex": pattern}
    if added is not None:
        d["added_tokens"] = added
    return json.dumps(d)


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    _, err = capsys.readouterr()
    return code, err


def one_line_error(err: str) -> bool:
    return err.count("\n") == 1 and "Traceback" not in err and "error:" in err


# -- patterns that would exhaust memory when compiled -----------------------------------------


@pytest.mark.parametrize("pattern", EVIL_PATTERNS, ids=lambda p: p[:30])
def test_a_pattern_beyond_the_limits_is_refused_before_compiling(pattern: str) -> None:
    started = time.perf_counter()
    with pytest.raises(safety.PatternLimitError, match="split pattern refused"):
        check_pattern(pattern)
    with pytest.raises(TokenizerError, match="split pattern refused"):
        Tokenizer(pattern=pattern)
    with pytest.raises(ModelFormatError, match="<string>"):
        loads(bpeds_json(pattern))
    assert time.perf_counter() - started < 5  # nothing was compiled


@pytest.mark.parametrize("pattern", EVIL_PATTERNS[:4], ids=lambda p: p[:30])
def test_every_loader_refuses_a_pattern_beyond_the_limits(tmp_path: Path, pattern: str) -> None:
    model = tmp_path / "evil.model"
    model.write_text(f"minbpe v1\n{pattern}\n0\n97 98\n", encoding="utf-8")
    with pytest.raises(FormatError, match="split pattern refused"):
        load_minbpe(model)
    with pytest.raises(FormatError, match="split pattern refused"):
        load_model(model)
    hf = tmp_path / "tokenizer.json"
    hf.write_text(hf_json(pattern), encoding="utf-8")
    with pytest.raises(FormatError, match="split pattern refused"):
        load_hf(hf)
    with pytest.raises(FormatError, match="split pattern refused"):
        load_model(hf)


def test_the_command_line_refuses_an_evil_model_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    evil = tmp_path / "evil.json"
    evil.write_text(bpeds_json("a{100000000}"), encoding="utf-8")
    for argv in (["info", str(evil)], ["encode", str(evil), "x"], ["decode", str(evil), "97"]):
        code, err = run_cli(capsys, *argv)
        assert code == EXIT_DATA
        assert one_line_error(err)
        assert "split pattern refused" in err


def test_a_huge_pattern_field_is_refused_before_compiling() -> None:
    text = bpeds_json("(?:" + "ab|" * 2_000_000 + "c)")  # 6 MB of pattern
    started = time.perf_counter()
    with pytest.raises(ModelFormatError, match="characters long"):
        loads(text)
    assert time.perf_counter() - started < 5


def test_the_builtin_and_common_patterns_are_well_inside_the_limits() -> None:
    llama3 = (
        r"(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,3}"
        r"| ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+"
    )
    for source in [*PATTERNS.values(), llama3, r"\S+|\s+", r"[[:alpha:]]{1,16}|\N{DIGIT ONE}{3}"]:
        check_pattern(source)
        assert pattern_size(source) < 200


# A small regex grammar with its exact expansion: ("atom", source), ("seq", [...]),
# ("alt", [...]) and ("rep", node, count) for ``(?:node){count}``.
Node = tuple[Any, ...]
ATOMS = ["a", r"\w", "[a-z]", r"\p{L}", r"\{", "[{]", "[]{]", r"\N{LATIN SMALL LETTER A}", " "]


def _render(node: Node) -> str:
    kind = node[0]
    if kind == "atom":
        return str(node[1])
    if kind == "seq":
        return "".join(_render(n) for n in node[1])
    if kind == "alt":
        return "(?:" + "|".join(_render(n) for n in node[1]) + ")"
    return f"(?:{_render(node[1])}){{{node[2]}}}"


def _expanded(node: Node) -> int:
    """How many atoms the pattern holds once every counted repeat is written out."""
    kind = node[0]
    if kind == "atom":
        return 1
    if kind in ("seq", "alt"):
        return sum(_expanded(n) for n in node[1])
    return int(node[2]) * _expanded(node[1])


def _extend(children: st.SearchStrategy[Node]) -> st.SearchStrategy[Node]:
    many = st.lists(children, min_size=1, max_size=3)
    return st.one_of(
        many.map(lambda xs: ("seq", xs)),
        many.map(lambda xs: ("alt", xs)),
        st.tuples(st.just("rep"), children, st.integers(0, 60)),
    )


TREES = st.recursive(
    st.sampled_from(ATOMS).map(lambda a: ("atom", a)),
    lambda children: _extend(children),
    max_leaves=12,
)


@settings(max_examples=examples(ci=150, local=50), deadline=None)
@given(TREES)
def test_the_size_bounds_the_expansion_and_accepted_patterns_compile(tree: Node) -> None:
    """``pattern_size`` is at least the exact expansion (so the limit bounds what
    compiling builds), and what ``check_pattern`` accepts compiles."""
    source = _render(tree)
    exact = _expanded(tree)
    try:
        size = pattern_size(source)
    except safety.PatternLimitError:
        return  # refused: nothing to bound
    assert size >= exact
    check_pattern(source)
    regex.compile(source)


def test_sizes_multiply_through_nesting() -> None:
    assert pattern_size("a{5}") == 5
    assert pattern_size("(?:a{5}){4}") < pattern_size("(?:a{5}){40}")
    assert pattern_size("(?:(?:a{10}){10}){10}") >= 1000
    assert pattern_size(r"\p{L}{3}") == 3  # the braces of \p{...} are not a repeat
    assert pattern_size(r"\{1000000}") < 20  # an escaped brace is a literal
    assert pattern_size("(?#{1000000000})a") == 1  # a comment
    check_pattern("a" * MAX_PATTERN_LENGTH)  # exactly at the limit
    with pytest.raises(safety.PatternLimitError):
        check_pattern(f"a{{{MAX_PATTERN_SIZE + 1}}}")


# -- catastrophic backtracking ----------------------------------------------------------------


@pytest.fixture
def short_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safety, "MATCH_SECONDS", 0.05)
    monkeypatch.setattr(safety, "MATCH_SECONDS_PER_CHAR", 1e-6)


EXPONENTIAL = r"(?:a|aa)+$|\S"


@pytest.mark.usefixtures("short_time_limit")
def test_a_catastrophic_pattern_is_cut_off_and_the_tokenizer_still_works() -> None:
    tok = Tokenizer([(97, 97)], pattern=EXPONENTIAL)
    started = time.perf_counter()
    with pytest.raises(PatternTimeoutError, match="backtracks"):
        tok.encode("a" * 40 + "!")
    with pytest.raises(PatternTimeoutError):
        tok.encode_ordinary("a" * 40 + "!")
    assert time.perf_counter() - started < 10  # was minutes
    assert tok.encode("!aa") == [33, 256]
    assert isinstance(PatternTimeoutError("x"), ValueError)


@pytest.mark.usefixtures("short_time_limit")
def test_a_catastrophic_pattern_from_a_file_is_cut_off_in_the_command_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "slow.json"
    path.write_text(bpeds_json(EXPONENTIAL), encoding="utf-8")
    code, err = run_cli(capsys, "encode", str(path), "a" * 40 + "!")
    assert code == EXIT_DATA
    assert one_line_error(err)
    assert "backtracks" in err


def test_bpeds_patterns_have_no_time_limit(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(safety, "MATCH_SECONDS", 0.0)
    monkeypatch.setattr(safety, "MATCH_SECONDS_PER_CHAR", 0.0)
    text = "Hello world, it's 2024!\n" * 200
    for name in PATTERNS:
        assert Tokenizer(pattern=name).decode(Tokenizer(pattern=name).encode(text)) == text
    with pytest.raises(PatternTimeoutError):  # a custom pattern is timed: no time at all
        Tokenizer(pattern=r"\S+|\s+").encode(text)


def test_a_timed_pattern_splits_exactly_like_the_pattern() -> None:
    source = r"\w+|\W"
    timed = safety.TimedPattern(regex.compile(source))
    text = "naïve café, 12 rue d'Ulm\n"
    assert timed.findall(text) == regex.findall(source, text)
    assert Tokenizer(pattern=source).encode(text) == [
        b for piece in regex.findall(source, text) for b in piece.encode()
    ]


# -- deep nesting and huge integers -----------------------------------------------------------

DEEP = "[" * 100_000 + "]" * 100_000
DEEP_OBJECT = '{"a":' * 100_000 + "1" + "}" * 100_000
HUGE_INT = "9" * 5000


@pytest.mark.parametrize(
    "text",
    [
        DEEP,
        DEEP_OBJECT,
        bpeds_json(options={"x": "PLACEHOLDER"}).replace('"PLACEHOLDER"', DEEP),
        bpeds_json().replace('"merges": [[97, 98]]', f'"merges": [[97, {HUGE_INT}]]'),
        '{"format": "bpeds", "version": ' + HUGE_INT + "}",
    ],
    ids=["deep-list", "deep-object", "deep-options", "huge-merge-id", "huge-version"],
)
def test_deep_nesting_and_huge_integers_are_format_errors_in_every_loader(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    path = tmp_path / "m.json"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ModelFormatError):
        loads(text)
    with pytest.raises(ModelFormatError):
        Tokenizer.load(path)
    with pytest.raises((ModelFormatError, FormatError)):
        load_model(path)
    with pytest.raises(FormatError):
        load_hf(path)
    with pytest.raises(FormatError):
        from_hf_json(text)
    merges = tmp_path / "merges.txt"
    merges.write_text("", encoding="utf-8")
    with pytest.raises(FormatError):
        load_hf_vocab_merges(path, merges)
    for argv in (
        ["info", str(path)],
        ["encode", str(path), "x"],
        ["import", "--format", "hf", str(path), "-o", str(tmp_path / "out.json")],
    ):
        code, err = run_cli(capsys, *argv)
        assert code == EXIT_DATA, argv
        assert one_line_error(err), err
    assert not (tmp_path / "out.json").exists()


def test_deep_or_huge_ids_on_stdin_are_one_line_errors(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "m.json"
    Tokenizer([(97, 98)], pattern=None).save(model)
    for ids in (DEEP, f"[{HUGE_INT}]", HUGE_INT):
        stdin = io.TextIOWrapper(io.BytesIO(ids.encode()), encoding="utf-8")
        monkeypatch.setattr(sys, "stdin", stdin)
        code, err = run_cli(capsys, "decode", str(model))
        assert code == EXIT_DATA, err
        assert one_line_error(err), err


def test_error_messages_quote_values_briefly() -> None:
    doc = json.loads(bpeds_json())
    doc["merges"] = ["m" * 1_000_000]
    with pytest.raises(ModelFormatError) as info:
        loads(json.dumps(doc))
    assert len(str(info.value)) < 300
    nested: list[object] = []
    for _ in range(50_000):
        nested = [nested]
    d = json.loads(hf_json())
    d["added_tokens"] = [nested]
    with pytest.raises(FormatError) as hf_info:
        from_hf_json(d)  # a parsed dict: nothing limited its nesting
    assert len(str(hf_info.value)) < 300


# -- lone surrogates --------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        bpeds_json(pattern="\ud800"),
        bpeds_json(specials={"<\udc00>": 257}),
        bpeds_json(options={"note": "x\ud800"}),
        bpeds_json(options={"\ud800": 1}),
        bpeds_json(options={"deep": [[{"k": ["\udfff"]}]]}),
    ],
    ids=["pattern", "special", "option-value", "option-key", "option-deep"],
)
def test_a_lone_surrogate_in_a_bpeds_file_is_refused(text: str) -> None:
    assert "\\ud" in text  # json.dumps escapes it: the file itself is valid UTF-8
    with pytest.raises(ModelFormatError, match="lone surrogate"):
        loads(text)


def test_a_lone_surrogate_in_other_formats_is_refused(tmp_path: Path) -> None:
    added = [{"id": 257, "content": "<\ud800>", "special": True}]
    with pytest.raises(FormatError, match="lone surrogate"):
        from_hf_json(hf_json(added=added))
    with pytest.raises(FormatError, match="lone surrogate"):
        from_hf_json(hf_json(pattern="a|\udc00"))


def test_a_tokenizer_holding_a_lone_surrogate_is_refused_on_save(tmp_path: Path) -> None:
    with pytest.raises(TokenizerError, match="lone surrogate"):
        Tokenizer([(97, 98)], pattern=None, special_tokens={"<\ud800>": 257})
    tok = Tokenizer([(97, 98)], pattern=None, options={"note": "\ud800"})
    path = tmp_path / "t.json"
    with pytest.raises(ModelFormatError, match="lone surrogate"):
        tok.save(path)
    with pytest.raises(ModelFormatError, match="lone surrogate"):
        dumps(tok)
    assert list(tmp_path.iterdir()) == []
    with pytest.raises(TokenizerError, match="lone surrogate"):
        Tokenizer(pattern="a|\ud800")


def test_text_that_loads_saves_again(tmp_path: Path) -> None:
    """What a loader accepts round-trips: astral characters and escapes are fine."""
    text = bpeds_json(pattern="😀|\\ud800", specials={"<😀>": 257}, options={"é": "😀"})
    tok = loads(text)
    tok.save(tmp_path / "t.json")
    assert Tokenizer.load(tmp_path / "t.json") == tok


# -- reading files: size and devices ----------------------------------------------------------


def test_a_model_file_larger_than_the_limit_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "m.json"
    Tokenizer([(97, 98)], pattern=None).save(path)
    monkeypatch.setattr(limits, "MAX_MODEL_BYTES", 64)
    with pytest.raises(ModelFormatError, match="larger than 64 bytes"):
        Tokenizer.load(path)
    with pytest.raises(FormatError, match="larger than 64 bytes"):
        load_model(path)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_devices_are_not_read_as_models_or_text(capsys: pytest.CaptureFixture[str]) -> None:
    loaders: list[Callable[[str], object]] = [Tokenizer.load, load_model, load_hf, load_minbpe]
    for load in loaders:
        with pytest.raises((ModelFormatError, FormatError), match="not a regular file"):
            load("/dev/zero")
    code, err = run_cli(capsys, "info", "/dev/zero")
    assert code == EXIT_DATA
    assert one_line_error(err)


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
def test_endless_text_input_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    model = tmp_path / "m.json"
    Tokenizer([(97, 98)], pattern=None).save(model)
    code, err = run_cli(capsys, "encode", str(model), "-i", "/dev/zero")
    assert code == EXIT_DATA
    assert "never ends" in err
    assert one_line_error(err)
    with open("/dev/zero", "rb") as zero:
        monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(zero, encoding="utf-8"))
        for command in ("encode", "decode"):
            code, err = run_cli(capsys, command, str(model))
            assert code == EXIT_DATA
            assert "never ends" in err
            assert one_line_error(err)
        monkeypatch.undo()
    code = main(["encode", str(model), "-i", os.devnull])
    out, err = capsys.readouterr()
    assert (code, out) == (0, "\n")  # /dev/null is empty, not endless


def test_truncated_bpeds_json_is_a_model_format_error(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    Tokenizer([(97, 98), (256, 99)], pattern="gpt2").save(path)
    data = path.read_bytes()
    for cut in (len(data) // 3, len(data) - 3):
        path.write_bytes(data[:cut])
        with pytest.raises(ModelFormatError, match="truncated"):
            load_model(path)


def test_minbpe_text_with_many_digits_is_a_format_error() -> None:
    with pytest.raises(FormatError, match="implausibly large"):
        parse_minbpe_model(f"minbpe v1\n\n0\n97 {HUGE_INT}\n")


# -- text a pattern does not cover ------------------------------------------------------------


@pytest.mark.parametrize("pattern", ["", r"\w+", r"[a-z]+|\s"])
@pytest.mark.parametrize("sequence", [False, True])
def test_training_refuses_text_the_pattern_leaves_out(pattern: str, sequence: bool) -> None:
    from bpeds.tokenizer.training import train

    representation = "sequence" if sequence else "type"
    with pytest.raises(safety.UncoveredTextError, match="does not match"):
        train("a b, c!", 260, pattern=pattern, representation=representation)


def test_the_command_line_refuses_an_empty_pattern(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = tmp_path / "t.txt"
    text.write_text("hello world\n", encoding="utf-8")
    out = tmp_path / "m.json"
    code = main(["train", str(text), "--vocab-size", "260", "--pattern", "", "-o", str(out)])
    err = capsys.readouterr().err
    assert code != 0
    assert "does not match" in err
    assert not out.exists()


def test_encoding_warns_when_text_is_dropped() -> None:
    tok = Tokenizer([], pattern=r"\w+")
    with pytest.warns(safety.UncoveredTextWarning, match="' ' at index 1"):
        ids = tok.encode("a b, c!")
    assert tok.decode(ids) == "abc"  # tiktoken's semantics: only the matches are encoded


def test_covering_patterns_round_trip_without_warnings() -> None:
    text = "a b, c!\n\tnaïve 😀 42"
    for pattern in [r"\w+|\s+|.", r"[\s\S]", *PATTERNS, None]:
        tok = Tokenizer([(97, 32)], pattern=pattern)
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # no UncoveredTextWarning
            assert tok.decode(tok.encode(text)) == text


def test_training_accepts_a_custom_pattern_that_covers_the_text() -> None:
    from bpeds.tokenizer.training import train

    tok = train("ab ab, abc!", 257, pattern=r"\w+|\s+|.")
    assert tok.merges == [(97, 98)]
