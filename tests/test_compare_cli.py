"""``bpeds compare``: configurations from the command line, the report directory, bad input."""

from __future__ import annotations

import csv
import io
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bpeds.cli import EXIT_DATA, EXIT_OK, EXIT_USAGE, UsageError, main
from bpeds.cli.compare import _config_spec
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.training import train

SWIFT = (Path(__file__).parent / "data" / "taylorswift.txt").read_text(encoding="utf-8")


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    out = {
        "train": tmp_path / "train.txt",
        "more": tmp_path / "more.txt",
        "heldout": tmp_path / "heldout.txt",
        "de": tmp_path / "de.txt",
    }
    out["train"].write_text(SWIFT[:6000], encoding="utf-8")
    out["more"].write_text(SWIFT[6000:9000], encoding="utf-8")
    out["heldout"].write_text(SWIFT[20000:23000], encoding="utf-8")
    out["de"].write_text("Grüße aus Köln, sagte sie. " * 30, encoding="utf-8")
    return out


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_config_specs() -> None:
    assert _config_spec("score=pmi,min_count=2,vocab_size=4096") == {
        "score": {"name": "pmi", "min_count": 2},
        "vocab_size": 4096,
    }
    assert _config_spec("tie=leftmost, pattern=none ,label=plain") == {
        "tie": "leftmost",
        "pattern": None,
        "label": "plain",
    }
    assert _config_spec("variant=picky,threshold=0.9,score=frequency") == {
        "variant": {"name": "picky", "threshold": 0.9},
        "score": "frequency",
    }
    assert _config_spec('{"score": {"name": "pmi"}, "vocab_size": 300}') == {
        "score": {"name": "pmi"},
        "vocab_size": 300,
    }
    with pytest.raises(UsageError, match="'min_count' is not an argument of bpeds train"):
        _config_spec("min_count=2,score=pmi")
    with pytest.raises(UsageError, match="KEY=VALUE"):
        _config_spec("score")
    with pytest.raises(UsageError, match="gives tie twice"):
        _config_spec("tie=leftmost,tie=hf")


def test_compare_writes_the_report(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "report"
    model = tmp_path / "m.json"
    train(files["train"], 280).save(model)
    code, stdout, err = run(
        capsys,
        "compare",
        "--train",
        str(files["train"]),
        str(files["more"]),
        "--heldout-group",
        f"en={files['heldout']}",
        "--heldout-group",
        f"de={files['de']}",
        "--config",
        "score=pmi,min_count=2",
        "--config",
        "tie=leftmost,label=left,vocab_size=290",
        "--model",
        str(model),
        "--vocab-size",
        "300",
        "--sizes",
        "270,300",
        "--reference",
        "de",
        "--in-process",
        "--no-plots",  # the figures are drawn by the same code, tested in test_compare.py
        "-o",
        str(out),
    )
    assert code == EXIT_OK, err
    assert "| left | 290 |" in stdout
    assert "wrote" in err
    assert sorted(p.name for p in out.iterdir()) == ["report.md", "results.csv"]
    rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text(encoding="utf-8"))))
    assert [(r["config"], r["vocab_size"]) for r in rows] == [
        ("score=pmi(min_count=2)", "270"),
        ("score=pmi(min_count=2)", "300"),
        ("left", "270"),
        ("left", "290"),
        ("m.json (frequency)", "270"),
        ("m.json (frequency)", "280"),
    ]
    assert all(float(r["premium[de]"]) == 1.0 for r in rows)
    # The tokenizer of "left" is the one bpeds train gives for the same files and options.
    want = train([files["train"], files["more"]], 290, tie="leftmost")
    heldout = (files["heldout"].read_text(encoding="utf-8"), files["de"].read_bytes())
    n = len(want.encode_ordinary(heldout[0]))
    assert float(rows[3]["tokens_per_byte[en]"]) == pytest.approx(
        n / len(heldout[0].encode("utf-8"))
    )

    # An existing output is refused before any work, and kept.
    before = (out / "report.md").read_bytes()
    again = ["compare", "--train", str(files["train"]), "--heldout", str(files["heldout"])]
    again += ["--config", "score=frequency", "--vocab-size", "270", "--no-plots", "-q"]
    code, _, err = run(capsys, *again, "-o", str(out))
    assert code == EXIT_DATA
    assert "--force" in err
    assert (out / "report.md").read_bytes() == before
    code, _, err = run(capsys, *again, "--force", "--in-process", "-o", str(out))
    assert code == EXIT_OK, err
    assert (out / "report.md").read_bytes() != before


