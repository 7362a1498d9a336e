"""The large run: count a ~1.2 GB corpus under a memory budget, train, and the peers beside it.

Every step is a fresh child process (``_common.run_child``), one after the other, so that
each peak RSS is that process's own (``VmHWM``) and no step shares the cores with another:

- ``count``: ``bpeds.tokenizer.training.count_to_file(corpus, counts, max_memory=BUDGET)`` with
  ``workers`` counting processes (default: the cores available); the counting process's
  peak RSS and, separately, the largest peak among its worker processes;
- ``train``: ``bpeds.train(Counts.load(counts), VOCAB)`` (the merge phase, one process,
  tie rule ``smallest_ids`` as rustbpe's); the peak RSS with the counts loaded and at the end;
- ``rustbpe`` and ``hf``: the same file, pattern and vocabulary trained by rustbpe and by
  Hugging Face ``tokenizers`` (``BpeTrainer``), each in one call that counts and merges,
  both using every core; driven by ``jobs.py`` exactly as the benchmark suite drives them
  (the text read into Python and cut at exact split points; that text is part of the
  process's peak RSS);
- ``rustbpe-stream`` and ``hf-stream``: the same two trainers fed a stream: the file read
  64 KB at a time and cut at exact split points (as ``jobs.py`` cuts), so the harness holds
  one block, not the text; these are the peers' own memory;
- ``peer-input``: what the peers' harness holds before they start: the text read and cut
  as ``jobs.py`` does, nothing trained (its peak RSS is the part of theirs that is the
  harness, not the trainer);
- ``unbounded``: ``bpeds.count`` without a budget, checked equal to the budgeted counts
  file (same pieces, counts and order of first appearance);
- ``count-small``: ``count`` again under a budget small enough to spill (``--small-budget``,
  default 64M), its counts file checked byte-identical to the ``count`` step's.

Each counting step reports how many sorted runs it spilled to disk (the number of calls of
``SpillCounter``'s spill, wrapped in the child for this count only).

Each step appends its result to ``OUT/runs.jsonl``, so steps can be run in separate
invocations (``--only``); the table is printed from every run in that file. Merge lists
are written to ``OUT/merges-IMPL.hex`` and compared with rustbpe's.

    .venv/bin/python benchmarks/get_corpora.py benchmarks/corpora --large
    .venv/bin/python benchmarks/bench_large.py benchmarks/corpora/large/linux61_src.txt

Expect tens of minutes and several GB of memory (Hugging Face's trainer is the largest).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import resource
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from _common import (  # noqa: E402
    ChildTimer,
    machine_info,
    markdown_table,
    median,
    peak_rss_mib,
    run_child,
)

ROOT = HERE.parent
STEPS = [
    "count",
    "train",
    "rustbpe-stream",
    "hf-stream",
    "rustbpe",
    "hf",
    "peer-input",
    "unbounded",
    "count-small",
]
DEFAULT_STEPS = ["count", "train", "rustbpe-stream", "hf-stream", "unbounded", "count-small"]


def _size(text: str) -> int:
    """Bytes from ``"1G"``, ``"512M"``, ``"64K"`` or a plain number.

    >>> _size("1G"), _size("512M"), _size("1000")
    (1073741824, 536870912, 1000)
    """
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper()
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def _workers_peak() -> float | None:
    """The largest peak RSS (MiB) among this process's reaped children (its worker pool)."""
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    return peak or None


def _tokens(merges: list[tuple[int, int]]) -> list[bytes]:
    table = [bytes((b,)) for b in range(256)]
    for a, b in merges:
        table.append(table[a] + table[b])
    return table[256:]


def _count_spills() -> list[int]:
    """Wrap ``SpillCounter._spill`` to count the runs written; returns the one-item counter."""
    from bpeds.tokenizer.counts import SpillCounter

    spills = [0]
    spill = SpillCounter._spill

    def counted(self: SpillCounter) -> None:
        before = self.runs
        spill(self)
        spills[0] += self.runs - before

    SpillCounter._spill = counted  # type: ignore[method-assign]
    return spills


