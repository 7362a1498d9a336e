"""Files whose cost is hidden: patterns that compile into gigabytes however they are written,
token lengths that double with each merge, event logs that loop, counts files that inflate.

Each attack is a small file. A test that would exhaust memory on a broken build runs in a
child process whose address space is capped (:func:`run_capped`), so that it fails instead
of taking the machine with it.
"""

from __future__ import annotations

import base64
import json
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from bpeds.tokenizer.counts import Counts

ROOT = Path(__file__).resolve().parent.parent

# Each compiles into gigabytes in the regex module, and each reads as small to a checker
# that parses the pattern its own way.
BYPASSES = [
    "(?x:a)#a{10000000}",  # a scoped verbose flag, with "#" outside its scope
    "[(?x]#a{10000000}",  # "(?x" inside a set
    r"\(?x#a{10000000}",  # "(?x" after an escaped parenthesis
    r"a\g{10000000}",  # \g{...} is not a braced escape here
    "(?x)a{1 0 0 0 0 0 0 0}",  # spaces inside braces in verbose mode
]


def run_capped(code: str, memory: int = 1 << 30, timeout: float = 120) -> str:
    """Run ``code`` in a child Python whose address space may grow by ``memory`` bytes;
    its stdout and stderr. The child fails (MemoryError) rather than exhaust the machine."""
    prelude = textwrap.dedent(
        f"""
        import resource
        with open("/proc/self/statm") as f:
            size = int(f.read().split()[0]) * resource.getpagesize()
        resource.setrlimit(resource.RLIMIT_AS, (size + {memory}, resource.RLIM_INFINITY))
        """
    )
    done = subprocess.run(
        [sys.executable, "-c", prelude + textwrap.dedent(code)],
        capture_output=True,
        text=True,
        timeout=timeout,
        cwd=ROOT,
        check=False,
    )
    return done.stdout + done.stderr


needs_rlimit = pytest.mark.skipif(
    not sys.platform.startswith("linux"), reason="needs RLIMIT_AS and /proc"
)


def bpeds_json(pattern: str) -> str:
    return json.dumps(
        {
            "format": "bpeds",
            "version": 1,
            "pattern": pattern,
            "special_tokens": {},
            "options": {},
            "merges": [[97, 98]],
        }
    )


# -- patterns: what compiling costs, bounded whatever the parser reads -------------------------


@needs_rlimit
def test_a_pattern_that_compiles_into_gigabytes_is_refused_however_it_is_written(
    tmp_path: Path,
) -> None:
    files = []
    for i, pattern in enumerate(BYPASSES):
        model = tmp_path / f"evil{i}.json"
        model.write_text(bpeds_json(pattern), encoding="utf-8")
        counts = tmp_path / f"evil{i}.counts"
        Counts._trusted({"ab": 1}, pattern, ()).save(counts)
        files.append((str(model), str(counts)))
    out = run_capped(  # one child for all: each probe fills its 256 MiB before it fails
        f"""
        from bpeds.errors import ModelFormatError
        from bpeds.tokenizer import Tokenizer
        from bpeds.tokenizer.counts import Counts, CountsFormatError
        for model, counts in {files!r}:
            for load, path, error in (
                (Tokenizer.load, model, ModelFormatError),
                (Counts.load, counts, CountsFormatError),
            ):
                try:
                    load(path)
                except error as exc:
                    assert "split pattern refused" in str(exc), exc
                    print("refused")
        """
    )
    assert out.split() == ["refused"] * 2 * len(BYPASSES), out


@needs_rlimit
def test_the_command_line_refuses_such_a_model_in_one_line(tmp_path: Path) -> None:
    model = tmp_path / "evil.json"
    model.write_text(bpeds_json(BYPASSES[0]), encoding="utf-8")
    out = run_capped(
        f"""
        import sys
        from bpeds.cli import main
        sys.exit(main(["info", {str(model)!r}]))
        """
    )
    assert out.count("\n") == 1, out
    assert "split pattern refused" in out


def test_ordinary_patterns_pass_the_probe_and_compile() -> None:
    from bpeds.tokenizer.pattern_safety import probe_pattern
    from bpeds.tokenizer.pretokenize import compile_pattern

    for source in (r"\w+|\s+|.", r"(?x) \w+ | \s+ | [^\w\s]+", r"\p{L}{1,16}|\d{1,3}|\S|\s+"):
        probe_pattern(source)
        assert compile_pattern(source).findall("ab 12") != []


def test_a_syntax_error_is_reported_by_compiling_not_by_the_probe() -> None:
    from bpeds.tokenizer.pretokenize import compile_pattern

    with pytest.raises(ValueError, match="does not compile"):
        compile_pattern("(unclosed")


