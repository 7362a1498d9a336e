"""Worker processes that end with the process that started them.

bpeds starts worker processes to count pieces (:mod:`bpeds.tokenizer.pieces`), to
encode batches (:meth:`bpeds.Tokenizer.encode_batch`) and to train a comparison's
configurations (:func:`bpeds.compare`). If the process that started them is killed
(``SIGKILL``, or ``SIGTERM`` without a handler), nothing tells a worker to stop, and
it would go on computing, holding its memory, for as long as its task takes.
:func:`worker_started`, called first thing in each worker, prevents that: on Linux
the kernel sends the worker ``SIGKILL`` when its parent ends
(``prctl(PR_SET_PDEATHSIG)``); elsewhere a thread of the worker checks its parent
once a second and ends it when the parent is gone. It also leaves Ctrl-C to the
parent: the terminal sends ``SIGINT`` to every process of the foreground group, and
workers that each raised ``KeyboardInterrupt`` would print a traceback apiece; the
parent alone stops, and stops them.

The other way round, workers can end before their work does: killed, out of memory,
a Dask cluster that loses its workers or closes. :func:`reporting_lost_workers` turns
what the executor then raises (``BrokenProcessPool``, Dask's ``KilledWorker``, a
cancelled future) into one :class:`WorkersLostError` that says so.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from bpeds.errors import BpedsError

__all__ = ["WorkersLostError", "reporting_lost_workers", "worker_started"]

#: How often, in seconds, a worker without ``PR_SET_PDEATHSIG`` checks for its parent.
POLL_SECONDS = 1.0
_PR_SET_PDEATHSIG = 1  # from <linux/prctl.h>


def _kill_me_with_parent() -> bool:
    """Ask Linux to send this process ``SIGKILL`` when its parent ends; whether it did."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):  # pragma: no cover - no libc prctl
        return False


def _watch(parent: int) -> None:  # pragma: no cover - only where prctl is missing
    while os.getppid() == parent:
        time.sleep(POLL_SECONDS)
    os._exit(1)


def worker_started(parent: int) -> None:
    """Make this worker process end when ``parent`` (the pid of the process that
    started it) ends, and ignore Ctrl-C (``SIGINT``), which the parent handles.

    Call it first in the worker (a ``ProcessPoolExecutor``'s ``initializer``,
    or the target of a ``multiprocessing.Process``), from its main thread.
    If the parent is already gone, the worker ends at once. O(1).
    """
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    if not _kill_me_with_parent():  # pragma: no cover - not Linux
        threading.Thread(target=_watch, args=(parent,), daemon=True).start()
    if os.getppid() != parent:  # the parent ended before the kernel was asked
        os._exit(1)


class WorkersLostError(BpedsError, RuntimeError):
    """The processes or cluster workers doing a job ended before it was done (killed, out
    of memory, a cluster that lost its workers or was closed): the data is not at fault.
    The executor's own exception is chained (``__cause__``)."""


# Dask's (distributed's) errors for lost workers, known by name: bpeds never imports Dask
# unless given a Dask object.
_LOST_BY_NAME = frozenset({"KilledWorker", "CommClosedError"})


def _lost(exc: BaseException) -> bool:
    return isinstance(
        exc,
        concurrent.futures.CancelledError
        | concurrent.futures.BrokenExecutor
        | asyncio.CancelledError,
    ) or any(t.__name__ in _LOST_BY_NAME for t in type(exc).__mro__)


@contextmanager
def reporting_lost_workers(what: str) -> Iterator[None]:
    """Run the block; if the executor it uses lost its workers, raise
    :class:`WorkersLostError` naming ``what`` (``"the worker processes"``, ``"the Dask
    cluster"``) instead of the executor's exception. Other exceptions (a task's own
    error, say) pass unchanged.

    >>> with reporting_lost_workers("the pool"):
    ...     raise concurrent.futures.BrokenExecutor("a process died")
    Traceback (most recent call last):
    ...
    bpeds.processes.WorkersLostError: the pool stopped before the work was done ...
    """
    try:
        yield
    except BaseException as exc:
        if not _lost(exc):
            raise
        raise WorkersLostError(
            f"{what} stopped before the work was done ({type(exc).__name__}: "
            f"{str(exc)[:200] or 'cancelled'}): workers were killed, ran out of memory or "
            "the cluster closed; the data is not at fault and nothing was written, so run "
            "it again"
        ) from exc
