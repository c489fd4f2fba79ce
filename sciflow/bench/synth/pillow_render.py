"""Framework-like diagrams drawn directly with Pillow (a second, non-Graphviz style).

Layered layout (LR or TB), boxes (rect/rounded/ellipse, fills, outline widths), free-text
inputs (a label with no box that an arrow leaves), straight or orthogonal (elbow)
connectors, filled/open/chevron arrowheads, dashed connectors, edge labels, feedback edges
routed around the layers, optional double-headed arrows, several fonts and sizes.
The ground truth is exactly what was drawn: an edge that could not be routed without
crossing another node is neither drawn nor in the truth.
"""

from __future__ import annotations

import math
import random
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image, ImageDraw, ImageFont

from sciflow.bench.synth.common import EDGE_LABELS, SynthDiagram, random_topology, sample_labels, wrap_label
from sciflow.format.graph import DiagramGraph

FONT_DIRS = [Path("/usr/share/fonts/truetype/dejavu"), Path("/usr/share/fonts/truetype/liberation")]
FONT_FILES = ["DejaVuSans.ttf", "DejaVuSerif.ttf", "LiberationSans-Regular.ttf", "LiberationSerif-Regular.ttf"]
FILLS = [
    (218, 232, 252),
    (213, 232, 212),
    (255, 230, 204),
    (255, 242, 204),
    (248, 206, 204),
    (225, 213, 231),
    (255, 255, 255),
]
Box = tuple[float, float, float, float]


def _font(name: str, size: int) -> ImageFont.ImageFont:
    for d in FONT_DIRS:
        p = d / name
        if p.is_file():
            return ImageFont.truetype(str(p), size)
    return ImageFont.load_default(size=size)


def _ranks(n: int, edges: list[tuple[int, int]], back: set[tuple[int, int]]) -> list[int]:
    fwd = [e for e in edges if e not in back]
    rank = [0] * n
    for _ in range(n):
        for a, b in fwd:
            rank[b] = max(rank[b], rank[a] + 1)
    # pull sources towards their successors (each tree edge spans one layer)
    for _ in range(n):
        for v in range(n):
            succ = [b for a, b in fwd if a == v]
            pred = [a for a, b in fwd if b == v]
            if succ and not pred:
                rank[v] = min(rank[b] for b in succ) - 1
    lo = min(rank)
    return [r - lo for r in rank]


def _seg_hits_box(p: tuple[float, float], q: tuple[float, float], b: Box) -> bool:
    for t in np.linspace(0.0, 1.0, 60):
        x, y = p[0] + (q[0] - p[0]) * t, p[1] + (q[1] - p[1]) * t
        if b[0] <= x <= b[2] and b[1] <= y <= b[3]:
            return True
    return False


def _clip(center: tuple[float, float], toward: tuple[float, float], b: Box, ellipse: bool) -> tuple[float, float]:
    cx, cy = center
    dx, dy = toward[0] - cx, toward[1] - cy
    hw, hh = (b[2] - b[0]) / 2, (b[3] - b[1]) / 2
    if ellipse:
        t = 1.0 / math.sqrt((dx / hw) ** 2 + (dy / hh) ** 2)
    else:
        t = min(hw / abs(dx) if dx else math.inf, hh / abs(dy) if dy else math.inf)
    return cx + dx * t, cy + dy * t


def _arrowhead(
    draw: ImageDraw.ImageDraw,
    tip: tuple[float, float],
    frm: tuple[float, float],
    size: float,
    style: str,
    color: tuple[int, int, int],
    width: int,
) -> Box:
    """Draw the head at ``tip`` pointing away from ``frm``; returns its pixel extent."""
    ang = math.atan2(tip[1] - frm[1], tip[0] - frm[0])
    left = (tip[0] - size * math.cos(ang - 0.4), tip[1] - size * math.sin(ang - 0.4))
    right = (tip[0] - size * math.cos(ang + 0.4), tip[1] - size * math.sin(ang + 0.4))
    if style == "filled":
        draw.polygon([tip, left, right], fill=color)
    elif style == "open":
        draw.polygon([tip, left, right], outline=color, fill=(255, 255, 255), width=max(1, width))
    else:  # chevron
        draw.line([left, tip, right], fill=color, width=max(2, width))
    half = max(1, width) / 2.0
    xs, ys = [tip[0], left[0], right[0]], [tip[1], left[1], right[1]]
    return (min(xs) - half, min(ys) - half, max(xs) + half, max(ys) + half)


