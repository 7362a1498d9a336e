"""Encoding text to ids and decoding ids to text, with tiktoken's semantics.

**Ranks are bytes.** The *rank* of a byte string is the id of the token with
those bytes (ids ``0..255`` are the single bytes, merge ``k`` made
``256 + k``). If several merges made the same bytes, the lowest id is the
rank and the higher ids are never produced by encoding (tiktoken, which needs
unique bytes, is given exactly these lowest ids; decoding accepts every id).

**Encoding one piece** (:func:`bpe`): start from the piece's single bytes and
repeatedly merge the adjacent pair of parts whose *concatenated bytes* has the
lowest rank, the leftmost such pair on ties, until no adjacent concatenation
is a token. This is tiktoken's algorithm: it ranks the concatenation, not the
pair of ids that training merged, so a token can be reached through parents
other than the ones it was trained from. A whole piece that is a token is
that token at once.

**Encoding text** (:meth:`Encoder.encode`): special-token text is found first
(leftmost, then longest), the ordinary text between special tokens is split
by the pattern, each piece is encoded as above. Text that corresponds to a
special token but is not allowed raises :class:`SpecialTokenError` unless it
is excluded from ``disallowed_special``, exactly as ``tiktoken.Encoding.encode``
does. Lone surrogates (which have no UTF-8 form) are replaced by U+FFFD as
tiktoken does (a surrogate *pair* written as two code points becomes the one
character it encodes); this is the only case where ``decode(encode(x)) != x``.

Not handled here: training, files, the tokenizer's validation. This module
sits below :mod:`bpeds.tokenizer.core` and knows nothing of it: ``encode_batch``
takes any picklable object with ``encode``/``encode_ordinary`` methods.
"""

from __future__ import annotations

import codecs
import heapq
import os
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from functools import partial
from typing import Any, Literal, Protocol

import regex

from bpeds.errors import BpedsError
from bpeds.processes import reporting_lost_workers, worker_started
from bpeds.tokenizer.fastsplit import fast_findall
from bpeds.tokenizer.pattern_safety import TimedPattern
from bpeds.tokenizer.pretokenize import CompiledPattern
from bpeds.tokenizer.special import special_token_regex

__all__ = [
    "BatchEncoder",
    "Encoder",
    "SpecialTokenError",
    "UnknownTokenError",
    "as_token_id",
    "bpe",
    "fix_surrogates",
    "rank_table",
    "special_token_regex",
    "token_table",
]

_NONE = 1 << 62  # larger than every rank: "this concatenation is not a token"

#: Pieces up to this many bytes use the quadratic scan; longer ones the heap.
SHORT_PIECE = 64
#: The piece cache holds at most this many pieces; when full it is emptied.
CACHE_SIZE = 1 << 16
#: Pieces longer than this (in characters) are never cached.
CACHE_MAX_PIECE = 256
#: ``encode_batch(workers=None)`` uses processes from this many characters on.
PARALLEL_MIN_CHARS = 1 << 20

Special = Literal["all"] | Collection[str]


class SpecialTokenError(BpedsError, ValueError):
    """The text holds a special token's text that ``encode`` was told not to accept."""


class UnknownTokenError(BpedsError, ValueError):
    """An id or token that the tokenizer does not have (e.g. in ``decode``)."""


def fix_surrogates(text: str) -> str:
    """Replace lone surrogates by U+FFFD and join surrogate pairs, as tiktoken does.

    >>> fix_surrogates("a\\ud83d\\ude00b\\udc00")
    'a😀b\\ufffd'
    """
    return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")


