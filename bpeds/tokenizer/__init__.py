"""The tokenizer layer: a byte-level BPE tokenizer built on the merge driver.

Its modules, bottom to top (each imports only modules listed before it, and the
layers below: the vocabulary, the scores, the corpus representations, the driver):

- :mod:`~bpeds.tokenizer.limits`, :mod:`~bpeds.tokenizer.pattern_safety`,
  :mod:`~bpeds.tokenizer.pretokenize`, :mod:`~bpeds.tokenizer.special`,
  :mod:`~bpeds.tokenizer.replay`: bounds on reading untrusted files, split
  patterns and their limits, special-token rules, loop-variant event logs.
- :mod:`~bpeds.tokenizer.fastsplit`: the split at ``re``'s speed on ASCII.
- :mod:`~bpeds.tokenizer.files`, :mod:`~bpeds.tokenizer.counts`: atomic file
  writing; pre-token counts, as a value and as a file.
- :mod:`~bpeds.tokenizer.encoder`: encoding (rank by bytes, tiktoken's semantics).
- Training, below the ``Tokenizer``: :mod:`~bpeds.tokenizer.io` (training
  input), :mod:`~bpeds.tokenizer.progress`, :mod:`~bpeds.tokenizer.pieces`
  (splitting and counting in processes), :mod:`~bpeds.tokenizer.executors`
  (counting as tasks), :mod:`~bpeds.tokenizer.counting` (``count``,
  ``count_to_file``), :mod:`~bpeds.tokenizer.trained` (what training produces),
  :mod:`~bpeds.tokenizer.presets`, :mod:`~bpeds.tokenizer.groups`,
  :mod:`~bpeds.tokenizer.continued`, :mod:`~bpeds.tokenizer.superbpe`,
  :mod:`~bpeds.tokenizer.boundless` and the run, :mod:`~bpeds.tokenizer.trainer`.
- :mod:`~bpeds.tokenizer.core`: the :class:`Tokenizer` itself.
- :mod:`~bpeds.tokenizer.persist` (the JSON model file),
  :mod:`bpeds.tokenizer.formats` (minbpe, Hugging Face, tiktoken files),
  :mod:`~bpeds.tokenizer.training` (``train``, which builds a ``Tokenizer``) and
  :mod:`~bpeds.tokenizer.pruning` (``prune``, which builds one from another).

This package exports the names most code needs (:class:`Tokenizer`,
:class:`TokenizerError`, ...). Like :mod:`bpeds`, it imports each name the first
time it is used (PEP 562), so importing one of its modules (say
:mod:`bpeds.tokenizer.pretokenize`) loads only what that module needs.
"""

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bpeds.errors import TokenizerError
    from bpeds.tokenizer.core import Tokenizer
    from bpeds.tokenizer.encoder import SpecialTokenError, UnknownTokenError
    from bpeds.tokenizer.pretokenize import resolve_pattern
    from bpeds.tokenizer.special import check_special_texts
    from bpeds.vocab import BYTE_TOKENS

#: Where each exported name lives.
_LAZY = {
    "BYTE_TOKENS": "bpeds.vocab",
    "SpecialTokenError": "bpeds.tokenizer.encoder",
    "Tokenizer": "bpeds.tokenizer.core",
    "TokenizerError": "bpeds.errors",
    "UnknownTokenError": "bpeds.tokenizer.encoder",
    "check_special_texts": "bpeds.tokenizer.special",
    "resolve_pattern": "bpeds.tokenizer.pretokenize",
}

__all__ = [
    "BYTE_TOKENS",
    "SpecialTokenError",
    "Tokenizer",
    "TokenizerError",
    "UnknownTokenError",
    "check_special_texts",
    "resolve_pattern",
]


def __getattr__(name: str) -> object:
    """An exported name or a submodule (``bpeds.tokenizer.training``), imported on
    first use."""
    module = _LAZY.get(name)
    if module is not None:
        value = getattr(importlib.import_module(module), name)
        globals()[name] = value
        return value
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    try:
        return importlib.import_module(f"{__name__}.{name}")
    except ModuleNotFoundError as exc:
        if exc.name != f"{__name__}.{name}":
            raise
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    """The exported names."""
    return sorted(__all__)
