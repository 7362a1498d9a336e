"""The ``bpeds`` command, in-process through ``main(argv)`` and once as ``python -m bpeds``."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
import tiktoken
import tiktoken.load
import tokenizers

from bpeds.cli import EXIT_DATA, EXIT_OK, EXIT_USAGE, build_parser, main
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.formats import load_minbpe, save_hf
from bpeds.tokenizer.pretokenize import PATTERNS
from bpeds.tokenizer.training import train
from tests.hf_reference import hf_byte_level_trained

DATA = Path(__file__).parent / "data"
SWIFT = DATA / "taylorswift.txt"
TEXT = SWIFT.read_text(encoding="utf-8")
SAMPLE = "Taylor Swift's 1989 World Tour <|endoftext|> ended in 2015.\n"


def run(
    capsys: pytest.CaptureFixture[str], *argv: str, stdin: bytes | None = None
) -> tuple[int, str, str]:
    """Run ``bpeds argv`` in-process; return (exit status, stdout, stderr)."""
    if stdin is not None:
        saved = sys.stdin
        sys.stdin = io.TextIOWrapper(io.BytesIO(stdin), encoding="utf-8")
        try:
            code = main(list(argv))
        finally:
            sys.stdin = saved
    else:
        code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A model trained by the command (500 merges, two special tokens)."""
    path = tmp_path_factory.mktemp("model") / "swift.json"
    code = main(
        [
            "train",
            str(SWIFT),
            "--vocab-size",
            "758",
            "--special-token",
            "<|endoftext|>",
            "--special-token",
            "<|pad|>",
            "-o",
            str(path),
            "--quiet",
        ]
    )
    assert code == EXIT_OK
    return path


# -- train ----------------------------------------------------------------------------------


def test_train_writes_what_the_library_trains(model: Path) -> None:
    tok = Tokenizer.load(model)
    expected = train(SWIFT, 758, special_tokens=["<|endoftext|>", "<|pad|>"])
    assert tok == expected
    assert tok.special_tokens == {"<|endoftext|>": 756, "<|pad|>": 757}


