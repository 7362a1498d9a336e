"""Splitting text into pieces (pre-tokens) and counting them, here or in local processes.

:func:`count_pieces` splits texts with a pattern and collects the pieces:
``{piece: count}`` in order of first appearance (type mode) or every piece in
order (sequence mode). With ``workers > 1`` batches of text are split and
counted in processes and the per-batch results are folded in batch order, so
the result, first-appearance order included (which the ``leftmost`` tie rule
reads), is the same as with one process. :func:`available_cores` is the
default number of workers.

Not handled here: reading files and cutting out special tokens
(:mod:`bpeds.tokenizer.io`), counts as an artefact (:mod:`bpeds.tokenizer.counting`).
"""

from __future__ import annotations

import itertools
import os
from collections import Counter, deque
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from functools import partial
from pathlib import Path
from typing import Any

from bpeds.processes import reporting_lost_workers, worker_started
from bpeds.tokenizer.fastsplit import fast_findall, splitter
from bpeds.tokenizer.io import check_int
from bpeds.tokenizer.pattern_safety import check_coverage, findall_within
from bpeds.tokenizer.pretokenize import PATTERNS, _compiled, match_limits, segmenter

__all__ = [
    "BATCH_CHARS",
    "SEGMENT_MIN_CHARS",
    "available_cores",
    "batch_results",
    "check_workers",
    "count_pieces",
]

#: Characters of text per batch handed to a worker.
BATCH_CHARS = 1 << 20
#: Texts from this many characters on are counted by
#: :meth:`bpeds.tokenizer.pretokenize.Segmenter.count` (built-in patterns only, where the
#: ASCII fast path of :mod:`bpeds.tokenizer.fastsplit` does not apply: it is faster): the
#: same counts in the same order, ~1.1-1.3x faster on English.
SEGMENT_MIN_CHARS = 1 << 12

_OWN_PATTERNS = frozenset(PATTERNS.values())

# -- one batch (runs in workers too) ---------------------------------------------------------


def _findall(
    source: str | None,
    unicode: str | None = None,
    limits: tuple[float, float] | None = None,
) -> Callable[[str], list[str]] | None:
    """``findall`` of the pattern read with ``unicode``'s tables (with the exact ASCII fast
    path of :mod:`bpeds.tokenizer.fastsplit`); for a pattern not of bpeds's own (which match every
    character), one that refuses text the pattern leaves unmatched (see
    :func:`bpeds.tokenizer.pattern_safety.check_coverage`). With ``limits`` (a pattern
    from a file: :func:`bpeds.tokenizer.pretokenize.match_limits`), ``regex`` matches it
    alone, with that time limit."""
    if source is None:
        return None
    findall: Callable[[str], list[str]]
    if limits is not None:
        findall = partial(findall_within, _compiled(source, unicode), limits=limits)
    else:
        findall = fast_findall(_compiled(source, unicode))
    if source in _OWN_PATTERNS:
        return findall
    return partial(_covering_findall, findall, source)


def _covering_findall(findall: Callable[[str], list[str]], source: str, text: str) -> list[str]:
    return check_coverage(findall(text), text, source)


def _count_batch(
    texts: list[str],
    source: str | None,
    sequence: bool,
    unicode: str | None = None,
    limits: tuple[float, float] | None = None,
) -> Any:
    """Pieces of a batch: ``{piece: count}`` in first-appearance order, or the list
    (the pattern's classes read with ``unicode``'s tables).

    Texts are split by :func:`bpeds.tokenizer.fastsplit.fast_findall` (exactly the
    pattern's ``findall``). In type mode, a long text under a built-in pattern
    that the ASCII fast path does not apply to is counted by cutting it where
    cutting provably cannot change the split and splitting each distinct
    stretch once (:class:`bpeds.tokenizer.pretokenize.Segmenter`). ``limits``: the time
    limit of a pattern from a file (see :func:`_findall`).
    """
    findall = _findall(source, unicode, limits)
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
    compiled = _compiled(source, unicode)
    seg = segmenter(compiled)
    fast = splitter(compiled)
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


# -- many batches, in order ------------------------------------------------------------------


def batch_results(
    texts: Iterable[str],
    pattern: str | None,
    sequence: bool,
    workers: int,
    batch_chars: int,
    unicode: str | None = None,
) -> Iterator[Any]:
    """The pieces of each batch of about ``batch_chars`` characters of ``texts``, in batch
    order: a ``{piece: count}`` dict per batch, or (``sequence``) a list of pieces; the
    pattern's classes read with ``unicode``'s tables.

    With ``workers > 1`` the batches are split and counted in that many processes, at
    most ``2 * workers`` batches in flight; processes are started only when there is a
    second batch (text of one batch is counted here), and end with this one
    (:func:`bpeds.processes.worker_started`). A pattern from a file is matched
    with its time limit (:func:`bpeds.tokenizer.pretokenize.match_limits`, as it is here,
    in the workers too). O(text).
    """
    limits = match_limits(pattern)
    batches = _batches(texts, batch_chars)
    first = next(batches, None)
    second = next(batches, None) if first is not None else None
    if workers == 1 or second is None:
        for b in (first, second):
            if b is not None:
                yield _count_batch(b, pattern, sequence, unicode, limits)
        for b in batches:
            yield _count_batch(b, pattern, sequence, unicode, limits)
        return
    assert first is not None
    batches = itertools.chain((first, second), batches)
    ex = ProcessPoolExecutor(workers, initializer=worker_started, initargs=(os.getpid(),))
    window: deque[Future[Any]] = deque()
    try:
        with reporting_lost_workers("the worker processes"):  # one killed, say
            for b in batches:
                window.append(ex.submit(_count_batch, b, pattern, sequence, unicode, limits))
                if len(window) >= 2 * workers:
                    yield window.popleft().result()
            while window:
                yield window.popleft().result()
    finally:  # on an error or Ctrl-C, the batches not started are dropped
        ex.shutdown(cancel_futures=True)


def count_pieces(
    texts: Iterable[str],
    pattern: str | None,
    *,
    sequence: bool = False,
    workers: int = 1,
    batch_chars: int | None = None,
    unicode: str | None = None,
) -> dict[str, int] | list[str]:
    """Split every text with ``pattern`` (a regex source or ``None``, its classes read with
    ``unicode``'s tables) and collect the pieces.

    Type mode: ``{piece: count}`` in order of first appearance; sequence mode
    (``sequence=True``): every non-empty piece in order. The result is the same
    for any ``workers`` and ``batch_chars`` (characters per batch; default
    :data:`BATCH_CHARS`).

    >>> count_pieces(["a b a", "b"], r"\\S+|\\s+")
    {'a': 2, ' ': 2, 'b': 2}

    Complexity: O(total text); memory O(distinct pieces) in type mode.
    """
    merged: dict[str, int] = {}
    ordered: list[str] = []
    size = BATCH_CHARS if batch_chars is None else batch_chars
    for result in batch_results(texts, pattern, sequence, workers, size, unicode):
        if sequence:
            ordered.extend(p for p in result if p)
        elif not merged:
            merged.update(result)
        else:
            get = merged.get
            for k, v in result.items():
                merged[k] = get(k, 0) + v
    if sequence:
        return ordered
    merged.pop("", None)
    return merged


# -- how many processes ----------------------------------------------------------------------


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


def check_workers(workers: object) -> int:
    """``workers=None``: :func:`available_cores`; else an int >= 1 (``TypeError`` for
    another type, ``ValueError`` below 1)."""
    return available_cores() if workers is None else check_int(workers, "workers", 1)
