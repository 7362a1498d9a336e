"""Tables and plots from the suite's CSVs; regenerates the tables in ``docs/performance.md``.

Usage::

    python benchmarks/report.py                               # benchmarks/published -> docs
    python benchmarks/report.py --results benchmarks/results/latest --print   # console only

``run.py --publish`` calls :func:`publish` after a full run. The tables go
between ``<!-- begin suite:NAME -->`` and ``<!-- end suite:NAME -->`` markers
in ``docs/performance.md`` (the prose around them is written by hand and
says what the numbers mean); the plots are PNG files in ``docs/img/``.
Reads ``summary.csv``, ``ratios.csv``, ``targets.csv``, ``runs.csv`` and
``meta.json`` of one run.
"""

from __future__ import annotations

import argparse
import csv
import json
import re
import sys
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

from _common import markdown_table, median

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DOC = ROOT / "docs" / "performance.md"
IMG = ROOT / "docs" / "img"

Row = dict[str, Any]


def _parse(value: str) -> Any:
    if value == "":
        return None
    if value in ("True", "False"):
        return value == "True"
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return float(value)
    except ValueError:
        return value


def read_csv(path: Path) -> list[Row]:
    if not path.exists():
        return []
    with path.open(encoding="utf-8", newline="") as f:
        return [{k: _parse(v) for k, v in row.items()} for row in csv.DictReader(f)]


