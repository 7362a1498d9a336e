"""Pruning a trained tokenizer: remove tokens, keep encoding consistent (``bpeds.prune``).

:func:`prune` measures how a tokenizer uses its tokens on some text
(:func:`token_use`: how often each token is emitted, and how often it is formed on the way
and merged further), asks a rule which merged tokens to remove, and returns a tokenizer
whose event log is the original one followed by one removal per pruned token (each split
into its present parts: its parents, each pruned one expanded further). Encoding replays
that log (:mod:`bpeds.tokenizer.replay`): every merge still applies, so longer tokens built
through a pruned one are still made, and wherever a pruned token would be emitted its parts
are. Pruned tokens keep their ids and are never emitted; ``vocab_size`` counts the rest.

The rules (:class:`PruneRule`; your own takes the same path):

- :class:`Residues` (``"litetoken"``): LiteToken's intermediate merge residues (Sun et
  al., 2026, arXiv 2602.04706): a merged token whose final/intermediate frequency ratio
  ``R(t) = F1 / (F1 + F2)`` is below ``threshold``, ``F1`` being how often encoding the
  text emits ``t`` and ``F2`` how often ``t`` is formed and merged further;
- :class:`Trim` (``"trim"``): Trimmed BPE (Cognetta et al., 2024, arXiv 2404.00397): a
  merged token emitted fewer than ``threshold`` times when the text is encoded (subword-nmt's
  vocabulary threshold, replaced by its component subwords).

Not handled here: training (:mod:`bpeds.tokenizer.training`), and rules that rewire merges
rather than remove tokens (BPE-knockout's tuple merges: see ``docs/variants.md``).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, ClassVar

from bpeds.specs import make_named, name_and_options
from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.counting import count
from bpeds.tokenizer.replay import Replay
from bpeds.vocab import BYTE_TOKENS

__all__ = [
    "PruneRule",
    "Residues",
    "TokenUse",
    "Trim",
    "piece_use",
    "prune",
    "prune_rule",
    "token_use",
]


@dataclass(frozen=True)
class TokenUse:
    """How a tokenizer used its tokens on some text, per id: ``final[t]`` (F1), how
    often encoding emitted ``t``; ``intermediate[t]`` (F2), how often ``t`` was formed and
    consumed by a later merge. ``tokens`` is the total emitted; ``removed``: the merged
    tokens the tokenizer has removed (never emitted; the rules leave them alone).

    >>> use = TokenUse([0, 3, 1], [0, 1, 9], 4)
    >>> use.ratio(1), use.ratio(2), use.ratio(0)
    (0.75, 0.1, None)
    """

    final: list[int]
    intermediate: list[int]
    tokens: int
    removed: frozenset[int] = frozenset()

    def candidates(self) -> range:
        """The merged token ids (the rules skip :attr:`removed`)."""
        return range(BYTE_TOKENS, len(self.final))

    def ratio(self, token: int) -> float | None:
        """LiteToken's ``R(t) = F1 / (F1 + F2)``; None for a token never formed."""
        f1, f2 = self.final[token], self.intermediate[token]
        return f1 / (f1 + f2) if f1 + f2 else None


def _trace_ranks(piece: bytes, ranks: Mapping[bytes, int]) -> tuple[list[int], list[int]]:
    """Rank encoding (:func:`bpeds.tokenizer.encoder.bpe`) step by step: the tokens, and
    each part a merge consumed. The whole-piece shortcut is not taken (the intermediates
    are what is measured), but its result is what is emitted. O(n^2) per piece."""
    parts = [piece[i : i + 1] for i in range(len(piece))]
    consumed: list[int] = []
    while len(parts) > 1:
        best, at = -1, -1
        for i in range(len(parts) - 1):
            r = ranks.get(parts[i] + parts[i + 1])
            if r is not None and (best < 0 or r < best):
                best, at = r, i
        if best < 0:
            break
        consumed += (ranks[parts[at]], ranks[parts[at + 1]])
        parts[at : at + 2] = [parts[at] + parts[at + 1]]
    whole = ranks.get(piece)
    return ([whole] if whole is not None else [ranks[p] for p in parts]), consumed


def token_use(
    tokenizer: Tokenizer, data: object, *, errors: str = "strict", workers: int | None = None
) -> TokenUse:
    """How ``tokenizer`` uses its tokens when it encodes ``data`` (read as training reads
    it: :func:`bpeds.count` with the tokenizer's pattern and special tokens cut out).

    Each distinct piece is encoded once, step by step, as the tokenizer encodes (by rank,
    or replaying its event log), weighted by its count. O(text) to count, plus per distinct
    piece O(n^2) (rank) or the replay's cost.
    """
    counts = count(
        data,
        pattern=tokenizer.pattern,
        special_tokens=list(tokenizer.special_tokens),
        errors=errors,
        workers=workers,
    )
    return piece_use(tokenizer, counts.items())


