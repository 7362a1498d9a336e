"""The scoring contract: a score's formula, and one small object saying what it promises.

A score maps a candidate pair to a priority (larger is merged first) or to
``None`` (not eligible). Its :class:`Declaration` says what the value reads and
how it can move, and the merge driver keeps exactly the statistics that needs
and re-scores exactly the pairs whose score can have risen:

========== =================================================== ===============================
``reads``  a score may read                                     re-scored after a merge
========== =================================================== ===============================
``PAIR``   the pair's count, fixed properties (byte lengths)    pairs whose count changed
``PARTS``  + unigram counts of the pair's two tokens            + every live pair containing a
                                                                token whose count changed
``GLOBAL`` + corpus totals (tokens, pairs, per-group totals)    + what the ``totals`` policy
                                                                says (:class:`RescoreAll`,
                                                                :class:`Epochs`, :class:`Views`)
========== =================================================== ===============================

The driver's selection structure stores an *upper bound* of every pair's score
and checks the top against the exact score; the declarations are what keep
every stored bound a bound. A score that reads something it did not declare
gets a :class:`DependencyError`; a promise that turns out false is caught at
the top and raised as an :class:`~bpeds.errors.InvariantError` naming it; a
declared shortcut (``priority="count"``, ``kernel``, the priority's type) that
disagrees with :meth:`Score.score` on the first pairs is a
:class:`DeclarationError`. So a wrong declaration never gives wrong merges.
See ``docs/scoring.md``.
"""

from __future__ import annotations

import enum
import math
import os
from collections import Counter
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from typing import Any, Literal

from bpeds.errors import BpedsError

__all__ = [
    "Declaration",
    "DeclarationError",
    "Dependency",
    "DependencyError",
    "Epochs",
    "Kernel",
    "Priority",
    "PriorityKind",
    "RescoreAll",
    "RiseBound",
    "Score",
    "ScoreError",
    "ScoreFunction",
    "SlowScoreWarning",
    "Stats",
    "Totals",
    "Views",
    "reporting_score_errors",
    "score_function",
]

#: A score's value: larger is better. ``int`` and ``float`` are the usual ones;
#: anything totally ordered works.
Priority = Any

#: ``f(count, c(left), c(right), N)``: a score from the pair's count, its tokens'
#: unigram counts and the number of tokens alone (pairs of two different tokens).
Kernel = Callable[[int, int, int, int], Priority | None]

#: ``f(bound, count, then, now)``: how far a fall of one token's unigram count from
#: ``then`` to ``now`` can raise a pair's score (see :attr:`Declaration.unigram_bound`).
RiseBound = Callable[[float, int, int, int], float]

#: What a score's priorities are: ``"count"`` (the pair's count itself), ``"int"``,
#: ``"real"`` (ints or floats, never NaN); None: any totally ordered values.
PriorityKind = Literal["count", "int", "real"]


class Dependency(enum.IntEnum):
    """What a score's value depends on (each class includes the ones before it)."""

    PAIR = 0
    PARTS = 1
    GLOBAL = 2


class DependencyError(BpedsError):
    """A score read a statistic its declaration does not include."""


class DeclarationError(BpedsError, ValueError):
    """A score's declaration is malformed, or a shortcut it declares (``priority``,
    ``kernel``) disagrees with its own :meth:`Score.score`."""


class ScoreError(BpedsError, RuntimeError):
    """A score's own code raised while training (its ``score()``, ``begin_step()``, its
    kernel or epoch bound). The message names the score, the exception and where it was
    raised; the exception itself is chained (``__cause__``), traceback and all."""


_PACKAGE = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep


def _raised_at(exc: BaseException) -> tuple[str, int] | None:
    """Where ``exc`` was raised (file, line) if that is outside the bpeds package."""
    tb = exc.__traceback__
    if tb is None:
        return None
    while tb.tb_next is not None:
        tb = tb.tb_next
    filename = tb.tb_frame.f_code.co_filename
    if os.path.abspath(filename).startswith(_PACKAGE):
        return None
    return filename, tb.tb_lineno


