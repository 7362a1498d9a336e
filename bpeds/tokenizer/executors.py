"""Counting as tasks: one per file and one per run of texts, for an ``Executor`` or Dask.

:func:`bpeds.count` with ``executor=`` cuts the data into :func:`tasks` (each file
is read where its task runs; consecutive ``str`` units travel in runs of about
:data:`~bpeds.tokenizer.pieces.BATCH_CHARS` characters) and adds the partial
counts in task order (:func:`on_executor`), so the result is what counting one
unit after the other gives. On a ``distributed.Client`` the adding happens on
the cluster (:mod:`bpeds.tokenizer._dask`, imported only then).

Not handled here: the arguments' checks and the memory budget
(:mod:`bpeds.tokenizer.counting`).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Executor, Future
from typing import Any

from bpeds.tokenizer import pieces
from bpeds.tokenizer.counts import Counts, SpillCounter
from bpeds.tokenizer.io import InvalidTextError, check_errors, iter_segments, iter_units

__all__ = [
    "TREE_FANIN",
    "Task",
    "count_file",
    "count_partition",
    "is_dask_bag",
    "is_dask_client",
    "on_executor",
    "tasks",
]

#: Partial counts added by one task of a tree reduction on a Dask cluster.
TREE_FANIN = 4

#: A task: a function returning counts, and its arguments.
Task = tuple[Callable[..., Counts], tuple[Any, ...]]


def _count_data(
    data: object,
    source: str | None,
    specials: tuple[str, ...],
    errors: str,
    block_size: int,
    unicode: str | None = None,
) -> Counts:
    """The counts of ``data`` (any unit :func:`bpeds.tokenizer.io.iter_segments` reads), the
    pattern's classes read with ``unicode``'s tables."""
    segments = iter_segments(
        data,
        pattern=source,
        special_tokens=specials,
        errors=check_errors(errors),
        block_size=block_size,
    )
    counted = pieces.count_pieces(segments, source, unicode=unicode)
    assert isinstance(counted, dict)
    return Counts._trusted(counted, source, specials, unicode)


def count_file(
    path: os.PathLike[str],
    source: str | None,
    specials: tuple[str, ...],
    errors: str,
    block_size: int,
    unicode: str | None = None,
) -> Counts:
    """The counts of one file (a task: runs where the executor puts it, reads the file there)."""
    return _count_data(path, source, specials, errors, block_size, unicode)


def _count_texts(
    texts: list[str],
    first: int,
    source: str | None,
    specials: tuple[str, ...],
    errors: str,
    block_size: int,
    unicode: str | None = None,
) -> Counts:
    """The counts of consecutive ``str`` units, the first of them item ``first`` of the data."""
    try:
        return _count_data(texts, source, specials, errors, block_size, unicode)
    except InvalidTextError as exc:
        if not isinstance(exc.source, int) or not first:
            raise
        index = exc.source + first
        message = str(exc).replace(f"item {exc.source} ", f"item {index} ", 1)
        raise InvalidTextError(message, index, exc.offset) from None


def count_partition(
    items: Iterable[object],
    source: str | None,
    specials: tuple[str, ...],
    errors: str,
    block_size: int,
    unicode: str | None = None,
) -> Counts:
    """The counts of one partition of a ``dask.bag`` (texts and paths, one unit each)."""
    return _count_data(list(items), source, specials, errors, block_size, unicode)


def tasks(
    data: object,
    source: str | None,
    specials: tuple[str, ...],
    errors: str,
    block_size: int,
    unicode: str | None = None,
) -> Iterator[Task]:
    """One task per file, one per run of consecutive ``str`` units of about ``BATCH_CHARS``."""
    texts: list[str] = []
    first = chars = 0
    for index, unit in enumerate(iter_units(data)):
        if isinstance(unit, str):
            if texts and chars + len(unit) > pieces.BATCH_CHARS:
                yield _count_texts, (texts, first, source, specials, errors, block_size, unicode)
                texts, chars = [], 0
            if not texts:
                first = index
            texts.append(unit)
            chars += len(unit)
            continue
        if texts:
            yield _count_texts, (texts, first, source, specials, errors, block_size, unicode)
            texts, chars = [], 0
        yield count_file, (unit, source, specials, errors, block_size, unicode)
    if texts:
        yield _count_texts, (texts, first, source, specials, errors, block_size, unicode)


def is_dask_client(executor: object) -> bool:
    """Whether ``executor`` is a ``distributed.Client`` (told by its type, without importing
    Dask)."""
    kind = type(executor)
    return kind.__module__.split(".")[0] == "distributed" and kind.__name__ == "Client"


def is_dask_bag(data: object) -> bool:
    """Whether ``data`` is a ``dask.bag.Bag`` (told by its type, without importing Dask)."""
    kind = type(data)
    return kind.__module__.startswith("dask.bag") and kind.__name__ == "Bag"


def on_executor(executor: Executor, todo: Iterator[Task], sink: SpillCounter) -> None:
    """Run the tasks on ``executor``, a bounded window at a time, adding results in order."""
    width = getattr(executor, "_max_workers", None)
    window_size = 2 * width if isinstance(width, int) and width > 0 else 32
    window: deque[Future[Counts]] = deque()
    try:
        for fn, args in todo:
            window.append(executor.submit(fn, *args))
            if len(window) >= window_size:
                sink.add(window.popleft().result()._pieces)
        while window:
            sink.add(window.popleft().result()._pieces)
    finally:
        for f in window:
            f.cancel()
