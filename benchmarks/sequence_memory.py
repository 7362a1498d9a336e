"""Peak memory of sequence-mode training per byte of input (the minbpe presets).

Usage::

    python benchmarks/sequence_memory.py --bytes 1000000 --preset minbpe-basic --vocab 1256

Trains on the first ``--bytes`` bytes of ``tests/data/taylorswift.txt`` repeated, in this
process, and prints the growth of the peak resident set size (``ru_maxrss``) divided by the
input's UTF-8 bytes, the training time, and a checksum of the merges (equal checksums: equal
merges). Run each configuration in a fresh process: ``ru_maxrss`` never goes down.
"""

from __future__ import annotations

import argparse
import hashlib
import resource
import time
from pathlib import Path

from bpeds.tokenizer.training import train

DATA = Path(__file__).resolve().parent.parent / "tests" / "data" / "taylorswift.txt"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bytes", type=int, default=1_000_000, help="input size (characters)")
    parser.add_argument(
        "--preset", default="minbpe-basic", choices=["minbpe-basic", "minbpe-regex"]
    )
    parser.add_argument("--vocab", type=int, default=1256)
    args = parser.parse_args()
    base = DATA.read_text(encoding="utf-8")
    text = (base * (args.bytes // len(base) + 1))[: args.bytes]
    size = len(text.encode("utf-8"))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    started = time.perf_counter()
    tok = train(text, args.vocab, preset=args.preset, progress=False)
    seconds = time.perf_counter() - started
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before  # KiB on Linux
    digest = hashlib.sha256(repr(tok.merges).encode()).hexdigest()[:12]
    print(
        f"{args.preset}: {size} input bytes, peak +{peak / 1024:.0f} MiB = "
        f"{peak * 1024 / size:.0f} bytes per input byte, {seconds:.2f} s, merges {digest}"
    )


if __name__ == "__main__":
    main()
