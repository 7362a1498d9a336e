"""Exception types raised by bpeds.

Every error bpeds raises on purpose derives from :class:`BpedsError`; the ones
that describe bad arguments also derive from the built-in type a caller would
expect (``ValueError``, ``IndexError``), so ``except ValueError`` keeps working.
"""

from __future__ import annotations

from typing import Any

__all__ = ["BpedsError", "EmptyError", "InvariantError", "PreconditionError"]


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
