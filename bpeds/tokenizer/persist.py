"""bpeds' own file format: versioned JSON, written atomically, read defensively.

A file is one JSON object (UTF-8)::

    {
      "format": "bpeds",
      "version": 1,
      "pattern": "<regex source>" or null,
      "unicode": "16.0",                      (optional)
      "special_tokens": {"<text>": id, ...},
      "options": {...},
      "merges": [[left, right], ...]
    }

``merges[k]`` made id ``256 + k`` (ids ``0..255`` are the bytes). ``unicode``, when
present, names the Unicode tables the pattern's classes are read with
(:mod:`bpeds.tokenizer.unicode_tables`; absent: the ``regex`` module's own). ``options``
records how the tokenizer was trained (score, tie rule, counting, ...); it is
information, not code. Every other key is required and no other key is allowed.

Reading (:func:`load`, :func:`loads`) never executes anything (no pickle, no
eval) and validates everything: the JSON itself (no duplicate keys, no NaN,
no absurdly deep nesting), the types, ``format`` and ``version``, and the
whole tokenizer (merges may only use earlier ids, special ids must not
collide, the pattern must compile) through :class:`~bpeds.tokenizer.Tokenizer`.
Any problem raises :class:`ModelFormatError` (a ``ValueError``) saying what is
wrong and where. A file is read only if it is a regular file (or a pipe) of at
most 256 MiB; every string must be text (no lone surrogate). A pattern is
checked against the limits of :mod:`bpeds.tokenizer.pattern_safety` and compiled, never
run, while loading; one that is not bpeds's own is matched with a time limit
when encoding (see ``docs/security.md``).

Writing (:func:`save`) goes to a temporary file in the same directory, which
is flushed, synced and then moved into place, so a reader never sees a half
written file. An existing file is never replaced unless ``overwrite=True``; only
regular files are written (a symlink is followed to one, see
:func:`bpeds.tokenizer.files.write_files`).
A new file gets the usual mode, 0o666 minus the umask (0644 with the common
umask 022); a replaced file keeps its mode. The formats of :mod:`bpeds.tokenizer.formats`
are written the same way (:func:`bpeds.tokenizer.files.write_files`).

The functions here are the public interface; :meth:`Tokenizer.save
<bpeds.tokenizer.Tokenizer.save>` and :meth:`Tokenizer.load
<bpeds.tokenizer.Tokenizer.load>` do the same. The format itself (rendering,
parsing and checking the document) is :mod:`bpeds.tokenizer._model_json`, which sits
below the tokenizer so that the tokenizer's methods need not import this
module.
"""

from __future__ import annotations

import os

from bpeds.errors import ModelFormatError
from bpeds.tokenizer import _model_json
from bpeds.tokenizer._model_json import FORMAT, VERSION
from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.files import write_files

__all__ = ["FORMAT", "VERSION", "ModelFormatError", "dumps", "load", "loads", "save"]


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

    A value that is not a :class:`~bpeds.tokenizer.Tokenizer` raises
    ``TypeError``. Complexity: O(merges + options).
    """
    if not isinstance(tokenizer, Tokenizer):
        raise TypeError(f"expected a Tokenizer, got {type(tokenizer).__name__}")
    return _model_json.render(
        tokenizer.pattern,
        tokenizer.special_tokens,
        tokenizer.options,
        tokenizer.merges,
        tokenizer.events,
        tokenizer.unicode,
    )


def loads(text: str | bytes, *, source: str = "<string>") -> Tokenizer:
    """A tokenizer from bpeds JSON text, validating everything.

    >>> loads(dumps(Tokenizer([(97, 98)]))).merges
    [(97, 98)]
    >>> loads('{"format": "bpeds", "version": 9}')
    Traceback (most recent call last):
    ...
    bpeds.errors.ModelFormatError: <string>: version 9 is not supported ...

    ``source`` names the input in error messages. Complexity: O(input size +
    merges).
    """
    return _model_json.build(Tokenizer, _model_json.parse(text, source=source))


def load(path: str | os.PathLike[str]) -> Tokenizer:
    """Read a tokenizer from a bpeds JSON file (see :func:`loads`).

    ``OSError`` if the file cannot be read; :class:`ModelFormatError` if it is
    not a valid bpeds tokenizer. Same as :meth:`Tokenizer.load
    <bpeds.tokenizer.Tokenizer.load>`.
    """
    return Tokenizer.load(path)


def save(tokenizer: Tokenizer, path: str | os.PathLike[str], *, overwrite: bool = False) -> None:
    """Write ``tokenizer`` to ``path`` atomically; refuse to replace a file unless asked.

    The text goes to a temporary file in the same directory, is synced, and
    is then linked (``overwrite=False``: fails if ``path`` exists, even if it
    appeared meanwhile) or renamed (``overwrite=True``) into place. Raises
    ``FileExistsError`` when ``path`` exists and ``overwrite`` is false;
    ``OSError`` when the directory cannot be written (``FileNotFoundError``
    when it does not exist). Nothing is left behind on failure. A new file
    gets mode 0o666 minus the umask; a replaced file keeps its mode. Same as
    :meth:`Tokenizer.save <bpeds.tokenizer.Tokenizer.save>`.
    """
    write_files([(path, (dumps(tokenizer) + "\n").encode("utf-8"))], overwrite=overwrite)
