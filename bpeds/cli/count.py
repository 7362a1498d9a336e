"""``bpeds count``: count the pre-tokens of text files into a counts file (locally, resumably
or on a Dask cluster), or add counts files.
"""

from __future__ import annotations

import argparse
import glob
import os
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from bpeds.cli.common import (
    EXIT_OK,
    DataError,
    UsageError,
    add_command,
    add_unicode_option,
    check_new,
    errors_option,
    input_path,
    load_counts,
    note,
    pattern_arg,
    plural,
    unicode_arg,
)
from bpeds.tokenizer.counting import count, count_to_file
from bpeds.tokenizer.counts import sum_counts
from bpeds.tokenizer.io import InvalidTextError
from bpeds.tokenizer.pattern_safety import PatternTimeoutError


def _expand(items: Sequence[str]) -> list[Path]:
    """Input files: each item a file, or a glob (``*``, ``?``, ``[``, ``**``) that the shell
    did not expand (quoted, say), matched in sorted order."""
    out: list[Path] = []
    for item in items:
        if os.path.exists(item) or not any(c in item for c in "*?["):
            p = input_path(item)
            if p.is_dir():
                raise DataError(f"{item} is a directory; give the files in it (or a glob)")
            out.append(p)
            continue
        matches = sorted(m for m in glob.glob(item, recursive=True) if os.path.isfile(m))
        if not matches:
            raise DataError(f"no file matches {item!r}")
        out += map(Path, matches)
    return out


def run(args: argparse.Namespace) -> int:
    """Run ``bpeds count``: count the inputs (or add counts files) into a counts file; the
    exit status."""
    if not args.inputs and not args.add:
        raise UsageError("give at least one INPUT file (or counts files to add with --add)")
    if args.scheduler is not None and args.workers is not None:
        raise UsageError("--scheduler counts on the cluster's workers: drop --workers")
    if args.add and (args.max_memory is not None or args.min_count != 1 or args.resume):
        raise UsageError(
            "--add holds the counts in memory: drop --max-memory, --min-count and --resume"
        )
    if not args.inputs and (args.pattern is not None or args.special_token):
        raise UsageError(
            "--add alone adds counts files as they are: drop --pattern and --special-token"
        )
    output = Path(args.output)
    check_new([output], args.force)
    options: dict[str, Any] = {
        "pattern": "gpt4" if args.pattern is None else pattern_arg(args.pattern),
        "unicode": unicode_arg(args.unicode),
        "special_tokens": args.special_token or [],
        "workers": args.workers,
        "errors": args.errors,
        "max_memory": args.max_memory,
        "min_count": args.min_count,
        "spill_dir": args.spill_dir,
    }
    started = time.perf_counter()
    with _scheduler(args.scheduler) as client:
        if client is not None:
            options["executor"] = client
            options["workers"] = None
        files = [p.resolve() for p in _expand(args.inputs)] if client else _expand(args.inputs)
        data: Any = files
        try:
            if args.resume is not None:
                folder = Path(args.resume)
                folder.mkdir(parents=True, exist_ok=True)
                options["resume_dir"] = folder
                options["on_file"] = None if args.quiet else _FileProgress(files)
            elif client is None and not args.quiet and len(files) > 1:
                data = _reporting(files, _FileProgress(files))
            if not args.add:
                pieces, total = count_to_file(data, output, overwrite=args.force, **options)
            else:
                parts = [count(files, **options)] if files else []
                parts.append(load_counts(args.add))
                try:
                    summed = sum_counts(parts)
                except ValueError as exc:
                    raise DataError(str(exc)) from None
                summed.save(output, overwrite=args.force)
                pieces, total = len(summed), summed.total
        except (InvalidTextError, PatternTimeoutError, OSError, ImportError, DataError):
            raise
        except (ValueError, TypeError) as exc:  # count checks its arguments before reading
            raise UsageError(str(exc)) from None
    if not args.quiet:
        note(
            f"bpeds count: {plural(pieces, 'distinct piece')}, {total} in all, in "
            f"{time.perf_counter() - started:.1f} s; wrote {output}"
        )
    return EXIT_OK


def _reporting(files: Sequence[Path], progress: _FileProgress) -> Iterator[Path]:
    """``files``, calling ``progress`` for each one as the next is asked for (when it
    has been read: its last batch may still be counting)."""
    previous: Path | None = None
    for f in files:
        if previous is not None:
            progress(previous, previous.stat().st_size, False)
        yield f
        previous = f
    if previous is not None:
        progress(previous, previous.stat().st_size, False)


