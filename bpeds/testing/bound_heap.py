"""A reference model and a Hypothesis state machine for bound heaps (selection structures).

A *bound heap* answers "which key has the largest priority?" for priorities
that only **fall** on their own, provided every **rise** is pushed: it stores
upper bounds and checks the top against a ``current(key)`` callback (the exact
priority, or None when the key is not eligible). :class:`~bpeds.structures.BoundHeap`
and :class:`~bpeds.structures.MultisetBounds` are two; test your own in a few
lines::

    from hypothesis import settings
    from bpeds.testing.bound_heap import bound_heap_machine

    Machine = bound_heap_machine(lambda s: MyBoundHeap(s.current, s.items, rank=s.rank))
    TestMyBoundHeap = Machine.TestCase
    TestMyBoundHeap.settings = settings(max_examples=100, stateful_step_count=50)

``factory(setup)`` gets a :class:`BoundSetup`: the ``current`` callback (which
reads the model), the initial ``items``, the drawn tie ``rank`` (None: the
key itself), a ``source()`` of every eligible ``(key, priority)`` (for
structures that rebuild themselves), the drawn priority ``kind`` and
``options``, a value drawn from the machine's ``options`` strategy (for
structure-specific knobs; None by default).

The model (:class:`BoundModel`) is a dict key -> current priority, the
"truth". The machine changes it in the three ways the contract allows and
calls the structure only where the contract says it must be told:

* **set** a key to a drawn priority (a rise, an equal re-score, a told fall,
  or the birth of a key) and tell the structure with ``push``, ``extend`` or
  ``raise_bounds`` (the ``rises`` argument says which of them it has); a
  batch may set the same key twice, re-score keys at their current priority,
  or (through ``raise_bounds``) re-score a key as None; if the structure has
  ``bound_of(key)`` (the bound it stored, as ``raise_bounds`` compares
  with it), a key -- eligible or dead -- is also set to at most that bound
  and told through ``raise_bounds``, which need push nothing for it;
* **fall**: lower a key's priority *without* telling the structure;
* **kill**: make a key ineligible (``current`` returns None), sometimes
  telling the structure through ``discard`` if it has one; a killed key may
  be set again later (born again);

and ``pop()`` must return exactly the model's best ``(key, priority)``
(largest priority; ties by the smallest ``rank(key)``, then the smallest
key), or None when no key is eligible; the popped key leaves the model (its
``current`` is None from then on). ``check(keys=<the model's keys>)`` runs
after every step, and ``len()`` must be at least the number of eligible keys.

Priorities come from a small fixed domain per kind, dense around powers of
two so that a structure bucketing by binary exponent sees every boundary:

* ``"int"``: -3 .. 128 (negatives and zero included);
* ``"float"``: the same values divided by 8 (exact; exponents down to -2);
* ``"bigint"``: small ints and ints from ``2**53`` to ``2**62``, next to powers of two, which
  a float cannot tell apart (a structure must not round them through floats);
* ``"tuple"``: pairs of ints in 0 .. 2 (no ``> 0`` test: not for BoundHeap's
  parking).

Not covered: an unpushed rise (a broken contract: see the ``BoundError``
tests in ``tests/test_bound_heap.py``), keys other than small ints, thread
safety.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from bpeds.errors import PreconditionError
from bpeds.testing.multisets import _OptionsMachine, _per_subclass, negated, scrambled

__all__ = [
    "BOUND_KINDS",
    "RISES",
    "BoundKind",
    "BoundModel",
    "BoundSetup",
    "Rise",
    "bound_heap_machine",
    "bound_priorities",
    "priority_domain",
]

BoundKind = Literal["int", "float", "bigint", "tuple"]
#: Every priority kind the machine knows.
BOUND_KINDS: tuple[BoundKind, ...] = ("int", "float", "bigint", "tuple")
Rise = Literal["push", "extend", "raise_bounds"]
#: Every way of telling a structure about a rise.
RISES: tuple[Rise, ...] = ("push", "extend", "raise_bounds")
#: Keys are 0 .. N_KEYS - 1 (at most 13: :func:`scrambled` permutes 0 .. 12).
N_KEYS = 8

# Simplest first (shrinking goes to the front), negatives last.
_INTS = (
    *(1, 2, 0, 3, 4, 5, 6, 7, 8, 9),
    *(15, 16, 17, 31, 32, 33, 63, 64, 65, 100, 127, 128),
    *(-1, -2, -3),
)
_BIG_INTS = (
    *(1, 2, 0, 3, 8),
    *(2**53, 2**53 + 1, 2**54 - 1, 2**54, 2**60 - 1, 2**60, 2**61 - 1, 2**62),
    *(-1, -(2**60)),
)


def priority_domain(kind: BoundKind) -> list[Any]:
    """Every priority the machine uses for ``kind``, in shrinking order (simplest first).

    >>> priority_domain("int")[:4], priority_domain("float")[:3], priority_domain("tuple")[:2]
    ([1, 2, 0, 3], [0.125, 0.25, 0.0], [(0, 0), (0, 1)])
    """
    if kind == "int":
        return list(_INTS)
    if kind == "float":
        return [v / 8 for v in _INTS]
    if kind == "bigint":
        return list(_BIG_INTS)
    if kind == "tuple":
        return [(a, b) for a in range(3) for b in range(3)]
    raise ValueError(f"unknown priority kind {kind!r}; use one of {BOUND_KINDS}")


def bound_priorities(kind: BoundKind = "int") -> st.SearchStrategy[Any]:
    """A priority of ``kind`` from :func:`priority_domain`."""
    return st.sampled_from(priority_domain(kind))


class BoundModel:
    """The oracle: a dict key -> current priority, and a linear scan for the best key.

    A key absent from the dict is not eligible (``current`` gives None).

    >>> m = BoundModel({3: 10, 5: 7, 9: 10})
    >>> m.best()
    (3, 10)
    >>> m.fall(9, 4); m.pop(), m.pop(), m.pop(), m.pop()
    ((3, 10), (5, 7), (9, 4), None)
    >>> BoundModel({1: 2, 2: 2}, rank=lambda k: -k).best()
    (2, 2)
    """

    def __init__(
        self,
        items: Mapping[int, Any] | Iterable[tuple[int, Any]] = (),
        *,
        rank: Callable[[int], Any] | None = None,
    ) -> None:
        """Start from ``items``, a mapping or ``(key, priority)`` pairs (None priorities
        are skipped). O(n)."""
        self.rank = rank
        pairs = items.items() if isinstance(items, Mapping) else items
        self.truth: dict[int, Any] = {k: p for k, p in pairs if p is not None}

    def current(self, key: int) -> Any:
        """The exact priority of ``key``, or None if it is not eligible. O(1)."""
        return self.truth.get(key)

    def set(self, key: int, priority: Any) -> None:
        """Set ``key``'s priority (None: make it ineligible). The caller must tell the
        structure. O(1)."""
        if priority is None:
            self.truth.pop(key, None)
        else:
            self.truth[key] = priority

    def fall(self, key: int, priority: Any) -> None:
        """Lower an eligible key's priority (the structure need not be told). O(1).

        Raises :class:`~bpeds.errors.PreconditionError` unless ``priority`` is
        below the current one.
        """
        now = self.truth.get(key)
        if now is None or not priority < now:
            raise PreconditionError(f"fall({key}, {priority!r}): current priority is {now!r}")
        self.truth[key] = priority

    def kill(self, key: int) -> None:
        """Make ``key`` ineligible. O(1)."""
        self.truth.pop(key, None)

    def _before(self, a: int, b: int) -> bool:
        """Whether ``a`` wins over ``b``: larger priority, then smaller rank, then key."""
        pa, pb = self.truth[a], self.truth[b]
        if pb < pa:
            return True
        if pa < pb:
            return False
        if self.rank is not None:
            ra, rb = self.rank(a), self.rank(b)
            if ra != rb:
                return bool(ra < rb)
        return a < b

    def best(self) -> tuple[int, Any] | None:
        """The winning ``(key, priority)``, or None. O(n)."""
        winner: int | None = None
        for key in self.truth:
            if winner is None or self._before(key, winner):
                winner = key
        return None if winner is None else (winner, self.truth[winner])

    def pop(self) -> tuple[int, Any] | None:
        """:meth:`best`, which then leaves the model. O(n)."""
        found = self.best()
        if found is not None:
            del self.truth[found[0]]
        return found

    def items(self) -> list[tuple[int, Any]]:
        """Every eligible ``(key, priority)`` (a snapshot). O(n)."""
        return list(self.truth.items())

    def keys(self) -> list[int]:
        """Every eligible key (a snapshot). O(n)."""
        return list(self.truth)

    def __len__(self) -> int:
        """The number of eligible keys. O(1)."""
        return len(self.truth)


@dataclass(frozen=True)
class BoundSetup:
    """What ``factory`` gets to build the structure under test.

    ``current`` and ``source`` read the machine's model, so they stay valid
    for the whole run; ``items`` are the initial ``(key, priority)`` pairs;
    ``rank`` is the tie function (None: the key); ``kind`` the priority kind;
    ``options`` a value drawn from the machine's ``options`` strategy.
    """

    current: Callable[[int], Any]
    items: list[tuple[int, Any]]
    rank: Callable[[int], Any] | None
    source: Callable[[], list[tuple[int, Any]]]
    kind: BoundKind
    options: Any = None


def _same(what: str, real: object, model: object) -> None:
    if real != model:
        raise AssertionError(f"{what}: implementation gave {real!r}, the model {model!r}")


class _BoundHeapMachine(_OptionsMachine):
    """The machine :func:`bound_heap_machine` returns a subclass of, its arguments bound."""

    factory: Callable[[BoundSetup], Any]
    kinds: Sequence[BoundKind] = ("int", "float")
    ranks: bool = True
    rises: Sequence[Rise] = ("push", "extend")
    options: st.SearchStrategy[Any] | None = None
    n_keys: int = N_KEYS

    key_st: ClassVar[st.SearchStrategy[int]]
    rank_st: ClassVar[st.SearchStrategy[Callable[[int], Any] | None]]
    option_st: ClassVar[st.SearchStrategy[Any]]
    batch_rises: ClassVar[list[Rise]]

    @classmethod
    def _draws(cls) -> None:
        cls.key_st = st.integers(0, cls.n_keys - 1)
        cls.rank_st = st.sampled_from([None, negated, scrambled]) if cls.ranks else st.none()
        cls.option_st = st.none() if cls.options is None else cls.options
        cls.batch_rises = [r for r in cls.rises if r != "push"] or ["push"]

    def __init__(self) -> None:
        super().__init__()
        self.kind: BoundKind = self.kinds[0]
        self.domain: list[Any] = []
        self.model = BoundModel()
        self.real: Any = None

    @_per_subclass(
        lambda m: initialize(
            kind=st.sampled_from(list(m.kinds)), rank=m.rank_st, option=m.option_st, data=st.data()
        )
    )
    def build(
        self,
        kind: BoundKind,
        rank: Callable[[int], Any] | None,
        option: Any,
        data: st.DataObject,
    ) -> None:
        self.kind = kind
        self.domain = priority_domain(kind)
        initial = data.draw(
            st.dictionaries(self.key_st, bound_priorities(kind), max_size=self.n_keys),
            label="initial",
        )
        self.model = BoundModel(initial.items(), rank=rank)
        model = self.model
        self.real = self.factory(
            BoundSetup(model.current, list(initial.items()), rank, model.items, kind, option)
        )

    # -- rises: the structure is told -------------------------------------------------------

    @_per_subclass(lambda m: rule(key=m.key_st, how=st.sampled_from(list(m.rises)), data=st.data()))
    def set_one(self, key: int, how: Rise, data: st.DataObject) -> None:
        """Set one key's priority and tell the structure (a rise, or a told fall)."""
        p = data.draw(bound_priorities(self.kind), label="priority")
        self.model.set(key, p)
        if how == "push":
            self.real.push(key, p)
        else:
            getattr(self.real, how)([(key, p)])

    @rule(data=st.data())
    def set_many(self, data: st.DataObject) -> None:
        """A merge's worth of re-scores, told in one ``extend`` / ``raise_bounds`` call
        (or a run of ``push`` calls)."""
        how: Rise = data.draw(st.sampled_from(self.batch_rises), label="how")
        keys = data.draw(st.lists(self.key_st, max_size=6), label="keys")
        items: list[tuple[int, Any]] = []
        for key in keys:
            now = self.model.current(key)
            choices: list[Any] = list(self.domain)
            if now is not None:
                choices.insert(0, now)  # a re-score that found no change
            if how == "raise_bounds":
                choices.append(None)  # a re-score that found the key dead
            p = data.draw(st.sampled_from(choices), label=f"priority of {key}")
            self.model.set(key, p)
            items.append((key, p))
        if how == "push":
            for key, p in items:
                self.real.push(key, p)
        else:
            getattr(self.real, how)(items)

    def has_bound_of(self) -> bool:
        return "raise_bounds" in self.rises and hasattr(self.real, "bound_of")

    @_per_subclass(lambda m: rule(key=m.key_st, data=st.data()))
    @precondition(has_bound_of)
    def set_to_bound(self, key: int, data: st.DataObject) -> None:
        """Set a key (eligible or not: a birth) to at most its reported ``bound_of`` and
        tell ``raise_bounds``, which by its contract may push nothing: the stored bound
        must already cover it."""
        bound = self.real.bound_of(key)
        if bound is None:
            return
        below = [p for p in self.domain if p < bound]
        p = data.draw(st.sampled_from([bound, *below]), label="priority")
        self.model.set(key, p)
        self.real.raise_bounds([(key, p)])

    # -- falls and deaths: the structure is not told ----------------------------------------

    def can_fall(self) -> bool:
        low = self.domain_min()
        return any(low < p for p in self.model.truth.values())

    def domain_min(self) -> Any:
        return min(self.domain) if self.domain else None

    @precondition(can_fall)
    @rule(data=st.data())
    def fall(self, data: st.DataObject) -> None:
        """Lower a key's priority without telling the structure."""
        low = self.domain_min()
        keys = sorted(k for k, p in self.model.truth.items() if low < p)
        key = data.draw(st.sampled_from(keys), label="key")
        now = self.model.current(key)
        below = [p for p in self.domain if p < now]
        self.model.fall(key, data.draw(st.sampled_from(below), label="priority"))

    @precondition(lambda self: len(self.model) > 0)
    @rule(data=st.data())
    def kill(self, data: st.DataObject) -> None:
        """Make a key ineligible; tell the structure only if it has ``discard`` (sometimes)."""
        key = data.draw(st.sampled_from(self.model.keys()), label="key")
        self.model.kill(key)
        discard = getattr(self.real, "discard", None)
        if discard is not None and data.draw(st.booleans(), label="discard"):
            discard(key)

    # -- selection --------------------------------------------------------------------------

    @rule()
    def pop(self) -> None:
        expected = self.model.best()
        _same("pop()", self.real.pop(), expected)
        self.model.pop()

    @rule()
    def drain(self) -> None:
        """Pop until nothing is eligible: the whole order, ties included, must match."""
        while True:
            expected = self.model.best()
            _same("pop() while draining", self.real.pop(), expected)
            if expected is None:
                return
            self.model.pop()

    @invariant()
    def bounds_hold(self) -> None:
        if self.real is None:
            return
        self.real.check(keys=self.model.keys())
        if hasattr(self.real, "__len__") and len(self.real) < len(self.model):
            raise AssertionError(
                f"len() is {len(self.real)} but {len(self.model)} keys are eligible"
            )


