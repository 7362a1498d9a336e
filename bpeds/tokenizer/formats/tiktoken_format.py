"""tiktoken: ``.tiktoken`` rank files out and in, and live ``tiktoken.Encoding`` objects.

A ``.tiktoken`` file has one line per mergeable token, sorted by rank::

    <base64 of the token's bytes> <rank>

It holds neither the split pattern nor the special tokens: tiktoken keeps
those in code (``Encoding(name, pat_str=, mergeable_ranks=, special_tokens=)``),
so reading a file needs them as arguments. tiktoken encodes by *bytes rank*
(merge the adjacent pair whose concatenation is the lowest-ranked token), the
rule bpeds uses, with rank = id; so exporting keeps every id.

Importing derives the merges from the ranks: for each token, in rank order,
BPE over its bytes with only the lower-ranked tokens must end in exactly two
parts, and those are its merge (the method of minbpe's ``GPT4Tokenizer``).
A token that BPE cannot build that way is refused: bpeds would never produce
it, tiktoken would (it looks a whole piece up before running BPE).

The ``tiktoken`` package is optional: only :func:`to_tiktoken` and
:func:`from_tiktoken_encoding` need it, and they import it when called.
"""

from __future__ import annotations

import base64
import binascii
import itertools
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.files import write_files
from bpeds.tokenizer.formats._common import (
    FILE_IDS_TIE,
    FormatError,
    PathLike,
    bpe_parts,
    build_tokenizer,
    check_u32_ids,
    distinct_token_bytes,
    file_ids_tie,
    public_ids,
    read_bytes,
    refuse_normalizer,
    refuse_replay,
    renumber_specials,
)
from bpeds.tokenizer.limits import check_token_sizes
from bpeds.tokenizer.unicode_tables import ENGINE_UNICODE

if TYPE_CHECKING:
    import tiktoken

__all__ = [
    "NO_SPLIT_PATTERN",
    "from_tiktoken_encoding",
    "from_tiktoken_ranks",
    "load_tiktoken",
    "parse_tiktoken_ranks",
    "save_tiktoken",
    "tiktoken_file_bytes",
    "tiktoken_ranks",
    "to_tiktoken",
]

#: The ``pat_str`` standing for "no split" (``pattern=None``): the whole text is one piece.
NO_SPLIT_PATTERN = r"[\s\S]+"

_MAX_DIGITS = 18


def tiktoken_ranks(tok: Tokenizer) -> dict[bytes, int]:
    """``mergeable_ranks`` for tiktoken: every byte and merge token's bytes -> its id.

    >>> tiktoken_ranks(Tokenizer([(104, 105)], pattern=None))[b"hi"]
    256

    Two ids with the same bytes raise :class:`FormatError`.
    Complexity: O(total bytes of all tokens).
    """
    refuse_replay(tok, "a tiktoken rank file")
    refuse_normalizer(tok, "a tiktoken rank file")
    tokens = distinct_token_bytes(tok, "tiktoken's mergeable_ranks")
    public = public_ids(tok)
    merged = public[256:]
    if any(a >= b for a, b in itertools.pairwise(merged)):
        raise FormatError(
            "tiktoken ranks are ids, and this tokenizer's own ids of its merged tokens are "
            "not in merge order, so tiktoken would merge in another order: export "
            "tok.renumbered(), or a tokenizer.json"
        )
    ranks = dict(zip(tokens, public, strict=True))
    return dict(sorted(ranks.items(), key=lambda item: item[1]))


def tiktoken_file_bytes(tok: Tokenizer) -> bytes:
    """The ``.tiktoken`` file of ``tok``: ``base64 rank`` lines in rank order.

    >>> tiktoken_file_bytes(Tokenizer([(104, 105)], pattern=None)).splitlines()[-1]
    b'aGk= 256'

    Complexity: O(total bytes of all tokens).
    """
    ranks = tiktoken_ranks(tok)
    return b"".join(base64.b64encode(b) + b" %d\n" % i for b, i in ranks.items())


def save_tiktoken(tok: Tokenizer, path: PathLike, *, overwrite: bool = False) -> Path:
    """Write ``tok``'s ranks as a ``.tiktoken`` file (atomically).

    The pattern and special tokens are not part of the format: keep them
    (``tok.pattern``, ``tok.special_tokens``) to rebuild the encoding. Unless
    ``overwrite``, an existing file raises ``FileExistsError``.
    Complexity: O(total bytes of all tokens).
    """
    return write_files([(path, tiktoken_file_bytes(tok))], overwrite=overwrite)[0]


