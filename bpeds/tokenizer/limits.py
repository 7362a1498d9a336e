"""Bounds on what reading an untrusted file may cost, shared by every loader.

Every loader of bpeds applies them (``docs/security.md`` says what they
promise), and a program that reads model files or JSON of its own from
untrusted sources (the ``bpeds`` command reading ids, say) can apply them too:

- :func:`read_limited`: a model file is read only if it is a regular file or a
  pipe (never a device such as ``/dev/zero``) and at most
  :data:`MAX_MODEL_BYTES` long;
- :func:`parse_json_limited`: JSON nested too deep or holding an integer too
  long for Python to convert is an error of the file, not a ``RecursionError``
  or a bare ``ValueError``;
- :func:`check_text`: strings from a file must be text (no lone surrogates), so
  that what was loaded can be saved again;
- :func:`short_repr`: error messages quote at most a few dozen characters of a
  value, however large or deeply nested;
- :func:`check_token_lengths`, :func:`check_token_sizes`: a model file's tokens are
  at most :data:`MAX_TOKEN_BYTES` bytes long each and :data:`MAX_VOCAB_BYTES` together,
  measured from their parents' lengths (merges) before any token's bytes are built,
  since ``n`` merges can describe tokens of ``2**n`` bytes.
"""

from __future__ import annotations

import json
import os
import reprlib
import stat
from collections.abc import Callable, Iterable, Sequence
from typing import Any

__all__ = [
    "MAX_MODEL_BYTES",
    "MAX_TOKEN_BYTES",
    "MAX_VOCAB_BYTES",
    "check_token_lengths",
    "check_token_sizes",
    "check_text",
    "first_surrogate",
    "parse_json_limited",
    "read_limited",
    "short_repr",
]

#: The largest model file any loader reads (256 MiB; real tokenizers take a few MB to 40 MB).
MAX_MODEL_BYTES = 256 << 20

#: The longest token a model file may hold, in bytes (published vocabularies' longest tokens
#: have a few hundred bytes). Read at each load.
MAX_TOKEN_BYTES = 64 << 10
#: The most bytes a model file's tokens may hold together (published vocabularies hold a few
#: MB: GPT-4o's 200,000 tokens about 1.5 MB). Read at each load.
MAX_VOCAB_BYTES = 32 << 20

_REPR = reprlib.Repr()
_REPR.maxstring = 60
_REPR.maxother = 60
_REPR.maxlevel = 3
_REPR.maxlist = _REPR.maxtuple = _REPR.maxdict = 6


def short_repr(value: object) -> str:
    """``repr(value)`` cut to a few dozen characters, safe on deeply nested values.

    >>> short_repr("x" * 1000)[:12], len(short_repr("x" * 1000)) < 70
    ("'xxxxxxxxxxx", True)
    >>> nested: list[object] = []
    >>> for _ in range(100_000):
    ...     nested = [nested]
    >>> short_repr(nested)
    '[[[[...]]]]'
    """
    return _REPR.repr(value)


def read_limited(
    path: str | os.PathLike[str],
    what: str,
    error: Callable[[str], Exception],
    limit: int | None = None,
) -> bytes:
    """The bytes of the file at ``path``, refusing what no model file is.

    A directory, a device (``/dev/zero``, a terminal) or a socket raises
    ``error(message)``, as does a file longer than ``limit`` bytes (default
    :data:`MAX_MODEL_BYTES`; a pipe is read up to the limit and refused past
    it). ``what`` names the expected kind of file in messages ("a model
    file"). A missing or unreadable file raises the ``OSError`` of ``open``.
    Complexity: O(size of the file), reading at most ``limit + 1`` bytes.
    """
    limit = MAX_MODEL_BYTES if limit is None else limit
    name = os.fspath(path)
    if os.path.isdir(name):
        raise error(f"{name} is a directory, not {what}")
    with open(name, "rb") as f:
        mode = os.fstat(f.fileno()).st_mode
        if not (stat.S_ISREG(mode) or stat.S_ISFIFO(mode)):
            raise error(f"{name} is not a regular file (a device or socket), not {what}")
        data = f.read(limit + 1)
    if len(data) > limit:
        raise error(
            f"{name} is larger than {limit} bytes, the most bpeds reads as {what} "
            "(bpeds.tokenizer.limits.MAX_MODEL_BYTES)"
        )
    return data


