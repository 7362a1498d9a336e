"""A user's score with and without the declarations it can make (``user_scores.py``).

Usage::

    python benchmarks/bench_user_scores.py [--merges 4000] [--repeat 5] [--file PATH]

Each run is a fresh process: the file (default ``corpora/en13.txt``, its first 2 MB) is
split with the GPT-2 pattern and counted (untimed), then the driver trains ``--merges``
merges with ``Dice`` (declared) or ``UndeclaredDice`` (``Declaration(Dependency.PARTS)``),
alternating; the table gives each one's median CPU seconds, the median ratio, and checks
that both made the same merges.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

CHILD = r"""
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
from collections import Counter
from bpeds.corpus import TypeCorpus
from bpeds.driver import MergeDriver
from bpeds.tokenizer.pretokenize import split
import user_scores
warnings.simplefilter("ignore")
spec = json.loads(sys.argv[2])
text = open(spec["file"], encoding="utf-8").read()[: spec["chars"]]
pieces = Counter(split(text, "gpt2"))
corpus = TypeCorpus.from_counts(pieces.items())
score = getattr(user_scores, spec["score"])()
t0 = time.process_time()
records = MergeDriver(corpus, spec["merges"], score=score).run()
cpu = time.process_time() - t0
print(json.dumps({"cpu": cpu, "merges": [r.pair for r in records]}))
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--merges", type=int, default=4000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--file", default=str(HERE / "corpora" / "en13.txt"))
    ap.add_argument("--chars", type=int, default=2_000_000)
    args = ap.parse_args()
    names = ("Dice", "UndeclaredDice")
    times: dict[str, list[float]] = {n: [] for n in names}
    ratios, merges = [], set()
    env = dict(os.environ, PYTHONPATH=str(HERE.parent), PYTHONHASHSEED="0")
    for i in range(args.repeat):
        got = {}
        for name in names if i % 2 == 0 else names[::-1]:
            spec = {"file": args.file, "chars": args.chars, "merges": args.merges, "score": name}
            out = subprocess.run(
                [sys.executable, "-c", CHILD, str(HERE), json.dumps(spec)],
                env=env,
                capture_output=True,
                text=True,
                check=True,
            ).stdout
            got[name] = json.loads(out.strip().splitlines()[-1])
            times[name].append(got[name]["cpu"])
            merges.add(json.dumps(got[name]["merges"]))
        ratios.append(got["UndeclaredDice"]["cpu"] / got["Dice"]["cpu"])
    if len(merges) != 1:
        raise SystemExit("the two forms made different merges")
    print(
        f"{args.merges} merges on the first {args.chars:,} characters of {args.file}, "
        f"{args.repeat} runs each, {os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
    )
    for name in names:
        ts = times[name]
        print(
            f"{name:<16} median {statistics.median(ts):.3f} CPU-s "
            f"(range {min(ts):.3f}-{max(ts):.3f})"
        )
    print(f"undeclared / declared: {statistics.median(ratios):.2f}x; same merges: yes")


if __name__ == "__main__":
    main()
