"""What the format modules share: the error type, text reading, a BPE.

Files are written with :func:`bpeds.tokenizer.files.write_files` (atomic, no overwrite
unless asked), as :mod:`bpeds.tokenizer.persist` writes them.

Not public API: :mod:`bpeds.tokenizer.formats` re-exports :class:`FormatError` and the
readers/writers; the helpers here may change.
"""

from __future__ import annotations

import heapq
import os
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bpeds.errors import BpedsError
from bpeds.tokenizer.core import Tokenizer, TokenizerError
from bpeds.tokenizer.limits import (
    check_text,
    check_token_lengths,
    parse_json_limited,
    read_limited,
    short_repr,
)
from bpeds.tokenizer.pretokenize import mark_from_file

__all__ = [
    "FormatError",
    "PathLike",
    "bpe_parts",
    "build_tokenizer",
    "check_u32_ids",
    "decode_utf8",
    "distinct_token_bytes",
    "parse_json",
    "read_bytes",
    "renumber_specials",
]

PathLike = str | os.PathLike[str]


class FormatError(BpedsError, ValueError):
    """A file or object is not valid in the format it claims, or cannot be converted.

    The message names the file (and line, where there is one) and what is
    wrong: a truncated or corrupt file, a model that is not byte-level BPE, a
    tokenizer the target format cannot express exactly.
    """


def refuse_replay(tok: Tokenizer, target: str) -> None:
    """Raise :class:`FormatError` when ``tok`` encodes by a loop variant's event log,
    which ``target`` (a format of ranked merges) cannot express."""
    if tok.replays:
        variant = tok.options.get("variant", {})
        name = variant.get("name", "a loop variant") if isinstance(variant, dict) else variant
        raise FormatError(
            f"{target} holds ranked merges only; this tokenizer was trained with {name!r}, "
            "whose removed, re-made or hidden tokens it cannot express (it would encode "
            "differently): save it in bpeds' own format"
        )


def read_bytes(path: PathLike, what: str) -> bytes:
    """The contents of ``path``; a directory, a device or a file larger than
    :data:`bpeds.tokenizer.limits.MAX_MODEL_BYTES` raises :class:`FormatError` (a missing
    file keeps the built-in ``FileNotFoundError``, whose message names it)."""
    return read_limited(Path(path), what, FormatError)


def decode_utf8(data: bytes, where: str) -> str:
    """``data`` as UTF-8 text (a leading BOM dropped); invalid UTF-8 raises :class:`FormatError`.

    >>> decode_utf8(b"\\xef\\xbb\\xbfok", "x")
    'ok'
    """
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = data[: exc.start].count(b"\n") + 1
        raise FormatError(
            f"{where} is not UTF-8 text (invalid byte 0x{data[exc.start]:02x} on line {line})"
        ) from None


def parse_json(text: str, where: str) -> Any:
    """``text`` parsed as JSON; invalid JSON raises :class:`FormatError` naming ``where``.

    >>> parse_json('{"a": [1]}', "x")
    {'a': [1]}

    So do nesting too deep for Python's recursion limit and integers too long
    to convert (see :func:`bpeds.tokenizer.limits.parse_json_limited`).
    """
    return parse_json_limited(text, where, FormatError)


def renumber_specials(specials: Mapping[str, int], first: int) -> dict[str, int]:
    """The special tokens numbered ``first, first + 1, ...`` in the order of their ids.

    >>> renumber_specials({"<b>": 9, "<a>": 5}, 300)
    {'<a>': 300, '<b>': 301}
    """
    order = sorted(specials.items(), key=lambda item: item[1])
    return {text: first + n for n, (text, _) in enumerate(order)}


