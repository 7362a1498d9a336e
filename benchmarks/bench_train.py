"""Benchmark whole training jobs (read file -> merges): bpeds against rustbpe and HF tokenizers.

Usage::

    python benchmarks/get_corpora.py benchmarks/corpora          # once: builds en13.txt etc.
    python benchmarks/bench_train.py --repeat 3 --csv benchmarks/results/train.csv
    python benchmarks/bench_train.py --only en13-type --only en13-pmi --repeat 5
    python benchmarks/bench_train.py --profile en13-type          # cProfile, top 15 by tottime

Workloads (``--only NAME``, repeatable; the first implementation listed is the
*subject*, the others its peers):

- ``ts-basic`` (a): ``taylorswift.txt``, vocabulary 10,000 (9,744 merges),
  sequence mode, tie ``leftmost`` (minbpe's rule), no split pattern (minbpe
  Basic). bpeds only: the target is absolute (under 1 CPU-second).
- ``ts-regex`` (a): the same with the GPT-4 pattern (minbpe Regex). rustbpe
  (type mode, GPT-4 pattern) is shown for reference; its tie rule is not
  ``leftmost``, so its merge list is expected to differ at ties.
- ``en13-type`` (b): ``en13.txt`` (13 MB of English), GPT-2 pattern,
  vocabulary 32,768 (32,512 merges), Frequency, tie ``smallest_ids``, type
  mode; peers rustbpe (same GPT-2 pattern) and HF ``tokenizers`` BpeTrainer
  (ByteLevel, ``add_prefix_space=False``, initial alphabet = the 256 bytes).
  Every implementation gets the whole file as one string, so the pattern sees
  the same unit everywhere. bpeds' merge list must equal rustbpe's (same
  rule); HF breaks ties in its own order, so only a prefix agrees.
- ``en13-pmi`` (c): as ``en13-type`` with ``PMI(min_count=2)`` (a ``PARTS``
  class score), against bpeds' Frequency on the same corpus.

Measurement: every repetition of every implementation is a fresh child process
(this script with ``--child``); within a repetition the implementations run
one after the other, the order rotated each repetition so no one always goes
first. Inside the child, ``job`` is read-file -> merges (``perf_counter`` wall
and ``process_time`` CPU, all threads), split for bpeds into ``prep`` (read,
pre-tokenize, count chunks) and ``merge`` (pair counting, heap, merge loop).
Outside, the parent takes the process's wall time (interpreter start and
imports included) and, from ``os.wait4``, its CPU time; peak RSS is the
child's own ``VmHWM`` (see ``_common.py`` for why not ``ru_maxrss``). The
table gives medians over ``--repeat`` runs and, per peer, the subject's
median over the peer's (below 1: the subject is faster / smaller). Merge lists
are compared within each repetition (merged-token bytes, in order). CPU time
is the figure to trust on a shared machine; the load average is printed.
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from _common import (
    ChildResult,
    ChildTimer,
    machine_info,
    markdown_table,
    median,
    package_provenance,
    peak_rss_mib,
    run_child,
    write_csv,
)

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DEFAULT_CORPORA = HERE / "corpora"


@dataclass(frozen=True)
class Workload:
    name: str
    part: str
    file: str
    vocab_size: int
    pattern: str | None  # "gpt2", "gpt4" or None
    mode: str  # "type" or "sequence"
    tie: str
    impls: tuple[str, ...]  # the first is the subject

    @property
    def merges(self) -> int:
        return self.vocab_size - 256


WORKLOADS = {
    w.name: w
    for w in (
        Workload(
            "ts-basic", "a", "taylorswift.txt", 10_000, None, "sequence", "leftmost",
            ("bpeds",),
        ),
        Workload(
            "ts-regex", "a", "taylorswift.txt", 10_000, "gpt4", "sequence", "leftmost",
            ("bpeds", "rustbpe"),
        ),
        Workload(
            "en13-type", "b", "en13.txt", 32_768, "gpt2", "type", "smallest_ids",
            ("bpeds", "rustbpe", "hf-tokenizers"),
        ),
        Workload(
            "en13-pmi", "c", "en13.txt", 32_768, "gpt2", "type", "smallest_ids",
            ("bpeds-pmi", "bpeds"),
        ),
    )
}  # fmt: skip


def corpus_path(corpora: Path, name: str) -> Path:
    path = corpora / name
    if path.exists():
        return path
    fallback = ROOT / "tests" / "data" / name
    if fallback.exists():
        return fallback
    raise SystemExit(
        f"error: {path} not found; build the corpora first: "
        f"python benchmarks/get_corpora.py {corpora}"
    )


# -- implementations (run inside the child) -------------------------------------------------

Job = tuple[list[bytes], dict[str, float]]


def job_bpeds(w: Workload, path: Path, score: str = "frequency") -> Job:
    from bpeds.corpus import SequenceCorpus, TypeCorpus
    from bpeds.driver import MergeDriver
    from bpeds.pretokenize import split
    from bpeds.scoring.strategies import PMI, Frequency

    timer = ChildTimer()
    text = path.read_text(encoding="utf-8")
    chunks = split(text, w.pattern)
    corpus = TypeCorpus(chunks) if w.mode == "type" else SequenceCorpus(chunks)
    timer.mark("prep")
    driver = MergeDriver(
        corpus, w.merges, score=PMI(min_count=2) if score == "pmi" else Frequency(), tie=w.tie
    )
    records = iter(driver)
    next(records, None)
    timer.mark("first")  # pair counting, heap build, first merge
    for _ in records:
        pass
    timer.mark("loop")
    timer.total("job")
    report = timer.report()
    for clock in ("wall", "cpu"):
        report[f"{clock}_merge"] = report[f"{clock}_first"] + report[f"{clock}_loop"]
    return [driver.vocab.token_bytes(r.new_id) for r in driver.records], report


def _pattern_source(name: str | None) -> str:
    from bpeds.pretokenize import PATTERNS

    if name is None:
        raise ValueError("rustbpe always splits with a pattern")
    return PATTERNS[name]


def job_rustbpe(w: Workload, path: Path) -> Job:
    import rustbpe

    pattern = _pattern_source(w.pattern)
    timer = ChildTimer()
    text = path.read_text(encoding="utf-8")
    tok = rustbpe.Tokenizer()
    tok.train_from_iterator(iter([text]), vocab_size=w.vocab_size, pattern=pattern)
    timer.total("job")
    ranks = sorted(tok.get_mergeable_ranks(), key=lambda item: item[1])
    return [bytes(token) for token, rank in ranks if rank >= 256], timer.report()


def job_hf(w: Workload, path: Path) -> Job:
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers

    from bpeds.scoring.ties import gpt2_byte_to_unicode

    if w.pattern != "gpt2":
        raise ValueError("the HF ByteLevel pre-tokenizer splits with the GPT-2 pattern only")
    timer = ChildTimer()
    text = path.read_text(encoding="utf-8")
    hf = Tokenizer(models.BPE())
    byte_level = pre_tokenizers.ByteLevel
    hf.pre_tokenizer = byte_level(add_prefix_space=False, use_regex=True)
    trainer = trainers.BpeTrainer(
        vocab_size=w.vocab_size, show_progress=False, initial_alphabet=byte_level.alphabet()
    )
    hf.train_from_iterator([text], trainer)
    timer.total("job")
    inverse = {ch: b for b, ch in gpt2_byte_to_unicode().items()}
    merges = json.loads(hf.to_str())["model"]["merges"]
    pairs = [m if isinstance(m, list) else m.split(" ") for m in merges]
    return [bytes(inverse[ch] for ch in a + b) for a, b in pairs], timer.report()


IMPLS: dict[str, Callable[[Workload, Path], Job]] = {
    "bpeds": job_bpeds,
    "bpeds-pmi": lambda w, path: job_bpeds(w, path, "pmi"),
    "rustbpe": job_rustbpe,
    "hf-tokenizers": job_hf,
}


def child_main(workload: str, impl: str, corpora: Path, merges_out: Path) -> int:
    w = WORKLOADS[workload]
    tokens, report = IMPLS[impl](w, corpus_path(corpora, w.file))
    merges_out.write_text("".join(t.hex() + "\n" for t in tokens), encoding="ascii")
    print(json.dumps({"merges": len(tokens), "peak_rss_mib": peak_rss_mib(), **report}))
    return 0


# -- parent -------------------------------------------------------------------------------


def common_prefix(a: list[str], b: list[str]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


@dataclass
class Run:
    workload: str
    impl: str
    rep: int
    order: int
    result: ChildResult
    agree: int | None = None  # merges equal to the subject's, from the start
    equal: bool | None = None

    def row(self) -> dict[str, object]:
        r = self.result
        return {
            "workload": self.workload,
            "impl": self.impl,
            "rep": self.rep,
            "order": self.order,
            "process_wall_s": round(r.wall, 4),
            "process_cpu_s": round(r.cpu, 4),
            **{k: (round(v, 4) if isinstance(v, float) else v) for k, v in r.report.items()},
            "prefix_equal_to_subject": self.agree,
            "equal_to_subject": self.equal,
        }


def run_workload(w: Workload, repeat: int, corpora: Path, tmp: Path) -> list[Run]:
    runs: list[Run] = []
    for rep in range(repeat):
        shift = rep % len(w.impls)
        order = w.impls[shift:] + w.impls[:shift]
        merges: dict[str, list[str]] = {}
        for position, impl in enumerate(order):
            out = tmp / f"{w.name}.{impl}.{rep}.merges"
            argv = [sys.executable, str(Path(__file__).resolve()), "--child", w.name, impl]
            argv += ["--corpora", str(corpora), "--merges-out", str(out)]
            result = run_child(argv, cwd=ROOT)
            merges[impl] = out.read_text(encoding="ascii").split()
            out.unlink()
            runs.append(Run(w.name, impl, rep, position, result))
            rep_line = result.report
            print(
                f"  {w.name:10} rep {rep} {impl:14} job {rep_line['wall_job']:8.3f} s wall "
                f"{rep_line['cpu_job']:8.3f} s cpu  rss {rep_line['peak_rss_mib']:7.1f} MiB",
                file=sys.stderr,
                flush=True,
            )
        subject = merges[w.impls[0]]
        for run in runs[-len(order) :]:
            run.agree = common_prefix(subject, merges[run.impl])
            run.equal = subject == merges[run.impl]
    return runs


def fmt(x: float | None, digits: int = 3) -> str | None:
    return None if x is None else f"{x:.{digits}f}"


def _value(run: Run, key: str) -> float | None:
    if key == "process_wall":
        return run.result.wall
    if key == "process_cpu":
        return run.result.cpu
    if key == "rss":
        return run.result.peak_rss_mib
    value = run.result.report.get(key)
    return float(value) if isinstance(value, int | float) else None


def summarise(w: Workload, runs: list[Run]) -> list[dict[str, object]]:
    """One row per implementation: medians, and the subject/peer ratios.

    A ratio is the median over repetitions of (subject / peer) *within* the
    repetition: the two ran back to back, so they saw about the same machine
    load, which a ratio of separate medians would not guarantee.
    """
    subject = w.impls[0]
    by_rep = {(r.impl, r.rep): r for r in runs}
    rows = []
    for impl in w.impls:
        mine = [r for r in runs if r.impl == impl]

        def med(key: str, mine: list[Run] = mine) -> float | None:
            return median(_value(r, key) for r in mine)

        row: dict[str, object] = {
            "workload": w.name,
            "part": w.part,
            "impl": impl,
            "subject": subject,
            "runs": len(mine),
            "merges": mine[0].result.report["merges"],
            "job_wall_s": med("wall_job"),
            "job_cpu_s": med("cpu_job"),
            "prep_wall_s": med("wall_prep"),
            "merge_wall_s": med("wall_merge"),
            "prep_cpu_s": med("cpu_prep"),
            "merge_cpu_s": med("cpu_merge"),
            "process_wall_s": med("process_wall"),
            "process_cpu_s": med("process_cpu"),
            "peak_rss_mib": med("rss"),
            "equal_to_subject_runs": f"{sum(bool(r.equal) for r in mine)}/{len(mine)}",
            "prefix_equal_to_subject": min(r.agree or 0 for r in mine),
        }
        for name, key in (("job_wall", "wall_job"), ("job_cpu", "cpu_job"), ("rss", "rss")):
            ratios: list[float | None] = []
            for r in mine:
                s_run = by_rep.get((subject, r.rep))
                this = _value(r, key)
                subj = None if s_run is None else _value(s_run, key)
                ok = this is not None and subj is not None and this > 0
                ratios.append(subj / this if ok else None)  # type: ignore[operator]
            row[f"subject_over_this_{name}"] = median(ratios)
        rows.append(row)
    return rows


def runs_from_csv(path: Path) -> list[Run]:
    """The runs of a ``NAME-runs.csv`` written by this script (to re-summarise it)."""
    import csv

    out = []
    with path.open(encoding="utf-8", newline="") as f:
        for rec in csv.DictReader(f):
            report: dict[str, Any] = {}
            for k, v in rec.items():
                if k in ("workload", "impl", "rep", "order", "process_wall_s", "process_cpu_s"):
                    continue
                if k in ("prefix_equal_to_subject", "equal_to_subject") or v in ("", None):
                    continue
                report[k] = float(v)
            report["merges"] = int(report["merges"])
            result = ChildResult(float(rec["process_wall_s"]), float(rec["process_cpu_s"]), report)
            run = Run(rec["workload"], rec["impl"], int(rec["rep"]), int(rec["order"]), result)
            run.agree = int(rec["prefix_equal_to_subject"])
            run.equal = rec["equal_to_subject"] == "True"
            out.append(run)
    return out


def cell(row: dict[str, object], key: str, digits: int = 2) -> str | None:
    v = row[key]
    return fmt(v, digits) if isinstance(v, float) else None


def table(rows: list[dict[str, object]]) -> str:
    header = [
        "workload", "impl", "merges", "job wall s", "job CPU s", "prep / merge wall s",
        "prep / merge CPU s",
        "process wall / CPU s", "peak RSS MiB", "subject ÷ this: wall / CPU / RSS",
        "same merges as subject",
    ]  # fmt: skip
    out = []
    for r in rows:
        f = partial(cell, r)

        subject = r["impl"] == r["subject"]
        has_split = r["prep_wall_s"] is not None
        split = f"{f('prep_wall_s')} / {f('merge_wall_s')}" if has_split else ""
        split_cpu = f"{f('prep_cpu_s')} / {f('merge_cpu_s')}" if has_split else ""
        ratio = (
            f"{f('subject_over_this_job_wall')} / {f('subject_over_this_job_cpu')} / "
            f"{f('subject_over_this_rss')}"
        )
        agree = r["equal_to_subject_runs"]
        if not str(agree).startswith(str(r["runs"])):
            agree = f"{agree} (first {r['prefix_equal_to_subject']} equal)"
        out.append(
            [
                f"{r['part']}: {r['workload']}",
                r["impl"],
                r["merges"],
                f("job_wall_s"),
                f("job_cpu_s"),
                split,
                split_cpu,
                f"{f('process_wall_s')} / {f('process_cpu_s')}",
                f("peak_rss_mib", 0),
                "(subject)" if subject else ratio,
                agree,
            ]
        )
    return markdown_table(header, out)


def profile(name: str, corpora: Path, top: int) -> None:
    w = WORKLOADS[name]
    impl = w.impls[0]
    prof = cProfile.Profile()
    prof.enable()
    tokens, report = IMPLS[impl](w, corpus_path(corpora, w.file))
    prof.disable()
    import bpeds

    print(f"cProfile of {name} / {impl}: {len(tokens)} merges; {json.dumps(report)}")
    print(f"bpeds: {package_provenance(bpeds.__file__)}")
    stats = pstats.Stats(prof, stream=sys.stdout)
    stats.strip_dirs().sort_stats("tottime").print_stats(top)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per implementation")
    parser.add_argument("--only", action="append", choices=sorted(WORKLOADS), help="workload")
    parser.add_argument("--csv", type=Path, help="summary CSV (raw runs go to NAME-runs.csv)")
    parser.add_argument("--corpora", type=Path, default=DEFAULT_CORPORA, help="corpus folder")
    parser.add_argument("--profile", choices=sorted(WORKLOADS), help="cProfile the subject")
    parser.add_argument("--top", type=int, default=15, help="profile lines to print")
    parser.add_argument("--from-runs", type=Path, help="re-summarise a NAME-runs.csv, no runs")
    parser.add_argument("--child", nargs=2, metavar=("WORKLOAD", "IMPL"), help=argparse.SUPPRESS)
    parser.add_argument("--merges-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    corpora: Path = args.corpora.resolve()
    if args.child:
        return child_main(args.child[0], args.child[1], corpora, args.merges_out)
    if args.profile:
        profile(args.profile, corpora, args.top)
        return 0

    names = args.only or list(WORKLOADS)
    if args.from_runs:
        old = runs_from_csv(args.from_runs)
        names = [n for n in names if any(r.workload == n for r in old)]
        rows = [
            row
            for n in names
            for row in summarise(WORKLOADS[n], [r for r in old if r.workload == n])
        ]
        print(f"re-summarised {args.from_runs}\n")
        print(table(rows))
        if args.csv:
            write_csv(args.csv, rows)
        return 0
    for name in names:
        corpus_path(corpora, WORKLOADS[name].file)  # fail early
    import bpeds

    before = machine_info()
    provenance = package_provenance(bpeds.__file__)
    all_runs: list[Run] = []
    summary: list[dict[str, object]] = []
    with tempfile.TemporaryDirectory(prefix="bench_train_") as tmp:
        for name in names:
            runs = run_workload(WORKLOADS[name], args.repeat, corpora, Path(tmp))
            all_runs += runs
            summary += summarise(WORKLOADS[name], runs)
    after = machine_info()
    print(f"command: {before['command']}")
    print(f"machine: {before['cpu']}, {before['cores']}; {before['os']}")
    print(f"python: {before['python']}; date: {before['date']}")
    print(f"bpeds: {provenance}")
    print(
        f"load average (1/5/15 min): before {before['load_average']}, after {after['load_average']}"
    )
    print(
        f"medians of {args.repeat} runs, each a fresh process; subject = first impl per workload\n"
    )
    print(table(summary))
    if args.csv:
        write_csv(args.csv, summary)
        write_csv(args.csv.with_name(args.csv.stem + "-runs.csv"), [r.row() for r in all_runs])
        print(f"\nwrote {args.csv} and {args.csv.stem}-runs.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