@contextmanager
def reporting_score_errors(name: str) -> Iterator[None]:
    """Run the block (a stretch of training); an exception raised in code outside bpeds,
    the score ``name``'s own, becomes a :class:`ScoreError` that says which score failed,
    how and where, with the exception chained. bpeds's own errors, and exceptions
    raised inside bpeds, pass unchanged. O(1), plus the traceback's length on an error.

    >>> with reporting_score_errors("mine"):
    ...     eval("1 // 0")
    Traceback (most recent call last):
    ...
    bpeds.scoring.base.ScoreError: score 'mine' failed: ZeroDivisionError: integer division ...
    """
    try:
        yield
    except Exception as exc:
        where = None if isinstance(exc, BpedsError) else _raised_at(exc)
        if where is None:
            raise
        raise ScoreError(
            f"score {name!r} failed: {type(exc).__name__}: {str(exc)[:300]} (raised at "
            f"{where[0]}, line {where[1]})"
        ) from exc


class SlowScoreWarning(UserWarning):
    """A score runs exactly but slower than it could: the message names the
    declarations that would let the driver do less work (given once per score)."""


@dataclass(frozen=True, slots=True)
class Totals:
    """Corpus totals at one moment of training (what ``GLOBAL`` scores may read).

    ``tokens``: tokens in the corpus (weighted by type counts); ``pairs``: the
    sum of all pair counts; ``group_tokens``/``group_bytes``: per group, for
    scores that declare ``groups`` (empty tuples otherwise).
    """

    tokens: int
    pairs: int
    group_tokens: tuple[int, ...] = ()
    group_bytes: tuple[int, ...] = ()


def _changed(before: Totals, after: Totals) -> bool:
    return before != after


@dataclass(frozen=True, slots=True)
class RescoreAll:
    """A ``GLOBAL`` score's totals policy: after a merge whose change of totals
    ``can_raise(before, after)`` says may raise a pair whose own statistics did not
    change, every pair is re-scored (O(pairs)); otherwise only the touched ones.

    The default ``can_raise`` (any change) is always safe and re-scores after every
    merge. LikelihoodGain's, ``after.tokens > before.tokens``, never fires in
    training (``N`` only falls), which makes it as cheap as a ``PARTS`` score.

    >>> RescoreAll(lambda before, after: after.tokens > before.tokens).can_raise(
    ...     Totals(10, 9), Totals(8, 7))
    False
    """

    can_raise: Callable[[Totals, Totals], bool] = _changed


@dataclass(frozen=True, slots=True)
class Epochs:
    """A ``GLOBAL`` score's totals policy: scores are bounded over *epochs*.

    The totals raise untouched scores, but within an epoch only so far:
    ``start(totals)`` is the epoch beginning at ``totals`` (the totals that ``bound``
    reads through ``stats.totals()``), ``holds(totals, epoch)`` says whether
    ``totals`` reached since are still in it, and ``bound(count, left, right,
    stats)`` is an upper bound of the pair's score at *every* totals of the epoch
    (None exactly when the score is None). Within an epoch the bound must move with
    the pair's own statistics as the declaration's other members say
    (``count_fall_raises``, ``unigram_fall_raises``).

    The driver stores epoch bounds, selects the best *exact* score among the pairs
    whose bound reaches it (ties by the rule), and bounds every pair again when the
    epoch ends: O(pairs) once per epoch instead of once per merge. Optional:
    ``kernel(epoch)``, ``bound`` as a :data:`Kernel` for that epoch; and
    ``unigram_bound(epoch)``, the :data:`RiseBound` of the epoch's bounds.
    NPMI is the shipped example; ``docs/scoring.md`` builds another.
    """

    start: Callable[[Totals], Totals]
    holds: Callable[[Totals, Totals], bool]
    bound: Callable[[int, int, int, Stats], Priority | None]
    kernel: Callable[[Totals], Kernel | None] | None = None
    unigram_bound: Callable[[Totals], RiseBound | None] | None = None


@dataclass(frozen=True, slots=True)
class Views:
    """A ``GLOBAL`` score's totals policy: the totals matter only through a *view*.

    ``view(totals)`` picks one of a few ints, and the score reads it as
    ``stats.view``. The driver keeps one selection structure per view (each built
    the first time its view is selected), pushes every rise into each, and
    selects in the view of the current totals: nothing is re-scored when the view
    changes. Within a view the declaration's other members apply.
    GroupFrequency's view is the worst-compressed group.

    ``reset``: for a view that keeps state of its own (the history of the views it
    chose, the number of selections so far: parity-aware BPE's moving window and
    hybrid mode). The driver calls ``reset()`` when a run starts and then ``view``
    exactly once before each selection, in order (and once after the last merge);
    a loop variant that removes tokens would call it again within a step, so the
    driver refuses that combination.
    """

    view: Callable[[Totals], int]
    reset: Callable[[], None] | None = None