def to_tiktoken(tok: Tokenizer, name: str = "bpeds") -> tiktoken.Encoding:
    """``tok`` as a ``tiktoken.Encoding`` (needs the optional ``tiktoken`` package).

    ``pattern=None`` becomes :data:`NO_SPLIT_PATTERN`. The encoding gives the
    same ids as ``tok`` for every text when ``tok`` reads its pattern with tiktoken's
    Unicode tables (``tok.unicode == "16.0"``: tokenizers imported from tiktoken or Hugging
    Face files and trained with the ``rustbpe`` or ``hf`` presets; see
    :mod:`bpeds.tokenizer.unicode_tables`); with the ``regex`` module's tables, for every
    text without a code point the two read differently. Raises ``ImportError`` naming the
    package when it is missing, and :class:`FormatError` for a special id
    that does not fit in 32 bits (tiktoken's ranks are ``u32``).
    Complexity: O(total bytes of all tokens).
    """
    check_u32_ids(tok, "a tiktoken Encoding")
    refuse_normalizer(tok, "a tiktoken Encoding")
    try:
        import tiktoken
    except ImportError as exc:  # pragma: no cover - tiktoken is a dev dependency
        raise ImportError(
            "converting to a tiktoken Encoding needs the 'tiktoken' package (pip install tiktoken)"
        ) from exc
    return tiktoken.Encoding(
        name,
        pat_str=NO_SPLIT_PATTERN if tok.pattern is None else tok.pattern,
        mergeable_ranks=tiktoken_ranks(tok),
        special_tokens=tok.special_tokens,
    )


def parse_tiktoken_ranks(data: bytes, *, source: str = "<.tiktoken>") -> dict[bytes, int]:
    """The ``token bytes -> rank`` map of a ``.tiktoken`` file's contents.

    >>> parse_tiktoken_ranks(b"YQ== 97\\naGk= 256\\n")
    {b'a': 97, b'hi': 256}

    Blank lines are skipped (as tiktoken does). A line that is not
    ``<base64> <rank>``, invalid base64, an empty token, or a token or rank
    given twice raises :class:`FormatError` naming the line.
    Complexity: O(size of the data).
    """
    ranks: dict[bytes, int] = {}
    owner: dict[int, bytes] = {}
    for n, line in enumerate(data.split(b"\n"), 1):
        fields = line.split()
        if not fields:
            continue
        where = f"{source}, line {n}"
        if len(fields) != 2:
            raise FormatError(f"{where}: a line is '<base64 token> <rank>', got {line[:60]!r}")
        encoded, rank_text = fields
        if not rank_text.isdigit() or len(rank_text) > _MAX_DIGITS:
            raise FormatError(
                f"{where}: the rank must be a non-negative integer, got {rank_text[:20]!r}"
            )
        try:
            token = base64.b64decode(encoded, validate=True)
        except (binascii.Error, ValueError):
            raise FormatError(f"{where}: {encoded[:40]!r} is not valid base64") from None
        if not token:
            raise FormatError(f"{where}: a token must not be empty")
        rank = int(rank_text)
        if token in ranks:
            raise FormatError(f"{where}: token {token[:40]!r} is given twice")
        if rank in owner:
            raise FormatError(f"{where}: rank {rank} is given twice")
        ranks[token] = rank
        owner[rank] = token
    return ranks


