"""Parity-aware BPE as published (Foroutan et al., 2025, arXiv 2508.04796; code GitHub
``cimeister/parity-aware-bpe``, ``parity_aware_learn_bpe.py``).

Each step serves one language (a group of the training data) with the pair most frequent
in that language's training text. Which language is served:

- **development-set mode** (the paper's default; ``dev`` given): the language whose
  development text (held-out, multi-parallel: the same content in every language) takes the
  most tokens under the merges so far; the development text is merged as training goes but
  never counted for the choice of pair;
- **ratio mode** (no ``dev``): the language whose training text is compressed least
  (bytes per token, divided by its desired ratio ``ratio[g]``, default 1);
- **moving window** (``window=W``): as above, but a language chosen more than
  ``alpha / L`` of the last ``W`` steps (L: the languages, one more in hybrid mode) is passed
  over for the next worst;
- **hybrid** (``global_merges=M``): the first M merges take the pair most frequent in all
  the training text together (ordinary BPE), then parity-aware merges follow.

Pairs occurring fewer than ``min_frequency`` times in the served language (the paper's
default 2) are not merged, and training stops when the served language has none left.
Ties within the served language go to the driver's tie rule (``ties="rule"``: the paper's
code takes the lexicographically largest pair of byte-level strings, bpeds' ``tie=
"subword_nmt"``), or first to the larger total count (``ties="total"``: bpeds'
:class:`~bpeds.scoring.strategies.GroupFrequency`).

The serving choice is the score's :class:`~bpeds.scoring.base.Views` view (one selection
structure per language, switching is free); the window and the hybrid phase keep state
(``Views.reset``). The development text is part of the corpus, as groups of its own after
the training groups (:attr:`ParityAware.dev`: the tokenizer layer adds them), so every merge
applies to it as to the training text.
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Mapping, Sequence
from typing import Any

from bpeds.scoring.base import Declaration, Dependency, Priority, Score, Stats, Totals, Views

__all__ = ["ParityAware"]

_TIES = ("rule", "total")


def _paths(value: object, name: str) -> list[str]:
    """A development set's files, as given: a path or a list of paths."""
    items = value if isinstance(value, list | tuple) else [value]
    out: list[str] = []
    for item in items:
        if not isinstance(item, str | os.PathLike):
            raise TypeError(
                f"parity_aware dev[{name!r}] must be a file path or a list of them, got {item!r}"
            )
        out.append(os.fspath(item))
    if not out:
        raise ValueError(f"parity_aware dev[{name!r}] names no file")
    return out


