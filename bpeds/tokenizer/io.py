"""Training input: strings, iterables of strings and files, streamed in blocks.

**Units.** Training data is a sequence of *units*, and the split pattern sees
each unit separately (it never matches across two units):

- a ``str`` is one unit;
- each ``str`` item of an iterable is one unit (so feeding a file line by line
  gives other pieces than feeding it whole: GPT-2's ``\\s+(?!\\S)`` leaves the
  last space of a run to the next word only when that word is in the same unit);
- each file (an ``os.PathLike``, alone or in an iterable) is one unit; a file
  named ``.gz``, ``.bz2``, ``.xz`` or ``.zst`` is decompressed (:func:`open_binary`),
  each row of a ``.parquet`` file's text column is one unit (:func:`parquet_texts`),
  and so is the ``"text"`` field of each record of a ``.jsonl`` file
  (:func:`jsonl_texts`); :class:`bpeds.tokenizer.records.Records` chooses another
  field or column, or reads a Hugging Face dataset or any iterable of records.

(:func:`bpeds.train` also takes a mapping ``{group name: data}``, each value
one of the above; this module reads one group's data at a time.)

**Special tokens** end a unit's text: a unit is cut around every occurrence of
a special token's text (leftmost, then longest), the special text itself is
dropped, and each remaining *segment* is split on its own. This is exactly
what :meth:`bpeds.tokenizer.Tokenizer.encode` does with allowed special
tokens, so no merge learns special-token text.

**Streaming.** A file is read in blocks of ``block_size`` bytes and decoded
incrementally; the whole file is never held in memory. A segment may be
handed on in several *pieces of text*, cut only at positions where cutting
changes nothing: for the GPT-2, GPT-4 and GPT-4o patterns, splitting the
pieces one by one gives exactly the chunks of splitting the whole segment.
The cut points are

1. between a non-whitespace character and a space (U+0020), and
2. after a newline that has a non-whitespace character on each side, unless the
   character after it is ``/``.

Why this is exact for those patterns: none of their alternatives lets a match
run over a space that follows a non-whitespace character (a space may only
*start* a match), nor over a newline that is followed by a non-whitespace
character and preceded by one (``[\\r\\n]*`` tails stop at the next
non-newline, and ``\\s*[\\r\\n]``/``\\s+(?!\\S)`` match whitespace runs, which
such a newline ends); and every decision a match before the cut makes by
reading the character after the cut (a space, or a non-whitespace character
after a newline) comes out the same at the end of the string: a run of
letters, digits or punctuation stops either way, an optional suffix
(``'s``, ``[\\r\\n]*``) is absent either way, and no whitespace run before
the cut reaches it. The one exception is GPT-4o's punctuation run, whose tail
``[\\r\\n/]*`` takes slashes after the newlines (``".\\n/"`` is one chunk),
hence no cut before a ``/``. Tests check this with Hypothesis against
:func:`bpeds.tokenizer.pretokenize.split` on the whole text for tiny block sizes. A
*custom* pattern is cut at the same points, which is exact when the same two
properties hold for it (they do for most word/space/punctuation patterns; a
pattern whose match can end in a space, like ``\\w+ ``, breaks them). With
``pattern=None`` a segment is one chunk and is never cut, so a file without
special tokens is read whole.

Memory: O(block size + the longest stretch of text without a cut point).

**Invalid text.** ``errors="strict"`` (default): invalid UTF-8 in a file raises
:class:`InvalidTextError` naming the file and the byte offset; a lone
surrogate in a ``str`` (it has no UTF-8 form) raises naming the item and the
character offset. ``errors="replace"``: both become U+FFFD. Other handlers are
refused: ``"surrogateescape"`` would put lone surrogates into the pieces, which
then have no UTF-8 bytes to train on or to export; ``"ignore"`` would silently
glue the text around the bad bytes into pieces that never occurred.
Files are decoded as UTF-8 exactly as stored: newlines are not translated and
a byte-order mark is a character (U+FEFF).
"""

from __future__ import annotations

import bz2
import codecs
import errno
import gzip
import io
import lzma
import os
import stat
import zlib
from collections.abc import Iterable, Iterator, Mapping
from typing import IO, Any, Literal

