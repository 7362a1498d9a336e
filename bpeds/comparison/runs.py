"""Running a comparison: the shared counting, one run per configuration, and :func:`compare`.

The training data is counted once per :class:`~bpeds.comparison.configs.Reading`
with :func:`bpeds.count`, and every configuration that reads it that way
trains on those counts through ``bpeds.train(counts, ...)``: exactly what
``bpeds.train`` gives on the data. Other configurations (a loop variant, the
sequence representation, ``block_size``, ...) are handed to ``bpeds.train`` as
they are and read the data themselves. Each configuration runs in a process of
its own (``workers``) or one after the other here; a failure becomes its
result's error and the others still finish. A configuration's own process may
start processes itself (its counting does, on large data): it is an ordinary,
non-daemonic process, ended by the comparison if the comparison stops first.
"""

from __future__ import annotations

import math
import multiprocessing
import multiprocessing.connection
import os
import sys
import time
import traceback
import warnings
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from bpeds.comparison.configs import (
    Config,
    Reading,
    check_configs,
    parse_configs,
    reading_of,
    reusable,
)
from bpeds.comparison.metrics import HeldOut, evaluate, read_heldout
from bpeds.comparison.provenance import provenance
from bpeds.comparison.report import Comparison
from bpeds.errors import BpedsError
from bpeds.processes import worker_started
from bpeds.scoring import ScoreError
from bpeds.tokenizer import BYTE_TOKENS, Tokenizer
from bpeds.tokenizer.counting import count
from bpeds.tokenizer.counts import Counts
from bpeds.tokenizer.io import Errors, InvalidTextError, check_errors, refuse_file_names
from bpeds.tokenizer.pieces import available_cores
from bpeds.tokenizer.progress import NullProgress, Progress, TqdmProgress, resolve_progress
from bpeds.tokenizer.training import train

__all__ = [
    "Counted",
    "Job",
    "Result",
    "compare",
    "count_training",
    "run",
    "run_in_processes",
    "types_of",
]

#: Training data counted one way: its counts, or each group's.
Counted = Counts | dict[str, Counts]


def count_training(
    data: object, reading: Reading, errors: Errors, workers: int, bar: bool = False
) -> Counted:
    """Count ``data`` as ``reading`` says, group by group for ``{name: data}``
    (:func:`bpeds.count`; an invalid text's error names its group), with a progress bar
    of the bytes read if ``bar``. O(text)."""

    def counts(part: object) -> Counts:
        return count(
            part,
            pattern=reading.source,
            special_tokens=reading.specials,
            unicode=reading.unicode,
            workers=workers,
            errors=errors,
            progress=TqdmProgress("shared counting") if bar else False,
        )

    if not isinstance(data, Mapping):
        return counts(data)
    out: dict[str, Counts] = {}
    for name, part in data.items():
        try:
            out[str(name)] = counts(part)
        except InvalidTextError as exc:
            raise InvalidTextError(f"group {name!r}: {exc}", exc.source, exc.offset) from None
    return out


def types_of(counted: Counted) -> dict[str, int]:
    """Every piece of the training data with its count, all groups added. O(pieces)."""
    if isinstance(counted, Counts):
        return counted.as_dict()
    out: Counter[str] = Counter()
    for part in counted.values():
        out.update(part.as_dict())
    return dict(out)


@dataclass
class Job:
    """One configuration to train (or take) and measure, with what it shares."""

    index: int
    config: Config
    data: object
    counts: Counted | None  # shared counts of this configuration's reading, if it has one
    train_types: dict[str, int] | None  # the training data's pieces under the tokenizer's reading
    heldout: dict[Reading, HeldOut]
    heldout_data: object
    sizes: int | Sequence[int]
    alpha: float
    reference: str | None
    undertrained_below: int
    errors: Errors
    bar: bool
    workers: int | None = None  # processes its own counting may use (None: train's default)


@dataclass
class Result:
    """What running a :class:`Job` gave: the tokenizer and its rows, or an error."""

    label: str
    tokenizer: Tokenizer | None = None
    rows: list[dict[str, Any]] = field(default_factory=list)
    cpu_s: float | None = None
    peak_rss_mb: float | None = None
    error: str | None = None
    notes: list[str] = field(default_factory=list)


