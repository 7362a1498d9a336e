"""Presets: the settings that reproduce another trainer, and the defaults they replace.

A preset (``preset="rustbpe"``, ...) sets the split ``pattern``, the Unicode
tables its classes are read with (``unicode``), the ``tie`` rule and the
``representation``. An argument left out takes the preset's
value, else its usual default; an argument given with another value than the
preset's is an error, even the usual default's (``preset="hf",
pattern="gpt4"``). To tell an argument left out from one given with the
default's value, training's signature uses :class:`PresetDefault` members as
defaults, and :func:`resolve_preset` replaces them.

Parity (tested): ``"rustbpe"`` gives rustbpe's merges, ``"hf"`` Hugging Face
``BpeTrainer``'s (ByteLevel, no prefix space, full byte alphabet), both on every
code point (they read Unicode 16.0's tables, as those engines do: see
:mod:`bpeds.tokenizer.unicode_tables`), ``"minbpe-basic"``/``"minbpe-regex"``
minbpe's (the ``regex`` module's tables, which minbpe splits with).
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from typing import Any

from bpeds.tokenizer.pretokenize import resolve_pattern

__all__ = ["PRESETS", "PresetDefault", "resolve_preset"]

#: What each preset sets. An argument not given takes the preset's value; an
#: argument given a different value is an error (even the usual default's).
PRESETS: dict[str, dict[str, Any]] = {
    "minbpe-basic": {
        "pattern": None,
        "unicode": None,
        "representation": "sequence",
        "tie": "leftmost",
    },
    "minbpe-regex": {
        "pattern": "gpt4",
        "unicode": None,
        "representation": "sequence",
        "tie": "leftmost",
    },
    "hf": {"pattern": "gpt2", "unicode": "16.0", "representation": "type", "tie": "hf"},
    "rustbpe": {
        "pattern": "gpt4",
        "unicode": "16.0",
        "representation": "type",
        "tie": "smallest_ids",
    },
}


class PresetDefault(enum.Enum):
    """The default of an argument a preset sets: the preset's value, else the one held here.

    A distinct object, so that an argument passed explicitly (even with the
    usual default's value) is told apart from one left out.
    """

    PATTERN = "gpt4"
    UNICODE = None
    REPRESENTATION = "type"
    TIE = "smallest_ids"

    def __repr__(self) -> str:
        return f"<the preset's, else {self.value!r}>"


def resolve_preset(preset: str | None, given: Mapping[str, Any]) -> dict[str, Any]:
    """The values of the arguments a preset sets (``pattern``, ``unicode``,
    ``representation``, ``tie``): each one left out (a :class:`PresetDefault`) takes the
    preset's value, else its default; one given must agree with the preset (``ValueError``
    naming both).

    >>> resolve_preset("hf", {"pattern": PresetDefault.PATTERN, "tie": "hf"})
    {'pattern': 'gpt2', 'tie': 'hf'}
    >>> resolve_preset(None, {"pattern": PresetDefault.PATTERN, "tie": "leftmost"})
    {'pattern': 'gpt4', 'tie': 'leftmost'}

    Patterns agree when they resolve to the same source (``"gpt2"`` and its regex).
    An unknown preset raises ``ValueError`` listing the presets.
    """
    if preset is None:
        return {k: v.value if isinstance(v, PresetDefault) else v for k, v in given.items()}
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: choose one of {sorted(PRESETS)}")
    out = dict(given)
    for key, value in PRESETS[preset].items():
        if key not in given:
            continue
        mine = given[key]
        same = (
            isinstance(mine, PresetDefault)
            or mine == value
            or (
                key == "pattern"
                and mine is not None
                and value is not None
                and resolve_pattern(mine)[0] == resolve_pattern(value)[0]
            )
        )
        if not same:
            raise ValueError(
                f"preset {preset!r} sets {key}={value!r}, but {key}={mine!r} was given: "
                "drop one of them"
            )
        out[key] = value
    return out
