"""The benchmark suite: one command for every workload (see benchmarks/README.md).

Usage::

    python benchmarks/get_corpora.py benchmarks/corpora  # once (see get_corpora.py for --shared)
    python benchmarks/run.py --quick                   # smoke test of everything, ~2 minutes
    python benchmarks/run.py --publish                 # the full suite (~25 min), then the
                                                       # tables in docs/performance.md + plots
    python benchmarks/run.py --only wl2 --only wl5 --repeat 5   # some workloads
    python benchmarks/run.py --snapshot HEAD ...       # bpeds exported from a commit
    python benchmarks/run.py --profile wl2-en13 "bpeds w=1"     # cProfile one job
    python benchmarks/run.py --list                    # the workloads and their runs

Method: every repetition of every implementation is a fresh child process
(``jobs.py`` or ``ablations/type_trainer.py`` with a JSON spec); within a
repetition the implementations of a workload run back to back, in an order
rotated every repetition. The child times its job (wall and CPU, CPU
including threads and reaped worker processes) and reports its own peak RSS
(``VmHWM``); the parent adds the whole process's wall and CPU time and the
1-minute load average at the start. Ratios are medians of the
within-repetition ratios (the two ran back to back, under about the same
load). Merge lists (workloads 1-4, 8) and encodings (workload 5) are compared
within each repetition.

Outputs in ``--out`` (default ``benchmarks/results/latest``): ``runs.csv``
(every run), ``summary.csv`` (medians per implementation), ``ratios.csv``
(subject / peer), ``targets.csv``, ``meta.json`` (command, machine, Python,
date, load). ``--publish`` also copies them to ``benchmarks/published/`` and
runs ``report.py`` (tables in ``docs/performance.md``, plots in ``docs/img/``).
A workload whose corpus file is missing (the Proust text without
``--shared``) is skipped and listed as such.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from _common import ChildResult, machine_info, median, run_child, write_csv
from suite import TARGETS, Impl, Target, Workload, workloads

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_CORPORA = HERE / "corpora"
DEFAULT_OUT = HERE / "results" / "latest"
PUBLISHED = HERE / "published"

#: Metrics summarised per implementation (report keys of the child, plus the parent's).
METRICS = (
    "wall_job", "cpu_job", "wall_prep", "cpu_prep", "wall_merge", "cpu_merge",
    "process_wall", "process_cpu", "peak_rss_mib", "peak_rss_workers_mib",
    "heldout_bytes_per_token", "load1",
)  # fmt: skip
RATIO_METRICS = ("wall_job", "cpu_job", "peak_rss_mib", "process_wall")


@dataclass
class Run:
    """One child process of one workload."""

    workload: str
    impl: str
    rep: int
    order: int
    load1: float
    result: ChildResult | None
    error: str = ""
    equal: bool | None = None
    prefix: int | None = None  # merges equal to the reference's, from the start
    extra: dict[str, Any] = field(default_factory=dict)

    def value(self, key: str) -> float | None:
        if key == "load1":
            return self.load1
        if self.result is None:
            return None
        if key == "process_wall":
            return self.result.wall
        if key == "process_cpu":
            return self.result.cpu
        v = self.result.report.get(key)
        return float(v) if isinstance(v, int | float) and not isinstance(v, bool) else None

    def row(self) -> dict[str, object]:
        report = self.result.report if self.result else {}
        return {
            "workload": self.workload,
            "impl": self.impl,
            "rep": self.rep,
            "order": self.order,
            "load1": round(self.load1, 2),
            "process_wall": None if self.result is None else round(self.result.wall, 4),
            "process_cpu": None if self.result is None else round(self.result.cpu, 4),
            **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in report.items()},
            "equal_to_reference": self.equal,
            "prefix_equal": self.prefix,
            "error": self.error,
        }


def common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def resolve(spec: dict[str, Any], corpora: Path, model: Path | None) -> dict[str, Any]:
    out = dict(spec)
    for key in ("file", "heldout"):
        if out.get(key):
            out[key] = str(corpora / out[key])
    if out.get("model") == "model":
        if model is None:
            raise ValueError("this workload's jobs need a model but it has no setup")
        out["model"] = str(model)
    return out


#: The module each peer's jobs import (``impl`` of a job spec, before any ``-batch``).
PEER_MODULES = {
    "rustbpe": "rustbpe",
    "hf": "tokenizers",
    "tiktoken": "tiktoken",
    "bpeasy": "bpeasy",
    "sentencepiece": "sentencepiece",
}


def installed(impl: Impl, workload: str) -> bool:
    """Whether ``impl``'s peer library can be imported; if not, say that it is skipped."""
    import importlib.util

    name = str(impl.spec.get("impl", "")).split("-")[0]
    module = PEER_MODULES.get(name)
    if module is None or importlib.util.find_spec(module) is not None:
        return True
    print(f"  {workload:16} SKIPPED {impl.label}: {module} is not installed "
          "(pip install -e '.[bench]')", file=sys.stderr, flush=True)  # fmt: skip
    return False


