"""A reference model and a Hypothesis state machine for lazy indices.

Use it to test a :class:`~bpeds.structures.lazy_index.LazyIndex` with your own
compaction policy, or your own implementation of the same contract::

    from hypothesis import settings
    from bpeds.structures.lazy_index import LazyIndex
    from bpeds.testing.lazy_index import lazy_index_machine

    Machine = lazy_index_machine(lambda is_live: LazyIndex(is_live, MyPolicy()))
    TestMyPolicy = Machine.TestCase
    TestMyPolicy.settings = settings(max_examples=100, stateful_step_count=40)

The machine owns the liveness relation (a set of live ``(key, value)``
pairs, read by the predicate it passes to ``factory``) and drives the index
and :class:`LazyIndexModel` side by side: adds and extends (some of them stale
or duplicate), kills and revivals, full, partial, "processing" (kill what you
read) and mutating reads (kill, append, compact or discard from inside the
loop, or append before the first ``next``), reads whose predicate raises,
bulk appends that fail half-way, forced compactions and discards. Results are
compared exactly, or by exception type; ``check()`` and every query
(``raw``, ``size``, ``keys``, ``len``, ``in``, ``total_entries``, ``stats``)
are compared after every step.

The model does not guess *when* the policy compacts: after each operation on
a key it looks at ``stats.compactions`` and, if the index reports one,
replays it by the definition (keep the first occurrence of each value live
now, in order). That makes the stored lists -- not just the read results --
comparable exactly, whatever the policy.

Contract the machine relies on (and checks): a policy sees no revived value
that was not re-added (revive = make live, then ``add``); one operation on a
key compacts it at most once; a read whose predicate raised does not compact.

Not covered: thread safety, predicates that mutate the index.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import ClassVar, Protocol

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, invariant, rule

from bpeds.errors import PreconditionError
from bpeds.structures.protocols import CompactionStats
from bpeds.testing.multisets import _OptionsMachine, _per_subclass

__all__ = [
    "LazyIndexLike",
    "LazyIndexModel",
    "ModelRead",
    "PoisonedEntryError",
    "lazy_index_machine",
]

Predicate = Callable[[int, int], bool]


class PoisonedEntryError(Exception):
    """Raised by the machine's predicate for a ``(key, value)`` it poisoned."""


class _BoomError(Exception):
    """Raised half-way through a bulk append by the failing-extend rule."""


class LazyIndexLike(Protocol):
    """What the machine needs from an index with ``int`` keys and values."""

    @property
    def stats(self) -> CompactionStats: ...

    @property
    def total_entries(self) -> int: ...

    def add(self, key: int, value: int) -> None: ...

    def extend(self, key: int, values: Iterable[int]) -> None: ...

    def load(self, key: int, values: Iterable[int]) -> None: ...

    def live(self, key: int, *, unique: bool = True) -> Iterator[int]: ...

    def raw(self, key: int) -> list[int]: ...

    def take(self, key: int) -> list[int]: ...

    def size(self, key: int) -> int: ...

    def keys(self) -> Iterable[int]: ...

    def discard(self, key: int) -> None: ...

    def compact(self, key: int) -> int: ...

    def compact_all(self) -> int: ...

    def check(self) -> None: ...

    def __len__(self) -> int: ...

    def __contains__(self, key: object) -> bool: ...


