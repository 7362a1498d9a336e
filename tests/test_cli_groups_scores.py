"""``bpeds train``: groups of files (``--group NAME=FILE``) and user scores
(``--score module:attribute``, ``--score-options JSON``)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from bpeds.cli import EXIT_DATA, EXIT_OK, EXIT_USAGE, main
from bpeds.tokenizer import Tokenizer
from bpeds.tokenizer.training import train

SWIFT = Path(__file__).parent / "data" / "taylorswift.txt"
ENGLISH = SWIFT.read_text(encoding="utf-8")[:5000]
NUMBERS = " ".join(str(k * k * 7919 % 100000) for k in range(150))

SCORES_MODULE = """
    from bpeds.scoring import Declaration, Dependency, Score, score_function

    class Dice(Score):
        name = "dice"
        declaration = Declaration(Dependency.PARTS)

        def __init__(self, min_count: int = 2) -> None:
            self.min_count = min_count

        def score(self, count, left, right, stats):
            if count < self.min_count:
                return None
            return 2 * count / (stats.unigram(left) + stats.unigram(right))

        def options(self):
            return {"min_count": self.min_count}

    @score_function(Dependency.PAIR)
    def longest(count, left, right, stats):
        return count * (stats.length(left) + stats.length(right))

    def plain_function(count, left, right, stats):
        return count
"""


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def files(tmp_path: Path) -> dict[str, Path]:
    paths = {"en": tmp_path / "en.txt", "num": tmp_path / "num.txt", "en2": tmp_path / "en2.txt"}
    paths["en"].write_text(ENGLISH[:3000], encoding="utf-8")
    paths["en2"].write_text(ENGLISH[3000:], encoding="utf-8")
    paths["num"].write_text(NUMBERS, encoding="utf-8")
    return paths


@pytest.fixture
def scores_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module of user scores in its own directory, on sys.path; its name."""
    where = tmp_path / "userlib"
    where.mkdir()
    name = f"cli_user_scores_{abs(hash(tmp_path)) % 10**8}"
    (where / f"{name}.py").write_text(textwrap.dedent(SCORES_MODULE))
    monkeypatch.syspath_prepend(str(where))
    yield name
    sys.modules.pop(name, None)


def test_groups_train_like_the_library(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, files: dict[str, Path]
) -> None:
    out = tmp_path / "m.json"
    code, _, err = run(
        capsys,
        "train",
        "--group",
        f"en={files['en']}",
        "--group",
        f"num={files['num']}",
        "--group",
        f"en={files['en2']}",  # a name given again adds a file to its group
        "--score",
        "group_frequency",
        "--vocab-size",
        "320",
        "-o",
        str(out),
    )
    assert code == EXIT_OK, err
    tok = Tokenizer.load(out)
    expected = train(
        {"en": [files["en"], files["en2"]], "num": [files["num"]]},
        320,
        score="group_frequency",
    )
    assert tok == expected
    assert tok.options["groups"] == ["en", "num"]
    assert tok.merges != train([files["en"], files["en2"], files["num"]], 320).merges


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["{en}", "--score", "group_frequency"], "all the training data is one group"),
        (
            ["--group", "en={en}", "--score", "group_frequency"],
            "the training data has 1 group ('en')",
        ),
        (["{en}", "--group", "num={num}"], "either as INPUTs or with --group, not both"),
        ([], "give at least one INPUT file (or --group NAME=FILE, repeated)"),
        (["--group", "{en}"], "expected NAME=FILE"),
        (["--group", "en="], "expected NAME=FILE"),
    ],
)
def test_group_usage_errors(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    files: dict[str, Path],
    argv: list[str],
    message: str,
) -> None:
    out = tmp_path / "never.json"
    argv = [a.format(**{k: str(v) for k, v in files.items()}) for a in argv]
    code, _, err = run(capsys, "train", *argv, "--vocab-size", "300", "-o", str(out))
    assert code == EXIT_USAGE
    assert message in err
    assert not out.exists()


def test_a_missing_group_file_is_a_data_error(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, files: dict[str, Path]
) -> None:
    argv = ["--group", f"en={files['en']}", "--group", f"x={tmp_path / 'nope.txt'}"]
    code, _, err = run(capsys, "train", *argv, "--vocab-size", "300", "-o", str(tmp_path / "o"))
    assert code == EXIT_DATA
    assert "no such input file" in err