def _polyline(
    draw: ImageDraw.ImageDraw, pts: list[tuple[float, float]], color: tuple[int, int, int], width: int, dashed: bool
) -> None:
    if not dashed:
        draw.line(pts, fill=color, width=width, joint="curve")
        return
    dash, gap = 8.0, 5.0
    for p, q in zip(pts, pts[1:], strict=False):
        length = math.hypot(q[0] - p[0], q[1] - p[1])
        t = 0.0
        while t < length:
            t1 = min(length, t + dash)
            a = (p[0] + (q[0] - p[0]) * t / length, p[1] + (q[1] - p[1]) * t / length)
            b = (p[0] + (q[0] - p[0]) * t1 / length, p[1] + (q[1] - p[1]) * t1 / length)
            draw.line([a, b], fill=color, width=width)
            t += dash + gap


def make_spec(rng: random.Random, n: int | None = None, **force: Any) -> dict[str, Any]:
    n = n if n is not None else rng.randint(4, 16)
    kind, edges = random_topology(
        rng, n, force.get("topology", rng.choice(["linear", "branching", "merging", "feedback"]))
    )
    return {
        "n": n,
        "topology": kind,
        "edges": edges,
        "labels": sample_labels(rng, n),
        "rankdir": force.get("rankdir", rng.choice(["LR", "TB"])),
        "shape": rng.choice(["rect", "rounded", "ellipse", "mixed"]),
        "font": rng.choice(FONT_FILES),
        "fontsize": force.get("fontsize", rng.choice([14, 16, 18, 22])),
        "outline": rng.choice([1, 2, 3]),
        "head": force.get("head", rng.choice(["filled", "open", "chevron"])),
        "route": force.get("route", rng.choice(["straight", "ortho"])),
        "dashed_p": force.get("dashed_p", rng.choice([0.0, 0.2])),
        "label_p": force.get("label_p", rng.choice([0.0, 0.2])),
        "free_text_p": force.get("free_text_p", 0.3),
        "fill_p": rng.choice([0.0, 0.7]),
        "line_color": rng.choice([(0, 0, 0), (80, 80, 80), (40, 70, 140)]),
        "seed": rng.randrange(1 << 30),
    }


