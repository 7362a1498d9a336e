"""What the format modules share: the error type, atomic writes, text reading, a BPE.

Not public API: :mod:`bpeds.formats` re-exports :class:`FormatError` and the
readers/writers; the helpers here may change.
"""

from __future__ import annotations

import heapq
import os
import stat
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bpeds.errors import BpedsError
from bpeds.tokenizer import Tokenizer, TokenizerError

__all__ = [
    "FormatError",
    "PathLike",
    "bpe_parts",
    "build_tokenizer",
    "decode_utf8",
    "distinct_token_bytes",
    "read_bytes",
    "write_files",
]

PathLike = str | os.PathLike[str]


class FormatError(BpedsError, ValueError):
    """A file or object is not valid in the format it claims, or cannot be converted.

    The message names the file (and line, where there is one) and what is
    wrong: a truncated or corrupt file, a model that is not byte-level BPE, a
    tokenizer the target format cannot express exactly.
    """


def read_bytes(path: PathLike, what: str) -> bytes:
    """The contents of ``path``; a directory raises :class:`FormatError` (a missing
    file keeps the built-in ``FileNotFoundError``, whose message names it)."""
    p = Path(path)
    if p.is_dir():
        raise FormatError(f"{p} is a directory, not {what}")
    return p.read_bytes()


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


def build_tokenizer(
    where: str,
    merges: Sequence[tuple[int, int]],
    *,
    pattern: str | None,
    special_tokens: Mapping[str, int] | None = None,
    options: Mapping[str, Any] | None = None,
) -> Tokenizer:
    """A :class:`~bpeds.tokenizer.Tokenizer`, its validation errors reworded as
    :class:`FormatError` naming ``where`` the parts came from."""
    try:
        return Tokenizer(merges, pattern=pattern, special_tokens=special_tokens, options=options)
    except TokenizerError as exc:
        raise FormatError(f"{where}: {exc}") from None


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


def _umask() -> int:
    """The process umask (read by setting and restoring it; cached)."""
    global _UMASK
    if _UMASK is None:
        _UMASK = os.umask(0o022)
        os.umask(_UMASK)
    return _UMASK


_UMASK: int | None = None


def write_files(files: Iterable[tuple[PathLike, bytes]], *, overwrite: bool) -> list[Path]:
    """Write each ``(path, data)`` atomically: a temporary file in the same
    directory, flushed, then renamed over ``path``.

    Unless ``overwrite``, an existing target raises ``FileExistsError`` before
    anything is written (checked for every file first, so a refusal leaves no
    half-written set). A missing directory raises ``FileNotFoundError``. A
    reader never sees a partial file; a crash leaves at most a stray
    ``.<name>.*.tmp`` file. New files get the usual permissions (0o666 minus
    the umask), not the temporary file's private ones; a replaced file keeps
    its mode. Complexity: O(bytes).
    """
    items = [(Path(p), data) for p, data in files]
    for p, _ in items:
        if not p.parent.is_dir():
            raise FileNotFoundError(f"cannot write {p}: directory {p.parent} does not exist")
        if p.is_dir():
            raise IsADirectoryError(f"cannot write {p}: it is a directory")
        if not overwrite and os.path.lexists(p):
            raise FileExistsError(
                f"{p} already exists; pass overwrite=True (--force on the command line) "
                "to replace it"
            )
    for p, data in items:
        mode = 0o666 & ~_umask()
        if overwrite and p.exists():
            mode = stat.S_IMODE(p.stat().st_mode)
        fd, tmp = tempfile.mkstemp(dir=p.parent, prefix=f".{p.name}.", suffix=".tmp")
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            os.chmod(tmp, mode)
            if overwrite:
                os.replace(tmp, p)
            else:
                _rename_no_clobber(tmp, p)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise
    return [p for p, _ in items]


def _rename_no_clobber(tmp: str, target: Path) -> None:
    """Move ``tmp`` to ``target`` unless ``target`` appeared meanwhile.

    A hard link fails atomically when the target exists; filesystems without
    hard links fall back to a check and a rename.
    """
    try:
        os.link(tmp, target)
    except FileExistsError:
        raise FileExistsError(
            f"{target} was created while writing it; pass overwrite=True to replace it"
        ) from None
    except OSError:
        if os.path.lexists(target):
            raise FileExistsError(
                f"{target} already exists; pass overwrite=True to replace it"
            ) from None
        os.replace(tmp, target)
        return
    os.unlink(tmp)


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