# -- token lengths: checked from the parents' lengths, never by building bytes ----------------


def _model(merges: list[list[int]], events: list[list[object]] | None = None) -> str:
    doc = json.loads(bpeds_json("gpt2"))
    doc["merges"] = merges
    if events is not None:
        doc["version"] = 2
        doc["events"] = events
    return json.dumps(doc)


DOUBLING = [[97, 97]] + [[256 + k, 256 + k] for k in range(39)]  # 40 merges: 2**40 bytes
CHAIN = [[97, 97]] + [[256 + k, 97] for k in range(59_999)]  # 60,000 merges: 1.8 GB in all


@needs_rlimit
@pytest.mark.parametrize(
    "text",
    [
        _model(DOUBLING),
        _model(DOUBLING[:30], [["merge", 256 + k, *m] for k, m in enumerate(DOUBLING[:30])]),
        _model(CHAIN),
    ],
    ids=["doubling", "doubling-events", "chain"],
)
def test_tokens_too_long_are_refused_at_load(tmp_path: Path, text: str) -> None:
    model = tmp_path / "long.json"
    model.write_text(text, encoding="utf-8")
    minbpe = tmp_path / "long.model"
    merges = json.loads(text)["merges"]
    minbpe.write_text(
        "minbpe v1\n\n0\n" + "".join(f"{a} {b}\n" for a, b in merges), encoding="utf-8"
    )
    out = run_capped(
        f"""
        from bpeds.errors import ModelFormatError
        from bpeds.tokenizer import Tokenizer
        from bpeds.tokenizer.formats import FormatError, load_model
        for path in ({str(model)!r}, {str(minbpe)!r}):
            try:
                tok = load_model(path)
                tok.encode("aaaa")
                tok.decode([tok.vocab_size - 1])
                print("loaded")
            except (ModelFormatError, FormatError) as exc:
                assert "bytes" in str(exc) and "MAX_" in str(exc), exc
                print("refused")
        """,
        memory=600 << 20,
    )
    assert out.split() == ["refused", "refused"], out


@needs_rlimit
def test_the_command_line_refuses_tokens_too_long_in_one_line(tmp_path: Path) -> None:
    model = tmp_path / "long.json"
    model.write_text(_model(DOUBLING), encoding="utf-8")
    for argv in (
        ["info", str(model)],
        ["export", str(model), "-f", "hf", "-o", str(tmp_path / "x")],
    ):
        out = run_capped(
            f"""
            import sys
            from bpeds.cli import main
            print(main({argv!r}))
            """,
            memory=600 << 20,
        )
        assert out.startswith("1\n"), out  # the exit status, then one line
        assert out.count("\n") == 2
        assert "MAX_TOKEN_BYTES" in out


def _tiktoken_file(tokens: list[bytes]) -> bytes:
    lines = [base64.b64encode(bytes([b])) + b" %d" % b for b in range(256)]
    lines += [base64.b64encode(t) + b" %d" % (256 + i) for i, t in enumerate(tokens)]
    return b"\n".join(lines) + b"\n"


def test_a_tiktoken_file_of_long_tokens_is_refused_before_any_merge_is_sought(
    tmp_path: Path,
) -> None:
    from bpeds.tokenizer.formats import FormatError, load_tiktoken

    path = tmp_path / "long.tiktoken"
    path.write_bytes(_tiktoken_file([b"a" * 2**k for k in range(1, 22)]))  # up to 2 MiB
    started = time.perf_counter()
    with pytest.raises(FormatError, match="MAX_TOKEN_BYTES"):
        load_tiktoken(path, pattern=None)
    assert time.perf_counter() - started < 10  # seconds to minutes when each is split by BPE


def test_tokens_inside_the_limits_load(tmp_path: Path) -> None:
    from bpeds.tokenizer import Tokenizer, limits
    from bpeds.tokenizer.formats import load_tiktoken

    model = tmp_path / "ok.json"
    model.write_text(_model(DOUBLING[:16]), encoding="utf-8")  # the longest 2**16 bytes
    tok = Tokenizer.load(model)
    assert tok.token_bytes(256 + 15) == b"a" * limits.MAX_TOKEN_BYTES
    path = tmp_path / "ok.tiktoken"
    path.write_bytes(_tiktoken_file([b"a" * 2**k for k in range(1, 8)]))
    assert load_tiktoken(path, pattern=None).token_bytes(262) == b"a" * 128


# -- event logs that loop -----------------------------------------------------------------------