def from_tiktoken_ranks(
    ranks: Mapping[bytes, int],
    *,
    pattern: str | None,
    special_tokens: Mapping[str, int] | None = None,
    renumber: bool = False,
    source: str = "<mergeable_ranks>",
    unicode: str | None = ENGINE_UNICODE,
) -> Tokenizer:
    """A tokenizer from tiktoken's ``mergeable_ranks``, a pattern and special tokens.

    >>> tok = from_tiktoken_ranks(
    ...     {**{bytes([b]): b for b in range(256)}, b"hi": 256, b"hi!": 257}, pattern=None
    ... )
    >>> tok.merges
    [(104, 105), (256, 33)]

    Every one of the 256 single bytes must have a rank. The ranks are the
    tokenizer's ids (:attr:`~bpeds.tokenizer.Tokenizer.ids` holds them when they
    are not bpeds's numbering, as GPT-2's and ``cl100k_base``'s are not);
    ``renumber=True`` keeps the rank *order* (which is all that bytes-rank encoding
    uses) and gives bpeds's ids: bytes by value, the rest from 256, special tokens
    after them. ``unicode``: the Unicode tables the pattern is read with, by default
    tiktoken's (``"16.0"``, so that encoding equals tiktoken's on every code point;
    ``None``: the ``regex`` module's). Raises
    :class:`FormatError` for a token no BPE over lower ranks builds (see the
    module docstring), and tokens beyond the length limits of
    :func:`~bpeds.tokenizer.limits.check_token_sizes` before any work on them.
    Complexity: O(sum over tokens of L log L) for tokens of L bytes, plus
    O(L^2) byte slicing in the worst case (L is at most
    :data:`~bpeds.tokenizer.limits.MAX_TOKEN_BYTES`).
    """
    for b in range(256):
        if bytes((b,)) not in ranks:
            raise FormatError(
                f"{source}: byte 0x{b:02x} has no rank, so some text could not be encoded"
            )
    multi = sorted((r, t) for t, r in ranks.items() if len(t) > 1)
    check_token_sizes((len(t) for _, t in multi), source, FormatError, 256)
    id_of: dict[bytes, int] = {bytes((b,)): b for b in range(256)}
    for k, (_, t) in enumerate(multi):
        id_of[t] = 256 + k
    ids: list[int] | None = None
    if not renumber:  # the ranks kept as the tokenizer's own ids
        ids = [0] * len(id_of)
        for t, r in ranks.items():
            ids[id_of[t]] = r
    merges: list[tuple[int, int]] = []
    for k, (rank, piece) in enumerate(multi):
        limit = 256 + k

        def by_bytes(
            left: int,
            right: int,
            start: int,
            mid: int,
            end: int,
            piece: bytes = piece,
            limit: int = limit,
        ) -> tuple[int, int] | None:
            i = id_of.get(piece[start:end])
            return None if i is None or i >= limit else (i, i)

        parts = bpe_parts(piece, by_bytes)
        if len(parts) != 2:
            shown = [piece[s:e] for s, e, _ in parts][:8]
            raise FormatError(
                f"{source}: token {piece[:40]!r} (rank {rank}) cannot be built by merging two "
                f"lower-ranked tokens: BPE with the lower ranks splits it into {len(parts)} "
                f"parts {shown}"
            )
        merges.append((parts[0][2], parts[1][2]))
    specials = dict(special_tokens or {})
    options: dict[str, Any] = {"imported_from": "tiktoken"}
    if renumber:
        specials = renumber_specials(specials, 256 + len(merges))
        tie = file_ids_tie({b: ranks[bytes((b,))] for b in range(256)})
        if tie is not None:
            options[FILE_IDS_TIE] = tie
    return build_tokenizer(
        source,
        merges,
        pattern=pattern,
        special_tokens=specials,
        options=options,
        unicode=unicode,
        ids=ids,
    )


def load_tiktoken(
    path: PathLike,
    *,
    pattern: str | None,
    special_tokens: Mapping[str, int] | None = None,
    renumber: bool = False,
    unicode: str | None = ENGINE_UNICODE,
) -> Tokenizer:
    """Read a ``.tiktoken`` file; the file has no pattern or special tokens, so pass them.

    ``pattern``: a name (``"gpt2"``, ``"gpt4"``, ``"gpt4o"``), a regex source,
    or ``None``. A missing file raises ``FileNotFoundError``; anything wrong
    with it, :class:`FormatError` (see :func:`parse_tiktoken_ranks` and
    :func:`from_tiktoken_ranks`). Complexity: as :func:`from_tiktoken_ranks`.
    """
    source = str(path)
    ranks = parse_tiktoken_ranks(read_bytes(path, "a .tiktoken file"), source=source)
    return from_tiktoken_ranks(
        ranks,
        pattern=pattern,
        special_tokens=special_tokens,
        renumber=renumber,
        source=source,
        unicode=unicode,
    )


def from_tiktoken_encoding(
    encoding: Any, *, renumber: bool = False, unicode: str | None = ENGINE_UNICODE
) -> Tokenizer:
    """A tokenizer from a live ``tiktoken.Encoding`` (its ranks, pattern and specials).

    A pattern equal to :data:`NO_SPLIT_PATTERN` becomes ``None``. Reads the
    encoding's ``_mergeable_ranks``, ``_pat_str`` and ``_special_tokens``
    (tiktoken has no public accessor for the ranks); raises ``TypeError`` for
    an object without them. Otherwise as :func:`from_tiktoken_ranks`.
    """
    try:
        ranks = encoding._mergeable_ranks
        pat_str = encoding._pat_str
        specials = encoding._special_tokens
    except AttributeError:
        raise TypeError(f"expected a tiktoken.Encoding, got {type(encoding).__name__}") from None
    return from_tiktoken_ranks(
        ranks,
        pattern=None if pat_str == NO_SPLIT_PATTERN else pat_str,
        special_tokens=specials,
        renumber=renumber,
        source=f"tiktoken encoding {getattr(encoding, 'name', '?')!r}",
        unicode=unicode,
    )
