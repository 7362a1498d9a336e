"""The plan of a run: what the score's declaration, the tie rule and the options choose.

Everything the driver specialises is decided here, once, from what a plug-in
declares (never from its class), and the mechanisms read these flags:

============================== ==================================================
declared                       what the driver does
============================== ==================================================
``priority="count"``           nothing is called per pair; with nothing else to
                               re-score, new pairs are pushed with their counts
``priority="int"``/``"real"``  a :class:`~bpeds.structures.BoundHeap` selects
                               (ints packed with their pair into one int); None:
                               a position-aware heap through ``MultisetBounds``
``reads >= PARTS``             unigram counts and totals are kept
``groups``                     per-group pair counts are kept
``count_fall_raises``          pairs whose count fell are re-scored
``unigram_fall_raises``        the merged tokens' pairs are re-scored (through
                               :class:`~bpeds.structures.SleepingPairs`)
``kernel``                     called inline, without ``Stats``, for pairs of
                               two different tokens
``unigram_bound``              pairs far below the top sleep under a token
``totals=RescoreAll``          everything re-scored when ``can_raise`` says so
``totals=Epochs``              epoch bounds stored, exact best taken among them
``totals=Views``               one selection structure per view
============================== ==================================================

A score with nothing to re-score but new pairs (``born_only``: the score only
falls when its count falls and reads no unigram counts, groups or totals) takes
the shortest path: its new pairs are pushed and nothing else is visited.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from bpeds.scoring.base import Declaration, Dependency, Epochs, RescoreAll, Views
from bpeds.scoring.ties import TieRule
from bpeds.variants import Variant

__all__ = ["Plan"]


@dataclass(frozen=True, slots=True)
class Plan:
    """The flags a run's mechanisms read (see the module docstring for the rules).

    >>> from bpeds.scoring import Frequency, PMI, SmallestIds
    >>> p = Plan.of(Frequency().declaration, SmallestIds(), min_count=1)
    >>> p.born_only, p.counted, p.on_heap, p.parts
    (True, True, True, False)
    >>> p = Plan.of(PMI(min_count=2).declaration, SmallestIds(), min_count=1)
    >>> p.born_only, p.rescore_parts, p.inline, p.min_count
    (False, True, True, 2)
    """

    declaration: Declaration
    #: the score reads unigram counts (and totals): ``PARTS`` and up
    parts: bool
    #: keep unigram counts (for the score, or for a variant that reads them)
    unigrams: bool
    #: keep per-group pair counts
    groups: bool
    #: the run's ``min_count`` and the score's, whichever is larger
    min_count: int
    #: pairs refused for good by a rule of the run (``max_token_length``, a variant's filter)
    fixed_rule: bool
    #: the priority is the count
    is_count: bool
    #: priorities are ints
    integer: bool
    #: the tie rule depends on positions (folded into the priority)
    dynamic: bool
    #: re-score pairs whose count fell
    rescore_fell: bool
    #: re-score the merged tokens' pairs (a ``PARTS`` score whose unigram falls raise it)
    rescore_parts: bool
    #: only new pairs can have risen: push them, nothing to compare with
    born_only: bool
    #: born_only with the count as priority and no fixed rule: bounds are the counts
    counted: bool
    #: a BoundHeap selects (else a Multiset through MultisetBounds)
    on_heap: bool
    #: the kernel is called inline in re-scoring
    inline: bool
    #: the totals policy, for ``GLOBAL`` scores
    policy: RescoreAll | Epochs | Views | None

    @classmethod
    def of(
        cls,
        declaration: Declaration,
        tie: TieRule,
        *,
        min_count: int,
        max_token_length: int | None = None,
        variant: Variant | None = None,
        multiset: Any = None,
    ) -> Plan:
        """The plan for a score with ``declaration``, ``tie`` and the run's options."""
        d = declaration
        parts = d.reads >= Dependency.PARTS
        policy = d.policy
        if isinstance(policy, Views) and policy.reset is not None and variant and variant.removes:
            raise ValueError(
                f"variant {variant.name!r} removes tokens, which would ask the score's view "
                "more than once a step, but the view keeps state (Views.reset): train them apart"
            )
        fixed_rule = max_token_length is not None or (variant is not None and variant.filters)
        is_count = d.priority == "count"
        integer = is_count or d.priority == "int"
        numeric = integer or d.priority == "real"
        rescore_fell = d.count_fall_raises is not False
        rescore_parts = parts and d.unigram_fall_raises is not False
        born_only = not (rescore_fell or rescore_parts or d.groups) and policy is None
        counted = born_only and is_count and not fixed_rule
        epochs = isinstance(policy, Epochs)
        epoch_kernel = isinstance(policy, Epochs) and policy.kernel is not None
        kernel = epoch_kernel if epochs else (parts and d.kernel is not None)
        return cls(
            declaration=d,
            parts=parts,
            unigrams=parts or (variant is not None and variant.needs_unigrams),
            groups=d.groups,
            min_count=max(min_count, d.min_count),
            fixed_rule=fixed_rule,
            is_count=is_count,
            integer=integer,
            dynamic=tie.dynamic,
            rescore_fell=rescore_fell,
            rescore_parts=rescore_parts,
            born_only=born_only,
            counted=counted,
            on_heap=multiset is None and (integer or (numeric and not tie.dynamic)),
            inline=kernel and not tie.dynamic and not fixed_rule,
            policy=policy,
        )

    @property
    def epochs(self) -> Epochs | None:
        """The :class:`~bpeds.scoring.base.Epochs` policy, if that is the score's."""
        return self.policy if isinstance(self.policy, Epochs) else None

    @property
    def views(self) -> Views | None:
        """The :class:`~bpeds.scoring.base.Views` policy, if that is the score's."""
        return self.policy if isinstance(self.policy, Views) else None