def _peak_rss_mb() -> float | None:
    """This process's peak resident memory so far, in MiB (``None`` where not measurable)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return None
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1 << 20) if sys.platform == "darwin" else peak / 1024


def _cpu_s() -> float:
    """CPU seconds of this process and of the processes it started and waited for (the
    counting processes of a configuration that reads its data itself)."""
    try:
        import resource
    except ImportError:  # pragma: no cover - not on POSIX
        return time.process_time()
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + children.ru_utime + children.ru_stime


def run(job: Job, isolated: bool) -> Result:
    """Train (or take) one configuration and measure it; failures become the result's error."""
    c = job.config
    res = Result(c.label)
    progress: Progress = TqdmProgress(c.label, job.index) if job.bar else NullProgress()
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", UserWarning)
            if c.tokenizer is not None:
                tok = c.tokenizer
            else:
                assert c.kwargs is not None
                started = _cpu_s()
                base = _peak_rss_mb() if isolated else None
                kw = dict(c.kwargs)
                size = kw.pop("vocab_size")
                if job.counts is None:
                    kw.setdefault("errors", job.errors)
                data = job.data if job.counts is None else job.counts
                tok = train(data, size, **kw, workers=job.workers, progress=progress)
                res.cpu_s = _cpu_s() - started
                peak = _peak_rss_mb() if isolated else None
                if peak is not None and base is not None:
                    res.peak_rss_mb = peak - base
            res.tokenizer = tok
            key = Reading(tok.pattern, tuple(tok.special_tokens), tok.unicode)
            heldout = job.heldout.get(key)
            if heldout is None:
                heldout = read_heldout(job.heldout_data, key, job.errors)
            types = job.train_types
            if types is None and c.tokenizer is None:
                types = types_of(count_training(job.data, key, job.errors, 1))
            res.rows = evaluate(
                c.label,
                tok,
                heldout,
                job.sizes,
                job.alpha,
                job.reference,
                types,
                job.undertrained_below,
            )
        res.notes = [str(w.message) for w in caught]
    except KeyboardInterrupt:
        raise
    except Exception as exc:
        res.error = f"{type(exc).__name__}: {exc}"
        if isinstance(exc, ScoreError) or not isinstance(
            exc, BpedsError | ValueError | TypeError | OSError
        ):  # a failure of code: its traceback (a score's own, chained, included)
            res.notes.append(traceback.format_exc())
    return res


def _child(job: Job, conn: Any, parent: int) -> None:
    """A configuration's own process: run it, send the result back. It ends with the
    process that started it, and leaves Ctrl-C to it."""
    worker_started(parent)
    conn.send(run(job, True))
    conn.close()


def run_in_processes(jobs: Sequence[Job], workers: int) -> list[Result]:
    """Each job in a new process, at most ``workers`` at once, results in job order.

    Processes are forked where the platform can (no ``if __name__ == "__main__"``
    guard needed, and a child starts from the parent's memory, which
    :func:`run` subtracts from its peak); elsewhere the platform's default
    start method is used. They are not daemonic, so a configuration that reads
    its data itself (a loop variant) can count it in processes of its own; the
    ones still running when this returns early (an exception, Ctrl-C) are
    terminated. A process that dies gives its job an error result.
    """
    methods = multiprocessing.get_all_start_methods()
    ctx = multiprocessing.get_context("fork" if "fork" in methods else None)
    results: list[Result | None] = [None] * len(jobs)
    pending = list(enumerate(jobs))
    running: dict[Any, tuple[int, Any]] = {}
    try:
        while pending or running:
            while pending and len(running) < workers:
                i, job = pending.pop(0)
                recv, send = ctx.Pipe(duplex=False)
                proc = ctx.Process(target=_child, args=(job, send, os.getpid()), daemon=False)
                proc.start()
                send.close()
                running[recv] = (i, proc)
            ready: list[Any] = multiprocessing.connection.wait(list(running))
            for conn in ready:
                i, proc = running.pop(conn)
                try:
                    results[i] = conn.recv()
                except EOFError:
                    proc.join()
                    results[i] = Result(
                        jobs[i].config.label,
                        error=f"the process training it stopped (exit code {proc.exitcode})",
                    )
                conn.close()
                proc.join()
    finally:
        for _, proc in running.values():
            proc.terminate()
            proc.join()
    return [r for r in results if r is not None]