def _bpe_short(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Quadratic scan: fast for short pieces. O(n^2) with small constants."""
    get = ranks.get
    n = len(piece)
    bounds = list(range(n + 1))  # part i is piece[bounds[i]:bounds[i + 1]]
    pair = [get(piece[i : i + 2], _NONE) for i in range(n - 1)]  # rank of parts i + (i+1)
    while pair:
        best = min(pair)
        if best == _NONE:
            break
        i = pair.index(best)  # leftmost on ties
        del bounds[i + 1]
        del pair[i]
        if i < len(pair):
            pair[i] = get(piece[bounds[i] : bounds[i + 2]], _NONE)
        if i > 0:
            pair[i - 1] = get(piece[bounds[i - 1] : bounds[i + 1]], _NONE)
    return [ranks[piece[bounds[i] : bounds[i + 1]]] for i in range(len(bounds) - 1)]


def _bpe_heap(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Heap of candidate merges over a linked list of parts, stale entries skipped.

    A part is named by its start offset; ``nxt[i]`` is its end (``-1`` once it
    was absorbed by the part on its left). A heap entry ``(rank, i, j, k)``
    proposes merging parts ``[i, j)`` and ``[j, k)``; it is live iff
    ``nxt[i] == j and nxt[j] == k`` (then its bytes, hence its rank, are
    unchanged). Entries order by rank, then start: the leftmost lowest rank.
    O(n log n).
    """
    get = ranks.get
    n = len(piece)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    heap: list[tuple[int, int, int, int]] = []
    for i in range(n - 1):
        r = get(piece[i : i + 2])
        if r is not None:
            heap.append((r, i, i + 1, i + 2))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    while heap:
        _, i, j, k = pop(heap)
        if nxt[i] != j or nxt[j] != k:
            continue
        nxt[i] = k
        nxt[j] = -1
        if k < n:
            prv[k] = i
            kk = nxt[k]
            r = get(piece[i:kk])
            if r is not None:
                push(heap, (r, i, k, kk))
        if i > 0:
            p = prv[i]
            r = get(piece[p:k])
            if r is not None:
                push(heap, (r, p, i, k))
    out: list[int] = []
    i = 0
    while i < n:
        j = nxt[i]
        out.append(ranks[piece[i:j]])
        i = j
    return out


def bpe(piece: bytes, ranks: Mapping[bytes, int]) -> list[int]:
    """Encode one piece by rank of concatenated bytes, leftmost on ties (tiktoken's rule).

    ``ranks`` must hold every single byte. Equivalent to: while some adjacent
    concatenation of parts is in ``ranks``, merge the leftmost one of lowest
    rank; return the parts' ranks.

    >>> ranks = {bytes([b]): b for b in range(256)} | {b"ab": 256, b"bc": 257, b"abc": 258}
    >>> bpe(b"abcab", ranks)
    [258, 256]
    >>> bpe(b"", ranks)
    []

    Complexity: O(1) when the piece is a token, O(n^2) for pieces of at most
    :data:`SHORT_PIECE` bytes, O(n log n) for longer ones.
    """
    r = ranks.get(piece)
    if r is not None:
        return [r]
    if not piece:
        return []
    if len(piece) <= SHORT_PIECE:
        return _bpe_short(piece, ranks)
    return _bpe_heap(piece, ranks)


def token_table(merges: Iterable[tuple[int, int]]) -> list[bytes]:
    """The bytes of every byte and merge token, by id: ``table[256 + k]`` is what merge
    ``k`` makes.

    >>> token_table([(104, 105), (256, 33)])[256:]
    [b'hi', b'hi!']

    O(total bytes of the tokens).
    """
    table = [bytes((b,)) for b in range(256)]
    for a, b in merges:
        table.append(table[a] + table[b])
    return table


def rank_table(table: Iterable[bytes]) -> dict[bytes, int]:
    """``{token bytes: id}`` over ``table`` (see :func:`token_table`), the lowest id for
    bytes that several tokens have: the ranks :func:`bpe` merges by.

    >>> rank_table([b"a", b"b", b"ab", b"ab"])[b"ab"]
    2

    O(total bytes).
    """
    ranks: dict[bytes, int] = {}
    for i, b in enumerate(table):
        ranks.setdefault(b, i)
    return ranks


def _check_specials_arg(value: object, name: str) -> Literal["all"] | frozenset[str]:
    if value == "all":
        return "all"
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        raise TypeError(
            f'{name} must be "all" or a collection of special-token texts, got {value!r}'
        )
    out = frozenset(value)
    for t in out:
        if not isinstance(t, str):
            raise TypeError(f"{name} must hold str texts, found {t!r}")
    return out


class Encoder:
    """The encoding and decoding tables of one tokenizer, with a piece cache.

    ``table[i]`` is the bytes of token ``i`` for every byte and merge id;
    ``pattern`` is the compiled split regex or ``None`` (text is split by
    :func:`bpeds.tokenizer.fastsplit.fast_findall`: exactly its ``findall``, at ``re``'s
    speed on ASCII stretches); ``special`` maps text to id. Building costs
    O(total bytes of all tokens); the tables are what tiktoken keeps too.
    ``piece`` encodes one piece's bytes (default: :func:`bpe` by rank); ``join``, if
    given, turns the pieces' ids of a stretch of ordinary text into its ids
    (BoundlessBPE's supermerges across pre-tokens; default: concatenation).
    """

    __slots__ = (
        "_cache",
        "_decoder",
        "_findall",
        "_join",
        "_piece",
        "_regexes",
        "ranks",
        "special",
    )

    def __init__(
        self,
        table: Sequence[bytes],
        pattern: CompiledPattern | TimedPattern | None,
        special: Mapping[str, int],
        *,
        piece: Callable[[bytes], list[int]] | None = None,
        join: Callable[[list[list[int]]], list[int]] | None = None,
    ) -> None:
        self.ranks = ranks = rank_table(table)
        self.special = dict(special)
        decoder: dict[int, bytes] = dict(enumerate(table))
        for text, i in self.special.items():
            decoder[i] = text.encode("utf-8")
        self._decoder = decoder
        # (a pattern not of bpeds's own is matched with a time limit, without the fast path)
        self._findall: Callable[[str], list[str]] | None = (
            None
            if pattern is None
            else pattern.findall
            if isinstance(pattern, TimedPattern)
            else fast_findall(pattern)
        )
        self._cache: dict[str, list[int]] = {}
        self._regexes: dict[frozenset[str], regex.Pattern[str]] = {}
        #: Encodes one piece's bytes: :func:`bpe` by rank, or the tokenizer's own rule
        #: when it is not rank merging (a loop variant's event log: see bpeds.tokenizer.replay).
        self._piece: Callable[[bytes], list[int]] = (
            partial(bpe, ranks=ranks) if piece is None else piece
        )
        self._join = join

    # -- encoding -------------------------------------------------------------------------

    def _ordinary(self, text: str) -> list[int]:
        encode = self._piece
        findall = self._findall
        if findall is None:
            return encode(text.encode("utf-8"))
        cache = self._cache
        out: list[int] = []
        joined: list[list[int]] | None = None if self._join is None else []
        for piece in findall(text):
            ids = cache.get(piece)
            if ids is None:
                ids = encode(piece.encode("utf-8"))
                if len(piece) <= CACHE_MAX_PIECE:
                    if len(cache) >= CACHE_SIZE:
                        cache.clear()
                    cache[piece] = ids
            if joined is not None:
                joined.append(ids)
            else:
                out += ids
        if joined is not None and self._join is not None:
            return self._join(joined)
        return out

    def encode_ordinary(self, text: str) -> list[int]:
        """Encode ``text`` ignoring special tokens (their text is ordinary text).

        Complexity: O(len(text)) regex work plus, per piece not in the cache,
        :func:`bpe`'s cost.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        try:
            return self._ordinary(text)
        except UnicodeEncodeError:
            return self._ordinary(fix_surrogates(text))

    def _regex(self, texts: frozenset[str]) -> regex.Pattern[str]:
        rx = self._regexes.get(texts)
        if rx is None:
            if len(self._regexes) >= 64:
                self._regexes.clear()
            rx = self._regexes[texts] = special_token_regex(texts)
        return rx

    def resolve_special(
        self, allowed_special: Special, disallowed_special: Special
    ) -> tuple[frozenset[str], frozenset[str]]:
        """The (allowed, disallowed) sets, as tiktoken computes them."""
        allowed = _check_specials_arg(allowed_special, "allowed_special")
        disallowed = _check_specials_arg(disallowed_special, "disallowed_special")
        allowed_set = frozenset(self.special) if allowed == "all" else allowed
        if disallowed == "all":
            disallowed = frozenset(self.special) - allowed_set
        return allowed_set, disallowed

    def encode(
        self,
        text: str,
        *,
        allowed_special: Special = frozenset(),
        disallowed_special: Special = "all",
    ) -> list[int]:
        """Encode ``text``; special-token text is a special token only when allowed.

        Semantics of ``tiktoken.Encoding.encode``: ``allowed_special`` ("all" or
        a set of texts) are encoded as their ids; if any text of
        ``disallowed_special`` (default: every special token not allowed)
        occurs, :class:`SpecialTokenError` (a ``ValueError``) is raised;
        ``disallowed_special=()`` encodes such text as ordinary text. Texts
        that are not special tokens of this tokenizer are ignored in
        ``allowed_special``. Where allowed special tokens overlap, the
        leftmost wins, then the longest.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}")
        allowed, disallowed = self.resolve_special(allowed_special, disallowed_special)
        if disallowed:
            m = self._regex(disallowed).search(text)
            if m is not None:
                token = m.group()
                raise SpecialTokenError(
                    f"the text holds {token!r}, which is a disallowed special token. To encode "
                    f"it as the special token pass allowed_special={{{token!r}, ...}} (or "
                    '"all"); to encode it as ordinary text pass disallowed_special=() or a set '
                    "without it"
                )
        usable = allowed.intersection(self.special)
        if not usable:
            return self.encode_ordinary(text)
        try:
            return self._with_special(text, usable)
        except UnicodeEncodeError:
            return self._with_special(fix_surrogates(text), usable)

    def _with_special(self, text: str, allowed: frozenset[str]) -> list[int]:
        out: list[int] = []
        pos = 0
        special = self.special
        for m in self._regex(allowed).finditer(text):
            out += self._ordinary(text[pos : m.start()])
            out.append(special[m.group()])
            pos = m.end()
        out += self._ordinary(text[pos:])
        return out

    # -- decoding -------------------------------------------------------------------------

    def decode_bytes(self, ids: Iterable[int]) -> bytes:
        """The bytes of ``ids`` concatenated (special tokens as their UTF-8 text).

        An id the tokenizer does not have raises :class:`UnknownTokenError`
        naming it and its position; an id that is not an integer (see
        :func:`as_token_id`: ``1.0`` and ``True`` are not ids) raises
        ``TypeError``. Complexity: O(total output bytes).
        """
        if isinstance(ids, str | bytes) or not isinstance(ids, Iterable):
            raise TypeError(f"ids must be an iterable of ints, got {type(ids).__name__}")
        seq = ids if isinstance(ids, list | tuple) else list(ids)
        if not _ONLY_INT.issuperset(map(type, seq)):  # 1.0 and True would find ids 1 below
            seq = [as_token_id(i, f"position {pos}") for pos, i in enumerate(seq)]
        try:
            return b"".join(map(self._decoder.__getitem__, seq))
        except KeyError:
            pass
        for pos, i in enumerate(seq):
            if i not in self._decoder:
                raise UnknownTokenError(
                    f"unknown token id {i} at position {pos}: this tokenizer's ids are "
                    f"0..{len(self._decoder) - len(self.special) - 1} and its special ids "
                    f"{sorted(self.special.values())}"
                )
        raise AssertionError("unreachable")  # pragma: no cover

    def decode(self, ids: Iterable[int], errors: str = "replace") -> str:
        """``decode_bytes(ids).decode("utf-8", errors)``; ``errors`` as for ``bytes.decode``.

        An unknown error handler raises ``LookupError`` before decoding.
        """
        codecs.lookup_error(errors)
        return self.decode_bytes(ids).decode("utf-8", errors)


