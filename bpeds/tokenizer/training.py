"""Training a :class:`~bpeds.tokenizer.Tokenizer` from text, iterables or files.

:func:`train` reads the data as units (see :mod:`bpeds.tokenizer.io`: each ``str`` item
and each file is one unit the pattern sees on its own; special-token text is
cut out), splits it with the pattern, counts the pieces (type mode) or keeps
them in order (sequence mode), and runs :class:`~bpeds.driver.MergeDriver`
for ``vocab_size - 256 - len(special_tokens)`` merges.

Parity (tested): ``preset="rustbpe"`` gives rustbpe's merges,
``preset="hf"`` Hugging Face ``BpeTrainer``'s (ByteLevel, no prefix space,
full byte alphabet), ``preset="minbpe-basic"``/``"minbpe-regex"`` minbpe's.

**Groups.** ``data`` may be a mapping ``{group name: data}`` (a language per
group, say): each group is read and counted on its own and its pieces keep
their group, which per-group scores (``needs_groups``, such as
``GroupFrequency``) read. Such a score refuses data of one group, which would
make it do plain frequency's work at several times its cost.

``workers > 1`` (by default, the cores available) splits and counts batches of text
in processes and merges the per-batch counts in batch order, so the types'
first-appearance order (which the ``leftmost`` tie rule reads) and hence the
merges are the same as with ``workers=1``.

Not handled here: the merge algorithm itself (:mod:`bpeds.driver`), encoding.
"""

from __future__ import annotations

import enum
import hashlib
import itertools
import json
import os
import sys
import warnings
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator, Mapping
from concurrent.futures import Executor, Future, ProcessPoolExecutor, as_completed
from functools import partial
from itertools import pairwise
from pathlib import Path
from typing import Any

from bpeds._gc import gc_paused
from bpeds.corpus import Corpus, SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver, MergeRecord, MultisetFactory
from bpeds.scoring.base import Score
from bpeds.scoring.registry import describe_score, get_score
from bpeds.scoring.ties import TieRule, tie_rule
from bpeds.tokenizer.core import Tokenizer
from bpeds.tokenizer.counts import Counts, SpillCounter
from bpeds.tokenizer.encoder import bpe
from bpeds.tokenizer.fastsplit import fast_findall, splitter
from bpeds.tokenizer.files import check_targets
from bpeds.tokenizer.io import (
    DEFAULT_BLOCK_SIZE,
    InvalidTextError,
    check_block_size,
    check_data,
    check_errors,
    iter_segments,
    iter_units,
)
from bpeds.tokenizer.pattern_safety import check_coverage
from bpeds.tokenizer.pretokenize import PATTERNS, _compiled, resolve_pattern, segmenter
from bpeds.tokenizer.progress import Progress, resolve_progress
from bpeds.tokenizer.special import check_special_ids, check_special_texts
from bpeds.variants import Variant, get_variant
from bpeds.vocab import BYTE_TOKENS, Vocab

__all__ = ["PRESETS", "available_cores", "count", "count_pieces", "count_to_file", "train"]

#: What each preset sets. An argument not given takes the preset's value; an
#: argument given a different value is an error (even the usual default's).
PRESETS: dict[str, dict[str, Any]] = {
    "minbpe-basic": {"pattern": None, "representation": "sequence", "tie": "leftmost"},
    "minbpe-regex": {"pattern": "gpt4", "representation": "sequence", "tie": "leftmost"},
    "hf": {"pattern": "gpt2", "representation": "type", "tie": "hf"},
    "rustbpe": {"pattern": "gpt4", "representation": "type", "tie": "smallest_ids"},
}


class _Default(enum.Enum):
    """The default of an argument a preset sets: the preset's value, else the one held here.

    A distinct object, so that an argument passed explicitly (even with the
    usual default's value) is told apart from one left out.
    """

    PATTERN = "gpt4"
    REPRESENTATION = "type"
    TIE = "smallest_ids"

    def __repr__(self) -> str:
        return f"<the preset's, else {self.value!r}>"


#: Characters of text per batch handed to a worker.
BATCH_CHARS = 1 << 20
#: Texts from this many characters on are counted by
#: :meth:`bpeds.tokenizer.pretokenize.Segmenter.count` (built-in patterns only, where the
#: ASCII fast path of :mod:`bpeds.tokenizer.fastsplit` does not apply: it is faster): the
#: same counts in the same order, ~1.1-1.3x faster on English.
SEGMENT_MIN_CHARS = 1 << 12

OnMerge = Callable[[MergeRecord, bytes], None]
_OWN_PATTERNS = frozenset(PATTERNS.values())

# -- counting (runs in workers too) --------------------------------------------------------


def _findall(source: str | None) -> Callable[[str], list[str]] | None:
    """``findall`` of the pattern (with the exact ASCII fast path of
    :mod:`bpeds.tokenizer.fastsplit`); for a pattern not of bpeds's own (which match every
    character), one that refuses text the pattern leaves unmatched (see
    :func:`bpeds.tokenizer.pattern_safety.check_coverage`)."""
    if source is None:
        return None
    findall = fast_findall(_compiled(source))
    if source in _OWN_PATTERNS:
        return findall
    return partial(_covering_findall, findall, source)


def _covering_findall(findall: Callable[[str], list[str]], source: str, text: str) -> list[str]:
    return check_coverage(findall(text), text, source)


def _count_batch(texts: list[str], source: str | None, sequence: bool) -> Any:
    """Pieces of a batch: ``{piece: count}`` in first-appearance order, or the list.

    Texts are split by :func:`bpeds.tokenizer.fastsplit.fast_findall` (exactly the
    pattern's ``findall``). In type mode, a long text under a built-in pattern
    that the ASCII fast path does not apply to is counted by cutting it where
    cutting provably cannot change the split and splitting each distinct
    stretch once (:class:`bpeds.tokenizer.pretokenize.Segmenter`).
    """
    findall = _findall(source)
    if sequence:
        if findall is None:
            return list(texts)
        pieces: list[str] = []
        for t in texts:
            pieces += findall(t)
        return pieces
    counts: Counter[str] = Counter()
    if findall is None:
        counts.update(texts)
        return dict(counts)
    assert source is not None
    seg = segmenter(source)
    fast = splitter(_compiled(source))
    for t in texts:
        if seg is not None and len(t) >= SEGMENT_MIN_CHARS and not fast.applies(t):
            counts.update(seg.count(t))  # a mapping: added in its (first-appearance) order
        else:
            counts.update(findall(t))
    return dict(counts)