import regex

from bpeds.errors import BpedsError
from bpeds.tokenizer.pretokenize import NEWLINE_CUT
from bpeds.tokenizer.special import special_token_regex

__all__ = [
    "DEFAULT_BLOCK_SIZE",
    "PARQUET_COLUMNS",
    "Errors",
    "InvalidTextError",
    "check_block_size",
    "check_data",
    "check_errors",
    "check_int",
    "data_size",
    "is_endless",
    "iter_segments",
    "iter_units",
    "is_jsonl",
    "is_parquet",
    "jsonl_texts",
    "open_binary",
    "parquet_texts",
    "read_text_blocks",
    "refuse_file_names",
]

#: Bytes read from a file at a time (and characters per piece of a long str).
DEFAULT_BLOCK_SIZE = 1 << 20

Errors = Literal["strict", "replace"]

_SURROGATE = regex.compile(r"[\ud800-\udfff]")
# The rightmost safe cut at or before endpos - 1 (zero-width; see the module docstring).
_CUT = regex.compile(r"(?r)(?<=\S)(?= )|" + NEWLINE_CUT)

Unit = str | os.PathLike[str]

# What reading a compressed file raises for data that is cut short or corrupt (bz2, gzip
# and the .zst reader below raise OSError without an errno).
_DECOMPRESSION_ERRORS = (EOFError, OSError, lzma.LZMAError, zlib.error)


def _is_data_error(exc: OSError) -> bool:
    """An ``OSError`` of bad compressed data (``BadGzipFile``, bz2's "Invalid data
    stream"), not of the system (those carry an errno)."""
    return isinstance(exc, gzip.BadGzipFile) or exc.errno is None


class InvalidTextError(BpedsError, ValueError):
    """Training text that is not valid Unicode: invalid UTF-8 in a file, or a lone
    surrogate in a ``str``; or a compressed file that is cut short or corrupt (its text
    cannot be read whole). ``source`` names the file (a path) or the item (its index);
    ``offset`` is a byte offset in a file (of the decompressed text) or a character
    offset in a str."""

    def __init__(self, message: str, source: str | int, offset: int) -> None:
        super().__init__(message)
        self.source = source
        self.offset = offset

    def __reduce__(self) -> tuple[type[InvalidTextError], tuple[str, str | int, int]]:
        return (type(self), (str(self), self.source, self.offset))


def check_errors(errors: object) -> Errors:
    """Validate an ``errors=`` policy: ``"strict"`` or ``"replace"``.

    >>> check_errors("surrogateescape")
    Traceback (most recent call last):
    ...
    ValueError: errors must be 'strict' or 'replace', got 'surrogateescape': ...
    """
    if errors == "strict":
        return "strict"
    if errors == "replace":
        return "replace"
    raise ValueError(
        f"errors must be 'strict' or 'replace', got {errors!r}: pieces must be valid UTF-8 "
        "to be trained on and exported, so 'surrogateescape' cannot be used, and 'ignore' "
        "would join text across the dropped bytes"
    )


def check_data(data: object) -> None:
    """Check the shape of training data without reading it: a ``str``, a path, or an
    iterable of ``str`` and paths.

    >>> check_data(b"text")
    Traceback (most recent call last):
    ...
    TypeError: training data must be str or paths, not bytes: decode it or pass a path
    >>> from pathlib import Path
    >>> check_data(["text", Path("no-such-file.txt")])
    Traceback (most recent call last):
    ...
    FileNotFoundError: [Errno 2] no such training file: 'no-such-file.txt'

    A path, and every item of a list or tuple, is checked here (a missing
    file raises ``FileNotFoundError``, a directory ``IsADirectoryError``, an
    item that is neither ``str`` nor a path ``TypeError``), so that nothing
    is read before all of them are known to be there; the items of other
    iterables (generators) are checked as they are read. Complexity: O(items),
    one ``stat`` per path.
    """
    if isinstance(data, str):
        return
    if isinstance(data, os.PathLike):
        _check_path(data)
        return
    if isinstance(data, bytes | bytearray | memoryview):
        raise TypeError("training data must be str or paths, not bytes: decode it or pass a path")
    if isinstance(data, Mapping):
        raise TypeError(
            "a mapping {group name: data} is a set of groups, which bpeds.train reads one "
            "group at a time; give one group's data (a str, a path, or an iterable of them) here"
        )
    if not isinstance(data, Iterable):
        raise TypeError(
            "training data must be a str, a path (os.PathLike), or an iterable of them, "
            f"got {type(data).__name__}"
        )
    if isinstance(data, list | tuple):
        for i, item in enumerate(data):
            if isinstance(item, os.PathLike):
                _check_path(item)
            elif not isinstance(item, str):
                raise _item_error(i, item)


