"""The configurations of a comparison: parsed, labelled, checked, and which share counts.

A configuration is a dict of :func:`bpeds.train`'s keyword arguments (a
``"label"`` key names it) or a trained :class:`~bpeds.tokenizer.Tokenizer`.
:func:`check_configs` hands every dict to ``bpeds.train`` with empty text
of the data's shape, so that whatever ``train`` refuses is reported at once,
for all of them, before anything is counted. :func:`reading_of` says which
configurations can train on the same counts (:func:`bpeds.count`'s, through
``bpeds.train(counts, ...)``): those whose options all concern how the data is
split and merged, in type mode.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import Any

from bpeds.errors import BpedsError
from bpeds.tokenizer import Tokenizer, check_special_texts, resolve_pattern
from bpeds.tokenizer.presets import PresetDefault, resolve_preset
from bpeds.tokenizer.training import train

__all__ = [
    "SHARED",
    "TRAIN_OWN",
    "Config",
    "ConfigError",
    "Reading",
    "check_configs",
    "label_of",
    "model_label",
    "parse_configs",
    "reading_of",
    "reusable",
]

#: Arguments of bpeds.train that compare sets itself (refused in a configuration).
TRAIN_OWN = ("workers", "progress", "on_merge")

#: The arguments a configuration may have and still train on shared counts; with any
#: other (a loop variant, ``block_size``, ...) it trains on the data itself.
SHARED = frozenset(
    {
        "vocab_size",
        "pattern",
        "special_tokens",
        "min_frequency",
        "max_token_length",
        "score",
        "tie",
        "representation",
        "counting",
        "multiset",
        "preset",
        "unicode",
    }
)


class ConfigError(BpedsError, ValueError):
    """Configurations that cannot run; the message lists every one with what to fix.

    ``problems`` maps each bad configuration's label to its message.
    """

    def __init__(self, problems: Mapping[str, str]) -> None:
        self.problems = dict(problems)
        lines = [f"  {label}: {msg}" for label, msg in self.problems.items()]
        n = len(self.problems)
        super().__init__(
            f"{n} configuration{'' if n == 1 else 's'} cannot run (nothing was trained):\n"
            + "\n".join(lines)
        )


@dataclass
class Config:
    """One configuration: its label, and what ``bpeds.train`` takes or a trained tokenizer."""

    label: str
    kwargs: dict[str, Any] | None  # what bpeds.train takes; None for a given tokenizer
    tokenizer: Tokenizer | None = None


def label_of(kwargs: Mapping[str, Any]) -> str:
    """The label of a configuration named by its options: ``score=pmi(min_count=2)``."""
    parts = []
    for k, v in kwargs.items():
        if isinstance(v, Mapping):
            inner = ",".join(f"{ik}={iv}" for ik, iv in v.items() if ik != "name")
            v = f"{v.get('name', '?')}({inner})" if inner else v.get("name", "?")
        parts.append(f"{k}={v}")
    return ",".join(parts) or "defaults"


def model_label(i: int, tok: Tokenizer) -> str:
    """The label of the ``i``-th configuration when it is a trained tokenizer: its
    position and what its options record of how it was trained (variant, score,
    preset, base), ``"tokenizer 3 (picky, frequency)"``; ``"tokenizer 3"`` for one that
    records nothing (imported from another format, say).

    >>> model_label(2, Tokenizer(pattern=None))
    'tokenizer 3'
    """
    opts = tok.options
    parts: list[str] = []
    for key in ("variant", "score"):
        spec = opts.get(key)
        if isinstance(spec, dict) and "name" in spec:
            parts.append(str(spec["name"]))
    if "preset" in opts:
        parts.append(f"preset {opts['preset']}")
    if "base" in opts:
        parts.append("continued")
    return f"tokenizer {i + 1}" + (f" ({', '.join(parts)})" if parts else "")


def parse_configs(configs: object, vocab_size: int | None) -> list[Config]:
    """The configurations in order, labelled (labels unique), each dict with its vocab_size."""
    if isinstance(configs, Mapping):
        items: list[tuple[str | None, object]] = [(str(k), v) for k, v in configs.items()]
    elif isinstance(configs, str | bytes) or not isinstance(configs, Iterable):
        raise TypeError(
            "configs must be a list of configurations (dicts of bpeds.train's arguments, or "
            f"trained Tokenizers) or a dict label -> configuration, got {type(configs).__name__}"
        )
    else:
        items = [(None, v) for v in configs]
    if not items:
        raise ValueError("compare needs at least one configuration")
    out: list[Config] = []
    for i, (label, item) in enumerate(items):
        if isinstance(item, Tokenizer):
            out.append(Config(label or model_label(i, item), None, item))
            continue
        if not isinstance(item, Mapping):
            raise TypeError(
                f"configuration {i + 1} is a {type(item).__name__}: give a dict of bpeds.train's "
                "arguments (e.g. {'score': 'pmi'}) or a trained Tokenizer"
            )
        kwargs = dict(item)
        given = kwargs.pop("label", None)
        if given is not None and not isinstance(given, str):
            raise TypeError(f"configuration {i + 1}: label must be a str, got {given!r}")
        name = label or given or label_of(kwargs)
        if "vocab_size" not in kwargs:
            if vocab_size is None:
                raise ValueError(
                    f"configuration {name!r} has no vocab_size: give it one, or pass "
                    "vocab_size= to compare for every configuration"
                )
            kwargs["vocab_size"] = vocab_size
        out.append(Config(name, kwargs))
    seen: set[str] = set()
    for c in out:
        if c.label in seen:
            raise ValueError(
                f"two configurations are labelled {c.label!r}: give them distinct labels"
            )
        seen.add(c.label)
    return out


def reusable(data: object) -> object:
    """``data`` in a form that can be read more than once: an iterator (a generator, say;
    also a group's) is read into a list once, anything else is kept as it is."""
    if isinstance(data, Mapping):
        return {k: reusable(v) for k, v in data.items()}
    if isinstance(data, Iterator):
        return list(data)
    return data


def _empty_like(data: object) -> object:
    return dict.fromkeys(data, "") if isinstance(data, Mapping) else ""


def check_configs(configs: list[Config], data: object) -> None:
    """Raise :class:`ConfigError` listing every configuration :func:`train` refuses.

    Each is checked by training it on empty text of the data's shape (the
    same groups): :func:`train` checks all its arguments before it reads any.
    """
    problems: dict[str, str] = {}
    shape = _empty_like(data)
    for c in configs:
        if c.kwargs is None:
            continue
        own = [k for k in TRAIN_OWN if k in c.kwargs]
        if own:
            problems[c.label] = (
                f"{', '.join(own)} cannot be set per configuration: compare sets them "
                "(workers= runs configurations in parallel, progress= draws a bar for each)"
            )
            continue
        kwargs = dict(c.kwargs)
        size = kwargs.pop("vocab_size")
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                train(shape, size, **kwargs, progress=False)
        except (ValueError, TypeError, ImportError, BpedsError) as exc:
            problems[c.label] = str(exc)
    if problems:
        raise ConfigError(problems)


# -- counting once, shared ---------------------------------------------------------------------


@dataclass(frozen=True)
class Reading:
    """How a configuration reads its training data: the split pattern's source, the
    special tokens cut out, and the Unicode tables the pattern's classes are read with.
    Configurations with equal readings train on the same counts."""

    source: str | None
    specials: tuple[str, ...]
    unicode: str | None = None


def reading_of(kwargs: Mapping[str, Any]) -> Reading | None:
    """The reading of a configuration that can train on shared counts (the same
    resolution of its preset, pattern and special tokens as ``bpeds.train``'s), or
    ``None``: an option outside :data:`SHARED`, or the sequence representation (counts
    keep no order), makes it read the data itself."""
    if not set(kwargs) <= SHARED:
        return None
    given = {
        "pattern": kwargs.get("pattern", PresetDefault.PATTERN),
        "unicode": kwargs.get("unicode", PresetDefault.UNICODE),
        "representation": kwargs.get("representation", PresetDefault.REPRESENTATION),
    }
    opts = resolve_preset(kwargs.get("preset"), given)
    if opts["representation"] != "type":
        return None
    source, _ = resolve_pattern(opts["pattern"], opts["unicode"])
    specials = tuple(check_special_texts(kwargs.get("special_tokens", ())))
    return Reading(source, specials, None if source is None else opts["unicode"])
