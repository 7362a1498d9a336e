"""The merge phase of two bpeds trees side by side: a git revision against the working tree.

Usage::

    python benchmarks/ab_merge.py --base REV [--repeat 5] [--only NAME ...] [--full]

``REV``'s ``bpeds/`` is exported (``git archive``) to a temporary folder. Every job runs
in a fresh child process, once with ``REV`` first on ``PYTHONPATH`` and once with the
working tree, alternating (the order flips every repetition), on inputs prepared once
(workload 2's pieces, ``en13.txt`` split with the GPT-2 pattern; line ``i`` in group
``i % 4`` for the per-group score; ``taylorswift.txt`` for sequence mode; the counts of
``mixed.txt``, GPT-4 pattern, for ``mixed_counts``, trained by ``bpeds.train``). Each child
times the driver (corpus built, selection structure, merge loop) with ``process_time``
and reports a digest of its merges; the two trees' digests must agree. The table gives
each tree's median CPU seconds and the median of the per-repetition ratios (new ÷ base).

Without ``--full`` the slow scores stop early (``QUICK`` below): enough merges for a
ratio, not the published vocabulary.
"""

from __future__ import annotations

import argparse
import json
import os
import pickle
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPORA = HERE / "corpora"
CACHE = HERE / "results" / "ab_inputs"

VOCAB = 32_768
#: (name, input, score spec, merges with --full, merges without)
JOBS: tuple[tuple[str, str, Any, int, int], ...] = (
    ("frequency", "en13", "frequency", VOCAB - 256, VOCAB - 256),
    ("length_weighted", "en13", {"name": "length_weighted", "alpha": 1}, VOCAB - 256, 16_384),
    ("user", "en13", "ab_user:length_weighted", VOCAB - 256, 16_384),
    ("pmi", "en13", {"name": "pmi", "min_count": 2}, VOCAB - 256, 8_192),
    ("wordpiece", "en13", {"name": "wordpiece", "min_count": 2}, VOCAB - 256, 8_192),
    ("likelihood_gain", "en13", {"name": "likelihood_gain", "min_count": 2}, VOCAB - 256, 4_096),
    ("group_frequency", "en13g4", "group_frequency", VOCAB - 256, 8_192),
    ("npmi", "en13", {"name": "npmi", "min_count": 2}, VOCAB - 256, 4_096),
    ("seq_basic", "taylor_basic", "frequency", 10_000 - 256, 10_000 - 256),
    ("seq_regex", "taylor_regex", "frequency", 10_000 - 256, 10_000 - 256),
    # the whole job: bpeds.train on the file (read, split, count, merge), one process
    ("whole_job", "en13_file", "frequency", VOCAB, VOCAB),
    # the merge phase at scale: bpeds.train from the counts of mixed.txt (GPT-4 pattern,
    # ~800,000 distinct pieces), the counts file loaded before the clock starts
    ("mixed_counts", "mixed_counts", "frequency", VOCAB, VOCAB),
)

CHILD = r"""
import gc, hashlib, json, pickle, sys, time
spec = json.loads(sys.argv[1])
sys.path.insert(0, spec["bench"])
from bpeds.corpus import SequenceCorpus, TypeCorpus
from bpeds.driver import MergeDriver
import types, bpeds.scoring as scoring
# The user's score (benchmarks/user_scores.py), declared as each tree's API has it.
def length_weighted(count, left, right, stats):
    return count * (stats.length(left) + stats.length(right))
if hasattr(scoring, "Declaration"):
    declared = dict(priority="int", count_fall_raises=False)
else:
    declared = dict(integer=True, count_fall_raises=False)
user = types.ModuleType("ab_user")
user.length_weighted = scoring.score_function(scoring.Dependency.PAIR, **declared)(length_weighted)
sys.modules["ab_user"] = user
if spec["input"].endswith(".counts"):
    import bpeds
    counts = bpeds.Counts.load(spec["input"])
    gc.collect()
    t0 = time.process_time()
    tok = bpeds.train(counts, spec["merges"], workers=1)
    cpu = time.process_time() - t0
    h = hashlib.sha256(repr(tok.merges).encode())
    print(json.dumps({"cpu": cpu, "digest": h.hexdigest()[:16], "merges": len(tok.merges)}))
    sys.exit(0)
if spec["input"].endswith(".txt"):
    import bpeds
    from pathlib import Path
    t0 = time.process_time()
    tok = bpeds.train(Path(spec["input"]), spec["merges"], pattern="gpt2", workers=1)
    cpu = time.process_time() - t0
    h = hashlib.sha256(repr(tok.merges).encode())
    print(json.dumps({"cpu": cpu, "digest": h.hexdigest()[:16], "merges": len(tok.merges)}))
    sys.exit(0)
with open(spec["input"], "rb") as f:
    kind, items = pickle.load(f)
gc.collect()
t0 = time.process_time()
if kind == "type":
    corpus = TypeCorpus.from_counts(items)
    tie = "smallest_ids"
else:
    corpus = SequenceCorpus(items)
    tie = "leftmost"
d = MergeDriver(corpus, spec["merges"], score=spec["score"], tie=tie)
records = d.run()
cpu = time.process_time() - t0
h = hashlib.sha256()
for r in records:
    h.update(repr((r.pair, r.new_id, r.count)).encode())
print(json.dumps({"cpu": cpu, "digest": h.hexdigest()[:16], "merges": len(records)}))
"""


