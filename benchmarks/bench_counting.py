"""Counting pre-tokens: local processes against a Dask LocalCluster, and the memory budget.

Every measurement is a fresh child process (``_common.run_child``), the configurations
alternating round by round; the table shows medians. What is timed is the count itself
(``bpeds.count`` or ``bpeds.tokenizer.training.count_to_file``), not interpreter start-up
or starting the cluster (reported apart). Peak RSS is the counting process's own
(``VmHWM``); for Dask the largest peak among the worker processes is reported in its own column.

    .venv/bin/python benchmarks/bench_counting.py                 # 3 rounds, 8 files, ~13 MB
    .venv/bin/python benchmarks/bench_counting.py --files 16 --repeat 5

Needs ``bpeds[dask]``. The corpus is made from ``tests/data/taylorswift.txt``: each file is
the text several times over, each copy with its own numbered words, so that files share most
pieces but not all (as shards of one corpus do).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _common import machine_info, markdown_table, median, peak_rss_mib, run_child

ROOT = Path(__file__).resolve().parent.parent
CONFIGS = ["local w=1", "local w=2", "dask 1 worker", "dask 2 workers", "budget 16M w=1"]


def _word(i: int) -> str:
    letters = []
    while True:
        i, r = divmod(i, 26)
        letters.append(chr(97 + r))
        if not i:
            return "".join(letters)


def make_corpus(folder: Path, files: int, copies: int, unique: int) -> list[Path]:
    text = (ROOT / "tests" / "data" / "taylorswift.txt").read_text(encoding="utf-8")
    paths = []
    for f in range(files):
        parts = [f"{text} copy{f}x{c} " for c in range(copies)]
        words = (_word(i) for i in range(f * unique, (f + 1) * unique))
        parts.append(" ".join(f"zq{w}" for w in words))
        path = folder / f"shard{f:03d}.txt"
        path.write_text("".join(parts), encoding="utf-8")
        paths.append(path)
    return paths


def job(config: str, paths: list[Path], out: Path) -> dict[str, object]:
    import bpeds
    from bpeds.tokenizer.training import count_to_file

    report: dict[str, object] = {}
    if config.startswith("dask"):
        from distributed import Client, LocalCluster

        n = 1 if "1 worker" in config else 2
        started = time.perf_counter()
        with (
            LocalCluster(  # type: ignore[no-untyped-call, unused-ignore]
                n_workers=n, threads_per_worker=1, processes=True, dashboard_address=":0"
            ) as cluster,
            Client(cluster) as client,  # type: ignore[no-untyped-call, unused-ignore]
        ):
            report["startup"] = time.perf_counter() - started
            t = time.perf_counter()
            counts = bpeds.count(paths, executor=client)
            report["seconds"] = time.perf_counter() - t

            def worker_peak() -> float:  # sent by value: workers cannot import _common
                for line in Path("/proc/self/status").read_text().splitlines():
                    if line.startswith("VmHWM:"):
                        return int(line.split()[1]) / 1024
                return 0.0

            report["worker_rss"] = max(client.run(worker_peak).values())
    elif config.startswith("budget"):
        t = time.perf_counter()
        pieces, _ = count_to_file(paths, out, max_memory=16 << 20, overwrite=True, workers=1)
        report["seconds"] = time.perf_counter() - t
        report["distinct"] = pieces
    else:
        t = time.perf_counter()
        counts = bpeds.count(paths, workers=2 if "w=2" in config else 1)
        report["seconds"] = time.perf_counter() - t
    if "distinct" not in report:
        report["distinct"] = len(counts)
    report["peak_rss_mib"] = peak_rss_mib()
    return report


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--files", type=int, default=8)
    parser.add_argument("--copies", type=int, default=6, help="copies of the text per file")
    parser.add_argument(
        "--unique", type=int, default=40000, help="words per file seen nowhere else"
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", action="append", choices=CONFIGS, help="these rows only")
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--dir", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        folder = Path(args.dir)
        paths = sorted(folder.glob("shard*.txt"))
        print(json.dumps(job(args.job, paths, folder / "out.counts")))
        return
    with tempfile.TemporaryDirectory(prefix="bpeds-bench-counting-") as d:
        paths = make_corpus(Path(d), args.files, args.copies, args.unique)
        size = sum(p.stat().st_size for p in paths)
        configs = [c for c in CONFIGS if not args.only or c in args.only or c == "local w=1"]
        results: dict[str, list[dict[str, object]]] = {c: [] for c in configs}
        for _ in range(args.repeat):
            for config in configs:
                child = run_child([sys.executable, __file__, "--job", config, "--dir", d], cwd=ROOT)
                results[config].append(child.report)
        distinct = {c: {r["distinct"] for r in rs} for c, rs in results.items()}
        assert len(set().union(*distinct.values())) == 1, distinct
    base = median(float(r["seconds"]) for r in results["local w=1"])  # type: ignore[arg-type]
    rows = []
    for config in configs:
        secs = median(float(r["seconds"]) for r in results[config])  # type: ignore[arg-type]
        rss = median(r.get("peak_rss_mib") for r in results[config])  # type: ignore[misc]
        start = median(r.get("startup") for r in results[config])  # type: ignore[misc]
        workers_rss = median(r.get("worker_rss") for r in results[config])  # type: ignore[misc]
        assert secs is not None
        assert base is not None
        rows.append(
            [
                config,
                f"{secs:.2f}",
                f"{size / secs / 1e6:.1f}",
                f"{secs / base:.2f}x",
                "" if rss is None else f"{rss:.0f}",
                "" if workers_rss is None else f"{workers_rss:.0f}",
                "" if start is None else f"{start:.1f}",
            ]
        )
    info = machine_info()
    pieces = next(iter(distinct["local w=1"]))
    print(
        f"{len(paths)} files, {size / 1e6:.1f} MB, {pieces} distinct pieces, "
        f"medians of {args.repeat} rounds"
    )
    print(f"{info['cpu']}; {info['cores']}; load {info['load_average']}; {info['date']}")
    header = [
        "counting",
        "seconds",
        "MB/s",
        "time / local w=1",
        "peak RSS MiB",
        "largest worker peak RSS MiB",
        "cluster start s",
    ]
    print(markdown_table(header, rows))


if __name__ == "__main__":
    main()