def child_argv(impl: Impl, spec: dict[str, Any], profile: int = 0) -> list[str]:
    argv = [sys.executable, str(HERE / impl.script)]
    if profile:
        argv += ["--profile", str(profile)]
    return [*argv, json.dumps(spec)]


def run_workload(w: Workload, repeat: int, corpora: Path, tmp: Path) -> tuple[list[Run], Any]:
    """Every repetition of ``w``; the setup's report (or None)."""
    model: Path | None = None
    setup_report = None
    if w.setup is not None:
        model = tmp / f"{w.name}.model.json"
        spec = resolve({**w.setup, "save": str(model)}, corpora, None)
        setup_report = run_child(child_argv(Impl("setup", spec), spec), cwd=ROOT).report
        print(f"  {w.name:16} setup: trained {setup_report.get('merges')} merges", file=sys.stderr)
    runs: list[Run] = []
    impls = [i for i in w.impls if installed(i, w.name)]
    for rep in range(repeat):
        shift = rep % len(impls)
        order = impls[shift:] + impls[:shift]
        merges: dict[str, list[str]] = {}
        this_rep: list[Run] = []
        for position, impl in enumerate(order):
            spec = resolve(impl.spec, corpora, model)
            out = tmp / f"{w.name}.{rep}.{position}.merges"
            if w.check == "merges":
                spec["out"] = str(out)
            load1 = os.getloadavg()[0]
            try:
                result: ChildResult | None = run_child(child_argv(impl, spec), cwd=ROOT)
                error = ""
            except RuntimeError as exc:
                result, error = None, str(exc).strip().splitlines()[-1][:200]
            run = Run(w.name, impl.label, rep, position, load1, result, error)
            if out.exists():
                merges[impl.label] = out.read_text(encoding="ascii").split()
                out.unlink()
            this_rep.append(run)
            r = result.report if result else {}
            status = (
                f"FAILED: {error}"
                if error
                else (
                    f"job {r.get('wall_job', 0):8.2f} s wall {r.get('cpu_job', 0):8.2f} s cpu  "
                    f"rss {r.get('peak_rss_mib') or 0:7.1f} MiB"
                )
            )
            print(f"  {w.name:16} rep {rep} {impl.label:34} {status}  load {load1:.2f}",
                  file=sys.stderr, flush=True)  # fmt: skip
        check(w, this_rep, merges)
        runs += this_rep
    return runs, setup_report


def check(w: Workload, runs: list[Run], merges: dict[str, list[str]]) -> None:
    """Mark each run equal or not to its reference (same repetition)."""
    if w.check == "merges" and w.reference in merges:
        expected = merges[w.reference]
        for run in runs:
            if w.compared and run.impl not in w.compared:
                continue
            if run.impl in merges and run.impl != w.reference:
                run.equal = merges[run.impl] == expected
                run.prefix = common_prefix(merges[run.impl], expected)
    elif w.check == "digest":
        by_label = {r.impl: r for r in runs}
        for label, ref_label in w.digest_groups.items():
            this, ref = by_label.get(label), by_label.get(ref_label)
            if this and ref and this.result and ref.result:
                this.equal = this.result.report.get("digest") == ref.result.report.get("digest")
                this.extra["reference"] = ref_label


