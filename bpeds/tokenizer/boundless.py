"""BoundlessBPE's second pass, in the tokenizer layer: the runs of whole-word pre-tokens,
and the model the two passes make.

The variant (:class:`bpeds.variants.BoundlessBPE`: the word-level pass's rule, and
:class:`bpeds.variants.Supermerges`, the second pass's competition) lives with the other
loop variants. :func:`bpeds.tokenizer.trainer.train_model` runs the passes: the word-level
pass with the variant, then the second pass on the sequences :meth:`WordPass.runs` counts,
from the word-level vocabulary; :meth:`WordPass.model` puts the kept word-level events and
the supermerges into one model.

What the second pass reads, as the authors' trainer reads it: the data again, each unit's
segments whole (runs never cross a unit or a special token), split by the pattern; a
pre-token is a *superword* when the variant's ``superword`` rule accepts it and the
word-level tokenizer encodes it, alone, as one token (it is also one pre-token on its own:
the authors' "reachable" tokens); every maximal run of two or more adjacent superwords is
one sequence of the second pass's corpus.

Not handled here: the loop (:mod:`bpeds.driver`), encoding (:mod:`bpeds.tokenizer.replay`).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any

from bpeds.corpus import TypeCorpus
from bpeds.errors import BpedsError
from bpeds.tokenizer.io import Errors, iter_segments
from bpeds.tokenizer.pretokenize import compile_pattern
from bpeds.tokenizer.replay import Replay, check_events
from bpeds.tokenizer.trained import TrainedModel
from bpeds.variants import Event
from bpeds.vocab import BYTE_TOKENS, Vocab

__all__ = ["WordPass"]


class WordPass:
    """The word-level pass of a BoundlessBPE run, as the second pass reads it.

    ``model``: the pass's model; ``counts``: each merge's count, in the order of its
    merge events. :attr:`counts` and :attr:`sizes` are what
    :class:`~bpeds.variants.Supermerges` competes with (``sizes[i]``: merged tokens
    present once merges ``0..i-1`` and the removals after them are kept). O(events).

    >>> from bpeds.tokenizer.trained import TrainedModel
    >>> wp = WordPass(TrainedModel([(97, 98), (256, 99)], None, {}, {}), [5, 3])
    >>> wp.sizes, wp.vocab.token_bytes(257)
    ([0, 1, 2], b'abc')
    """

    def __init__(self, model: TrainedModel, counts: Sequence[int]) -> None:
        self.trained = model
        events: list[list[Any]] = (
            [["merge", BYTE_TOKENS + k, a, b] for k, (a, b) in enumerate(model.merges)]
            if model.events is None
            else [list(e) for e in model.events]
        )
        self.events = events
        log, _, _ = check_events(model.merges, events)
        parents = {BYTE_TOKENS + k: m for k, m in enumerate(model.merges)}
        self._replay = Replay(log, parents, frozenset())
        self.vocab = Vocab()
        for a, b in model.merges:
            self.vocab.add(a, b)
        self.counts = list(counts)
        present: set[int] = set()
        self.sizes: list[int] = []
        for ev in events:
            if ev[0] == "merge":
                self.sizes.append(len(present))
                present.add(ev[1])
            elif ev[0] == "remove":
                present.discard(ev[1])
        self.sizes.append(len(present))
        self._present = present
        if len(self.counts) != len(self.sizes) - 1:
            raise ValueError(
                f"{len(self.counts)} merge counts for {len(self.sizes) - 1} merge events"
            )

    def superword_token(
        self, pattern: Callable[[str], list[str]], superword: Callable[[str], bool]
    ) -> Callable[[str], int]:
        """``f(piece)``: the one token the word-level pass encodes ``piece`` as when it is
        a superword (see the module docstring), else -1. Cached per piece."""
        cache: dict[str, int] = {}
        replay = self._replay
        # (a piece encodes as one token only if its bytes are a present token's)
        tokens = {self.vocab.token_bytes(t) for t in self._present}
        tokens.update(bytes((b,)) for b in range(BYTE_TOKENS))

        def token(piece: str) -> int:
            t = cache.get(piece)
            if t is None:
                t = -1
                raw = piece.encode("utf-8")
                if raw in tokens and superword(piece) and pattern(piece) == [piece]:
                    ids = replay(raw)
                    if len(ids) == 1:
                        t = ids[0]
                cache[piece] = t
            return t

        return token

    def runs(
        self,
        data: object,
        pattern: str,
        superword: Callable[[str], bool],
        special_tokens: Iterable[str],
        errors: Errors,
        block_size: int,
    ) -> dict[tuple[int, ...], int]:
        """Every maximal run of two or more adjacent superwords in ``data``, as word-level
        token ids, with how often it occurs. Reads each unit's segments whole.
        O(text) plus a replay per distinct pre-token."""
        findall = compile_pattern(pattern).findall
        token = self.superword_token(findall, superword)
        counts: dict[tuple[int, ...], int] = {}
        segments = iter_segments(
            data, pattern=None, special_tokens=special_tokens, errors=errors, block_size=block_size
        )
        for segment in segments:
            run: list[int] = []
            for piece in findall(segment):
                t = token(piece)
                if t >= 0:
                    run.append(t)
                    continue
                if len(run) > 1:
                    key = tuple(run)
                    counts[key] = counts.get(key, 0) + 1
                run = []
            if len(run) > 1:
                key = tuple(run)
                counts[key] = counts.get(key, 0) + 1
        return counts

    def corpus(self, runs: dict[tuple[int, ...], int]) -> TypeCorpus:
        """The second pass's corpus: the runs as sequences of word-level tokens."""
        return TypeCorpus.from_token_counts(runs.items(), self.vocab.length)

    def model(
        self,
        supermerges: Sequence[Event],
        vocab: Vocab,
        kept: int,
        texts: Sequence[str],
        options: dict[str, Any],
    ) -> TrainedModel:
        """The two passes' model: the word-level events before its ``kept``-th merge (and
        the removals after the last kept one), the tokens they make, then the
        supermerges (``supermerges``: the second pass's merge events, in ``vocab``'s
        ids), renumbered to follow them; special tokens last.

        A supermerge of a word-level token that the kept events do not make raises
        :class:`~bpeds.errors.BpedsError` (the authors' trainer asserts the same).
        O(events).
        """
        events: list[list[Any]] = []
        merges_seen = 0
        made = BYTE_TOKENS
        for ev in self.events:
            if ev[0] == "merge":
                if merges_seen == kept:
                    break
                merges_seen += 1
                made = max(made, ev[1] + 1)
            events.append(ev)
        merges = list(self.trained.merges[: made - BYTE_TOKENS])
        first = BYTE_TOKENS + len(self.trained.merges)
        renumber: dict[int, int] = {}

        def word(t: int) -> int:
            if t >= first:
                return renumber[t]
            if t >= made:
                raise BpedsError(
                    f"a supermerge joins word-level token {t} ({vocab.token_bytes(t)!r}), "
                    f"which the {kept} word-level merges kept do not make"
                )
            return t

        for made_by in supermerges:
            left, right = made_by.parts
            pair = (word(left), word(right))
            new = renumber.get(made_by.token)
            if new is None:
                new = renumber[made_by.token] = BYTE_TOKENS + len(merges)
                merges.append(pair)
            events.append(["supermerge", new, *pair])
        special = {t: BYTE_TOKENS + len(merges) + i for i, t in enumerate(texts)}
        return TrainedModel(merges, self.trained.pattern, special, options, events)