# -- the comparison ----------------------------------------------------------------------------


def compare(
    configs: Sequence[Mapping[str, Any] | Tokenizer] | Mapping[str, Mapping[str, Any] | Tokenizer],
    train: object = None,
    heldout: object = None,
    *,
    vocab_size: int | None = None,
    sizes: int | Sequence[int] = 8,
    alpha: float = 2.5,
    reference: str | None = None,
    undertrained_below: int = 1,
    workers: int = 1,
    processes: bool | None = None,
    progress: bool | None = None,
    errors: str = "strict",
) -> Comparison:
    """Train every configuration on ``train`` and measure each on ``heldout``.

    ``configs``: a list of configurations or a dict label -> configuration.
    A configuration is a dict of :func:`bpeds.train`'s keyword arguments
    (``{"score": "pmi", "vocab_size": 4096}``; a ``"label"`` key names it,
    else it is named by its options), or a trained :class:`Tokenizer`
    (measured, not trained). ``vocab_size``: for the dicts that do not give
    one. ``train``: the training data, anything :func:`bpeds.train` takes (a
    mapping gives groups; an iterator, such as a generator, is read into a list
    first, since several configurations read it). ``heldout``: text to measure
    on, in the same forms;
    a mapping ``{group name: data}`` gives per-group columns
    (``tokens_per_byte[NAME]``, ``premium[NAME]``: tokens of the group over
    tokens of ``reference``, by default the first group; parallel text such
    as translations of one document is what makes a premium meaningful).

    ``sizes``: an int ``n`` evaluates each tokenizer with all its merges, half
    of them, a quarter, ... (``n`` sizes); or a list of vocabulary sizes (the
    full size is always added; sizes above it are skipped). ``alpha``: the
    Rényi order. ``undertrained_below``: merged tokens produced fewer than this
    many times when the training data is encoded count as under-trained.

    ``workers``: configurations trained at the same time, each in its own
    process (``processes=True``, the default when ``workers > 1``: CPU time
    and peak memory are the configuration's alone) or one after the other in
    this one (``processes=False``; peak memory is then not measured). The
    counting also uses ``workers`` processes. ``progress``: a bar per
    configuration (``None``: when stderr is a terminal and tqdm is installed).
    ``errors``: how invalid UTF-8 is read (see :func:`bpeds.train`).

    Every configuration is checked before any training starts:
    :class:`ConfigError` (a ``ValueError``) lists each one that cannot run
    with what to fix. A configuration that fails while training or being
    measured is reported in :attr:`Comparison.errors` (and in the tables) and
    the others still finish. Results are the same for any ``workers``.

    Complexity: counting O(training text) once per distinct reading, plus each
    training run, plus O(held-out pieces x sizes) encodings per configuration.
    """
    if train is None or heldout is None:
        raise TypeError(
            "compare needs train= (the training data) and heldout= (text to measure on)"
        )
    errors = check_errors(errors)
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an int >= 1, got {workers!r}")
    if isinstance(sizes, bool) or (isinstance(sizes, int) and sizes < 1):
        raise ValueError(f"sizes must be an int >= 1 or a list of vocabulary sizes, got {sizes!r}")
    if not isinstance(sizes, int):
        sizes = list(sizes)
        if not sizes or not all(isinstance(s, int) and s > BYTE_TOKENS for s in sizes):
            raise ValueError(f"sizes must be vocabulary sizes above {BYTE_TOKENS}, got {sizes!r}")
    if (
        isinstance(undertrained_below, bool)
        or not isinstance(undertrained_below, int)
        or undertrained_below < 1
    ):
        raise ValueError(f"undertrained_below must be an int >= 1, got {undertrained_below!r}")
    if isinstance(alpha, bool) or not isinstance(alpha, int | float) or not 0 <= alpha < math.inf:
        raise ValueError(f"alpha must be >= 0 and finite, got {alpha!r}")
    groups = [str(k) for k in heldout] if isinstance(heldout, Mapping) else []
    if reference is not None and reference not in groups:
        raise ValueError(
            f"reference group {reference!r} is not a group of the held-out text "
            f"(groups: {', '.join(groups) or 'none: give heldout as a dict name -> text'})"
        )
    for data in (train, heldout):
        for part in data.values() if isinstance(data, Mapping) else [data]:
            refuse_file_names(part)
    train, heldout = reusable(train), reusable(heldout)
    cfgs = parse_configs(configs, vocab_size)
    check_configs(cfgs, train)
    isolate = workers > 1 if processes is None else bool(processes)
    bar = isinstance(resolve_progress(progress), TqdmProgress)  # ImportError if asked, no tqdm

    recorded = provenance(train, heldout)
    recorded["configs"] = {c.label: c.kwargs for c in cfgs if c.kwargs is not None}
    started = time.perf_counter()
    per_config, heldouts = _count_once(cfgs, train, heldout, errors, workers, bar)
    counting_s = time.perf_counter() - started

    jobs = [
        Job(
            i,
            c,
            train,
            counts,
            tys,
            heldouts,
            heldout,
            sizes,
            float(alpha),
            reference,
            undertrained_below,
            errors,
            bar,
        )
        for i, (c, (counts, tys)) in enumerate(zip(cfgs, per_config, strict=True))
    ]
    if isolate:
        # The configurations that run at once share the cores for their own counting.
        share = max(1, available_cores() // max(1, min(workers, len(jobs))))
        for j in jobs:
            j.workers = share
    results = run_in_processes(jobs, workers) if isolate else [run(j, False) for j in jobs]

    rows: list[dict[str, Any]] = []
    for r in results:
        for row in r.rows:
            row["train_cpu_s"] = None
            row["peak_rss_mb"] = None
            row["error"] = None
        if r.rows:
            r.rows[-1]["train_cpu_s"] = r.cpu_s
            r.rows[-1]["peak_rss_mb"] = r.peak_rss_mb
        rows += r.rows
    return Comparison(
        rows,
        {r.label: r.tokenizer if r.error is None else None for r in results},
        {r.label: r.error for r in results if r.error is not None},
        {r.label: r.notes for r in results},
        groups,
        reference if reference is not None else (groups[0] if groups else None),
        float(alpha),
        counting_s,
        recorded,
    )


def _count_once(
    cfgs: Sequence[Config],
    data: object,
    heldout: object,
    errors: Errors,
    workers: int,
    bar: bool = False,
) -> tuple[list[tuple[Counted | None, dict[str, int] | None]], dict[Reading, HeldOut]]:
    """Count the training and held-out text once per reading: per configuration, the
    counts it trains on (``None``: it reads the data itself, or is trained already) and
    the training data's pieces it is measured against; and the held-out text, by reading."""
    counted: dict[Reading, Counted] = {}
    types: dict[Reading, dict[str, int]] = {}
    heldouts: dict[Reading, HeldOut] = {}
    per_config: list[tuple[Counted | None, dict[str, int] | None]] = []
    for c in cfgs:
        if c.tokenizer is not None:
            reading: Reading | None = Reading(
                c.tokenizer.pattern, tuple(c.tokenizer.special_tokens), c.tokenizer.unicode
            )
        else:
            assert c.kwargs is not None
            reading = reading_of(c.kwargs)
        if reading is None:
            per_config.append((None, None))
            continue
        if reading not in counted:
            counted[reading] = count_training(data, reading, errors, workers, bar)
            types[reading] = types_of(counted[reading])
            heldouts[reading] = read_heldout(heldout, reading, errors)
        shared = counted[reading] if c.tokenizer is None else None
        per_config.append((shared, types[reading]))
    return per_config, heldouts
