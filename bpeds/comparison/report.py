"""The result of a comparison: :class:`Comparison`, its tables, CSV file and report.

A :class:`Comparison` holds the metric rows (:data:`~bpeds.comparison.metrics.METRICS`),
the tokenizers, the errors and warnings of each configuration, and the
pairwise measures (vocabulary overlap, rank agreement of shared merges). It
renders them as CSV and Markdown, draws the figures
(:mod:`bpeds.comparison.plots`) and writes a report; every file is written
atomically, and an existing one is refused before anything is written unless
``overwrite``.
"""

from __future__ import annotations

import csv
import io
import json
import os
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from bpeds.comparison.metrics import METRICS, emitted_merges, jaccard, spearman
from bpeds.comparison.plots import FIGURES, figure_files, figures
from bpeds.tokenizer import BYTE_TOKENS, Tokenizer
from bpeds.tokenizer.files import check_targets, write_files

__all__ = ["Comparison"]


def _fmt(v: object) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.4g}" if abs(v) < 1000 else f"{v:.0f}"
    return str(v)


class Comparison:
    """The result of :func:`compare`: metric rows, tables, plots and the pairwise measures.

    ``rows``: one dict per configuration and vocabulary size (columns
    ``config``, ``vocab_size``, ``merges``, then :data:`METRICS`, then the
    per-group columns), in configuration order, sizes ascending; ``None``
    where a value does not apply (``undertrained`` and the cost are measured
    at the full size). ``tokenizers``: label -> trained tokenizer (``None``
    for one that failed); ``errors``: label -> what went wrong; ``notes``:
    label -> warnings training gave. ``overlap``: label -> label -> Jaccard
    index of the merged tokens' byte strings; ``agreement``: label -> label ->
    ``(shared merges, Spearman's rho of their ranks)``. ``token_lengths``:
    label -> ``Counter`` of merged-token lengths in bytes. ``counting_s``:
    wall seconds spent counting the training and held-out text (once).
    ``provenance``: the data files with their SHA-256, bpeds's version, the date and the
    machine (:func:`bpeds.comparison.provenance.provenance`), and each configuration's
    arguments; :meth:`report` writes it out.
    """

    def __init__(
        self,
        rows: list[dict[str, Any]],
        tokenizers: dict[str, Tokenizer | None],
        errors: dict[str, str],
        notes: dict[str, list[str]],
        groups: list[str],
        reference: str | None,
        alpha: float,
        counting_s: float,
        provenance: Mapping[str, Any] | None = None,
    ) -> None:
        self.rows = rows
        self.tokenizers = tokenizers
        self.errors = errors
        self.notes = notes
        self.groups = groups
        self.reference = reference
        self.alpha = alpha
        self.counting_s = counting_s
        self.provenance = dict(provenance or {})
        done = {k: t.renumbered() for k, t in tokenizers.items() if t is not None}
        # Over the merged tokens each can emit (a loop variant's removed and hidden ones
        # are never produced), in merge order.
        merged = {k: emitted_merges(t) for k, t in done.items()}
        sets = {k: {t.token_bytes(i) for i in merged[k]} for k, t in done.items()}
        pairs = {
            k: [
                (t.token_bytes(a), t.token_bytes(b))
                for a, b in (t.merges[i - BYTE_TOKENS] for i in merged[k])
            ]
            for k, t in done.items()
        }
        self.overlap = {a: {b: jaccard(sets[a], sets[b]) for b in done} for a in done}
        self.agreement = {a: {b: spearman(pairs[a], pairs[b]) for b in done} for a in done}
        self.token_lengths = {
            k: Counter(len(t.token_bytes(i)) for i in merged[k]) for k, t in done.items()
        }

    @property
    def labels(self) -> list[str]:
        """The configurations' labels, in order."""
        return list(self.tokenizers)

    @property
    def columns(self) -> list[str]:
        """The column names of :attr:`rows`, in order."""
        cols = ["config", "vocab_size", "merges", *METRICS]
        for g in self.groups:
            cols += [f"tokens_per_byte[{g}]", f"premium[{g}]"]
        return [*cols, "error"]

    def row(self, label: str, vocab_size: int | None = None) -> dict[str, Any]:
        """The row of ``label`` at ``vocab_size`` (default: its largest).

        ``KeyError`` naming the labels and sizes there are when there is no such row.
        """
        mine = [r for r in self.rows if r["config"] == label]
        if vocab_size is not None:
            mine = [r for r in mine if r["vocab_size"] == vocab_size]
        if not mine:
            have = sorted({(r["config"], r["vocab_size"]) for r in self.rows})
            raise KeyError(f"no row for {label!r} at vocab_size={vocab_size}; rows: {have}")
        return mine[-1]

    def final_rows(self) -> list[dict[str, Any]]:
        """Each configuration's row at its full size (a failed one: only its error)."""
        out = []
        for label in self.labels:
            mine = [r for r in self.rows if r["config"] == label]
            out.append(mine[-1] if mine else {"config": label, "error": self.errors.get(label)})
        return out

    def to_csv(self, path: str | os.PathLike[str] | None = None, *, overwrite: bool = False) -> str:
        """Every row as CSV (a header, then one line per row); written atomically to
        ``path`` if given (``FileExistsError`` if it exists, unless ``overwrite``)."""
        buf = io.StringIO()
        w = csv.DictWriter(buf, fieldnames=self.columns, lineterminator="\n")
        w.writeheader()
        for r in self.rows:
            w.writerow({k: ("" if r.get(k) is None else r.get(k)) for k in self.columns})
        for label, err in self.errors.items():
            w.writerow({"config": label, "error": err})
        text = buf.getvalue()
        if path is not None:
            write_files([(path, text.encode("utf-8"))], overwrite=overwrite)
        return text

    def to_markdown(self, *, all_sizes: bool = False) -> str:
        """Markdown tables: the metrics at each configuration's full size (every size with
        ``all_sizes``), the per-group columns, and the pairwise overlap and agreement."""
        out: list[str] = []
        rows = self.rows if all_sizes else [r for r in self.final_rows() if "vocab_size" in r]
        metric_cols = ["config", "vocab_size", *METRICS]
        out.append(_table(metric_cols, rows))
        if self.groups:
            out.append("")
            gcols = ["config", "vocab_size"]
            gcols += [f"tokens_per_byte[{g}]" for g in self.groups]
            gcols += [f"premium[{g}]" for g in self.groups]
            out.append(_table(gcols, rows))
        labels = list(self.overlap)
        if len(labels) > 1:
            out.append("")
            out.append("Vocabulary overlap (Jaccard index of the merged tokens):")
            out.append("")
            grid = [{"": a, **{b: self.overlap[a][b] for b in labels}} for a in labels]
            out.append(_table(["", *labels], grid))
            out.append("")
            out.append("Rank agreement of shared merges (Spearman's rho; shared merges):")
            out.append("")
            grid = []
            for a in labels:
                cells: dict[str, Any] = {"": a}
                for b in labels:
                    n, rho = self.agreement[a][b]
                    cells[b] = "" if rho is None else f"{rho:.3f} ({n})"
                grid.append(cells)
            out.append(_table(["", *labels], grid))
        if self.errors:
            out.append("")
            out.append("Failed configurations:")
            out.append("")
            out += [f"- `{label}`: {err}" for label, err in self.errors.items()]
        return "\n".join(out) + "\n"

    def _repr_markdown_(self) -> str:
        return self.to_markdown()

    def __repr__(self) -> str:
        return (
            f"Comparison(configs={self.labels!r}, rows={len(self.rows)}, "
            f"errors={sorted(self.errors)!r})"
        )

    def plot(self, directory: str | os.PathLike[str], *, overwrite: bool = False) -> list[Path]:
        """Write the figures in ``directory``, each as SVG and as a 300-dpi PNG, and return
        their paths.

        ``compression`` and ``renyi`` (bytes per token and Rényi efficiency against
        vocabulary size, a line per configuration), ``token_lengths`` (merged-token
        lengths), ``premium`` (per-group premium, when the held-out text has groups)
        and ``overlap`` (the Jaccard heat map, for two configurations or more). Needs
        matplotlib (``pip install 'bpeds[compare]'``; ``ImportError`` saying so). Files
        are written atomically; one that exists raises ``FileExistsError`` before
        anything is written, unless ``overwrite``.
        """
        target = Path(directory)
        check_targets([target / n for n in self.figure_names()], overwrite=overwrite)
        return write_files(
            [(target / name, data) for name, data in figures(self).items()], overwrite=overwrite
        )

    def figure_names(self) -> list[str]:
        """The files :meth:`plot` writes for this comparison (``NAME.svg``, ``NAME.png``)."""
        done = [k for k, t in self.tokenizers.items() if t is not None]
        names = [
            n
            for n in FIGURES
            if (n != "premium" or self.groups) and (n != "overlap" or len(done) > 1)
        ]
        return figure_files(names)

    def report(
        self, directory: str | os.PathLike[str], *, plots: bool = True, overwrite: bool = False
    ) -> list[Path]:
        """Write ``report.md`` (tables, the figures embedded, the provenance),
        ``results.csv`` and the figures (SVG and PNG) to ``directory`` (made if missing);
        return the paths written. Without ``overwrite`` an existing file raises
        ``FileExistsError`` before anything is written."""
        target = Path(directory)
        target.mkdir(parents=True, exist_ok=True)
        names = ["report.md", "results.csv", *(self.figure_names() if plots else [])]
        check_targets([target / n for n in names], overwrite=overwrite)
        drawn = figures(self) if plots else {}
        md = ["# Tokenizer comparison", ""]
        md.append(
            f"Metrics on the held-out text (Rényi efficiency with alpha = {self.alpha:g}); "
            "definitions in the bpeds documentation (docs/compare.md)."
        )
        md += ["", self.to_markdown()]
        titles = {
            "compression": "Compression against vocabulary size",
            "renyi": "Rényi efficiency against vocabulary size",
            "token_lengths": "Lengths of the merged tokens",
            "premium": "Tokenization premium per group",
            "overlap": "Vocabulary overlap",
        }
        for name in FIGURES:
            if f"{name}.png" in drawn:
                title = titles[name]
                md += [f"## {title}", "", f"![{title}]({name}.png)", ""]
                md += [f"Vector version: [{name}.svg]({name}.svg).", ""]
        md += ["## Every vocabulary size", "", self.to_markdown(all_sizes=True)]
        if any(self.notes.values()):
            md += ["## Warnings", ""]
            for label, ns in self.notes.items():
                md += [f"- `{label}`: {n.strip()}" for n in ns]
            md.append("")
        md += _provenance_md(self.provenance, self.tokenizers)
        files = [
            (target / "report.md", "\n".join(md).encode("utf-8")),
            (target / "results.csv", self.to_csv().encode("utf-8")),
            *[(target / n, d) for n, d in drawn.items()],
        ]
        return write_files(files, overwrite=overwrite)


