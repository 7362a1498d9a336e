"""Tie-break rules: which of several equally scored pairs is merged first.

A tie rule is part of a run's recorded options, so a run can be reproduced.

- :class:`Leftmost` (``"leftmost"``): the pair whose first occurrence in the
  current corpus is leftmost. This is minbpe's behaviour: it takes ``max``
  over a dict filled by a left-to-right scan. In type mode, "leftmost" means
  the first occurrence in the original chunk order (types are numbered by first
  appearance), which is the same thing.
- :class:`SmallestIds` (``"smallest_ids"``): the lowest ``(left_id, right_id)``,
  as Hugging Face ``tokenizers`` and ``rustbpe`` do. Hugging Face numbers its
  byte alphabet by the code point of each byte's printable stand-in, not by
  byte value: :func:`hf_byte_order` gives that order.
- :class:`Lexicographic` (``"lexicographic"``): the lowest
  ``(bytes(left), bytes(right))``.
- :class:`SubwordNmt` (``"subword_nmt"``): the *largest* pair of GPT-2 byte-level
  strings, as subword-nmt and the parity-aware BPE code break ties.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import total_ordering
from typing import Any

from bpeds.vocab import PAIR_MASK, PAIR_SHIFT, Vocab

__all__ = [
    "Leftmost",
    "Lexicographic",
    "SmallestIds",
    "SubwordNmt",
    "TieRule",
    "gpt2_byte_to_unicode",
    "hf_byte_order",
    "tie_rule",
]


class TieRule:
    """Base class. ``dynamic`` rules depend on where pairs occur now (the driver
    folds them into the priority); static rules give the heap a tie key per pair."""

    name: str = "tie"
    dynamic: bool = False

    def heap_tie(self, vocab: Vocab) -> Callable[[int], Any] | None:
        """The tie-key function over packed pairs for the heap (None: the packed key)."""
        return None

    def fold(self, priority: Any, position: int, shift: int) -> Any:
        """A dynamic rule's priority with its tie folded in (larger wins).

        Static rules leave the priority alone (their tie is :meth:`heap_tie`).
        """
        return priority

    def unfold(self, folded: Any, shift: int) -> Any:
        """The score back from :meth:`fold`'s result."""
        return folded

    def fold_many(
        self, items: Iterable[tuple[int, Any]], positions: Mapping[int, int], shift: int
    ) -> list[tuple[int, Any]]:
        """:meth:`fold` over ``(pair, score)`` items, with each pair's position from
        ``positions`` (0 if absent: a lower bound); one call for a merge's new pairs."""
        get = positions.get
        return [(k, self.fold(s, get(k, 0), shift)) for k, s in items]

    def describe(self) -> dict[str, Any]:
        """What a saved model records of this rule."""
        return {"name": self.name}

    def __repr__(self) -> str:
        return f"{type(self).__name__}()"

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.describe() == other.describe()

    def __hash__(self) -> int:
        return hash(self.name)


class Leftmost(TieRule):
    """Leftmost first occurrence wins (minbpe)."""

    name = "leftmost"
    dynamic = True

    def fold(self, priority: Any, position: int, shift: int) -> Any:
        """``(score, -position)``; for an int score one int, ``score << shift -
        position`` (``position < 2**shift``), which orders the same way and compares
        faster. Positions only move right, so a stored fold stays an upper bound.

        >>> Leftmost().fold(3, 5, 8), Leftmost().fold(0.5, 5, 8)
        (763, (0.5, -5))
        """
        if type(priority) is int:
            return (priority << shift) - position
        return (priority, -position)

    def fold_many(
        self, items: Iterable[tuple[int, Any]], positions: Mapping[int, int], shift: int
    ) -> list[tuple[int, Any]]:
        get = positions.get
        return [
            (k, (s << shift) - get(k, 0) if type(s) is int else (s, -get(k, 0))) for k, s in items
        ]

    def unfold(self, folded: Any, shift: int) -> Any:
        """>>> Leftmost().unfold(763, 8), Leftmost().unfold((0.5, -5), 8)
        (3, 0.5)
        """
        if type(folded) is int:
            return (folded + (1 << shift) - 1) >> shift
        return folded[0]


class SmallestIds(TieRule):
    """Lowest ``(left_id, right_id)`` wins (Hugging Face ``tokenizers``, ``rustbpe``).

    ``byte_order`` renumbers the 256 byte tokens for the comparison only:
    ``byte_order[b]`` is the rank of byte ``b`` (merged tokens keep their ids,
    which are all larger). Pass :func:`hf_byte_order` to match Hugging Face.
    """

    name = "smallest_ids"

    def __init__(self, byte_order: Sequence[int] | None = None) -> None:
        if byte_order is not None and sorted(byte_order) != list(range(256)):
            raise ValueError("byte_order must be a permutation of 0..255")
        self.byte_order = None if byte_order is None else tuple(byte_order)

    def heap_tie(self, vocab: Vocab) -> Callable[[int], Any] | None:
        order = self.byte_order
        if order is None:
            return None

        def tie(key: int) -> int:
            left, right = key >> PAIR_SHIFT, key & PAIR_MASK
            if left < 256:
                left = order[left]
            if right < 256:
                right = order[right]
            return (left << PAIR_SHIFT) | right

        return tie

    def describe(self) -> dict[str, Any]:
        if self.byte_order is None:
            return {"name": self.name}
        return {"name": self.name, "byte_order": list(self.byte_order)}

    def __repr__(self) -> str:
        return "SmallestIds()" if self.byte_order is None else "SmallestIds(byte_order=...)"


