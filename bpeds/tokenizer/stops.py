"""Why a training run stopped short of the vocabulary it was asked for, in words.

:class:`EarlyStop` looks at a finished :class:`~bpeds.driver.MergeDriver` run and, when
the tokenizer it made is smaller than asked, says by how much and why: the data holds
no pair any more (every piece is one token), the pairs left are rarer than the run's
``min_frequency`` or the score's own ``min_count``, or longer than
``max_token_length``, a variant's rule refuses them, or a loop variant removed and hid
tokens about as fast as it merged until its ``max_merges``. Training warns with
:meth:`EarlyStop.message` (a ``UserWarning``); nothing here changes a result.

Not handled here: the run itself (:mod:`bpeds.tokenizer.trainer`).
"""

from __future__ import annotations

from dataclasses import dataclass

from bpeds.driver import MergeDriver

__all__ = ["EarlyStop"]


@dataclass(frozen=True)
class EarlyStop:
    """A run's shortfall: the vocabulary ``asked`` for and the one ``made`` (tokens encoding
    can emit, special tokens included), the ``merges`` done, and why it stopped.

    >>> print(EarlyStop(1000, 600, 744, 344, 0, "no pair is left").message())
    training stopped after 344 of 744 merges, with 600 of the 1000 tokens asked for: no pair
    is left
    """

    asked: int
    made: int
    asked_merges: int
    merges: int
    hidden: int  # merged tokens a loop variant removed or hid
    reason: str

    @classmethod
    def of(
        cls, driver: MergeDriver, vocab_size: int, min_frequency: int, empty: bool
    ) -> EarlyStop | None:
        """The shortfall of ``driver``'s finished run against ``vocab_size`` (which counts
        ``driver.num_merges`` merged tokens), or ``None`` when it made them all or its
        variant chose to stop. ``min_frequency``: the run's own threshold
        (``bpeds.train``'s); ``empty``: the corpus held no text. O(pairs left).
        """
        state = driver.state
        hooks = None if state is None else state.variant
        merges = len(driver.records)
        if hooks is None:
            missing = driver.num_merges - merges
        else:
            if hooks.stopped:
                return None
            missing = hooks.remaining()
        if missing <= 0:
            return None
        if empty:
            reason = "the corpus is empty"
        elif hooks is not None and merges >= driver.max_merges:
            reason = (
                f"the variant removed or hid tokens about as fast as it merged, and the run "
                f"reached its max_merges={driver.max_merges}"
            )
        else:
            reason = cls._no_pair(driver, min_frequency)
        made = vocab_size - missing
        hidden = merges - (driver.num_merges - missing)
        return cls(vocab_size, made, driver.num_merges, merges, hidden, reason)

    @staticmethod
    def _no_pair(driver: MergeDriver, min_frequency: int) -> str:
        """Which rule left no pair to merge."""
        state = driver.state
        left = [] if state is None else [c for c in state.table.pairs.values() if c > 0]
        if not left:
            return "no pair is left: every piece of the training data is now a single token"
        most = max(left)
        own = driver.score.declaration.min_count
        name = driver.score.name
        if own > min_frequency and most < own:
            return (
                f"the pairs left occur at most {most} times, and score {name!r} merges only "
                f"pairs seen at least min_count={own} times (an option of the score)"
            )
        if most < min_frequency:
            return (
                f"no pair left occurs at least min_frequency={min_frequency} times (the most "
                f"frequent occurs {most} times)"
            )
        rules = []
        if driver.max_token_length is not None:
            rules.append(f"max_token_length={driver.max_token_length}")
        if driver.variant is not None:
            rules.append(f"variant {driver.variant.name!r}'s rule for which pairs may merge")
        return "no pair left is eligible" + (f" ({', '.join(rules)})" if rules else "")

    def message(self) -> str:
        """The warning training gives."""
        if self.hidden:
            done = (
                f"{self.merges} merges ({self.hidden} of their tokens removed or hidden by "
                "the variant)"
            )
        else:
            done = f"{self.merges} of {self.asked_merges} merges"
        return (
            f"training stopped after {done}, with {self.made} of the {self.asked} tokens "
            f"asked for: {self.reason}"
        )