TotalsPolicy = RescoreAll | Epochs | Views


@dataclass(frozen=True, slots=True)
class Declaration:
    """What a score promises; the driver reads nothing else of it.

    ``reads``: the :class:`Dependency` class of the value. ``groups``: it reads
    per-group pair counts (``stats.group_count``). ``priority``: ``"count"`` (the
    count itself: nothing is called per pair), ``"int"`` (packed heap entries),
    ``"real"`` (int or float, never NaN: the bound heap), or None (any totally
    ordered values: a position-aware heap). ``min_count``: pairs counted fewer
    times are never eligible. ``count_fall_raises``: can a fall of the pair's own
    count raise its score? ``unigram_fall_raises`` (``PARTS`` and up): can a fall
    of one of its tokens' unigram counts? (None for either: not declared, which is
    read as True, the safe answer.) ``kernel``: the score as a :data:`Kernel`, called
    inline for pairs of two different tokens. ``unigram_bound``: a :data:`RiseBound`,
    ``f(bound, count, then, now)`` bounding the score of a pair counted ``count``
    times (or fewer) whose score was at most ``bound`` when one of its tokens
    occurred ``then`` times, now that it occurs ``now`` times; ``f`` must not fall
    when ``bound``, ``count`` or ``then`` grow. With it, pairs far below the top
    sleep instead of being re-scored by every merge of their token. ``totals``
    (``GLOBAL`` only): how the totals move the score, a :class:`RescoreAll`
    (default), :class:`Epochs` or :class:`Views`.

    >>> Declaration(Dependency.PARTS, priority="real", count_fall_raises=False)
    Declaration(reads=PARTS, priority='real', count_fall_raises=False)
    >>> Declaration(Dependency.PAIR, totals=RescoreAll())
    Traceback (most recent call last):
    ...
    bpeds.scoring.base.DeclarationError: totals= is for GLOBAL scores: this one reads PAIR
    """

    reads: Dependency = Dependency.PAIR
    groups: bool = False
    priority: PriorityKind | None = None
    min_count: int = 1
    count_fall_raises: bool | None = None
    unigram_fall_raises: bool | None = None
    kernel: Kernel | None = None
    unigram_bound: RiseBound | None = None
    totals: TotalsPolicy | None = field(default=None)

    def __post_init__(self) -> None:
        if not isinstance(self.reads, Dependency):
            raise DeclarationError(f"reads must be a Dependency, got {self.reads!r}")
        if self.priority not in (None, "count", "int", "real"):
            raise DeclarationError(
                f"priority must be 'count', 'int', 'real' or None, got {self.priority!r}"
            )
        if isinstance(self.min_count, bool) or not (
            isinstance(self.min_count, int) and self.min_count >= 1
        ):
            raise DeclarationError(f"min_count must be an int >= 1, got {self.min_count!r}")
        for name in ("groups", "count_fall_raises", "unigram_fall_raises"):
            value = getattr(self, name)
            if value is not None and not isinstance(value, bool):
                raise DeclarationError(f"{name} must be True or False, got {value!r}")
        for name in ("kernel", "unigram_bound"):
            value = getattr(self, name)
            if value is not None and not callable(value):
                raise DeclarationError(f"{name} must be a function, got {value!r}")
        if self.totals is not None:
            if self.reads is not Dependency.GLOBAL:
                raise DeclarationError(
                    f"totals= is for GLOBAL scores: this one reads {self.reads.name}"
                )
            if not isinstance(self.totals, RescoreAll | Epochs | Views):
                raise DeclarationError(
                    f"totals must be RescoreAll, Epochs or Views, got {self.totals!r}"
                )

    @property
    def policy(self) -> TotalsPolicy | None:
        """The totals policy in force: ``totals``, or :class:`RescoreAll` for a
        ``GLOBAL`` score that gave none; None below ``GLOBAL``."""
        if self.reads is not Dependency.GLOBAL:
            return None
        return self.totals if self.totals is not None else _RESCORE_ALL

    def advice(self) -> list[str]:
        """What this declaration leaves undeclared that would make the driver do
        less work, in plain words (empty when nothing would).

        >>> Declaration(Dependency.PAIR, priority="int", count_fall_raises=False).advice()
        []
        >>> [tip.split(",")[0] for tip in Declaration(Dependency.PAIR).advice()]
        ["priority='real' (or 'int')", 'count_fall_raises=False']
        """
        tips: list[str] = []
        if self.priority is None:
            tips.append(
                "priority='real' (or 'int'), if the score returns ints or floats: a bound "
                "heap holds them, instead of a position-aware heap"
            )
        if self.count_fall_raises is None:
            tips.append(
                "count_fall_raises=False, if the score never rises when the pair's own count "
                "falls (it grows with the count): pairs whose count fell are then not re-scored"
            )
        if self.reads >= Dependency.PARTS and self.priority != "count":
            if self.kernel is None and not isinstance(self.totals, Epochs | Views):
                tips.append(
                    "kernel=f(count, c_left, c_right, n_tokens), if the score reads nothing "
                    "else: it is then called inline instead of through score() and Stats"
                )
            if self.unigram_fall_raises is None:
                tips.append(
                    "unigram_fall_raises=False, if a fall of a token's unigram count never "
                    "raises the score: the merged tokens' pairs are then not re-scored"
                )
            elif (
                self.unigram_fall_raises
                and self.unigram_bound is None
                and not isinstance(self.totals, Epochs | Views)
            ):
                tips.append(
                    "unigram_bound=f(bound, count, then, now), how far a fall of a token's "
                    "count can raise the score: pairs far below the top then sleep instead "
                    "of being re-scored by every merge of their tokens"
                )
        if self.reads is Dependency.GLOBAL and self.totals is None:
            tips.append(
                "totals=RescoreAll(can_raise=...), Epochs(...) or Views(...): as declared, "
                "every pair is re-scored after every merge"
            )
        return tips

    def accepts(self, value: Priority) -> bool:
        """Is ``value`` a priority of the declared kind (None, not eligible, always is)?
        ``"real"`` excludes NaN. O(1).

        >>> d = Declaration(priority="real")
        >>> d.accepts(2), d.accepts(0.5), d.accepts(float("nan")), d.accepts((1, 2))
        (True, True, False, False)
        """
        kind = self.priority
        if kind is None or value is None:
            return True
        if kind != "real":
            return type(value) is int
        return (type(value) is int or type(value) is float) and not math.isnan(value)

    def __repr__(self) -> str:
        shown = [f"reads={self.reads.name}"]
        for f in fields(self)[1:]:
            value = getattr(self, f.name)
            if value != f.default:
                shown.append(f"{f.name}={value!r}")
        return f"Declaration({', '.join(shown)})"