def piece_use(tokenizer: Tokenizer, pieces: Iterable[tuple[str, int]]) -> TokenUse:
    """:func:`token_use` over pieces already counted: ``(piece, count)`` items."""
    size = BYTE_TOKENS + len(tokenizer.merges)
    final, inter = [0] * size, [0] * size
    trace: Callable[[bytes], tuple[list[int], list[int]]]
    if tokenizer.replays:
        events = tokenizer.events or []
        parents = {BYTE_TOKENS + k: m for k, m in enumerate(tokenizer.merges)}
        log = [tuple(e) for e in events]
        hidden = frozenset(e[1] for e in events if e[0] == "mark") - frozenset(
            e[1] for e in events if e[0] == "unmark"
        )
        trace = Replay(log, parents, hidden).trace
    else:
        ranks = tokenizer.mergeable_ranks()

        def trace(piece: bytes) -> tuple[list[int], list[int]]:
            return _trace_ranks(piece, ranks)

    emitted = 0
    for piece, n in pieces:
        out, used = trace(piece.encode("utf-8"))
        for t in out:
            final[t] += n
        for t in used:
            inter[t] += n
        emitted += len(out) * n
    removed: frozenset[int] = frozenset()
    if tokenizer.events is not None:
        removed = frozenset(range(BYTE_TOKENS, size)) - _present(tokenizer.events)
    return TokenUse(final, inter, emitted, removed)


class PruneRule:
    """Which merged tokens to remove, given how they are used: override :meth:`select`.

    ``name`` and :meth:`options` are recorded with the pruned model.
    """

    name: ClassVar[str] = "custom"

    def select(self, tokenizer: Tokenizer, use: TokenUse) -> Iterable[int]:
        """The merged tokens (ids >= 256) to remove."""
        raise NotImplementedError

    def options(self) -> dict[str, Any]:
        return {}

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, **self.options()}


class Residues(PruneRule):
    """LiteToken's intermediate merge residues: merged tokens with ``R(t) = F1 / (F1 +
    F2) < threshold`` (tokens never formed on the text are kept: nothing is known of
    them).

    >>> Residues(0.05).describe()
    {'name': 'litetoken', 'threshold': 0.05}
    """

    name = "litetoken"

    def __init__(self, threshold: float = 0.05) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int | float):
            raise TypeError(f"litetoken threshold must be a number, got {threshold!r}")
        if not 0 < threshold <= 1 or math.isnan(threshold):
            raise ValueError(f"litetoken threshold must be in (0, 1], got {threshold!r}")
        self.threshold = float(threshold)

    def options(self) -> dict[str, Any]:
        return {"threshold": self.threshold}

    def select(self, tokenizer: Tokenizer, use: TokenUse) -> Iterable[int]:
        for t in use.candidates():
            r = use.ratio(t)
            if r is not None and r < self.threshold and t not in use.removed:
                yield t


class Trim(PruneRule):
    """Trimmed BPE: merged tokens emitted fewer than ``threshold`` times on the text.

    >>> Trim(10).describe()
    {'name': 'trim', 'threshold': 10}
    """

    name = "trim"

    def __init__(self, threshold: int = 1) -> None:
        if isinstance(threshold, bool) or not isinstance(threshold, int) or threshold < 1:
            raise ValueError(f"trim threshold must be an int >= 1, got {threshold!r}")
        self.threshold = threshold

    def options(self) -> dict[str, Any]:
        return {"threshold": self.threshold}

    def select(self, tokenizer: Tokenizer, use: TokenUse) -> Iterable[int]:
        return (
            t for t in use.candidates() if use.final[t] < self.threshold and t not in use.removed
        )


class _Function(PruneRule):
    """A user's rule given as a function ``f(tokenizer, use) -> ids``."""

    def __init__(self, fn: Callable[[Tokenizer, TokenUse], Iterable[int]]) -> None:
        self.fn = fn
        self.name = getattr(fn, "__name__", "custom")  # type: ignore[misc]

    def select(self, tokenizer: Tokenizer, use: TokenUse) -> Iterable[int]:
        return self.fn(tokenizer, use)


