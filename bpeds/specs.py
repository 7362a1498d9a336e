"""Plug-ins named by data: a name, or a mapping ``{"name": ..., **options}``.

Scores, loop variants and pruning rules are each chosen by such a spec (on the command line,
in a saved model, in ``compare``'s configurations); this is the one reading of its shape.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["name_and_options"]


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