def render(spec: dict[str, Any], item_id: str = "pil") -> SynthDiagram:
    """Draw ``spec``; returns the RGB image and the exact ground truth of what was drawn."""
    rng = random.Random(spec["seed"])
    n, edges = spec["n"], spec["edges"]
    back = {(a, b) for a, b in edges if b < a and spec["topology"] == "feedback"}
    ranks = _ranks(n, edges, back)
    font = _font(spec["font"], spec["fontsize"])
    small = _font(spec["font"], max(11, spec["fontsize"] - 4))
    lr = spec["rankdir"] == "LR"
    drawn: list[str] = []
    truth: list[str] = []
    sizes = []
    scratch = ImageDraw.Draw(Image.new("RGB", (10, 10)))
    for lab in spec["labels"]:
        d, t = wrap_label(rng, lab, 0.3)
        drawn.append(d)
        truth.append(t)
        x0, y0, x1, y1 = scratch.multiline_textbbox((0, 0), d, font=font, align="center", spacing=4)
        sizes.append((x1 - x0 + 2 * spec["fontsize"], y1 - y0 + spec["fontsize"]))
    layers: dict[int, list[int]] = {}
    for v in range(n):
        layers.setdefault(ranks[v], []).append(v)
    gap_main = 3.2 * spec["fontsize"] + 30
    gap_cross = 1.6 * spec["fontsize"] + 10
    boxes: list[Box] = [(0.0, 0.0, 0.0, 0.0)] * n
    margin = 40.0 + 2 * spec["fontsize"]
    pos_main = margin
    max_cross = 0.0
    for r in sorted(layers):
        members = layers[r]
        thick = max((sizes[v][0] if lr else sizes[v][1]) for v in members)
        cross = margin
        for v in members:
            w, h = sizes[v]
            if lr:
                boxes[v] = (pos_main + (thick - w) / 2, cross, pos_main + (thick + w) / 2, cross + h)
                cross += h + gap_cross
            else:
                boxes[v] = (cross, pos_main + (thick - h) / 2, cross + w, pos_main + (thick + h) / 2)
                cross += w + gap_cross
        max_cross = max(max_cross, cross)
        pos_main += thick + gap_main
    # centre each layer on the cross axis
    for r in sorted(layers):
        members = layers[r]
        lo = min(boxes[v][1] if lr else boxes[v][0] for v in members)
        hi = max(boxes[v][3] if lr else boxes[v][2] for v in members)
        shift = (max_cross - hi + lo - margin) / 2 - (lo - margin) + 0.0
        for v in members:
            b = boxes[v]
            boxes[v] = (b[0], b[1] + shift, b[2], b[3] + shift) if lr else (b[0] + shift, b[1], b[2] + shift, b[3])
    W = int(max(b[2] for b in boxes) + margin + 60)
    H = int(max(b[3] for b in boxes) + margin + 60)
    img = Image.new("RGB", (W, H), (255, 255, 255))
    draw = ImageDraw.Draw(img)
    color = spec["line_color"]
    sources = [v for v in range(n) if all(b != v for _, b in edges)]
    free = {v for v in sources if rng.random() < spec["free_text_p"]}
    shapes = []
    for v in range(n):
        shape = spec["shape"] if spec["shape"] != "mixed" else rng.choice(["rect", "rounded", "ellipse"])
        shapes.append("text" if v in free else shape)
    for v in range(n):  # ellipses get room around their label before any routing
        if shapes[v] == "ellipse":
            b = boxes[v]
            boxes[v] = (b[0] - 10, b[1] - 6, b[2] + 10, b[3] + 6)
    ow = spec["outline"]
    kept_edges: list[dict[str, Any]] = []
    head_px = 6 + 2.2 * spec["outline"] + spec["fontsize"] * 0.25

    def center(v: int) -> tuple[float, float]:
        b = boxes[v]
        return ((b[0] + b[2]) / 2, (b[1] + b[3]) / 2)

    for a, b in edges:
        pa, pb = center(a), center(b)
        others = [boxes[v] for v in range(n) if v not in (a, b)]
        expanded = [(o[0] - 6, o[1] - 6, o[2] + 6, o[3] + 6) for o in others]
        if (a, b) in back:
            # feedback: leave and enter on the far side of the cross axis, around all layers
            if lr:
                y = max(bb[3] for bb in boxes) + 25 + 12 * len(kept_edges) % 40
                pts = [(pa[0], boxes[a][3]), (pa[0], y), (pb[0], y), (pb[0], boxes[b][3])]
            else:
                x = max(bb[2] for bb in boxes) + 25 + 12 * len(kept_edges) % 40
                pts = [(boxes[a][2], pa[1]), (x, pa[1]), (x, pb[1]), (boxes[b][2], pb[1])]
        elif spec["route"] == "ortho" and abs((pa[1] - pb[1]) if lr else (pa[0] - pb[0])) > 4:
            if lr:
                xm = (boxes[a][2] + boxes[b][0]) / 2
                pts = [(boxes[a][2], pa[1]), (xm, pa[1]), (xm, pb[1]), (boxes[b][0], pb[1])]
            else:
                ym = (boxes[a][3] + boxes[b][1]) / 2
                pts = [(pa[0], boxes[a][3]), (pa[0], ym), (pb[0], ym), (pb[0], boxes[b][1])]
        else:
            pts = [_clip(pa, pb, boxes[a], shapes[a] == "ellipse"), _clip(pb, pa, boxes[b], shapes[b] == "ellipse")]
        if any(_seg_hits_box(p, q, o) for p, q in zip(pts, pts[1:], strict=False) for o in expanded):
            continue
        if any(pts[0][0] > W or pts[-1][1] > H for _ in [0]):
            continue
        e: dict[str, Any] = {"source": a, "target": b, "pts": pts}
        if rng.random() < spec["dashed_p"]:
            e["dashed"] = True
        if rng.random() < spec["label_p"]:
            e["label"] = rng.choice(EDGE_LABELS)
        kept_edges.append(e)
    H2 = int(max(H, max((max(p[1] for p in e["pts"]) for e in kept_edges), default=0) + 40))
    W2 = int(max(W, max((max(p[0] for p in e["pts"]) for e in kept_edges), default=0) + 40))
    if (W2, H2) != (W, H):
        new = Image.new("RGB", (W2, H2), (255, 255, 255))
        new.paste(img, (0, 0))
        img, W, H = new, W2, H2
        draw = ImageDraw.Draw(img)
    elements: list[tuple[str, Box]] = []
    for v in range(n):
        b = boxes[v]
        if shapes[v] != "text":
            elements.append(("node", b))
        fill = rng.choice(FILLS) if rng.random() < spec["fill_p"] else (255, 255, 255)
        if shapes[v] == "rect":
            draw.rectangle(b, outline=(40, 40, 40), fill=fill, width=ow)
        elif shapes[v] == "rounded":
            draw.rounded_rectangle(b, radius=min(14, (b[3] - b[1]) / 3), outline=(40, 40, 40), fill=fill, width=ow)
        elif shapes[v] == "ellipse":
            draw.ellipse(b, outline=(40, 40, 40), fill=fill, width=ow)
        draw.multiline_text(center(v), drawn[v], font=font, fill=(0, 0, 0), anchor="mm", align="center", spacing=4)
        tb = draw.multiline_textbbox(center(v), drawn[v], font=font, anchor="mm", align="center", spacing=4)
        elements.append(("text", tuple(float(c) for c in tb)))  # type: ignore[arg-type]
    for e in kept_edges:
        pts = e["pts"]
        tip, frm = pts[-1], pts[-2]
        L = math.hypot(tip[0] - frm[0], tip[1] - frm[1]) or 1.0
        base = (tip[0] - (tip[0] - frm[0]) / L * head_px * 0.8, tip[1] - (tip[1] - frm[1]) / L * head_px * 0.8)
        line_pts = pts[:-1] + [base if spec["head"] == "filled" else tip]
        _polyline(draw, line_pts, color, ow, bool(e.get("dashed")))
        elements.append(("arrowhead", _arrowhead(draw, tip, frm, head_px, spec["head"], color, ow)))
        if e.get("label"):
            i = len(pts) // 2
            p, q = pts[i - 1], pts[i]
            mx, my = (p[0] + q[0]) / 2, (p[1] + q[1]) / 2
            horizontal = abs(q[0] - p[0]) >= abs(q[1] - p[1])
            at = (mx, my - 6) if horizontal else (mx + 8, my)
            draw.text(at, e["label"], font=small, fill=(60, 60, 60), anchor="md" if horizontal else "lm")
            tb = draw.textbbox(at, e["label"], font=small, anchor="md" if horizontal else "lm")
            elements.append(("text", tuple(float(c) for c in tb)))  # type: ignore[arg-type]
    nodes = [
        {"id": f"n{v}", "label": truth[v], "kind": shapes[v], "bbox": [round(c, 1) for c in boxes[v]]} for v in range(n)
    ]
    gedges = [
        {"source": f"n{e['source']}", "target": f"n{e['target']}", **({"label": e["label"]} if e.get("label") else {})}
        for e in kept_edges
    ]
    # nodes that no drawn edge touches and that have no box are not nodes
    used = {e["source"] for e in gedges} | {e["target"] for e in gedges}
    nodes = [nd for nd in nodes if nd["kind"] != "text" or nd["id"] in used]
    g = DiagramGraph.from_dict({"id": item_id, "nodes": nodes, "edges": gedges})
    meta = {k: spec[k] for k in ("n", "topology", "rankdir", "shape", "fontsize", "head", "route")}
    return SynthDiagram(np.asarray(img), g, "pillow", meta, elements)


def generate(seed: int, n: int | None = None, **force: Any) -> SynthDiagram:
    """One random Pillow diagram from ``seed`` (deterministic)."""
    rng = random.Random(seed)
    return render(make_spec(rng, n, **force), item_id=f"pil-{seed}")