def test_train_reports_and_refuses_to_overwrite(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "m.json"
    code, stdout, err = run(capsys, "train", str(SWIFT), "--vocab-size", "300", "-o", str(out))
    assert code == EXIT_OK
    assert stdout == ""
    assert "44 merges, vocab size 300" in err
    assert str(out) in err
    before = out.read_bytes()
    code, _, err = run(capsys, "train", str(SWIFT), "--vocab-size", "260", "-o", str(out))
    assert code == EXIT_DATA
    assert f"{out} already exists; pass --force to replace it" in err
    assert out.read_bytes() == before
    code, _, _ = run(
        capsys, "train", str(SWIFT), "--vocab-size", "260", "-o", str(out), "--force", "-q"
    )
    assert code == EXIT_OK
    assert Tokenizer.load(out).num_merges == 4


def test_train_from_stdin_equals_train_from_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "stdin.json"
    data = SWIFT.read_bytes()
    code, _, _ = run(capsys, "train", "-", "--vocab-size", "400", "-o", str(out), "-q", stdin=data)
    assert code == EXIT_OK
    assert Tokenizer.load(out).merges == train(SWIFT, 400).merges


@pytest.mark.parametrize(
    ("flags", "options"),
    [
        (["--preset", "minbpe-regex"], {"preset": "minbpe-regex"}),
        (["--pattern", "none", "--tie", "leftmost"], {"pattern": None, "tie": "leftmost"}),
        (["--score", "pmi", "--min-frequency", "3"], {"score": "pmi", "min_frequency": 3}),
        (
            ["--score", '{"name": "length_weighted", "alpha": 2}', "--max-token-length", "6"],
            {"score": {"name": "length_weighted", "alpha": 2}, "max_token_length": 6},
        ),
        (["--pattern", "gpt2", "--workers", "2"], {"pattern": "gpt2"}),
    ],
)
def test_train_options_reach_the_trainer(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, flags: list[str], options: dict[str, object]
) -> None:
    # Small input: each option's path runs the same at any size, and 4,000 characters (one
    # long pre-token under --pattern none) still give all 100 merges under every option.
    text = TEXT[:4_000]
    src = tmp_path / "in.txt"
    src.write_text(text, encoding="utf-8")
    out = tmp_path / "o.json"
    code, _, err = run(
        capsys, "train", str(src), "--vocab-size", "356", "-o", str(out), "-q", *flags
    )
    assert code == EXIT_OK, err
    written = Tokenizer.load(out)
    assert written == train(src, 356, **options)  # type: ignore[arg-type]
    assert written.num_merges == 100


@pytest.mark.parametrize("fmt", ["minbpe", "hf", "tiktoken"])
def test_train_can_write_other_formats(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, fmt: str
) -> None:
    out = tmp_path / "t"
    code, _, err = run(
        capsys, "train", str(SWIFT), "--vocab-size", "300", "-f", fmt, "-o", str(out)
    )
    assert code == EXIT_OK, err
    expected = train(SWIFT, 300)
    if fmt == "minbpe":
        assert load_minbpe(tmp_path / "t.model") == Tokenizer(expected.merges)
        assert (tmp_path / "t.vocab").exists()
    elif fmt == "hf":
        hf = tokenizers.Tokenizer.from_file(str(out))
        assert hf.encode(TEXT[:2000]).ids == expected.encode(TEXT[:2000])
    else:
        assert tiktoken.load.load_tiktoken_bpe(str(out)) == expected.mergeable_ranks()
        assert "pat_str=" in err


@pytest.mark.parametrize(
    ("argv", "code", "message"),
    [
        (
            ["--vocab-size", "257", "--special-token", "a", "--special-token", "b"],
            EXIT_USAGE,
            "--vocab-size 257 is too small: it counts the 256 byte tokens and 2 special "
            "tokens, so it must be at least 258",
        ),
        (["--vocab-size", "300", "--tie", "widest"], EXIT_USAGE, "invalid choice: 'widest'"),
        (["--vocab-size", "300", "--score", "surprise"], EXIT_USAGE, "unknown score 'surprise'"),
        (["--vocab-size", "300", "--score", "{nope"], EXIT_USAGE, "--score is not valid JSON"),
        (["--vocab-size", "300", "--pattern", "(a"], EXIT_USAGE, "does not compile"),
        (
            ["--vocab-size", "300", "--preset", "minbpe-basic", "--tie", "lexicographic"],
            EXIT_USAGE,
            "preset 'minbpe-basic' sets tie",
        ),
        (["--vocab-size", "300", "--min-frequency", "0"], EXIT_USAGE, "min_frequency"),
        (["--vocab-size", "x"], EXIT_USAGE, "invalid int value: 'x'"),
        (["--vocab-size", "300", "-q", "--progress"], EXIT_USAGE, "not allowed with"),
        (
            ["--vocab-size", "300", "--special-token", "ab", "--special-token", "bc"],
            EXIT_USAGE,
            "overlap",
        ),
    ],
)
def test_train_usage_errors(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, argv: list[str], code: int, message: str
) -> None:
    out = tmp_path / "never.json"
    got, _, err = run(capsys, "train", str(SWIFT), "-o", str(out), *argv)
    assert got == code
    assert message in err
    assert not out.exists()


def test_train_data_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    out = str(tmp_path / "o.json")
    code, _, err = run(
        capsys, "train", str(tmp_path / "nope.txt"), "--vocab-size", "300", "-o", out
    )
    assert (code, err.strip()) == (
        EXIT_DATA,
        f"bpeds train: error: no such input file: {tmp_path / 'nope.txt'}",
    )
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"hello \xff world")
    code, _, err = run(capsys, "train", str(bad), "--vocab-size", "300", "-o", out)
    assert code == EXIT_DATA
    assert "bad.txt" in err
    assert "offset 6" in err
    code, _, err = run(capsys, "train", "-", "--vocab-size", "300", "-o", out, stdin=b"ab\xffc")
    assert code == EXIT_DATA
    assert "standard input is not UTF-8" in err
    assert "--errors replace" in err
    code, _, err = run(
        capsys, "train", str(bad), "--vocab-size", "300", "-o", out, "--errors", "replace", "-q"
    )
    assert code == EXIT_OK
    assert err == (
        "bpeds train: warning: training stopped after 12 of 44 merges, with 268 of the 300 "
        "tokens asked for: no pair is left: every piece of the training data is now a single "
        "token\n"
    )
    code, _, err = run(capsys, "train", str(tmp_path), "--vocab-size", "300", "-o", out + "2")
    assert code == EXIT_DATA
    assert "is a directory" in err
    code, _, err = run(
        capsys, "train", str(SWIFT), "--vocab-size", "300", "-o", str(tmp_path / "no" / "o.json")
    )
    assert code == EXIT_DATA
    assert "does not exist" in err