class LazyIndexModel:
    """The reference: per key, every value appended, in order, minus replayed compactions.

    ``live`` is the liveness relation. :meth:`poison` makes the next
    evaluation of one pair raise :class:`PoisonedEntryError` (a transient
    failure), once on the index's side (:meth:`is_live`, the predicate handed
    to the index) and once on the model's (:meth:`model_is_live`).
    ``scanned``/``compactions``/``dropped`` are what the index's ``stats``
    must have advanced by.
    """

    def __init__(self) -> None:
        self.lists: dict[int, list[int]] = {}
        self.live: set[tuple[int, int]] = set()
        self._poison_index: set[tuple[int, int]] = set()
        self._poison_model: set[tuple[int, int]] = set()
        self.scanned = 0
        self.compactions = 0
        self.dropped = 0

    def poison(self, key: int, value: int) -> None:
        """Make the next evaluation of (key, value) raise, on each side."""
        self._poison_index.add((key, value))
        self._poison_model.add((key, value))

    def cure(self) -> None:
        """Lift every poison not yet triggered."""
        self._poison_index.clear()
        self._poison_model.clear()

    def is_live(self, key: int, value: int) -> bool:
        """The predicate handed to the index under test."""
        if (key, value) in self._poison_index:
            self._poison_index.discard((key, value))
            raise PoisonedEntryError((key, value))
        return (key, value) in self.live

    def model_is_live(self, key: int, value: int) -> bool:
        """The same predicate, for the model's own reads and compactions."""
        if (key, value) in self._poison_model:
            self._poison_model.discard((key, value))
            raise PoisonedEntryError((key, value))
        return (key, value) in self.live

    def add(self, key: int, value: int) -> None:
        """Append one value."""
        self.lists.setdefault(key, []).append(value)

    def extend(self, key: int, values: Iterable[int]) -> None:
        """Append values, all or none."""
        materialised = list(values)
        if materialised:
            self.lists.setdefault(key, []).extend(materialised)

    def discard(self, key: int) -> None:
        """Forget a key."""
        self.lists.pop(key, None)

    def compact(self, key: int) -> int:
        """Keep the first occurrence of each value live now; return how many were dropped."""
        if key not in self.lists:
            return 0
        old = self.lists.pop(key)
        kept: list[int] = []
        for value in old:
            if value not in kept and self.model_is_live(key, value):
                kept.append(value)
        if kept:
            self.lists[key] = kept
        self.compactions += 1
        self.dropped += len(old) - len(kept)
        return len(old) - len(kept)

    def reader(self, key: int, unique: bool) -> ModelRead:
        """A read of ``key`` over its entries now."""
        return ModelRead(self, key, unique)


class ModelRead:
    """A naive read: walk the snapshot, test each entry when reached."""

    def __init__(self, model: LazyIndexModel, key: int, unique: bool) -> None:
        self.model = model
        self.key = key
        self.unique = unique
        self.snapshot = list(model.lists.get(key, []))
        self.pos = 0  # entries scanned so far
        self.yielded: list[int] = []

    def next(self) -> int | None:
        """The next live entry, or None at the end; PoisonedEntryError propagates."""
        while self.pos < len(self.snapshot):
            value = self.snapshot[self.pos]
            self.pos += 1
            if self.unique and value in self.yielded:
                continue
            if self.model.model_is_live(self.key, value):
                self.yielded.append(value)
                return value
        return None


_END = object()
_Outcome = tuple[str, object]


def _outcome(step: Callable[[], object]) -> _Outcome:
    try:
        return ("value", step())
    except Exception as error:
        return ("raises", type(error))


def _require(condition: bool, *context: object) -> None:
    """Fail the test with ``context`` unless ``condition`` (an assert that ``-O`` keeps)."""
    if not condition:
        raise AssertionError(context)


def _failing(values: list[int], at: int) -> Iterator[int]:
    yield from values[:at]
    raise _BoomError