class ParityAware(Score):
    """Parity-aware BPE as the paper's code trains it (see the module docstring).

    ``dev``: ``{group name: path or list of paths}``, one development set per training
    group (the same names), or None for ratio mode. ``ratio``: the desired compression
    ratio per group, in the groups' order (ratio mode only; normalised by the first, as
    the paper's code does). ``global_merges``: hybrid mode's global merges.
    ``window``, ``alpha``: the moving window (None: the base algorithm).
    ``min_frequency``: the least count in the served group. ``ties``: ``"rule"`` or
    ``"total"``. A bad option raises ``ValueError`` or ``TypeError`` naming it.

    >>> ParityAware(window=100).describe()["window"]
    100
    >>> s = ParityAware(global_merges=1); s.declaration.totals.reset()
    >>> from bpeds.scoring.base import Totals
    >>> t = Totals(10, 9, (6, 4), (6, 8))  # group 0: 6 bytes in 6 tokens, group 1: 8 in 4
    >>> [s.declaration.totals.view(t) for _ in range(3)]  # the global merge, then group 0
    [-1, 0, 0]
    """

    name = "parity_aware"

    def __init__(
        self,
        dev: Mapping[str, object] | None = None,
        ratio: Sequence[float] | None = None,
        global_merges: int = 0,
        window: int | None = None,
        alpha: float = 2.0,
        min_frequency: int = 2,
        ties: str = "rule",
    ) -> None:
        files: dict[str, list[str]] | None = None
        if dev is not None:
            if not isinstance(dev, Mapping) or not dev:
                raise TypeError(f"parity_aware dev must be a non-empty mapping, got {dev!r}")
            files = {str(k): _paths(v, str(k)) for k, v in dev.items()}
        if ratio is not None:
            if dev is not None:
                raise ValueError("parity_aware takes dev (development sets) or ratio, not both")
            if isinstance(ratio, str) or not all(
                isinstance(r, int | float) and not isinstance(r, bool) and r > 0 for r in ratio
            ):
                raise ValueError(f"parity_aware ratio must be positive numbers, got {ratio!r}")
            ratio = [float(r) for r in ratio]
        for value, what, least in (
            (global_merges, "global_merges", 0),
            (min_frequency, "min_frequency", 1),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or value < least:
                raise ValueError(f"parity_aware {what} must be an int >= {least}, got {value!r}")
        if window is not None and (
            isinstance(window, bool) or not isinstance(window, int) or window < 1
        ):
            raise ValueError(f"parity_aware window must be an int >= 1 or None, got {window!r}")
        if isinstance(alpha, bool) or not isinstance(alpha, int | float) or alpha <= 0:
            raise ValueError(f"parity_aware alpha must be a number > 0, got {alpha!r}")
        if ties not in _TIES:
            raise ValueError(f"parity_aware ties must be one of {_TIES}, got {ties!r}")
        #: Development sets per group name (paths), or None (ratio mode).
        self.dev = files
        self.ratio = None if ratio is None else [r / ratio[0] for r in ratio]
        self.global_merges = global_merges
        self.window = window
        self.alpha = float(alpha)
        self.min_frequency = min_frequency
        self.ties = ties
        self._steps = 0
        self._history: deque[int] = deque(maxlen=window or 1)
        self.declaration = Declaration(
            Dependency.GLOBAL,
            groups=True,
            priority="int",
            count_fall_raises=False,  # an in-group count and a total, both falling
            unigram_fall_raises=False,
            totals=Views(self._view, reset=self._reset),
        )

    def options(self) -> dict[str, Any]:
        return {
            "dev": self.dev,
            "ratio": self.ratio,
            "global_merges": self.global_merges,
            "window": self.window,
            "alpha": self.alpha,
            "min_frequency": self.min_frequency,
            "ties": self.ties,
        }

    # -- which group is served ------------------------------------------------------

    def _reset(self) -> None:
        self._steps = 0
        self._history = deque(maxlen=self.window or 1)

    def _badness(self, totals: Totals) -> list[float]:
        """Per training group, larger is worse: development tokens, or minus the
        adjusted compression of the training text (float, as the paper's code)."""
        tokens = totals.group_tokens
        if self.dev is not None:
            n = len(self.dev)
            return [float(tokens[n + g]) if n + g < len(tokens) else 0.0 for g in range(n)]
        out: list[float] = []
        for g, (t, b) in enumerate(zip(tokens, totals.group_bytes, strict=True)):
            rate = b / t if t else float("inf")
            out.append(-(rate / self.ratio[g]) if self.ratio is not None else -rate)
        return out

    def _view(self, totals: Totals) -> int:
        """The group served at this selection (-1: all, in hybrid mode's global phase).
        Called once per selection (it counts them and keeps the window's history)."""
        self._steps += 1
        if self._steps <= self.global_merges:
            return -1
        bad = self._badness(totals)
        if not bad:
            return -1
        if self.window is None:
            return self._first_worst(bad, range(len(bad)))
        groups = len(bad) + (1 if self.global_merges else 0)
        share = self.alpha / groups
        history = self._history
        left = list(range(len(bad)))
        while True:  # (the worst group not served too often of late; the last one left)
            g = self._first_worst(bad, left)
            if history.count(g) / self.window <= share or len(left) == 1:
                break
            left.remove(g)
        history.append(g)
        return g

    @staticmethod
    def _first_worst(bad: list[float], groups: Sequence[int]) -> int:
        """The worst of ``groups``, the first on ties (as ``numpy.argmax``)."""
        return max(groups, key=lambda g: (bad[g], -g))

    # -- the priority ---------------------------------------------------------------

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        g = stats.view
        if g is None:  # (outside a run: the choice a first selection makes)
            bad = self._badness(stats.totals())
            g = -1 if self.global_merges or not bad else self._first_worst(bad, range(len(bad)))
        train = len(self.dev) if self.dev is not None else len(stats.totals().group_tokens)
        total = sum(stats.group_count(left, right, h) for h in range(train))
        served = total if g < 0 else stats.group_count(left, right, g)
        if served < self.min_frequency:
            return None
        if self.ties == "total" and g >= 0:
            return (served << 48) + total
        return served
