"""bpeds.scoring.registry: scores by name, by "module:attribute", and their error messages."""

from __future__ import annotations

import re
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from bpeds.scoring.base import Score, ScoreFunction
from bpeds.scoring.registry import SCORES, describe_score, get_score, load_object, score_options
from bpeds.scoring.strategies import PMI, Frequency, LengthWeighted
from bpeds.tokenizer.training import train

USER_MODULE = """
    from bpeds.scoring import Declaration, Dependency, Score, score_function

    class Dice(Score):
        name = "dice"
        declaration = Declaration(Dependency.PARTS)

        def __init__(self, min_count: int = 2, *, scale: float = 1.0) -> None:
            if min_count < 1:
                raise ValueError(f"min_count must be >= 1, got {min_count}")
            self.min_count = min_count
            self.scale = scale

        def score(self, count, left, right, stats):
            if count < self.min_count:
                return None
            return self.scale * 2 * count / (stats.unigram(left) + stats.unigram(right))

        def options(self):
            return {"min_count": self.min_count, "scale": self.scale}

    class Needy(Score):
        name = "needy"

        def __init__(self, alpha: float, beta: float = 1.0) -> None:
            self.alpha, self.beta = alpha, beta

        def score(self, count, left, right, stats):
            return count

    class Loose(Score):
        name = "loose"

        def __init__(self, **options) -> None:
            self.seen = options

        def score(self, count, left, right, stats):
            return count

    @score_function(Dependency.PAIR)
    def longest(count, left, right, stats):
        return count * (stats.length(left) + stats.length(right))

    READY = Dice(3)
    NOT_A_SCORE = 42

    class Holder:
        INNER = Dice
"""