def summarise(w: Workload, runs: list[Run]) -> list[dict[str, object]]:
    rows = []
    for impl in w.impls:
        mine = [r for r in runs if r.impl == impl.label and r.result is not None]
        failed = sum(1 for r in runs if r.impl == impl.label and r.result is None)
        row: dict[str, object] = {
            "workload": w.name,
            "part": w.part,
            "impl": impl.label,
            "runs": len(mine),
            "failed": failed,
        }
        for key in METRICS:
            row[key] = median(r.value(key) for r in mine)
        first = mine[0].result.report if mine and mine[0].result else {}
        for key in ("merges", "tokens", "mb", "texts", "pieces", "types"):
            if key in first:
                row[key] = first[key]
        if isinstance(row.get("mb"), float) and isinstance(row.get("wall_job"), float):
            row["mb_per_s"] = row["mb"] / row["wall_job"]  # type: ignore[operator]
        checked = [r for r in mine if r.equal is not None]
        if checked:
            row["equal_to_reference"] = f"{sum(bool(r.equal) for r in checked)}/{len(checked)}"
            prefixes = [r.prefix for r in checked if r.prefix is not None]
            if prefixes:
                row["min_prefix_equal"] = min(prefixes)
            row["reference"] = w.reference or checked[0].extra.get("reference")
        rows.append(row)
    return rows


def per_rep_ratios(runs: list[Run], subject: str, peer: str, key: str) -> list[float]:
    """subject / peer of ``key`` within each repetition that has both."""
    by = {(r.impl, r.rep): r for r in runs}
    out = []
    for (impl, rep), r in by.items():
        if impl != subject:
            continue
        p = by.get((peer, rep))
        a, b = r.value(key), None if p is None else p.value(key)
        if a is not None and b:
            out.append(a / b)
    return out


def ratios(w: Workload, runs: list[Run]) -> list[dict[str, object]]:
    rows = []
    for n, subject in enumerate(w.subjects):
        for impl in w.impls:
            if impl.label == subject or impl.label in w.subjects[:n]:
                continue
            if w.peers and impl.label not in w.peers:
                continue
            row: dict[str, object] = {"workload": w.name, "subject": subject, "peer": impl.label}
            for key in RATIO_METRICS:
                values = per_rep_ratios(runs, subject, impl.label, key)
                row[key] = median(values)
                row["reps"] = max(int(row.get("reps", 0) or 0), len(values))  # type: ignore[call-overload]
            rows.append(row)
    return rows


def evaluate(t: Target, runs: list[Run]) -> dict[str, object]:
    mine = [r for r in runs if r.workload == t.workload and r.result is not None]
    value: float | None
    metric = "peak_rss_mib" if t.metric == "rss" else t.metric
    if t.kind == "absolute":
        value = median(r.value(metric) for r in mine if r.impl == t.subject)
    elif t.kind == "ratio":
        assert t.peer is not None
        value = median(per_rep_ratios(mine, t.subject, t.peer, metric))
    elif t.kind == "speed":
        assert t.peer is not None
        value = median(1 / v for v in per_rep_ratios(mine, t.subject, t.peer, metric) if v)
    else:  # scale: cost per MB of peer (the big corpus) over that of subject
        assert t.peer is not None
        per_mb = {
            (r.impl, r.rep): v / mb
            for r in mine
            if (v := r.value(metric)) is not None and (mb := r.value("mb"))
        }
        value = median(
            per_mb[(t.peer, rep)] / small
            for (impl, rep), small in per_mb.items()
            if impl == t.subject and (t.peer, rep) in per_mb
        )
    met = None
    if value is not None:
        met = value <= t.threshold if t.op == "<=" else value >= t.threshold
    return {
        "target": t.name,
        "text": t.text,
        "workload": t.workload,
        "subject": t.subject,
        "peer": t.peer,
        "metric": t.metric,
        "kind": t.kind,
        "op": t.op,
        "threshold": t.threshold,
        "value": value,
        "met": met,
    }