def _provenance_md(
    prov: Mapping[str, Any], tokenizers: Mapping[str, Tokenizer | None]
) -> list[str]:
    """The report's provenance section: data with checksums, configurations, software,
    date and machine."""
    md = ["## Provenance", ""]
    if "date" in prov:
        md.append(f"- Date (UTC): {prov['date']}")
    m = prov.get("machine", {})
    if m:
        md.append(f"- bpeds {m.get('bpeds')}, Python {m.get('python')}, {m.get('platform')}")
        md.append(
            f"- Machine: {m.get('cpu')}, {m.get('cores_available')} cores available to the "
            f"process ({m.get('cores')} in the machine)"
        )
    for part in ("train", "heldout"):
        entries = prov.get(part)
        if not entries:
            continue
        md += ["", f"{'Training' if part == 'train' else 'Held-out'} data:", ""]
        for e in entries:
            group = f"group `{e['group']}`: " if "group" in e else ""
            if "file" in e:
                md.append(f"- {group}`{e['file']}`, {e['bytes']:,} bytes, SHA-256 `{e['sha256']}`")
            elif "strings" in e:
                md.append(
                    f"- {group}{e['strings']:,} strings in memory, {e['characters']:,} "
                    f"characters, SHA-256 `{e['sha256']}` (UTF-8, each string ended by NUL)"
                )
            else:
                md.append(f"- {group}{e['source']}")
    configs = prov.get("configs", {})
    if configs or tokenizers:
        md += [
            "",
            "Configurations (`bpeds.train`'s arguments; a given model's recorded options):",
            "",
        ]
        for label, tok in tokenizers.items():
            given = configs.get(label)
            shown = given if given is not None else (tok.options if tok is not None else {})
            md.append(f"- `{label}`: `{_json(shown)}`")
    md.append("")
    return md


def _json(value: object) -> str:
    return json.dumps(value, sort_keys=True, default=repr, ensure_ascii=False)


def _table(cols: Sequence[str], rows: Iterable[Mapping[str, Any]]) -> str:
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join(" --- " for _ in cols) + "|"]
    for r in rows:
        lines.append("| " + " | ".join(_fmt(r.get(c)) for c in cols) + " |")
    return "\n".join(lines)


# -- compare -----------------------------------------------------------------------------------