def bound_heap_machine(
    factory: Callable[[BoundSetup], Any],
    *,
    kinds: Sequence[BoundKind] = ("int", "float"),
    ranks: bool = True,
    rises: Sequence[Rise] = ("push", "extend"),
    options: st.SearchStrategy[Any] | None = None,
    n_keys: int = N_KEYS,
) -> type[RuleBasedStateMachine]:
    """A state machine testing ``factory(setup)`` against :class:`BoundModel`.

    ``kinds``: the priority kinds drawn (see :func:`priority_domain`).
    ``ranks``: also draw tie functions (:func:`~bpeds.testing.multisets.negated`,
    :func:`~bpeds.testing.multisets.scrambled`); otherwise ``rank`` is always
    None. ``rises``: the methods the structure has for being told about a rise
    (``raise_bounds`` items may also carry None). ``options``: a strategy
    whose value is handed to ``factory`` as ``setup.options`` (e.g. a
    structure's knobs, so one machine explores them). ``n_keys``: keys are
    ``0 .. n_keys - 1`` (at most 13).
    """
    for kind in kinds:
        priority_domain(kind)  # reject unknown kinds now
    if not kinds:
        raise ValueError("kinds must not be empty")
    if not rises or any(r not in RISES for r in rises):
        raise ValueError(f"rises must be a non-empty subset of {RISES}, got {rises!r}")
    if not 1 <= n_keys <= 13:
        raise ValueError(f"n_keys must be in 1 .. 13, got {n_keys!r}")
    return _BoundHeapMachine._bind(
        "BoundHeapMachine",
        factory=factory,
        kinds=kinds,
        ranks=ranks,
        rises=rises,
        options=options,
        n_keys=n_keys,
    )