@total_ordering
class _BytesKey:
    """Tie key comparing a pair's token bytes; looked up when first compared, then kept
    (a token's bytes never change)."""

    __slots__ = ("_text", "left", "right", "vocab")

    def __init__(self, vocab: Vocab, left: int, right: int) -> None:
        self.vocab, self.left, self.right = vocab, left, right
        self._text: tuple[bytes, bytes] | None = None

    def _bytes(self) -> tuple[bytes, bytes]:
        text = self._text
        if text is None:
            text = self._text = (
                self.vocab.token_bytes(self.left),
                self.vocab.token_bytes(self.right),
            )
        return text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _BytesKey) and (self.left, self.right) == (other.left, other.right)

    def __lt__(self, other: _BytesKey) -> bool:
        return self._bytes() < other._bytes()

    def __hash__(self) -> int:
        return hash((self.left, self.right))


class Lexicographic(TieRule):
    """Lowest ``(bytes(left), bytes(right))`` wins."""

    name = "lexicographic"

    def heap_tie(self, vocab: Vocab) -> Callable[[int], Any] | None:
        def tie(key: int) -> _BytesKey:
            return _BytesKey(vocab, key >> PAIR_SHIFT, key & PAIR_MASK)

        return tie


@total_ordering
class _LargestKey:
    """Tie key under which the largest pair of byte-level strings is the smallest key;
    built on demand, only when compared."""

    __slots__ = ("_cached", "left", "order", "right", "vocab")

    def __init__(self, vocab: Vocab, order: bytes, left: int, right: int) -> None:
        self.vocab, self.order, self.left, self.right = vocab, order, left, right
        self._cached: tuple[bytes, bytes] | None = None

    def _text(self) -> tuple[bytes, bytes]:
        text = self._cached
        if text is None:
            tb, order = self.vocab.token_bytes, self.order
            text = self._cached = (tb(self.left).translate(order), tb(self.right).translate(order))
        return text

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _LargestKey) and (self.left, self.right) == (
            other.left,
            other.right,
        )

    def __lt__(self, other: _LargestKey) -> bool:
        return other._text() < self._text()

    def __hash__(self) -> int:
        return hash((self.left, self.right))


class SubwordNmt(TieRule):
    """The largest ``(left, right)`` wins, each token read as its GPT-2 byte-level
    string (the printable stand-in of each byte, :func:`gpt2_byte_to_unicode`).

    This is how subword-nmt's ``max(stats, key=lambda x: (stats[x], x))`` breaks ties
    over byte-level symbols, and so how the parity-aware BPE code
    (``cimeister/parity-aware-bpe``) does: equal strings compare by their first
    differing stand-in character, and a string is below the strings it begins.

    >>> v = Vocab()
    >>> key = SubwordNmt().heap_tie(v)
    >>> key((97 << 32) | 98) < key((97 << 32) | 97)  # ("a", "b") beats ("a", "a")
    True
    """

    name = "subword_nmt"

    def heap_tie(self, vocab: Vocab) -> Callable[[int], Any] | None:
        order = bytes(hf_byte_order())

        def tie(key: int) -> _LargestKey:
            return _LargestKey(vocab, order, key >> PAIR_SHIFT, key & PAIR_MASK)

        return tie


def gpt2_byte_to_unicode() -> dict[int, str]:
    """GPT-2's map from each byte to a printable character (byte-level BPE files).

    Printable Latin-1 bytes stand for themselves; the other 68 bytes take the
    code points 256, 257, ... in byte order.

    >>> m = gpt2_byte_to_unicode()
    >>> m[ord("a")], m[ord(" ")], len(set(m.values()))
    ('a', 'Ġ', 256)
    """
    keep = [*range(ord("!"), ord("~") + 1), *range(ord("¡"), ord("¬") + 1)]
    keep += range(ord("®"), ord("ÿ") + 1)
    kept = set(keep)
    out: dict[int, str] = {}
    extra = 0
    for b in range(256):
        if b in kept:
            out[b] = chr(b)
        else:
            out[b] = chr(256 + extra)
            extra += 1
    return out


def hf_byte_order() -> list[int]:
    """Rank of each byte in Hugging Face's byte-level alphabet (sorted by stand-in char)."""
    m = gpt2_byte_to_unicode()
    by_char = sorted(range(256), key=lambda b: m[b])
    rank = [0] * 256
    for r, b in enumerate(by_char):
        rank[b] = r
    return rank


_RULES: dict[str, Callable[[], TieRule]] = {
    "leftmost": Leftmost,
    "smallest_ids": SmallestIds,
    "lexicographic": Lexicographic,
    "hf": lambda: SmallestIds(hf_byte_order()),
    "subword_nmt": SubwordNmt,
}


def tie_rule(rule: str | TieRule) -> TieRule:
    """A tie rule from its name (``leftmost``, ``smallest_ids``, ``lexicographic``,
    ``hf``, ``subword_nmt``) or the rule itself.

    >>> tie_rule("leftmost")
    Leftmost()
    """
    if isinstance(rule, TieRule):
        return rule
    try:
        return _RULES[rule]()
    except KeyError:
        raise ValueError(f"unknown tie rule {rule!r}: choose one of {sorted(_RULES)}") from None
