"""Scores and options that break training from inside: NaN priorities past the first pairs,
a user score that raises, options whose numbers are out of range."""

from __future__ import annotations

import math
import subprocess
import sys
import time
from pathlib import Path

import pytest

import bpeds
from bpeds.cli import EXIT_DATA, EXIT_USAGE, main
from bpeds.comparison.metrics import renyi_efficiency
from bpeds.scoring import Dependency, ScoreError, score_function
from bpeds.scoring.base import DeclarationError, Score
from bpeds.scoring.strategies import LengthWeighted

# 3,000 distinct words: pairs made by merges (ids >= 256) appear only after the first
# merges, out of reach of the check of the first pairs before training.
TEXT = " ".join("w" + "".join(chr(97 + int(d)) for d in str(i)) for i in range(3000))


@score_function(Dependency.PAIR, priority="real", count_fall_raises=False)
def nan_for_new_tokens(count: int, left: int, right: int, stats: object) -> float:
    return float("nan") if left >= 260 else float(count)


@score_function(
    Dependency.PARTS,
    priority="real",
    count_fall_raises=False,
    unigram_fall_raises=False,
    kernel=lambda c, a, b, n: float("nan") if n < 16_500 else float(c),
)
def nan_kernel_later(count: int, left: int, right: int, stats: object) -> float:
    return float(count)


@score_function(Dependency.PAIR, count_fall_raises=False)
def nan_undeclared(count: int, left: int, right: int, stats: object) -> float:
    return float("nan") if left >= 260 else float(count)


@pytest.mark.parametrize(
    ("score", "where"),
    [(nan_for_new_tokens, "its score"), (nan_kernel_later, "its kernel"), (nan_undeclared, "")],
    ids=["score", "kernel", "undeclared"],
)
def test_a_nan_priority_anywhere_in_the_run_is_a_clear_error(score: Score, where: str) -> None:
    with pytest.raises(DeclarationError, match=f"{where}.* gave nan for pair") as info:
        bpeds.train(TEXT, 300, score=score, pattern="gpt2")
    assert score.name in str(info.value)


# -- a user's score that fails ---------------------------------------------------------------------

USER_MODULE = """
import sys
from bpeds.scoring import Dependency, Score, score_function

@score_function(Dependency.PAIR, priority="int", count_fall_raises=False)
def divides_by_zero(count, left, right, stats):
    if left >= 256:
        return count // 0
    return count

class BrokenInit(Score):
    def __init__(self):
        raise RuntimeError("no configuration found")

    def score(self, count, left, right, stats):
        return count
"""


