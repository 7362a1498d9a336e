"""Progress reporting for training: a three-method protocol, its stages, two implementations.

A progress object is told ``start(total)`` once, ``update(n)`` as ``n`` more
merges finish, and ``close()`` at the end (also when training fails). An object
that also has ``stage(label, total, unit)`` (:class:`Staged`) is shown the whole
job instead, stage by stage, each opened by ``stage`` and advanced by ``update``:
``reading`` (UTF-8 bytes of text read and split, out of the data's size when it is
known), ``counting pairs`` (no total: the merge loop's set-up), then ``merges``,
opened at the first merge so that its rate, and the time left, are those of the
merges themselves. SuperBPE's two runs label their stages ``stage 1/2: ...`` and
``stage 2/2: ...``. :class:`JobProgress` is what training calls.

:class:`TqdmProgress` draws a bar per stage with ``tqdm.auto`` (the ``progress``
extra): a widget in a Jupyter notebook (with ``ipywidgets``), text on a terminal;
:class:`NullProgress` does nothing. :func:`resolve_progress` picks one for the
``progress=`` argument of :func:`bpeds.tokenizer.training.train`.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
from collections.abc import Iterable, Iterator
from typing import Any, Protocol, runtime_checkable

__all__ = [
    "JobProgress",
    "NullProgress",
    "Progress",
    "Staged",
    "TqdmProgress",
    "in_notebook",
    "resolve_progress",
]


@runtime_checkable
class Progress(Protocol):
    """Anything with ``start(total)``, ``update(n)`` and ``close()``."""

    def start(self, total: int) -> None: ...

    def update(self, n: int) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class Staged(Progress, Protocol):
    """A progress object shown every stage of the job: ``stage(label, total, unit)``
    opens one (``total`` ``None``: unknown), ``update(n)`` advances it."""

    def stage(self, label: str, total: int | None, unit: str) -> None: ...


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
    """A ``tqdm`` bar per stage on stderr (a widget in a notebook), at line ``position``
    if given (several runs at once), labelled ``desc: stage``; needs ``tqdm``
    (``pip install bpeds[progress]``)."""

    def __init__(self, desc: str = "bpeds", position: int | None = None) -> None:
        if importlib.util.find_spec("tqdm") is None:
            raise ImportError(
                "progress=True draws a tqdm bar, but tqdm is not installed: "
                "pip install 'bpeds[progress]' (or tqdm)"
            )
        self.desc, self.position = desc, position
        self._bar: Any = None

    def stage(self, label: str, total: int | None, unit: str) -> None:
        """Close the current bar and open one for stage ``label``."""
        self.close()
        tqdm = importlib.import_module("tqdm.auto").tqdm
        self._bar = tqdm(
            total=total,
            desc=f"{self.desc}: {label}",
            position=self.position,
            unit=unit if unit == "B" else f" {unit}",
            unit_scale=unit == "B",
            unit_divisor=1024 if unit == "B" else 1000,
            file=sys.stderr,
            leave=True,
        )

    def start(self, total: int) -> None:
        """Open the bar for ``total`` merges."""
        self.stage("merges", total, "merges")

    def update(self, n: int) -> None:
        """Advance the bar by ``n``."""
        if self._bar is not None:
            self._bar.update(n)

    def close(self) -> None:
        """Close the bar (idempotent)."""
        if self._bar is not None:
            self._bar.close()
            self._bar = None


class JobProgress:
    """What training reports, in stages, to a progress object (see the module docstring):
    every stage to a :class:`Staged` one, the merges alone to any other.

    >>> seen = []
    >>> class Plain:
    ...     def start(self, total): seen.append(("start", total))
    ...     def update(self, n): seen.append(("update", n))
    ...     def close(self): seen.append(("close",))
    >>> job = JobProgress(Plain())
    >>> _ = list(job.read(["some text"], 9)); job.pairs(2); job.merged(); job.merged(); job.close()
    >>> seen
    [('start', 2), ('update', 1), ('update', 1), ('close',)]
    """

    #: Bytes read between two updates of the reading stage.
    EVERY = 1 << 20

    def __init__(self, progress: Progress, prefix: str = "") -> None:
        self.progress = progress
        self.staged = isinstance(progress, Staged)
        self.prefix = prefix
        self._total = 0
        self._merging = False

    def _stage(self, label: str, total: int | None, unit: str) -> None:
        assert isinstance(self.progress, Staged)
        self.progress.stage(self.prefix + label, total, unit)

    def read(self, texts: Iterable[str], total: int | None) -> Iterator[str]:
        """``texts`` passed on, their UTF-8 bytes reported as the reading stage (out of
        ``total``, the data's size when known). O(text) when shown, else nothing."""
        if not self.staged:
            yield from texts
            return
        self._stage("reading", total, "B")
        pending = 0
        for text in texts:
            pending += len(text) if text.isascii() else len(text.encode("utf-8", "replace"))
            if pending >= self.EVERY:
                self.progress.update(pending)
                pending = 0
            yield text
        if pending:
            self.progress.update(pending)

    def pairs(self, total: int) -> None:
        """The merge loop starts (its first step counts every pair) and will make up to
        ``total`` merges."""
        self._total = total
        if self.staged:
            self._stage("counting pairs", None, "steps")
        else:
            self.progress.start(total)

    def merged(self) -> None:
        """One more merge (the first opens the merges stage)."""
        if self.staged and not self._merging:
            self._merging = True
            self._stage("merges", self._total, "merges")
        self.progress.update(1)

    def close(self) -> None:
        """The run is over (or failed)."""
        self.progress.close()


def in_notebook() -> bool:
    """Whether this process is a Jupyter kernel (where tqdm draws a widget)."""
    shell = sys.modules.get("IPython")
    if shell is None or "ipykernel" not in sys.modules:
        return False
    try:
        ip = shell.get_ipython()
    except AttributeError:  # pragma: no cover - an IPython without get_ipython
        return False
    return ip is not None and type(ip).__name__ == "ZMQInteractiveShell"


def _stderr_is_tty() -> bool:
    try:
        return sys.stderr is not None and sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def resolve_progress(progress: bool | Progress | None) -> Progress:
    """The progress object for ``progress=``.

    ``None`` (default): tqdm bars if tqdm is installed and stderr is a
    terminal or this is a Jupyter notebook (a widget there), else silent.
    ``True``: tqdm bars (``ImportError`` naming the
    extra if tqdm is missing). ``False``: silent. An object with ``start``,
    ``update`` and ``close``: itself. Anything else: ``TypeError``.

    >>> type(resolve_progress(False)).__name__
    'NullProgress'
    """
    if progress is None:
        if (_stderr_is_tty() or in_notebook()) and importlib.util.find_spec("tqdm") is not None:
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