def snapshot(rev: str, dest: Path) -> str:
    """Export ``bpeds/`` at ``rev`` into ``dest``; return the commit's short hash."""
    commit = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short=12", rev],
        capture_output=True, text=True, check=True,
    ).stdout.strip()  # fmt: skip
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", commit, "bpeds"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return commit


def bpeds_provenance(env_path: str | None) -> str:
    code = "import bpeds, sys; sys.stdout.write(bpeds.__file__)"
    env = dict(os.environ)
    if env_path:
        env["PYTHONPATH"] = env_path
    where = subprocess.run(  # from benchmarks/, as the children import it
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env, cwd=HERE
    ).stdout
    from _common import package_provenance

    return package_provenance(where)


def versions() -> dict[str, str]:
    from importlib.metadata import PackageNotFoundError, version

    out = {}
    for name in (
        "bpeds",
        "regex",
        "rustbpe",
        "tokenizers",
        "tiktoken",
        "bpeasy",
        "sentencepiece",
        "matplotlib",
    ):
        try:
            out[name] = version(name)
        except PackageNotFoundError:
            out[name] = "not installed"
    return out


def wait_for_load(limit: float, patience: float) -> float:
    """Wait (up to ``patience`` s) for the 1-minute load to fall below ``limit``; return it."""
    deadline = time.monotonic() + patience
    load = os.getloadavg()[0]
    while load >= limit and time.monotonic() < deadline:
        print(f"load {load:.2f} >= {limit}: waiting", file=sys.stderr, flush=True)
        time.sleep(30)
        load = os.getloadavg()[0]
    return load


