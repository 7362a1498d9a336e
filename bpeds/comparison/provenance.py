"""Where a comparison's numbers come from: its data (with checksums), bpeds, the date and
the machine, as :class:`~bpeds.comparison.Comparison` records them for ``report.md``.

:func:`describe_data` names every file of the training or held-out data with its size
and SHA-256, and sums up text given in memory (how many strings, characters, and the
SHA-256 of their UTF-8 bytes, each string followed by a NUL byte), so a reader can check
that the same data gives the same table. :func:`machine` records what the timings ran
on. Nothing here changes a result.
"""

from __future__ import annotations

import datetime
import hashlib
import importlib.metadata
import os
import platform
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from bpeds.tokenizer.pieces import available_cores

__all__ = ["describe_data", "file_sha256", "machine", "provenance"]


def file_sha256(path: str | os.PathLike[str]) -> str:
    """The SHA-256 of a file's bytes, in hex, read 1 MiB at a time. O(file size)."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while block := f.read(1 << 20):
            h.update(block)
    return h.hexdigest()


def describe_data(data: object) -> list[dict[str, Any]]:
    """One entry per file of ``data`` (``{"file", "bytes", "sha256"}``) and one for the
    text given in memory (``{"strings", "characters", "sha256"}``), group by group
    (``"group"`` set) for a mapping; other sources (a dataset of records, say) are
    described by their ``repr``.

    >>> describe_data(["ab", "c"])
    [{'strings': 2, 'characters': 3, 'sha256': '...'}]

    O(total size): every file and string is hashed once.
    """
    if isinstance(data, Mapping):
        out: list[dict[str, Any]] = []
        for name, part in data.items():
            out += [{"group": str(name), **d} for d in describe_data(part)]
        return out
    items: Iterable[object] = [data] if isinstance(data, str | os.PathLike) else data  # type: ignore[assignment]
    if not isinstance(data, list | tuple | str | os.PathLike):
        return [{"source": repr(data)}]
    files: list[dict[str, Any]] = []
    h = hashlib.sha256()
    strings = chars = 0
    for item in items:
        if isinstance(item, os.PathLike):
            path = Path(item)
            files.append(
                {"file": str(path), "bytes": path.stat().st_size, "sha256": file_sha256(path)}
            )
        elif isinstance(item, str):
            strings += 1
            chars += len(item)
            h.update(item.encode("utf-8", "surrogatepass") + b"\0")
        else:
            files.append({"source": repr(item)})
    if strings:
        files.append({"strings": strings, "characters": chars, "sha256": h.hexdigest()})
    return files


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def machine() -> dict[str, Any]:
    """What the comparison ran on: CPU model, cores (those this process may use, and the
    machine's), operating system, Python and bpeds versions."""
    try:
        version = importlib.metadata.version("bpeds")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - run from a checkout
        version = "unknown (not installed)"
    return {
        "bpeds": version,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "cpu": _cpu_model(),
        "cores_available": available_cores(),
        "cores": os.cpu_count(),
    }


def provenance(train: object, heldout: object) -> dict[str, Any]:
    """Everything :func:`describe_data` and :func:`machine` record, with the date (UTC)."""
    now = datetime.datetime.now(datetime.UTC).replace(microsecond=0)
    return {
        "date": now.isoformat(),
        "machine": machine(),
        "train": describe_data(train),
        "heldout": describe_data(heldout),
    }
