"""bpeds' own file format: versioned JSON, written atomically, read defensively.

A file is one JSON object (UTF-8)::

    {
      "format": "bpeds",
      "version": 1,
      "pattern": "<regex source>" or null,
      "special_tokens": {"<text>": id, ...},
      "options": {...},
      "merges": [[left, right], ...]
    }

``merges[k]`` made id ``256 + k`` (ids ``0..255`` are the bytes). ``options``
records how the tokenizer was trained (score, tie rule, counting, ...); it is
information, not code. Every key is required and no other key is allowed.

Reading (:func:`load`, :func:`loads`) never executes anything (no pickle, no
eval) and validates everything: the JSON itself (no duplicate keys, no NaN,
no absurdly deep nesting), the types, ``format`` and ``version``, and the
whole tokenizer (merges may only use earlier ids, special ids must not
collide, the pattern must compile) through :class:`~bpeds.tokenizer.Tokenizer`.
Any problem raises :class:`ModelFormatError` (a ``ValueError``) saying what is
wrong and where. A pattern is compiled, never run, while loading; a pattern
that is slow to match is only slow when encoding.

Writing (:func:`save`) goes to a temporary file in the same directory, which
is flushed, synced and then moved into place, so a reader never sees a half
written file. An existing file is never replaced unless ``overwrite=True``.
A new file gets the usual mode, 0o666 minus the umask (0644 with the common
umask 022); a replaced file keeps its mode. The formats of
:mod:`bpeds.formats` are written the same way (:func:`bpeds._files.write_files`).
"""

from __future__ import annotations

import json
import os
from typing import Any

from bpeds._files import write_files
from bpeds.errors import BpedsError
from bpeds.tokenizer import Tokenizer

__all__ = ["FORMAT", "VERSION", "ModelFormatError", "dumps", "load", "loads", "save"]

FORMAT = "bpeds"
VERSION = 1
_KEYS = ("format", "version", "pattern", "special_tokens", "options", "merges")


class ModelFormatError(BpedsError, ValueError):
    """A file (or string) is not a valid bpeds tokenizer: corrupt, truncated,
    of an unknown version, or inconsistent."""


def dumps(tokenizer: Tokenizer) -> str:
    """The tokenizer as bpeds JSON text (one merge per line).

    >>> print(dumps(Tokenizer([(97, 98)], pattern=None)))
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

    Complexity: O(merges + options).
    """
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"expected a Tokenizer, got {type(tokenizer).__name__}")
    head = {
        "format": FORMAT,
        "version": VERSION,
        "pattern": tokenizer.pattern,
        "special_tokens": tokenizer.special_tokens,
        "options": tokenizer.options,
    }
    lines = ["{"]
    for key, value in head.items():
        body = json.dumps(value, ensure_ascii=False, allow_nan=False, sort_keys=key == "options")
        lines.append(f"  {json.dumps(key)}: {body},")
    merges = tokenizer.merges
    if merges:
        lines.append('  "merges": [')
        lines.append(",\n".join(f"    [{a}, {b}]" for a, b in merges))
        lines.append("  ]")
    else:
        lines.append('  "merges": []')
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


def loads(text: str | bytes, *, source: str = "<string>") -> Tokenizer:
    """A tokenizer from bpeds JSON text, validating everything.

    >>> loads(dumps(Tokenizer([(97, 98)]))).merges
    [(97, 98)]
    >>> loads('{"format": "bpeds", "version": 9}')
    Traceback (most recent call last):
    ...
    bpeds.persist.ModelFormatError: <string>: version 9 is not supported ...

    ``source`` names the input in error messages. Complexity: O(input size +
    merges).
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
        raise fail(f'"format" must be {FORMAT!r}, found {doc.get("format")!r}')
    version = doc.get("version")
    if not isinstance(version, int) or isinstance(version, bool):
        raise fail(f'"version" must be an integer, found {version!r}')
    if version != VERSION:
        raise fail(
            f"version {version} is not supported (this bpeds reads version {VERSION}); "
            + ("it was written by a newer bpeds" if version > VERSION else "it is invalid")
        )
    missing = [k for k in _KEYS if k not in doc]
    if missing:
        raise fail(f"missing key(s) {missing}")
    extra = sorted(set(doc) - set(_KEYS))
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
            raise fail(f"special token {name!r} must have an integer id, found {i!r}")
    options = doc["options"]
    if not isinstance(options, dict):
        raise fail(f'"options" must be an object, found {type(options).__name__}')
    merges = doc["merges"]
    if not isinstance(merges, list):
        raise fail(f'"merges" must be an array, found {type(merges).__name__}')
    pairs: list[tuple[int, int]] = []
    for k, m in enumerate(merges):
        if not (isinstance(m, list) and len(m) == 2 and _is_int(m[0]) and _is_int(m[1])):
            raise fail(f"merge {k} must be an array of two integer ids, found {m!r}")
        pairs.append((m[0], m[1]))
    try:
        return Tokenizer(pairs, pattern=pattern, special_tokens=special, options=options)
    except (ValueError, TypeError) as exc:
        raise fail(str(exc)) from None


def load(path: str | os.PathLike[str]) -> Tokenizer:
    """Read a tokenizer from a bpeds JSON file (see :func:`loads`).

    ``OSError`` if the file cannot be read; :class:`ModelFormatError` if it is
    not a valid bpeds tokenizer.
    """
    with open(path, "rb") as f:
        data = f.read()
    return loads(data, source=os.fspath(path))


def save(tokenizer: Tokenizer, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
    """Write ``tokenizer`` to ``path`` atomically; refuse to replace a file unless asked.

    The text goes to a temporary file in the same directory, is synced, and
    is then linked (``overwrite=False``: fails if ``path`` exists, even if it
    appeared meanwhile) or renamed (``overwrite=True``) into place. Raises
    ``FileExistsError`` when ``path`` exists and ``overwrite`` is false;
    ``OSError`` when the directory cannot be written (``FileNotFoundError``
    when it does not exist). Nothing is left behind on failure. A new file
    gets mode 0o666 minus the umask; a replaced file keeps its mode.
    """
    write_files([(path, (dumps(tokenizer) + "\n").encode("utf-8"))], overwrite=overwrite)
