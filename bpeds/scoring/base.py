"""The scoring-strategy contract: what a score may read, and what it must declare.

A score maps a candidate pair to a priority (larger is merged first) or to
``None`` (not eligible). It declares what its value depends on, and the merge
driver keeps exactly the statistics that needs and re-scores exactly the pairs
whose score can change:

========== =================================================== ===============================
class      a score may read                                     re-scored after a merge
========== =================================================== ===============================
``PAIR``   the pair's count, fixed properties (byte lengths)    pairs whose count changed
``PARTS``  + unigram counts of the pair's two tokens            + every live pair containing a
                                                                token whose count changed
``GLOBAL`` + corpus totals (tokens, pairs, per-group totals)    + everything, when
                                                                ``totals_can_raise`` says so
========== =================================================== ===============================

The driver's selection structure is a max-heap checked at the top: an entry
whose stored priority differs from a fresh score is re-pushed with the fresh
one. That is exact only while every stored priority is an *upper bound* of its
pair's current score. The driver upholds it from the declarations: it re-scores
every pair whose score may have risen and stores a new bound for it (the fresh
score, or a coarser bound: a parked bucket's, or a token's cover for pairs
asleep under a declared :meth:`Score.unigram_bound`; see :mod:`bpeds.driver`),
and for ``GLOBAL`` scores it asks ``totals_can_raise(before, after)`` after
every merge and re-scores every pair if the answer is yes. A score that reads
something it did not declare gets a :class:`DependencyError`, so an undeclared
dependency cannot silently break exactness. See ``docs/scoring.md``.
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from bpeds.errors import BpedsError

__all__ = [
    "Dependency",
    "DependencyError",
    "Priority",
    "Score",
    "ScoreFunction",
    "Stats",
    "Totals",
    "declared",
    "score_function",
]

#: A score's value: larger is better. ``int`` and ``float`` are the usual ones;
#: anything totally ordered works.
Priority = Any


class Dependency(enum.IntEnum):
    """What a score's value depends on (each class includes the ones before it)."""

    PAIR = 0
    PARTS = 1
    GLOBAL = 2


class DependencyError(BpedsError):
    """A score read a statistic its declared :class:`Dependency` does not include."""


@dataclass(frozen=True, slots=True)
class Totals:
    """Corpus totals at one moment of training (what ``GLOBAL`` scores may read).

    ``tokens``: tokens in the corpus (weighted by type counts); ``pairs``: the
    sum of all pair counts; ``group_tokens``/``group_bytes``: per group, for
    scores with ``needs_groups`` (empty tuples otherwise).
    """

    tokens: int
    pairs: int
    group_tokens: tuple[int, ...] = ()
    group_bytes: tuple[int, ...] = ()


def _refuse_unigram(token: int) -> int:
    raise DependencyError(
        "this score read unigram counts but declared depends=Dependency.PAIR; "
        "declare Dependency.PARTS so the driver tracks and re-scores them"
    )


def _no_bytes(token: int) -> bytes:
    raise DependencyError("this Stats was made without a token_bytes table")


