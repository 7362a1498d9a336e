"""bpeds: data structures and a pluggable-score merge driver for BPE tokenizers.

The layers, each usable on its own:

- :mod:`bpeds.structures`: IndexedList, Leap, the Multiset heaps, LazyIndex.
- :mod:`bpeds.driver` with :mod:`bpeds.scoring` and :mod:`bpeds.corpus`: the generic,
  exact merge driver (score, tie rule, corpus representation and heap are plug-ins).
- :class:`Tokenizer` and :func:`train`: a byte-level BPE tokenizer on top (encode and
  decode with tiktoken's semantics, save/load, other tools' formats in :mod:`bpeds.formats`).
- :mod:`bpeds.testing`: reference models, state machines and a brute-force oracle.
- :func:`compare` (:mod:`bpeds.comparison`): train several configurations on the same data and
  measure them on held-out text (tables, plots, a report).
"""

from __future__ import annotations

from bpeds.comparison import Comparison, compare
from bpeds.driver import MergeDriver, MergeRecord, train_merges
from bpeds.encoder import SpecialTokenError, UnknownTokenError
from bpeds.errors import BpedsError, EmptyError, InvariantError, PreconditionError
from bpeds.formats import FormatError
from bpeds.io import InvalidTextError
from bpeds.persist import ModelFormatError
from bpeds.tokenizer import Tokenizer, TokenizerError
from bpeds.training import train

__version__ = "0.1.0"

__all__ = [
    "BpedsError",
    "Comparison",
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
    "compare",
    "train",
    "train_merges",
]
