"""bpeds: data structures and a pluggable-score merge driver for BPE tokenizers.

The layers, each usable on its own:

- :mod:`bpeds.structures`: IndexedList, Leap, the Multiset heaps, LazyIndex.
- :mod:`bpeds.driver` with :mod:`bpeds.scoring` and :mod:`bpeds.corpus`: the generic,
  exact merge driver (score, tie rule, corpus representation and heap are plug-ins).
- :class:`Tokenizer` and :func:`train`: a byte-level BPE tokenizer on top (encode and
  decode with tiktoken's semantics, save/load, other tools' formats in
  :mod:`bpeds.tokenizer.formats`); its modules are the package :mod:`bpeds.tokenizer`.
- :mod:`bpeds.testing`: reference models, state machines and a brute-force oracle.
- :func:`compare` (:mod:`bpeds.comparison`): train several configurations on the same data and
  measure them on held-out text (tables, plots, a report).

Importing ``bpeds`` (or one layer, such as ``bpeds.structures``) loads only the
error types; every other name here is imported the first time it is used
(PEP 562), so the structures alone never pull in the tokenizer.
"""

import importlib
from typing import TYPE_CHECKING

from bpeds.errors import BpedsError, EmptyError, InvariantError, PreconditionError

if TYPE_CHECKING:
    from bpeds.comparison import Comparison, compare
    from bpeds.driver import MergeDriver, MergeRecord, train_merges
    from bpeds.tokenizer import Tokenizer, TokenizerError
    from bpeds.tokenizer.counting import count
    from bpeds.tokenizer.counts import Counts, CountsFormatError
    from bpeds.tokenizer.encoder import SpecialTokenError, UnknownTokenError
    from bpeds.tokenizer.formats import FormatError
    from bpeds.tokenizer.io import InvalidTextError
    from bpeds.tokenizer.persist import ModelFormatError
    from bpeds.tokenizer.pruning import prune, token_use
    from bpeds.tokenizer.training import train

__version__ = "0.1.0"

#: Where each lazily imported name lives.
_LAZY = {
    "Comparison": "bpeds.comparison",
    "compare": "bpeds.comparison",
    "Counts": "bpeds.tokenizer.counts",
    "CountsFormatError": "bpeds.tokenizer.counts",
    "count": "bpeds.tokenizer.counting",
    "FormatError": "bpeds.tokenizer.formats",
    "InvalidTextError": "bpeds.tokenizer.io",
    "MergeDriver": "bpeds.driver",
    "MergeRecord": "bpeds.driver",
    "ModelFormatError": "bpeds.tokenizer.persist",
    "SpecialTokenError": "bpeds.tokenizer.encoder",
    "Tokenizer": "bpeds.tokenizer.core",
    "TokenizerError": "bpeds.errors",
    "UnknownTokenError": "bpeds.tokenizer.encoder",
    "prune": "bpeds.tokenizer.pruning",
    "token_use": "bpeds.tokenizer.pruning",
    "train": "bpeds.tokenizer.training",
    "train_merges": "bpeds.driver",
}

__all__ = [
    "BpedsError",
    "Comparison",
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
    "compare",
    "count",
    "prune",
    "token_use",
    "train",
    "train_merges",
]


def __getattr__(name: str) -> object:
    """Import a public name (or a subpackage such as ``bpeds.driver``) on first use."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if not name.startswith("_"):
        try:
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"{__name__}.{name}":
                raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The public names (what ``from bpeds import *`` gives), without helper imports."""
    return sorted(__all__)