class Stats:
    """The read-only view of training statistics a score is given.

    The driver owns and updates the underlying tables; a score only reads them.
    Reading a statistic outside the score's declared dependency raises
    :class:`DependencyError`. Every accessor is O(1).

    ``length(token)``: byte length of a token, ``token_bytes(token)``: its bytes (fixed
    properties: allowed for every class; a token made by the current merge is already
    there when the driver scores its pairs). ``unigram(token)``: how many times the
    token occurs in the current corpus (``PARTS`` and up). They are plain callables
    stored on the instance (for unigram counts, the list's or ``Counter``'s own
    lookup), because scores call them in the innermost loop of training. ``unigram``
    is given as a list indexed by token id (every id below its length, as the driver
    keeps it) or as a mapping (absent tokens count 0).
    """

    __slots__ = (
        "_depends",
        "_group_counts",
        "_pair_key",
        "_totals_fn",
        "length",
        "token_bytes",
        "unigram",
        "view",
    )

    def __init__(
        self,
        depends: Dependency,
        lengths: Callable[[int], int],
        unigram: list[int] | Mapping[int, int] | None,
        totals: Callable[[], Totals],
        group_counts: Mapping[int, list[int]] | None = None,
        pair_key: Callable[[int, int], int] | None = None,
        token_bytes: Callable[[int], bytes] | None = None,
    ) -> None:
        self._depends = depends
        self.length: Callable[[int], int] = lengths
        self.token_bytes: Callable[[int], bytes] = _no_bytes if token_bytes is None else token_bytes
        self.unigram: Callable[[int], int]
        if unigram is None:
            self.unigram = _refuse_unigram
        elif isinstance(unigram, list):
            self.unigram = unigram.__getitem__
        else:
            counts = unigram if isinstance(unigram, Counter) else Counter(unigram)
            self.unigram = counts.__getitem__
        self._totals_fn = totals
        self._group_counts = group_counts
        self._pair_key = pair_key
        self.view: int | None = None

    def totals(self) -> Totals:
        """Corpus totals now (``GLOBAL`` only)."""
        if self._depends < Dependency.GLOBAL:
            raise DependencyError(
                "this score read corpus totals but did not declare depends=Dependency.GLOBAL"
            )
        return self._totals_fn()

    def group_count(self, left: int, right: int, group: int) -> int:
        """Count of the pair within one group (scores with ``needs_groups = True``)."""
        if self._group_counts is None or self._pair_key is None:
            raise DependencyError(
                "this score read per-group counts but did not set needs_groups = True"
            )
        counts = self._group_counts.get(self._pair_key(left, right))
        return 0 if counts is None else counts[group]


