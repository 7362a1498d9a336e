"""Counted pre-tokens: an artefact to save, add up and train from.

A :class:`Counts` holds the distinct pieces (pre-tokens) of some text, each
with how often it occurred, in order of first appearance, together with what
made them: the split pattern and the special tokens whose text was cut out.
:func:`bpeds.count` makes one from text or files (in processes, or on a Dask
cluster); :func:`bpeds.train` trains on one exactly as on the text itself.

>>> a = Counts({"ab": 2, " c": 1}, pattern="gpt4")
>>> b = Counts({" c": 4, "d": 1}, pattern="gpt4")
>>> list((a + b).items())
[('ab', 2), (' c', 5), ('d', 1)]

``a + b`` is what counting ``a``'s text and then ``b``'s gives: counts add
up, and the pieces keep their first appearance (``a``'s, then the pieces new
in ``b``), which the ``leftmost`` tie rule reads. So the counts of shards,
added in the shards' order, train to the merges of the whole corpus.

**The file** (:meth:`Counts.save`, :meth:`Counts.load`) is binary, written
and read in blocks, never held whole in memory besides the counts::

    magic     8 bytes   b"\\x93BPECNT\\n"
    version   u32 LE    1
    header    u32 LE length, then that many bytes of JSON (at most 1 MiB):
              {"pattern": str | null, "special_tokens": [str, ...],
               "pieces": int, "total": int}, and "unicode": str when the
              pattern's classes were read with other tables than the regex
              module's (bpeds.tokenizer.unicode_tables)
    blocks    each: u32 LE raw length, u32 LE compressed length, then the
              zlib-compressed block; a block with both lengths 0 ends them.
              A block (raw at most 64 MiB) is: u32 n, n u32 piece lengths
              (in characters), n u64 counts, then the n pieces as UTF-8.
    trailer   32 bytes: SHA-256 of every byte before it; then the end of file

All integers are little-endian. Pieces appear in first-appearance order.
Reading checks everything and trusts nothing: the magic and version, the
header's types, each block's lengths against the limits and against what
decompression gives, UTF-8, non-empty pieces, counts of at least 1, no piece
twice, the totals against the header, the checksum, and that nothing
follows; that the blocks decompress to at most :data:`MAX_INFLATION` times
the bytes read plus one block; that the header is JSON of bounded depth
without a key twice, whose special tokens are valid and do not overlap (as a
tokenizer's must) and whose pattern compiles within the limits of
:mod:`bpeds.tokenizer.pattern_safety`. Any problem raises
:class:`CountsFormatError` (a ``ValueError``) naming the file and what is
wrong. Memory while reading: one block plus the counts read so far, at most
about ``MAX_INFLATION`` times the file's size plus a block.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import pickle
import struct
import sys
import tempfile
import zlib
from array import array
from collections.abc import Iterable, Iterator, Mapping, Sequence
from itertools import accumulate
from pathlib import Path
from typing import Any, BinaryIO

from bpeds.errors import BpedsError
from bpeds.tokenizer._model_json import _no_duplicates
from bpeds.tokenizer.files import check_targets, write_stream
from bpeds.tokenizer.pretokenize import mark_from_file, pattern_label, resolve_pattern
from bpeds.tokenizer.special import check_special_texts
from bpeds.tokenizer.unicode_tables import check_unicode, unicode_differences

__all__ = [
    "FORMAT_VERSION",
    "MAGIC",
    "MAX_INFLATION",
    "Counts",
    "CountsFormatError",
    "SpillCounter",
    "iter_blocks",
    "sum_counts",
]

#: The first bytes of every counts file (a high byte first, so that a text-mode copy or a
#: 7-bit channel that mangles it is caught at once).
MAGIC = b"\x93BPECNT\n"
#: The file format's version; files of other versions are refused.
FORMAT_VERSION = 1
#: Largest header accepted, in bytes.
MAX_HEADER = 1 << 20
#: Largest block (uncompressed) written or accepted, in bytes; it bounds a piece's length.
MAX_BLOCK = 64 << 20
#: How many times their compressed size the blocks of a file may decompress to, beyond one
#: block (:data:`MAX_BLOCK`): written files stay far below (text 3-10 times, a table of long
#: runs of one character a few hundred), and a file made to inflate is refused before it does.
MAX_INFLATION = 64
#: Pieces aimed at per written block (raw size about ``BLOCK_TARGET`` bytes).
BLOCK_TARGET = 1 << 20
_LITTLE = sys.byteorder == "little"


class CountsFormatError(BpedsError, ValueError):
    """A counts file that is not valid: not a counts file, of another version,
    truncated, corrupt (checksum), or inconsistent. The message names the file."""


class Counts:
    """Distinct pieces with their counts, in first-appearance order, and how they were split.

    ``pieces``: a mapping ``{piece: count}`` or ``(piece, count)`` pairs
    (equal pieces add up; the first appearance sets the order); pieces are
    non-empty ``str`` without lone surrogates, counts ``int >= 1``.
    ``pattern``: the split pattern that made them (a name such as ``"gpt4"``,
    a regex source, or ``None`` for no split); it is stored as its regex
    source. ``unicode``: the Unicode tables the pattern's classes were read with
    (:mod:`bpeds.tokenizer.unicode_tables`; ``None``, the ``regex`` module's own, also
    whenever ``pattern`` is ``None``). ``special_tokens``: the texts that were cut out of
    the text before splitting. Bad values raise ``TypeError``/``ValueError`` naming
    them. A ``Counts`` is not changed after it is made (``+`` makes a new one).

    >>> c = Counts([("a", 1), ("b", 2), ("a", 3)], pattern=None)
    >>> c["a"], len(c), c.total, list(c)
    (4, 2, 6, ['a', 'b'])

    Complexity: O(pieces) to build, O(1) look-ups.
    """

    __slots__ = ("_pattern", "_pieces", "_special", "_total", "_unicode")

    def __init__(
        self,
        pieces: Mapping[str, int] | Iterable[tuple[str, int]] = (),
        *,
        pattern: str | None,
        special_tokens: Iterable[str] = (),
        unicode: str | None = None,
    ) -> None:
        self._pattern = resolve_pattern(pattern, unicode)[0]
        self._unicode = None if self._pattern is None else unicode
        self._special = _check_specials(special_tokens)
        table: dict[str, int] = {}
        get = table.get
        items = pieces.items() if isinstance(pieces, Mapping) else pieces
        for item in items:
            if not isinstance(item, tuple) or len(item) != 2:
                raise TypeError(f"pieces must be (piece, count) pairs, got {item!r}")
            p, n = item
            _check_piece(p, n)
            table[p] = get(p, 0) + n
        self._pieces = table
        self._total = sum(table.values())

    @classmethod
    def _trusted(
        cls,
        pieces: dict[str, int],
        pattern: str | None,
        special: tuple[str, ...],
        unicode: str | None = None,
    ) -> Counts:
        """A ``Counts`` owning ``pieces`` (checked by whoever made them; not copied)."""
        self = cls.__new__(cls)
        self._pieces = pieces
        self._pattern = pattern
        self._unicode = None if pattern is None else unicode
        self._special = special
        self._total = sum(pieces.values())
        return self

    # -- reading ------------------------------------------------------------------------------

    @property
    def pattern(self) -> str | None:
        """The regex source of the split pattern that made the pieces (``None``: no split)."""
        return self._pattern

    @property
    def unicode(self) -> str | None:
        """The Unicode tables the pattern's classes were read with (``None``: the ``regex``
        module's own; see :mod:`bpeds.tokenizer.unicode_tables`)."""
        return self._unicode

    def splits_alike(self, unicode: str | None) -> bool:
        """Whether these pieces are what splitting with ``unicode``'s tables gives too:
        the same tables, or no piece holds a code point the two read differently.

        >>> Counts({"ab": 1}, pattern="gpt4").splits_alike("16.0")
        True
        >>> Counts({"\u0558's": 1}, pattern="gpt4").splits_alike("16.0")
        False

        O(total length of the pieces) when the tables differ, else O(1).
        """
        if unicode == self._unicode or self._pattern is None:
            return True
        differ: set[int] = set()  # (a superset when both are versions: never too lenient)
        for tables in (check_unicode(unicode), self._unicode):
            if tables is not None:
                differ.update(unicode_differences(tables))
        return not any(not p.isascii() and not differ.isdisjoint(map(ord, p)) for p in self)

    @property
    def special_tokens(self) -> tuple[str, ...]:
        """The special-token texts cut out before splitting, in the order given."""
        return self._special

    @property
    def total(self) -> int:
        """How many pieces were counted (the sum of the counts)."""
        return self._total

    def __len__(self) -> int:
        """The number of distinct pieces."""
        return len(self._pieces)

    def __iter__(self) -> Iterator[str]:
        """The distinct pieces in order of first appearance."""
        return iter(self._pieces)

    def __contains__(self, piece: object) -> bool:
        return piece in self._pieces

    def __getitem__(self, piece: str) -> int:
        """The count of ``piece`` (``KeyError`` if it was never seen)."""
        return self._pieces[piece]

    def get(self, piece: str, default: int = 0) -> int:
        """The count of ``piece``, or ``default``."""
        return self._pieces.get(piece, default)

    def items(self) -> Iterator[tuple[str, int]]:
        """``(piece, count)`` in order of first appearance."""
        return iter(self._pieces.items())

    def as_dict(self) -> dict[str, int]:
        """A new ``{piece: count}`` dict in order of first appearance. O(pieces)."""
        return dict(self._pieces)

    def __eq__(self, other: object) -> bool:
        """Same pieces with the same counts, same pattern and same special tokens (as a set).

        The order of first appearance is not compared; compare ``list(a.items())`` for that.
        """
        if not isinstance(other, Counts):
            return NotImplemented
        return (
            self._pattern == other._pattern
            and self._unicode == other._unicode
            and set(self._special) == set(other._special)
            and self._pieces == other._pieces
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return (
            f"<Counts: {len(self)} distinct pieces, {self.total} in all, "
            f"pattern={pattern_label(self._pattern)}"
            + (f", unicode={self._unicode!r}" if self._unicode is not None else "")
            + (f", special_tokens={list(self._special)!r}" if self._special else "")
            + ">"
        )

    def __reduce__(self) -> tuple[Any, ...]:
        # Sent between processes as a plain dict (pickle's fastest container).
        return (Counts._trusted, (self._pieces, self._pattern, self._special, self._unicode))

    # -- adding ----------------------------------------------------------------------------------

    def __add__(self, other: Counts) -> Counts:
        """Counts of this text followed by ``other``'s: counts added, first appearances kept.

        Both must have been made with the same pattern and the same special
        tokens (``ValueError`` saying which differs). O(len(self) + len(other)).
        """
        if not isinstance(other, Counts):
            return NotImplemented
        return sum_counts([self, other])

    def compatible(self, other: Counts) -> None:
        """Raise ``ValueError`` unless ``other`` was split as this was (pattern, Unicode
        tables, special tokens)."""
        if self._pattern != other._pattern:
            raise ValueError(
                "cannot add counts made with different split patterns: "
                f"{pattern_label(self._pattern)} and {pattern_label(other._pattern)}"
            )
        if self._unicode != other._unicode:
            raise ValueError(
                "cannot add counts whose pattern read different Unicode tables: "
                f"unicode={self._unicode!r} and unicode={other._unicode!r}"
            )
        if set(self._special) != set(other._special):
            raise ValueError(
                "cannot add counts made with different special tokens: "
                f"{list(self._special)!r} and {list(other._special)!r}"
            )

    # -- the file -----------------------------------------------------------------------------

    def save(self, path: str | os.PathLike[str], *, overwrite: bool = False) -> Path:
        """Write the counts to ``path`` in the counts file format (see the module docstring).

        Streamed block by block and atomic (a reader never sees a partial
        file; a failure leaves ``path`` as it was). An existing file raises
        ``FileExistsError`` unless ``overwrite``; a missing directory
        ``FileNotFoundError``. A piece too long for one block (more than
        64 MiB of UTF-8) or a count of 2**64 or more raises ``ValueError``.
        Returns the path. O(total length of the pieces).
        """
        header = _header(
            self._pattern, self._unicode, self._special, len(self._pieces), self._total
        )
        return write_stream(path, _render(header, self._pieces.items()), overwrite=overwrite)

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Counts:
        """Read counts written by :meth:`save`, checking everything (see the module docstring).

        A file that is not valid raises :class:`CountsFormatError` naming
        ``path`` and the problem; an unreadable one ``OSError``. Memory: one
        block besides the counts. O(file size).
        """
        name = os.fspath(path)
        with open(path, "rb") as f:
            return _Reader(f, name).read()


def iter_blocks(
    path: str | os.PathLike[str], split: tuple[str | None, tuple[str, ...]] | None = None
) -> Iterator[dict[str, int]]:
    """The counts file at ``path`` block by block: each block's ``{piece: count}`` in order.

    Checked as :meth:`Counts.load` checks (the checksum and the totals once
    the last block has been given), except that a piece repeated in two
    blocks is not noticed (that needs every piece in memory). ``split``:
    the pattern source and special-token texts the file must have been
    counted with, else :class:`CountsFormatError` before any block. Memory:
    one block. O(file size).

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "c.counts"
    >>> _ = Counts({"ab": 2, "c": 1}, pattern=None).save(path)
    >>> list(iter_blocks(path, (None, ())))
    [{'ab': 2, 'c': 1}]
    """
    name = os.fspath(path)
    with open(path, "rb") as f:
        yield from _Reader(f, name).blocks(split)


def sum_counts(parts: Iterable[Counts]) -> Counts:
    """The counts of the parts' texts one after the other (``parts[0] + parts[1] + ...``).

    Adds into one table (not a new table per ``+``). An empty iterable raises
    ``ValueError``; parts split differently raise ``ValueError`` as ``+``
    does. O(total distinct pieces of the parts).
    """
    it = iter(parts)
    first = next(it, None)
    if first is None:
        raise ValueError("sum_counts needs at least one Counts")
    if not isinstance(first, Counts):
        raise TypeError(f"expected Counts, got {type(first).__name__}")
    table = dict(first._pieces)
    get = table.get
    for part in it:
        if not isinstance(part, Counts):
            raise TypeError(f"expected Counts, got {type(part).__name__}")
        first.compatible(part)
        if not table:
            table.update(part._pieces)
            continue
        for p, n in part._pieces.items():
            table[p] = get(p, 0) + n
    return Counts._trusted(table, first._pattern, first._special, first._unicode)


def _header(
    pattern: str | None, unicode: str | None, special: Sequence[str], pieces: int, total: int
) -> dict[str, Any]:
    """A counts file's header (``unicode`` only when it is not ``None``)."""
    return {
        "pattern": pattern,
        **({} if unicode is None else {"unicode": unicode}),
        "special_tokens": list(special),
        "pieces": pieces,
        "total": total,
    }


def _sum_list(parts: Sequence[Counts]) -> Counts:
    """:func:`sum_counts` of a list (a task of a tree reduction; also ``dask.bag``'s aggregate)."""
    return sum_counts(list(parts))


def _sum_args(*parts: Counts) -> Counts:
    """:func:`sum_counts` of the arguments (a task of a tree reduction on a Dask client)."""
    return sum_counts(parts)


# -- checks ----------------------------------------------------------------------------------


def _check_piece(piece: object, count: object) -> None:
    if not isinstance(piece, str) or not piece:
        raise ValueError(f"a piece must be a non-empty str, got {piece!r}")
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ValueError(f"the count of {piece!r} must be an int >= 1, got {count!r}")
    try:
        piece.encode("utf-8")
    except UnicodeEncodeError:
        raise ValueError(
            f"piece {piece!r} holds a lone surrogate, which has no UTF-8 form"
        ) from None


def _check_specials(special_tokens: Iterable[str]) -> tuple[str, ...]:
    """The special-token texts as a tuple, checked as a tokenizer's are (non-empty, no text
    twice, no lone surrogate, no two that overlap: :func:`check_special_texts`)."""
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of texts, not a str")
    return tuple(check_special_texts(special_tokens))


# -- writing ---------------------------------------------------------------------------------


def _le(a: array[int]) -> bytes:
    if not _LITTLE:  # pragma: no cover - big-endian machines
        a = array(a.typecode, a)
        a.byteswap()
    return a.tobytes()


def _block(pieces: list[str], counts: list[int]) -> bytes:
    lengths = array("I", map(len, pieces))
    try:
        values = array("Q", counts)
    except OverflowError:
        raise ValueError("a count of 2**64 or more cannot be saved") from None
    raw = b"".join(
        (struct.pack("<I", len(pieces)), _le(lengths), _le(values), "".join(pieces).encode())
    )
    if len(raw) > MAX_BLOCK:
        raise ValueError(
            f"a piece of {max(len(p.encode()) for p in pieces)} bytes is too long for a "
            f"counts file (blocks hold at most {MAX_BLOCK} bytes): split the text with a pattern"
        )
    packed = zlib.compress(raw, 6)
    return struct.pack("<II", len(raw), len(packed)) + packed


def _render(header: dict[str, Any], table: Iterable[tuple[str, int]]) -> Iterator[bytes]:
    digest = hashlib.sha256()

    def out(chunk: bytes) -> bytes:
        digest.update(chunk)
        return chunk

    head = json.dumps(header, ensure_ascii=False).encode()
    yield out(MAGIC + struct.pack("<II", FORMAT_VERSION, len(head)) + head)
    pieces: list[str] = []
    counts: list[int] = []
    size = 0
    for p, n in table:
        pieces.append(p)
        counts.append(n)
        size += 12 + len(p)
        if size >= BLOCK_TARGET:
            yield out(_block(pieces, counts))
            pieces, counts, size = [], [], 0
    if pieces:
        yield out(_block(pieces, counts))
    yield out(struct.pack("<II", 0, 0))
    yield digest.digest()


# -- reading ---------------------------------------------------------------------------------


class _Reader:
    """One pass over a counts file, hashing what it reads."""

    def __init__(self, f: BinaryIO, name: str) -> None:
        self.f = f
        self.name = name
        self.digest = hashlib.sha256()
        self.pattern: str | None = None
        self.unicode: str | None = None
        self.special: tuple[str, ...] = ()
        self.pieces = self.total = 0  # what the header says
        self.records = self.counted = self.packed_total = self.raw_total = 0  # read so far

    def fail(self, what: str) -> CountsFormatError:
        return CountsFormatError(f"{self.name}: {what}")

    def take(self, n: int, what: str) -> bytes:
        data = self.f.read(n)
        if len(data) != n:
            raise self.fail(f"truncated: the file ends inside {what}")
        self.digest.update(data)
        return data

    def start(self) -> None:
        """Read the magic, the version and the header: ``pattern``, ``special``, ``pieces``
        and ``total`` are set."""
        magic = self.f.read(len(MAGIC))
        if magic != MAGIC:
            raise self.fail("not a bpeds counts file (it does not start with the counts magic)")
        self.digest.update(magic)
        version, size = struct.unpack("<II", self.take(8, "the header"))
        if version != FORMAT_VERSION:
            raise self.fail(
                f"counts file version {version} is not supported (this bpeds reads version "
                f"{FORMAT_VERSION})"
            )
        if size > MAX_HEADER:
            raise self.fail(f"the header claims {size} bytes (at most {MAX_HEADER})")
        self.pattern, self.unicode, self.special, self.pieces, self.total = self.header(
            self.take(size, "the header")
        )

    def next_block(self, table: dict[str, int]) -> bool:
        """Add the next block's pieces to ``table`` (a piece already there is an error);
        ``False`` at the end of the blocks."""
        raw_len, packed_len = struct.unpack("<II", self.take(8, "a block's lengths"))
        if raw_len == 0 and packed_len == 0:
            return False
        if not 4 <= raw_len <= MAX_BLOCK or packed_len == 0 or packed_len > MAX_BLOCK + 1024:
            raise self.fail(f"a block has impossible lengths ({raw_len}, {packed_len})")
        self.packed_total += packed_len
        self.raw_total += raw_len
        if self.raw_total > MAX_INFLATION * self.packed_total + MAX_BLOCK:
            raise self.fail(
                f"its blocks decompress to {self.raw_total} bytes from {self.packed_total}, "
                f"more than {MAX_INFLATION} times as many plus one block: it is not a file "
                "bpeds wrote (bpeds.tokenizer.counts.MAX_INFLATION)"
            )
        raw = self.inflate(self.take(packed_len, "a block"), raw_len)
        n, block_total = self.block(raw, table)
        self.records += n
        self.counted += block_total
        if self.records > self.pieces:
            raise self.fail(f"more pieces than the header's {self.pieces}")
        return True

    def finish(self) -> None:
        """Check the checksum, the end of the file and the totals against the header."""
        expected = self.digest.digest()
        trailer = self.f.read(32)
        if len(trailer) != 32:
            raise self.fail("truncated: the checksum at the end is missing")
        if trailer != expected:
            raise self.fail("checksum mismatch: the file is corrupt")
        if self.f.read(1):
            raise self.fail("unexpected bytes after the checksum")
        if self.records != self.pieces or self.counted != self.total:
            raise self.fail(
                f"the header says {self.pieces} pieces ({self.total} in all), the blocks hold "
                f"{self.records} ({self.counted} in all)"
            )

    def read(self) -> Counts:
        """The whole file as :class:`Counts`, every check made."""
        self.start()
        table: dict[str, int] = {}
        while self.next_block(table):
            pass
        self.finish()
        if len(table) != self.records:
            raise self.fail(f"{self.records - len(table)} piece(s) appear more than once")
        return Counts._trusted(table, self.pattern, self.special, self.unicode)

    def blocks(self, split: tuple[str | None, tuple[str, ...]] | None) -> Iterator[dict[str, int]]:
        """Each block as its own table, in order; the checks of :meth:`read` but for pieces
        repeated across blocks. A header that does not say ``split`` (pattern, special
        tokens) raises before any block."""
        self.start()
        if split is not None and (self.pattern, set(self.special)) != (split[0], set(split[1])):
            raise self.fail(
                f"it was counted with the pattern {pattern_label(self.pattern)} and special "
                f"tokens {list(self.special)!r}, not {pattern_label(split[0])} and "
                f"{list(split[1])!r}"
            )
        while True:
            table: dict[str, int] = {}
            if not self.next_block(table):
                break
            yield table
        self.finish()

    def header(self, data: bytes) -> tuple[str | None, str | None, tuple[str, ...], int, int]:
        try:
            head = json.loads(data.decode("utf-8"), object_pairs_hook=_no_duplicates)
        except (UnicodeDecodeError, ValueError) as exc:
            raise self.fail(f"the header is not valid JSON: {exc}") from None
        except RecursionError:
            raise self.fail("the header is not valid JSON: it is nested too deeply") from None
        keys = {"pattern", "special_tokens", "pieces", "total"}
        if not isinstance(head, dict) or not keys <= set(head) <= keys | {"unicode"}:
            raise self.fail(
                f"the header must be a JSON object with the keys {sorted(keys)} (and "
                "optionally 'unicode')"
            )
        pattern, special = head["pattern"], head["special_tokens"]
        pieces, total = head["pieces"], head["total"]
        if pattern is not None and not isinstance(pattern, str):
            raise self.fail("the header's pattern must be a string or null")
        if not isinstance(special, list) or not all(isinstance(t, str) and t for t in special):
            raise self.fail("the header's special_tokens must be a list of non-empty strings")
        for key, value in (("pieces", pieces), ("total", total)):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise self.fail(f"the header's {key} must be an int >= 0")
        unicode = head.get("unicode")
        try:
            if "unicode" in head and (pattern is None or unicode is None):
                raise ValueError("a 'unicode' key needs a pattern and a value")
            source = resolve_pattern(pattern, check_unicode(unicode))[0]
            specials = _check_specials(special)
        except (ValueError, TypeError) as exc:
            raise self.fail(f"the header is invalid: {exc}") from None
        mark_from_file(source)  # matched with a time limit wherever it is used from now on
        return source, unicode, specials, pieces, total

    def inflate(self, packed: bytes, raw_len: int) -> bytes:
        d = zlib.decompressobj()
        try:
            raw = d.decompress(packed, raw_len)
            tail_ok = d.eof and not d.unused_data and not d.unconsumed_tail
        except zlib.error as exc:
            raise self.fail(f"a block does not decompress: {exc}") from None
        if len(raw) != raw_len or not tail_ok:
            raise self.fail(f"a block does not decompress to its declared {raw_len} bytes")
        return raw

    def block(self, raw: bytes, table: dict[str, int]) -> tuple[int, int]:
        (n,) = struct.unpack_from("<I", raw)
        text_at = 4 + 12 * n
        if n == 0 or text_at > len(raw):
            raise self.fail(f"a block claims {n} pieces, which its size cannot hold")
        lengths = array("I")
        lengths.frombytes(raw[4 : 4 + 4 * n])
        counts = array("Q")
        counts.frombytes(raw[4 + 4 * n : text_at])
        if not _LITTLE:  # pragma: no cover - big-endian machines
            lengths.byteswap()
            counts.byteswap()
        try:
            text = raw[text_at:].decode("utf-8")
        except UnicodeDecodeError as exc:
            raise self.fail(f"a block's pieces are not valid UTF-8: {exc.reason}") from None
        if sum(lengths) != len(text):
            raise self.fail("a block's piece lengths do not add up to its text")
        if min(lengths) == 0:
            raise self.fail("a block holds an empty piece")
        if min(counts) == 0:
            raise self.fail("a block holds a count of 0")
        ends = list(accumulate(lengths))
        starts = [0, *ends[:-1]]
        get = table.get
        for s, e, c in zip(starts, ends, counts, strict=True):
            p = text[s:e]
            if get(p) is not None:
                raise self.fail(f"the piece {p!r} appears more than once")
            table[p] = c
        return n, sum(counts)


# -- counting in bounded memory ---------------------------------------------------------------

#: Bytes a distinct piece is taken to cost in a table besides its characters: the ``str``
#: and ``int`` objects and the dict slot (about 150 for short ASCII pieces, measured with
#: tracemalloc). The estimate counts characters, not bytes, for the text.
ENTRY_BYTES = 150
#: Entries per pickled chunk of a run file: a merge holds one chunk per run (about 0.3 MB).
_RUN_CHUNK = 2048


class SpillCounter:
    """Adds partial counts into a table kept under a memory budget, spilling to disk.

    When the table's estimated size (:data:`ENTRY_BYTES` plus the length of
    each distinct piece) passes a third of ``max_memory`` bytes, it is
    written, sorted by piece, to a *run* file in a private temporary
    directory (under ``directory``, default the system's) and emptied; a
    third, because sorting it for the run takes about as much again, and the
    part being added needs room too. At the end the runs are merged
    exactly: equal pieces add up and keep their earliest appearance, so the
    result is what one unbounded table gives, order of first appearance
    included. The run files are this process's own (pickled chunks, read back
    only by it) and are deleted by :meth:`close` (or leaving the ``with``
    block).

    >>> with SpillCounter(400) as sc:
    ...     for part in ({"a": 1, "b": 2}, {"c": 1, "a": 5}, {"b": 1, "d": 1}):
    ...         sc.add(part)
    ...     sc.runs > 0, list(sc.counts(None, ()).items())
    (True, [('a', 6), ('b', 3), ('c', 1), ('d', 1)])

    Complexity: O(P log P) for P pieces added (sorting the runs, then a k-way
    merge); memory about ``max_memory`` besides the result.
    """

    def __init__(self, max_memory: int, directory: str | os.PathLike[str] | None = None) -> None:
        if isinstance(max_memory, bool) or not isinstance(max_memory, int) or max_memory < 1:
            raise ValueError(f"max_memory must be an int >= 1 (bytes), got {max_memory!r}")
        self._limit = max_memory // 3
        self._where = directory
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._runs: list[Path] = []
        self._files = 0
        self._table: dict[str, int] = {}
        self._size = 0
        self._offset = 0  # the order (first appearance) of the current table's first piece

    @property
    def runs(self) -> int:
        """How many runs were written to disk so far."""
        return len(self._runs)

    def __enter__(self) -> SpillCounter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        """Delete the run files (idempotent)."""
        if self._dir is not None:
            self._dir.cleanup()
            self._dir = None
        self._runs = []

    def add(self, part: Mapping[str, int]) -> None:
        """Add ``{piece: count}`` (its order is the order of first appearance); spill if over.

        O(len(part)), plus a spill's O(n log n) when the table passes the budget.
        """
        table = self._table
        get = table.get
        size = self._size
        for k, v in part.items():
            old = get(k)
            if old is None:
                table[k] = v
                size += ENTRY_BYTES + len(k)
            else:
                table[k] = old + v
        self._size = size
        if size > self._limit:
            self._spill()

    def _spill(self) -> None:
        table = self._table
        table.pop("", None)
        if not table:
            return
        entries = sorted(
            zip(table, table.values(), range(self._offset, self._offset + len(table)), strict=True),
            key=_first,
        )
        self._offset += len(table)
        self._table = {}
        self._size = 0
        self._runs.append(self._write_run(entries))

    def _write_run(self, entries: list[Any]) -> Path:
        if self._dir is None:
            self._dir = tempfile.TemporaryDirectory(prefix="bpeds-counts-", dir=self._where)
        self._files += 1
        path = Path(self._dir.name) / f"run{self._files}.bin"
        with open(path, "wb") as f:
            for i in range(0, len(entries), _RUN_CHUNK):
                pickle.dump(entries[i : i + _RUN_CHUNK], f, protocol=pickle.HIGHEST_PROTOCOL)
        return path

    @staticmethod
    def _read_run(path: Path) -> Iterator[Any]:
        # Only files this process wrote, in its own private directory, are read here.
        with open(path, "rb") as f:
            while True:
                try:
                    chunk = pickle.load(f)
                except EOFError:
                    return
                yield from chunk

    def _merged(self) -> Iterator[tuple[str, int, int]]:
        """Every piece once, sorted by piece: ``(piece, count, order)``. Empties the table."""
        self._spill()
        current: str | None = None
        total = order = 0
        streams = [self._read_run(r) for r in self._runs]
        for piece, n, o in heapq.merge(*streams, key=_first):
            if piece == current:
                total += n
                order = min(order, o)
                continue
            if current is not None:
                yield current, total, order
            current, total, order = piece, n, o
        if current is not None:
            yield current, total, order

    def counts(
        self,
        pattern: str | None,
        special_tokens: tuple[str, ...],
        min_count: int = 1,
        unicode: str | None = None,
    ) -> Counts:
        """The counts added so far (pieces counted fewer than ``min_count`` times left out)."""
        if not self._runs:
            table = self._table
            table.pop("", None)
            self._table, self._size = {}, 0
        else:
            entries = sorted((o, p, n) for p, n, o in self._merged())
            table = {p: n for _, p, n in entries}
            del entries
        if min_count > 1:
            table = {p: n for p, n in table.items() if n >= min_count}
        return Counts._trusted(table, pattern, special_tokens, unicode)

    def save(
        self,
        path: str | os.PathLike[str],
        pattern: str | None,
        special_tokens: tuple[str, ...],
        *,
        overwrite: bool = False,
        min_count: int = 1,
        unicode: str | None = None,
    ) -> tuple[int, int]:
        """Write the counts added so far to a counts file without holding them all.

        The merged pieces are sorted back into order of first appearance by
        a second external sort (runs under the same budget). Returns
        ``(distinct pieces, total)`` written. Same file and errors as
        :meth:`Counts.save`.
        """
        if not self._runs:
            c = self.counts(pattern, special_tokens, min_count, unicode)
            c.save(path, overwrite=overwrite)
            return len(c), c.total
        check_targets([path], overwrite=overwrite)
        pieces = total = size = 0
        buffer: list[tuple[int, str, int]] = []
        by_order: list[Path] = []
        for p, n, o in self._merged():
            if n < min_count:
                continue
            pieces += 1
            total += n
            buffer.append((o, p, n))
            size += ENTRY_BYTES + len(p)
            if size > self._limit:
                buffer.sort()
                by_order.append(self._write_run(buffer))
                buffer, size = [], 0
        buffer.sort()
        streams: list[Iterator[Any]] = [self._read_run(r) for r in by_order]
        streams.append(iter(buffer))
        ordered = ((p, n) for _, p, n in heapq.merge(*streams))
        header = _header(pattern, unicode, special_tokens, pieces, total)
        write_stream(path, _render(header, ordered), overwrite=overwrite)
        return pieces, total


def _first(entry: tuple[Any, ...]) -> Any:
    return entry[0]
