"""Rejected operations leave the structures as they were: NaN priorities, counts that
are not ints, keys that cannot be compared, unhashable values."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import Phase, settings
from hypothesis.stateful import run_state_machine_as_test

from bpeds.structures import (
    Batched,
    CounterMultiset,
    HeapqMultiset,
    Heapy,
    HeapyKiYay,
    IndexedList,
    LazyHeap,
    SortedMultiset,
)
from bpeds.structures.multiset import is_ordered
from bpeds.testing.multisets import multiset_machine

NAN = float("nan")
START = {"a": 10, "b": 5, "c": 1, "d": 7}

FACTORIES: dict[str, Callable[[dict[str, Any]], Any]] = {
    "Heapy": Heapy,
    "HeapyKiYay": HeapyKiYay,
    "HeapqMultiset": HeapqMultiset,
    "SortedMultiset": SortedMultiset,
    "CounterMultiset": CounterMultiset,
    "LazyHeap": LazyHeap,
    "Batched(HeapyKiYay)": lambda d: Batched(HeapyKiYay(d)),
    "Batched(Heapy)": lambda d: Batched(Heapy(d)),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_a_nan_priority_is_refused_before_anything_changes(name: str) -> None:
    h = FACTORIES[name](dict(START))
    for key in ("b", "zz"):  # present and absent keys
        with pytest.raises(ValueError, match="NaN"):
            h.update(key, NAN)
        h.check()
        assert dict(h.items()) == START
    h.update("e", 50)
    assert h.top() == ("e", 50)  # was ('a', 10) after a NaN slipped in
    h.check()


@pytest.mark.parametrize("name", [n for n in FACTORIES if n != "LazyHeap"])
def test_a_tuple_holding_nan_is_refused(name: str) -> None:
    h = FACTORIES[name]({"a": (1, 2), "b": (0, 5)})
    with pytest.raises(ValueError, match="no order"):
        h.update("b", (1, NAN))
    assert h.top() == ("a", (1, 2))
    h.check()


@pytest.mark.parametrize("name", FACTORIES)
def test_an_initial_nan_is_refused(name: str) -> None:
    with pytest.raises(ValueError, match="NaN"):
        FACTORIES[name]({"a": 1, "b": NAN})


@pytest.mark.parametrize("name", FACTORIES)
@pytest.mark.parametrize("method", ["add", "remove"])
@pytest.mark.parametrize("n", [1.5, NAN, True, 1.0, "1"])
def test_counts_must_be_ints(name: str, method: str, n: object) -> None:
    h = FACTORIES[name](dict(START))
    with pytest.raises(TypeError, match="int count"):
        getattr(h, method)("a", n)
    h.check()
    assert dict(h.items()) == START
    with pytest.raises(ValueError, match="n >= 0"):
        getattr(h, method)("a", -1)
    assert dict(h.items()) == START


def test_batched_no_longer_takes_fractional_or_nan_counts() -> None:
    b = Batched(HeapyKiYay({"a": 3}))
    with pytest.raises(TypeError):
        b.add("a", 1.5)  # type: ignore[arg-type]  # was accepted, and check() then failed
    with pytest.raises(TypeError):
        b.add("a", NAN)  # type: ignore[arg-type]  # was silently dropped
    b.check()
    assert b.count("a") == 3


def test_lazyheap_undoes_an_update_whose_key_cannot_be_compared() -> None:
    h: LazyHeap[Any] = LazyHeap()
    h.update(1, 3)
    with pytest.raises(TypeError):
        h.update("a", 3)  # equal priorities compare the keys: int < str raises
    assert len(h) == 1
    assert "a" not in h
    h.check()
    h.update(1, 4)
    h.update(2, 3)
    h.update(1, 3)
    with pytest.raises(TypeError):
        h.update("b", 3)  # an existing key keeps its old priority too
    h.check()
    assert dict(h.items()) == {1: 3, 2: 3}
    assert h.pop() == (1, 3)


@pytest.mark.parametrize("values", [[7, 8], [7, 8, 9]])
def test_indexed_list_refuses_an_unhashable_value_everywhere(values: list[int]) -> None:
    lst: IndexedList[Any] = IndexedList(values)
    first = next(iter(lst))
    with pytest.raises(TypeError):
        lst.merge_with_next(first, ["x"])  # a two-node chunk forms no pair afterwards
    lst.check()
    assert list(lst.values()) == values
    single: IndexedList[Any] = IndexedList([1])
    with pytest.raises(TypeError):
        single.set_value(next(iter(single)), ["x"])
    single.check()
    assert list(single.values()) == [1]


def test_is_ordered() -> None:
    from decimal import Decimal

    assert is_ordered(0)
    assert is_ordered((1, (2.5, 3)))
    assert not is_ordered((1, (2.5, NAN)))
    assert not is_ordered(Decimal("NaN"))
    assert is_ordered(Decimal(1))


class _AcceptsNaN(CounterMultiset[Any, Any]):
    """A multiset that forgets to refuse NaN (the bug the rejected rule looks for)."""

    def update(self, key: Any, priority: Any) -> None:
        if key in self._prio:
            self._prio[key] = priority
        else:
            self._insert(key, priority)


def test_the_state_machine_catches_a_multiset_that_accepts_nan() -> None:
    machine = multiset_machine(lambda tie: _AcceptsNaN(tie=tie), kinds=["int"])
    with pytest.raises(AssertionError, match="accepted"):
        run_state_machine_as_test(
            machine,
            settings=settings(
                max_examples=100, stateful_step_count=20, phases=[Phase.generate], database=None
            ),
        )


def test_lazyheap_keeps_its_rebuild_bound_when_keys_leave() -> None:
    """Dead entries stay within ``stale_factor * len + 64`` after discard, pop and a
    remove to zero too (a key leaving shrinks the bound; only pushes rebuilt before)."""
    for leave in ("discard", "pop", "remove"):
        h: LazyHeap[int] = LazyHeap(dict.fromkeys(range(12), 1))
        for _ in range(6):
            for k in range(12):
                h.add(k, 0)  # each re-pushes the key: one more dead entry
        h.check()
        for k in range(11):
            if leave == "discard":
                h.discard(k)
            elif leave == "pop":
                h.pop()
            else:
                h.remove(k, 1)
            h.check()
        assert len(h) == 1