_RESCORE_ALL = RescoreAll()


def _refuse_unigram(token: int) -> int:
    raise DependencyError(
        "this score read unigram counts but declares reads=Dependency.PAIR; "
        "declare Dependency.PARTS so the driver tracks and re-scores them"
    )


def _no_bytes(token: int) -> bytes:
    raise DependencyError("this Stats was made without a token_bytes table")


class Stats:
    """The read-only view of training statistics a score is given.

    The driver owns and updates the underlying tables; a score only reads them.
    Reading a statistic outside the score's declaration raises
    :class:`DependencyError`. Every accessor is O(1).

    ``length(token)``: byte length of a token, ``token_bytes(token)``: its bytes (fixed
    properties: allowed for every class; a token made by the current merge is already
    there when the driver scores its pairs). ``unigram(token)``: how many times the
    token occurs in the current corpus (``PARTS`` and up). They are plain callables
    stored on the instance (for unigram counts, the list's or ``Counter``'s own
    lookup), because scores call them in the innermost loop of training. ``unigram``
    is given as a list indexed by token id (every id below its length, as the driver
    keeps it) or as a mapping (absent tokens count 0). ``view``: the current view of
    a score whose totals policy is :class:`Views` (None otherwise).
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
                "this score read corpus totals but does not declare reads=Dependency.GLOBAL"
            )
        return self._totals_fn()

    def group_count(self, left: int, right: int, group: int) -> int:
        """Count of the pair within one group (scores that declare ``groups=True``);
        0 for a group past the last one the corpus holds text in (a development set
        that is empty, say). O(1)."""
        if self._group_counts is None or self._pair_key is None:
            raise DependencyError(
                "this score read per-group counts but does not declare groups=True"
            )
        counts = self._group_counts.get(self._pair_key(left, right))
        if counts is None:
            return 0
        if group < 0:
            raise ValueError(f"group must be 0 or more, not {group}")
        try:
            return counts[group]
        except IndexError:  # (a group past the last one with text)
            return 0


class Score:
    """Base class of scoring strategies. Subclass it, or use :func:`score_function`.

    Override :meth:`score` and set ``declaration`` (a class attribute, or an
    instance attribute set in ``__init__`` when it depends on the score's options).
    A subclass inherits its parent's declaration like any attribute: when it
    changes the formula it should declare again. The driver checks the shortcuts
    a declaration takes (``priority``, ``kernel``) against :meth:`score` on the
    first pairs and raises :class:`DeclarationError` when they disagree, and any
    other promise that fails is caught when it would have mattered.
    """

    name: str = "score"
    declaration: Declaration = Declaration()
    #: For a score that reads per-group counts: development text per group name (file
    #: paths), which training adds to the corpus as groups of its own after the training
    #: groups, in their order, so that merges apply to it; the score measures on it and
    #: never counts it as training text (parity-aware BPE's development sets). None: none.
    dev: Mapping[str, Sequence[str]] | None = None

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        """Priority of merging ``(left, right)``, seen ``count`` times; None if ineligible."""
        raise NotImplementedError

    def begin_step(self, stats: Stats) -> None:
        """Called once before each selection; a place to cache per-step values."""

    def options(self) -> dict[str, Any]:
        """The score's parameters, recorded with a run's options."""
        return {}

    def describe(self) -> dict[str, Any]:
        """``{"name": ..., **options}``: what a saved model records of this score."""
        return {"name": self.name, **self.options()}

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.options().items())
        return f"{type(self).__name__}({args})"


class ScoreFunction(Score):
    """A :class:`Score` wrapping a plain function; made by :func:`score_function`."""

    def __init__(
        self,
        fn: Callable[[int, int, int, Stats], Priority | None],
        declaration: Declaration,
        name: str,
    ) -> None:
        self._fn = fn
        self.declaration = declaration
        self.name = name

    def score(self, count: int, left: int, right: int, stats: Stats) -> Priority | None:
        return self._fn(count, left, right, stats)


_MEMBERS = tuple(f.name for f in fields(Declaration))


def score_function(
    reads: Dependency | Declaration = Dependency.PAIR,
    *,
    name: str | None = None,
    **declaration: Any,
) -> Callable[[Callable[[int, int, int, Stats], Priority | None]], ScoreFunction]:
    """Turn ``fn(count, left, right, stats) -> priority | None`` into a :class:`Score`.

    ``reads`` is the :class:`Dependency` class, or a whole :class:`Declaration`;
    the keywords are the :class:`Declaration`'s other members (``priority``,
    ``count_fall_raises``, ``kernel``, ``unigram_bound``, ``totals``, ...): a
    function declares everything a class can.

    >>> @score_function(Dependency.PAIR, priority="int", count_fall_raises=False)
    ... def long_pairs(count, left, right, stats):
    ...     return count * (stats.length(left) + stats.length(right))
    >>> long_pairs.name, long_pairs.declaration
    ('long_pairs', Declaration(reads=PAIR, priority='int', count_fall_raises=False))
    >>> score_function(Dependency.PAIR, integer=True)
    Traceback (most recent call last):
    ...
    TypeError: score_function() has no declaration 'integer'; the declarations are: ...
    """
    for key in declaration:
        if key not in _MEMBERS or key == "reads":
            raise TypeError(
                f"score_function() has no declaration {key!r}; the declarations are: "
                + ", ".join(_MEMBERS)
            )
    if isinstance(reads, Declaration):
        if declaration:
            raise TypeError("give score_function() a Declaration or keywords, not both")
        decl = reads
    else:
        decl = Declaration(reads, **declaration)

    def wrap(fn: Callable[[int, int, int, Stats], Priority | None]) -> ScoreFunction:
        return ScoreFunction(fn, decl, name or fn.__name__)

    return wrap
