"""BPE-dropout: subword regularisation at encoding time, with Hugging Face's semantics.

Provilkov et al., *BPE-Dropout: Simple and Effective Subword Regularization*, ACL 2020.
:func:`bpe_dropout` merges one piece as Hugging Face ``tokenizers`` does when its BPE
model has a ``dropout`` (``Word::merge_all``): candidate merges of adjacent parts wait
in a queue ordered by rank, then position; each one taken from the queue is dropped
with probability ``dropout`` and set aside; the ones set aside go back into the queue
as soon as a merge is made; the piece is done when the queue is empty (so a merge
dropped after the last one made is never made). Candidates are the pairs the merge
list holds (Hugging Face's pair rank), not any two parts whose bytes form a token: under
dropout the two rules differ (dropping ``a+b`` can leave ``a, bc``, which bytes rank
would merge into ``abc`` and pair rank does not). Without dropout, for trained
tokenizers, both give :meth:`~bpeds.tokenizer.Tokenizer.encode`'s result, which
``dropout=0`` returns.

Randomness comes from a :class:`random.Random`, so a seed makes an encoding
reproducible on every platform; :class:`DropoutEncoder` splits text as the tokenizer
does (pattern, special tokens) and never caches a piece.

Not handled here: the split (:mod:`bpeds.tokenizer.encoder`, whose tables it reuses).
"""

from __future__ import annotations

import heapq
import random
from collections.abc import Callable, Mapping, Sequence

from bpeds.tokenizer.encoder import Encoder, Special, fix_surrogates
from bpeds.tokenizer.special import special_token_regex, split_around

__all__ = ["DropoutEncoder", "bpe_dropout", "check_dropout", "merge_table", "usable_specials"]


def check_dropout(dropout: object) -> float:
    """``dropout`` if it is a number in ``[0, 1]`` (``TypeError``/``ValueError`` otherwise).

    >>> check_dropout(0.1)
    0.1
    """
    if isinstance(dropout, bool) or not isinstance(dropout, int | float):
        raise TypeError(f"dropout must be a number in [0, 1], got {dropout!r}")
    if not 0.0 <= dropout <= 1.0:
        raise ValueError(f"dropout must be in [0, 1], got {dropout!r}")
    return float(dropout)


def bpe_dropout(
    piece: bytes, merges: Mapping[tuple[int, int], int], dropout: float, rng: random.Random
) -> list[int]:
    """Encode one piece with BPE-dropout, as Hugging Face's ``Word::merge_all``.

    ``merges``: ``(left id, right id) -> new id`` (:func:`merge_table`); a merge's rank
    is its new id, as in a Hugging Face file's merge order.

    >>> table = merge_table([(97, 98), (256, 99)])
    >>> rng = random.Random(0)
    >>> bpe_dropout(b"abc", table, 0.0, rng), bpe_dropout(b"abc", table, 1.0, rng)
    ([257], [97, 98, 99])

    Parts are a linked list over the piece's bytes, named by their start; a queue entry
    ``(new id, start, left, right)`` is live while the part at ``start`` is ``left``
    and the next one ``right`` (Hugging Face's expired-entry check). O(n log n).
    """
    get = merges.get
    n = len(piece)
    ids = list(piece)
    nxt = list(range(1, n + 1))
    prv = list(range(-1, n - 1))
    heap: list[tuple[int, int, int, int]] = []
    for i in range(n - 1):
        new = get((ids[i], ids[i + 1]))
        if new is not None:
            heap.append((new, i, ids[i], ids[i + 1]))
    heapq.heapify(heap)
    pop, push = heapq.heappop, heapq.heappush
    skipped: list[tuple[int, int, int, int]] = []
    draw = rng.random
    while heap:
        top = pop(heap)
        if dropout and draw() < dropout:
            skipped.append(top)
            continue
        for entry in skipped:
            push(heap, entry)
        skipped.clear()
        new, i, left, right = top
        j = nxt[i]
        if j < 0 or j >= n or ids[i] != left or ids[j] != right:
            continue
        ids[i] = new
        k = nxt[i] = nxt[j]
        nxt[j] = -1
        if k < n:
            prv[k] = i
            made = get((new, ids[k]))
            if made is not None:
                push(heap, (made, i, new, ids[k]))
        if i > 0:
            p = prv[i]
            made = get((ids[p], new))
            if made is not None:
                push(heap, (made, p, ids[p], new))
    out: list[int] = []
    i = 0
    while i < n:
        out.append(ids[i])
        i = nxt[i]
    return out


def merge_table(merges: Sequence[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """``(left, right) -> new id`` of a merge list (merge ``k`` makes ``256 + k``); a pair
    listed twice keeps its first id.

    >>> merge_table([(97, 98)])
    {(97, 98): 256}
    """
    out: dict[tuple[int, int], int] = {}
    for k, pair in enumerate(merges):
        out.setdefault(pair, 256 + k)
    return out


def usable_specials(
    enc: Encoder, text: str, allowed_special: Special, disallowed_special: Special
) -> frozenset[str]:
    """The special texts to encode as their ids in ``text``, after raising as
    :meth:`Encoder.encode` does (its own error, saying what to pass) when a disallowed
    one occurs; ``TypeError`` for a ``text`` that is not a ``str``. O(len(text))."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    allowed, disallowed = enc.resolve_special(allowed_special, disallowed_special)
    if disallowed and special_token_regex(disallowed).search(text) is not None:
        enc.encode(text, allowed_special=allowed_special, disallowed_special=disallowed_special)
    return allowed.intersection(enc.special)


class DropoutEncoder:
    """A tokenizer's encoding with BPE-dropout: its split, its special tokens, its ranks.

    ``encoder``: the tokenizer's :class:`~bpeds.tokenizer.encoder.Encoder`;
    ``findall``: its split (``None``: no split). O(1) to build.
    """

    def __init__(
        self,
        encoder: Encoder,
        findall: Callable[[str], list[str]] | None,
        merges: Sequence[tuple[int, int]],
    ) -> None:
        self._encoder = encoder
        self._findall = findall
        self._merges = merge_table(merges)

    def encode(
        self,
        text: str,
        dropout: float,
        rng: random.Random,
        allowed_special: Special,
        disallowed_special: Special,
    ) -> list[int]:
        """:meth:`Encoder.encode`'s result with every piece merged by :func:`bpe_dropout`
        (special tokens and their errors as there). O(len(text) log len(text))."""
        usable = usable_specials(self._encoder, text, allowed_special, disallowed_special)
        text = fix_surrogates(text)
        if not usable:
            return self._ordinary(text, dropout, rng)
        return split_around(
            text, usable, self._encoder.special, lambda t: self._ordinary(t, dropout, rng)
        )

    def _ordinary(self, text: str, dropout: float, rng: random.Random) -> list[int]:
        table = self._merges
        pieces = [text] if self._findall is None else self._findall(text)
        out: list[int] = []
        for piece in pieces:
            out += bpe_dropout(piece.encode("utf-8"), table, dropout, rng)
        return out