def build_tokenizer(
    where: str,
    merges: Sequence[tuple[int, int]],
    *,
    pattern: str | None,
    special_tokens: Mapping[str, int] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Tokenizer:
    """A :class:`~bpeds.tokenizer.Tokenizer`, its validation errors reworded as
    :class:`FormatError` naming ``where`` the parts came from.

    A pattern or special token that is not text (a lone surrogate) is refused
    too: the tokenizer could not be saved again, and so are tokens beyond the length
    limits of :func:`~bpeds.tokenizer.limits.check_token_lengths`."""
    check_text([pattern, dict(special_tokens or {})], where, FormatError)
    check_token_lengths(merges, where, FormatError)
    try:
        tok = Tokenizer(merges, pattern=pattern, special_tokens=special_tokens, options=options)
    except TokenizerError as exc:
        raise FormatError(f"{where}: {exc}") from None
    mark_from_file(tok.pattern)  # matched with a time limit wherever it is used from now on
    return tok


#: The ids Hugging Face ``tokenizers`` and tiktoken hold are unsigned 32-bit integers.
U32_LIMIT = 1 << 32


def check_u32_ids(tok: Tokenizer, target: str) -> None:
    """Raise :class:`FormatError` if an id of ``tok`` does not fit in 32 bits (``target``'s ids).

    Only special tokens can have such ids (their ids are the caller's choice).
    Complexity: O(special tokens).
    """
    for text, i in tok.special_tokens.items():
        if i >= U32_LIMIT:
            raise FormatError(
                f"special token {short_repr(text)} has id {i}, but {target} holds ids below "
                f"2**32 = {U32_LIMIT}; give it a smaller id"
            )


def distinct_token_bytes(tok: Tokenizer, target: str) -> list[bytes]:
    """The bytes of every byte and merge token, in id order; two ids with equal
    bytes raise :class:`FormatError` (``target`` maps bytes to ids, so it cannot
    hold both). Complexity: O(total bytes of all tokens)."""
    out = [tok.token_bytes(i) for i in range(256 + tok.num_merges)]
    if len(set(out)) != len(out):
        first: dict[bytes, int] = {}
        for i, b in enumerate(out):
            if b in first:
                raise FormatError(
                    f"tokens {first[b]} and {i} have the same bytes {b!r}: {target} maps "
                    "token bytes to one id, so it cannot hold both"
                )
            first[b] = i
    return out


#: ``rank(left, right, start, mid, end)`` -> ``(rank, new_id)`` of merging the
#: parts ``left`` = piece[start:mid] and ``right`` = piece[mid:end], or None.
RankFn = Callable[[int, int, int, int, int], "tuple[int, int] | None"]


def bpe_parts(piece: bytes, rank: RankFn) -> list[tuple[int, int, int]]:
    """Run BPE over ``piece``: repeatedly merge the adjacent pair of lowest
    rank, the leftmost on ties, until no pair has a rank.

    Returns the final parts as ``(start, end, id)``. This is tiktoken's loop
    (and, with a pair-rank function, Hugging Face's), with a heap and lazy
    deletion instead of a scan. Complexity: O(n log n) heap work for
    ``n = len(piece)`` plus the cost of the rank calls.

    >>> ranks = {b"ab": 256, b"abc": 257}
    >>> def by_bytes(left, right, start, mid, end):
    ...     r = ranks.get(b"abcab"[start:end])
    ...     return None if r is None else (r, r)
    >>> bpe_parts(b"abcab", by_bytes)
    [(0, 3, 257), (3, 5, 256)]
    """
    n = len(piece)
    ids = list(piece)
    nxt = list(range(1, n + 1))  # nxt[i]: start of the part after the part starting at i
    prv = list(range(-1, n - 1))
    alive = [True] * n
    heap: list[tuple[int, int, int, int]] = []  # (rank, start, end, new_id)

    def push(i: int) -> None:
        j = nxt[i]
        if j >= n:
            return
        k = nxt[j]
        r = rank(ids[i], ids[j], i, j, k)
        if r is not None:
            heapq.heappush(heap, (r[0], i, k, r[1]))

    for i in range(n - 1):
        push(i)
    while heap:
        _, i, k, new = heapq.heappop(heap)
        if not alive[i]:
            continue
        j = nxt[i]
        if j >= n or nxt[j] != k:
            continue  # stale: a neighbour changed since this pair was ranked
        alive[j] = False
        ids[i] = new
        nxt[i] = k
        if k < n:
            prv[k] = i
        if prv[i] >= 0:
            push(prv[i])
        push(i)
    out: list[tuple[int, int, int]] = []
    i = 0
    while i < n:
        out.append((i, nxt[i], ids[i]))
        i = nxt[i]
    return out