class Results:
    """One run's CSVs and metadata."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.summary = read_csv(folder / "summary.csv")
        self.ratios = read_csv(folder / "ratios.csv")
        self.targets = read_csv(folder / "targets.csv")
        self.runs = read_csv(folder / "runs.csv")
        self.meta: dict[str, Any] = json.loads((folder / "meta.json").read_text(encoding="utf-8"))

    def rows(self, *workloads: str) -> list[Row]:
        return [r for r in self.summary if r["workload"] in workloads]

    def ratio(self, workload: str, subject: str, peer: str, key: str) -> float | None:
        for r in self.ratios:
            if (r["workload"], r["subject"], r["peer"]) == (workload, subject, peer):
                v = r.get(key)
                return float(v) if isinstance(v, int | float) else None
        return None

    def has(self, workload: str) -> bool:
        return any(r["workload"] == workload for r in self.summary)

    def ablations(self) -> list[str]:
        """The ablation workloads (``wl8-*``) of this run, in the order they ran."""
        return list(
            dict.fromkeys(r["workload"] for r in self.summary if r["workload"].startswith("wl8-"))
        )


def f(x: object, digits: int = 2) -> str:
    if isinstance(x, bool) or not isinstance(x, int | float):
        return "" if x is None else str(x)
    return f"{x:,.{digits}f}"


def ratio_cell(x: float | None) -> str:
    return "" if x is None else f"{x:.2f}x"


# -- tables ---------------------------------------------------------------------------------


def table_meta(r: Results) -> str:
    m = r.meta
    v = m["versions"]
    skipped = "; ".join(f"{k} (missing {', '.join(x)})" for k, x in m.get("skipped", {}).items())
    lines = [
        f"- **Command:** `{m['command']}` ({m['minutes']} minutes"
        + (f", plus {m['minutes_waited']} waiting for the load" if m.get("minutes_waited") else "")
        + (", quick smoke run: the numbers mean nothing)" if m.get("quick") else ")"),
        f"- **bpeds:** {m['bpeds']}",
        f"- **Machine:** {m['cpu']}, {m['cores']} cores; {m['os']}",
        f"- **Python:** {m['python']}; regex {v['regex']}, rustbpe {v['rustbpe']}, tokenizers "
        f"{v['tokenizers']}, tiktoken {v['tiktoken']}, bpeasy {v['bpeasy']}",
        f"- **Date:** {m['date']} to {m['date_end']}",
        f"- **Load average** (1/5/15 min): {m['load_before']} at the start, {m['load_after']} at "
        f"the end; 1-minute load when each process started: median {f(m['load1_median'])}, "
        f"max {f(m['load1_max'])}",
    ]
    if skipped:
        lines.append(f"- **Skipped:** {skipped}")
    return "\n".join(lines)


def table_targets(r: Results) -> str:
    rows = []
    for t in r.targets:
        kind = t["kind"]
        value = t["value"]
        unit = {"absolute": " CPU-s", "speed": "x (speed)", "ratio": "x", "scale": "x"}[kind]
        shown = "not run" if value is None else f"{value:.2f}{unit}"
        verdict = {True: "met", False: "**missed**", None: "not run"}[t["met"]]
        rows.append([t["text"], f"{t['op']} {t['threshold']:g}", shown, verdict])
    return markdown_table(["target", "threshold", "measured", ""], rows)


def table_training(r: Results) -> str:
    header = [
        "workload", "impl", "merges", "job wall s", "job CPU s", "bpeds prep / merge CPU s",
        "process wall s", "peak RSS MiB", "same merges as reference",
    ]  # fmt: skip
    rows = []
    for row in r.rows("wl1-taylorswift", "wl1-proust", "wl2-en13", "wl3-en62", "wl4-multi"):
        split = ""
        if row.get("cpu_prep") is not None:
            split = f"{f(row['cpu_prep'])} / {f(row['cpu_merge'])}"
        rss = f(row["peak_rss_mib"], 0)
        if row.get("peak_rss_workers_mib"):
            rss += f" (workers {f(row['peak_rss_workers_mib'], 0)})"
        same = row.get("equal_to_reference") or ""
        if same and not str(same).startswith(f"{row['runs']}/"):
            same += f" (first {row.get('min_prefix_equal') or 0:,} equal)"
        if same:
            same += f" vs {row['reference']}"
        rows.append(
            [
                row["workload"],
                row["impl"],
                f(row.get("merges"), 0),
                f(row["wall_job"]),
                f(row["cpu_job"]),
                split,
                f(row["process_wall"]),
                rss,
                same,
            ]
        )
    return markdown_table(header, rows)


def table_ratios(r: Results, workloads: Iterable[str]) -> str:
    header = ["workload", "bpeds", "÷ peer", "job wall", "job CPU", "peak RSS", "process wall"]
    rows = []
    for x in r.ratios:
        if x["workload"] in workloads:
            rows.append(
                [
                    x["workload"],
                    x["subject"],
                    x["peer"],
                    ratio_cell(x["wall_job"]),
                    ratio_cell(x["cpu_job"]),
                    ratio_cell(x["peak_rss_mib"]),
                    ratio_cell(x["process_wall"]),
                ]
            )
    return markdown_table(header, rows)


def table_encode(r: Results) -> str:
    header = ["impl", "texts", "job wall s", "job CPU s", "MB/s", "peak RSS MiB", "tokens",
              "same ids as"]  # fmt: skip
    rows = []
    for row in r.rows("wl5-encode"):
        same = ""
        if row.get("equal_to_reference"):
            same = f"{row['equal_to_reference']} {row['reference']}"
        rows.append(
            [
                row["impl"],
                f(row.get("texts"), 0),
                f(row["wall_job"]),
                f(row["cpu_job"]),
                f(row.get("mb_per_s")),
                f(row["peak_rss_mib"], 0),
                f(row.get("tokens"), 0),
                same,
            ]
        )
    out = markdown_table(header, rows)
    speed = []
    for x in r.ratios:
        if x["workload"] == "wl5-encode" and x["wall_job"]:
            speed.append([x["subject"], x["peer"], f"{1 / x['wall_job']:.2f}x"])
    if speed:
        out += "\n\n" + markdown_table(["bpeds", "speed vs", "peer time ÷ bpeds time"], speed)
    return out


def table_split(r: Results) -> str:
    header = ["workload", "impl", "job CPU s", "job wall s", "MB/s (CPU)", "pieces", "types",
              "÷ regex only (CPU)", "÷ regex only (wall)", "same counts as"]  # fmt: skip
    rows = []
    for w in ("wl2-split", "wl4-split"):
        for row in r.rows(w):
            label = row["impl"]
            base = label.endswith("(regex only)")
            peer = "bpeds split (regex only)"
            same = ""
            if row.get("equal_to_reference"):
                same = f"{row['equal_to_reference']} {row['reference']}"
            mb = row.get("mb")
            rows.append(
                [
                    w,
                    label,
                    f(row["cpu_job"]),
                    f(row["wall_job"]),
                    f(mb / row["cpu_job"]) if mb and row["cpu_job"] else "",
                    f(row.get("pieces"), 0),
                    f(row.get("types"), 0),
                    "1" if base else ratio_cell(r.ratio(w, label, peer, "cpu_job")),
                    "1" if base else ratio_cell(r.ratio(w, label, peer, "wall_job")),
                    same,
                ]
            )
    return markdown_table(header, rows)


def table_scores(r: Results) -> str:
    header = ["score", "vocab", "job CPU s", "merge CPU s", "÷ frequency CPU", "÷ frequency wall",
              "held-out bytes/token"]  # fmt: skip
    rows = []
    for w in ("wl6-scores",):
        vocab = next((x["merges"] for x in r.rows(w) if x.get("merges")), None)
        for row in r.rows(w):
            label = row["impl"]
            rows.append(
                [
                    label,
                    f(None if vocab is None else vocab + 256, 0),
                    f(row["cpu_job"]),
                    f(row.get("cpu_merge")),
                    ratio_cell(r.ratio(w, label, "frequency", "cpu_job"))
                    if label != "frequency"
                    else "1",
                    ratio_cell(r.ratio(w, label, "frequency", "wall_job"))
                    if label != "frequency"
                    else "1",
                    f(row.get("heldout_bytes_per_token"), 3),
                ]
            )
    return markdown_table(header, rows)


def table_variants(r: Results) -> str:
    header = ["workload", "impl", "job CPU s", "÷ reference (job CPU)", "prep / merge CPU s",
              "merges", "peak RSS MiB", "held-out bytes/token"]  # fmt: skip
    rows = []
    for w, ref in (("wl10-variants", "frequency"), ("wl10-continue", "scratch")):
        for row in r.rows(w):
            label = row["impl"]
            rows.append(
                [
                    w,
                    label,
                    f(row["cpu_job"]),
                    "1" if label == ref else ratio_cell(r.ratio(w, label, ref, "cpu_job")),
                    f"{f(row.get('cpu_prep'))} / {f(row.get('cpu_merge'))}",
                    f(row.get("merges"), 0),
                    f(row["peak_rss_mib"], 0),
                    f(row.get("heldout_bytes_per_token"), 3),
                ]
            )
    return markdown_table(header, rows)


def scaling_points(r: Results) -> dict[str, list[tuple[float, float, float, float]]]:
    """impl -> [(MB, CPU s per MB, wall s per MB, peak RSS MiB)] from the scaling runs."""
    out: dict[str, list[tuple[float, float, float, float]]] = {}
    for row in r.rows("wl7-scaling"):
        impl = row["impl"].rsplit(" ", 2)[0]
        mb = float(row.get("mb") or 0)
        if not mb:
            continue
        out.setdefault(impl, []).append(
            (mb, row["cpu_job"] / mb, row["wall_job"] / mb, row["peak_rss_mib"])
        )
    for points in out.values():
        points.sort()
    return out


def table_scaling(r: Results) -> str:
    points = scaling_points(r)
    header = ["MB", "bpeds CPU s", "bpeds CPU s/MB", "÷ 8 MB", "bpeds peak RSS MiB",
              "rustbpe CPU s/MB", "rustbpe wall s/MB", "rustbpe peak RSS MiB"]  # fmt: skip
    bpeds = points.get("bpeds", [])
    rust = {round(p[0]): p for p in points.get("rustbpe", [])}
    ref = next((p[1] for p in bpeds if round(p[0]) == 8), None)
    rows = []
    for mb, cpu_mb, _, rss in bpeds:
        rp = rust.get(round(mb))
        rows.append(
            [
                f(mb, 1),
                f(cpu_mb * mb),
                f(cpu_mb, 3),
                ratio_cell(cpu_mb / ref) if ref else "",
                f(rss, 0),
                f(rp[1], 3) if rp else "",
                f(rp[2], 3) if rp else "",
                f(rp[3], 0) if rp else "",
            ]
        )
    return markdown_table(header, rows)


def table_ablations(r: Results) -> str:
    header = ["workload", "variant", "merge CPU s", "job CPU s", "÷ baseline (merge CPU)",
              "÷ baseline (job CPU)", "peak RSS MiB", "same merges as baseline"]  # fmt: skip
    rows = []
    for w in r.ablations():
        table = r.rows(w)
        if not table:
            continue
        base = table[0]["impl"]
        for row in table:
            label = row["impl"]
            is_base = label == base
            same = row.get("equal_to_reference") or ("(baseline)" if is_base else "")
            rows.append(
                [
                    w,
                    label,
                    f(row.get("cpu_merge")),
                    f(row["cpu_job"]),
                    "1" if is_base else ratio_cell(_merge_ratio(r, w, label, base)),
                    "1" if is_base else ratio_cell(r.ratio(w, label, base, "cpu_job")),
                    f(row["peak_rss_mib"], 0),
                    same,
                ]
            )
    return markdown_table(header, rows)


def _merge_ratio(r: Results, w: str, label: str, base: str) -> float | None:
    by = {(x["impl"], x["rep"]): x for x in r.runs if x["workload"] == w}
    values = []
    for (impl, rep), x in by.items():
        b = by.get((base, rep))
        if impl == label and b and x.get("cpu_merge") and b.get("cpu_merge"):
            values.append(x["cpu_merge"] / b["cpu_merge"])
    return median(values)


TABLES: dict[str, Callable[[Results], str]] = {
    "meta": table_meta,
    "targets": table_targets,
    "training": table_training,
    "training-ratios": lambda r: table_ratios(
        r, ("wl1-taylorswift", "wl2-en13", "wl3-en62", "wl4-multi")
    ),
    "split": table_split,
    "encode": table_encode,
    "scores": table_scores,
    "scaling": table_scaling,
    "ablations": table_ablations,
    "variants": table_variants,
}


# -- plots ----------------------------------------------------------------------------------


def plots(r: Results, folder: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    folder.mkdir(parents=True, exist_ok=True)
    made: list[Path] = []
    stamp = f"{r.meta['date']}, {r.meta['cpu']}, load median {f(r.meta['load1_median'])}"

    def save(fig: Any, name: str) -> None:
        fig.text(0.01, 0.005, stamp, fontsize=6, color="0.4")
        fig.tight_layout(rect=(0, 0.02, 1, 1))
        path = folder / name
        fig.savefig(path, dpi=90)
        plt.close(fig)
        made.append(path)

    names = [w for w in ("wl2-en13", "wl3-en62", "wl4-multi") if r.has(w)]
    if names:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
        impls: list[str] = []
        for w in names:
            impls += [x["impl"] for x in r.rows(w) if x["impl"] not in impls]
        width = 0.8 / max(1, len(impls))
        for k, impl in enumerate(impls):
            for ax, key in zip(axes, ("wall_job", "peak_rss_mib"), strict=True):
                values = [
                    next((x[key] for x in r.rows(w) if x["impl"] == impl), 0) or 0 for w in names
                ]
                ax.bar([i + k * width for i in range(len(names))], values, width, label=impl)
        for ax, title in zip(axes, ("training job, wall s", "peak RSS, MiB"), strict=True):
            ax.set_xticks([i + 0.4 - width / 2 for i in range(len(names))], names)
            ax.set_title(title)
        axes[0].legend(fontsize=7)
        save(fig, "perf-training.png")

    points = scaling_points(r)
    if points:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.6))
        for impl, pts in points.items():
            mbs = [p[0] for p in pts]
            axes[0].plot(mbs, [p[1] for p in pts], marker="o", label=f"{impl} CPU s/MB")
            axes[1].plot(mbs, [p[3] for p in pts], marker="o", label=impl)
        from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

        sizes = sorted({round(p[0]) for pts in points.values() for p in pts})
        for ax, title in zip(axes, ("cost per MB (CPU s / MB)", "peak RSS, MiB"), strict=True):
            ax.set_xscale("log", base=2)
            ax.xaxis.set_major_locator(FixedLocator(sizes))
            ax.xaxis.set_minor_locator(NullLocator())
            ax.xaxis.set_major_formatter(ScalarFormatter())
            ax.set_xlabel("corpus MB")
            ax.set_title(title)
            ax.set_ylim(bottom=0)
            ax.legend(fontsize=7)
        save(fig, "perf-scaling.png")

    enc = r.rows("wl5-encode")
    if enc:
        fig, ax = plt.subplots(figsize=(8, 3.4))
        labels = [x["impl"] for x in enc]
        ax.barh(labels, [x.get("mb_per_s") or 0 for x in enc], color="tab:blue")
        ax.invert_yaxis()
        ax.set_xlabel("MB/s (higher is better)")
        ax.set_title("encoding en13.txt")
        ax.tick_params(axis="y", labelsize=8)
        save(fig, "perf-encode.png")

    scores = [x for x in r.rows("wl6-scores") if x["impl"] != "frequency"]
    if scores:
        fig, axes = plt.subplots(1, 2, figsize=(9, 3.4))
        labels = [x["impl"] for x in scores]
        axes[0].barh(labels, [r.ratio("wl6-scores", s, "frequency", "cpu_job") or 0
                              for s in labels])  # fmt: skip
        axes[0].axvline(1, color="0.3", lw=0.8)
        axes[0].set_title("CPU time ÷ Frequency's")
        rows = r.rows("wl6-scores")
        axes[1].barh(
            [x["impl"] for x in rows], [x.get("heldout_bytes_per_token") or 0 for x in rows]
        )
        axes[1].set_title("held-out bytes per token (higher: fewer tokens)")
        for ax in axes:
            ax.invert_yaxis()
            ax.tick_params(axis="y", labelsize=8)
        save(fig, "perf-scores.png")

    abl: list[tuple[str, float]] = []
    for w in r.ablations():
        table = r.rows(w)
        if table:
            base = table[0]["impl"]
            for x in table[1:]:
                value = _merge_ratio(r, w, x["impl"], base)
                if value is not None:
                    abl.append((f"{w[4:]}: {x['impl']}", value))
    if abl:
        from matplotlib.ticker import FixedLocator, NullLocator, ScalarFormatter

        fig, ax = plt.subplots(figsize=(8, 0.3 * len(abl) + 1.2))
        values = [v for _, v in abl]
        colors = ["tab:green" if v < 1 else "tab:orange" for v in values]
        ax.barh([a for a, _ in abl], [v - 1 for v in values], left=1, color=colors)
        ax.axvline(1, color="0.3", lw=0.8)
        ax.set_xscale("log")
        ticks = [t for t in (0.5, 0.67, 0.8, 1, 1.25, 1.5, 2, 3, 4, 6, 8, 12, 16) if
                 min(values) / 1.2 <= t <= max(values) * 1.2]  # fmt: skip
        ax.xaxis.set_major_locator(FixedLocator(ticks))
        ax.xaxis.set_minor_locator(NullLocator())
        ax.xaxis.set_major_formatter(ScalarFormatter())
        ax.invert_yaxis()
        ax.set_xlabel("merge-phase CPU time ÷ baseline's (log scale; < 1 is faster)")
        ax.tick_params(axis="y", labelsize=7)
        save(fig, "perf-ablations.png")
    return made


# -- output ---------------------------------------------------------------------------------


def splice(doc: str, name: str, body: str) -> str:
    begin, end = f"<!-- begin suite:{name} -->", f"<!-- end suite:{name} -->"
    pattern = re.compile(re.escape(begin) + r".*?" + re.escape(end), re.S)
    if not pattern.search(doc):
        raise SystemExit(f"error: {DOC} has no {begin} ... {end} markers")
    return pattern.sub(lambda _: f"{begin}\n{body}\n{end}", doc)


def publish(folder: Path, doc: Path = DOC, img: Path = IMG) -> None:
    """Regenerate the tables in ``doc`` and the plots in ``img`` from the run in ``folder``."""
    r = Results(folder)
    text = doc.read_text(encoding="utf-8")
    for name, make in TABLES.items():
        text = splice(text, name, make(r))
    doc.write_text(text, encoding="utf-8")
    made = plots(r, img)
    print(f"updated {doc} and {', '.join(p.name for p in made)} in {img}")


def console(folder: Path) -> str:
    r = Results(folder)
    return "\n\n".join(f"## {name}\n\n{make(r)}" for name, make in TABLES.items())


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("--results", type=Path, default=HERE / "published", help="a run's folder")
    parser.add_argument("--print", action="store_true", help="print the tables, change nothing")
    args = parser.parse_args(argv)
    if args.print:
        print(console(args.results))
    else:
        publish(args.results)
    return 0


if __name__ == "__main__":
    sys.exit(main())
