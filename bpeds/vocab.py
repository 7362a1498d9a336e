"""Token ids, their parents and lengths: bytes are built on demand, never eagerly.

Ids ``0..255`` are the single bytes; every merge adds one id whose *parents*
are the pair it was made from. A vocabulary stores parents and byte lengths
(two ints per token) and expands a token to its bytes only when asked, because
late merges under some tie rules create very long tokens (training
``taylorswift.txt`` to 100,000 merges ends with one token of 185 KB): storing
every token's bytes would cost memory quadratic in the corpus.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Sequence

__all__ = ["PAIR_MASK", "PAIR_SHIFT", "Vocab", "apply_merge", "pack_pair", "unpack_pair"]

BYTE_TOKENS = 256


class Vocab:
    """Parents and byte lengths of every token id, with bytes built on demand.

    >>> v = Vocab()
    >>> ab = v.add(ord("a"), ord("b"))
    >>> abc = v.add(ab, ord("c"))
    >>> v.token_bytes(abc), v.length(abc), len(v)
    (b'abc', 3, 258)

    Memory: O(number of tokens); ``token_bytes`` keeps a bounded cache of the
    ``cache_size`` most recently built tokens.
    """

    __slots__ = ("_cache", "_cache_size", "_lefts", "_lengths", "_rights")

    def __init__(self, *, cache_size: int = 4096) -> None:
        self._lefts: list[int] = [-1] * BYTE_TOKENS
        self._rights: list[int] = [-1] * BYTE_TOKENS
        self._lengths: list[int] = [1] * BYTE_TOKENS
        self._cache: OrderedDict[int, bytes] = OrderedDict()
        self._cache_size = cache_size

    def __len__(self) -> int:
        return len(self._lengths)

    def add(self, left: int, right: int) -> int:
        """Add the token made by merging ``left`` and ``right``; return its new id.

        Complexity: O(1).
        """
        n = len(self._lengths)
        if not (0 <= left < n and 0 <= right < n):
            raise ValueError(f"cannot merge ({left}, {right}): ids must be in 0..{n - 1}")
        self._lefts.append(left)
        self._rights.append(right)
        self._lengths.append(self._lengths[left] + self._lengths[right])
        return n

    def parents(self, token: int) -> tuple[int, int] | None:
        """The pair ``token`` was merged from, or ``None`` for a byte token. O(1)."""
        self._check_id(token)
        if token < BYTE_TOKENS:
            return None
        return self._lefts[token], self._rights[token]

    def length(self, token: int) -> int:
        """Length in bytes of ``token``. Complexity: O(1)."""
        return self._lengths[token]

    def token_bytes(self, token: int) -> bytes:
        """The bytes of ``token``, joined from its parents' bytes.

        Parents are taken from the cache when there; those that are not are built
        the same way (depth-first, without recursion, so a deep merge tree is
        fine) and cached too. Listing every token in id order therefore costs
        O(total bytes); one uncached token costs O(its length x its depth) at worst.

        Complexity: O(1) when cached.
        """
        self._check_id(token)
        if token < BYTE_TOKENS:
            return bytes((token,))
        cache = self._cache
        hit = cache.get(token)
        if hit is not None:
            cache.move_to_end(token)
            return hit
        lefts, rights = self._lefts, self._rights
        built: dict[int, bytes] = {}
        stack = [token]
        while stack:
            t = stack[-1]
            parts: list[bytes] = []
            for x in (lefts[t], rights[t]):
                if x < BYTE_TOKENS:
                    parts.append(bytes((x,)))
                    continue
                got = built.get(x)
                if got is None:
                    got = cache.get(x)
                if got is None:
                    stack.append(x)
                else:
                    parts.append(got)
            if len(parts) == 2:
                stack.pop()
                built[t] = parts[0] + parts[1]
        for t, b in built.items():
            cache[t] = b
        while len(cache) > self._cache_size:
            cache.popitem(last=False)
        return built[token]

    def merges(self) -> list[tuple[int, int]]:
        """Every merge in id order: ``merges()[k]`` made id ``256 + k``. O(number of merges)."""
        return list(zip(self._lefts[BYTE_TOKENS:], self._rights[BYTE_TOKENS:], strict=True))

    def _check_id(self, token: int) -> None:
        if not 0 <= token < len(self._lengths):
            raise ValueError(f"unknown token id {token}: ids are 0..{len(self._lengths) - 1}")


#: Pairs are packed into one int, ``left << PAIR_SHIFT | right``: no tuple is
#: allocated in the hot path, and packed keys order like ``(left, right)``.
PAIR_SHIFT = 32
PAIR_MASK = (1 << PAIR_SHIFT) - 1


def pack_pair(left: int, right: int) -> int:
    """Pack ``(left, right)`` into one int that orders like the tuple.

    >>> unpack_pair(pack_pair(97, 98))
    (97, 98)
    """
    return (left << PAIR_SHIFT) | right


def unpack_pair(key: int) -> tuple[int, int]:
    """Inverse of :func:`pack_pair`."""
    return key >> PAIR_SHIFT, key & PAIR_MASK


def apply_merge(tokens: Sequence[int], a: int, b: int, new: int) -> list[int]:
    """Replace every non-overlapping ``(a, b)``, left to right, by ``new``.

    >>> apply_merge([1, 1, 1, 1, 2], 1, 1, 9)
    [9, 9, 2]
    """
    out: list[int] = []
    i, n = 0, len(tokens)
    while i < n:
        if i + 1 < n and tokens[i] == a and tokens[i + 1] == b:
            out.append(new)
            i += 2
        else:
            out.append(tokens[i])
            i += 1
    return out
