"""The figures of a comparison, drawn with matplotlib (the ``compare`` extra).

``compression`` and ``renyi`` (bytes per token and Rényi efficiency against
vocabulary size, a line per configuration), ``token_lengths`` (merged-token
lengths), ``premium`` (per-group premium, when the held-out text has groups)
and ``overlap`` (the Jaccard heat map). Each is written twice, for a paper: as
SVG (vector; the same bytes on every run, no date inside) and as a 300-dpi
PNG, cropped to what is drawn (no label cut off). Every configuration has its own
hollow marker and line style as well as its own colour, so lines stay apart in
print and in grey, and equal values show both markers. matplotlib is imported only
when a figure is drawn; the tables and CSV need nothing.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from typing import Any, Protocol

__all__ = ["DPI", "FIGURES", "FORMATS", "LENGTH_CAP", "Measured", "figure_files", "figures"]

#: Every figure a comparison can draw, in the order of its report.
FIGURES = ("compression", "renyi", "token_lengths", "premium", "overlap")
#: The formats each figure is written in: vector, then raster.
FORMATS = ("svg", "png")
#: Resolution of the PNG files.
DPI = 300
# Marker and line style of the i-th configuration (cycled): told apart without colour.
_MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*", "<", ">")
_LINES = ("-", "--", "-.", ":")
#: The token-length figure's last point: this many bytes or more.
LENGTH_CAP = 24


class Measured(Protocol):
    """What the figures read of a :class:`~bpeds.comparison.Comparison`."""

    rows: list[dict[str, Any]]
    tokenizers: Any
    groups: list[str]
    reference: str | None
    alpha: float
    overlap: dict[str, dict[str, float]]
    token_lengths: dict[str, Counter[int]]

    @property
    def labels(self) -> list[str]: ...

    def row(self, label: str, vocab_size: int | None = None) -> dict[str, Any]: ...


def figure_files(names: list[str]) -> list[str]:
    """The files of the figures ``names``: each in every format of :data:`FORMATS`.

    >>> figure_files(["renyi"])
    ['renyi.svg', 'renyi.png']
    """
    return [f"{n}.{ext}" for n in names for ext in FORMATS]


def _style(i: int) -> dict[str, Any]:
    """Marker and line style of the ``i``-th configuration: hollow markers, so that two
    configurations with the same value both show."""
    return {
        "marker": _MARKERS[i % len(_MARKERS)],
        "linestyle": _LINES[i % len(_LINES)],
        "fillstyle": "none",
        "markeredgewidth": 1.5,
    }


def figures(c: Measured) -> dict[str, bytes]:
    """The figures of comparison ``c`` by file name, each as SVG and as PNG
    (:func:`figure_files`; those of :data:`FIGURES` that apply: ``premium`` with
    held-out groups, ``overlap`` with two configurations or more). Needs matplotlib
    (``ImportError`` saying so)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "plots need matplotlib, which is not installed: pip install 'bpeds[compare]' "
            "(or matplotlib); the tables and CSV need nothing"
        ) from None

    import matplotlib

    def save(name: str, fig: Any) -> None:
        for ext in FORMATS:
            buf = io.BytesIO()
            # No date or software stamp: the same comparison gives the same bytes.
            meta = {"Date": None} if ext == "svg" else {"Software": None}
            with matplotlib.rc_context({"svg.hashsalt": "bpeds", "svg.fonttype": "none"}):
                fig.savefig(
                    buf, format=ext, dpi=DPI, metadata=meta, bbox_inches="tight", pad_inches=0.05
                )
            out[f"{name}.{ext}"] = buf.getvalue()

    out: dict[str, bytes] = {}
    labels = [label for label in c.labels if c.tokenizers.get(label) is not None]
    for name, key, ylabel, title in (
        ("compression", "bytes_per_token", "bytes per token (held-out)", "Compression"),
        (
            "renyi",
            "renyi_efficiency",
            f"Rényi efficiency, alpha = {c.alpha:g}",
            "Rényi efficiency",
        ),
    ):
        fig = Figure(layout="constrained", figsize=(7, 4.5))
        ax = fig.add_subplot()
        for i, label in enumerate(labels):
            pts = [
                (r["vocab_size"], r[key])
                for r in c.rows
                if r["config"] == label and r.get(key) is not None
            ]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], label=label, **_style(i))
        ax.set_xscale("log", base=2)
        ticks = sorted({r["vocab_size"] for r in c.rows if r["config"] in labels})
        if len(ticks) > 10:  # keep about ten labelled ticks
            ticks = ticks[:: math.ceil(len(ticks) / 10)] + ticks[-1:]
        ax.set_xticks(ticks, [str(t) for t in ticks], rotation=45, ha="right")
        ax.minorticks_off()
        ax.set_xlabel("vocabulary size")
        ax.set_ylabel(ylabel)
        ax.set_title(f"{title} against vocabulary size")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize="small")
        save(name, fig)

    fig = Figure(layout="constrained", figsize=(7, 4.5))
    ax = fig.add_subplot()
    longest = max((max(h, default=0) for h in c.token_lengths.values()), default=0)
    cap = max(2, min(longest, LENGTH_CAP))  # lengths from cap on share the last point
    xs = list(range(2, cap + 1))
    for i, label in enumerate(labels):
        h = c.token_lengths[label]
        total = sum(h.values()) or 1
        ys = [h.get(x, 0) for x in xs[:-1]]
        ys.append(sum(n for length, n in h.items() if length >= cap))
        ax.plot(xs, [100 * y / total for y in ys], markersize=4, label=label, **_style(i))
    names = [str(x) for x in xs]
    if longest > cap:
        names[-1] = f"{cap}+"
    ax.set_xticks(xs, names)
    ax.set_xlabel("token length (bytes)")
    ax.set_ylabel("% of merged tokens")
    ax.set_title("Lengths of the merged tokens")
    ax.legend(fontsize="small")
    save("token_lengths", fig)

    if c.groups:
        width = 0.8 / max(1, len(labels))
        fig = Figure(
            layout="constrained",
            figsize=(max(7.0, min(14.0, 4.0 + 0.25 * len(c.groups) * max(1, len(labels)))), 4.5),
        )
        ax = fig.add_subplot()
        for i, label in enumerate(labels):
            r = c.row(label)
            ax.bar(
                [g - 0.4 + width * (i + 0.5) for g in range(len(c.groups))],
                [r.get(f"premium[{g}]") or 0.0 for g in c.groups],
                width=width,
                label=label,
                hatch=("", "//", "..", "xx", "\\\\", "++")[i % 6],
                edgecolor="black",
                linewidth=0.5,
            )
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(c.groups)), c.groups, rotation=45, ha="right")
        ax.set_ylabel(f"tokens relative to {c.reference}")
        ax.set_title("Tokenization premium per group (1 = as many tokens as the reference)")
        ax.legend(fontsize="small", ncols=2)
        save("premium", fig)

    if len(labels) > 1:
        size = 1.2 + 0.9 * len(labels)
        fig = Figure(layout="constrained", figsize=(size + 1.5, size))
        ax = fig.add_subplot()
        grid = [[c.overlap[a][b] for b in labels] for a in labels]
        im = ax.imshow(grid, vmin=0.0, vmax=1.0, cmap="viridis")
        ax.set_xticks(range(len(labels)), labels, rotation=45, ha="right")
        ax.set_yticks(range(len(labels)), labels)
        for i in range(len(labels)):
            for j in range(len(labels)):
                v = grid[i][j]
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="w" if v < 0.6 else "k")
        fig.colorbar(im, ax=ax, label="Jaccard index of merged tokens")
        ax.set_title("Vocabulary overlap")
        save("overlap", fig)
    return out