_ONLY_INT = frozenset([int])


def as_token_id(value: object, where: str = "the argument") -> int:
    """``value`` as a token id: an ``int``, or an integer with ``__index__`` (NumPy's).

    ``bool`` and ``float`` (even ``1.0``) are not ids and raise ``TypeError``
    naming ``where``, as does anything else without ``__index__``. The one
    rule for ids of :meth:`Encoder.decode_bytes`, ``Tokenizer.token_bytes``
    and ``Tokenizer.id_to_token``.

    >>> as_token_id(5)
    5
    >>> as_token_id(1.0)
    Traceback (most recent call last):
    ...
    TypeError: a token id must be an int; the argument holds 1.0 (a float)
    """
    if type(value) is int:
        return value
    if not isinstance(value, bool):
        index = getattr(type(value), "__index__", None)
        if index is not None:
            result = index(value)
            if isinstance(result, int):
                return int(result)
    raise TypeError(
        f"a token id must be an int; {where} holds {value!r} (a {type(value).__name__})"
    )


# -- process-parallel batches ------------------------------------------------------------


class BatchEncoder(Protocol):
    """What :func:`encode_batch` encodes with (a :class:`~bpeds.tokenizer.Tokenizer`, an
    :class:`Encoder`): it is pickled once per worker process, so it should pickle small."""

    def encode(
        self, text: str, *, allowed_special: Special = ..., disallowed_special: Special = ...
    ) -> list[int]: ...

    def encode_ordinary(self, text: str) -> list[int]: ...