def select(all_w: list[Workload], only: list[str] | None) -> list[Workload]:
    if not only:
        return all_w
    chosen = [w for w in all_w if any(w.name == o or w.name.startswith(o + "-") for o in only)]
    if not chosen:
        raise SystemExit(f"error: no workload matches {only}; see --list")
    return chosen


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small inputs, one run: smoke test")
    parser.add_argument("--only", action="append", help="workload name or prefix (wl2), repeatable")
    parser.add_argument(
        "--repeat", type=int, help="runs per implementation (default: per workload)"
    )
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA, help="corpus folder")
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT, help="folder for the CSVs")
    parser.add_argument("--snapshot", metavar="REV", help="benchmark bpeds as of this commit")
    parser.add_argument(
        "--publish",
        action="store_true",
        help="copy the CSVs to benchmarks/published/ and regenerate the docs",
    )
    parser.add_argument(
        "--wait-load",
        type=float,
        default=0.0,
        metavar="X",
        help="before each workload, wait (up to 5 min) for a 1-minute load average below X",
    )
    parser.add_argument(
        "--profile",
        nargs=2,
        metavar=("WORKLOAD", "IMPL"),
        help="run one job under cProfile and print the top 30",
    )
    parser.add_argument("--list", action="store_true", help="list the workloads and exit")
    args = parser.parse_args(argv)  # fmt: skip
    corpora: Path = args.corpora.resolve()
    all_w = workloads(quick=args.quick)
    if args.publish and (args.quick or args.only or args.repeat):
        raise SystemExit("error: --publish is for the full suite (no --quick/--only/--repeat)")

    if args.list:
        for w in all_w:
            print(f"{w.name:16} part {w.part}  x{w.repeat}  {w.title}")
            for impl in w.impls:
                print(f"    {impl.label}")
        return 0

    with tempfile.TemporaryDirectory(prefix="bpeds-bench-") as tmp_name:
        tmp = Path(tmp_name)
        env_path = None
        if args.snapshot:
            snap = tmp / "snapshot"
            snap.mkdir()
            commit = snapshot(args.snapshot, snap)
            env_path = str(snap)
            os.environ["PYTHONPATH"] = env_path  # children import the snapshot
            print(f"bpeds exported from {commit} into {snap}", file=sys.stderr)
        if args.profile:
            name, label = args.profile
            w = next(w for w in all_w if w.name == name)
            impl = next(i for i in w.impls if i.label == label)
            model = None
            if w.setup is not None:
                model = tmp / "model.json"
                spec = resolve({**w.setup, "save": str(model)}, corpora, None)
                run_child(child_argv(impl, spec), cwd=ROOT)
            spec = resolve(impl.spec, corpora, model)
            result = run_child(child_argv(impl, spec, profile=30), cwd=ROOT)
            print(json.dumps(result.report, indent=1))
            return 0

        chosen = select(all_w, args.only)
        ready: list[tuple[Workload, list[str]]] = []
        skipped: list[tuple[Workload, list[str]]] = []
        for w in chosen:
            missing = [f for f in w.files() if not (corpora / f).exists()]
            (skipped if missing else ready).append((w, missing))
        for w, missing in skipped:
            print(f"SKIPPED {w.name}: missing {', '.join(missing)} in {corpora}", file=sys.stderr)
        before = machine_info()
        provenance = bpeds_provenance(env_path)
        if args.snapshot:
            provenance = f"git archive of commit {commit} ({args.snapshot})"
        start = time.monotonic()
        all_runs: list[Run] = []
        summary: list[dict[str, object]] = []
        ratio_rows: list[dict[str, object]] = []
        setups: dict[str, Any] = {}
        waited = 0.0
        for w, _ in ready:
            repeat = args.repeat or w.repeat
            if args.wait_load:
                t0 = time.monotonic()
                wait_for_load(args.wait_load, 300)
                waited += time.monotonic() - t0
            t0 = time.monotonic()
            runs, setup = run_workload(replace(w, repeat=repeat), repeat, corpora, tmp)
            if setup is not None:
                setups[w.name] = setup
            all_runs += runs
            summary += summarise(w, runs)
            ratio_rows += ratios(w, runs)
            print(f"  {w.name}: {time.monotonic() - t0:.0f} s", file=sys.stderr, flush=True)
        targets = [
            evaluate(t, all_runs) for t in TARGETS if any(t.workload == w.name for w, _ in ready)
        ]
        after = machine_info()

    loads = [r.load1 for r in all_runs]
    meta = {
        "command": before["command"],
        "cpu": before["cpu"],
        "cores": before["cores"],
        "os": before["os"],
        "python": before["python"],
        "date": before["date"],
        "date_end": after["date"],
        "load_before": before["load_average"],
        "load_after": after["load_average"],
        "load1_median": median(loads),
        "load1_max": max(loads, default=None),
        "minutes": round((time.monotonic() - start - waited) / 60, 1),
        "minutes_waited": round(waited / 60, 1),
        "quick": args.quick,
        "bpeds": provenance,
        "versions": versions(),
        "workloads": {w.name: {"title": w.title, "part": w.part, "notes": w.notes,
                               "repeat": args.repeat or w.repeat} for w, _ in ready},
        "skipped": {w.name: missing for w, missing in skipped},
        "setups": setups,
    }  # fmt: skip
    out: Path = args.out
    out.mkdir(parents=True, exist_ok=True)
    write_csv(out / "runs.csv", [r.row() for r in all_runs])
    write_csv(out / "summary.csv", summary)
    write_csv(out / "ratios.csv", ratio_rows)
    write_csv(out / "targets.csv", targets)
    (out / "meta.json").write_text(json.dumps(meta, indent=1) + "\n", encoding="utf-8")
    print(f"\nwrote {out}/{{runs,summary,ratios,targets}}.csv and meta.json "
          f"({meta['minutes']} min, load median {meta['load1_median']})")  # fmt: skip
    for t in targets:
        v = t["value"]
        if v is None:  # a workload this run did not measure (--only, --quick, a missing peer)
            print(f"  --   {t['text']}: not measured in this run")
            continue
        print(f"  {'MET ' if t['met'] else 'MISS'} {t['text']}: {v:.3f}")

    import report

    print()
    print(report.console(out))
    if args.publish:
        PUBLISHED.mkdir(exist_ok=True)
        for name in ("runs.csv", "summary.csv", "ratios.csv", "targets.csv", "meta.json"):
            shutil.copy2(out / name, PUBLISHED / name)
        report.publish(PUBLISHED)
    return 0


if __name__ == "__main__":
    sys.exit(main())
