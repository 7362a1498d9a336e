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
"""

from __future__ import annotations

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
