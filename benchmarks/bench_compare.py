"""What measuring costs in bpeds.compare: a 32,768-token tokenizer at 8 sizes on 1 MB.

Usage::

    python benchmarks/bench_compare.py benchmarks/corpora [--repeat 5]

Trains one tokenizer (Frequency, GPT-4 pattern, 32,768 tokens) on ``scale/en_8mb.txt``
(untimed), then, ``--repeat`` times, reads and counts ``en_heldout.txt`` (1 MB) and
measures the tokenizer at 8 vocabulary sizes (all its merges, half, a quarter, ...) as
:func:`bpeds.compare` does, and prints the median CPU seconds of each part with the machine,
its load and the date. The under-trained count (one more encoding, of the training data's
distinct pre-tokens, at the full size) is timed on its own.
"""

from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import time
from pathlib import Path

from bpeds.comparison.configs import Reading
from bpeds.comparison.metrics import evaluate, read_heldout
from bpeds.comparison.runs import count_training, types_of
from bpeds.tokenizer.training import train


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("corpora", type=Path)
    ap.add_argument("--repeat", type=int, default=5)
    args = ap.parse_args()
    tok = train(args.corpora / "scale/en_8mb.txt", 32768)
    read: list[float] = []
    measure: list[float] = []
    reading = Reading(tok.pattern, (), tok.unicode)
    for _ in range(args.repeat):
        t0 = time.process_time()
        heldout = read_heldout(args.corpora / "en_heldout.txt", reading, "strict")
        t1 = time.process_time()
        rows = evaluate("f", tok, heldout, 8, 2.5, None, None, 1)
        t2 = time.process_time()
        read.append(t1 - t0)
        measure.append(t2 - t1)
    types = types_of(count_training(args.corpora / "scale/en_8mb.txt", reading, "strict", 1))
    t0 = time.process_time()
    evaluate("f", tok, heldout, [32768], 2.5, None, types, 1)
    t1 = time.process_time()
    total = [a + b for a, b in zip(read, measure, strict=True)]
    print(f"sizes: {[r['vocab_size'] for r in rows]}")
    print(
        f"median of {args.repeat}: read and count {statistics.median(read):.2f} CPU-s, "
        f"8 sizes {statistics.median(measure):.2f} CPU-s, total {statistics.median(total):.2f} "
        f"CPU-s (min {min(total):.2f}, max {max(total):.2f})"
    )
    print(f"full size with the under-trained count: {t1 - t0:.2f} CPU-s ({len(types)} pre-tokens)")
    print(
        f"{platform.platform()}, Python {platform.python_version()}, {os.cpu_count()} cores, "
        f"load {os.getloadavg()[0]:.1f}, {datetime.date.today().isoformat()}"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
