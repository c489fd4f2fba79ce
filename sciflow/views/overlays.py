"""Overlays: a graph's node boxes, centre-to-centre arrows and labels drawn over its image.

:func:`overlay` shows what the parser read from a figure (coloured like the diff renderings of
:mod:`sciflow.views.diff` when diagnostics are given); :func:`load_image` reads the image the
way the parser saw it.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from PIL import Image, ImageDraw, ImageFont

from sciflow.format.graph import DiagramGraph
from sciflow.metrics.graph_level import GraphLevelResult
from sciflow.views.diff import COLORS, graph_diagnostics

__all__ = ["load_image", "overlay"]


def load_image(image: str | Path | Image.Image | Any) -> Image.Image:
    """An RGB PIL image from a path (raster, SVG or PDF, through :mod:`sciflow.format.imageio` so the
    pixels are those the parser saw), a PIL image or a numpy array."""
    if isinstance(image, Image.Image):
        return image.convert("RGB")
    from sciflow.format.imageio import load_image as _load
    from sciflow.format.imageio import to_rgb

    arr = _load(image) if isinstance(image, str | Path) else to_rgb(image)
    return Image.fromarray(arr, "RGB")


def _font(size: int) -> ImageFont.ImageFont | ImageFont.FreeTypeFont:
    for name in ("DejaVuSans.ttf", "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"):
        try:
            return ImageFont.truetype(name, size)
        except OSError:
            continue
    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _centre(b: Sequence[float]) -> tuple[float, float]:
    return (b[0] + b[2]) / 2, (b[1] + b[3]) / 2


def _clip_to_box(c: tuple[float, float], toward: tuple[float, float], b: Sequence[float]) -> tuple[float, float]:
    """The point where the segment from the centre ``c`` of box ``b`` toward ``toward`` leaves the box."""
    dx, dy = toward[0] - c[0], toward[1] - c[1]
    hw, hh = max((b[2] - b[0]) / 2, 1e-6), max((b[3] - b[1]) / 2, 1e-6)
    t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf, 1.0)
    return c[0] + dx * t, c[1] + dy * t


def overlay(
    image: str | Path | Image.Image | Any,
    graph: DiagramGraph,
    *,
    diagnostics: GraphLevelResult | Mapping[str, Any] | None = None,
    labels: bool = True,
) -> Image.Image:
    """The image (same size) with ``graph``'s node boxes, centre-to-centre arrows and labels
    drawn over it; nodes or edges without a bbox are left out.

    With ``diagnostics`` (of this graph as the prediction) boxes and arrows are coloured:
    matched green, hallucinated orange, reversed purple, other wrong edges orange; else blue.

    >>> g = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "A", "bbox": [5, 5, 40, 30]},
    ...     {"id": "b", "label": "B", "bbox": [60, 5, 95, 30]}], "edges": [{"source": "a", "target": "b"}]})
    >>> overlay(Image.new("RGB", (100, 40), "white"), g).size
    (100, 40)
    """
    base = load_image(image)
    w, h = base.size
    canvas = base.convert("RGBA")
    layer = Image.new("RGBA", canvas.size, (0, 0, 0, 0))
    draw = ImageDraw.Draw(layer)
    scale = max(1.0, max(w, h) / 900)
    width = max(2, round(2 * scale))
    font = _font(max(11, round(12 * scale)))

    diag = graph_diagnostics(diagnostics)
    default = "#1565c0"
    node_color = {n.id: default for n in graph.nodes}
    edge_color: dict[tuple[str, str], str] = {}
    if diag:
        for p in diag.get("matched_nodes", []):
            node_color[p["pred_id"]] = COLORS["matched"][0]
        for pid in diag.get("hallucinated_nodes", []):
            node_color[pid] = COLORS["hallucinated"][0]
        for e in graph.edges:
            edge_color[(e.source, e.target)] = COLORS["matched"][0]
        for key, color in (("reversed_edges", COLORS["reversed"][0]),
                           ("unsupported_edges", COLORS["hallucinated"][0]),
                           ("unmatched_endpoint_edges", COLORS["hallucinated"][0])):
            for e in diag.get(key, []):
                edge_color[(e["source"], e["target"])] = color

    def rgba(hex_color: str, alpha: int = 255) -> tuple[int, int, int, int]:
        c = hex_color.lstrip("#")
        return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16), alpha

    boxes = {n.id: n.bbox for n in graph.nodes if n.bbox is not None}
    for n in graph.nodes:
        if n.bbox is None:
            continue
        x0, y0, x1, y1 = n.bbox
        c = node_color[n.id]
        draw.rectangle([x0, y0, x1, y1], outline=rgba(c), fill=rgba(c, 28), width=width)
    head = 9 * scale
    for e in graph.edges:
        if e.source not in boxes or e.target not in boxes or e.source == e.target:
            continue
        bs, bt = boxes[e.source], boxes[e.target]
        cs, ct = _centre(bs), _centre(bt)
        p0, p1 = _clip_to_box(cs, ct, bs), _clip_to_box(ct, cs, bt)
        if math.dist(p0, p1) < 1:  # overlapping boxes: fall back to centre to centre
            p0, p1 = cs, ct
        c = rgba(edge_color.get((e.source, e.target), "#ad1457"))
        draw.line([p0, p1], fill=c, width=width)
        ang = math.atan2(p1[1] - p0[1], p1[0] - p0[0])
        wing = math.radians(25)
        pts = [p1,
               (p1[0] - head * math.cos(ang - wing), p1[1] - head * math.sin(ang - wing)),
               (p1[0] - head * math.cos(ang + wing), p1[1] - head * math.sin(ang + wing))]
        draw.polygon(pts, fill=c)
    if labels:
        for n in graph.nodes:
            if n.bbox is None:
                continue
            x0, y0 = n.bbox[0], n.bbox[1]
            text = n.label if len(n.label) <= 40 else n.label[:39] + "…"
            tb = draw.textbbox((0, 0), text, font=font)
            tw, th = tb[2] - tb[0], tb[3] - tb[1]
            ty = y0 - th - 6 if y0 - th - 6 >= 0 else y0 + 2
            tx = min(max(0, x0), max(0, w - tw - 6))
            draw.rectangle([tx, ty, tx + tw + 6, ty + th + 5], fill=rgba(node_color[n.id], 215))
            draw.text((tx + 3 - tb[0], ty + 2 - tb[1]), text, fill=(255, 255, 255, 255), font=font)
    return Image.alpha_composite(canvas, layer).convert("RGB")

