"""The property-testing kit: reference models, strategies and state machines.

Needs the ``testing`` extra (``pip install bpeds[testing]``: Hypothesis). Point the
machines at your own implementation, e.g.::

    from bpeds.testing import multiset_machine, quick_settings
    TestMyHeap = multiset_machine(lambda tie: MyHeap(tie=tie)).TestCase
    TestMyHeap.settings = quick_settings()   # optional: a run of seconds

See ``docs/testing.md``.
"""

from __future__ import annotations

from bpeds.testing import _requires  # noqa: F401  # first: names the extra if Hypothesis is missing
from bpeds.testing.bound_heap import BoundModel, BoundSetup, bound_heap_machine, bound_priorities
from bpeds.testing.lazy_index import LazyIndexModel, lazy_index_machine
from bpeds.testing.lists import (
    IndexedListModel,
    LeapModel,
    indexed_list_machine,
    leap_machine,
    token_chunks,
    token_lists,
    token_pairs,
    token_values,
)
from bpeds.testing.multisets import (
    MultisetModel,
    multiset_machine,
    priorities,
    quick_settings,
    tie_functions,
)
from bpeds.testing.oracle import apply_merge, brute_force_merges
from bpeds.testing.sleeping_pairs import SleepingPairsModel, sleeping_pairs_machine

__all__ = [
    "BoundModel",
    "BoundSetup",
    "IndexedListModel",
    "LazyIndexModel",
    "LeapModel",
    "MultisetModel",
    "SleepingPairsModel",
    "quick_settings",
    "apply_merge",
    "bound_heap_machine",
    "bound_priorities",
    "brute_force_merges",
    "indexed_list_machine",
    "lazy_index_machine",
    "leap_machine",
    "multiset_machine",
    "priorities",
    "sleeping_pairs_machine",
    "tie_functions",
    "token_chunks",
    "token_lists",
    "token_pairs",
    "token_values",
]