# -- encode / decode -----------------------------------------------------------------------


def test_encode_decode_round_trip(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    tok = Tokenizer.load(model)
    code, out, _ = run(capsys, "encode", str(model), "--allow-special", "all", SAMPLE)
    assert code == EXIT_OK
    ids = [int(x) for x in out.split()]
    assert ids == tok.encode(SAMPLE, allowed_special="all")
    assert 756 in ids
    code, out, _ = run(capsys, "decode", str(model), *map(str, ids))
    assert (code, out) == (EXIT_OK, SAMPLE)
    # ids on stdin, as a JSON list or whitespace-separated; text on stdin.
    code, out, _ = run(capsys, "decode", str(model), stdin=json.dumps(ids).encode())
    assert out == SAMPLE
    code, out, _ = run(
        capsys, "encode", str(model), "--format", "json", "--ordinary", stdin=SAMPLE.encode()
    )
    assert json.loads(out) == tok.encode_ordinary(SAMPLE)
    code, out, _ = run(
        capsys, "decode", str(model), "-i", "-", stdin=" ".join(map(str, ids)).encode()
    )
    assert out == SAMPLE


def test_encode_from_a_file_and_as_tokens(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    src = tmp_path / "in.txt"
    src.write_text("Taylor Swift\n", encoding="utf-8")
    code, out, _ = run(capsys, "encode", str(model), "-i", str(src), "--format", "tokens")
    assert code == EXIT_OK
    tok = Tokenizer.load(model)
    ids = tok.encode("Taylor Swift\n")
    assert [line.split("\t")[0] for line in out.splitlines()] == [str(i) for i in ids]
    assert out.splitlines()[-1].endswith("[\\u000a]")


def test_encode_special_token_text_needs_permission(
    capsys: pytest.CaptureFixture[str], model: Path
) -> None:
    code, out, err = run(capsys, "encode", str(model), "a <|pad|> b")
    assert (code, out) == (EXIT_DATA, "")
    assert "holds the special token '<|pad|>'; pass --allow-special '<|pad|>'" in err
    code, out, _ = run(capsys, "encode", str(model), "a <|pad|> b", "--allow-special", "<|pad|>")
    assert code == EXIT_OK
    assert "757" in out.split()
    code, _, err = run(capsys, "encode", str(model), "x", "--allow-special", "<|nope|>")
    assert code == EXIT_USAGE
    assert "not a special token of this model" in err
    code, _, err = run(capsys, "encode", str(model), "x", "--allow-special", "all", "--ordinary")
    assert code == EXIT_USAGE


@pytest.mark.parametrize(
    ("argv", "stdin", "code", "message"),
    [
        (["decode", "{model}", "1", "99999"], None, EXIT_DATA, "unknown token id 99999"),
        (["decode", "{model}", "x"], None, EXIT_USAGE, "invalid int value: 'x'"),
        (["decode", "{model}"], b"1 two", EXIT_DATA, "item 2 ('two') is not a token id"),
        (["decode", "{model}"], b"[1, ", EXIT_DATA, "not a JSON list of ids"),
        (["encode", "{model}", "a", "b"], None, EXIT_USAGE, "unrecognized arguments: b"),
        (["encode", "{model}", "a", "-i", "f.txt"], None, EXIT_USAGE, "not both"),
        (["encode", "{model}"], b"\xff", EXIT_DATA, "not UTF-8"),
        (["encode", "{missing}", "a"], None, EXIT_DATA, "no such file"),
        (["encode", "{garbage}", "a"], None, EXIT_DATA, "is not a model bpeds can read"),
        (["info", "{corrupt}"], None, EXIT_DATA, "merge 3 is (5000, 1)"),
        (["info", "{broken_json}"], None, EXIT_DATA, "not valid JSON"),
        (["info", "{other_json}"], None, EXIT_DATA, "neither a bpeds model"),
        ([], None, EXIT_USAGE, "required"),
        (["frobnicate"], None, EXIT_USAGE, "invalid choice"),
    ],
)
def test_bad_input_and_usage(
    capsys: pytest.CaptureFixture[str],
    model: Path,
    tmp_path: Path,
    argv: list[str],
    stdin: bytes | None,
    code: int,
    message: str,
) -> None:
    (tmp_path / "garbage.bin").write_bytes(b"\x00\x01 not a model")
    data = json.loads(model.read_text())
    data["merges"][3] = [5000, 1]
    (tmp_path / "corrupt.json").write_text(json.dumps(data))
    (tmp_path / "broken.json").write_text(model.read_text()[:100])
    (tmp_path / "other.json").write_text('{"hello": 1}')
    paths = {
        "model": str(model),
        "missing": str(tmp_path / "missing.json"),
        "garbage": str(tmp_path / "garbage.bin"),
        "corrupt": str(tmp_path / "corrupt.json"),
        "broken_json": str(tmp_path / "broken.json"),
        "other_json": str(tmp_path / "other.json"),
    }
    got, _, err = run(capsys, *[a.format(**paths) for a in argv], stdin=stdin)
    assert got == code
    assert message in err


# -- info -----------------------------------------------------------------------------------


def test_info(capsys: pytest.CaptureFixture[str], model: Path) -> None:
    code, out, _ = run(capsys, "info", str(model), "--top", "3")
    assert code == EXIT_OK
    lines = out.splitlines()
    assert lines[0] == "vocab size:      758 (256 bytes + 500 merges + 2 special tokens)"
    assert lines[2] == "pattern:         gpt4"
    assert lines[3] == "special tokens:  <|endoftext|> = 756, <|pad|> = 757"
    assert lines[5] == "longest tokens:"
    assert len(lines) == 9
    code, out, _ = run(capsys, "info", str(model), "--json", "--top", "2")
    info = json.loads(out)
    tok = Tokenizer.load(model)
    longest = max(range(256, 756), key=lambda i: (len(tok.token_bytes(i)), -i))
    assert info["longest_tokens"][0]["id"] == longest
    assert info["pattern"] == "gpt4"
    assert info["options"] == tok.options


def test_info_reads_hf_and_minbpe_files(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    tok = Tokenizer([(97, 98), (256, 99)], pattern=PATTERNS["gpt2"], special_tokens={"<s>": 258})
    tj = save_hf(tok, tmp_path / "tokenizer.json")
    code, out, _ = run(capsys, "info", str(tj))
    assert code == EXIT_OK
    assert "pattern:         gpt2" in out
    assert "<s> = 258" in out
    code, _, _ = run(capsys, "export", str(tj), "-f", "minbpe", "-o", str(tmp_path / "m"))
    code, out, _ = run(capsys, "info", str(tmp_path / "m.model"))
    assert code == EXIT_OK
    assert "[abc]" in out


# -- export / import ----------------------------------------------------------------------


def test_export_each_format_loads_in_its_tool(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    tok = Tokenizer.load(model)
    text = TEXT[:5000] + "<|endoftext|>"
    code, _, err = run(capsys, "export", str(model), "-f", "hf", "-o", str(tmp_path / "t.json"))
    assert code == EXIT_OK
    assert "wrote" in err
    hf = tokenizers.Tokenizer.from_file(str(tmp_path / "t.json"))
    assert hf.encode(text).ids == tok.encode(text, allowed_special="all")
    code, _, err = run(capsys, "export", str(model), "-f", "tiktoken", "-o", str(tmp_path / "t.tt"))
    assert code == EXIT_OK
    ranks = tiktoken.load.load_tiktoken_bpe(str(tmp_path / "t.tt"))
    assert tok.pattern is not None
    enc = tiktoken.Encoding(
        "t", pat_str=tok.pattern, mergeable_ranks=ranks, special_tokens=tok.special_tokens
    )
    assert enc.encode(text, allowed_special="all") == tok.encode(text, allowed_special="all")
    code, _, _ = run(capsys, "export", str(model), "-f", "minbpe", "-o", str(tmp_path / "t.model"))
    assert load_minbpe(tmp_path / "t.model").merges == tok.merges
    # Refusals: an existing output, a format that cannot hold the tokenizer.
    code, _, err = run(capsys, "export", str(model), "-f", "minbpe", "-o", str(tmp_path / "t"))
    assert code == EXIT_DATA
    assert "t.model already exists; pass --force" in err
    spaced = tmp_path / "spaced.json"
    Tokenizer(special_tokens={"end of text": 256}).save(spaced)
    code, _, err = run(capsys, "export", str(spaced), "-f", "minbpe", "-o", str(tmp_path / "s"))
    assert code == EXIT_DATA
    assert "contains whitespace" in err
    assert not (tmp_path / "s.model").exists()


def test_export_warns_about_rank_conflicts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    odd = tmp_path / "odd.json"
    Tokenizer([(97, 97), (97, 256)], pattern=None).save(odd)
    code, _, err = run(capsys, "export", str(odd), "-f", "hf", "-o", str(tmp_path / "odd.hf.json"))
    assert code == EXIT_OK
    assert "warning: 1 token(s) (ids 257) can encode differently in Hugging Face" in err


def test_import_each_format(
    capsys: pytest.CaptureFixture[str], model: Path, tmp_path: Path
) -> None:
    tok = Tokenizer.load(model)
    tt, a_json = str(tmp_path / "t.tiktoken"), str(tmp_path / "a.json")
    main(["export", str(model), "-f", "tiktoken", "-o", tt])
    code, _, err = run(capsys, "import", tt, "-f", "tiktoken", "-o", a_json)
    assert code == EXIT_USAGE
    assert "pass --pattern" in err
    with_gpt4 = ["import", tt, "-f", "tiktoken", "--pattern", "gpt4"]
    specials = ["--special-token", "<|endoftext|>=756", "--special-token", "<|pad|>=757"]
    code, _, err = run(capsys, *with_gpt4, *specials, "-o", a_json)
    assert code == EXIT_OK, err
    back = Tokenizer.load(tmp_path / "a.json")
    assert (back.merges, back.pattern, back.special_tokens) == (
        tok.merges,
        tok.pattern,
        tok.special_tokens,
    )
    code, _, err = run(capsys, *with_gpt4, "--special-token", "nope", "-o", str(tmp_path / "b"))
    assert code == EXIT_USAGE
    assert "expected TEXT=ID" in err
    mm = str(tmp_path / "m.model")
    main(["export", str(model), "-f", "minbpe", "-o", str(tmp_path / "m")])
    code, _, _ = run(capsys, "import", mm, "-f", "minbpe", "-o", str(tmp_path / "m.json"))
    assert Tokenizer.load(tmp_path / "m.json").merges == tok.merges
    m2 = str(tmp_path / "m2.json")
    code, _, err = run(capsys, "import", mm, "-f", "minbpe", "--pattern", "gpt2", "-o", m2)
    assert code == EXIT_USAGE
    assert "drop --pattern" in err


def test_import_a_tokenizer_trained_by_hugging_face(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    hf = hf_byte_level_trained([TEXT], 600, ["<|endoftext|>"])
    tj, vocab, merges = (str(tmp_path / n) for n in ("tokenizer.json", "vocab.json", "merges.txt"))
    hf.save(tj)
    hf.model.save(str(tmp_path))
    code, printed, err = run(capsys, "encode", tj, TEXT[:500])
    assert code == EXIT_OK, err
    assert [int(i) for i in printed.replace(",", " ").strip("[] \n").split()] == hf.encode(
        TEXT[:500]
    ).ids  # Hugging Face's own ids, kept
    code, _, err = run(capsys, "import", tj, "-f", "hf", "-o", str(tmp_path / "a.json"))
    assert code == EXIT_OK, err
    kept = Tokenizer.load(tmp_path / "a.json")
    assert kept.encode(TEXT[:3000]) == hf.encode(TEXT[:3000]).ids
    for argv in (
        ["import", tj, "-f", "hf", "--renumber"],
        ["import", vocab, merges, "-f", "hf-vocab", "--renumber"],
    ):
        out = tmp_path / "imported.json"
        code, _, err = run(capsys, *argv, "-o", str(out), "--force")
        assert code == EXIT_OK, err
        tok = Tokenizer.load(out)
        text = TEXT[:3000]
        ours = [tok.id_to_token(i) for i in tok.encode(text)]
        u2b = {c: b for b, c in _b2u().items()}
        theirs = [bytes(u2b[c] for c in t) for t in hf.encode(text).tokens]
        assert ours == theirs
        assert tok.special_tokens == {"<|endoftext|>": tok.vocab_size - 1}
    code, _, err = run(capsys, "import", vocab, "-f", "hf-vocab", "-o", str(tmp_path / "x.json"))
    assert code == EXIT_USAGE
    assert "takes two files" in err


def _b2u() -> dict[int, str]:
    from bpeds.scoring.ties import gpt2_byte_to_unicode

    return gpt2_byte_to_unicode()


# -- help -----------------------------------------------------------------------------------


def test_help_documents_every_option_and_the_exit_codes(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(capsys, "--help")
    assert code == EXIT_OK
    assert "exit status:" in out
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    for name, p in sub.choices.items():
        for action in p._actions:
            assert action.help, f"{name} {action.option_strings or action.dest} has no help"
        code, out, _ = run(capsys, name, "--help")
        assert code == EXIT_OK
        assert "2    usage" in out
    code, out, _ = run(capsys, "--version")
    assert code == EXIT_OK
    assert out.startswith("bpeds ")


# -- as a program ---------------------------------------------------------------------------


def test_python_dash_m_bpeds(tmp_path: Path) -> None:
    out = tmp_path / "m.json"

    def bpeds(*argv: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
        return subprocess.run(
            [sys.executable, "-m", "bpeds", *argv], input=stdin, capture_output=True, timeout=120
        )

    r = bpeds(
        "train",
        str(SWIFT),
        "--vocab-size",
        "401",
        "--special-token",
        "<|endoftext|>",
        "-o",
        str(out),
    )
    assert r.returncode == 0, r.stderr
    assert b"144 merges" in r.stderr
    r = bpeds("encode", str(out), stdin=SAMPLE.encode())
    assert r.returncode == EXIT_DATA
    assert b"--allow-special" in r.stderr
    r = bpeds("encode", str(out), "--allow-special", "all", stdin="naïve ☃ 1989\n".encode())
    assert r.returncode == 0
    r = bpeds("decode", str(out), stdin=r.stdout)
    assert (r.returncode, r.stdout) == (0, "naïve ☃ 1989\n".encode())
    r = bpeds("train", str(SWIFT), "--vocab-size", "10", "-o", str(tmp_path / "x.json"))
    assert r.returncode == EXIT_USAGE
    assert b"at least 256" in r.stderr
    r = bpeds("info", str(tmp_path / "nothing.json"))
    assert r.returncode == EXIT_DATA
    assert b"no such file" in r.stderr