def _sha256(path: Path) -> str:
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def stream_pieces(path: Path, size: int = 1 << 16) -> Iterator[str]:
    """The text of ``path`` in pieces of about ``size`` characters, cut at exact split points.

    Reads ``size`` characters at a time and cuts the buffer as ``jobs.exact_pieces``
    does, keeping the last piece for the next block, so concatenated the pieces are
    the file, and each cut changes no GPT-2/GPT-4 split. Memory: O(size) (more only
    when a long stretch has no cut point).
    """
    from jobs import exact_pieces

    carry = ""
    with path.open(encoding="utf-8", newline="") as f:
        while block := f.read(size):
            pieces = exact_pieces(carry + block, size)
            carry = pieces.pop()
            yield from pieces
    if carry:
        yield carry


def job(step: str, opts: dict[str, Any]) -> dict[str, Any]:
    """Run one step in this (child) process; return its report."""
    corpus, out = Path(opts["corpus"]), Path(opts["out"])
    counts_path = out / "corpus.counts"
    report: dict[str, Any] = {}
    if step in ("count", "unbounded", "count-small"):
        import bpeds
        from bpeds.tokenizer.training import count_to_file

        spills = _count_spills()
        timer = ChildTimer()
        if step in ("count", "count-small"):
            small = step == "count-small"
            path = out / "corpus-small.counts" if small else counts_path
            distinct, total = count_to_file(
                corpus,
                path,
                overwrite=True,
                pattern=opts["pattern"],
                workers=opts["workers"],
                max_memory=opts["small_budget" if small else "budget"],
                spill_dir=out,
            )
            timer.finish()
            report["spilled_runs"] = spills[0]
            if small:
                report["same_file_as_count"] = _sha256(path) == _sha256(counts_path)
        else:
            counts = bpeds.count(corpus, pattern=opts["pattern"], workers=opts["workers"])
            timer.finish()
            distinct, total = len(counts), counts.total
            budgeted = bpeds.Counts.load(counts_path)
            # Equal counts, and equal order of first appearance (the leftmost tie reads it).
            report["equal_to_budgeted"] = counts == budgeted and list(counts) == list(budgeted)
        report.update(timer.report())
        report["distinct"], report["total"] = distinct, total
        report["peak_rss_workers_mib"] = _workers_peak()
    elif step in ("rustbpe-stream", "hf-stream"):
        import jobs

        impl = step.removesuffix("-stream")

        def streamed(spec: dict[str, Any]) -> Iterator[str]:
            return stream_pieces(Path(spec["file"]))

        jobs._peer_text = streamed  # type: ignore[assignment]
        spec = {
            "impl": impl,
            "file": str(corpus),
            "pattern": opts["pattern"],
            "vocab": opts["vocab"],
            "out": str(out / f"merges-{step}.hex"),
        }
        report.update(jobs.job_train(spec))
    elif step == "peer-input":
        from jobs import exact_pieces

        timer = ChildTimer()
        pieces = exact_pieces(corpus.read_text(encoding="utf-8"))
        timer.finish()
        report.update(timer.report())
        report["units"] = len(pieces)
    elif step == "train":
        import bpeds

        timer = ChildTimer()
        counts = bpeds.Counts.load(counts_path)
        timer.mark("load")
        report["peak_rss_loaded_mib"] = peak_rss_mib()
        report["distinct"] = len(counts)
        tok = bpeds.train(counts, opts["vocab"], tie="smallest_ids")
        timer.mark("merge")
        timer.finish()
        report.update(timer.report())
        tokens = _tokens(list(tok.merges))
        (out / "merges-bpeds.hex").write_text("".join(t.hex() + "\n" for t in tokens))
        report["merges"] = len(tokens)
        tok.save(out / "bpeds-tokenizer.json", overwrite=True)
    else:
        raise ValueError(f"unknown step {step!r}")
    return report


def run_step(step: str, opts: dict[str, Any]) -> dict[str, Any]:
    """Run ``step`` in a fresh child and return the parent's and the child's figures."""
    out = Path(opts["out"])
    load_before = " ".join(f"{x:.2f}" for x in os.getloadavg())
    started = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime())
    if step in ("rustbpe", "hf"):
        spec = {
            "job": "train",
            "impl": step,
            "file": str(opts["corpus"]),
            "pattern": opts["pattern"],
            "vocab": opts["vocab"],
            "out": str(out / f"merges-{step}.hex"),
        }
        argv = [sys.executable, str(HERE / "jobs.py"), json.dumps(spec)]
    else:
        argv = [sys.executable, __file__, "--job", step, "--opts", json.dumps(opts)]
    try:
        child = run_child(argv, cwd=ROOT)
    except RuntimeError as exc:
        return {"step": step, "failed": str(exc)[-2000:], "started": started}
    return {
        "step": step,
        "started": started,
        "load_before": load_before,
        "load_after": " ".join(f"{x:.2f}" for x in os.getloadavg()),
        "wall": child.wall,
        "cpu": child.cpu,
        **child.report,
    }


