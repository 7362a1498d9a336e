"""Scores by name: the shipped ones, and your own as ``"module:attribute"``.

:func:`get_score` builds a :class:`~bpeds.scoring.base.Score` from what a user
or a saved model gives: a score object, a name (``"pmi"``), a ``describe()``
dict (``{"name": "pmi", "min_count": 3}``), or a name of the form
``"module:attribute"`` that :func:`load_object` imports: a ``Score`` subclass
(built with the dict's other keys as its options), or a ready-made ``Score``
object (such as one made by :func:`~bpeds.scoring.base.score_function`).

A score's options are its class's ``__init__`` keyword parameters
(:func:`inspect.signature`); an option the class does not take, or a required
one left out, is a ``ValueError`` naming the score and the options it has,
never an internal class or a ``TypeError`` from deep inside.

Importing a module runs its code: only name modules you trust. A saved model
records its score as information and is never passed through here when it
is loaded.
"""

from __future__ import annotations

import difflib
import importlib
import inspect
from collections.abc import Mapping
from typing import Any

from bpeds.scoring.base import Score
from bpeds.scoring.parity import ParityAware
from bpeds.scoring.strategies import (
    NPMI,
    PMI,
    Frequency,
    GroupFrequency,
    LengthWeighted,
    LikelihoodGain,
    WordPiece,
)
from bpeds.specs import name_and_options

__all__ = ["SCORES", "describe_score", "get_score", "load_object", "score_options"]

#: The shipped scores by name.
SCORES: dict[str, type[Score]] = {
    cls.name: cls
    for cls in (
        Frequency,
        LengthWeighted,
        PMI,
        WordPiece,
        LikelihoodGain,
        NPMI,
        GroupFrequency,
        ParityAware,
    )
}

ScoreSpec = Score | str | Mapping[str, Any]


def load_object(target: str) -> object:
    """The object ``"module:attribute"`` names (``attribute`` may be dotted: ``a.b``).

    >>> load_object("bpeds.scoring.strategies:PMI").__name__
    'PMI'

    Errors, each a ``ValueError`` saying what to fix: ``target`` is not of the
    form ``module:attribute``; the module cannot be found (a module it imports
    that is missing is named as such); importing the module raised (the
    message gives the exception, which is chained); the module has no such
    attribute. Importing runs the module's code (a module that calls
    ``sys.exit()`` while imported is an import that failed).
    """
    if not isinstance(target, str):
        raise TypeError(f"expected 'module:attribute', got {type(target).__name__}")
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr or ":" in attr:
        raise ValueError(f"{target!r} is not of the form 'module:attribute' (e.g. 'myscores:Dice')")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        missing = exc.name or module_name
        if missing == module_name or module_name.startswith(missing + "."):
            raise ValueError(
                f"cannot import module {module_name!r} for {target!r}: no module named "
                f"{missing!r}; put its directory on sys.path (PYTHONPATH)"
            ) from exc
        raise ValueError(
            f"cannot import module {module_name!r} for {target!r}: it imports {missing!r}, "
            "which is not installed"
        ) from exc
    except (Exception, SystemExit) as exc:  # SystemExit: the module called sys.exit()
        raise ValueError(
            f"importing module {module_name!r} for {target!r} failed: {type(exc).__name__}: {exc}"
        ) from exc
    obj: object = module
    where = f"module {module_name!r}"
    done = f"{module_name}:"
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise ValueError(f"{where} has no attribute {part!r} (looking up {target!r})") from None
        done += part
        where = repr(done)
        done += "."
    return obj


def score_options(cls: type[Score]) -> tuple[list[str], list[str] | None]:
    """``(required, all)`` option names of a score class: its ``__init__``'s keyword
    parameters; ``all`` is ``None`` when ``__init__`` takes ``**kwargs`` (any name).

    >>> score_options(PMI), score_options(Frequency)
    (([], ['min_count']), ([], []))
    """
    if cls.__init__ is object.__init__:
        return [], []
    try:
        sig = inspect.signature(cls.__init__)
    except (TypeError, ValueError):  # pragma: no cover - builtins without a signature
        return [], None
    names: list[str] = []
    required: list[str] = []
    for i, p in enumerate(sig.parameters.values()):
        if i == 0 and p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            continue  # self
        if p.kind is p.VAR_KEYWORD:
            return required, None
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
            names.append(p.name)
            if p.default is p.empty:
                required.append(p.name)
    return required, names


def _listed(names: list[str]) -> str:
    return ", ".join(names) if names else "none"


