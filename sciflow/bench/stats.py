"""Distributions of a set of reference graphs: areas, difficulty tiers, sizes, non-linearity."""

from __future__ import annotations

import statistics
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from sciflow.bench.difficulty import complexity_features, difficulty, is_linear
from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph


def load_references(refs_dir: str | Path) -> tuple[list[DiagramGraph], list[tuple[str, str]]]:
    """Every ``*.json`` graph in ``refs_dir`` (sorted), and ``(file, error)`` for those that fail."""
    graphs, errors = [], []
    for p in sorted(Path(refs_dir).glob("*.json")):
        try:
            graphs.append(load_graph(p))
        except GraphFormatError as exc:
            errors.append((str(p), str(exc)))
    return graphs, errors


def _describe(values: Sequence[int]) -> dict[str, float]:
    if not values:
        return {"min": 0, "median": 0, "mean": 0, "max": 0}
    return {"min": min(values), "median": statistics.median(values), "mean": statistics.fmean(values),
            "max": max(values)}


def reference_stats(graphs: Sequence[DiagramGraph]) -> dict[str, Any]:
    """Counts per area and per difficulty tier (the tier is recomputed, and items whose stored
    tier disagrees are listed), node/edge count summaries and the share of non-linear items."""
    tiers = {g.id: difficulty(g) for g in graphs}
    feats = [complexity_features(g) for g in graphs]
    nonlinear = [g.id for g in graphs if not is_linear(g)]
    return {
        "n_items": len(graphs),
        "areas": dict(sorted(Counter(str(g.meta.get("area", "unknown")) for g in graphs).items())),
        "difficulty": {t: sum(v == t for v in tiers.values()) for t in ("easy", "medium", "hard")},
        "difficulty_mismatch": sorted(g.id for g in graphs if g.meta.get("difficulty") not in (None, tiers[g.id])),
        "nodes": _describe([len(g.nodes) for g in graphs]),
        "edges": _describe([len(g.edges) for g in graphs]),
        "share_nonlinear": len(nonlinear) / len(graphs) if graphs else 0.0,
        "with_cycles": sum(f["n_cycles"] > 0 for f in feats),
        "with_groups": sum(f["n_groups"] > 0 for f in feats),
        "node_counts": [len(g.nodes) for g in graphs],
        "edge_counts": [len(g.edges) for g in graphs],
    }


def plot_stats(stats: dict[str, Any], out_path: str | Path) -> Path:
    """A four-panel figure (areas, tiers, node-count and edge-count histograms) as PNG/SVG/PDF."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import MaxNLocator

    fig, ax = plt.subplots(1, 4, figsize=(16, 3.8))
    areas = stats["areas"]
    ax[0].barh(list(areas), list(areas.values()), color="#4c72b0")
    ax[0].set_title("items per area")
    ax[0].set_xlabel("items")
    tiers = stats["difficulty"]
    ax[1].bar(list(tiers), list(tiers.values()), color=["#55a868", "#dd8452", "#c44e52"][:len(tiers)])
    ax[1].set_title("difficulty tiers")
    ax[1].set_xlabel("tier")
    ax[1].set_ylabel("items")
    for a, key, title, unit in ((ax[2], "node_counts", "nodes per item", "nodes"),
                                (ax[3], "edge_counts", "edges per item", "edges")):
        vals = stats[key]
        a.hist(vals, bins=range(0, (max(vals) if vals else 1) + 3, 2), color="#8172b3", edgecolor="white")
        a.set_title(title)
        a.set_xlabel(f"{unit} (bins of 2)")
        a.set_ylabel("items")
    for a in ax:  # counts are whole numbers
        a.xaxis.set_major_locator(MaxNLocator(integer=True))
        a.yaxis.set_major_locator(MaxNLocator(integer=True))
        a.spines[["top", "right"]].set_visible(False)
    fig.tight_layout()
    out = Path(out_path)
    fig.savefig(out, dpi=120)
    plt.close(fig)
    return out
