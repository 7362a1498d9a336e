"""Counts as an artefact: :func:`count` and :func:`count_to_file`, here, on an Executor or on Dask.

:func:`count` splits and counts data exactly as training does and returns
:class:`~bpeds.tokenizer.counts.Counts`, which ``bpeds.train`` trains on with the
same merges as on the text; :func:`count_to_file` writes them as a counts file
without holding them all (a memory budget) and can resume an interrupted
count. Where the work runs: local processes (:mod:`bpeds.tokenizer.pieces`),
tasks on a ``concurrent.futures.Executor`` (:mod:`bpeds.tokenizer.executors`)
or a Dask cluster (:mod:`bpeds.tokenizer._dask`, imported only for a Dask
object). The result is the same everywhere, order of first appearance included.

Not handled here: training (:mod:`bpeds.tokenizer.trainer`).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from concurrent.futures import Executor, as_completed
from pathlib import Path
from typing import Any

from bpeds.processes import reporting_lost_workers
from bpeds.tokenizer import executors, pieces
from bpeds.tokenizer.counts import Counts, CountsFormatError, SpillCounter, iter_blocks
from bpeds.tokenizer.files import check_targets
from bpeds.tokenizer.io import (
    DEFAULT_BLOCK_SIZE,
    check_data,
    check_errors,
    check_int,
    data_size,
    iter_segments,
    iter_units,
    refuse_file_names,
)
from bpeds.tokenizer.pretokenize import resolve_pattern
from bpeds.tokenizer.progress import JobProgress, NullProgress, Progress, resolve_progress
from bpeds.tokenizer.special import check_special_texts, special_list

__all__ = ["OnFile", "count", "count_to_file"]

#: Called by :func:`count_to_file` with ``resume_dir`` as each file is counted:
#: ``(path, bytes of the file, whether it was counted before and skipped)``.
OnFile = Callable[[Path, int, bool], None]


class _Plan:
    """The checked arguments of :func:`count` and :func:`count_to_file`."""

    def __init__(
        self,
        data: object,
        pattern: str | None,
        special_tokens: Iterable[str],
        workers: int | None,
        executor: object,
        errors: str,
        block_size: int,
        max_memory: int | None,
        min_count: int,
    ) -> None:
        self.source, _ = resolve_pattern(pattern)
        self.unicode: str | None = None
        self.specials = tuple(check_special_texts(special_list(special_tokens)))
        self.workers = (
            1 if executor is not None and workers is None else pieces.check_workers(workers)
        )
        self.errors = check_errors(errors)
        self.block_size = check_int(block_size, "block_size", 1)
        self.min_count = check_int(min_count, "min_count", 1)
        self.max_memory = None if max_memory is None else check_int(max_memory, "max_memory", 1)
        if executor is not None and workers not in (None, 1):
            raise ValueError("give either workers= (local processes) or executor=, not both")
        if executor is not None and not (
            isinstance(executor, Executor) or executors.is_dask_client(executor)
        ):
            raise TypeError(
                "executor must be a concurrent.futures.Executor or a distributed.Client, got "
                f"{type(executor).__name__}"
            )
        self.executor = executor
        self.bag = executors.is_dask_bag(data)
        if self.bag:
            if executor is not None and not executors.is_dask_client(executor):
                raise TypeError(
                    "a dask.bag is computed by Dask: give a distributed.Client as executor, or none"
                )
            if max_memory is not None:
                raise ValueError(
                    "a dask.bag is added up by Dask's own reduction, which max_memory cannot "
                    "bound: give the files or texts instead"
                )
        else:
            if isinstance(data, Mapping):
                raise TypeError(
                    "count takes one group's data; count each group on its own and train on "
                    "{group name: counts}"
                )
            check_data(data)
        self.data = data
        self.job = JobProgress(NullProgress())  # (count's progress= sets it)

    def tables(self, unicode: str | None) -> _Plan:
        """This plan, its pattern's classes read with ``unicode``'s tables (checked as
        :func:`~bpeds.tokenizer.pretokenize.resolve_pattern` checks them)."""
        resolve_pattern(self.source, unicode)
        self.unicode = None if self.source is None else unicode
        return self

    @property
    def reading(self) -> executors.Reading:
        """How each counting task reads the data (the plan's reading options)."""
        return executors.Reading(
            self.source, self.specials, self.errors, self.block_size, self.unicode
        )

    def who(self) -> str:
        """What does the work, for messages: the Dask cluster, the executor, or processes."""
        if self.bag or executors.is_dask_client(self.executor):
            return "the Dask cluster"
        return "the executor" if self.executor is not None else "the worker processes"

    def empty(self) -> Counts:
        return Counts._trusted({}, self.source, self.specials, self.unicode)

    def feed(self, sink: SpillCounter, data: object = None) -> None:
        """Count the data (or ``data``, a list of the data's files) into ``sink``, in order,
        where the arguments say."""
        data = self.data if data is None else data
        if self.executor is None:
            # Under a budget, the text read at a time and a batch's own tables (up to ~15
            # bytes per character of text without repeats, twice) are kept to a small share.
            size = pieces.BATCH_CHARS if self.max_memory is None else self.max_memory // 64
            size = max(1 << 16, min(pieces.BATCH_CHARS, size))
            segments = iter_segments(
                data,
                pattern=self.source,
                special_tokens=self.specials,
                errors=self.errors,
                block_size=self.block_size
                if self.max_memory is None
                else min(self.block_size, size),
            )
            segments = self.job.read(segments, data_size(data))
            for part in pieces.batch_results(
                segments, self.source, False, self.workers, size, self.unicode
            ):
                sink.add(part)
            return
        todo = executors.tasks(data, self.reading)
        executor: Any = self.executor
        executors.on_executor(
            executor.get_executor() if executors.is_dask_client(executor) else executor, todo, sink
        )


def count(
    data: object,
    *,
    pattern: str | None = "gpt4",
    special_tokens: Iterable[str] = (),
    workers: int | None = None,
    executor: object = None,
    errors: str = "strict",
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_memory: int | None = None,
    min_count: int = 1,
    spill_dir: str | os.PathLike[str] | None = None,
    progress: bool | Progress | None = None,
    unicode: str | None = None,
) -> Counts:
    """Count the pieces of ``data`` as :func:`bpeds.train` does, and return them as
    :class:`~bpeds.tokenizer.counts.Counts`.

    >>> c = count(["low lower", "lowest"], pattern="gpt2")
    >>> list(c.items())
    [('low', 1), (' lower', 1), ('lowest', 1)]
    >>> import bpeds
    >>> tok = bpeds.train(c, 259)
    >>> [tok.token_bytes(i) for i in range(256, 259)]
    [b'lo', b'low', b'lowe']

    ``train(count(data, ...), vocab_size, ...)`` gives exactly the merges of
    ``train(data, vocab_size, ...)`` (type mode), and the counts can be
    saved (:meth:`Counts.save`), loaded and added (``a + b``: counting
    ``a``'s data then ``b``'s) in between.

    ``data``: as for :func:`bpeds.train` (a ``str``, a path, or an iterable of
    them; a mapping of groups is refused: count each group, then train on
    ``{name: counts}``), or a ``dask.bag.Bag`` of texts and paths (one unit
    each; counted partition by partition, reduced in a tree by Dask).
    ``pattern``, ``unicode`` (the Unicode tables the pattern reads; ``"16.0"`` for counts
    that train the ``hf`` and ``rustbpe`` presets on text where the tables differ),
    ``special_tokens`` (the texts cut out), ``errors``, ``block_size``: as for
    :func:`bpeds.train`. Files named ``.gz``, ``.bz2``,
    ``.xz`` (and ``.zst`` with the ``zstandard`` package) are decompressed;
    each row of a ``.parquet`` file's ``text`` (else ``content``) column is
    a unit (with ``pyarrow``; see :func:`bpeds.tokenizer.io.parquet_texts`).

    Where the work runs: ``workers=N`` splits and counts in ``N`` local
    processes (the parent reads the files; default: the cores available, as
    for :func:`bpeds.train`). ``executor``: any
    ``concurrent.futures.Executor`` (a process pool, Dask's
    ``client.get_executor()``) or a ``distributed.Client``; each file is one
    task and is read where the task runs (so the path must be readable
    there), and runs of ``str`` items are sent as tasks of about a million
    characters. On an ``Executor`` the partial counts come back in order and
    are added here, a bounded window of tasks in flight; on a ``Client``
    they are added on the cluster, ``TREE_FANIN`` at a time in a tree (see
    :mod:`bpeds.tokenizer.executors`), so that only the final counts come
    back (with ``max_memory``, a ``Client`` is used as its executor instead,
    so that the budget holds here). Give
    ``workers`` or ``executor``, not both. The result is the same in every
    case, order of first appearance included.

    ``max_memory`` (bytes): the table being counted is kept under this
    budget by spilling sorted runs to disk (in ``spill_dir``, default the
    system's temporary directory) and merging them exactly at the end (see
    :class:`~bpeds.tokenizer.counts.SpillCounter`); the returned counts are then built
    in memory, so to bound memory end to end write them with
    :func:`count_to_file`. ``min_count``: leave out pieces counted fewer
    times in all (their exact totals are added first). This is the one
    approximation offered: training on such counts never sees the pairs
    inside the dropped pieces, so merges whose counts those pairs made up
    can change order or disappear; the default keeps every piece.

    ``progress``: the bytes read, as a ``reading`` stage (see
    :mod:`bpeds.tokenizer.progress`; ``None``: a bar when stderr is a terminal or in a
    notebook). Counting on an executor or a Dask bag reports nothing.

    Errors: as :func:`bpeds.train` (checked before any data is read); an error in
    a task (an unreadable file, invalid UTF-8) is raised here, as it would be
    locally, naming the file.

    Complexity: O(total text) work; memory here O(distinct pieces), or about
    ``max_memory`` while counting.
    """
    plan = _Plan(
        data, pattern, special_tokens, workers, executor, errors, block_size, max_memory, min_count
    ).tables(unicode)
    plan.job = JobProgress(resolve_progress(progress))
    if not plan.bag:
        refuse_file_names(data)
    with reporting_lost_workers(plan.who()):
        if plan.bag:
            from bpeds.tokenizer import _dask

            got = _dask.count_bag(
                data, executors.count_partition, plan.reading, executor, executors.TREE_FANIN
            )
            return _at_least(got or plan.empty(), plan.min_count)
        if executors.is_dask_client(executor) and max_memory is None:
            from bpeds.tokenizer import _dask

            todo = executors.tasks(data, plan.reading)
            got = _dask.count_on_client(executor, todo, executors.TREE_FANIN)
            return _at_least(got or plan.empty(), plan.min_count)
        with SpillCounter(max_memory or sys.maxsize, spill_dir) as sink:
            try:
                plan.feed(sink)
            finally:
                plan.job.close()
            return sink.counts(plan.source, plan.specials, plan.min_count, plan.unicode)


def count_to_file(
    data: object,
    path: str | os.PathLike[str],
    *,
    overwrite: bool = False,
    pattern: str | None = "gpt4",
    special_tokens: Iterable[str] = (),
    workers: int | None = None,
    executor: object = None,
    errors: str = "strict",
    block_size: int = DEFAULT_BLOCK_SIZE,
    max_memory: int | None = None,
    min_count: int = 1,
    spill_dir: str | os.PathLike[str] | None = None,
    resume_dir: str | os.PathLike[str] | None = None,
    on_file: OnFile | None = None,
    unicode: str | None = None,
) -> tuple[int, int]:
    """Count ``data`` as :func:`count` does and write the counts file at ``path``.

    With ``max_memory`` the whole table is never held: counting spills
    sorted runs, and writing merges them and sorts them back into order of
    first appearance on disk (see :meth:`~bpeds.tokenizer.counts.SpillCounter.save`).
    The file is what ``count(data, ...).save(path)`` writes. ``path`` is
    checked first (``FileExistsError`` unless ``overwrite``; a missing
    directory ``FileNotFoundError``). A ``dask.bag`` is refused here (its
    reduction returns one table). Returns ``(distinct pieces, total)``.

    ``resume_dir`` (an existing directory) makes a long count resumable: each
    file's counts are saved there as a part file as soon as it is counted
    (under ``max_memory`` too), named by a digest of the file's resolved
    path, size and modification time and of the pattern, special tokens and
    ``errors``; a run that finds a file's part, complete and counted with
    this run's pattern and special tokens, skips the file. A part that is
    not (cut short by a crash, empty, corrupt, made another way) is counted
    again and replaced. Interrupted, the same call again counts only the
    files not done yet. The parts are added in the files' order (so the
    result is the same), block by block under ``max_memory``, and deleted
    once the output is written; runs may share a directory (a part another
    run has deleted meanwhile is counted again). ``data`` must then be paths
    only. ``on_file(path, size, skipped)`` is called as each file is done
    (for progress).
    """
    plan = _Plan(
        data, pattern, special_tokens, workers, executor, errors, block_size, max_memory, min_count
    ).tables(unicode)
    if plan.bag:
        raise TypeError("count_to_file reads files and texts: count a dask.bag with count()")
    check_targets([path], overwrite=overwrite)
    refuse_file_names(data)
    with (
        reporting_lost_workers(plan.who()),
        SpillCounter(max_memory or sys.maxsize, spill_dir) as sink,
    ):
        if resume_dir is None:
            plan.feed(sink)
        else:
            parts = _resumable(plan, Path(resume_dir), on_file, spill_dir)
            for f, part in parts:
                _add_part(plan, sink, f, part)
        written = sink.save(
            path,
            plan.source,
            plan.specials,
            overwrite=overwrite,
            min_count=plan.min_count,
            unicode=plan.unicode,
        )
    if resume_dir is not None:
        for _, part in parts:
            part.unlink(missing_ok=True)
    return written


def _part_name(path: Path, plan: _Plan) -> str:
    """The part file of ``path`` in a resume directory: a digest of the file's identity
    (resolved path, size, modification time) and of how it is counted."""
    st = path.stat()
    how = [plan.source, plan.specials, plan.errors]
    if plan.unicode is not None:  # (names of parts counted with the regex tables unchanged)
        how.append(plan.unicode)
    key = json.dumps([str(path.resolve()), st.st_size, st.st_mtime_ns, *how])
    return "part-" + hashlib.sha256(key.encode()).hexdigest()[:32] + ".counts"


def _part_done(part: Path, plan: _Plan) -> bool:
    """Whether ``part`` holds a file's counts, complete and counted as ``plan`` counts
    (read through once, a block at a time)."""
    try:
        for _ in iter_blocks(part, (plan.source, plan.specials)):
            pass
    except (FileNotFoundError, CountsFormatError):
        return False
    return True


def _add_part(plan: _Plan, sink: SpillCounter, f: Path, part: Path) -> None:
    """Add the counts of ``f`` from its part to ``sink``, a block at a time; if the part is
    gone (a run sharing the directory finished and deleted it), count ``f`` again."""
    blocks = iter_blocks(part, (plan.source, plan.specials))
    try:
        first = next(blocks, None)  # the part is open from here on
    except FileNotFoundError:
        plan.feed(sink, [f])
        return
    if first is not None:
        sink.add(first)
        for table in blocks:
            sink.add(table)


def _resumable(
    plan: _Plan, folder: Path, on_file: OnFile | None, spill_dir: str | os.PathLike[str] | None
) -> list[tuple[Path, Path]]:
    """Count each file of ``plan`` into its own part file in ``folder``, skipping files
    whose part is there and complete; each file with its part, in the files' order."""
    if not folder.is_dir():
        raise FileNotFoundError(f"resume directory {folder} does not exist: create it first")
    files: list[Path] = []
    for unit in iter_units(plan.data):
        if isinstance(unit, str):
            raise TypeError("resume_dir counts files one by one: give paths only, not texts")
        files.append(Path(unit))
    parts = [(f, folder / _part_name(f, plan)) for f in files]

    def done(f: Path, skipped: bool) -> None:
        if on_file is not None:
            on_file(f, f.stat().st_size, skipped)

    todo = []
    for f, part in parts:
        if _part_done(part, plan):
            done(f, True)
        else:
            todo.append((f, part))
    if plan.executor is None:
        for f, part in todo:
            with SpillCounter(plan.max_memory or sys.maxsize, spill_dir) as sink:
                plan.feed(sink, [f])
                sink.save(part, plan.source, plan.specials, overwrite=True, unicode=plan.unicode)
            done(f, False)
        return parts
    executor: Any = plan.executor
    if executors.is_dask_client(executor):
        executor = executor.get_executor()
    reading = plan.reading
    futures = {executor.submit(executors.count_file, f, reading): (f, part) for f, part in todo}
    try:
        for future in as_completed(futures):
            f, part = futures[future]
            future.result().save(part, overwrite=True)
            done(f, False)
    finally:
        for future in futures:
            future.cancel()
    return parts


def _at_least(c: Counts, min_count: int) -> Counts:
    if min_count == 1:
        return c
    kept = {p: n for p, n in c.items() if n >= min_count}
    return Counts._trusted(kept, c.pattern, c.special_tokens, c.unicode)