def prepare() -> dict[str, Path]:
    """Split the inputs once (with the working tree's bpeds) and cache them."""
    CACHE.mkdir(parents=True, exist_ok=True)
    out = {
        name: CACHE / f"{name}.pickle"
        for name in ("en13", "en13g4", "taylor_basic", "taylor_regex")
    }
    files = {"en13_file": CORPORA / "en13.txt", "mixed_counts": CACHE / "mixed.counts"}
    if (CORPORA / "mixed.txt").exists() and not files["mixed_counts"].exists():
        sys.path.insert(0, str(ROOT))
        import bpeds

        bpeds.count(CORPORA / "mixed.txt", workers=1).save(files["mixed_counts"])
    if all(p.exists() for p in out.values()):
        return {**out, **files}
    sys.path.insert(0, str(ROOT))
    from collections import Counter

    from bpeds.tokenizer.pretokenize import split

    text = (CORPORA / "en13.txt").read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    pieces: Counter[bytes] = Counter()
    grouped: Counter[tuple[bytes, int]] = Counter()
    for i, line in enumerate(lines):
        for p in split(line, "gpt2"):
            b = p if isinstance(p, bytes) else p.encode("utf-8")
            pieces[b] += 1
            grouped[(b, i % 4)] += 1
    with open(out["en13"], "wb") as f:
        pickle.dump(("type", list(pieces.items())), f)
    with open(out["en13g4"], "wb") as f:
        pickle.dump(("type", [(b, n, g) for (b, g), n in grouped.items()]), f)
    taylor = (CORPORA / "taylorswift.txt").read_text(encoding="utf-8")
    with open(out["taylor_basic"], "wb") as f:
        pickle.dump(("sequence", [taylor.encode("utf-8")]), f)
    gpt4 = [p if isinstance(p, bytes) else p.encode("utf-8") for p in split(taylor, "gpt4")]
    with open(out["taylor_regex"], "wb") as f:
        pickle.dump(("sequence", gpt4), f)
    return {**out, **files}


def export(rev: str, dest: Path) -> Path:
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "bpeds"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return dest


def child(tree: Path, spec: dict[str, Any], instructions: bool = False) -> dict[str, Any]:
    """Run one job in a fresh process; with ``instructions``, under callgrind, whose
    instruction count (the run's minus the same child's with no merges) replaces the
    CPU seconds: the same for the same code and input, whatever the machine's load."""
    env = dict(os.environ, PYTHONPATH=str(tree), PYTHONHASHSEED="0")
    cmd = [sys.executable, "-c", CHILD, json.dumps(spec)]
    if instructions:
        cmd = ["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null", *cmd]
    res = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=tempfile.gettempdir())
    if res.returncode:
        raise SystemExit(f"child failed ({tree}):\n{res.stderr}")
    out: dict[str, Any] = json.loads(res.stdout.strip().splitlines()[-1])
    if instructions:
        found = re.search(r"Collected : (\d+)", res.stderr)
        if found is None:
            raise SystemExit(f"no instruction count from callgrind:\n{res.stderr}")
        ir = int(found.group(1)) / 1e9
        if spec["merges"]:
            ir -= child(tree, {**spec, "merges": 0}, True)["cpu"]
        out["cpu"] = ir
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", required=True, help="a git revision (its bpeds/ is exported)")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--full", action="store_true", help="every score to the full vocabulary")
    ap.add_argument(
        "--instructions",
        action="store_true",
        help="count instructions under callgrind (billions) instead of CPU seconds",
    )
    ap.add_argument("--merges", type=int, help="every job's merges (overrides the table)")
    args = ap.parse_args()
    inputs = prepare()
    with tempfile.TemporaryDirectory() as tmp:
        base = export(args.base, Path(tmp))
        trees = {"base": base, "new": ROOT}
        print(
            f"base {args.base}, new: the working tree; {args.repeat} alternating runs, "
            f"{os.cpu_count()} cores, load {os.getloadavg()[0]:.2f}"
        )
        unit = "Gi" if args.instructions else "s"
        print(
            f"{'job':<16} {'merges':>7} {'base ' + unit:>8} {'new ' + unit:>8} {'new/base':>9}"
            "  spread"
        )
        for name, inp, score, full, quick in JOBS:
            if args.only and name not in args.only:
                continue
            if not Path(inputs[inp]).exists():
                print(f"{name:<16} skipped: no {inputs[inp]} (benchmarks/get_corpora.py makes it)")
                continue
            spec = {
                "input": str(inputs[inp]),
                "score": score,
                "merges": args.merges or (full if args.full else quick),
                "bench": str(HERE),
            }
            times: dict[str, list[float]] = {"base": [], "new": []}
            ratios = []
            digests = set()
            for i in range(args.repeat):
                order = ("base", "new") if i % 2 == 0 else ("new", "base")
                got = {t: child(trees[t], spec, args.instructions) for t in order}
                for t, r in got.items():
                    times[t].append(r["cpu"])
                    digests.add(r["digest"])
                ratios.append(got["new"]["cpu"] / got["base"]["cpu"])
            if len(digests) != 1:
                raise SystemExit(f"{name}: the two trees' merges differ: {digests}")
            mb, mn = statistics.median(times["base"]), statistics.median(times["new"])
            spread = f"{min(ratios):.3f}-{max(ratios):.3f}"
            print(
                f"{name:<16} {spec['merges']:>7} {mb:>8.3f} {mn:>8.3f} "
                f"{statistics.median(ratios):>9.3f}  {spread}",
                flush=True,
            )


if __name__ == "__main__":
    main()