def _build(label: str, cls: type[Score], options: dict[str, Any]) -> Score:
    required, names = score_options(cls)
    if names is not None:
        for key in options:
            if key not in names:
                close = difflib.get_close_matches(key, names, n=1)
                hint = f" (did you mean {close[0]!r}?)" if close else ""
                raise ValueError(
                    f"score {label!r} has no option {key!r}{hint}; "
                    + (f"its options are: {_listed(names)}" if names else "it takes no options")
                )
    missing = [r for r in required if r not in options]
    if missing:
        raise ValueError(
            f"score {label!r} needs the option(s) {', '.join(missing)}; "
            f"its options are: {_listed(names or required)}"
        )
    try:
        score = cls(**options)
    except (ValueError, TypeError) as exc:
        raise ValueError(f"bad options for score {label!r}: {exc}") from exc
    except Exception as exc:  # the constructor's own failure (the exception is chained)
        raise ValueError(
            f"making score {label!r} failed: {type(exc).__name__}: {str(exc)[:300]}"
        ) from exc
    return score


def _from_object(label: str, obj: object, options: dict[str, Any]) -> Score:
    cls = obj if isinstance(obj, type) else type(obj)
    if issubclass(cls, Score) and cls.score is Score.score:
        raise TypeError(
            f"{label!r} names {cls.__qualname__}, which does not define score(): name a "
            "subclass of bpeds.scoring.Score that does, or a function wrapped by "
            "@bpeds.scoring.score_function"
        )
    if isinstance(obj, type) and issubclass(obj, Score):
        return _build(label, obj, options)
    if isinstance(obj, Score):
        if options and options != obj.options():
            raise ValueError(
                f"{label!r} is a ready-made score object ({obj!r}), so it takes no options; "
                f"got {sorted(options)}. Name a Score subclass to pass options"
            )
        return obj
    raise TypeError(
        f"{label!r} names an object of type {type(obj).__name__}, not a score: it must name a "
        "bpeds.scoring.Score subclass, a Score object, or a function wrapped by "
        "@bpeds.scoring.score_function"
    )


def get_score(spec: ScoreSpec) -> Score:
    """A score from an object, a name, a ``describe()`` dict, or ``"module:attribute"``.

    >>> get_score("pmi"), get_score({"name": "pmi", "min_count": 3})
    (PMI(min_count=1), PMI(min_count=3))
    >>> get_score({"name": "pmi", "min_cnt": 2})
    Traceback (most recent call last):
    ...
    ValueError: score 'pmi' has no option 'min_cnt' (did you mean 'min_count'?); its options ...
    >>> get_score({"name": "bpeds.scoring.strategies:LengthWeighted", "alpha": 2})
    LengthWeighted(alpha=2)

    - a :class:`~bpeds.scoring.base.Score` object is returned as it is;
    - a name is one of :data:`SCORES` (``"frequency"``, ``"pmi"``, ...), or
      ``"module:attribute"`` (see :func:`load_object`) naming a ``Score``
      subclass or a ``Score`` object (a ``@score_function`` is one);
    - a mapping holds ``"name"`` (either kind) and the options: for a class,
      its ``__init__``'s keyword arguments; a ready-made object takes none
      (except exactly its own ``options()``, so that what
      :func:`describe_score` recorded builds it again).

    Errors: ``TypeError`` for a spec of another type, or a ``module:attribute``
    that is not a score; ``ValueError`` for an unknown name (the known ones
    are listed), a module that cannot be imported, a missing attribute, an
    option the score does not take (its options are listed), a required
    option left out, or an option value the score refuses.
    """
    if isinstance(spec, Score):
        return spec
    named = name_and_options(spec, "score")
    if named is None:
        raise TypeError(
            "a score is a Score object, a name, 'module:attribute' or a dict with 'name': "
            f"got {type(spec).__name__} {spec!r}"
        )
    name, options = named
    if ":" in name:
        return _from_object(name, load_object(name), options)
    cls = SCORES.get(name)
    if cls is None:
        close = difflib.get_close_matches(name, list(SCORES), n=1)
        hint = f"did you mean {close[0]!r}? " if close else ""
        raise ValueError(
            f"unknown score {name!r}: {hint}choose one of {', '.join(sorted(SCORES))}, or "
            "give your own as 'module:attribute'"
        )
    return _build(name, cls, options)


def describe_score(spec: ScoreSpec, score: Score) -> dict[str, Any]:
    """What a model records of ``score``, built by :func:`get_score` from ``spec``.

    ``score.describe()``; for a score loaded from ``"module:attribute"``, the
    name is that, so :func:`get_score` of the record builds the score again.

    >>> describe_score("bpeds.scoring.strategies:PMI", get_score("bpeds.scoring.strategies:PMI"))
    {'name': 'bpeds.scoring.strategies:PMI', 'min_count': 1}
    """
    name = (
        spec if isinstance(spec, str) else spec.get("name") if isinstance(spec, Mapping) else None
    )
    if isinstance(name, str) and ":" in name:
        return {"name": name, **score.options()}
    return score.describe()