def parse_json_limited(text: str | bytes, where: str, error: Callable[[str], Exception]) -> Any:
    """``json.loads(text)``, every way it can fail raised as ``error(message)`` naming ``where``.

    Invalid JSON, nesting deeper than Python's recursion limit and integers
    of more digits than Python converts (4300 by default) all become
    ``error``; nothing else is caught.

    >>> parse_json_limited("[" * 100_000, "x", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: x is not a readable JSON document (nested too deeply)
    """
    try:
        return json.loads(text)
    except json.JSONDecodeError as exc:
        raise error(f"{where} is not valid JSON (truncated or corrupt): {exc}") from None
    except RecursionError:
        raise error(f"{where} is not a readable JSON document (nested too deeply)") from None
    except ValueError as exc:  # an integer too long to convert
        raise error(f"{where} is not a readable JSON document ({exc})") from None


def first_surrogate(text: str) -> int | None:
    """The index of the first lone surrogate in ``text``, or ``None`` if it is all text.

    >>> first_surrogate("ok"), first_surrogate("a\\ud800")
    (None, 1)
    """
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as exc:
        return exc.start
    return None


def check_text(value: object, what: str, error: Callable[[str], Exception]) -> None:
    """Raise ``error`` if any string in ``value`` (keys too, at any depth) is not text.

    A lone surrogate (``"\\ud800"`` in JSON) is not text: it has no UTF-8
    form, so a tokenizer holding one could not be saved. Walks without
    recursion. Complexity: O(size of ``value``).
    """
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            at = first_surrogate(item)
            if at is not None:
                raise error(
                    f"{what} holds the lone surrogate U+{ord(item[at]):04X} in {short_repr(item)}, "
                    "which is not text (a file of bpeds holds only valid Unicode)"
                )
        elif isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)


def check_token_sizes(
    sizes: Iterable[int], where: str, error: Callable[[str], Exception], first_id: int = 0
) -> None:
    """Raise ``error(message)`` if a token is longer than :data:`MAX_TOKEN_BYTES` or the
    tokens are longer than :data:`MAX_VOCAB_BYTES` together; ``sizes`` are the tokens'
    lengths in bytes, the first of them token ``first_id``'s. Stops at the first size
    beyond a limit. Complexity: O(tokens).

    >>> check_token_sizes([3, 2 ** 20], "f.tiktoken", ValueError, 256)
    Traceback (most recent call last):
    ...
    ValueError: f.tiktoken: token 257 would be 1048576 bytes long, more than the 65536 ...
    """
    longest, most = MAX_TOKEN_BYTES, MAX_VOCAB_BYTES
    total = 0
    for i, size in enumerate(sizes, first_id):
        total += size
        if size > longest:
            raise error(
                f"{where}: token {i} would be {size} bytes long, more than the {longest} bpeds "
                "reads from a file (bpeds.tokenizer.limits.MAX_TOKEN_BYTES)"
            )
        if total > most:
            raise error(
                f"{where}: its tokens would hold more than {most} bytes together (at token {i}), "
                "more than bpeds reads from a file (bpeds.tokenizer.limits.MAX_VOCAB_BYTES)"
            )


def check_token_lengths(
    merges: Sequence[tuple[int, int]], where: str, error: Callable[[str], Exception]
) -> None:
    """:func:`check_token_sizes` for the tokens ``merges`` make (``merges[k]`` makes id
    ``256 + k``), each length the sum of its parents', no bytes built.

    Each merge doubles at most, so ``n`` merges can describe a token of
    ``2**n`` bytes: this is checked before anything expands them. A merge
    naming an id it cannot use (negative, not an int, not made yet) ends the
    check: the tokenizer's own validation reports it. Complexity: O(merges).

    >>> doubling = [(97, 97)] + [(256 + k, 256 + k) for k in range(40)]
    >>> check_token_lengths(doubling, "m.json", ValueError)
    Traceback (most recent call last):
    ...
    ValueError: m.json: token 272 would be 131072 bytes long, more than the 65536 ...
    """
    lengths = [1] * 256

    def sizes() -> Iterable[int]:
        for k, (a, b) in enumerate(merges):
            top = 256 + k
            if not (type(a) is int and type(b) is int and 0 <= a < top and 0 <= b < top):
                return
            size = lengths[a] + lengths[b]
            lengths.append(size)
            yield size

    check_token_sizes(sizes(), where, error, 256)