def data_size(data: object) -> int | None:
    """The UTF-8 bytes of text in ``data`` when cheap to know (a ``str``, an uncompressed
    text file, a list or tuple of them), else ``None`` (iterators, compressed files,
    ``.jsonl`` and Parquet files, whose size is not their text's). For progress only.

    >>> data_size(["ab", "é"])
    4
    """
    if isinstance(data, str):
        return len(data) if data.isascii() else len(data.encode("utf-8", "replace"))
    if isinstance(data, os.PathLike):
        name = os.fspath(data).lower()
        if name.endswith((".gz", ".bz2", ".xz", ".zst", ".parquet", ".jsonl")):
            return None
        try:
            return os.path.getsize(data)
        except OSError:
            return None
    if isinstance(data, list | tuple):
        total = 0
        for item in data:
            size = data_size(item) if isinstance(item, str | os.PathLike) else None
            if size is None:
                return None
            total += size
        return total
    return None


def check_int(value: object, name: str, low: int | None) -> int:
    """``value`` if it is an int (not a bool) of at least ``low`` (``None``: any):
    ``TypeError`` for another type (``300.0``, ``"300"``, ``True``, ``None``),
    ``ValueError`` below ``low``; messages name the argument ``name``.

    >>> check_int(3, "workers", 1)
    3
    >>> check_int(True, "workers", 1)
    Traceback (most recent call last):
    ...
    TypeError: workers must be an int, got bool True
    """
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return value


def check_block_size(block_size: object) -> int:
    """``block_size`` if it is an ``int >= 1``: ``TypeError`` for another type, else ``ValueError``.

    >>> check_block_size(4096)
    4096
    """
    return check_int(block_size, "block_size", 1)


def refuse_file_names(data: object) -> None:
    """``ValueError`` when ``data`` is a ``str``, or a list or tuple of ``str``, that
    each name an existing file: a ``str`` is text, so training would learn the file
    names, which is never what was meant (Hugging Face's ``train(files=[...])`` takes
    names as strings).

    >>> refuse_file_names(["a text", "another"])  # text: nothing to say
    >>> refuse_file_names(["pyproject.toml"])
    Traceback (most recent call last):
    ...
    ValueError: the data is 1 str naming an existing file ('pyproject.toml'): ...

    To read the files, pass paths (``pathlib.Path``, or ``files=`` of
    :func:`bpeds.train`); to train on such strings as text, pass an iterator
    (``iter(items)``), which is not looked at. Complexity: one ``stat`` per item up to
    the first that names no file (the first, for text).
    """
    if isinstance(data, str):
        items: list[str] | tuple[str, ...] = [data]
    elif isinstance(data, list | tuple) and data:
        items = data
    else:
        return
    for item in items:
        if not (isinstance(item, str) and 0 < len(item) < 4096 and "\n" not in item):
            return
        try:
            if not os.path.isfile(item):
                return
        except (OSError, ValueError):
            return
    shown = ", ".join(repr(x) for x in items[:3]) + (", ..." if len(items) > 3 else "")
    n = len(items)
    raise ValueError(
        f"the data is {n} str naming {'an existing file' if n == 1 else 'existing files'} "
        f"({shown}): a str is text, so this would train on the names. To read the files, "
        "pass paths: bpeds.train(files=[...]) or [pathlib.Path(name) for name in names] "
        "(bpeds.count and bpeds.compare take paths too); to train on these strings as "
        "text, pass them as an iterator: iter(items)"
    )


