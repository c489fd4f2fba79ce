"""The report's plots (matplotlib, embedded PNG): the main score by difficulty per run, and
image-level against graph-level score per item when image-level scores exist."""

from __future__ import annotations

import io
from collections.abc import Mapping, Sequence
from html import escape
from typing import Any

from sciflow.views.report.data import DIFFICULTIES, Run, main_metric
from sciflow.views.report.embed import png_uri

__all__ = ["RUN_COLORS", "plots"]

RUN_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


def plots(runs: Sequence[Run]) -> str:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    metric = main_metric(runs)
    out = ['<h2 id="plots">Plots</h2><div class="plots">']

    def save(fig: Any, alt: str, caption: str) -> str:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        return (f'<figure class="fig"><img alt="{escape(alt)}" src="{png_uri(buf.getvalue())}">'
                f"<figcaption>{escape(caption)}</figcaption></figure>")

    diffs = [d for d in DIFFICULTIES if any(d in r.summary.get("by_difficulty", {}) for r in runs)]
    if diffs:
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        width = 0.8 / max(1, len(runs))
        for i, r in enumerate(runs):
            xs, ys, ns = [], [], []
            for j, d in enumerate(diffs):
                cell = r.summary.get("by_difficulty", {}).get(d)
                if cell and cell.get(metric) is not None:
                    xs.append(j + (i - (len(runs) - 1) / 2) * width)
                    ys.append(cell[metric])
                    ns.append(cell["n"])
            bars = ax.bar(xs, ys, width=width * 0.95, label=r.name, color=RUN_COLORS[i % len(RUN_COLORS)])
            for b, n in zip(bars, ns, strict=True):
                ax.annotate(f"n={n}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                            fontsize=7, xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(range(len(diffs)), diffs)
        ax.set_ylim(0, 1.05)
        ax.set_ylabel(f"{metric} score")
        ax.set_xlabel("difficulty tier")
        ax.set_title(f"{metric} score by difficulty")
        # beside the axes, never over the bars
        ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
        out.append(save(fig, f"{metric} score by difficulty per run", f"Mean {metric} score by difficulty; "
                        "n = items behind each bar."))
    else:
        out.append('<p class="note">No difficulty labels in these runs; the by-difficulty plot is omitted.</p>')

    pts = [
        (i, r.name, row["id"], row["scores"]["graph"], row["scores"]["image"])
        for i, r in enumerate(runs)
        for row in r.rows
        if isinstance(row.get("scores"), Mapping)
        and row["scores"].get("image") is not None
        and row["scores"].get("graph") is not None
    ]
    if pts:
        fig, ax = plt.subplots(figsize=(4.6, 4.2))
        for i, r in enumerate(runs):
            mine = [p for p in pts if p[0] == i]
            if mine:
                ax.scatter([p[3] for p in mine], [p[4] for p in mine], s=28, label=r.name, alpha=0.85,
                           color=RUN_COLORS[i % len(RUN_COLORS)])
        ax.plot([0, 1], [0, 1], color="#bbb", lw=1, ls="--")
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("graph-level score")
        ax.set_ylabel("image-level score")
        ax.set_title("image-level vs graph-level, per item")
        ax.legend(fontsize=8, frameon=False, loc="upper left", bbox_to_anchor=(1.01, 1.0))
        ax.spines[["top", "right"]].set_visible(False)
        out.append(save(fig, "image-level against graph-level score per item",
                        "Each point is one item of one run; the dashed line is equality."))
    else:
        out.append('<p class="note" id="no-image-plot">No image-level scores in these runs, so the '
                   "image-level vs graph-level plot is omitted.</p>")
    out.append("</div>")
    return "".join(out)
