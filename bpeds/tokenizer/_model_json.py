"""The bpeds JSON format as text <-> the four parts of a tokenizer.

The format is documented in :mod:`bpeds.tokenizer.persist`, whose functions (and
:meth:`bpeds.tokenizer.Tokenizer.save`/``load``) are the public way in. This
module holds the part of it that needs no :class:`~bpeds.tokenizer.Tokenizer`
(rendering the parts, parsing and checking the document), so that it sits
below the tokenizer and both the tokenizer and :mod:`bpeds.tokenizer.persist` can use
it. What the parts mean (merge ids, special ids, the pattern) is checked by
the tokenizer's constructor; :func:`build` turns its complaints into
:class:`~bpeds.errors.ModelFormatError`.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple, TypeVar

from bpeds.errors import ModelFormatError
from bpeds.tokenizer.limits import check_text, check_token_lengths, read_limited, short_repr
from bpeds.tokenizer.pattern_safety import MAX_PATTERN_LENGTH
from bpeds.tokenizer.pretokenize import mark_from_file, resolve_pattern

__all__ = ["FORMAT", "VERSION", "ModelParts", "build", "parse", "read", "render"]

FORMAT = "bpeds"
VERSION = 1
#: Documents with a loop variant's event log (the "events" key) are version 2, so that a
#: bpeds that cannot replay them refuses them instead of encoding differently.
EVENTS_VERSION = 2
_KEYS = ("format", "version", "pattern", "special_tokens", "options", "merges")

T = TypeVar("T")


class ModelParts(NamedTuple):
    """What a bpeds JSON document holds, its types checked, and where it came from."""

    merges: list[tuple[int, int]]
    pattern: str | None
    special_tokens: dict[str, int]
    options: dict[str, Any]
    source: str
    events: list[Any] | None = None
    unicode: str | None = None
    normalizer: str | None = None
    ids: list[int] | None = None


def render(
    pattern: str | None,
    special_tokens: Mapping[str, int],
    options: Mapping[str, Any],
    merges: Sequence[tuple[int, int]],
    events: Sequence[Sequence[Any]] | None = None,
    unicode: str | None = None,
    *,
    normalizer: str | None = None,
    ids: Sequence[int] | None = None,
) -> str:
    """The document for these parts: one key per line, one merge per line, options sorted.
    A ``unicode`` other than ``None`` is written as the optional key ``"unicode"`` after
    ``"pattern"`` (a bpeds that does not know it refuses the file: unknown key).

    >>> print(render(None, {}, {}, [(97, 98)]))
    {
      "format": "bpeds",
      "version": 1,
      "pattern": null,
      "special_tokens": {},
      "options": {},
      "merges": [
        [97, 98]
      ]
    }

    A string that is not text (a lone surrogate, which has no UTF-8 form)
    raises :class:`~bpeds.errors.ModelFormatError` naming it: such a
    tokenizer cannot be written (nor read back). Complexity: O(merges + options).
    """
    check_text(
        [pattern, dict(special_tokens), dict(options)],
        "the tokenizer (cannot be saved)",
        ModelFormatError,
    )
    head: dict[str, Any] = {
        "format": FORMAT,
        "version": VERSION if events is None else EVENTS_VERSION,
        "pattern": pattern,
        **({} if unicode is None else {"unicode": unicode}),
        "special_tokens": dict(special_tokens),
        "options": dict(options),
        **({} if normalizer is None else {"normalizer": normalizer}),
    }
    if ids is not None:  # (one line: a model's own ids, byte and merge tokens in bpeds's order)
        head["ids"] = list(ids)
    lines = ["{"]
    for key, value in head.items():
        body = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=key == "options")
        lines.append(f"  {json.dumps(key)}: {body},")
    if merges:
        lines.append('  "merges": [')
        lines.append(",\n".join(f"    [{a}, {b}]" for a, b in merges))
        lines.append("  ]" + ("," if events is not None else ""))
    else:
        lines.append('  "merges": []' + ("," if events is not None else ""))
    if events is not None:
        body = ",\n".join("    " + json.dumps(list(e)) for e in events)
        lines.append('  "events": [' + ("\n" + body + "\n  ]" if events else "]"))
    lines.append("}")
    return "\n".join(lines)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise ModelFormatError(f"the key {key!r} appears twice in one object")
        out[key] = value
    return out


def _no_constant(name: str) -> Any:
    raise ModelFormatError(f"{name} is not a valid JSON number")


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def parse(text: str | bytes, *, source: str = "<string>") -> ModelParts:
    """The parts of a bpeds JSON document, its syntax, keys and types checked.

    Never runs anything (no pickle, no eval). Any problem raises
    :class:`~bpeds.errors.ModelFormatError` starting with ``source``; a value
    that is neither ``str`` nor ``bytes`` raises ``TypeError``. Complexity:
    O(input size).

    >>> parse('{"format": "bpeds", "version": 9}')
    Traceback (most recent call last):
    ...
    bpeds.errors.ModelFormatError: <string>: version 9 is not supported ...
    """

    def fail(message: str) -> ModelFormatError:
        return ModelFormatError(f"{source}: {message}")

    if isinstance(text, bytes | bytearray):
        try:
            text = bytes(text).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise fail(f"not UTF-8 text (byte offset {exc.start})") from None
    if not isinstance(text, str):
        raise TypeError(f"expected str or bytes, got {type(text).__name__}")
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicates, parse_constant=_no_constant)
    except ModelFormatError as exc:
        raise fail(str(exc)) from None
    except json.JSONDecodeError as exc:
        raise fail(f"not valid JSON (truncated or corrupt): {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise fail(f"not a readable JSON document: {type(exc).__name__}: {exc}") from None
    if not isinstance(doc, dict):
        raise fail(f"the top level must be a JSON object, found {type(doc).__name__}")
    if doc.get("format") != FORMAT:
        raise fail(f'"format" must be {FORMAT!r}, found {short_repr(doc.get("format"))}')
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise fail(f'"version" must be an integer, found {short_repr(version)}')
    if version not in (VERSION, EVENTS_VERSION):
        raise fail(
            f"version {version} is not supported (this bpeds reads versions {VERSION} and "
            f"{EVENTS_VERSION}); "
            + ("it was written by a newer bpeds" if version > EVENTS_VERSION else "it is invalid")
        )
    keys = _KEYS if version == VERSION else (*_KEYS, "events")
    missing = [k for k in keys if k not in doc]
    if missing:
        raise fail(f"missing key(s) {missing}")
    extra = sorted(set(doc) - set(keys) - {"unicode", "normalizer", "ids"})
    if extra:
        raise fail(f"unknown key(s) {extra}")
    pattern = doc["pattern"]
    if pattern is not None and not isinstance(pattern, str):
        raise fail(f'"pattern" must be a string or null, found {type(pattern).__name__}')
    special = doc["special_tokens"]
    if not isinstance(special, dict):
        raise fail(f'"special_tokens" must be an object, found {type(special).__name__}')
    for name, i in special.items():
        if not _is_int(i):
            raise fail(
                f"special token {short_repr(name)} must have an integer id, found {short_repr(i)}"
            )
    options = doc["options"]
    if not isinstance(options, dict):
        raise fail(f'"options" must be an object, found {type(options).__name__}')
    merges = doc["merges"]
    if not isinstance(merges, list):
        raise fail(f'"merges" must be an array, found {type(merges).__name__}')
    pairs: list[tuple[int, int]] = []
    for k, m in enumerate(merges):
        if not (isinstance(m, list) and len(m) == 2 and _is_int(m[0]) and _is_int(m[1])):
            raise fail(f"merge {k} must be an array of two integer ids, found {short_repr(m)}")
        pairs.append((m[0], m[1]))
    if pattern is not None and len(pattern) > MAX_PATTERN_LENGTH:
        raise fail(
            f'"pattern" is {len(pattern)} characters long, more than the {MAX_PATTERN_LENGTH} '
            "a split pattern may have (bpeds.tokenizer.pattern_safety)"
        )
    check_text([pattern, special, options], "the file", fail)
    unicode = doc.get("unicode")
    if "unicode" in doc and not isinstance(unicode, str):
        raise fail(f'"unicode" must be a string, found {short_repr(unicode)}')
    events = doc.get("events")
    if events is not None and not (
        isinstance(events, list) and all(isinstance(e, list) for e in events)
    ):
        raise fail('"events" must be an array of event arrays')
    normalizer = doc.get("normalizer")
    if normalizer is not None and not isinstance(normalizer, str):
        raise fail(f'"normalizer" must be a string or absent, found {short_repr(normalizer)}')
    ids = doc.get("ids")
    if ids is not None and not (isinstance(ids, list) and all(_is_int(i) for i in ids)):
        raise fail('"ids" must be an array of integer ids or absent')
    return ModelParts(
        pairs, pattern, special, options, source, events, unicode, normalizer=normalizer, ids=ids
    )


def read(path: str | os.PathLike[str]) -> ModelParts:
    """:func:`parse` of a file's bytes, named by its path. ``OSError`` if it cannot be read.

    A directory, a device, or a file larger than :data:`bpeds.tokenizer.limits.MAX_MODEL_BYTES`
    raises :class:`~bpeds.errors.ModelFormatError` without being read whole.
    """
    return parse(read_limited(path, "a model file", ModelFormatError), source=os.fspath(path))


def build(factory: Callable[..., T], parts: ModelParts) -> T:
    """``factory(merges, pattern=..., special_tokens=..., options=...)``, its
    ``ValueError``/``TypeError`` reworded as :class:`~bpeds.errors.ModelFormatError`
    naming ``parts.source``. Its pattern is matched with a time limit from then on
    (:func:`~bpeds.tokenizer.pretokenize.mark_from_file`). The tokens' lengths are checked first
    (:func:`~bpeds.tokenizer.limits.check_token_lengths`), before anything builds their
    bytes."""
    check_token_lengths(parts.merges, parts.source, ModelFormatError)
    try:
        built = factory(
            parts.merges,
            pattern=parts.pattern,
            special_tokens=parts.special_tokens,
            options=parts.options,
            **({} if parts.events is None else {"events": parts.events}),
            **({} if parts.unicode is None else {"unicode": parts.unicode}),
            **({} if parts.normalizer is None else {"normalizer": parts.normalizer}),
            **({} if parts.ids is None else {"ids": parts.ids}),
        )
    except (ValueError, TypeError) as exc:
        raise ModelFormatError(f"{parts.source}: {exc}") from None
    mark_from_file(resolve_pattern(parts.pattern)[0])  # matched with a time limit from now on
    return built


_TIKTOKEN_LINE = re.compile(rb"[A-Za-z0-9+/]+=*[ \t]+[0-9]+\r?\n")


def other_kind(head: bytes) -> str | None:
    r"""What another tool's model file is, from its first bytes: ``"hf"`` (a Hugging
    Face ``tokenizer.json``), ``"minbpe"`` (a ``.model``), ``"tiktoken"`` (a
    ``.tiktoken`` rank file), or ``None`` (a bpeds file, or nothing known).

    >>> other_kind(b'{"version": "1.0", "model": {"type": "BPE"'), other_kind(b"IQ== 0\n")
    ('hf', 'tiktoken')
    """
    head = head.removeprefix(b"\xef\xbb\xbf").lstrip()
    if head.startswith(b"minbpe v"):
        return "minbpe"
    if _TIKTOKEN_LINE.match(head):
        return "tiktoken"
    if head.startswith(b"{") and b'"model"' in head and b'"format": "bpeds"' not in head:
        return "hf"
    return None


#: The call that reads each kind of file :func:`other_kind` knows.
READERS = {
    "hf": "a Hugging Face tokenizer.json: read it with bpeds.load(path)",
    "minbpe": "a minbpe .model file: read it with bpeds.load(path)",
    "tiktoken": (
        "a tiktoken rank file, which holds no split pattern: read it with "
        "bpeds.load(path, pattern='gpt2') (or the pattern it was made with)"
    ),
}