def _fmt(x: float | None, spec: str = ".0f") -> str:
    return "" if x is None else format(x, spec)


def table(runs: list[dict[str, Any]], size: int) -> str:
    rows = []
    for step in STEPS:
        mine = [r for r in runs if r["step"] == step and "failed" not in r]
        if not mine:
            continue
        wall, cpu = median(r["wall"] for r in mine), median(r["cpu"] for r in mine)
        rss = median(r.get("peak_rss_mib") for r in mine)
        workers = median(r.get("peak_rss_workers_mib") for r in mine)
        assert wall is not None
        assert cpu is not None
        rows.append(
            [
                step,
                len(mine),
                _fmt(wall, ".0f"),
                _fmt(cpu, ".0f"),
                "" if step == "train" else _fmt(size / wall / 1e6, ".2f"),
                _fmt(rss),
                _fmt(workers),
            ]
        )
    header = ["step", "runs", "wall s", "CPU s", "MB/s", "peak RSS MiB", "workers' peak MiB"]
    return markdown_table(header, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", nargs="?", type=Path, help="the large text file")
    parser.add_argument("--out", type=Path, default=HERE / "results" / "large")
    parser.add_argument("--vocab", type=int, default=32768)
    parser.add_argument("--pattern", default="gpt4")
    parser.add_argument("--budget", default="1G", help="max_memory of the count (1G, 512M...)")
    parser.add_argument("--small-budget", default="64M", help="max_memory of the count-small step")
    parser.add_argument("--workers", type=int, help="counting processes (default: all cores)")
    parser.add_argument("--only", action="append", choices=STEPS, help="these steps only")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--report", action="store_true", help="print the table from OUT only")
    parser.add_argument("--job", help=argparse.SUPPRESS)
    parser.add_argument("--opts", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.job:
        print(json.dumps(job(args.job, json.loads(args.opts))))
        return
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    log = out / "runs.jsonl"
    if not args.report:
        if args.corpus is None:
            parser.error("the corpus file is required")
        opts = {
            "corpus": str(args.corpus.resolve()),
            "out": str(out),
            "vocab": args.vocab,
            "pattern": args.pattern,
            "budget": _size(args.budget),
            "small_budget": _size(args.small_budget),
            "workers": args.workers,
        }
        (out / "meta.json").write_text(json.dumps({**machine_info(), **opts}, indent=1))
        for _ in range(args.repeat):
            for step in args.only or DEFAULT_STEPS:
                result = run_step(step, opts)
                with log.open("a", encoding="utf-8") as f:
                    f.write(json.dumps(result) + "\n")
                print(json.dumps(result), flush=True)
    runs = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines() if line]
    meta = json.loads((out / "meta.json").read_text())
    size = Path(meta["corpus"]).stat().st_size
    print(f"\n{size / 1e6:.0f} MB, pattern {meta['pattern']}, vocabulary {meta['vocab']}")
    print(f"{meta['cpu']}; {meta['cores']}; {meta['date']}")
    print(table(runs, size))
    for r in runs:
        if "failed" in r:
            print(f"{r['step']} failed: {r['failed'][-300:]}")
    digests = {}
    for impl in ("bpeds", "rustbpe", "hf", "rustbpe-stream", "hf-stream"):
        path = out / f"merges-{impl}.hex"
        if path.exists():
            digests[impl] = path.read_text().split()
    if "rustbpe" in digests:
        for impl, merges in digests.items():
            if impl != "rustbpe":
                ref = digests["rustbpe"]
                same = next(
                    (i for i, (a, b) in enumerate(zip(merges, ref, strict=False)) if a != b),
                    min(len(merges), len(ref)),
                )
                print(f"{impl}: {len(merges)} merges, first {same} equal to rustbpe's")


if __name__ == "__main__":
    main()
