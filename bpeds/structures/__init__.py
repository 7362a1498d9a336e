"""Data structures for BPE training, each importable on its own.

- :class:`IndexedList`: doubly linked token list with a stale pair index.
- :class:`Leap`: a list whose nodes are also threaded through chains of equal values.
- :class:`Multiset` implementations (max-heaps with update/remove in O(log n)):
  :class:`Heapy` (pointer-based), :class:`HeapyKiYay` (array-based), :class:`Batched`
  (lazy, netted batching around any of them), :class:`LazyHeap` (a lazy max-heap of
  numeric priorities in C ``heapq``), and the baselines :class:`HeapqMultiset`,
  :class:`SortedMultiset`, :class:`CounterMultiset`.
- :class:`BoundHeap`: a lazy max-heap of upper bounds checked at the top through a
  callback, with low bounds parked in buckets outside the heap (the merge driver's
  selection structure); :class:`MultisetBounds` gives any Multiset the same interface.
- :class:`LazyIndex` with pluggable compaction policies (:class:`NeverCompact`,
  :class:`ThresholdCompaction`, :class:`AdaptiveCompaction`, or your own).

Every structure has ``check()``, which verifies all its invariants in O(n). See
``docs/structures.md``.
"""

from __future__ import annotations

from bpeds.structures.baselines import CounterMultiset, HeapqMultiset, SortedMultiset
from bpeds.structures.batched import Batched
from bpeds.structures.bound_heap import BoundError, BoundHeap, MultisetBounds
from bpeds.structures.compaction import AdaptiveCompaction, NeverCompact, ThresholdCompaction
from bpeds.structures.heapy import Heapy
from bpeds.structures.heapykiyay import HeapyKiYay
from bpeds.structures.indexed_list import IndexedList, ListNode
from bpeds.structures.lazy_index import LazyIndex
from bpeds.structures.lazyheap import LazyHeap
from bpeds.structures.leap import Leap, LeapNode
from bpeds.structures.protocols import CompactionPolicy, CompactionStats, Multiset, TieKey

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
    "SortedMultiset",
    "ThresholdCompaction",
    "TieKey",
]