def test_user_score_class_with_options(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, files: dict[str, Path], scores_module: str
) -> None:
    out = tmp_path / "m.json"
    code, _, err = run(
        capsys,
        "train",
        str(files["en"]),
        "--score",
        f"{scores_module}:Dice",
        "--score-options",
        '{"min_count": 3}',
        "--vocab-size",
        "300",
        "-o",
        str(out),
    )
    assert code == EXIT_OK, err
    tok = Tokenizer.load(out)
    assert tok.options["score"] == {"name": f"{scores_module}:Dice", "min_count": 3}
    assert tok == train(files["en"], 300, score={"name": f"{scores_module}:Dice", "min_count": 3})
    assert tok.merges != train(files["en"], 300).merges


def test_user_score_function_and_json_form(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, files: dict[str, Path], scores_module: str
) -> None:
    out = tmp_path / "f.json"
    code, _, err = run(
        capsys,
        "train",
        str(files["en"]),
        "--score",
        f"{scores_module}:longest",
        "--vocab-size",
        "300",
        "-o",
        str(out),
    )
    assert code == EXIT_OK, err
    assert Tokenizer.load(out).options["score"] == {"name": f"{scores_module}:longest"}
    out2 = tmp_path / "g.json"
    code, _, err = run(
        capsys,
        "train",
        str(files["en"]),
        "--score",
        f'{{"name": "{scores_module}:Dice", "min_count": 4}}',
        "--vocab-size",
        "300",
        "-o",
        str(out2),
    )
    assert code == EXIT_OK, err
    assert Tokenizer.load(out2).options["score"]["min_count"] == 4


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (
            ["--score", "{mod}:Dice", "--score-options", '{"min_cnt": 3}'],
            "score '{mod}:Dice' has no option 'min_cnt' (did you mean 'min_count'?); "
            "its options are: min_count",
        ),
        (
            ["--score", "pmi", "--score-options", '{"min_cnt": 3}'],
            "score 'pmi' has no option 'min_cnt'",
        ),
        (["--score", "{mod}:Dise"], "module '{mod}' has no attribute 'Dise'"),
        (["--score", "{mod}:plain_function"], "names an object of type function, not a score"),
        (["--score", "no_such_module_xyz:Dice"], "no module named 'no_such_module_xyz'"),
        (["--score", "{mod}:Dice", "--score-options", "{min_count: 3}"], "--score-options is not"),
        (["--score", "{mod}:Dice", "--score-options", "[3]"], "must be an object"),
        (["--score-options", '{"min_count": 3}'], "--score-options needs --score"),
        (
            ["--score", '{"name": "pmi", "min_count": 2}', "--score-options", '{"min_count": 3}'],
            "--score and --score-options both give min_count",
        ),
    ],
)
def test_score_usage_errors(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    files: dict[str, Path],
    scores_module: str,
    argv: list[str],
    message: str,
) -> None:
    out = tmp_path / "never.json"
    argv = [a.replace("{mod}", scores_module) for a in argv]
    code, _, err = run(
        capsys, "train", str(files["en"]), *argv, "--vocab-size", "300", "-o", str(out)
    )
    assert code == EXIT_USAGE
    assert message.replace("{mod}", scores_module) in err
    assert not out.exists()


def test_a_score_module_in_the_current_directory_is_found(
    tmp_path: Path, files: dict[str, Path]
) -> None:
    """The installed command's sys.path holds its script's directory, not the current one;
    a --score module:attribute is looked up in the current directory too."""
    (tmp_path / "my_local_scores.py").write_text(textwrap.dedent(SCORES_MODULE))
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(Path(__file__).resolve().parent.parent)  # this checkout's bpeds
    script = "import sys; sys.path.remove(''); from bpeds.cli import main; sys.exit(main())"
    argv = [str(files["en"]), "--score", "my_local_scores:Dice", "--vocab-size", "280"]
    done = subprocess.run(
        [sys.executable, "-c", script, "train", *argv, "-o", "m.json", "-q"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == EXIT_OK, done.stderr
    assert Tokenizer.load(tmp_path / "m.json").options["score"]["name"] == "my_local_scores:Dice"
