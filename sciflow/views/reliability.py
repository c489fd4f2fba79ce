"""Why a parse is (not) to be trusted: its reliability evidence drawn over the image.

:func:`reliability_overlay` draws what ``meta["reliability_evidence"]`` of a parsed graph records
(:func:`sciflow.agents.reliability.reliability_evidence`, input-image pixels): unexplained ink as
red boxes, connector ends that attach to nothing as orange rings, ends of connectors without an
arrowhead as blue rings, nodes found by one agent only as purple boxes, and the parsed nodes in
grey. :func:`reliability_caption` is the one-line explanation (the estimate and its largest
signals) shown under it in the HTML report.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw

from sciflow.format.graph import DiagramGraph
from sciflow.views.overlays import load_image

__all__ = ["reliability_caption", "reliability_overlay"]

RED, ORANGE, BLUE, PURPLE, GREY = (230, 25, 75), (245, 130, 48), (0, 130, 200), (145, 30, 180), (150, 150, 150)
#: signal name -> words for the caption
SIGNAL_WORDS = {
    "unexplained_ink": "ink nothing explains",
    "dangling_ends": "connectors attached at one end",
    "headless": "connectors without an arrowhead",
    "both_heads": "connectors with heads at both ends",
    "weak_heads": "weak arrowhead evidence",
    "ocr_low_conf": "text read with low confidence",
    "text_unassigned": "text used by no node or arrow",
    "single_agent": "nodes found by one agent only",
    "isolated": "nodes no arrow touches",
    "layout_disagreement": "detector and geometry disagree",
}


def reliability_caption(row: Mapping[str, Any], top: int = 3) -> str:
    """``parse reliability 0.23: connectors without an arrowhead 0.50, ...`` (the largest signals)."""
    r = row.get("parse_reliability")
    sig = row.get("reliability_signals") or {}
    vals = sorted(((float(sig[k]), k) for k in SIGNAL_WORDS if isinstance(sig.get(k), (int, float)) and sig[k] > 0),
                  key=lambda t: (-t[0], t[1]))[:top]
    why = ", ".join(f"{SIGNAL_WORDS[k]} {v:.2f}" for v, k in vals) or "no signal of trouble"
    return f"parse reliability {float(r):.2f}: {why}" if isinstance(r, (int, float)) else why


def reliability_overlay(image: str | Path | Image.Image | Any, graph: DiagramGraph) -> Image.Image:
    """The image (same size) with the graph's reliability evidence drawn over it (module docstring).

    >>> g = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "A", "bbox": [5, 5, 40, 30]}],
    ...     "meta": {"reliability_evidence": {"dangling": [[50, 20]], "unexplained": [[60, 5, 90, 30]]}}})
    >>> reliability_overlay(Image.new("RGB", (100, 40), "white"), g).size
    (100, 40)
    """
    base = load_image(image)
    canvas = base.convert("RGB")
    d = ImageDraw.Draw(canvas)
    side = max(canvas.size)
    w = max(2, side // 400)
    ring = max(6, side // 90)
    for n in graph.nodes:
        if n.bbox:
            d.rectangle(list(n.bbox), outline=GREY, width=max(1, w // 2))
    ev = (graph.meta or {}).get("reliability_evidence") or {}
    for b in ev.get("unexplained", []):
        d.rectangle([b[0] - w, b[1] - w, b[2] + w, b[3] + w], outline=RED, width=w)
    for b in ev.get("single_agent", []):
        d.rectangle(list(b), outline=PURPLE, width=w)
    for key, color in (("dangling", ORANGE), ("headless", BLUE)):
        for x, y in ev.get(key, []):
            d.ellipse([x - ring, y - ring, x + ring, y + ring], outline=color, width=w)
    return canvas