def _batches(texts: Iterable[str], size: int) -> Iterator[list[str]]:
    """Consecutive texts grouped into lists of at most ``size`` characters (a longer
    text alone): a worker's share stays near ``size``, which keeps the last ones even.

    >>> list(_batches(["ab", "cd", "efgh", "i"], 4))
    [['ab', 'cd'], ['efgh'], ['i']]
    """
    batch: list[str] = []
    chars = 0
    for t in texts:
        if batch and chars + len(t) > size:
            yield batch
            batch, chars = [], 0
        batch.append(t)
        chars += len(t)
    if batch:
        yield batch


def count_pieces(
    texts: Iterable[str],
    pattern: str | None,
    *,
    sequence: bool = False,
    workers: int = 1,
    batch_chars: int = BATCH_CHARS,
) -> dict[str, int] | list[str]:
    """Split every text with ``pattern`` (a regex source or ``None``) and collect the pieces.

    Type mode: ``{piece: count}`` in order of first appearance; sequence mode
    (``sequence=True``): every non-empty piece in order. The result is the same
    for any ``workers`` and ``batch_chars``.

    >>> count_pieces(["a b a", "b"], r"\\S+|\\s+")
    {'a': 2, ' ': 2, 'b': 2}

    Complexity: O(total text); memory O(distinct pieces) in type mode.
    """
    merged: dict[str, int] = {}
    ordered: list[str] = []

    def fold(result: Any) -> None:
        if sequence:
            ordered.extend(p for p in result if p)
        elif not merged:
            merged.update(result)
        else:
            get = merged.get
            for k, v in result.items():
                merged[k] = get(k, 0) + v

    for result in _batch_results(texts, pattern, sequence, workers, batch_chars):
        fold(result)
    if sequence:
        return ordered
    merged.pop("", None)
    return merged


def available_cores() -> int:
    """The cores this process may use: its CPU affinity, capped by a cgroup CPU quota
    (a container's ``--cpus``), at least 1.

    >>> available_cores() >= 1
    True
    """
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        cores = os.cpu_count() or 1
    quota = _cgroup_quota()
    if quota is not None:
        cores = min(cores, quota)
    return max(1, cores)


