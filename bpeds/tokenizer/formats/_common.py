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
from bpeds.scoring.ties import SmallestIds, hf_byte_order
from bpeds.tokenizer.continued import FILE_IDS_TIE
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
    "FILE_IDS_TIE",
    "file_ids_tie",
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


def refuse_normalizer(tok: Tokenizer, target: str) -> None:
    """Raise :class:`FormatError` when ``tok`` normalises text, which ``target`` cannot
    record (a reader would encode unnormalised text differently)."""
    if tok.normalizer is not None:
        raise FormatError(
            f"{target} has no place for a normaliser, and this tokenizer normalises text "
            f"({tok.normalizer}): save it in bpeds' own format or as a Hugging Face "
            "tokenizer.json"
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


def file_ids_tie(byte_ids: Mapping[int, int]) -> dict[str, Any] | None:
    """The tie rule ordering byte tokens as a file's ids ``byte_ids`` (byte -> id) do, as a
    tokenizer records it (``None`` when the file numbers bytes by value: bpeds's own ids
    already order them so). Only the order of the bytes the file has matters (a byte it
    lacks is in no pair); they come last, in value order.

    >>> from bpeds.scoring.ties import gpt2_byte_to_unicode
    >>> by_char = sorted(range(256), key=gpt2_byte_to_unicode().__getitem__)
    >>> file_ids_tie({b: i for i, b in enumerate(by_char)})
    {'name': 'hf'}
    >>> file_ids_tie({b: b for b in range(256)}) is None
    True
    """
    present = sorted(byte_ids, key=byte_ids.__getitem__)
    if present == sorted(present):
        return None
    hf_rank = hf_byte_order()
    if present == sorted(present, key=hf_rank.__getitem__):
        return {"name": "hf"}
    order = present + [b for b in range(256) if b not in byte_ids]
    rank = [0] * 256
    for r, b in enumerate(order):
        rank[b] = r
    return SmallestIds(rank).describe()


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
    unicode: str | None = None,
    ids: Sequence[int] | None = None,
) -> Tokenizer:
    """A :class:`~bpeds.tokenizer.Tokenizer`, its validation errors reworded as
    :class:`FormatError` naming ``where`` the parts came from.

    A pattern or special token that is not text (a lone surrogate) is refused
    too: the tokenizer could not be saved again, and so are tokens beyond the length
    limits of :func:`~bpeds.tokenizer.limits.check_token_lengths`."""
    check_text([pattern, dict(special_tokens or {})], where, FormatError)
    check_token_lengths(merges, where, FormatError)
    try:
        tok = Tokenizer(
            merges,
            pattern=pattern,
            special_tokens=special_tokens,
            options=options,
            unicode=unicode,
            ids=ids,
        )
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
    """The bytes of every byte and merge token, in bpeds's id order (a model's own id
    of token ``i`` is ``public_ids(tok)[i]``); two ids with equal bytes raise
    :class:`FormatError` (``target`` maps bytes to ids, so it cannot hold both).
    Complexity: O(total bytes of all tokens)."""
    inner = tok.renumbered()  # (a model with ids of its own: bpeds's order, its ids below)
    out = [inner.token_bytes(i) for i in range(256 + tok.num_merges)]
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


def public_ids(tok: Tokenizer) -> list[int]:
    """The id ``tok`` gives each byte and merge token, in bpeds's order: its own
    (:attr:`~bpeds.tokenizer.Tokenizer.ids`) or ``0 .. 255 + merges``."""
    ids = tok.ids
    return list(range(256 + tok.num_merges)) if ids is None else ids


def refuse_own_ids(tok: Tokenizer, target: str) -> None:
    """Raise :class:`FormatError` when ``tok`` has ids of its own, which ``target`` (a
    format that numbers bytes by value and merge ``k`` as ``256 + k``) cannot hold."""
    if tok.ids is not None:
        raise FormatError(
            f"{target} numbers bytes by value and merge k as 256 + k, and this tokenizer "
            "keeps a model's own ids: export it as tokenizer.json or tiktoken ranks, or "
            "write tok.renumbered() (the same tokens in bpeds's numbering)"
        )


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
