"""Reference model, strategies and a state machine for :class:`Multiset` implementations.

Test any implementation of the protocol (ours or your own) in two lines::

    from bpeds.testing.multisets import multiset_machine, quick_settings

    TestMyHeap = multiset_machine(lambda tie: MyHeap(tie=tie)).TestCase
    TestMyHeap.settings = quick_settings()   # optional: a run of seconds

``factory(tie)`` must build an empty multiset whose tie function is ``tie``
(``None`` for the default, the key itself). The machine drives it and a
deliberately simple :class:`MultisetModel` (a dict, and a full sort for every
query) side by side through every protocol method, error cases included,
and compares each result *or the exception type*. ``check()`` runs after
every step.

The contract checked (the protocol's, see :mod:`bpeds.structures.protocols`):

* exception types are compared exactly (``type(a) is type(b)``; a subclass
  is a failure): :class:`~bpeds.errors.EmptyError` for ``top``/``pop`` on an
  empty multiset; :class:`~bpeds.errors.PreconditionError` for ``remove`` of an
  absent key or of more than the count; plain ``ValueError`` for ``n < 0`` in
  ``add``, ``remove`` and ``most_common``;
* zero: a key that ``add`` or ``remove`` brings to exactly 0 leaves (so
  ``add(k, 0)`` on an absent key inserts nothing); ``update`` keeps any
  priority, 0 and negatives included; ``count`` of an absent key is 0;
* order: ``top``, ``pop``, ``most_common(n)`` and a full drain give the
  largest priority first (smallest with ``order="min"``), ties to the
  smallest tie key; ``most_common(n)`` with ``n`` past the size returns all;
* ``len``, ``in``, ``items()`` and ``iter()`` agree with the model as sets.

Each run draws a tie function (the identity, ``negated``, ``scrambled``) and a
priority kind:

* ``"int"``: small ints, many duplicates, so the tie rule decides most queries;
* ``"float"``: multiples of 0.25, exact under ``+``/``-`` with small ints;
* ``"tuple"``: pairs of small ints (no ``add``/``remove``: they need ``+ int``).

With ``negated``, the winner of a tie is the *largest* key, the opposite of
insertion-order or hash-order accidents, so an implementation that lets heap
shape or insertion order decide a tie fails quickly. A ``burst`` rule applies
a run of up to 16 ``(is_add, key, n)`` steps with no query in between, each
``add(key, n)`` when ``is_add`` else ``remove(key, n)`` with ``n`` in 0..2 (so
removes that must fail occur too), as a BPE merge does, so a batching
implementation really accumulates deltas.

A ``rejected`` rule makes every run try the operations the protocol refuses
(:data:`REJECTED`: a NaN priority, or a tuple holding one; a count that is
not an ``int >= 0``, such as ``1.5`` or NaN) and checks that each raises
``TypeError`` or ``ValueError`` and leaves the contents, the order and
``check()`` as they were.

Not covered: thread safety, keys other than small ints, comparators that
raise (see the tests of each structure for those).
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from functools import cmp_to_key
from typing import Any, ClassVar, Generic, Literal, TypeVar

from hypothesis import Phase, settings
from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, precondition, rule

from bpeds.errors import EmptyError, InvariantError, PreconditionError
from bpeds.structures.protocols import Order, TieKey

__all__ = [
    "KINDS",
    "REJECTED",
    "quick_settings",
    "MultisetModel",
    "PriorityKind",
    "keys",
    "multiset_machine",
    "negated",
    "priorities",
    "scrambled",
    "tie_functions",
]

K = TypeVar("K", bound=Hashable)
P = TypeVar("P")

PriorityKind = Literal["int", "float", "tuple"]
#: Every priority kind the machine knows.
KINDS: tuple[PriorityKind, ...] = ("int", "float", "tuple")
#: Keys are 0 .. N_KEYS - 1: few enough that operations keep hitting the same keys.
N_KEYS = 12


class MultisetModel(Generic[K, P]):
    """The oracle: a dict of priorities, a dict of tie keys, and a full sort per query.

    >>> m = MultisetModel({"b": 2, "a": 2, "c": 5})
    >>> m.most_common()
    [('c', 5), ('a', 2), ('b', 2)]
    >>> m.remove("c", 5); m.pop()
    ('a', 2)
    """

    def __init__(
        self,
        initial: Mapping[K, P] | None = None,
        *,
        tie: TieKey | None = None,
        order: Order = "max",
    ) -> None:
        """An empty model, then ``update`` for each initial item. Complexity: O(n)."""
        if order not in ("max", "min"):
            raise ValueError(f"order must be 'max' or 'min', got {order!r}")
        self.order: Order = order
        self._tie = tie
        self._prio: dict[K, Any] = {}
        self._ties: dict[K, Any] = {}
        for key, prio in (initial or {}).items():
            self.update(key, prio)

    def _insert(self, key: K, prio: Any) -> None:
        self._ties[key] = key if self._tie is None else self._tie(key)
        self._prio[key] = prio

    def add(self, key: K, n: int = 1) -> None:
        """``count += n``; an absent key starts at 0; a count of exactly 0 leaves. O(1)."""
        if n < 0:
            raise ValueError(f"negative n {n!r}")
        count = self._prio.get(key, 0) + n
        if count == 0:
            self.discard(key)
        elif key in self._prio:
            self._prio[key] = count
        else:
            self._insert(key, count)

    def remove(self, key: K, n: int = 1) -> None:
        """``count -= n``; the key leaves at 0. Complexity: O(1)."""
        if n < 0:
            raise ValueError(f"negative n {n!r}")
        if key not in self._prio:
            raise PreconditionError(f"{key!r} absent")
        count = self._prio[key]
        if count < n:
            raise PreconditionError(f"{key!r} has only {count!r}")
        count = count - n
        if count == 0:
            del self._prio[key]
            del self._ties[key]
        else:
            self._prio[key] = count

    def update(self, key: K, priority: P) -> None:
        """Set the priority, inserting the key if absent. Complexity: O(1)."""
        if key in self._prio:
            self._prio[key] = priority
        else:
            self._insert(key, priority)

    def discard(self, key: K) -> None:
        """Forget ``key`` if present. Complexity: O(1)."""
        if key in self._prio:
            del self._prio[key]
            del self._ties[key]

    def count(self, key: K) -> P | int:
        """The priority, or 0. Complexity: O(1)."""
        return self._prio.get(key, 0)  # type: ignore[no-any-return]

    def _compare(self, a: K, b: K) -> int:
        pa, pb = self._prio[a], self._prio[b]
        if self.order == "min":
            pa, pb = pb, pa
        if pb < pa:
            return -1
        if pa < pb:
            return 1
        ta, tb = self._ties[a], self._ties[b]
        return -1 if ta < tb else 1 if tb < ta else 0

    def most_common(self, n: int | None = None) -> list[tuple[K, P]]:
        """Sort everything best first (largest, or smallest for "min") and slice.

        Complexity: O(size log size).
        """
        if n is not None and n < 0:
            raise ValueError(f"negative n {n!r}")
        ranked = sorted(self._prio, key=cmp_to_key(self._compare))
        return [(key, self._prio[key]) for key in ranked][:n]

    def top(self) -> tuple[K, P]:
        """The best item. Complexity: O(size log size)."""
        if not self._prio:
            raise EmptyError("top() of an empty model")
        return self.most_common(1)[0]

    def pop(self) -> tuple[K, P]:
        """Remove and return the best item. Complexity: O(size log size)."""
        if not self._prio:
            raise EmptyError("pop() of an empty model")
        key, prio = self.top()
        self.discard(key)
        return key, prio

    def items(self) -> Iterator[tuple[K, P]]:
        """Every item. Complexity: O(1) per item."""
        return iter(list(self._prio.items()))

    def check(self) -> None:
        """Nothing to verify beyond the two dicts agreeing. Complexity: O(n)."""
        if self._prio.keys() != self._ties.keys():
            raise InvariantError("model dicts disagree", (self._prio, self._ties))

    def __len__(self) -> int:
        """The number of keys. Complexity: O(1)."""
        return len(self._prio)

    def __contains__(self, key: object) -> bool:
        """Whether ``key`` is present. Complexity: O(1)."""
        return key in self._prio

    def __iter__(self) -> Iterator[K]:
        """Every key (a snapshot). Complexity: O(n)."""
        return iter(list(self._prio))


def quick_settings(*, shrink: bool = True, **overrides: Any) -> settings:
    """Settings for a quick run of a machine, on top of the current Hypothesis profile.

    50 examples of at most 20 steps, one bug reported (shrinking a second,
    distinct failure too can take minutes), no deadline; ``overrides`` go to
    :class:`hypothesis.settings` as well. ``shrink=False`` skips shrinking:
    the report is then the failing run as found (up to 20 steps), in about a
    second. See ``docs/testing.md`` for measured times.
    """
    chosen: dict[str, Any] = {
        "max_examples": 50,
        "stateful_step_count": 20,
        "report_multiple_bugs": False,
        "deadline": None,
    }
    if not shrink:
        chosen["phases"] = [Phase.explicit, Phase.reuse, Phase.generate]
    chosen.update(overrides)
    return settings(**chosen)


# -- strategies ---------------------------------------------------------------------------------


def negated(key: int) -> int:
    """Tie function: the largest key wins a tie."""
    return -key


def scrambled(key: int) -> int:
    """Tie function: a fixed permutation of 0..12, unrelated to the key order."""
    return (key * 7) % 13


def keys(n_keys: int = N_KEYS) -> st.SearchStrategy[int]:
    """Small int keys ``0 .. n_keys - 1``."""
    return st.integers(0, n_keys - 1)


def tie_functions() -> st.SearchStrategy[TieKey | None]:
    """The identity (``None``), :func:`negated` or :func:`scrambled`."""
    return st.sampled_from([negated, scrambled, None])


def priorities(kind: PriorityKind = "int") -> st.SearchStrategy[Any]:
    """Tie-heavy priorities of one kind (mixing kinds makes comparisons raise).

    ``"int"``: -2 .. 6; ``"float"``: multiples of 0.25 in -2 .. 6 (exact
    arithmetic with small ints); ``"tuple"``: pairs of ints in 0 .. 2.
    """
    if kind == "int":
        return st.integers(-2, 6)
    if kind == "float":
        return st.integers(-8, 24).map(lambda i: i / 4)
    if kind == "tuple":
        return st.tuples(st.integers(0, 2), st.integers(0, 2))
    raise ValueError(f"unknown priority kind {kind!r}; use one of {KINDS}")


# -- the state machine --------------------------------------------------------------------------

_NAN = float("nan")
#: Operations every Multiset must refuse (``TypeError`` or ``ValueError``) before changing
#: anything: priorities without a total order, and counts that are not ``int >= 0``.
REJECTED: tuple[tuple[str, Any], ...] = (
    ("update", _NAN),
    ("update", (1, _NAN)),
    ("add", _NAN),
    ("add", 1.5),
    ("add", -1),
    ("remove", 0.5),
    ("remove", _NAN),
    ("remove", -1),
)


def _outcome(fn: Callable[..., Any], *args: Any) -> tuple[Any, Exception | None]:
    try:
        return fn(*args), None
    except Exception as exc:
        return None, exc


def _raised(exc: Exception | None) -> str:
    if exc is None:
        return "did not raise"
    return f"raised {type(exc).__name__}({str(exc)!r})"


def _same(what: str, real: object, model: object) -> None:
    if real != model:
        raise AssertionError(f"{what}: implementation gave {real!r}, the model {model!r}")


# -- machines whose rules draw from their options -----------------------------------------------

_PER_SUBCLASS = "_bpeds_per_subclass"
_Decorator = Callable[[Callable[..., Any]], Callable[..., Any]]


def _per_subclass(make: Callable[[Any], _Decorator]) -> _Decorator:
    """Decorate a method of an :class:`_OptionsMachine` anew in each subclass, with ``make(cls)``.

    ``make`` returns the Hypothesis decorator (``rule(...)``, ``initialize(...)``) built from the
    subclass's strategies, which its options determine. Put it above any ``@precondition``.
    """

    def mark(method: Callable[..., Any]) -> Callable[..., Any]:
        setattr(method, _PER_SUBCLASS, (make, method))
        return method

    return mark


class _OptionsMachine(RuleBasedStateMachine):
    """A state machine whose options are class attributes, its rules drawing from strategies
    made of them.

    Each subclass (the machine's own class, with default options, and the one its factory
    function makes with the arguments bound) builds its strategies once, in :meth:`_draws`,
    then decorates each method marked :func:`_per_subclass` with them.
    """

    @classmethod
    def _draws(cls) -> None:
        """Set the strategies the rules draw from, as class attributes made of the options."""

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._draws()
        for name in dir(cls):
            marked = getattr(inspect.getattr_static(cls, name), _PER_SUBCLASS, None)
            if marked is not None:
                make, method = marked
                setattr(cls, name, make(cls)(method))

    @classmethod
    def _bind(cls, name: str, **options: Any) -> type[RuleBasedStateMachine]:
        """A subclass called ``name``, in ``cls``'s module, with ``options`` as class attributes
        (callables as static methods, so that ``self.factory(...)`` calls the factory itself)."""
        namespace = {k: staticmethod(v) if callable(v) else v for k, v in options.items()}
        return type(name, (cls,), {"__module__": cls.__module__, **namespace})


class _MultisetMachine(_OptionsMachine):
    """The machine :func:`multiset_machine` returns a subclass of, its arguments bound."""

    factory: Callable[[TieKey | None], Any]
    kinds: Sequence[PriorityKind] = KINDS
    n_keys: int = N_KEYS
    order: Order = "max"
    initial_factory: Callable[[Mapping[int, Any], TieKey | None], Any] | None = None

    key_st: ClassVar[st.SearchStrategy[int]]
    small_n: ClassVar[st.SearchStrategy[int]]
    prio_st: ClassVar[dict[PriorityKind, st.SearchStrategy[Any]]]
    setup_st: ClassVar[st.SearchStrategy[tuple[PriorityKind, dict[int, Any]]]]
    ways: ClassVar[list[bool]]

    @classmethod
    def _draws(cls) -> None:
        n_keys = cls.n_keys
        key_st = cls.key_st = keys(n_keys)
        cls.small_n = st.integers(-1, 3)
        # Strategies are built once and drawn as rule arguments (no ``st.data()``): interactive
        # draws and fresh strategies per step made shrinking a failure take minutes.
        prio_st = cls.prio_st = {kind: priorities(kind) for kind in cls.kinds}
        cls.setup_st = st.sampled_from(list(cls.kinds)).flatmap(
            lambda kind: st.tuples(
                st.just(kind), st.dictionaries(key_st, prio_st[kind], max_size=n_keys)
            )
        )
        cls.ways = [False, True] if cls.initial_factory is not None else [False]

    def __init__(self) -> None:
        super().__init__()
        self.kind: PriorityKind = "int"
        self.real: Any = None
        self.model: MultisetModel[int, Any] = MultisetModel()

    @_per_subclass(
        lambda m: initialize(
            setup=m.setup_st, tie=tie_functions(), from_initial=st.sampled_from(m.ways)
        )
    )
    def build(
        self,
        setup: tuple[PriorityKind, dict[int, Any]],
        tie: TieKey | None,
        from_initial: bool,
    ) -> None:
        kind, initial = setup
        self.kind = kind
        self.model = MultisetModel(tie=tie, order=self.order)
        if from_initial and self.initial_factory is not None:
            self.real = self.initial_factory(initial, tie)
            for key, prio in initial.items():
                self.model.update(key, prio)
            return
        self.real = self.factory(tie)
        for key, prio in initial.items():
            self.real.update(key, prio)
            self.model.update(key, prio)

    def _both(self, what: str, method: str, *args: Any) -> Any:
        real, real_exc = _outcome(getattr(self.real, method), *args)
        model, model_exc = _outcome(getattr(self.model, method), *args)
        if type(real_exc) is not type(model_exc):
            expected = (
                "did not raise" if model_exc is None else f"raised {type(model_exc).__name__}"
            )
            raise AssertionError(
                f"{what}: implementation {_raised(real_exc)}; the model {expected}"
            )
        _same(what, real, model)
        return real

    def counts(self) -> bool:
        return self.kind != "tuple"

    @_per_subclass(lambda m: rule(key=m.key_st, n=m.small_n))
    @precondition(counts)
    def add(self, key: int, n: int) -> None:
        self._both(f"add({key}, {n})", "add", key, n)

    @_per_subclass(lambda m: rule(key=m.key_st, n=m.small_n))
    @precondition(counts)
    def remove(self, key: int, n: int) -> None:
        self._both(f"remove({key}, {n})", "remove", key, n)

    @_per_subclass(
        lambda m: rule(
            ops=st.lists(st.tuples(st.booleans(), m.key_st, st.integers(0, 2)), max_size=16)
        )
    )
    @precondition(counts)
    def burst(self, ops: list[tuple[bool, int, int]]) -> None:
        """A merge-like run of adds and removes with no query in between."""
        for is_add, key, n in ops:
            method = "add" if is_add else "remove"
            self._both(f"burst {method}({key}, {n})", method, key, n)

    def _update(self, key: int, prio: Any) -> None:
        self._both(f"update({key}, {prio!r})", "update", key, prio)

    @_per_subclass(lambda m: rule(key=m.key_st, prio=m.prio_st.get("int", st.nothing())))
    @precondition(lambda self: self.kind == "int")
    def update_int(self, key: int, prio: int) -> None:
        self._update(key, prio)

    @_per_subclass(lambda m: rule(key=m.key_st, prio=m.prio_st.get("float", st.nothing())))
    @precondition(lambda self: self.kind == "float")
    def update_float(self, key: int, prio: float) -> None:
        self._update(key, prio)

    @_per_subclass(lambda m: rule(key=m.key_st, prio=m.prio_st.get("tuple", st.nothing())))
    @precondition(lambda self: self.kind == "tuple")
    def update_tuple(self, key: int, prio: tuple[int, int]) -> None:
        self._update(key, prio)

    @_per_subclass(lambda m: rule(key=m.key_st, bad=st.sampled_from(REJECTED)))
    def rejected(self, key: int, bad: tuple[str, Any]) -> None:
        """An operation the protocol refuses raises and changes nothing."""
        method, arg = bad
        try:
            getattr(self.real, method)(key, arg)
        except (TypeError, ValueError):
            pass
        else:
            raise AssertionError(f"{method}({key}, {arg!r}) was accepted; it must raise")
        self.real.check()
        _same(f"len() after a rejected {method}", len(self.real), len(self.model))
        _same(
            f"most_common() after a rejected {method}({key}, {arg!r})",
            self.real.most_common(),
            self.model.most_common(),
        )

    @_per_subclass(lambda m: rule(key=m.key_st))
    def discard(self, key: int) -> None:
        self._both(f"discard({key})", "discard", key)

    @_per_subclass(lambda m: rule(key=m.key_st))
    def count(self, key: int) -> None:
        self._both(f"count({key})", "count", key)

    @_per_subclass(lambda m: rule(key=m.key_st))
    def contains(self, key: int) -> None:
        _same(f"{key} in", key in self.real, key in self.model)

    @rule()
    def top(self) -> None:
        self._both("top()", "top")

    @rule()
    def pop(self) -> None:
        self._both("pop()", "pop")

    @_per_subclass(lambda m: rule(n=st.none() | st.integers(-1, m.n_keys + 2)))
    def most_common(self, n: int | None) -> None:
        self._both(f"most_common({n})", "most_common", n)

    @rule()
    def contents(self) -> None:
        _same("len()", len(self.real), len(self.model))
        _same("items()", dict(self.real.items()), dict(self.model.items()))
        _same("iter()", sorted(self.real), sorted(self.model))

    @rule()
    def drain(self) -> None:
        """Pop everything: the full order, ties included, must match."""
        while len(self.model):
            self._both("pop() while draining", "pop")
        self._both("pop() after draining", "pop")

    @invariant()
    def invariants_hold(self) -> None:
        if self.real is not None:
            self.real.check()


def multiset_machine(
    factory: Callable[[TieKey | None], Any],
    *,
    kinds: Sequence[PriorityKind] = KINDS,
    n_keys: int = N_KEYS,
    order: Order = "max",
    initial_factory: Callable[[Mapping[int, Any], TieKey | None], Any] | None = None,
) -> type[RuleBasedStateMachine]:
    """A state machine testing ``factory(tie)`` against :class:`MultisetModel`.

    ``kinds`` limits the priority kinds drawn (see :func:`priorities`);
    ``n_keys`` the key range; ``order`` is the order the structure under test
    was built with (``"max"`` or ``"min"``: the model follows it).
    ``initial_factory(initial, tie)``, if given, builds the structure from an
    initial mapping (its constructor's ``initial=``); each run then draws
    which of the two ways to build. Every rule compares results or exception
    types (exactly: a subclass is not enough); ``check()`` runs after every step.
    """
    for kind in kinds:
        priorities(kind)  # reject unknown kinds now
    if order not in ("max", "min"):
        raise ValueError(f"order must be 'max' or 'min', got {order!r}")
    return _MultisetMachine._bind(
        "MultisetMachine",
        factory=factory,
        kinds=kinds,
        n_keys=n_keys,
        order=order,
        initial_factory=initial_factory,
    )
