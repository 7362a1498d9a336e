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
from dataclasses import dataclass
from typing import Any

from bpeds.tokenizer import pieces
from bpeds.tokenizer.counts import Counts, SpillCounter
from bpeds.tokenizer.io import InvalidTextError, check_errors, iter_segments, iter_units

__all__ = [
    "TREE_FANIN",
    "Reading",
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


@dataclass(frozen=True)
class Reading:
    """How a counting task reads its data: the pattern's source, the special tokens, the
    decoding ``errors``, the block size, and the Unicode tables the pattern's classes are
    read with. Travels with every task (it pickles)."""

    source: str | None
    specials: tuple[str, ...]
    errors: str
    block_size: int
    unicode: str | None = None

    def count(self, data: object) -> Counts:
        """The counts of ``data`` (any unit :func:`bpeds.tokenizer.io.iter_segments`
        reads). O(length of the data)."""
        segments = iter_segments(
            data,
            pattern=self.source,
            special_tokens=self.specials,
            errors=check_errors(self.errors),
            block_size=self.block_size,
        )
        counted = pieces.count_pieces(segments, self.source, unicode=self.unicode)
        assert isinstance(counted, dict)
        return Counts._trusted(counted, self.source, self.specials, self.unicode)


def count_file(path: os.PathLike[str], reading: Reading) -> Counts:
    """The counts of one file (a task: runs where the executor puts it, reads the file there)."""
    return reading.count(path)


def _count_texts(texts: list[str], first: int, reading: Reading) -> Counts:
    """The counts of consecutive ``str`` units, the first of them item ``first`` of the data."""
    try:
        return reading.count(texts)
    except InvalidTextError as exc:
        if not isinstance(exc.source, int) or not first:
            raise
        index = exc.source + first
        message = str(exc).replace(f"item {exc.source} ", f"item {index} ", 1)
        raise InvalidTextError(message, index, exc.offset) from None


def count_partition(items: Iterable[object], reading: Reading) -> Counts:
    """The counts of one partition of a ``dask.bag`` (texts and paths, one unit each)."""
    return reading.count(list(items))


def tasks(data: object, reading: Reading) -> Iterator[Task]:
    """One task per file, one per run of consecutive ``str`` units of about ``BATCH_CHARS``."""
    texts: list[str] = []
    first = chars = 0
    for index, unit in enumerate(iter_units(data)):
        if isinstance(unit, str):
            if texts and chars + len(unit) > pieces.BATCH_CHARS:
                yield _count_texts, (texts, first, reading)
                texts, chars = [], 0
            if not texts:
                first = index
            texts.append(unit)
            chars += len(unit)
            continue
        if texts:
            yield _count_texts, (texts, first, reading)
            texts, chars = [], 0
        yield count_file, (unit, reading)
    if texts:
        yield _count_texts, (texts, first, reading)


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