CYCLE = [["merge", 256, 97, 98]] + [["remove", 256, 97, 98], ["merge", 256, 97, 98]] * 10_000


def test_an_event_log_that_loops_is_cut_off_at_a_bound_on_the_work_per_byte(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from bpeds.cli import EXIT_DATA, main
    from bpeds.tokenizer import Tokenizer
    from bpeds.tokenizer.replay import MAX_STEPS_PER_BYTE, EventLogError

    model = tmp_path / "loop.json"
    doc = json.loads(_model([[97, 98]], CYCLE))
    doc["pattern"] = None
    model.write_text(json.dumps(doc), encoding="utf-8")
    tok = Tokenizer.load(model)  # a valid log: each event is allowed where it is
    started = time.perf_counter()
    with pytest.raises(EventLogError, match="undoes and redoes"):
        tok.encode("ab" * 100)
    # At most MAX_STEPS_PER_BYTE * 200 + 256 steps, not the log's 20,001 (seconds before).
    assert time.perf_counter() - started < 5
    assert tok.encode("ba") == [98, 97]  # other texts still encode
    assert len(CYCLE) > MAX_STEPS_PER_BYTE * 200 + 256
    assert main(["encode", str(model), "ab" * 100]) == EXIT_DATA
    err = capsys.readouterr().err
    assert err.count("\n") == 1
    assert "undoes and redoes" in err


def test_the_work_bound_leaves_training_runs_logs_alone() -> None:
    import bpeds

    text = (ROOT / "tests" / "data" / "taylorswift.txt").read_text(encoding="utf-8")[:30_000]
    for variant in ("picky", "scaffold"):
        tok = bpeds.train(text, 800, variant=variant, pattern=None)
        ids = tok.encode(text[:5000])
        assert tok.decode(ids) == text[:5000]


# -- a model's catastrophic pattern is timed wherever it is matched -----------------------------

EXPONENTIAL = r"(?:a|aa)+$|\S|\s"


def _bpeds(tmp_path: Path, *argv: str) -> subprocess.CompletedProcess[str]:
    """``bpeds ARGV`` in a child process (so that a run that never ends fails the test)."""
    return subprocess.run(
        [sys.executable, "-m", "bpeds", *argv],
        capture_output=True,
        text=True,
        timeout=120,  # minutes without the time limit
        cwd=tmp_path,
        check=False,
    )


@pytest.mark.parametrize("command", ["train", "compare"])
def test_a_models_catastrophic_pattern_is_cut_off_in_every_command(
    tmp_path: Path, command: str
) -> None:
    from bpeds.tokenizer import Tokenizer

    Tokenizer([(97, 98)], pattern=EXPONENTIAL).save(tmp_path / "m.json")
    (tmp_path / "t.txt").write_text("a" * 42 + "!", encoding="utf-8")
    argv = {
        "train": ["train", "t.txt", "--base", "m.json", "--vocab-size", "300", "-o", "o.json"],
        "compare": [
            *("compare", "--model", "m.json", "--train", "t.txt", "--heldout", "t.txt"),
            *("-o", "out", "--no-plots", "-q"),
        ],
    }[command]
    done = _bpeds(tmp_path, *argv)
    assert done.returncode == 1, done.stderr
    assert "backtracks catastrophically" in done.stderr
    assert done.stderr.count("\n") == 1, done.stderr


def test_a_pattern_from_a_file_is_timed_in_training_and_counting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import bpeds
    import bpeds.tokenizer.pattern_safety as safety
    from bpeds.tokenizer import Tokenizer
    from bpeds.tokenizer.pretokenize import match_limits

    monkeypatch.setattr(safety, "MATCH_SECONDS", 0.05)
    monkeypatch.setattr(safety, "MATCH_SECONDS_PER_CHAR", 1e-6)
    pattern = r"(?:b|bb)+$|\S|\s"  # a pattern no other test loads from a file
    text = "b" * 42 + "!"
    assert match_limits(pattern) is None  # a pattern of yours: no limit
    Tokenizer([(97, 98)], pattern=pattern).save(tmp_path / "m.json")
    base = Tokenizer.load(tmp_path / "m.json")
    assert match_limits(pattern) == (0.05, 1e-6)
    for run in (
        lambda: bpeds.train(text, 300, base=base),
        lambda: bpeds.train(text, 300, pattern=pattern, workers=2),
        lambda: bpeds.count([text, text], pattern=pattern, workers=2),
    ):
        started = time.perf_counter()
        with pytest.raises(safety.PatternTimeoutError):
            run()
        assert time.perf_counter() - started < 30
