"""Helpers shared by the benchmarks: child processes, rusage, medians, machine, tables.

A benchmark that wants a clean peak-RSS figure runs each measurement in a fresh
child process (:func:`run_child`): the child prints one JSON object on its last
stdout line, including its own peak RSS from :func:`peak_rss_mib`; the parent
waits for it with :func:`os.wait4`, which returns that child's user and system
CPU time, and times it from outside.

Why the child measures its own peak RSS: on Linux, ``ru_maxrss`` of a child
(``os.wait4``, ``getrusage(RUSAGE_CHILDREN)``, even the child's own
``RUSAGE_SELF``) starts from the *parent's* peak RSS, because the kernel
carries the pre-``exec`` memory map's high-water mark over into the new
program's figure (and ``subprocess`` may ``vfork``, sharing the parent's map).
A parent that ever held 300 MB makes every child report at least 300 MB.
``VmHWM`` in ``/proc/self/status`` belongs to the memory map of the running
program only. Not handled: systems without ``/proc`` (the figure is ``None``)
and Windows (no ``os.wait4``).
"""

from __future__ import annotations

import csv
import datetime as _dt
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

__all__ = [
    "ChildResult",
    "ChildTimer",
    "cpu_seconds",
    "machine_info",
    "markdown_table",
    "median",
    "package_provenance",
    "peak_rss_mib",
    "run_child",
    "write_csv",
]


@dataclass(frozen=True)
class ChildResult:
    """One child process: what it reported, and what the parent measured around it.

    ``wall``: seconds from start to exit, seen by the parent (interpreter start,
    imports and the job); ``cpu``: the child's user + system CPU seconds, all
    threads; ``report``: the JSON object on the child's last stdout line;
    ``peak_rss_mib``: the child's own ``peak_rss_mib`` entry, if it reported one.
    """

    wall: float
    cpu: float
    report: dict[str, Any] = field(default_factory=dict)

    @property
    def peak_rss_mib(self) -> float | None:
        value = self.report.get("peak_rss_mib")
        return float(value) if isinstance(value, int | float) else None


def run_child(argv: Sequence[str], *, cwd: Path | None = None) -> ChildResult:
    """Run ``argv`` (e.g. ``[sys.executable, script, ...]``) and measure it.

    The child's stderr passes through; a non-zero exit raises ``RuntimeError``
    with its stdout. Runtime: the child's.
    """
    start = time.perf_counter()
    proc = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    out = proc.stdout.read()
    proc.stdout.close()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise RuntimeError(f"child {list(argv)} exited with {proc.returncode}:\n{out}")
    lines = [line for line in out.splitlines() if line.strip()]
    report = json.loads(lines[-1]) if lines else {}
    return ChildResult(wall=wall, cpu=usage.ru_utime + usage.ru_stime, report=report)


def peak_rss_mib() -> float | None:
    """This process's peak resident set size in MiB (``VmHWM``), ``None`` without ``/proc``.

    >>> (peak_rss_mib() or 1.0) > 0
    True
    """
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return None
    for line in status.splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024  # kB
    return None


def cpu_seconds() -> float:
    """CPU seconds of this process (all threads) plus those of its reaped child processes.

    A job that works in a process pool (``workers=2``) shuts the pool down
    before it returns, so its workers' CPU time is counted once they are reaped.
    """
    t = os.times()
    return time.process_time() + t.children_user + t.children_system


class ChildTimer:
    """Wall (``perf_counter``) and CPU (:func:`cpu_seconds`: threads and reaped children) marks.

    >>> t = ChildTimer()
    >>> t.mark("step")
    >>> sorted(t.report())
    ['cpu_step', 'wall_step']
    """

    def __init__(self) -> None:
        self._wall = self._wall0 = time.perf_counter()
        self._cpu = self._cpu0 = cpu_seconds()
        self._marks: dict[str, float] = {}

    def mark(self, name: str) -> None:
        """Record the time since the previous mark (or the start) as ``wall_name``/``cpu_name``."""
        wall, cpu = time.perf_counter(), cpu_seconds()
        self._marks[f"wall_{name}"] = wall - self._wall
        self._marks[f"cpu_{name}"] = cpu - self._cpu
        self._wall, self._cpu = wall, cpu

    def total(self, name: str) -> None:
        """Record the time since the start as ``wall_name``/``cpu_name``."""
        self._marks[f"wall_{name}"] = time.perf_counter() - self._wall0
        self._marks[f"cpu_{name}"] = cpu_seconds() - self._cpu0

    def finish(self) -> None:
        """End the job: its total as ``wall_job``/``cpu_job``, and the peak RSS so far.

        The peak RSS is taken here so that what a benchmark does after the job
        (listing every token's bytes, say) does not count.
        """
        self.total("job")
        rss = peak_rss_mib()
        if rss is not None:
            self._marks["peak_rss_mib"] = rss

    def report(self) -> dict[str, float]:
        return dict(self._marks)


def median(values: Iterable[float | None]) -> float | None:
    """The median of the values that are not ``None`` (``None`` if there are none).

    >>> median([3.0, None, 1.0, 2.0])
    2.0
    """
    present = [v for v in values if v is not None]
    return statistics.median(present) if present else None


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_info() -> dict[str, str]:
    """CPU model, core counts, load average, OS, Python and the date, for a results header."""
    try:
        usable = str(len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - not Linux
        usable = "?"
    load = " ".join(f"{x:.2f}" for x in os.getloadavg())
    return {
        "cpu": _cpu_model(),
        "cores": f"{os.cpu_count()} logical, {usable} usable",
        "load_average": load,
        "os": platform.platform(),
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "date": _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "command": " ".join([Path(sys.argv[0]).as_posix(), *sys.argv[1:]]),
    }


def package_provenance(module_file: str) -> str:
    """Where a package was imported from and, if that is a git checkout, its commit and state.

    ``module_file`` is the package's ``__file__``; "dirty" means uncommitted changes
    under the package's folder, which make a result hard to reproduce.
    """
    folder = Path(module_file).resolve().parent
    try:
        commit = subprocess.run(
            ["git", "-C", str(folder), "rev-parse", "--short=12", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
        changes = subprocess.run(
            ["git", "-C", str(folder), "status", "--porcelain", "--", "."],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return f"{folder} (not a git checkout)"
    return f"{folder} at {commit}" + (
        " with uncommitted changes (dirty)" if changes else " (clean)"
    )


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    """A GitHub markdown table; ``None`` cells print as empty.

    >>> print(markdown_table(["a", "b"], [[1, None]]))
    | a | b |
    | --- | --- |
    | 1 |  |
    """
    lines = ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |"]
    for row in rows:
        lines.append("| " + " | ".join("" if c is None else str(c) for c in row) + " |")
    return "\n".join(lines)


def write_csv(path: Path, rows: Sequence[Mapping[str, object]]) -> None:
    """Write dict rows (the union of their keys, in first-seen order) to ``path``."""
    fields: list[str] = []
    for row in rows:
        fields.extend(k for k in row if k not in fields)
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.DictWriter(f, fieldnames=fields)
        writer.writeheader()
        writer.writerows(rows)