_RULES: dict[str, type[PruneRule]] = {"litetoken": Residues, "trim": Trim}


def prune_rule(
    spec: PruneRule | str | Mapping[str, Any] | Callable[[Tokenizer, TokenUse], Iterable[int]],
) -> PruneRule:
    """A rule from a :class:`PruneRule`, a name (``"litetoken"``, ``"trim"``), a dict
    ``{"name": ..., **options}`` or a function ``f(tokenizer, use) -> ids``.

    >>> prune_rule({"name": "trim", "threshold": 3}).describe()
    {'name': 'trim', 'threshold': 3}
    """
    if isinstance(spec, PruneRule):
        return spec
    named = name_and_options(spec, "pruning rule")
    if named is None:
        if callable(spec):
            return _Function(spec)
        raise TypeError(
            f"a pruning rule is a PruneRule, a name, a dict or a function, got {spec!r}"
        )
    return make_named(*named, _RULES, "pruning rule")


def prune(
    tokenizer: Tokenizer,
    data: object,
    rule: PruneRule | str | Mapping[str, Any] | Callable[[Tokenizer, TokenUse], Iterable[int]],
    *,
    errors: str = "strict",
    workers: int | None = None,
) -> Tokenizer:
    """``tokenizer`` with the merged tokens ``rule`` selects on ``data`` removed (see the
    module docstring).

    >>> import bpeds
    >>> tok = bpeds.train("the then there these " * 20, 266, pattern="gpt2")
    >>> pruned = bpeds.prune(tok, "the then there these " * 20, "litetoken")
    >>> pruned.vocab_size < tok.vocab_size, pruned.encode(" the") == tok.encode(" the")
    (True, True)

    The pruned tokenizer's log is ``tokenizer``'s (or its merges as events) and then a
    ``["remove", t, *parts]`` per token, in id order; it records ``options["pruned"]``
    (the rule and how many tokens it removed), and keeps the rest of ``tokenizer`` (pattern,
    special tokens, Unicode tables, normaliser). A tokenizer with ids of its own, or a rule
    that selects a byte, a token that is not a merge, or one already removed raises
    ``ValueError``. O(:func:`token_use`) plus
    O(tokens removed x their parts).
    """
    if tokenizer.ids is not None:
        raise ValueError(
            "this tokenizer keeps a model's own ids, which a log of removals cannot carry: "
            "prune tokenizer.renumbered() (bpeds's ids) instead"
        )
    chosen = prune_rule(rule)
    use = token_use(tokenizer, data, errors=errors, workers=workers)
    events: list[list[Any]] = tokenizer.events or [
        ["merge", BYTE_TOKENS + k, a, b] for k, (a, b) in enumerate(tokenizer.merges)
    ]
    if any(e[0] == "supermerge" for e in events):
        raise ValueError(
            "this tokenizer joins pre-tokens by supermerges (BoundlessBPE): pruning does not "
            "apply to it (a removal would follow the supermerges)"
        )
    present = _present(events)
    selected = sorted(set(chosen.select(tokenizer, use)))
    for t in selected:
        if isinstance(t, bool) or not isinstance(t, int) or not BYTE_TOKENS <= t < len(use.final):
            raise ValueError(f"rule {chosen.name!r} selected {t!r}, which is not a merged token")
        if t not in present:
            raise ValueError(f"rule {chosen.name!r} selected token {t}, which is already removed")
    absent = set(range(BYTE_TOKENS, len(use.final))) - present
    merges = tokenizer.merges
    for t in selected:
        events.append(["remove", t, *_parts(t, merges, absent)])
        absent.add(t)
    options = dict(tokenizer.options)
    options["pruned"] = [
        *options.get("pruned", []),
        {**chosen.describe(), "removed": len(selected)},
    ]
    return tokenizer._replaced(options=options, events=events)


def _present(events: list[list[Any]]) -> set[int]:
    """The merged tokens present at the end of a log."""
    present: set[int] = set()
    for e in events:
        if e[0] in ("merge", "supermerge"):
            present.add(e[1])
        elif e[0] == "remove":
            present.discard(e[1])
    return present


def _parts(token: int, merges: list[tuple[int, int]], absent: set[int]) -> list[int]:
    """``token``'s parents, each absent one expanded further (bytes are always present)."""
    out: list[int] = []
    stack = list(reversed(merges[token - BYTE_TOKENS]))
    while stack:
        t = stack.pop()
        if t >= BYTE_TOKENS and t in absent:
            stack += reversed(merges[t - BYTE_TOKENS])
        else:
            out.append(t)
    return out
