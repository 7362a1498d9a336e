"""A tokenizer's own ids: the map between bpeds's numbering and the ids a model file uses.

Inside, bpeds numbers the 256 bytes by value and merge ``k`` as ``256 + k`` (the merge
loop, the encoder and the formats' merge lists all rely on it). A tokenizer imported
from GPT-2, ``cl100k_base`` or a Hugging Face file, or continued from one, keeps the
ids that file gives (its embeddings are indexed by them): :class:`IdMap` holds the
public id of every internal one, special tokens included, and turns encodings and
decodings from one numbering to the other at the tokenizer's edge. Encoding order is
unchanged: a rank is a merge's position, whatever its public id.

Not handled here: where the map comes from (the formats' readers, continued training).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from bpeds.errors import TokenizerError
from bpeds.tokenizer.encoder import UnknownTokenError, as_token_id

__all__ = ["IdMap"]


class IdMap:
    """Public ids of ``n`` byte and merge tokens (``ids``) and of the special tokens
    (``special``: text -> public id), which take the internal ids ``n, n + 1, ...`` in
    the mapping's order.

    >>> m = IdMap([1, 0, *range(2, 256), 300], {"<s>": 256})
    >>> m.out([0, 256, 257]), m.into([1, 300, 256])
    ([1, 300, 256], [0, 256, 257])

    Raises :class:`~bpeds.errors.TokenizerError` for an id that is negative, repeated, or
    a special id that is also a token's; ``TypeError`` for a non-int. O(n + specials).
    """

    __slots__ = ("internal", "public", "special_internal")

    def __init__(self, ids: Sequence[int], special: Mapping[str, int]) -> None:
        public: list[int] = []
        for k, i in enumerate(ids):
            if isinstance(i, bool) or not isinstance(i, int):
                raise TypeError(f"ids[{k}] must be an int, got {type(i).__name__} {i!r}")
            if i < 0:
                raise TokenizerError(f"ids[{k}] is negative ({i})")
            public.append(i)
        n = len(public)
        self.special_internal = {text: n + j for j, text in enumerate(special)}
        public += special.values()
        internal = {p: k for k, p in enumerate(public)}
        if len(internal) != len(public):
            seen: dict[int, int] = {}
            for k, p in enumerate(public):
                if p in seen:
                    what = "a special token's" if k >= n else f"ids[{k}]"
                    raise TokenizerError(
                        f"id {p} is given twice: to ids[{seen[p]}] and to {what}; each token "
                        "needs an id of its own"
                    )
                seen[p] = k
        self.public = public
        self.internal = internal

    @classmethod
    def of(cls, ids: Sequence[int] | None, n: int, special: Mapping[str, int]) -> IdMap | None:
        """The map for ``n`` tokens, or ``None`` when ``ids`` is ``None`` or bpeds's own
        numbering (``0 .. n - 1``). ``TokenizerError`` when ``ids`` does not hold ``n``
        ids. O(n)."""
        if ids is None:
            return None
        if isinstance(ids, str | bytes) or not isinstance(ids, Sequence):
            raise TypeError(f"ids must be a sequence of ints, got {type(ids).__name__}")
        if len(ids) != n:
            raise TokenizerError(
                f"ids gives {len(ids)} ids, but the tokenizer has {n} byte and merge tokens"
            )
        if all(i == k and type(i) is int for k, i in enumerate(ids)):
            return None
        return cls(ids, special)

    def out(self, ids: Iterable[int]) -> list[int]:
        """Internal ids as public ones. O(len(ids))."""
        public = self.public
        return [public[i] for i in ids]

    def into(self, ids: Iterable[int]) -> list[int]:
        """Public ids as internal ones; an unknown one raises :class:`UnknownTokenError`
        naming it and its position (``TypeError`` for a non-int). O(len(ids))."""
        internal = self.internal
        out: list[int] = []
        for pos, i in enumerate(ids):
            if type(i) is not int:
                i = as_token_id(i, f"position {pos}")
            k = internal.get(i)
            if k is None:
                raise UnknownTokenError(f"unknown token id {i} at position {pos}")
            out.append(k)
        return out

    def one(self, token: int) -> int | None:
        """The internal id of a public one, or ``None``. O(1)."""
        return self.internal.get(token)

    def check(self) -> None:
        """The two directions agree. O(n)."""
        assert all(self.internal[p] == k for k, p in enumerate(self.public))
        assert len(self.internal) == len(self.public)
