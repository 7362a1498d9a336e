"""Exception types raised by bpeds.

Every error bpeds raises on purpose derives from :class:`BpedsError`; the ones
that describe bad arguments also derive from the built-in type a caller would
expect (``ValueError``, ``IndexError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from typing import Any

__all__ = [
    "BpedsError",
    "EmptyError",
    "InvariantError",
    "ModelFormatError",
    "PreconditionError",
    "TargetFileError",
    "TokenizerError",
]


class BpedsError(Exception):
    """Base class of every exception raised deliberately by bpeds."""


class InvariantError(BpedsError):
    """A structure's ``check()`` found a broken invariant.

    This always means a bug (in bpeds, or in code that mutated a structure's
    internals directly). ``state`` holds a dump of the offending structure so
    the failure can be reproduced.
    """

    def __init__(self, message: str, state: Any = None) -> None:
        super().__init__(message if state is None else f"{message}\nstate: {state!r}")
        self.state = state


class PreconditionError(BpedsError, ValueError):
    """An operation was called with arguments that break its documented precondition.

    For example: setting a ``Leap`` node to a value whose chain continues after
    the node, or deleting a node that belongs to another list.
    """


class EmptyError(BpedsError, IndexError):
    """A query (``top``, ``pop``) was made on an empty structure."""


class TokenizerError(BpedsError, ValueError):
    """A tokenizer's parts are inconsistent: a merge names an id that does not
    exist yet, a special token collides, a pattern does not compile, ...

    Raised by :class:`bpeds.tokenizer.Tokenizer` (and importable from there), by
    :func:`bpeds.tokenizer.pretokenize.resolve_pattern` and by :mod:`bpeds.tokenizer.special`.
    """


class ModelFormatError(BpedsError, ValueError):
    """A file (or string) is not a valid bpeds tokenizer: corrupt, truncated,
    of an unknown version, or inconsistent. Raised by :mod:`bpeds.tokenizer.persist` and
    :meth:`bpeds.tokenizer.Tokenizer.load` (importable from ``bpeds.tokenizer.persist``)."""


class TargetFileError(BpedsError, OSError):
    """A file cannot be written where asked: what is there is not a regular file
    (a FIFO, a device such as ``/dev/null``, a socket), or is a symbolic link
    bpeds does not follow (dangling, or planted by another user in a shared
    directory). An ``OSError``: ``filename`` is the path, ``strerror`` the reason.
    Raised by every function that saves a tokenizer, before anything is written.
    """
