"""LazyHeap: the lazy C-heapq multiset against the model, for int and float priorities."""

from __future__ import annotations

import math
from typing import assert_type

import pytest
from hypothesis import settings

from bpeds.errors import EmptyError, InvariantError
from bpeds.structures import LazyHeap
from bpeds.testing import multiset_machine
from tests.budget import examples

LazyHeapMachine = multiset_machine(
    lambda tie: LazyHeap(tie=tie, stale_factor=1), kinds=("int", "float")
)
LazyHeapMachine.TestCase.settings = settings(
    max_examples=examples(ci=200, local=50), stateful_step_count=50
)
TestLazyHeapMachine = LazyHeapMachine.TestCase


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


def test_check_catches_a_corrupted_heap() -> None:
    h: LazyHeap[int] = LazyHeap({1: 5, 2: 3, 3: 4})
    h._heap.reverse()
    with pytest.raises(InvariantError, match="heap order"):
        h.check()
    h = LazyHeap({1: 5, 2: 3})
    h._prio[9] = 1  # a key the heap never saw
    with pytest.raises(InvariantError, match="without a live heap entry"):
        h.check()
