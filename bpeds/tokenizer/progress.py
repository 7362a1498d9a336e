"""Progress reporting for training: a three-method protocol and two implementations.

A progress object is told ``start(total)`` once, ``update(n)`` as ``n`` more
steps finish, and ``close()`` at the end (also when training fails).
:class:`TqdmProgress` draws a bar with ``tqdm`` (the ``progress`` extra);
:class:`NullProgress` does nothing. :func:`resolve_progress` picks one for the
``progress=`` argument of :func:`bpeds.tokenizer.training.train`.

Not handled here: what a step is (training reports merges).
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from typing import Any, Protocol, runtime_checkable

__all__ = ["NullProgress", "Progress", "TqdmProgress", "resolve_progress"]


@runtime_checkable
class Progress(Protocol):
    """Anything with ``start(total)``, ``update(n)`` and ``close()``."""

    def start(self, total: int) -> None: ...

    def update(self, n: int) -> None: ...

    def close(self) -> None: ...


class NullProgress:
    """Reports nothing.

    >>> p = NullProgress(); p.start(3); p.update(1); p.close()
    """

    def start(self, total: int) -> None:
        """Do nothing."""

    def update(self, n: int) -> None:
        """Do nothing."""

    def close(self) -> None:
        """Do nothing."""


class TqdmProgress:
    """A ``tqdm`` bar on stderr, at line ``position`` if given (several runs at once);
    needs ``tqdm`` (``pip install bpeds[progress]``)."""

    def __init__(self, desc: str = "merges", position: int | None = None) -> None:
        if importlib.util.find_spec("tqdm") is None:
            raise ImportError(
                "progress=True draws a tqdm bar, but tqdm is not installed: "
                "pip install 'bpeds[progress]' (or tqdm)"
            )
        self.desc, self.position = desc, position
        self._bar: Any = None

    def start(self, total: int) -> None:
        """Open the bar for ``total`` steps."""
        tqdm = importlib.import_module("tqdm").tqdm
        self._bar = tqdm(
            total=total, desc=self.desc, position=self.position, unit=" merges", file=sys.stderr
        )

    def update(self, n: int) -> None:
        """Advance the bar by ``n``."""
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        """Close the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def resolve_progress(progress: bool | Progress | None) -> Progress:
    """The progress object for ``progress=``.

    ``None`` (default): a tqdm bar if tqdm is installed and stderr is a
    terminal, else silent. ``True``: a tqdm bar (``ImportError`` naming the
    extra if tqdm is missing). ``False``: silent. An object with ``start``,
    ``update`` and ``close``: itself. Anything else: ``TypeError``.

    >>> type(resolve_progress(False)).__name__
    'NullProgress'
    """
    if progress is None:
        if _stderr_is_tty() and importlib.util.find_spec("tqdm") is not None:
            return TqdmProgress()
        return NullProgress()
    if progress is True:
        return TqdmProgress()
    if progress is False:
        return NullProgress()
    if isinstance(progress, Progress):
        return progress
    raise TypeError(
        "progress must be None, True, False or an object with start(total), update(n) and "
        f"close(), got {type(progress).__name__}"
    )
