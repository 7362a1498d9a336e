"""The figures of a comparison, drawn with matplotlib (the ``compare`` extra).

``compression.png`` and ``renyi.png`` (bytes per token and Rényi efficiency
against vocabulary size, a line per configuration), ``token_lengths.png``
(merged-token lengths), ``premium.png`` (per-group premium, when the held-out
text has groups) and ``overlap.png`` (the Jaccard heat map). matplotlib is
imported only when a figure is drawn; the tables and CSV need nothing.
"""

from __future__ import annotations

import io
import math
from collections import Counter
from typing import Any, Protocol

__all__ = ["FIGURES", "LENGTH_CAP", "Measured", "figures"]

#: Every figure a comparison can draw, in the order of its report.
FIGURES = ("compression.png", "renyi.png", "token_lengths.png", "premium.png", "overlap.png")
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


def figures(c: Measured) -> dict[str, bytes]:
    """The figures of comparison ``c`` as PNG bytes, by file name (those of
    :data:`FIGURES` that apply: ``premium.png`` with held-out groups, ``overlap.png``
    with two configurations or more). Needs matplotlib (``ImportError`` saying so)."""
    try:
        from matplotlib.figure import Figure
    except ImportError:
        raise ImportError(
            "plots need matplotlib, which is not installed: pip install 'bpeds[compare]' "
            "(or matplotlib); the tables and CSV need nothing"
        ) from None

    def png(fig: Any) -> bytes:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110)
        return buf.getvalue()

    out: dict[str, bytes] = {}
    labels = [label for label in c.labels if c.tokenizers.get(label) is not None]
    for name, key, ylabel, title in (
        ("compression.png", "bytes_per_token", "bytes per token (held-out)", "Compression"),
        (
            "renyi.png",
            "renyi_efficiency",
            f"Rényi efficiency, alpha = {c.alpha:g}",
            "Rényi efficiency",
        ),
    ):
        fig = Figure(layout="constrained", figsize=(7, 4.5))
        ax = fig.add_subplot()
        for label in labels:
            pts = [
                (r["vocab_size"], r[key])
                for r in c.rows
                if r["config"] == label and r.get(key) is not None
            ]
            ax.plot([p[0] for p in pts], [p[1] for p in pts], marker="o", label=label)
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
        out[name] = png(fig)

    fig = Figure(layout="constrained", figsize=(7, 4.5))
    ax = fig.add_subplot()
    longest = max((max(h, default=0) for h in c.token_lengths.values()), default=0)
    cap = max(2, min(longest, LENGTH_CAP))  # lengths from cap on share the last point
    xs = list(range(2, cap + 1))
    for label in labels:
        h = c.token_lengths[label]
        total = sum(h.values()) or 1
        ys = [h.get(x, 0) for x in xs[:-1]]
        ys.append(sum(n for length, n in h.items() if length >= cap))
        ax.plot(xs, [100 * y / total for y in ys], marker="o", markersize=3, label=label)
    names = [str(x) for x in xs]
    if longest > cap:
        names[-1] = f"{cap}+"
    ax.set_xticks(xs, names)
    ax.set_xlabel("token length (bytes)")
    ax.set_ylabel("% of merged tokens")
    ax.set_title("Lengths of the merged tokens")
    ax.legend(fontsize="small")
    out["token_lengths.png"] = png(fig)

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
            )
        ax.axhline(1.0, color="grey", linewidth=0.8)
        ax.set_xticks(range(len(c.groups)), c.groups, rotation=45, ha="right")
        ax.set_ylabel(f"tokens relative to {c.reference}")
        ax.set_title("Tokenization premium per group (1 = as many tokens as the reference)")
        ax.legend(fontsize="small", ncols=2)
        out["premium.png"] = png(fig)

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
        out["overlap.png"] = png(fig)
    return out