def _item_error(i: int, item: object) -> TypeError:
    return TypeError(
        f"item {i} of the training data is a {type(item).__name__}; items must be str "
        "(one text each) or os.PathLike (one file each)"
    )


def _check_path(path: os.PathLike[str]) -> None:
    """A training file must exist and be neither a directory nor a device that never ends
    (checked before anything is read)."""
    name = os.fspath(path)
    if not os.path.exists(name):
        raise FileNotFoundError(errno.ENOENT, "no such training file", name)
    if os.path.isdir(name):
        raise IsADirectoryError(errno.EISDIR, "a directory, not a training file", name)
    mode = os.stat(name).st_mode
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        with _open_file(name):  # refuses /dev/zero and its kind; /dev/null reads as empty
            pass


def iter_units(data: object) -> Iterator[Unit]:
    """The units of ``data``: a str, a path, or an iterable of str and paths.

    >>> from pathlib import Path
    >>> list(iter_units("one text")), list(iter_units(iter(["a", Path("f.txt")])))
    (['one text'], ['a', PosixPath('f.txt')])

    ``bytes`` are refused (decode them, or pass a path), and so is a mapping
    (groups are :func:`bpeds.train`'s; give one group's data here):
    ``TypeError``, raised by :func:`check_data` before anything is yielded.
    """
    check_data(data)
    if isinstance(data, str | os.PathLike):
        yield data
        return
    assert isinstance(data, Iterable)
    for i, item in enumerate(data):
        if isinstance(item, str | os.PathLike):
            yield item
        else:
            raise _item_error(i, item)


def read_text_blocks(
    path: os.PathLike[str] | str, *, errors: Errors = "strict", block_size: int = DEFAULT_BLOCK_SIZE
) -> Iterator[str]:
    """Decode a UTF-8 file block by block (``block_size`` bytes read at a time).

    A character cut by a block boundary is completed from the next block.
    With ``errors="strict"`` invalid UTF-8 raises :class:`InvalidTextError`
    with the byte offset of the first bad byte. O(file size) time, O(block)
    memory.
    """
    errors = check_errors(errors)
    decoder = codecs.getincrementaldecoder("utf-8")(errors)
    offset = 0
    with open_binary(path) as f:
        while True:
            try:
                data = f.read(block_size)
            except _DECOMPRESSION_ERRORS as exc:
                if isinstance(exc, OSError) and not _is_data_error(exc):
                    raise  # an I/O error, not bad data
                raise InvalidTextError(
                    f"{os.fspath(path)}: the compressed data is cut short or corrupt after "
                    f"{offset} bytes of text ({exc}); its text cannot be read whole, so "
                    "nothing goes on with part of it: copy or download the file again",
                    os.fspath(path),
                    offset,
                ) from None
            final = not data
            pending = len(decoder.getstate()[0])
            try:
                text = decoder.decode(data, final)
            except UnicodeDecodeError as exc:
                at = offset - pending + exc.start
                raise InvalidTextError(
                    f"{os.fspath(path)}: invalid UTF-8 at byte offset {at} ({exc.reason}); "
                    "fix the file or pass errors='replace' (bpeds train --errors replace) "
                    "to read bad bytes as U+FFFD",
                    os.fspath(path),
                    at,
                ) from None
            offset += len(data)
            if text:
                yield text
            if final:
                return


def open_binary(path: os.PathLike[str] | str) -> IO[bytes]:
    """Open ``path`` for reading bytes, decompressing ``.gz``, ``.bz2``, ``.xz`` and ``.zst``.

    The name decides (not the contents). ``.zst`` without the ``zstandard``
    package raises ``ImportError`` saying what to install. Byte offsets in
    errors are then offsets in the decompressed text. A compressed file that
    ends inside a frame raises ``EOFError`` when that end is read, for
    ``.zst`` as Python's own modules do for the others. A device that never
    ends (``/dev/zero``) raises ``OSError`` before anything is read.
    """
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        return gzip.open(path, "rb")  # type: ignore[return-value]  # a GzipFile reads bytes
    if name.endswith(".bz2"):
        return bz2.open(path, "rb")
    if name.endswith(".xz"):
        return lzma.open(path, "rb")
    if name.endswith(".zst"):
        try:
            import zstandard  # type: ignore[import-not-found, unused-ignore]
        except ImportError:
            raise ImportError(
                f"{os.fspath(path)} is zstd-compressed: pip install 'bpeds[zstd]' (or "
                "zstandard) to read it"
            ) from None
        return io.BufferedReader(_ZstdFrames(_open_file(path), zstandard))
    return _open_file(path)