def test_bad_configurations_are_listed_together(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys,
        "compare",
        "--train",
        str(files["train"]),
        "--heldout",
        str(files["heldout"]),
        "--config",
        "score=pmmi",
        "--config",
        "score=pmi,min_cnt=3",
        "--config",
        "tie=leftmost",
        "--vocab-size",
        "280",
        "-o",
        str(tmp_path / "r"),
    )
    assert code == EXIT_USAGE
    assert "2 configurations cannot run" in err
    assert "unknown score 'pmmi'" in err
    assert "min_cnt" in err
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--heldout", "H", "--config", "tie=hf"], "give the training files: --train FILE"),
        (["--train", "T", "--config", "tie=hf"], "give the held-out files: --heldout FILE"),
        (
            ["--train", "T", "--train-group", "a=T", "--heldout", "H", "--config", "tie=hf"],
            "with --train or with --train-group, not both",
        ),
        (["--train", "T", "--heldout", "H"], "at least one --config"),
        (["--train", "T", "--heldout", "H", "--config", "x=1"], "'x' is not an argument"),
        (["--train", "T", "--heldout", "H", "--config", "tie=hf", "--sizes", "a"], "--sizes"),
    ],
)
def test_usage_errors(
    argv: list[str],
    message: str,
    files: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    paths = {"T": str(files["train"]), "H": str(files["heldout"])}
    argv = [paths.get(a, a) for a in argv]
    code, _, err = run(capsys, "compare", *argv, "--vocab-size", "270", "-o", str(tmp_path / "o"))
    assert code == EXIT_USAGE
    assert message in err


def test_missing_input_file(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, _, err = run(
        capsys,
        "compare",
        "--train",
        str(tmp_path / "nope.txt"),
        "--heldout",
        str(files["heldout"]),
        "--config",
        "tie=hf",
        "--vocab-size",
        "270",
        "-o",
        str(tmp_path / "o"),
    )
    assert code == EXIT_DATA
    assert "no such input file" in err


def test_same_results_whatever_the_hash_seed_and_processes(
    files: dict[str, Path], tmp_path: Path
) -> None:
    """Two runs in fresh interpreters (other hash seeds; one with two worker processes)
    write the same results, the cost columns aside."""
    tables = []
    for seed, workers in (("1", "1"), ("2", "2")):
        out = tmp_path / f"o{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [
                sys.executable,
                "-m",
                "bpeds",
                "compare",
                "--train",
                str(files["train"]),
                "--heldout",
                str(files["heldout"]),
                "--config",
                "score=pmi",
                "--config",
                "score=frequency",
                "--vocab-size",
                "290",
                "--workers",
                workers,
                "--no-plots",
                "-q",
                "-o",
                str(out),
            ],
            check=True,
            env=env,
        )
        rows = list(csv.DictReader(io.StringIO((out / "results.csv").read_text("utf-8"))))
        for r in rows:
            assert r["train_cpu_s"] == "" or float(r["train_cpu_s"]) > 0
            del r["train_cpu_s"], r["peak_rss_mb"]
        tables.append(rows)
    assert tables[0] == tables[1]
    assert len(tables[0]) == 12  # 34 merges: 34, 17, 8, 4, 2, 1 of them, for each


def test_a_tokenizer_file_alone(
    files: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    model = tmp_path / "m.json"
    Tokenizer([(104, 101), (256, 108)], pattern="gpt2").save(model)
    code, stdout, err = run(
        capsys,
        "compare",
        "--train",
        str(files["train"]),
        "--heldout",
        str(files["heldout"]),
        "--model",
        str(model),
        "--no-plots",
        "-o",
        str(tmp_path / "o"),
    )
    assert code == EXIT_OK, err
    assert "| m.json | 258 |" in stdout
