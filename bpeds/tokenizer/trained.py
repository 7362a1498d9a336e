"""What training produces and a :class:`~bpeds.tokenizer.Tokenizer` is built from.

Training (:mod:`bpeds.tokenizer.trainer`) sits below the ``Tokenizer``: it
returns a :class:`TrainedModel`, a plain description of the model, and
``Tokenizer.from_model`` validates it and builds the tokenizer. So the
training code never needs the ``Tokenizer`` class, and the ``Tokenizer`` can
train in place without an import that goes up the layers.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TrainedModel"]


@dataclass(frozen=True, slots=True)
class TrainedModel:
    """A trained model's parts, as the ``Tokenizer`` constructor takes them.

    ``merges``: merge ``k`` is the pair of ids that makes id ``256 + k``.
    ``pattern``: the split regex source (``None``: no split). ``special_tokens``:
    text -> id. ``options``: what training recorded (JSON-compatible).
    ``unicode``: the Unicode tables the pattern is read with (``None``: the ``regex``
    module's; see :mod:`bpeds.tokenizer.unicode_tables`).
    ``events``: a loop variant's event log when encoding must replay it, else
    ``None`` (a log that makes each token once, in id order, is the merges list
    itself, and training leaves it out).

    >>> TrainedModel([(97, 98)], None, {}, {}).replays
    False
    """

    merges: list[tuple[int, int]]
    pattern: str | None
    special_tokens: dict[str, int]
    options: dict[str, Any]
    events: list[list[int | str]] | None = None
    unicode: str | None = None
    normalizer: str | None = None  # NFC, NFD, NFKC or NFKD, applied before splitting
    ids: list[int] | None = None  # the model's own id of each byte and merge token

    @property
    def replays(self) -> bool:
        """Whether encoding replays :attr:`events` (removed, re-made or hidden tokens),
        as :attr:`bpeds.tokenizer.Tokenizer.replays` says of the built tokenizer. O(1)."""
        return self.events is not None