@pytest.fixture
def user_scores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "my_scores.py").write_text(USER_MODULE, encoding="utf-8")
    (tmp_path / "exits.py").write_text("import sys\nsys.exit(3)\n", encoding="utf-8")
    (tmp_path / "t.txt").write_text("hello world, hello there " * 20, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    monkeypatch.syspath_prepend(str(tmp_path))
    return tmp_path


def test_a_score_that_raises_is_named_with_its_error_and_where(user_scores: Path) -> None:
    with pytest.raises(ScoreError, match=r"score 'my_scores:divides_by_zero' failed") as info:
        bpeds.train("hello world, hello there " * 20, 300, score="my_scores:divides_by_zero")
    assert "ZeroDivisionError" in str(info.value)
    assert "my_scores.py, line 8" in str(info.value)
    assert isinstance(info.value.__cause__, ZeroDivisionError)  # the traceback, kept


def test_an_on_merge_callback_error_is_the_callers_own() -> None:
    def stop(record: object, token: bytes) -> None:
        raise LookupError("mine")

    with pytest.raises(LookupError, match="mine"):
        bpeds.train("hello world, hello there", 260, on_merge=stop)


@pytest.mark.parametrize(
    ("score", "code", "message"),
    [
        ("my_scores:divides_by_zero", EXIT_DATA, "failed: ZeroDivisionError"),
        ("my_scores:BrokenInit", EXIT_USAGE, "making score 'my_scores:BrokenInit' failed: Runtime"),
        ("exits:x", EXIT_USAGE, "importing module 'exits' for 'exits:x' failed: SystemExit: 3"),
    ],
    ids=["raises", "constructor", "module-exits"],
)
def test_the_command_line_says_which_score_failed_and_why(
    user_scores: Path, capsys: pytest.CaptureFixture[str], score: str, code: int, message: str
) -> None:
    argv = ["train", "t.txt", "--vocab-size", "300", "-o", "m.json", "--score", score]
    assert main(argv) == code
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    assert message in err
    assert main(["--traceback", *argv]) == code
    err = capsys.readouterr().err
    assert "Traceback (most recent call last)" in err
    assert err.strip().splitlines()[-1].startswith("bpeds train: error:")
    assert not (user_scores / "m.json").exists()


def test_a_comparison_keeps_the_failing_scores_traceback(user_scores: Path) -> None:
    result = bpeds.compare(
        [{"score": "my_scores:divides_by_zero", "vocab_size": 300}, {"vocab_size": 300}],
        train=["hello world, hello there " * 20],
        heldout=["hello world"],
        processes=False,
        progress=False,
    )
    (label,) = result.errors
    assert "my_scores:divides_by_zero" in result.errors[label]
    assert "ZeroDivisionError: integer division" in " ".join(result.notes[label])


# -- options out of range --------------------------------------------------------------------------


@pytest.mark.parametrize("alpha", [1e308, 10**400, float("inf"), float("nan"), -1, 33])
def test_length_weighted_refuses_an_alpha_out_of_range_at_once(alpha: float) -> None:
    started = time.perf_counter()
    with pytest.raises(ValueError, match="alpha must be from 0 to 32"):
        bpeds.train(TEXT, 300, score={"name": "length_weighted", "alpha": alpha})
    assert time.perf_counter() - started < 5  # nothing trained (50 s and 2.8 GB for 10**400)
    with pytest.raises(TypeError, match="int or a float"):
        LengthWeighted(alpha=True)


def test_length_weighted_at_the_largest_alpha_trains() -> None:
    for alpha in (32, 32.0, 0, 0.5):
        assert bpeds.train(TEXT, 300, score=LengthWeighted(alpha)).num_merges == 44


@pytest.mark.parametrize("value", ["inf", "1e400", "nan", "-1", "5000P"])
def test_count_refuses_a_memory_budget_out_of_range_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], value: str
) -> None:
    (tmp_path / "t.txt").write_text("some text", encoding="utf-8")
    argv = ["count", str(tmp_path / "t.txt"), "-o", str(tmp_path / "c"), "--max-memory", value]
    assert main(argv) == EXIT_USAGE
    err = capsys.readouterr().err
    assert "expected a size from 1M to 1024P" in err
    assert "Traceback" not in err


def test_compare_refuses_a_nan_or_infinite_alpha(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "t.txt").write_text("hello world " * 50, encoding="utf-8")
    for alpha in ("nan", "inf"):
        argv = ["compare", "--train", str(tmp_path / "t.txt"), "--heldout", str(tmp_path / "t.txt")]
        argv += ["--config", "vocab_size=270", "--alpha", alpha, "-o", str(tmp_path / "o")]
        assert main([*argv, "--no-plots", "-q"]) == EXIT_USAGE
        assert "alpha must be >= 0 and finite" in capsys.readouterr().err
    with pytest.raises(ValueError, match="alpha must be >= 0 and finite"):
        renyi_efficiency([3, 1], 4, float("nan"))
    assert renyi_efficiency([3, 1], 4, 1e6) == pytest.approx(-math.log2(0.75) / 2, rel=1e-5)


def test_compare_with_a_huge_number_of_sizes_costs_what_a_few_do(tmp_path: Path) -> None:
    code = (
        "import bpeds\n"
        "r = bpeds.compare([{'vocab_size': 270}], train=['hello world ' * 50],"
        " heldout=['hello world'], sizes=10**9, processes=False, progress=False)\n"
        "print(len(r.rows))\n"
    )
    done = subprocess.run(  # a child: the count of sizes once cost time linear in it
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) <= 5  # 14 merges: all, half, a quarter, ... down to one
