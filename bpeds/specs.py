"""Plug-ins named by data: a name, or a mapping ``{"name": ..., **options}``.

Scores, loop variants and pruning rules are each chosen by such a spec (on the command line,
in a saved model, in ``compare``'s configurations); this is the one reading of its shape.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

__all__ = ["make_named", "name_and_options"]

T = TypeVar("T")


def name_and_options(spec: object, what: str) -> tuple[str, dict[str, Any]] | None:
    """``spec`` as a name and its options when it is a name or a ``{"name": ..., **options}``
    mapping; None for anything else (the caller's other forms, or its error).

    A mapping without a ``str`` name, or with an option name that is not a ``str``, raises
    ``TypeError`` saying which kind of plug-in (``what``) it was meant to name. O(options).

    >>> name_and_options("pmi", "score")
    ('pmi', {})
    >>> name_and_options({"name": "picky", "threshold": 0.6}, "variant")
    ('picky', {'threshold': 0.6})
    >>> name_and_options({"threshold": 0.6}, "variant")
    Traceback (most recent call last):
    ...
    TypeError: a variant given as a dict needs a str 'name', got {'threshold': 0.6}
    >>> name_and_options(3, "score") is None
    True
    """
    if isinstance(spec, str):
        return spec, {}
    if not isinstance(spec, Mapping):
        return None
    options = dict(spec)
    name = options.pop("name", None)
    if not isinstance(name, str):
        raise TypeError(f"a {what} given as a dict needs a str 'name', got {spec!r}")
    for key in options:
        if not isinstance(key, str):
            raise TypeError(f"{what} option names are str, got {key!r}")
    return name, options


def make_named(
    name: str, options: Mapping[str, Any], known: Mapping[str, Callable[..., T]], what: str
) -> T:
    """The plug-in ``known[name]`` made with ``options``. An unknown name, or options its
    class does not take, raise ``ValueError`` listing the names or the options it takes
    (its ``options()`` when made with none). O(options), plus making it.

    >>> class Rule:
    ...     def __init__(self, threshold: int = 1) -> None:
    ...         self.threshold = threshold
    ...     def options(self) -> dict[str, int]:
    ...         return {"threshold": self.threshold}
    >>> make_named("trim", {"threshold": 3}, {"trim": Rule}, "rule").threshold
    3
    >>> make_named("trim", {"thresh": 3}, {"trim": Rule}, "rule")
    Traceback (most recent call last):
    ...
    ValueError: rule 'trim' does not take options ['thresh']; it takes ['threshold']
    """
    cls = known.get(name)
    if cls is None:
        raise ValueError(f"unknown {what} {name!r}: choose one of {', '.join(sorted(known))}")
    try:
        return cls(**options)
    except TypeError:
        takes = sorted(cls().options())  # type: ignore[attr-defined]
        raise ValueError(
            f"{what} {name!r} does not take options {sorted(options)}; it takes {takes}"
        ) from None