_WORKER: dict[str, Any] = {}


def _init_worker(encoder: BatchEncoder, parent: int) -> None:
    worker_started(parent)  # ends with its parent; Ctrl-C is the parent's
    _WORKER["encoder"] = encoder


def _encode_slice(args: tuple[list[str], Special, Special, bool]) -> list[list[int]]:
    texts, allowed, disallowed, ordinary = args
    tok: BatchEncoder = _WORKER["encoder"]
    if ordinary:
        return [tok.encode_ordinary(t) for t in texts]
    return [tok.encode(t, allowed_special=allowed, disallowed_special=disallowed) for t in texts]


def batch_workers(texts: Sequence[str], workers: int | None) -> int:
    """How many processes ``encode_batch`` uses: 1 (in-process) or more."""
    if workers is None:
        if len(texts) < 2 or sum(map(len, texts)) < PARALLEL_MIN_CHARS:
            return 1
        return max(1, min(os.cpu_count() or 1, len(texts), 8))
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be None or an int >= 1, got {workers!r}")
    return min(workers, max(1, len(texts)))


def encode_batch(
    tokenizer: BatchEncoder,
    texts: Sequence[str],
    *,
    workers: int | None,
    allowed_special: Special,
    disallowed_special: Special,
    ordinary: bool,
) -> list[list[int]]:
    """Encode every text with ``tokenizer``, in processes when asked or when the batch is large.

    The output is the same as encoding each text in order in this process;
    the first text that raises (in order) raises here. ``tokenizer`` is sent to
    each worker process (pickled once per process); the special-token
    arguments are checked here first, so a bad one raises ``TypeError`` before
    any process starts.
    """
    if isinstance(texts, str) or not isinstance(texts, Sequence):
        raise TypeError("texts must be a list (a sequence) of str; for one text use encode()")
    for pos, t in enumerate(texts):
        if not isinstance(t, str):
            raise TypeError(f"texts must hold str; position {pos} holds {type(t).__name__}")
    n = batch_workers(texts, workers)
    if n == 1:
        if ordinary:
            return [tokenizer.encode_ordinary(t) for t in texts]
        return [
            tokenizer.encode(
                t, allowed_special=allowed_special, disallowed_special=disallowed_special
            )
            for t in texts
        ]
    if not ordinary:  # validate the arguments here, not in a worker
        _check_specials_arg(allowed_special, "allowed_special")
        _check_specials_arg(disallowed_special, "disallowed_special")
    slices = 4 * n
    step = -(-len(texts) // slices)
    jobs = [
        (list(texts[i : i + step]), allowed_special, disallowed_special, ordinary)
        for i in range(0, len(texts), step)
    ]
    out: list[list[int]] = []
    ex = ProcessPoolExecutor(n, initializer=_init_worker, initargs=(tokenizer, os.getpid()))
    try:
        with reporting_lost_workers("the worker processes"):
            for part in ex.map(_encode_slice, jobs):
                out += part
    finally:  # on an error or Ctrl-C, the slices not started are dropped
        ex.shutdown(cancel_futures=True)
    return out
