"""Continued training: the run starts from a base tokenizer's merges and vocabulary.

Every piece of the new data starts as the base encodes it (by rank, over the
whole piece), every base token and merge keeps its id and rank, and the new
merges rank after them. A base is anything with a tokenizer's ``merges``,
``pattern``, ``special_tokens``, ``options`` and ``replays`` (:class:`BaseModel`:
a :class:`~bpeds.tokenizer.Tokenizer`, or a
:class:`~bpeds.tokenizer.trained.TrainedModel`, as SuperBPE's second stage
continues from its first); :func:`bpeds.train` also loads one from a model file.
A base that encodes by a loop variant's event log is refused.

Not handled here: the merge loop, which starts from the base's vocabulary
(:class:`~bpeds.driver.MergeDriver`'s ``vocab=``).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Callable, Iterator
from functools import partial
from itertools import pairwise
from typing import Any, Protocol, cast

from bpeds.corpus import TypeCorpus
from bpeds.scoring.ties import SmallestIds, TieRule, tie_rule
from bpeds.tokenizer.encoder import bpe, rank_table, token_table
from bpeds.tokenizer.normalize import Form, check_normalizer
from bpeds.tokenizer.pattern_safety import findall_within
from bpeds.tokenizer.pretokenize import match_limits, resolve_pattern
from bpeds.vocab import BYTE_TOKENS, Vocab

__all__ = ["BaseModel", "Continuation"]


class BaseModel(Protocol):
    """What continued training reads of a base (a ``Tokenizer`` has all of it)."""

    @property
    def merges(self) -> list[tuple[int, int]]: ...

    @property
    def pattern(self) -> str | None: ...

    @property
    def special_tokens(self) -> dict[str, int]: ...

    @property
    def options(self) -> dict[str, Any]: ...

    @property
    def replays(self) -> bool: ...


_READ = ("merges", "pattern", "special_tokens", "options", "replays")

#: The option an imported tokenizer records when its file numbered the bytes in another
#: order than by value: the tie rule comparing pairs by the file's ids (``{"name": "hf"}``
#: for a file Hugging Face trained, or ``smallest_ids`` with a ``byte_order``). Continued
#: training from it breaks ties so by default, as the file's own trainer would
#: (``bpe-continue`` does on such a file). It is the one recorded option bpeds reads back,
#: and only as a tie rule, validated.
FILE_IDS_TIE = "tie_by_file_ids"


class Continuation:
    """A base to continue from, checked, with what a run reads of it.

    A path raises ``TypeError`` (load the model first: :func:`bpeds.train` does),
    as does an object without a tokenizer's attributes; a base that replays an
    event log raises ``ValueError``. O(merges + special tokens).
    """

    def __init__(self, base: object) -> None:
        if isinstance(base, str | os.PathLike):
            raise TypeError(
                f"base={base!r} is the path of a model file: load it first "
                "(bpeds.tokenizer.formats.load_model), or train with bpeds.train, which does"
            )
        if not all(hasattr(base, name) for name in _READ):
            raise TypeError(
                f"base must be a Tokenizer or the path of a model file, got {type(base).__name__}"
            )
        model = cast(BaseModel, base)
        if model.replays:
            raise ValueError(
                "cannot continue from a tokenizer that encodes by a loop variant's event log "
                "(removed, re-made or hidden tokens): continue from a plain BPE tokenizer"
            )
        self.merges = model.merges
        self.pattern = model.pattern
        self.unicode: str | None = getattr(model, "unicode", None)
        self.special_tokens = model.special_tokens
        self.options = model.options
        #: the base's Unicode normaliser, which the new data is read with too
        self.normalizer: Form | None = check_normalizer(getattr(model, "normalizer", None))
        #: the base's own ids of its byte and merge tokens (None: bpeds's numbering)
        self.ids: list[int] | None = getattr(model, "ids", None)

    def tie(self) -> TieRule | None:
        """The tie rule of the base's file ids (:data:`FILE_IDS_TIE`), or ``None`` when the
        base records none (its ids are bpeds's own, which ``smallest_ids`` compares). A
        recorded value that is not a valid tie rule raises ``ValueError``."""
        recorded = self.options.get(FILE_IDS_TIE)
        if recorded is None:
            return None
        if recorded == {"name": "hf"}:
            return tie_rule("hf")
        if (
            isinstance(recorded, dict)
            and recorded.get("name") == "smallest_ids"
            and set(recorded) == {"name", "byte_order"}
            and isinstance(recorded["byte_order"], list)
            and all(type(x) is int for x in recorded["byte_order"])
            and sorted(recorded["byte_order"]) == list(range(256))
        ):
            return SmallestIds(recorded["byte_order"])
        raise ValueError(
            f"the base records {FILE_IDS_TIE}={recorded!r}, which is not a tie rule bpeds "
            "records ({'name': 'hf'} or smallest_ids with a byte_order): pass tie=... "
            "explicitly"
        )

    @property
    def size(self) -> int:
        """The base's vocabulary size: 256 bytes, its merges and its special tokens."""
        return BYTE_TOKENS + len(self.merges) + len(self.special_tokens)

    def vocab(self) -> Vocab:
        """A fresh vocabulary holding the base's merges (the run adds to it). O(merges)."""
        vocab = Vocab()
        for a, b in self.merges:
            vocab.add(a, b)
        return vocab

    def corpus(self, pieces: dict[str, int], vocab: Vocab) -> TypeCorpus:
        """The corpus of ``pieces`` (piece -> count), each as the base encodes it."""
        return TypeCorpus.from_token_counts(self.encodings(pieces), vocab.length)

    def encodings(self, pieces: dict[str, int]) -> Iterator[tuple[list[int], int]]:
        """Each piece as the base's merges encode it (by rank, over the whole piece), with
        its count.

        A piece longer than the base's own pieces (a second pattern's chunk) is cut where
        no merge can ever reach across: between two bytes that are adjacent inside no
        base token, no token can span the cut, so rank merging on each side is independent
        and the encoding is the concatenation of the sides'. The base's pattern proposes
        the cuts; equal segments are encoded once. O(total length) plus the merging of
        distinct segments.
        """
        ranks = rank_table(token_table(self.merges))
        inner: set[tuple[int, int]] = set()
        for token in ranks:
            if len(token) > 1:
                inner.update(pairwise(token))
        source, compiled = resolve_pattern(self.pattern)
        limits = match_limits(source)  # the base's pattern: timed if it came from a file
        findall: Callable[[str], list[str]] | None = None
        if compiled is not None:
            findall = compiled.findall
            if limits is not None:
                findall = partial(findall_within, compiled, limits=limits)
        cache: dict[str, list[int]] = {}

        def encode(segment: str) -> list[int]:
            ids = cache.get(segment)
            if ids is None:
                ids = cache[segment] = bpe(segment.encode("utf-8"), ranks)
            return ids

        def first_byte(part: str) -> int:
            c = ord(part[0])
            return c if c < 0x80 else part[0].encode("utf-8")[0]

        def last_byte(part: str) -> int:
            c = ord(part[-1])
            return c if c < 0x80 else part[-1].encode("utf-8")[-1]

        for piece, n in pieces.items():
            parts = None if findall is None else findall(piece)
            if not parts or (len(parts) > 1 and "".join(parts) != piece):
                yield bpe(piece.encode("utf-8"), ranks), n
                continue
            if len(parts) == 1:
                yield encode(piece), n
                continue
            out: list[int] = []
            segment = [parts[0]]
            for part in parts[1:]:
                if (last_byte(segment[-1]), first_byte(part)) in inner:
                    segment.append(part)
                else:
                    out += encode(segment[0] if len(segment) == 1 else "".join(segment))
                    segment = [part]
            out += encode(segment[0] if len(segment) == 1 else "".join(segment))
            yield out, n

    def own_ids(self, num_merges: int) -> list[int] | None:
        """The ids of the continued model's byte and merge tokens when the base has ids of
        its own (:attr:`bpeds.tokenizer.Tokenizer.ids`): the base's, then one new id per
        new merge after every id the base uses (its special tokens' too), as
        ``bpe-continue`` numbers them. ``None`` for a base in bpeds's numbering."""
        if self.ids is None:
            return None
        nxt = max([*self.ids, *self.special_tokens.values()]) + 1
        new = BYTE_TOKENS + num_merges - len(self.ids)
        return [*self.ids, *range(nxt, nxt + new)]

    def tie_order(self) -> list[int]:
        """``SmallestIds``'s ``byte_order`` that compares pairs by the base's own ids:
        each byte's rank among the bytes by its id. ``ValueError`` when ids of the base's
        merged tokens are not all above its bytes' and in merge order (ties by smallest
        ids could then not be told by that rule). O(tokens)."""
        assert self.ids is not None
        ids = self.ids
        merged = ids[BYTE_TOKENS:]
        if (merged and max(ids[:BYTE_TOKENS]) > merged[0]) or any(
            a >= b for a, b in pairwise(merged)
        ):
            raise ValueError(
                "tie='smallest_ids' compares the base's own ids, which here are not bytes "
                "first and merges in merge order: pass another tie rule, or continue from "
                "base.renumbered()"
            )
        rank = [0] * BYTE_TOKENS
        for r, b in enumerate(sorted(range(BYTE_TOKENS), key=ids.__getitem__)):
            rank[b] = r
        return rank

    def special_ids(self, num_merges: int, texts: list[str], stacklevel: int) -> dict[str, int]:
        """Special ids after continued training to ``num_merges`` merges in all: the base's
        where no merge id needs them, the others (with a ``UserWarning``, ``stacklevel``
        counted from the caller) and the new ``texts`` after every other id."""
        if self.ids is not None:  # own ids: the base's special ids are free; new ones last
            own = self.own_ids(num_merges)
            assert own is not None
            nxt = max([*own, *self.special_tokens.values()]) + 1
            out = dict(self.special_tokens)
            out.update((t, nxt + j) for j, t in enumerate(texts))
            return out
        top = BYTE_TOKENS + num_merges  # merge ids are 0 .. top - 1
        kept = {t: i for t, i in self.special_tokens.items() if i >= top}
        moved = [t for t in self.special_tokens if t not in kept]
        nxt = max([top - 1, *kept.values()]) + 1
        for t in [*moved, *texts]:
            kept[t] = nxt
            nxt += 1
        if moved:
            warnings.warn(
                f"the base's special tokens {moved} had ids the new merges take: they now have "
                f"ids {[kept[t] for t in moved]}",
                UserWarning,
                stacklevel=stacklevel + 1,
            )
        return kept

    def recorded(self) -> dict[str, Any]:
        """What the model records of its base: ``{"merges": n, "options": {...}}``."""
        return {"merges": len(self.merges), "options": self.options}