def _open_file(path: os.PathLike[str] | str) -> IO[bytes]:
    """``open(path, "rb")``, refusing a device that never ends (it would be read forever)."""
    f = open(path, "rb")  # noqa: SIM115 - returned open
    if is_endless(f.fileno()):
        f.close()
        raise OSError(errno.EINVAL, "a device that never ends, not a text file", os.fspath(path))
    return f


def is_endless(fd: int) -> bool:
    """Whether ``fd`` is a device that never ends (``/dev/zero``, ``/dev/urandom``): a
    character device that is neither a terminal nor ``/dev/null``. O(1)."""
    st = os.fstat(fd)
    if not stat.S_ISCHR(st.st_mode) or os.isatty(fd):
        return False
    try:
        return st.st_rdev != os.stat(os.devnull).st_rdev
    except OSError:
        return True


class _ZstdFrames(io.RawIOBase):
    """The decompressed bytes of a ``.zst`` file, frame after frame; a file that ends
    inside a frame raises ``EOFError`` (as ``gzip``, ``bz2`` and ``lzma`` do)."""

    def __init__(self, raw: IO[bytes], zstandard: Any) -> None:
        self._raw = raw
        self._new = zstandard.ZstdDecompressor().decompressobj
        self._error = zstandard.ZstdError
        self._frame = self._new()
        self._open = False  # inside a frame
        self._out = b""
        self._at = 0

    def readable(self) -> bool:
        return True

    def readinto(self, b: Any) -> int:
        while self._at == len(self._out):
            chunk = self._raw.read(1 << 16)
            if not chunk:
                if self._open:
                    raise EOFError("the file ends inside a zstd frame")
                return 0
            self._out, self._at = self._feed(chunk), 0
        n = min(len(b), len(self._out) - self._at)
        b[:n] = self._out[self._at : self._at + n]
        self._at += n
        return n

    def _feed(self, chunk: bytes) -> bytes:
        out = []
        while chunk:
            if not self._open:
                self._frame, self._open = self._new(), True
            try:
                out.append(self._frame.decompress(chunk))
            except self._error as exc:
                raise OSError(f"corrupt zstd data: {exc}") from None
            chunk = b""
            if self._frame.eof:
                self._open = False
                chunk = self._frame.unused_data
        return b"".join(out)

    def close(self) -> None:
        self._raw.close()
        super().close()


def _check_str(text: str, index: int, errors: Errors) -> str:
    m = _SURROGATE.search(text)
    if m is None:
        return text
    if errors == "replace":
        return _SURROGATE.sub("\ufffd", text)
    raise InvalidTextError(
        f"item {index} of the training data holds a lone surrogate U+{ord(m.group()):04X} at "
        "character offset "
        f"{m.start()}, which has no UTF-8 form; fix the text or pass errors='replace'",
        index,
        m.start(),
    )


class _Specials:
    __slots__ = ("maxlen", "rx")

    def __init__(self, texts: list[str]) -> None:
        self.rx = special_token_regex(texts)
        self.maxlen = max(map(len, texts))


def _safe_cut(buf: str, lo: int, hi: int) -> int | None:
    """The rightmost cut point ``c`` with ``lo + 2 <= c <= hi`` (``buf[c]`` must exist)."""
    if hi < lo + 2:
        return None
    m = _CUT.search(buf, lo, hi + 1)
    if m is None or m.start() < lo + 2:
        return None
    return m.start()


