"""bpeds: data structures and a pluggable-score merge driver for BPE tokenizers."""

from __future__ import annotations

from bpeds.errors import BpedsError, EmptyError, InvariantError, PreconditionError

__version__ = "0.1.0"

__all__ = ["BpedsError", "EmptyError", "InvariantError", "PreconditionError", "__version__"]