@pytest.fixture
def user_module(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A module of user scores written into tmp_path and put on sys.path; its name."""
    name = f"user_scores_{abs(hash(tmp_path)) % 10**8}"
    (tmp_path / f"{name}.py").write_text(textwrap.dedent(USER_MODULE))
    monkeypatch.syspath_prepend(str(tmp_path))
    yield name
    sys.modules.pop(name, None)


def test_shipped_scores_by_name_and_dict() -> None:
    assert set(SCORES) == {
        "frequency",
        "length_weighted",
        "pmi",
        "wordpiece",
        "likelihood_gain",
        "npmi",
        "group_frequency",
        "parity_aware",
    }
    assert isinstance(get_score("frequency"), Frequency)
    assert get_score({"name": "pmi", "min_count": 3}).describe() == {"name": "pmi", "min_count": 3}
    pmi = PMI(min_count=2)
    assert get_score(pmi) is pmi
    for name, cls in SCORES.items():  # every describe() dict builds the same score again
        built = get_score(name)
        assert type(built) is cls
        assert get_score(built.describe()).describe() == built.describe()


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (
            {"name": "pmi", "min_cnt": 2},
            "score 'pmi' has no option 'min_cnt' (did you mean 'min_count'?); "
            "its options are: min_count",
        ),
        ({"name": "frequency", "alpha": 2}, "score 'frequency' has no option 'alpha'; it takes no"),
        (
            {"name": "length_weighted", "beta": 2},
            "score 'length_weighted' has no option 'beta'; its options are: alpha",
        ),
        ({"name": "group_frequency", "min_count": 2}, "score 'group_frequency' has no option"),
        ({"name": "pmi", "min_count": 0}, "bad options for score 'pmi': min_count must be an int"),
        ("pmx", "unknown score 'pmx': did you mean 'pmi'? choose one of frequency, "),
        ("zzz", "unknown score 'zzz': choose one of frequency, group_frequency, length_weighted"),
        ("zzz", "wordpiece, or give your own as 'module:attribute'"),
        ("nosuchmodule_xyz:Dice", "no module named 'nosuchmodule_xyz'; put its directory on sys"),
        ("bpeds.scoring:Nope", "module 'bpeds.scoring' has no attribute 'Nope'"),
        ("bpeds.scoring:PMI.nope", "'bpeds.scoring:PMI' has no attribute 'nope'"),
        ("pmi:", "is not of the form 'module:attribute'"),
        (":PMI", "is not of the form 'module:attribute'"),
    ],
)
def test_bad_specs_say_what_to_fix(spec: Any, message: str) -> None:
    with pytest.raises(ValueError, match=re.escape(message)):
        get_score(spec)


def test_the_internal_class_is_never_named() -> None:
    with pytest.raises(ValueError, match="min_cnt") as info:
        get_score({"name": "npmi", "min_cnt": 2})
    assert "_MinCount" not in str(info.value)
    assert "__init__" not in str(info.value)
    assert str(info.value).startswith("score 'npmi' has no option 'min_cnt'")


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (3, "a score is a Score object, a name, 'module:attribute' or a dict"),
        ({"min_count": 2}, "needs a str 'name'"),
        ({"name": "pmi", 1: 2}, "option names are str"),
        (
            "os:sep",
            "'os:sep' names an object of type str, not a score: it must name a bpeds.scoring.Score",
        ),
        ("bpeds.scoring:Dependency", "names an object of type Enum(Type|Meta), not a score"),
        ("bpeds.scoring:Score", "names Score, which does not define score"),
    ],
)
def test_wrong_types_are_type_errors(spec: Any, message: str) -> None:
    with pytest.raises(TypeError, match=message):
        get_score(spec)


def test_user_scores_by_module_and_attribute(user_module: str) -> None:
    dice = get_score(f"{user_module}:Dice")
    assert dice.name == "dice"
    assert dice.options() == {"min_count": 2, "scale": 1.0}
    assert get_score({"name": f"{user_module}:Dice", "min_count": 5}).options()["min_count"] == 5
    assert get_score({"name": f"{user_module}:Holder.INNER", "scale": 2.0}).options() == {
        "min_count": 2,
        "scale": 2.0,
    }
    ready = get_score(f"{user_module}:READY")
    assert ready is load_object(f"{user_module}:READY")
    longest = get_score(f"{user_module}:longest")
    assert isinstance(longest, ScoreFunction)
    assert longest.name == "longest"
    loose = get_score({"name": f"{user_module}:Loose", "anything": 1})
    assert loose.seen == {"anything": 1}  # type: ignore[attr-defined]


def test_user_score_errors(user_module: str) -> None:
    with pytest.raises(ValueError, match=r"score '.*:Dice' has no option 'min_cnt' \(did you"):
        get_score({"name": f"{user_module}:Dice", "min_cnt": 2})
    with pytest.raises(ValueError, match=r"its options are: min_count, scale"):
        get_score({"name": f"{user_module}:Dice", "colour": 2})
    with pytest.raises(ValueError, match=r"bad options for score '.*:Dice': min_count must be"):
        get_score({"name": f"{user_module}:Dice", "min_count": 0})
    with pytest.raises(ValueError, match=r"needs the option\(s\) alpha; its options are: alpha"):
        get_score(f"{user_module}:Needy")
    with pytest.raises(ValueError, match=r"is a ready-made score object .* takes no options"):
        get_score({"name": f"{user_module}:READY", "min_count": 9})
    with pytest.raises(ValueError, match="is a ready-made score object"):
        get_score({"name": f"{user_module}:longest", "x": 1})
    with pytest.raises(
        TypeError, match=r"'.*:NOT_A_SCORE' names an object of type int, not a score"
    ):
        get_score(f"{user_module}:NOT_A_SCORE")
    with pytest.raises(ValueError, match=f"module '{user_module}' has no attribute 'Dise'"):
        get_score(f"{user_module}:Dise")


def test_a_module_that_fails_to_import_is_named(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "broken_scores_mod.py").write_text("raise RuntimeError('boom')\n")
    (tmp_path / "needs_dep_mod.py").write_text("import not_installed_dep_xyz\n")
    (tmp_path / "syntax_mod.py").write_text("def (:\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(
        ValueError, match=r"importing module 'broken_scores_mod' .*RuntimeError: boom"
    ):
        get_score("broken_scores_mod:X")
    with pytest.raises(
        ValueError, match="it imports 'not_installed_dep_xyz', which is not installed"
    ):
        get_score("needs_dep_mod:X")
    with pytest.raises(ValueError, match=r"importing module 'syntax_mod' .*SyntaxError"):
        get_score("syntax_mod:X")
    for m in ("broken_scores_mod", "needs_dep_mod", "syntax_mod"):
        sys.modules.pop(m, None)


def test_score_options_come_from_the_signature() -> None:
    assert score_options(PMI) == ([], ["min_count"])
    assert score_options(LengthWeighted) == ([], ["alpha"])
    assert score_options(Frequency) == ([], [])

    class Open(Score):
        def __init__(self, a: int, *args: Any, b: int = 1, **kw: Any) -> None:
            pass

    assert score_options(Open) == (["a"], None)


def test_describe_score_names_a_loaded_score_by_its_module(user_module: str) -> None:
    spec = {"name": f"{user_module}:Dice", "min_count": 4}
    score = get_score(spec)
    record = describe_score(spec, score)
    assert record == {"name": f"{user_module}:Dice", "min_count": 4, "scale": 1.0}
    assert get_score(record).options() == score.options()
    ready = get_score(f"{user_module}:READY")
    assert get_score(describe_score(f"{user_module}:READY", ready)) is ready
    assert describe_score("pmi", PMI()) == {"name": "pmi", "min_count": 1}


def test_train_records_a_user_score_so_it_can_be_rebuilt(user_module: str) -> None:
    tok = train("low lower lowest " * 20, 262, pattern="gpt2", score=f"{user_module}:Dice")
    assert tok.options["score"] == {"name": f"{user_module}:Dice", "min_count": 2, "scale": 1.0}
    again = train("low lower lowest " * 20, 262, pattern="gpt2", score=tok.options["score"])
    assert again == tok
    with pytest.raises(ValueError, match="score 'pmi' has no option 'min_cnt'"):
        train("abc", 260, score={"name": "pmi", "min_cnt": 2})