class _FileProgress:
    """Progress of a count across files on stderr: files and bytes done, rate, time left
    (a line at most every two seconds, and one at the end)."""

    def __init__(self, files: Sequence[Path]) -> None:
        self.files = len(files)
        self.bytes = sum(p.stat().st_size for p in files)
        self.done_files = self.done_bytes = self.skipped_bytes = 0
        self.start = self.last = time.perf_counter()

    def __call__(self, path: Path, size: int, skipped: bool) -> None:
        self.done_files += 1
        self.done_bytes += size
        if skipped:
            self.skipped_bytes += size
        now = time.perf_counter()
        if now - self.last < 2 and self.done_files < self.files:
            return
        self.last = now
        counted = self.done_bytes - self.skipped_bytes
        rate = counted / max(now - self.start, 1e-9)
        left = (self.bytes - self.done_bytes) / rate if rate > 0 else 0.0
        skipped_note = f" ({self.skipped_bytes / 1e6:.1f} MB done before)" * bool(
            self.skipped_bytes
        )
        note(
            f"bpeds count: {self.done_files}/{self.files} files, "
            f"{self.done_bytes / 1e6:.1f} of {self.bytes / 1e6:.1f} MB{skipped_note}, "
            f"{rate / 1e6:.1f} MB/s, about {left:.0f} s left"
        )


@contextmanager
def _scheduler(address: str | None) -> Iterator[Any]:
    """A ``distributed.Client`` of the Dask scheduler at ``address`` (None: no client).

    Its workers read the files, so the paths must be readable there."""
    if address is None:
        yield None
        return
    try:
        from distributed import Client
    except ImportError:
        raise ImportError(
            "--scheduler counts on a Dask cluster, but dask.distributed is not installed: "
            "pip install 'bpeds[dask]'"
        ) from None
    try:
        client = Client(address, timeout="30s")  # type: ignore[no-untyped-call, unused-ignore]
    except OSError as exc:
        raise DataError(f"cannot reach the Dask scheduler at {address}: {exc}") from None
    with client:
        yield client


def _size_arg(value: str) -> int:
    """A size in bytes: a number with an optional K, M, G, T or P suffix (powers of 1024),
    from 1 MiB to 1024 PiB."""
    text = value.strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    if text and text[-1] in "KMGTP":
        scale = 1024 ** ("KMGTP".index(text[-1]) + 1)
        text = text[:-1]
    try:
        number = float(text)
    except ValueError:
        number = -1
    if not (1 << 20) <= number * scale <= _MAX_SIZE:  # NaN, inf and 1e400 included
        raise argparse.ArgumentTypeError(
            f"expected a size from 1M to 1024P such as 512M or 4G, got {value!r}"
        )
    return int(number * scale)


#: The largest --max-memory: 1024 PiB, far beyond any machine (and a float's exact range).
_MAX_SIZE = 1 << 60


def register(sub: Any) -> None:
    """Add ``bpeds count`` and its options to the subcommands ``sub``."""
    c = add_command(
        sub,
        "count",
        "Count the pre-tokens of text files into a counts file, to train from later.",
        run,
    )
    c.add_argument(
        "inputs",
        nargs="*",
        metavar="INPUT",
        help="UTF-8 text files (.gz, .bz2, .xz and, with zstandard installed, .zst are "
        "decompressed); a quoted glob such as 'data/**/*.txt' is expanded here, sorted. "
        "Each file is one unit, as for train",
    )
    c.add_argument("-o", "--output", required=True, metavar="PATH", help="the counts file to write")
    c.add_argument(
        "--add",
        action="append",
        metavar="COUNTS",
        help="a counts file to add to the result (repeatable; after the INPUTs, in the "
        "order given): with no INPUT, merges counts files",
    )
    c.add_argument(
        "--pattern",
        metavar="P",
        help="split pattern: gpt2, gpt4, gpt4o, a regex, or none (default gpt4); training "
        "from the counts uses it",
    )
    add_unicode_option(c, "regex; count with 16.0 for the rustbpe and hf presets")
    c.add_argument(
        "--special-token",
        action="append",
        metavar="TEXT",
        help="a special token whose text is cut out of the data (repeatable); training from "
        "the counts makes these the special tokens",
    )
    c.add_argument(
        "--workers",
        type=int,
        metavar="N",
        help="local processes that split and count the text (default: the cores available)",
    )
    c.add_argument(
        "--scheduler",
        metavar="ADDRESS",
        help="count on a Dask cluster, e.g. tcp://10.0.0.1:8786 (needs bpeds[dask]); each "
        "file is read by the worker that counts it, so the paths must be readable there",
    )
    c.add_argument(
        "--max-memory",
        type=_size_arg,
        metavar="SIZE",
        help="keep the table being counted under SIZE (512M, 4G, ...): sorted runs spill to "
        "disk and are merged exactly at the end, and the file is written without holding all "
        "the counts (default: no limit)",
    )
    c.add_argument(
        "--spill-dir",
        metavar="DIR",
        help="where --max-memory spills its runs (default: the system's temporary directory)",
    )
    c.add_argument(
        "--resume",
        metavar="DIR",
        help="make the count resumable: each file's counts are kept in DIR as soon as it is "
        "counted, and running the same command again skips the files done (the parts are "
        "deleted once the output is written)",
    )
    c.add_argument(
        "--min-count",
        type=int,
        default=1,
        metavar="N",
        help="leave out pieces counted fewer than N times in all: smaller counts, but merges "
        "made from the pairs inside those pieces can change (default 1: keep every piece)",
    )
    errors_option(c)
    c.add_argument("--force", action="store_true", help="replace the output file if it exists")
    c.add_argument("-q", "--quiet", action="store_true", help="print no summary")