def _emit(buf: str, specials: _Specials | None, cut: bool, final: bool) -> tuple[list[str], str]:
    """Pieces of text that are safe to hand on, and the unconsumed rest of ``buf``.

    ``buf`` starts at the start of a segment or at a cut point.
    """
    out: list[str] = []
    n = len(buf)
    pos = 0
    horizon = n  # text at or after this may still change meaning (a special cut short)
    if specials is not None:
        z = n if final else n - specials.maxlen + 1
        for m in specials.rx.finditer(buf):
            if m.start() >= z:
                break
            out.append(buf[pos : m.start()])
            pos = m.end()
        horizon = min(n, max(z, pos))
    if final:
        out.append(buf[pos:])
        return out, ""
    if not cut:
        return out, buf[pos:]
    c = _safe_cut(buf, pos, min(horizon, n - 1))
    if c is None:
        return out, buf[pos:]
    out.append(buf[pos:c])
    return out, buf[c:]


def _unit_segments(
    blocks: Iterator[str], specials: _Specials | None, cut: bool, block_chars: int
) -> Iterator[str]:
    pending: list[str] = []
    size = 0
    threshold = block_chars
    for block in blocks:
        pending.append(block)
        size += len(block)
        if size < threshold:
            continue
        done, rest = _emit("".join(pending), specials, cut, final=False)
        yield from done
        pending = [rest] if rest else []
        size = len(rest)
        # If little could be handed on, wait for at least as much text again (geometric
        # growth keeps re-scanning a long uncuttable stretch linear overall).
        threshold = max(block_chars, 2 * size)
    done, _ = _emit("".join(pending), specials, cut, final=True)
    yield from done


def iter_segments(
    data: object,
    *,
    pattern: object = "gpt4",
    special_tokens: Iterable[str] = (),
    errors: Errors = "strict",
    block_size: int = DEFAULT_BLOCK_SIZE,
) -> Iterator[str]:
    """Pieces of text to split one by one: their chunks are the chunks of the units.

    For every unit of ``data`` (see the module docstring), special-token text
    is removed and the segments around it are yielded, each possibly in
    several pieces cut at safe points (never when ``pattern`` is ``None``).
    Splitting each yielded piece with the pattern gives exactly the chunks of
    splitting each segment whole (for the named patterns; for custom ones
    under the conditions above). Empty pieces are not yielded.

    >>> list(iter_segments(["ab cd<s>ef"], special_tokens=["<s>"]))
    ['ab cd', 'ef']
    >>> list(iter_segments(["ab cd ef"], block_size=3))
    ['ab', ' cd', ' ef']

    Complexity: O(total text) time (plus the special-token search), memory
    O(block_size + longest stretch without a cut point).
    """
    errors = check_errors(errors)
    check_block_size(block_size)
    texts = list(special_tokens)
    specials = _Specials(texts) if texts else None
    cut = pattern is not None
    for index, unit in enumerate(iter_units(data)):
        if not isinstance(unit, str) and is_jsonl(unit):
            for row in jsonl_texts(unit, errors=errors):  # each record its own unit
                row = _check_str(row, index, errors)  # (JSON escapes can make surrogates)
                for piece in _unit_segments(
                    _str_blocks(row, block_size), specials, cut, block_size
                ):
                    if piece:
                        yield piece
            continue
        if not isinstance(unit, str) and is_parquet(unit):
            for row in parquet_texts(unit):  # each row its own unit
                for piece in _unit_segments(
                    _str_blocks(row, block_size), specials, cut, block_size
                ):
                    if piece:
                        yield piece
            continue
        if isinstance(unit, str):
            blocks = _str_blocks(_check_str(unit, index, errors), block_size)
        else:
            blocks = read_text_blocks(unit, errors=errors, block_size=block_size)
        for piece in _unit_segments(blocks, specials, cut, block_size):
            if piece:
                yield piece


def _str_blocks(text: str, block_size: int) -> Iterator[str]:
    if len(text) <= block_size:
        return iter((text,))
    return (text[i : i + block_size] for i in range(0, len(text), block_size))


#: The text columns read from a Parquet file, the first one present: ``text`` (most text
#: datasets) or ``content`` (most code datasets).
PARQUET_COLUMNS = ("text", "content")


def is_parquet(path: os.PathLike[str] | str) -> bool:
    """Whether ``path`` is read as a Parquet file (its name ends in ``.parquet``)."""
    return os.fspath(path).lower().endswith(".parquet")