def _cgroup_quota() -> int | None:
    """``ceil(quota / period)`` of the cgroup v2 (``cpu.max``) or v1 CPU quota, if any."""
    root = Path("/sys/fs/cgroup")
    try:
        quota, period = (root / "cpu.max").read_text().split()[:2]
        return None if quota == "max" else max(1, -(-int(quota) // int(period)))
    except (OSError, ValueError):
        pass
    try:
        q = int((root / "cpu" / "cpu.cfs_quota_us").read_text())
        p = int((root / "cpu" / "cpu.cfs_period_us").read_text())
    except (OSError, ValueError):
        return None
    return max(1, -(-q // p)) if q > 0 and p > 0 else None


def _check_workers(workers: object) -> int:
    """``workers=None``: :func:`available_cores`; else an int >= 1."""
    return available_cores() if workers is None else _check_int(workers, "workers", 1)


def _batch_results(
    texts: Iterable[str], pattern: str | None, sequence: bool, workers: int, batch_chars: int
) -> Iterator[Any]:
    """:func:`_count_batch` of each batch of ``texts``, in batch order (in ``workers``
    processes, at most ``2 * workers`` batches in flight). Processes are started only
    when there is a second batch: text of one batch is counted here."""
    batches = _batches(texts, batch_chars)
    first = next(batches, None)
    second = next(batches, None) if first is not None else None
    if workers == 1 or second is None:
        for b in (first, second):
            if b is not None:
                yield _count_batch(b, pattern, sequence)
        for b in batches:
            yield _count_batch(b, pattern, sequence)
        return
    assert first is not None
    batches = itertools.chain((first, second), batches)
    with ProcessPoolExecutor(max_workers=workers) as ex:
        window: deque[Future[Any]] = deque()
        for b in batches:
            window.append(ex.submit(_count_batch, b, pattern, sequence))
            if len(window) >= 2 * workers:
                yield window.popleft().result()
        while window:
            yield window.popleft().result()


# -- counts as an artefact: bpeds.count, locally, on an Executor or on Dask -------------------

#: Partial counts added by one task of a tree reduction on a Dask cluster.
TREE_FANIN = 4

Task = tuple[Callable[..., Counts], tuple[Any, ...]]


def _counts_of(segments: Iterable[str], source: str | None, specials: tuple[str, ...]) -> Counts:
    pieces = count_pieces(segments, source)
    assert isinstance(pieces, dict)
    return Counts._trusted(pieces, source, specials)


def _count_data(
    data: object, source: str | None, specials: tuple[str, ...], errors: str, block_size: int
) -> Counts:
    """The counts of ``data`` (any unit :func:`bpeds.tokenizer.io.iter_segments` reads)."""
    segments = iter_segments(
        data,
        pattern=source,
        special_tokens=specials,
        errors=check_errors(errors),
        block_size=block_size,
    )
    return _counts_of(segments, source, specials)


def _count_file(
    path: os.PathLike[str],
    source: str | None,
    specials: tuple[str, ...],
    errors: str,
    block_size: int,
) -> Counts:
    """The counts of one file (a task: runs where the executor puts it, reads the file there)."""
    return _count_data(path, source, specials, errors, block_size)


def _count_texts(
    texts: list[str],
    first: int,
    source: str | None,
    specials: tuple[str, ...],
    errors: str,
    block_size: int,
) -> Counts:
    """The counts of consecutive ``str`` units, the first of them item ``first`` of the data."""
    try:
        return _count_data(texts, source, specials, errors, block_size)
    except InvalidTextError as exc:
        if not isinstance(exc.source, int) or not first:
            raise
        index = exc.source + first
        message = str(exc).replace(f"item {exc.source} ", f"item {index} ", 1)
        raise InvalidTextError(message, index, exc.offset) from None


def _count_partition(
    items: Iterable[object],
    source: str | None,
    specials: tuple[str, ...],
    errors: str,
    block_size: int,
) -> Counts:
    """The counts of one partition of a ``dask.bag`` (texts and paths, one unit each)."""
    return _count_data(list(items), source, specials, errors, block_size)


def _tasks(
    data: object, source: str | None, specials: tuple[str, ...], errors: str, block_size: int
) -> Iterator[Task]:
    """One task per file, one per run of consecutive ``str`` units of about ``BATCH_CHARS``."""
    texts: list[str] = []
    first = chars = 0
    for index, unit in enumerate(iter_units(data)):
        if isinstance(unit, str):
            if texts and chars + len(unit) > BATCH_CHARS:
                yield _count_texts, (texts, first, source, specials, errors, block_size)
                texts, chars = [], 0
            if not texts:
                first = index
            texts.append(unit)
            chars += len(unit)
            continue
        if texts:
            yield _count_texts, (texts, first, source, specials, errors, block_size)
            texts, chars = [], 0
        yield _count_file, (unit, source, specials, errors, block_size)
    if texts:
        yield _count_texts, (texts, first, source, specials, errors, block_size)


def _is_dask_client(executor: object) -> bool:
    kind = type(executor)
    return kind.__module__.split(".")[0] == "distributed" and kind.__name__ == "Client"


def _is_dask_bag(data: object) -> bool:
    kind = type(data)
    return kind.__module__.startswith("dask.bag") and kind.__name__ == "Bag"


def _on_executor(executor: Executor, tasks: Iterator[Task], sink: SpillCounter) -> None:
    """Run the tasks on ``executor``, a bounded window at a time, adding results in order."""
    width = getattr(executor, "_max_workers", None)
    window_size = 2 * width if isinstance(width, int) and width > 0 else 32
    window: deque[Future[Counts]] = deque()
    try:
        for fn, args in tasks:
            window.append(executor.submit(fn, *args))
            if len(window) >= window_size:
                sink.add(window.popleft().result()._pieces)
        while window:
            sink.add(window.popleft().result()._pieces)
    finally:
        for f in window:
            f.cancel()


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
        self.specials = tuple(check_special_texts(_special_list(special_tokens)))
        self.workers = 1 if executor is not None and workers is None else _check_workers(workers)
        self.errors = check_errors(errors)
        self.block_size = _check_int(block_size, "block_size", 1)
        self.min_count = _check_int(min_count, "min_count", 1)
        self.max_memory = None if max_memory is None else _check_int(max_memory, "max_memory", 1)
        if executor is not None and workers not in (None, 1):
            raise ValueError("give either workers= (local processes) or executor=, not both")
        if executor is not None and not (
            isinstance(executor, Executor) or _is_dask_client(executor)
        ):
            raise TypeError(
                "executor must be a concurrent.futures.Executor or a distributed.Client, got "
                f"{type(executor).__name__}"
            )
        self.executor = executor
        self.bag = _is_dask_bag(data)
        if self.bag:
            if executor is not None and not _is_dask_client(executor):
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

    def empty(self) -> Counts:
        return Counts._trusted({}, self.source, self.specials)

    def feed(self, sink: SpillCounter) -> None:
        """Count the data into ``sink``, in order, where the arguments say."""
        if self.executor is None:
            # Under a budget, the text read at a time and a batch's own tables (up to ~15
            # bytes per character of text without repeats, twice) are kept to a small share.
            size = BATCH_CHARS if self.max_memory is None else self.max_memory // 64
            size = max(1 << 16, min(BATCH_CHARS, size))
            segments = iter_segments(
                self.data,
                pattern=self.source,
                special_tokens=self.specials,
                errors=self.errors,
                block_size=self.block_size
                if self.max_memory is None
                else min(self.block_size, size),
            )
            for part in _batch_results(segments, self.source, False, self.workers, size):
                sink.add(part)
            return
        tasks = _tasks(self.data, self.source, self.specials, self.errors, self.block_size)
        executor: Any = self.executor
        _on_executor(
            executor.get_executor() if _is_dask_client(executor) else executor, tasks, sink
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
) -> Counts:
    """Count the pieces of ``data`` as :func:`train` does, and return them as :class:`Counts`.

    >>> c = count(["low lower", "lowest"], pattern="gpt2")
    >>> list(c.items())
    [('low', 1), (' lower', 1), ('lowest', 1)]
    >>> tok = train(c, 259)
    >>> [tok.token_bytes(i) for i in range(256, 259)]
    [b'lo', b'low', b'lowe']

    ``train(count(data, ...), vocab_size, ...)`` gives exactly the merges of
    ``train(data, vocab_size, ...)`` (type mode), and the counts can be
    saved (:meth:`Counts.save`), loaded and added (``a + b``: counting
    ``a``'s data then ``b``'s) in between.

    ``data``: as for :func:`train` (a ``str``, a path, or an iterable of
    them; a mapping of groups is refused: count each group, then train on
    ``{name: counts}``), or a ``dask.bag.Bag`` of texts and paths (one unit
    each; counted partition by partition, reduced in a tree by Dask).
    ``pattern``, ``special_tokens`` (the texts cut out), ``errors``,
    ``block_size``: as for :func:`train`. Files named ``.gz``, ``.bz2``,
    ``.xz`` (and ``.zst`` with the ``zstandard`` package) are decompressed;
    each row of a ``.parquet`` file's ``text`` (else ``content``) column is
    a unit (with ``pyarrow``; see :func:`bpeds.tokenizer.io.parquet_texts`).

    Where the work runs: ``workers=N`` splits and counts in ``N`` local
    processes (the parent reads the files; default: the cores available, as
    for :func:`train`). ``executor``: any
    ``concurrent.futures.Executor`` (a process pool, Dask's
    ``client.get_executor()``) or a ``distributed.Client``; each file is one
    task and is read where the task runs (so the path must be readable
    there), and runs of ``str`` items are sent as tasks of about a million
    characters. On an ``Executor`` the partial counts come back in order and
    are added here, a bounded window of tasks in flight; on a ``Client``
    they are added on the cluster, ``TREE_FANIN`` at a time in a tree, so
    that only the final counts come back (with ``max_memory``, a ``Client``
    is used as its executor instead, so that the budget holds here). Give
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

    Errors: as :func:`train` (checked before any data is read); an error in
    a task (an unreadable file, invalid UTF-8) is raised here, as it would be
    locally, naming the file.

    Complexity: O(total text) work; memory here O(distinct pieces), or about
    ``max_memory`` while counting.
    """
    plan = _Plan(
        data, pattern, special_tokens, workers, executor, errors, block_size, max_memory, min_count
    )
    if plan.bag:
        from bpeds.tokenizer import _dask

        options = (plan.source, plan.specials, plan.errors, plan.block_size)
        got = _dask.count_bag(data, _count_partition, options, executor, TREE_FANIN)
        return _at_least(got or plan.empty(), plan.min_count)
    _warn_if_path_like_text(data)
    if _is_dask_client(executor) and max_memory is None:
        from bpeds.tokenizer import _dask

        tasks = _tasks(data, plan.source, plan.specials, plan.errors, plan.block_size)
        got = _dask.count_on_client(executor, tasks, TREE_FANIN)
        return _at_least(got or plan.empty(), plan.min_count)
    with SpillCounter(max_memory or sys.maxsize, spill_dir) as sink:
        plan.feed(sink)
        return sink.counts(plan.source, plan.specials, plan.min_count)


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
    file's counts are saved there as a part file as soon as it is counted,
    named by a digest of the file's resolved path, size and modification
    time and of the pattern, special tokens and ``errors``; a run that finds
    a file's part skips the file. Interrupted, the same call again counts
    only the files not done yet. The parts are added in the files' order
    (so the result is the same) and deleted once the output is written.
    ``data`` must then be paths only. ``on_file(path, size, skipped)`` is
    called as each file is done (for progress).
    """
    plan = _Plan(
        data, pattern, special_tokens, workers, executor, errors, block_size, max_memory, min_count
    )
    if plan.bag:
        raise TypeError("count_to_file reads files and texts: count a dask.bag with count()")
    check_targets([path], overwrite=overwrite)
    _warn_if_path_like_text(data)
    with SpillCounter(max_memory or sys.maxsize, spill_dir) as sink:
        if resume_dir is None:
            plan.feed(sink)
        else:
            parts = _resumable(plan, Path(resume_dir), on_file)
            for part in parts:
                sink.add(Counts.load(part)._pieces)
        written = sink.save(
            path, plan.source, plan.specials, overwrite=overwrite, min_count=plan.min_count
        )
    if resume_dir is not None:
        for part in parts:
            part.unlink(missing_ok=True)
    return written


#: Called by :func:`count_to_file` with ``resume_dir`` as each file is counted:
#: ``(path, bytes of the file, whether it was counted before and skipped)``.
OnFile = Callable[[Path, int, bool], None]


def _part_name(path: Path, plan: _Plan) -> str:
    """The part file of ``path`` in a resume directory: a digest of the file's identity
    (resolved path, size, modification time) and of how it is counted."""
    st = path.stat()
    key = json.dumps(
        [str(path.resolve()), st.st_size, st.st_mtime_ns, plan.source, plan.specials, plan.errors]
    )
    return "part-" + hashlib.sha256(key.encode()).hexdigest()[:32] + ".counts"


def _resumable(plan: _Plan, folder: Path, on_file: OnFile | None) -> list[Path]:
    """Count each file of ``plan`` into its own part file in ``folder``, skipping files
    whose part is there; the part files in the files' order."""
    if not folder.is_dir():
        raise FileNotFoundError(f"resume directory {folder} does not exist: create it first")
    files: list[Path] = []
    for unit in iter_units(plan.data):
        if isinstance(unit, str):
            raise TypeError("resume_dir counts files one by one: give paths only, not texts")
        files.append(Path(unit))
    parts = [folder / _part_name(f, plan) for f in files]

    def done(f: Path, part: Path, counts: Counts | None) -> None:
        if counts is not None:
            counts.save(part, overwrite=True)
        if on_file is not None:
            on_file(f, f.stat().st_size, counts is None)

    todo = []
    for f, part in zip(files, parts, strict=True):
        if part.exists():
            done(f, part, None)
        else:
            todo.append((f, part))
    args = (plan.source, plan.specials, plan.errors, plan.block_size)
    if plan.executor is None:
        for f, part in todo:
            if plan.workers == 1:
                counts = _count_file(f, *args)
            else:
                segments = iter_segments(
                    f,
                    pattern=plan.source,
                    special_tokens=plan.specials,
                    errors=plan.errors,
                    block_size=plan.block_size,
                )
                pieces = count_pieces(segments, plan.source, workers=plan.workers)
                assert isinstance(pieces, dict)
                counts = Counts._trusted(pieces, plan.source, plan.specials)
            done(f, part, counts)
        return parts
    executor: Any = plan.executor
    if _is_dask_client(executor):
        executor = executor.get_executor()
    futures = {executor.submit(_count_file, f, *args): (f, part) for f, part in todo}
    try:
        for future in as_completed(futures):
            f, part = futures[future]
            done(f, part, future.result())
    finally:
        for future in futures:
            future.cancel()
    return parts


def _at_least(c: Counts, min_count: int) -> Counts:
    if min_count == 1:
        return c
    kept = {p: n for p, n in c.items() if n >= min_count}
    return Counts._trusted(kept, c.pattern, c.special_tokens)


def _special_list(special_tokens: Iterable[str]) -> list[str]:
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of texts, not a str")
    if isinstance(special_tokens, Mapping):
        return list(special_tokens.keys())
    return list(special_tokens)


# -- argument handling ------------------------------------------------------------------------


def _apply_preset(preset: str | None, given: dict[str, Any]) -> dict[str, Any]:
    """The arguments a preset sets: each one not given (a :class:`_Default`) takes the
    preset's value, else its default; one given must agree with the preset."""
    if preset is None:
        return {k: v.value if isinstance(v, _Default) else v for k, v in given.items()}
    if preset not in PRESETS:
        raise ValueError(f"unknown preset {preset!r}: choose one of {sorted(PRESETS)}")
    out = dict(given)
    for key, value in PRESETS[preset].items():
        mine = given[key]
        same = (
            isinstance(mine, _Default)
            or mine == value
            or (
                key == "pattern"
                and mine is not None
                and value is not None
                and resolve_pattern(mine)[0] == resolve_pattern(value)[0]
            )
        )
        if not same:
            raise ValueError(
                f"preset {preset!r} sets {key}={value!r}, but {key}={mine!r} was given: "
                "drop one of them"
            )
        out[key] = value
    return out


def _check_int(value: object, name: str, low: int | None) -> int:
    """``value`` if it is an int (not a bool) of at least ``low``: ``TypeError`` for
    another type (``300.0``, ``"300"``, ``True``, ``None``), ``ValueError`` below ``low``."""
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{name} must be an int, got {type(value).__name__} {value!r}")
    if low is not None and value < low:
        raise ValueError(f"{name} must be >= {low}, got {value}")
    return value


def _special_texts(
    special_tokens: Iterable[str] | Mapping[str, int],
) -> tuple[list[str], Mapping[str, int] | None]:
    """The special texts, checked, and the mapping text -> id if one was given (its ids
    are checked by :func:`bpeds.tokenizer.special.check_special_ids` once the merges are known)."""
    if isinstance(special_tokens, str):
        raise TypeError("special_tokens must be a list of texts or a dict text -> id, not a str")
    if isinstance(special_tokens, Mapping):
        return check_special_texts(special_tokens.keys()), special_tokens
    if not isinstance(special_tokens, Iterable):
        raise TypeError(
            f"special_tokens must be a list of texts or a dict, got {type(special_tokens).__name__}"
        )
    return check_special_texts(special_tokens), None


def _groups(data: object) -> list[tuple[str, object]] | None:
    """``[(name, data), ...]`` of a mapping of groups (each value's shape checked), else None."""
    if not isinstance(data, Mapping):
        return None
    out: list[tuple[str, object]] = []
    for name, part in data.items():
        if not isinstance(name, str):
            raise TypeError(
                f"group names must be str (they are recorded with the model), got {name!r}"
            )
        try:
            check_data(part)
        except TypeError as exc:
            raise TypeError(f"group {name!r}: {exc}") from None
        out.append((name, part))
    return out


def _check_groups(score: Score, groups: list[tuple[str, object]] | None) -> None:
    """A per-group score needs at least two groups: with one it is frequency, at a cost."""
    if not score.needs_groups or (groups is not None and len(groups) >= 2):
        return
    if groups is None:
        have = "all the training data is one group"
    else:
        names = ", ".join(repr(n) for n, _ in groups)
        have = f"the training data has {len(groups)} group{'' if len(groups) == 1 else 's'}"
        have += f" ({names})" if names else ""
    raise ValueError(
        f"score {score.name!r} compares groups of text (needs_groups), but {have}, so it "
        "would give frequency's merges at several times the cost: give at least two groups, "
        "as a mapping {group name: texts or paths} (on the command line: --group NAME=FILE "
        "per file)"
    )


def _named(name: str, segments: Iterator[str]) -> Iterator[str]:
    """``segments``, with the group's name put in front of an :class:`InvalidTextError`."""
    try:
        yield from segments
    except InvalidTextError as exc:
        raise InvalidTextError(f"group {name!r}: {exc}", exc.source, exc.offset) from None


def train(
    data: object,
    vocab_size: int,
    *,
    pattern: str | _Default | None = _Default.PATTERN,
    special_tokens: Iterable[str] | Mapping[str, int] = (),
    min_frequency: int = 1,
    max_token_length: int | None = None,
    score: Score | str | dict[str, Any] = "frequency",
    variant: Variant | str | dict[str, Any] | None = None,
    tie: TieRule | str | _Default = _Default.TIE,
    representation: str | _Default = _Default.REPRESENTATION,
    counting: str = "overlapping",
    multiset: MultisetFactory | None = None,
    workers: int | None = None,
    progress: bool | Progress | None = None,
    preset: str | None = None,
    errors: str = "strict",
    on_merge: OnMerge | None = None,
    block_size: int = DEFAULT_BLOCK_SIZE,
    base: Tokenizer | str | os.PathLike[str] | None = None,
    _stage2: bool = False,
) -> Tokenizer:
    """Train a tokenizer of ``vocab_size`` tokens on ``data``.

    >>> tok = train("low lower lowest", 259, pattern="gpt2")
    >>> [tok.token_bytes(i) for i in range(256, 259)]
    [b'lo', b'low', b' low']

    ``data``: a ``str`` (one unit of text; a warning is given if it is also
    the name of a file), a path (``os.PathLike``: one file, one unit), or an
    iterable of ``str`` items and paths (one unit each); see
    :mod:`bpeds.tokenizer.io` for what a unit means and how files are streamed. Or a
    mapping ``{group name: data}`` (names are ``str``, each value any of the
    above): every piece keeps its group (numbered in the mapping's order),
    for scores that read per-group counts, and the model records the names
    as ``options["groups"]``:

    >>> data = {"en": "the the the the", "de": "der der"}
    >>> tok = train(data, 258, pattern="gpt2", score="group_frequency")
    >>> [tok.token_bytes(i) for i in (256, 257)], tok.options["groups"]
    ([b'he', b'de'], ['en', 'de'])
    >>> [train(data, 258, pattern="gpt2").token_bytes(i) for i in (256, 257)]
    [b'he', b'the']

    (after ``he``, English is compressed better than German, so
    ``group_frequency`` serves German next; frequency takes ``the``.)

    ``data`` may also be a :class:`~bpeds.tokenizer.counts.Counts` (see :func:`count`),
    or a mapping of groups to counts: the same merges as training on the
    text they were counted from, without reading it (type mode only). The
    counts' pattern and special tokens are used: a ``pattern`` or ``preset``
    that splits otherwise, or ``special_tokens`` naming other texts, raise
    ``ValueError`` (``special_tokens`` may give their ids as a dict).

    A score with ``needs_groups`` (``"group_frequency"``) given data that is
    not such a mapping, or a mapping of fewer than two groups, raises
    ``ValueError`` (it would give frequency's merges at several times the
    cost); if fewer than two groups turn out to hold any text, a
    ``UserWarning`` says so.
    ``vocab_size`` counts the 256 byte tokens, the merges and the special
    tokens: ``vocab_size - 256 - len(special_tokens)`` merges are learned
    (fewer, with a ``UserWarning``, when no eligible pair is left; an empty
    corpus gives a tokenizer with no merges and that warning).

    ``pattern``: ``"gpt2"``, ``"gpt4"``, ``"gpt4o"``, a regex source, or
    ``None`` (each unit segment is one chunk, as minbpe's Basic); default: the
    preset's, else ``"gpt4"``. A pattern that does not compile or has
    capturing groups raises ``ValueError``.
    ``special_tokens``: a list of texts (ids ``256 + merges + i``, after the
    merges actually learned) or a dict text -> id (ids must be at least
    ``256 + vocab_size - 256 - len(special_tokens)``); their text is cut out
    of the training data. ``min_frequency``: pairs seen fewer times are never
    merged. ``max_token_length``: tokens longer than this many bytes are never
    made. ``score``: a name (``"frequency"``, ``"pmi"``, ...), a dict
    ``{"name": ..., **options}``, a :class:`~bpeds.scoring.base.Score`
    object, or ``"module:attribute"`` naming your own (see
    :func:`bpeds.scoring.registry.get_score`; a bad one raises ``ValueError``
    or ``TypeError`` naming the score and its options). ``tie``,
    ``counting``, ``multiset``: the driver's
    (:class:`~bpeds.driver.MergeDriver`); ``tie`` defaults to the preset's,
    else ``"smallest_ids"``. ``representation``: ``"type"`` (counts of
    distinct pieces; scales to large corpora) or ``"sequence"`` (every piece
    in order, as minbpe; ``counting="overlapping"`` only); default: the
    preset's, else ``"type"``.
    ``variant``: a loop variant (:mod:`bpeds.variants`: ``"picky"``,
    ``"scaffold"``, a dict ``{"name": ..., **options}`` or your own
    :class:`~bpeds.variants.Variant`); ``vocab_size`` then counts the tokens
    encoding can emit (removed and hidden tokens keep their ids but do not
    count), and the tokenizer keeps the run's event log and encodes by it.
    Variants that remove tokens need ``representation="type"``.
    ``base``: continue training from this tokenizer (a
    :class:`~bpeds.tokenizer.Tokenizer`, or a model file in any format
    :func:`bpeds.tokenizer.formats.load_model` reads): every piece of ``data`` starts as
    the base encodes it, every base token and merge keeps its id and rank, and
    the new merges rank after them, so ``vocab_size`` counts the base's tokens
    too. ``pattern`` defaults to the base's; base special tokens keep their ids
    unless a new merge needs the id (then they move after the new merges, with a
    warning); new special tokens (a list) come last. Type representation only.
    ``workers``: processes for splitting and counting (the merges do not
    depend on it); default ``None``: the cores available to this process
    (:func:`available_cores`: its CPU affinity and container quota), with
    processes started only for data of more than one batch (about a
    million characters); ``workers=1`` never starts processes.
    ``progress``: see :func:`bpeds.tokenizer.progress.resolve_progress` (the bar
    counts merges). ``preset``: ``"minbpe-basic"``,
    ``"minbpe-regex"``, ``"hf"``, ``"rustbpe"`` (see :data:`PRESETS`): it sets
    ``pattern``, ``tie`` and ``representation``; passing one of them with
    another value (even the usual default, such as ``pattern="gpt4"`` with
    ``preset="hf"``) raises ``ValueError``.
    ``errors``: ``"strict"`` or ``"replace"`` for invalid UTF-8 in files and
    lone surrogates in strings (see :mod:`bpeds.tokenizer.io`). ``on_merge(record,
    token_bytes)`` is called after every merge. ``block_size``: bytes read
    from a file at a time.

    Errors: ``ValueError``/``TypeError`` naming the bad argument (checked
    before any data is read); :class:`~bpeds.tokenizer.io.InvalidTextError` for invalid
    text; ``OSError`` for unreadable files.

    Complexity: O(corpus) to read and count, plus the driver's cost per merge.
    """
    counted = _counts_in(data)
    if counted is not None:
        pattern, special_tokens = _counts_options(
            counted, pattern, special_tokens, representation, preset
        )
    if variant is not None and not _stage2:
        switching = get_variant(variant)
        if switching.switches:
            if counted is not None:
                raise ValueError(
                    f"variant {switching.name!r} splits the text a second time with another "
                    "pattern, which counts cannot give: train it on the text"
                )
            return _train_switching(
                switching,
                data,
                vocab_size,
                pattern=pattern,
                special_tokens=special_tokens,
                base=base,
                representation=representation,
                options={
                    "min_frequency": min_frequency,
                    "max_token_length": max_token_length,
                    "score": score,
                    "tie": tie,
                    "counting": counting,
                    "multiset": multiset,
                    "workers": workers,
                    "progress": progress,
                    "preset": preset,
                    "errors": errors,
                    "on_merge": on_merge,
                    "block_size": block_size,
                },
            )
    base_tok = None if base is None else _base_tokenizer(base)
    if base_tok is not None and pattern is _Default.PATTERN and preset is None:
        pattern = base_tok.pattern
    opts = _apply_preset(preset, {"pattern": pattern, "representation": representation, "tie": tie})
    source, _ = resolve_pattern(opts["pattern"])
    representation = opts["representation"]
    if representation not in ("type", "sequence"):
        raise ValueError(f"representation must be 'type' or 'sequence', got {representation!r}")
    if counting not in ("overlapping", "non_overlapping"):
        raise ValueError(f"counting must be 'overlapping' or 'non_overlapping', got {counting!r}")
    if representation == "sequence" and counting != "overlapping":
        raise ValueError("representation='sequence' counts pairs overlapping only")
    vocab_size = _check_int(vocab_size, "vocab_size", None)  # the minimum is checked below
    min_frequency = _check_int(min_frequency, "min_frequency", 1)
    if max_token_length is not None:
        max_token_length = _check_int(max_token_length, "max_token_length", 2)
    workers = _check_workers(workers)
    block_size = check_block_size(block_size)
    if multiset is not None and not callable(multiset):
        raise TypeError(
            "multiset must be a factory f(tie=...) of a Multiset (a class such as HeapyKiYay), "
            f"got {type(multiset).__name__} {multiset!r}"
        )
    errors = check_errors(errors)
    score_obj = get_score(score)
    variant_obj = None if variant is None else get_variant(variant)
    tie_obj = tie_rule(opts["tie"])
    prog = resolve_progress(progress)
    texts, given = _special_texts(special_tokens)
    minimum = BYTE_TOKENS + len(texts)
    if base_tok is not None:
        if representation != "type":
            raise ValueError("continued training (base=...) needs representation='type'")
        if given is not None:
            raise ValueError(
                "with base=..., give special tokens as a list of texts: the base's keep "
                "their ids and new ones come after the new merges"
            )
        texts = [t for t in texts if t not in base_tok.special_tokens]
        minimum = base_tok.vocab_size + len(texts)
        if vocab_size < minimum:
            raise ValueError(
                f"vocab_size must be at least {minimum} (the base's {base_tok.vocab_size} "
                f"tokens + {len(texts)} new special tokens), got {vocab_size}"
            )
    if vocab_size < minimum:
        raise ValueError(
            f"vocab_size must be at least {minimum} (256 byte tokens + {len(texts)} special "
            f"tokens), got {vocab_size}"
        )
    num_merges = vocab_size - minimum
    given_ids = (
        None
        if given is None
        else check_special_ids(given, num_merges, merges_are=" that vocab_size asks for")
    )

    groups = _groups(data)
    if groups is None:
        check_data(data)  # every path of a list is there before anything is read
    _check_groups(score_obj, groups)
    if base_tok is not None and groups is not None:
        raise ValueError("continued training (base=...) takes ungrouped data")

    for part in [data] if groups is None else [part for _, part in groups]:
        _warn_if_path_like_text(part)
    sequence = representation == "sequence"

    def pieces_of(part: object, group: str | None = None) -> dict[str, int] | list[str]:
        if isinstance(part, Counts):
            return part._pieces  # read, not changed, by the corpus
        segments = iter_segments(
            part, pattern=source, special_tokens=texts, errors=errors, block_size=block_size
        )
        if group is not None:
            segments = _named(group, segments)
        return count_pieces(
            segments, source, sequence=sequence, workers=workers, batch_chars=BATCH_CHARS
        )

    # The cyclic collector would re-scan the growing corpus structures over and over
    # (see bpeds._gc); reference counting frees everything training drops.
    with gc_paused():
        corpus: Corpus
        if groups is None:
            pieces = pieces_of(data)
            if isinstance(pieces, list):
                corpus = SequenceCorpus(p.encode("utf-8") for p in pieces)
            elif base_tok is not None:
                start_vocab = Vocab()
                for a, b in base_tok.merges:
                    start_vocab.add(a, b)
                corpus = TypeCorpus.from_token_counts(
                    _base_encodings(base_tok, pieces), start_vocab.length
                )
            else:
                corpus = TypeCorpus._from_pieces(pieces)
            del pieces
        else:
            corpus, filled = _grouped_corpus(groups, pieces_of, sequence)
            if score_obj.needs_groups and len(filled) < 2:
                warnings.warn(
                    f"score {score_obj.name!r} compares groups, but only {len(filled)} of the "
                    f"{len(groups)} groups hold any text ({', '.join(map(repr, filled)) or 'none'}"
                    "): its merges are frequency's",
                    UserWarning,
                    stacklevel=2,
                )

        driver = MergeDriver(
            corpus,
            num_merges,
            score=score_obj,
            tie=tie_obj,
            multiset=multiset,
            counting=counting,  # type: ignore[arg-type]
            min_count=min_frequency,
            max_token_length=max_token_length,
            variant=variant_obj,
            vocab=None if base_tok is None else start_vocab,
        )
        prog.start(num_merges)
        try:
            for record in driver:
                prog.update(1)
                if on_merge is not None:
                    on_merge(record, driver.vocab.token_bytes(record.new_id))
        finally:
            prog.close()
    vocab = driver.vocab
    merges = [vocab.parents(t) or (t, t) for t in range(BYTE_TOKENS, len(vocab))]
    start = 0 if base_tok is None else base_tok.num_merges
    # A log that only makes each token once, in id order, is the merges list itself.
    made_once = len(driver.records) == len(merges) - start
    events: list[list[int | str]] | None = None
    if not (made_once and all(e.kind == "merge" for e in driver.events)):
        events = [["merge", BYTE_TOKENS + k, a, b] for k, (a, b) in enumerate(merges[:start])]
        events += [[e.kind, e.token, *e.parts] for e in driver.events]
    if len(driver.records) < num_merges and variant_obj is None:
        warnings.warn(
            f"training stopped after {len(driver.records)} of {num_merges} merges: no pair is left "
            f"that occurs at least min_frequency={min_frequency} times"
            + (" (the corpus is empty)" if not driver.records and corpus_is_empty(corpus) else ""),
            UserWarning,
            stacklevel=2,
        )
    ids = (
        given_ids
        if given_ids is not None
        else {t: BYTE_TOKENS + len(merges) + i for i, t in enumerate(texts)}
    )
    if base_tok is not None:
        ids = _continued_specials(base_tok, len(merges), texts)
    recorded = driver.options()
    recorded["score"] = describe_score(score, score_obj)
    recorded["min_frequency"] = recorded.pop("min_count")
    recorded["representation"] = representation
    recorded["vocab_size"] = vocab_size
    if preset is not None:
        recorded["preset"] = preset
    if groups is not None:
        recorded["groups"] = [name for name, _ in groups]
    if base_tok is not None:
        recorded["base"] = {"merges": base_tok.num_merges, "options": base_tok.options}
    return Tokenizer(merges, pattern=source, special_tokens=ids, options=recorded, events=events)


def _train_switching(
    variant: Variant,
    data: object,
    vocab_size: int,
    *,
    pattern: Any,
    special_tokens: Iterable[str] | Mapping[str, int],
    base: object,
    representation: Any,
    options: dict[str, Any],
) -> Tokenizer:
    """Two stages for a variant that switches pre-tokenization (SuperBPE): ordinary
    training to the switch, then training continued from it on the second pattern's
    chunks, with the variant's pair rule. O(the two runs)."""
    if base is not None:
        raise ValueError(f"variant {variant.name!r} trains from bytes: it takes no base")
    if representation not in (_Default.REPRESENTATION, "type"):
        raise ValueError(f"variant {variant.name!r} needs representation='type'")
    if isinstance(data, Iterator) or _groups(data) is not None:
        raise ValueError(
            f"variant {variant.name!r} reads the data twice (once per pre-tokenization): give "
            "a str, a path or a list of them, not a one-shot iterator or groups"
        )
    texts, given = _special_texts(special_tokens)
    if given is not None:
        raise ValueError(f"with variant {variant.name!r}, give special tokens as a list of texts")
    vocab_size = _check_int(vocab_size, "vocab_size", 0)
    first = BYTE_TOKENS + len(texts)
    if vocab_size < first:
        raise ValueError(
            f"vocab_size must be at least {first} (256 byte tokens + {len(texts)} special "
            f"tokens), got {vocab_size}"
        )
    size1 = variant.stage1_size(first, vocab_size)  # type: ignore[attr-defined]
    stage1 = train(data, size1 - len(texts), pattern=pattern, **options)
    stage2 = train(
        data,
        vocab_size,
        pattern=variant.stage2_pattern,  # type: ignore[attr-defined]
        special_tokens=texts,
        base=stage1,
        variant=variant,
        _stage2=True,
        **{k: v for k, v in options.items() if k != "preset"},
    )
    recorded = stage2.options
    recorded["variant"] = variant.describe()
    recorded["stage1"] = {"merges": stage1.num_merges, "pattern": stage1.pattern}
    recorded.pop("base", None)
    return Tokenizer(
        stage2.merges,
        pattern=stage2.pattern,
        special_tokens=stage2.special_tokens,
        options=recorded,
    )


def _base_encodings(base: Tokenizer, pieces: dict[str, int]) -> Iterator[tuple[list[int], int]]:
    """Each piece as the base's merges encode it (by rank, over the whole piece), with
    its count.

    A piece longer than the base's own pieces (a second pattern's chunk) is cut where
    no merge can ever reach across: between two bytes that are adjacent inside no
    base token, no token can span the cut, so rank merging on each side is independent
    and the encoding is the concatenation of the sides'. The base's pattern proposes
    the cuts; equal segments are encoded once. O(total length) plus the merging of
    distinct segments.
    """
    ranks = base.mergeable_ranks()
    inner: set[tuple[int, int]] = set()
    for token in ranks:
        if len(token) > 1:
            inner.update(pairwise(token))
    _, compiled = resolve_pattern(base.pattern)
    findall = None if compiled is None else compiled.findall
    cache: dict[str, list[int]] = {}

    def encode(segment: str) -> list[int]:
        ids = cache.get(segment)
        if ids is None:
            ids = cache[segment] = bpe(segment.encode("utf-8"), ranks)
        return ids

    def first_byte(part: str) -> int:
        c = ord(part[0])
        return c if c < 0x80 else part[0].encode("utf-8")[0]

    def last_byte(part: str) -> int:
        c = ord(part[-1])
        return c if c < 0x80 else part[-1].encode("utf-8")[-1]

    for piece, n in pieces.items():
        parts = None if findall is None else findall(piece)
        if not parts or (len(parts) > 1 and "".join(parts) != piece):
            yield bpe(piece.encode("utf-8"), ranks), n
            continue
        if len(parts) == 1:
            yield encode(piece), n
            continue
        out: list[int] = []
        segment = [parts[0]]
        for part in parts[1:]:
            if (last_byte(segment[-1]), first_byte(part)) in inner:
                segment.append(part)
            else:
                out += encode(segment[0] if len(segment) == 1 else "".join(segment))
                segment = [part]
        out += encode(segment[0] if len(segment) == 1 else "".join(segment))
        yield out, n


def _base_tokenizer(base: object) -> Tokenizer:
    """The tokenizer to continue from: a Tokenizer, or a model file of any known format."""
    if isinstance(base, Tokenizer):
        tok = base
    elif isinstance(base, str | os.PathLike):
        from bpeds.tokenizer.formats import load_model  # (same layer: formats build tokenizers)

        tok = load_model(base)
    else:
        raise TypeError(
            f"base must be a Tokenizer or the path of a model file, got {type(base).__name__}"
        )
    if tok.replays:
        raise ValueError(
            "cannot continue from a tokenizer that encodes by a loop variant's event log "
            "(removed, re-made or hidden tokens): continue from a plain BPE tokenizer"
        )
    return tok


def _continued_specials(base: Tokenizer, num_merges: int, texts: list[str]) -> dict[str, int]:
    """Special ids after continued training: the base's where no merge id needs them,
    the others (with a warning) and the new ``texts`` after every other id."""
    top = BYTE_TOKENS + num_merges  # merge ids are 0 .. top - 1
    kept = {t: i for t, i in base.special_tokens.items() if i >= top}
    moved = [t for t in base.special_tokens if t not in kept]
    nxt = max([top - 1, *kept.values()]) + 1
    for t in [*moved, *texts]:
        kept[t] = nxt
        nxt += 1
    if moved:
        warnings.warn(
            f"the base's special tokens {moved} had ids the new merges take: they now have "
            f"ids {[kept[t] for t in moved]}",
            UserWarning,
            stacklevel=3,
        )
    return kept


def _counts_in(data: object) -> Counts | None:
    """The first :class:`Counts` of ``data`` (itself, or a mapping's values), else None.

    A mapping must hold counts for every group or for none; all must have
    been split alike (``ValueError`` otherwise).
    """
    if isinstance(data, Counts):
        return data
    if not isinstance(data, Mapping):
        return None
    found = [isinstance(v, Counts) for v in data.values()]
    if not any(found):
        return None
    if not all(found):
        raise TypeError(
            "a mapping of groups must give counts for every group or for none (count the "
            "other groups with bpeds.count)"
        )
    parts = list(data.values())
    for other in parts[1:]:
        parts[0].compatible(other)
    first: Counts = parts[0]
    return first


def _counts_options(
    counted: Counts,
    pattern: object,
    special_tokens: Iterable[str] | Mapping[str, int],
    representation: object,
    preset: str | None,
) -> tuple[str | None, Iterable[str] | Mapping[str, int]]:
    """The pattern and special tokens to train ``counted`` with, checked against how it
    was counted; a sequence representation is refused (counts keep no order)."""
    made = counted.pattern
    if isinstance(pattern, _Default):
        if preset in PRESETS:
            want = resolve_pattern(PRESETS[preset]["pattern"])[0]
            if want != made:
                raise ValueError(
                    f"preset {preset!r} splits with pattern {_label(want)}, but the counts "
                    f"were made with {_label(made)}: count with the preset's pattern"
                )
        pattern = made
    elif resolve_pattern(pattern if pattern is None else str(pattern))[0] != made:
        raise ValueError(
            f"pattern={pattern!r} was given, but the counts were made with pattern "
            f"{_label(made)}: leave pattern out (training uses the counts' pattern)"
        )
    seq = representation == "sequence" or (
        isinstance(representation, _Default)
        and preset in PRESETS
        and PRESETS[preset]["representation"] == "sequence"
    )
    if seq:
        raise ValueError(
            "counts hold distinct pieces without their order, so they train in type mode only: "
            "train a sequence representation (and the minbpe presets) on the text"
        )
    texts = _special_list(special_tokens)
    if not texts:
        return made, list(counted.special_tokens)
    if set(texts) != set(counted.special_tokens):
        raise ValueError(
            f"special_tokens={texts!r}, but the counts were made cutting out "
            f"{list(counted.special_tokens)!r}: the special tokens must be the texts cut out "
            "when counting (leave special_tokens out to take the counts', or give their ids "
            "as a dict)"
        )
    return made, special_tokens


def _label(source: str | None) -> str:
    from bpeds.tokenizer.pretokenize import PATTERNS

    names = [n for n, s in PATTERNS.items() if s == source]
    return names[0] if names else ("none" if source is None else repr(source))


def _grouped_corpus(
    groups: list[tuple[str, object]],
    pieces_of: Callable[[object, str], dict[str, int] | list[str]],
    sequence: bool,
) -> tuple[Corpus, list[str]]:
    """The corpus of every group's pieces, each labelled with its group's index, and the
    names of the groups that hold any. Groups are counted one after the other (type mode
    keeps one group's counts at a time besides the corpus being built)."""
    filled: list[str] = []
    if sequence:
        chunks: list[bytes] = []
        labels: list[int] = []
        for g, (name, part) in enumerate(groups):
            pieces = pieces_of(part, name)
            assert isinstance(pieces, list)
            if pieces:
                filled.append(name)
            chunks += [p.encode("utf-8") for p in pieces]
            labels += [g] * len(pieces)
        return SequenceCorpus(chunks, labels), filled

    def items() -> Iterator[tuple[bytes, int, int]]:
        for g, (name, part) in enumerate(groups):
            counts = pieces_of(part, name)
            assert isinstance(counts, dict)
            if counts:
                filled.append(name)
            for p, n in counts.items():
                yield p.encode("utf-8"), n, g

    return TypeCorpus.from_counts(items()), filled


def _warn_if_path_like_text(data: object) -> None:
    """A lone short ``str`` naming an existing file is almost surely meant as a path."""
    if isinstance(data, str) and 0 < len(data) < 4096 and "\n" not in data:
        try:
            is_file = os.path.isfile(data)
        except (OSError, ValueError):
            is_file = False
        if is_file:
            warnings.warn(
                f"training on the text {data!r}, which is also the name of a file: a str is "
                f"text; pass pathlib.Path({data!r}) to train on the file",
                UserWarning,
                stacklevel=3,
            )


def corpus_is_empty(corpus: Corpus) -> bool:
    """Whether a corpus holds no bytes at all."""
    if isinstance(corpus, TypeCorpus | SequenceCorpus):
        return corpus.num_tokens == 0
    return False  # pragma: no cover - only our two representations are built here
