"""LazyHeap: the lazy C-heapq multiset against the model, for int and float priorities."""

from __future__ import annotations

import math
from typing import Literal, assert_type

import pytest
from hypothesis import settings

from bpeds.errors import EmptyError, InvariantError
from bpeds.structures import LazyHeap
from bpeds.testing import MultisetModel, multiset_machine
from tests.budget import examples

LazyHeapMachine = multiset_machine(
    lambda tie: LazyHeap(tie=tie, stale_factor=1), kinds=("int", "float")
)
LazyHeapMachine.TestCase.settings = settings(
    max_examples=examples(ci=200, local=25), stateful_step_count=50
)
TestLazyHeapMachine = LazyHeapMachine.TestCase

MinLazyHeapMachine = multiset_machine(
    lambda tie: LazyHeap(tie=tie, stale_factor=1, order="min"),
    kinds=("int", "float"),
    order="min",
    initial_factory=lambda initial, tie: LazyHeap(initial, tie=tie, order="min"),
)
MinLazyHeapMachine.TestCase.settings = settings(
    max_examples=examples(ci=100, local=12), stateful_step_count=50
)
TestMinLazyHeapMachine = MinLazyHeapMachine.TestCase


@pytest.mark.parametrize("order", ["max", "min"])
def test_most_common_drops_the_dead_entries_it_meets(order: Literal["max", "min"]) -> None:
    """Top-k pops past dead and duplicate entries once, drops them, and puts the answers back."""
    sign = 1 if order == "max" else -1
    h: LazyHeap[int] = LazyHeap({k: sign * k for k in range(1000)}, order=order)
    model = MultisetModel({k: sign * k for k in range(1000)}, order=order)
    for k in range(990, 1000):  # the best ten fall (in top order): ten dead entries in front
        h.update(k, sign * (k - 500))
        model.update(k, sign * (k - 500))
    h.update(989, sign * 989)  # a duplicate live entry
    entries = len(h._heap)
    assert h.most_common(5) == model.most_common(5)
    assert h.stale_skipped == 11  # 10 dead + 1 duplicate, dropped for good
    assert len(h._heap) == entries - 11
    assert h.most_common(5) == model.most_common(5)
    assert h.stale_skipped == 11  # nothing left to drop: the second call pops 5, pushes 5
    h.check()
    assert h.most_common(1000) == model.most_common()
    assert h.pop() == model.pop()


def test_dead_entries_are_skipped_and_rebuilt_away() -> None:
    h: LazyHeap[int] = LazyHeap(stale_factor=1)
    for round_ in range(200):
        h.update(round_ % 7, round_)  # the same 7 keys, rising: old entries die
    assert h.top() == (199 % 7, 199)
    h.check()
    assert h.rebuilds >= 1
    assert len(h._heap) <= 1 * len(h) + 64


def test_types_are_pinned_and_bad_input_refused() -> None:
    h: LazyHeap[str] = LazyHeap({"a": 2})
    assert_type(h.top(), tuple[str, int | float])
    with pytest.raises(TypeError, match="int or float"):
        h.update("a", (1, 2))  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="NaN"):
        h.update("a", math.nan)
    with pytest.raises(EmptyError):
        LazyHeap().pop()
    with pytest.raises(TypeError, match="an int count"):
        h.add("a", math.nan)  # type: ignore[arg-type]
    assert h.count("a") == 2
    with pytest.raises(ValueError, match="stale_factor"):
        LazyHeap(stale_factor=0)
    with pytest.raises(ValueError, match="order must be"):
        LazyHeap(order="largest")  # type: ignore[arg-type]
    assert LazyHeap(order="min").order == "min"
    assert repr(LazyHeap({"a": 1}, order="min")) == "LazyHeap({'a': 1}, order='min')"


def test_check_catches_a_corrupted_heap() -> None:
    h: LazyHeap[int] = LazyHeap({1: 5, 2: 3, 3: 4})
    h._heap.reverse()
    with pytest.raises(InvariantError, match="heap order"):
        h.check()
    h = LazyHeap({1: 5, 2: 3})
    h._prio[9] = 1  # a key the heap never saw
    with pytest.raises(InvariantError, match="without a live heap entry"):
        h.check()