class Score:
    """Base class of scoring strategies. Subclass it, or use :func:`score_function`.

    Override :meth:`score`; set ``depends`` (and ``needs_groups`` if the score
    reads per-group counts); for ``GLOBAL`` scores override
    :meth:`totals_can_raise` when you can prove totals changes only lower
    untouched scores (it is what keeps them cheap).
    """

    name: str = "score"
    depends: Dependency = Dependency.PAIR
    needs_groups: bool = False

    # -- capabilities: what the driver may rely on (see docs/scoring.md) -------
    #: Pairs counted fewer times than this are never eligible (the score returns
    #: None for them): the driver can forget such pairs without scoring them.
    min_count: int = 1
    #: The priority is the pair's count itself (``score(count, ...) == count``):
    #: nothing is called per pair.
    is_count: bool = False
    #: Priorities are ints: the driver's heap packs each with its pair into one int.
    integer: bool = False
    #: Priorities are real numbers (int or float, never NaN): the driver's
    #: :class:`~bpeds.structures.BoundHeap` can hold them (others, such as tuples, go
    #: to a :class:`~bpeds.structures.HeapyKiYay`). ``integer`` implies it.
    numeric: bool = False
    #: Can a fall of the pair's own count (everything else unchanged) raise its score?
    #: False for scores that grow with the count (frequency-like): then a pair whose
    #: count fell keeps a valid upper bound and is not re-scored.
    count_fall_raises: bool = True
    #: (``PARTS`` and up) Can a fall of a token's unigram count raise the score of a
    #: pair containing it? If True every pair of the two merged tokens is re-scored
    #: after their merge; if False (the score falls or stays), none is.
    unigram_fall_raises: bool = True
    #: (``GLOBAL``) The score depends on the totals only through a *view* chosen from
    #: them by :meth:`view` (one of a few: GroupFrequency's is the worst-compressed
    #: group), and scores in ``stats.view`` when it is set. The driver then keeps one
    #: selection structure per view and switches between them instead of re-scoring
    #: every pair when the totals move; within a view the other declarations apply.
    views: bool = False

    def view(self, totals: Totals) -> int:
        """(``views``) The view ``totals`` select: an int, one of a few. O(groups)."""
        raise NotImplementedError

    #: (``GLOBAL``) The totals can raise untouched scores, but only so far within an
    #: *epoch*: :meth:`epoch` gives the epoch of the current totals, :meth:`in_epoch`
    #: says when the totals have left it, and :meth:`epoch_bound` bounds a pair's score
    #: over the whole epoch. The driver then stores epoch bounds (exact at the epoch's
    #: totals, like the bounds of a ``PARTS`` score), selects the best exact score among
    #: the pairs whose bound reaches it, and re-scores everything once per epoch instead
    #: of once per merge.
    epochs: bool = False

    def epoch(self, totals: Totals) -> Totals:
        """(``epochs``) The epoch that starts at ``totals``: the totals that
        :meth:`epoch_bound` reads (through ``stats.totals()``). O(1)."""
        raise NotImplementedError

    def in_epoch(self, totals: Totals, epoch: Totals) -> bool:
        """(``epochs``) Are ``totals`` (reached since ``epoch`` began) still in it? O(1)."""
        raise NotImplementedError

    def epoch_kernel(self, epoch: Totals) -> Callable[[int, int, int, int], Priority | None] | None:
        """(``epochs``) :meth:`epoch_bound` for this epoch as ``f(count, c(left), c(right),
        N)``, as :meth:`kernel` is the score (pairs of two different tokens; ``N`` is
        the epoch's). None (the default): the driver calls :meth:`epoch_bound`."""
        return None

    def epoch_unigram_bound(self, epoch: Totals) -> Callable[[float, int, int, int], float] | None:
        """(``epochs``, ``PARTS``) :meth:`unigram_bound` for the epoch bounds of this epoch
        (the driver asks again at each epoch). None (the default): every pair of a merged
        token is re-scored."""
        return None

    def epoch_bound(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        """(``epochs``) An upper bound of the pair's score at every totals of the epoch
        ``stats.totals()`` (with the pair's own statistics as they are; rises of those are
        re-scored as the other declarations say). None exactly when :meth:`score` is None.
        """
        raise NotImplementedError

    def unigram_bound(self) -> Callable[[float, int, int, int], float] | None:
        """(``PARTS``) How far a fall of one token's count can raise a pair's score.

        ``f(bound, count, then, now)``: an upper bound of the score of a pair counted
        ``count`` times (or fewer) whose score was at most ``bound`` when one of its
        tokens was counted ``then`` times, now that it is counted ``now`` times and
        nothing else the score reads has risen. ``f`` must not fall when ``bound``,
        ``count`` or ``then`` grow. PMI: ``bound * then / now``. With it the driver
        leaves pairs far below the top unvisited by that token's merges and wakes them
        when the bound says they could matter. None (the default): every pair of a
        merged token is re-scored.
        """
        return None

    def kernel(self) -> Callable[[int, int, int, int], Priority | None] | None:
        """The score as ``f(count, c(left), c(right), N)`` when it reads nothing else.

        For ``PARTS`` and ``GLOBAL`` scores whose value, for a pair of two different
        tokens, depends only on the pair's count, its tokens' unigram counts and the
        number of tokens ``N`` (PMI, WordPiece, LikelihoodGain): the driver calls it
        inline, without a :class:`Stats` and a method call per pair. A pair ``(t, t)``
        still goes through :meth:`score`. Must equal :meth:`score`. None (the
        default): the driver calls :meth:`score`.
        """
        return None

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        """Priority of merging ``(left, right)``, seen ``count`` times; None if ineligible."""
        raise NotImplementedError

    def begin_step(self, stats: Stats) -> None:
        """Called once before each selection; a place to cache per-step values."""

    def totals_can_raise(self, before: Totals, after: Totals) -> bool:
        """Can going from ``before`` to ``after`` raise the score of a pair whose own
        statistics did not change? Only asked of ``GLOBAL`` scores; True is always safe.
        """
        return before != after

    def options(self) -> dict[str, Any]:
        """The score's parameters, recorded with a run's options."""
        return {}

    def describe(self) -> dict[str, Any]:
        """``{"name": ..., **options}``: what a saved model records of this score."""
        return {"name": self.name, **self.options()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({args})"


#: Declarations that stand in for the formula (or for its type): a subclass that
#: overrides :meth:`Score.score` without declaring them again does not inherit them.
_FORMULA = ("is_count", "integer", "numeric", "kernel", "unigram_bound", "views", "epochs")


def declared(score: Score, name: str) -> Any:
    """A score's declaration ``name``, as the driver may rely on it.

    ``is_count``, ``integer``, ``numeric``, ``views``, ``epochs``, ``kernel`` and
    ``unigram_bound`` (the
    last two called: their results are returned) describe the formula
    itself, so they hold only if declared by the class that defines ``score``
    or a subclass of it; a subclass that overrides ``score`` gets the safe
    defaults (False, None) unless it declares them again. Other declarations
    are inherited as usual.

    >>> from bpeds.scoring.strategies import Frequency
    >>> class Squared(Frequency):
    ...     def score(self, count, left, right, stats):
    ...         return count * count
    >>> declared(Frequency(), "is_count"), declared(Squared(), "is_count")
    (True, False)
    """
    if name in _FORMULA and not isinstance(score, ScoreFunction):
        mro = type(score).__mro__
        inst = vars(score) if hasattr(score, "__dict__") else {}
        if name not in inst:
            owner = next(c for c in mro if name in c.__dict__)
            formula = next(c for c in mro if "score" in c.__dict__)
            if not issubclass(owner, formula):
                return None if name in _METHODS else False
    value = getattr(score, name)
    return value() if name in _METHODS else value


_METHODS = ("kernel", "unigram_bound")


class ScoreFunction(Score):
    """A :class:`Score` wrapping a plain function; made by :func:`score_function`."""

    def __init__(
        self,
        fn: Callable[[int, int, int, Stats], Priority | None],
        depends: Dependency,
        name: str,
        can_raise: Callable[[Totals, Totals], bool] | None = None,
        **declarations: Any,
    ) -> None:
        self._fn = fn
        self.depends = depends
        self.name = name
        self._can_raise = can_raise
        for key, val in declarations.items():
            if key not in _DECLARATIONS:
                raise TypeError(
                    f"score_function() has no declaration {key!r}; "
                    f"the declarations are: {', '.join(sorted(_DECLARATIONS))}"
                )
            if not isinstance(val, _DECLARATIONS[key]):
                raise TypeError(f"{key} must be {_DECLARATIONS[key].__name__}, got {val!r}")
            setattr(self, key, val)
        if self.integer:
            self.numeric = True

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return self._fn(count, left, right, stats)

    def totals_can_raise(self, before: Totals, after: Totals) -> bool:
        if self._can_raise is None:
            return before != after
        return self._can_raise(before, after)


#: What a score function may declare (see :class:`Score`), and of which type.
_DECLARATIONS: dict[str, type] = {
    "min_count": int,
    "integer": bool,
    "numeric": bool,
    "count_fall_raises": bool,
    "unigram_fall_raises": bool,
    "needs_groups": bool,
}


def score_function(
    depends: Dependency,
    *,
    name: str | None = None,
    can_raise: Callable[[Totals, Totals], bool] | None = None,
    **declarations: Any,
) -> Callable[[Callable[[int, int, int, Stats], Priority | None]], ScoreFunction]:
    """Turn ``fn(count, left, right, stats) -> priority | None`` into a :class:`Score`.

    ``declarations`` set the score's capabilities (``integer``, ``numeric``,
    ``count_fall_raises``, ``unigram_fall_raises``, ``min_count``, ``needs_groups``;
    see :class:`Score`): what they promise lets the driver do less work.

    >>> @score_function(Dependency.PAIR, integer=True, count_fall_raises=False)
    ... def long_pairs(count, left, right, stats):
    ...     return count * (stats.length(left) + stats.length(right))
    >>> long_pairs.depends, long_pairs.name, long_pairs.integer
    (<Dependency.PAIR: 0>, 'long_pairs', True)
    """

    def wrap(fn: Callable[[int, int, int, Stats], Priority | None]) -> ScoreFunction:
        return ScoreFunction(fn, depends, name or fn.__name__, can_raise, **declarations)

    return wrap