def is_jsonl(path: os.PathLike[str] | str) -> bool:
    """Whether ``path`` is read as JSON Lines: its name ends in ``.jsonl`` (or
    ``.jsonl.gz``, ``.jsonl.bz2``, ``.jsonl.xz``, ``.jsonl.zst``)."""
    name = os.fspath(path).lower()
    for ext in (".gz", ".bz2", ".xz", ".zst"):
        name = name.removesuffix(ext)
    return name.endswith(".jsonl")


def jsonl_texts(
    path: os.PathLike[str] | str, field: str = "text", *, errors: Errors = "strict"
) -> Iterator[str]:
    """The ``field`` of each record of a JSON Lines file (one JSON object per line),
    read a line at a time: each is one unit of training text.

    Blank lines and records whose field is ``null`` are skipped. A line that is not
    a JSON object, or a record without ``field`` or whose ``field`` is not a string,
    raises ``ValueError`` naming the file, the line and the fields it has; invalid
    UTF-8 raises :class:`InvalidTextError` (``errors="replace"``: U+FFFD). Memory:
    one record.
    """
    import json

    name = os.fspath(path)
    with open_binary(path) as f:
        for number, raw in enumerate(f, 1):
            if not raw.strip():
                continue
            try:
                line = raw.decode("utf-8", errors)
            except UnicodeDecodeError as exc:
                raise InvalidTextError(
                    f"{name}, line {number}: invalid UTF-8 ({exc.reason}); fix the file or "
                    "pass errors='replace'",
                    name,
                    number,
                ) from None
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise ValueError(f"{name}, line {number}: not JSON ({exc})") from None
            if not isinstance(record, dict):
                raise ValueError(f"{name}, line {number}: a record must be a JSON object")
            if field not in record:
                raise ValueError(
                    f"{name}, line {number}: no field {field!r} (the record has "
                    f"{sorted(record)}); choose one with bpeds.Records(path, field=...)"
                )
            text = record[field]
            if text is None:
                continue
            if not isinstance(text, str):
                raise ValueError(
                    f"{name}, line {number}: field {field!r} holds {type(text).__name__}, not text"
                )
            if text:
                yield text


def parquet_texts(path: os.PathLike[str] | str, column: str | None = None) -> Iterator[str]:
    """The rows of a Parquet file's text column, a batch at a time: ``column``, or by
    default the first of :data:`PARQUET_COLUMNS` the file has.

    Each row is one unit of training text; null rows are skipped. Needs
    ``pyarrow`` (``ImportError`` saying what to install). A file without such
    a column, or whose column does not hold strings, raises ``ValueError``
    naming the file and its columns; text that is not valid UTF-8 raises
    :class:`InvalidTextError` naming the file. Memory: one batch of rows.
    """
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        raise ImportError(
            f"{os.fspath(path)} is a Parquet file: pip install 'bpeds[parquet]' (or pyarrow) "
            "to read it"
        ) from None
    name = os.fspath(path)
    try:
        pf = pq.ParquetFile(name)
    except pa.ArrowException as exc:
        raise ValueError(f"{name}: not a readable Parquet file: {exc}") from None
    schema = pf.schema_arrow
    columns = [c for c in (PARQUET_COLUMNS if column is None else (column,)) if c in schema.names]
    if column is not None and not columns:
        raise ValueError(f"{name}: no column {column!r}; the file has {schema.names}")
    if not columns:
        raise ValueError(
            f"{name}: no text column: bpeds reads the column {' or '.join(PARQUET_COLUMNS)}, "
            f"the file has {schema.names}"
        )
    column = columns[0]
    kind = schema.field(column).type
    if not (pa.types.is_string(kind) or pa.types.is_large_string(kind)):
        raise ValueError(f"{name}: column {column!r} holds {kind}, not strings")
    try:
        for batch in pf.iter_batches(batch_size=1024, columns=[column]):
            for row in batch.column(0).to_pylist():
                if row:
                    yield row
    except pa.ArrowInvalid as exc:
        raise InvalidTextError(f"{name}: {exc}", name, 0) from None