class _LazyIndexMachine(_OptionsMachine):
    """The machine :func:`lazy_index_machine` returns a subclass of, its arguments bound."""

    factory: Callable[[Predicate], LazyIndexLike]
    keys: int = 3
    values: int = 5

    key_st: ClassVar[st.SearchStrategy[int]]
    value_st: ClassVar[st.SearchStrategy[int]]
    values_st: ClassVar[st.SearchStrategy[list[int]]]

    @classmethod
    def _draws(cls) -> None:
        cls.key_st = st.integers(0, cls.keys - 1)
        cls.value_st = st.integers(0, cls.values - 1)
        cls.values_st = st.lists(cls.value_st, max_size=6)

    def __init__(self) -> None:
        super().__init__()
        self.model = LazyIndexModel()
        self.index = self.factory(self.model.is_live)
        stats = self.index.stats
        self.base = (stats.entries_scanned, stats.compactions, stats.entries_dropped)

    # ------------------------------------------------------------ helpers

    def _reported(self) -> int:
        return self.index.stats.compactions - self.base[1]

    def _sync(self, key: int, before: int) -> None:
        """Replay on the model the compaction the index reported, if any."""
        delta = self._reported() - before
        if delta not in (0, 1):
            raise AssertionError(f"one operation on {key} compacted it {delta} times")
        if delta:
            self.model.compact(key)

    def _add(self, key: int, value: int) -> None:
        before = self._reported()
        self.index.add(key, value)
        self.model.add(key, value)
        self._sync(key, before)

    def _compact(self, key: int) -> None:
        before = self._reported()
        present = key in self.model.lists
        got = _outcome(lambda: self.index.compact(key))
        expected = _outcome(lambda: self.model.compact(key))
        _require(got == expected, "compact", key, got, expected)
        _require(self._reported() - before == int(present), "compact counted", key)

    def _lockstep(
        self,
        key: int,
        unique: bool,
        *,
        stop: int | None = None,
        on_yield: Callable[[int, int], None] | None = None,
        before_start: Callable[[], None] | None = None,
    ) -> list[int]:
        """Read ``key`` from the index and the model in step; return what was read."""
        before = self._reported()
        reader = self.model.reader(key, unique)
        gen = self.index.live(key, unique=unique)
        if before_start is not None:
            before_start()
            before = self._reported()
        count = 0
        raised = False
        while stop is None or count < stop:
            got = _outcome(lambda: next(gen, _END))
            expected = _outcome(reader.next)
            if expected == ("value", None):
                expected = ("value", _END)
            _require(got == expected, "read", key, got, expected, reader.snapshot)
            if got[0] == "raises":
                raised = True
                break
            if got[1] is _END:
                break
            value = got[1]
            if not isinstance(value, int):
                raise AssertionError(("read yielded a non-int", value))
            if on_yield is not None:
                on_yield(count, value)
                before = self._reported()
            count += 1
        if hasattr(gen, "close"):
            gen.close()
        self.model.scanned += reader.pos
        if raised:
            _require(self._reported() == before, "a read whose predicate raised compacted")
        else:
            self._sync(key, before)
        return reader.yielded

    # -------------------------------------------------------------- rules

    @_per_subclass(
        lambda m: initialize(
            contents=st.dictionaries(m.key_st, m.values_st),
            dead=st.lists(st.tuples(m.key_st, m.value_st), max_size=6),
        )
    )
    def populate(self, contents: dict[int, list[int]], dead: list[tuple[int, int]]) -> None:
        """Start from a few lists of live values, some of them killed since."""
        for key, vals in contents.items():
            self.model.live.update((key, value) for value in vals)
            before = self._reported()
            self.index.extend(key, vals)
            self.model.extend(key, vals)
            self._sync(key, before)
        self.model.live.difference_update(dead)

    @_per_subclass(lambda m: rule(key=m.key_st, value=m.value_st, make_live=st.booleans()))
    def add(self, key: int, value: int, make_live: bool) -> None:
        """Append one value; ``make_live`` revives it first (as the trainer does),
        otherwise liveness is untouched (a stale or duplicate entry)."""
        if make_live:
            self.model.live.add((key, value))
        self._add(key, value)

    @_per_subclass(lambda m: rule(key=m.key_st, vals=m.values_st))
    def revive(self, key: int, vals: list[int]) -> None:
        """Make each (key, v) live and append them all."""
        self.model.live.update((key, value) for value in vals)
        before = self._reported()
        self.index.extend(key, vals)
        self.model.extend(key, vals)
        self._sync(key, before)

    @_per_subclass(lambda m: rule(key=m.key_st, vals=m.values_st, make_live=st.booleans()))
    def extend(self, key: int, vals: list[int], make_live: bool) -> None:
        if make_live:
            self.model.live.update((key, value) for value in vals)
        before = self._reported()
        self.index.extend(key, iter(vals))
        self.model.extend(key, vals)
        self._sync(key, before)

    @_per_subclass(
        lambda m: rule(
            key=m.key_st, vals=m.values_st, at=st.integers(0, 8), unhashable=st.booleans()
        )
    )
    def append_failing(self, key: int, vals: list[int], at: int, unhashable: bool) -> None:
        """A bulk append that raises half-way, or an unhashable key: nothing changes."""
        if unhashable:
            bad: list[int] = [key]
            got = _outcome(lambda: self.index.add(bad, key))  # type: ignore[arg-type]
            expected = _outcome(lambda: self.model.lists.get(bad))  # type: ignore[call-overload]
            _require(got == expected == ("raises", TypeError), "add", got, expected)
            _require(bad not in self.index, "unhashable key stored")
            return
        at = min(at, len(vals))
        got = _outcome(lambda: self.index.extend(key, _failing(vals, at)))
        expected = _outcome(lambda: self.model.extend(key, _failing(vals, at)))
        _require(got == expected == ("raises", _BoomError), "extend", got, expected)

    @_per_subclass(lambda m: rule(key=m.key_st, vals=st.lists(m.value_st, min_size=1, max_size=2)))
    def kill(self, key: int, vals: list[int]) -> None:
        """(key, v) goes stale for each v, as when a type loses a pair."""
        for value in vals:
            self.model.live.discard((key, value))

    @_per_subclass(lambda m: rule(key=m.key_st, unique=st.booleans()))
    def read(self, key: int, unique: bool) -> None:
        self._lockstep(key, unique)

    @_per_subclass(lambda m: rule(key=m.key_st, unique=st.booleans(), stop=st.integers(0, 3)))
    def read_partially(self, key: int, unique: bool, stop: int) -> None:
        """Stop after ``stop`` values and close the generator."""
        self._lockstep(key, unique, stop=stop)

    @_per_subclass(lambda m: rule(key=m.key_st, unique=st.booleans()))
    def read_processing(self, key: int, unique: bool) -> None:
        """Kill each entry as it is processed, as the trainer's predicate does."""

        def process(_: int, value: int) -> None:
            self.model.live.discard((key, value))

        read = self._lockstep(key, unique, on_yield=process)
        if not unique:
            _require(len(read) == len(set(read)), "a processed value was yielded again", read)

    def _read_mutating(self, key: int, unique: bool, at: int, mutate: Callable[[], None]) -> None:
        """Read ``key``, calling ``mutate`` after the ``at``-th value, or if
        ``at == -1`` after ``live()`` returned but before the first ``next``."""

        def on_yield(count: int, _: int) -> None:
            if count == at:
                mutate()

        self._lockstep(key, unique, on_yield=on_yield, before_start=mutate if at == -1 else None)

    @_per_subclass(
        lambda m: rule(
            key=m.key_st,
            unique=st.booleans(),
            at=st.integers(-1, 2),
            appends=st.lists(st.integers(0, 2 * m.values - 1), min_size=1, max_size=3),
            make_live=st.booleans(),
        )
    )
    def read_appending(
        self, key: int, unique: bool, at: int, appends: list[int], make_live: bool
    ) -> None:
        """Append to ``key`` during a read of it: the read does not see the new entries
        (its snapshot was taken when ``live()`` was called), the key keeps them.
        Half of the values appended here are fresh (outside ``0..values-1``),
        so that a read that wrongly visits them yields something new."""

        def mutate() -> None:
            for value in appends:
                if make_live:
                    self.model.live.add((key, value))
                self._add(key, value)

        self._read_mutating(key, unique, at, mutate)

    @_per_subclass(
        lambda m: rule(
            key=m.key_st,
            unique=st.booleans(),
            at=st.integers(-1, 2),
            kills=st.lists(m.value_st, max_size=2),
            discard=st.booleans(),
        )
    )
    def read_compacting(
        self, key: int, unique: bool, at: int, kills: list[int], discard: bool
    ) -> None:
        """Kill some entries, then compact (or discard) ``key`` during a read of it:
        the read carries on over its snapshot undisturbed."""

        def mutate() -> None:
            for value in kills:
                self.model.live.discard((key, value))
            if discard:
                self.index.discard(key)
                self.model.discard(key)
            else:
                self._compact(key)

        self._read_mutating(key, unique, at, mutate)

    @_per_subclass(lambda m: rule(key=m.key_st, value=m.value_st, unique=st.booleans()))
    def read_poisoned(self, key: int, value: int, unique: bool) -> None:
        """The predicate raises once on (key, value): the read raises the same, and
        neither consults the policy nor compacts."""
        self.model.poison(key, value)
        try:
            self._lockstep(key, unique)
        finally:
            self.model.cure()

    @_per_subclass(lambda m: rule(key=st.none() | m.key_st))
    def compact(self, key: int | None) -> None:
        """Force a compaction of ``key``, or of every key (``compact_all``) if None."""
        if key is not None:
            self._compact(key)
            return
        before = self._reported()
        present = len(self.model.lists)
        got = self.index.compact_all()
        expected = sum(self.model.compact(key) for key in list(self.model.lists))
        _require(got == expected, "compact_all", got, expected)
        _require(self._reported() - before == present, "compact_all counted")

    @_per_subclass(lambda m: rule(key=m.key_st))
    def discard(self, key: int) -> None:
        self.index.discard(key)
        self.model.discard(key)

    @_per_subclass(lambda m: rule(key=m.key_st, vals=m.values_st))
    def load(self, key: int, vals: list[int]) -> None:
        """Bulk-load live values into a key; refused (nothing changes) if it has a list."""
        before = self._reported()
        present = key in self.model.lists
        got = _outcome(lambda: self.index.load(key, vals))
        _require(
            got == (("raises", PreconditionError) if present else ("value", None)),
            "load",
            key,
            got,
        )
        if not present:
            self.model.live.update((key, value) for value in vals)
            self.model.extend(key, vals)
        _require(self._reported() == before, "load counted a compaction", key)

    @_per_subclass(lambda m: rule(key=m.key_st))
    def take(self, key: int) -> None:
        """Remove a key and get its whole stored list back."""
        got = self.index.take(key)
        expected = self.model.lists.get(key, [])
        _require(got == expected, "take", key, got, expected)
        self.model.discard(key)

    # --------------------------------------------------------- invariants

    @invariant()
    def structure_is_valid(self) -> None:
        self.index.check()

    @invariant()
    def contents_match_model(self) -> None:
        index, model = self.index, self.model
        for key in range(self.keys):
            expected = model.lists.get(key, [])
            _require(index.raw(key) == expected, "raw", key, index.raw(key), expected)
            _require(index.size(key) == len(expected), "size", key)
            _require((key in index) == (key in model.lists), "in", key)
        _require(sorted(index.keys()) == sorted(model.lists), "keys")
        _require(len(index) == len(model.lists), "len")
        _require(index.total_entries == sum(map(len, model.lists.values())), "total_entries")

    @invariant()
    def stats_match_model(self) -> None:
        stats = self.index.stats
        got = (
            stats.entries_scanned - self.base[0],
            stats.compactions - self.base[1],
            stats.entries_dropped - self.base[2],
        )
        model = self.model
        expected = (model.scanned, model.compactions, model.dropped)
        _require(got == expected, "stats (scanned, compactions, dropped)", got, expected)


def lazy_index_machine(
    factory: Callable[[Predicate], LazyIndexLike],
    *,
    keys: int = 3,
    values: int = 5,
) -> type[RuleBasedStateMachine]:
    """Build a state machine that tests ``factory(is_live)`` against :class:`LazyIndexModel`.

    ``factory`` must return a fresh, empty index (with a fresh policy) each
    call. Keys are ``0..keys-1`` and values ``0..values-1``: small, so that
    duplicates, stale entries and compactions are frequent. Run it with
    ``lazy_index_machine(factory).TestCase`` (set ``.settings`` on it).
    """
    return _LazyIndexMachine._bind("LazyIndexMachine", factory=factory, keys=keys, values=values)
