"""Data structures for BPE training, each importable on its own.

Which one do I need? See the table at the top of ``docs/structures.md``.

- :class:`IndexedList`: doubly linked token list with a stale pair index.
- :class:`Leap`: a list whose nodes are also threaded through chains of equal values.
- :class:`Multiset` implementations (priority queues with update/remove by key,
  ``Counter``-style counting and top-k; max-first by default, ``order="min"`` for
  smallest-first): :class:`HeapyKiYay` (array-based, position-aware: the general
  choice), :class:`Heapy` (node-based: pointer-linked nodes), :class:`LazyHeap`
  (lazy, in C ``heapq``: int/float priorities), :class:`Batched` (nets many
  ``add``/``remove`` calls around any of them), and the baselines
  :class:`HeapqMultiset`, :class:`SortedMultiset`, :class:`CounterMultiset`.
- :class:`BoundHeap`: a lazy max-heap of upper bounds checked at the top through a
  callback, with low bounds parked in buckets outside the heap (the merge driver's
  selection structure); :class:`MultisetBounds` gives any Multiset the same interface.
- :class:`LazyIndex` with pluggable compaction policies (:class:`NeverCompact`,
  :class:`ThresholdCompaction`, :class:`AdaptiveCompaction`, or your own).
- :class:`SleepingPairs`: each token's live pairs, those far below the top asleep
  under a bound of how far a fall of the token's count can raise them (the driver's
  re-scoring of scores that read unigram counts).

Every structure has ``check()``, which verifies all its invariants in O(n). See
``docs/structures.md``.

Each name is imported from its own module the first time it is used (PEP
562), so ``from bpeds.structures import HeapyKiYay`` loads that heap and what
it needs, nothing else.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bpeds.structures.baselines import CounterMultiset, HeapqMultiset, SortedMultiset
    from bpeds.structures.batched import Batched
    from bpeds.structures.bound_heap import BoundError, BoundHeap, MultisetBounds
    from bpeds.structures.compaction import (
        AdaptiveCompaction,
        NeverCompact,
        ThresholdCompaction,
    )
    from bpeds.structures.heapy import Heapy
    from bpeds.structures.heapykiyay import HeapyKiYay
    from bpeds.structures.indexed_list import IndexedList, ListNode
    from bpeds.structures.lazy_index import LazyIndex
    from bpeds.structures.lazyheap import LazyHeap
    from bpeds.structures.leap import Leap, LeapNode
    from bpeds.structures.protocols import (
        CompactionPolicy,
        CompactionStats,
        Multiset,
        Order,
        TieKey,
    )
    from bpeds.structures.sleeping_pairs import SleepingPairs

#: The module each public name lives in.
_MODULES = {
    "AdaptiveCompaction": "compaction",
    "Batched": "batched",
    "BoundError": "bound_heap",
    "BoundHeap": "bound_heap",
    "CompactionPolicy": "protocols",
    "CompactionStats": "protocols",
    "CounterMultiset": "baselines",
    "HeapqMultiset": "baselines",
    "Heapy": "heapy",
    "HeapyKiYay": "heapykiyay",
    "IndexedList": "indexed_list",
    "LazyHeap": "lazyheap",
    "LazyIndex": "lazy_index",
    "Leap": "leap",
    "LeapNode": "leap",
    "ListNode": "indexed_list",
    "Multiset": "protocols",
    "MultisetBounds": "bound_heap",
    "NeverCompact": "compaction",
    "Order": "protocols",
    "SleepingPairs": "sleeping_pairs",
    "SortedMultiset": "baselines",
    "ThresholdCompaction": "compaction",
    "TieKey": "protocols",
}

__all__ = [
    "AdaptiveCompaction",
    "Batched",
    "BoundError",
    "BoundHeap",
    "CompactionPolicy",
    "CompactionStats",
    "CounterMultiset",
    "HeapqMultiset",
    "Heapy",
    "HeapyKiYay",
    "IndexedList",
    "LazyHeap",
    "LazyIndex",
    "Leap",
    "LeapNode",
    "ListNode",
    "Multiset",
    "MultisetBounds",
    "NeverCompact",
    "Order",
    "SleepingPairs",
    "SortedMultiset",
    "ThresholdCompaction",
    "TieKey",
]


def __getattr__(name: str) -> object:
    """Import a public name from its module on first use (then it is a plain global)."""
    module = _MODULES.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    """The public names."""
    return list(__all__)
