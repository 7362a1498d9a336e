"""bpeds: data structures and a pluggable-score merge driver for BPE tokenizers.

The layers, each usable on its own:

- :mod:`bpeds.structures`: IndexedList, Leap, the Multiset heaps, LazyIndex.
- :mod:`bpeds.driver` with :mod:`bpeds.scoring` and :mod:`bpeds.corpus`: the generic,
  exact merge driver (score, tie rule, corpus representation and heap are plug-ins).
- :func:`count` and :class:`Counts`: counted pre-tokens as a file to save, add up and
  train from, counted in processes or on a Dask cluster.
- :class:`Tokenizer` and :func:`train`: a byte-level BPE tokenizer on top (encode and
  decode with tiktoken's semantics, save/load, other tools' formats in :mod:`bpeds.formats`).
- :mod:`bpeds.testing`: reference models, state machines and a brute-force oracle.

The names below are imported from their modules when first used, so that
``import bpeds.structures`` (or starting the ``bpeds`` command) does not load
the whole package first.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bpeds.counts import Counts, CountsFormatError
    from bpeds.driver import MergeDriver, MergeRecord, train_merges
    from bpeds.encoder import SpecialTokenError, UnknownTokenError
    from bpeds.errors import BpedsError, EmptyError, InvariantError, PreconditionError
    from bpeds.formats import FormatError
    from bpeds.io import InvalidTextError
    from bpeds.persist import ModelFormatError
    from bpeds.tokenizer import Tokenizer, TokenizerError
    from bpeds.training import count, train

__version__ = "0.1.0"

__all__ = [
    "BpedsError",
    "Counts",
    "CountsFormatError",
    "EmptyError",
    "FormatError",
    "InvalidTextError",
    "InvariantError",
    "MergeDriver",
    "MergeRecord",
    "ModelFormatError",
    "PreconditionError",
    "SpecialTokenError",
    "Tokenizer",
    "TokenizerError",
    "UnknownTokenError",
    "__version__",
    "count",
    "train",
    "train_merges",
]

#: Where each public name lives (imported on first use by :func:`__getattr__`).
_HOMES = {
    "MergeDriver": "bpeds.driver",
    "MergeRecord": "bpeds.driver",
    "train_merges": "bpeds.driver",
    "SpecialTokenError": "bpeds.encoder",
    "UnknownTokenError": "bpeds.encoder",
    "BpedsError": "bpeds.errors",
    "EmptyError": "bpeds.errors",
    "InvariantError": "bpeds.errors",
    "PreconditionError": "bpeds.errors",
    "FormatError": "bpeds.formats",
    "InvalidTextError": "bpeds.io",
    "ModelFormatError": "bpeds.persist",
    "Tokenizer": "bpeds.tokenizer",
    "TokenizerError": "bpeds.tokenizer",
    "train": "bpeds.training",
    "count": "bpeds.training",
    "Counts": "bpeds.counts",
    "CountsFormatError": "bpeds.counts",
}


def __getattr__(name: str) -> object:
    home = _HOMES.get(name)
    if home is None:
        # A submodule (bpeds.variants, bpeds.scoring, ...) as an attribute, as an eager
        # package would have it.
        if not name.startswith("__") and importlib.util.find_spec(f"bpeds.{name}") is not None:
            return importlib.import_module(f"bpeds.{name}")
        raise AttributeError(f"module 'bpeds' has no attribute {name!r}")
    value = getattr(importlib.import_module(home), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
