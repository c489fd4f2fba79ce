"""Framework-like diagrams rendered with Graphviz ``dot``, with exact ground truth.

The ground-truth graph is the graph handed to Graphviz; node boxes (pixels of the PNG) come
from Graphviz's own ``-Tjson`` layout. Randomised per diagram: 4-40 nodes, topology
(linear/branching/merging/feedback/dag), rankdir LR/TB, node shapes
(box/rounded/ellipse/diamond/cylinder), fills, fonts, splines (ortho/polyline/curved/line),
dashed edges, edge labels, clusters and resolution (dpi).
"""

from __future__ import annotations

import io
import json
import random
import shutil
import subprocess
from typing import Any

import numpy as np
from PIL import Image

from sciflow.bench.synth.common import (
    CLUSTER_LABELS,
    EDGE_LABELS,
    SynthDiagram,
    random_topology,
    sample_labels,
    wrap_label,
)
from sciflow.format.graph import DiagramGraph

BBox = tuple[float, float, float, float]

SHAPES = ["box", "rounded", "ellipse", "diamond", "cylinder"]
FILLS = ["#dae8fc", "#d5e8d4", "#ffe6cc", "#fff2cc", "#f8cecc", "#e1d5e7", "#f5f5f5", "white"]
FONTS = ["DejaVu Sans", "Liberation Sans", "Liberation Serif", "DejaVu Serif"]
SPLINES = ["spline", "ortho", "polyline", "line"]


class GraphvizUnavailable(RuntimeError):
    """The ``dot`` binary is missing (Debian package ``graphviz``)."""


def _dot() -> str:
    exe = shutil.which("dot")
    if exe is None:
        raise GraphvizUnavailable("the Graphviz `dot` binary is not installed (apt-get install graphviz)")
    return exe


def _q(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def make_spec(rng: random.Random, n: int | None = None, **force: Any) -> dict[str, Any]:
    """A random diagram specification (all choices explicit, so a spec renders identically)."""
    n = n if n is not None else rng.randint(4, 40)
    kind, edges = random_topology(rng, n, force.get("topology"))
    labels = sample_labels(rng, n)
    node_shape = force.get("shape", rng.choice(SHAPES))
    mixed = rng.random() < 0.3
    spec: dict[str, Any] = {
        "n": n,
        "topology": kind,
        "rankdir": force.get("rankdir", rng.choice(["LR", "TB"])),
        "splines": force.get("splines", rng.choice(SPLINES)),
        "font": rng.choice(FONTS),
        "fontsize": rng.choice([12, 14, 16]),
        "dpi": force.get("dpi", rng.choice([72, 96, 110])),
        "nodes": [],
        "edges": [],
        "clusters": [],
    }
    for i, lab in enumerate(labels):
        drawn, truth = wrap_label(rng, lab, 0.3)
        shape = rng.choice(SHAPES) if mixed else node_shape
        fill = rng.choice(FILLS) if rng.random() < 0.7 else None
        spec["nodes"].append({"id": f"n{i}", "drawn": drawn, "label": truth, "shape": shape, "fill": fill})
    edge_label_p = force.get("edge_label_p", 0.15 if rng.random() < 0.5 else 0.0)
    dashed_p = force.get("dashed_p", 0.15 if rng.random() < 0.4 else 0.0)
    for a, b in edges:
        e: dict[str, Any] = {"source": f"n{a}", "target": f"n{b}"}
        if rng.random() < edge_label_p:
            e["label"] = rng.choice(EDGE_LABELS)
        if rng.random() < dashed_p:
            e["style"] = "dashed"
        spec["edges"].append(e)
    if force.get("clusters", rng.random() < 0.3) and n >= 6:
        k = rng.randint(1, min(3, n // 4))
        order = list(range(n))
        start = rng.randrange(0, max(1, n - 3))
        chunk = order[start : start + max(2, n // (k + 1))]
        step = max(2, len(chunk) // k)
        for c in range(k):
            members = chunk[c * step : (c + 1) * step]
            if len(members) >= 2:
                spec["clusters"].append(
                    {
                        "label": CLUSTER_LABELS[c % len(CLUSTER_LABELS)],
                        "members": [f"n{m}" for m in members],
                        "fill": rng.choice(["#f7f7f7", "white", "#eef5ff"]),
                    }
                )
    return spec


def to_dot(spec: dict[str, Any]) -> str:
    lines = [
        "digraph G {",
        f"  graph [rankdir={spec['rankdir']}, splines={spec['splines']}, nodesep=0.45, ranksep=0.55, "
        f"fontname={_q(spec['font'])}, pad=0.3, dpi={spec['dpi']}, bgcolor=white];",
        f'  node [fontname={_q(spec["font"])}, fontsize={spec["fontsize"]}, margin="0.18,0.1"];',
        f"  edge [fontname={_q(spec['font'])}, fontsize={max(10, spec['fontsize'] - 2)}, arrowsize=0.9];",
    ]
    in_cluster = {m for c in spec["clusters"] for m in c["members"]}

    def node_line(nd: dict[str, Any]) -> str:
        attrs = {"label": _q(nd["drawn"])}
        styles = []
        shape = nd["shape"]
        if shape == "operator":  # a small circle holding the operator glyph, e.g. "+" drawn as a circled plus
            attrs.update(shape="circle", fixedsize="true", width="0.34", fontsize="18", margin="0")
            return f"  {nd['id']} [" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "];"
        if shape == "rounded":
            shape = "box"
            styles.append("rounded")
        attrs["shape"] = shape
        if nd["fill"]:
            styles.append("filled")
            attrs["fillcolor"] = _q(nd["fill"])
        if styles:
            attrs["style"] = _q(",".join(styles))
        return f"  {nd['id']} [" + ", ".join(f"{k}={v}" for k, v in attrs.items()) + "];"

    for nd in spec["nodes"]:
        if nd["id"] not in in_cluster:
            lines.append(node_line(nd))
    by_id = {nd["id"]: nd for nd in spec["nodes"]}
    for ci, c in enumerate(spec["clusters"]):
        lines.append(f"  subgraph cluster_{ci} {{")
        lines.append(f'    label={_q(c["label"])}; style="filled,rounded"; fillcolor={_q(c["fill"])}; color="#888888";')
        for m in c["members"]:
            lines.append("  " + node_line(by_id[m]))
        lines.append("  }")
    for e in spec["edges"]:
        attrs = []
        if e.get("label"):
            attrs.append(f"label={_q(e['label'])}")
        if e.get("style"):
            attrs.append(f"style={e['style']}")
        lines.append(f"  {e['source']} -> {e['target']}" + (f" [{', '.join(attrs)}]" if attrs else "") + ";")
    lines.append("}")
    return "\n".join(lines)


def truth_graph(spec: dict[str, Any], item_id: str, layout: dict[str, Any] | None = None) -> DiagramGraph:
    """The ground truth: nodes (label, shape kind, pixel bbox from the layout) and edges."""
    boxes: dict[str, list[float]] = {}
    if layout is not None:
        s = spec["dpi"] / 72.0
        bb = [float(v) for v in layout["bb"].split(",")]
        pad = 0.3 * 72.0
        for obj in layout.get("objects", []):
            if "pos" not in obj or obj.get("name", "").startswith("cluster"):
                continue
            x, y = (float(v) for v in obj["pos"].split(","))
            w, h = float(obj["width"]) * 72, float(obj["height"]) * 72
            x0, y0 = (x - w / 2 + pad) * s, (bb[3] - y - h / 2 + pad) * s
            boxes[obj["name"]] = [round(x0, 1), round(y0, 1), round(x0 + w * s, 1), round(y0 + h * s, 1)]
    nodes = []
    for nd in spec["nodes"]:
        d: dict[str, Any] = {"id": nd["id"], "label": nd["label"], "kind": nd["shape"]}
        if nd["id"] in boxes:
            d["bbox"] = boxes[nd["id"]]
        nodes.append(d)
    edges = [
        {"source": e["source"], "target": e["target"], **({"label": e["label"]} if e.get("label") else {})}
        for e in spec["edges"]
    ]
    return DiagramGraph.from_dict({"id": item_id, "nodes": nodes, "edges": edges})


def _text_box(ops: list[dict[str, Any]]) -> BBox | None:
    """Extent (points, y up) of the text ops of one xdot ``_ldraw_`` list: every ``T`` line,
    horizontally from its width and alignment, vertically from its baseline and the font size
    of the preceding ``F`` op (ascent 0.8 x size, descent 0.22 x size)."""
    size = 14.0
    out: list[BBox] = []
    for op in ops:
        if op.get("op") == "F":
            size = float(op["size"])
        elif op.get("op") == "T" and str(op.get("text", "")).strip():
            x, y = (float(v) for v in op["pt"])
            w = float(op["width"])
            x0 = {"l": x, "r": x - w}.get(op.get("align", "c"), x - w / 2)
            out.append((x0, y - 0.22 * size, x0 + w, y + 0.8 * size))
    if not out:
        return None
    return (min(b[0] for b in out), min(b[1] for b in out), max(b[2] for b in out), max(b[3] for b in out))


def layout_elements(layout: dict[str, Any], spec: dict[str, Any]) -> list[tuple[str, BBox]]:
    """The drawn elements of a ``dot -Tjson`` layout as ``(class, pixel bbox)`` (see
    :attr:`SynthDiagram.elements`): node shapes and operator circles from ``pos``/``width``/
    ``height``, clusters from ``bb``, arrowheads from the ``_hdraw_``/``_tdraw_`` polygons,
    text from the ``_ldraw_`` text ops (node labels, edge labels, cluster labels)."""
    s = spec["dpi"] / 72.0
    top = float(layout["bb"].split(",")[3])
    pad = 0.3 * 72.0

    def px(x0: float, y0: float, x1: float, y1: float) -> BBox:
        return (
            round((x0 + pad) * s, 1),
            round((top - y1 + pad) * s, 1),
            round((x1 + pad) * s, 1),
            round((top - y0 + pad) * s, 1),
        )

    shapes = {nd["id"]: nd["shape"] for nd in spec["nodes"]}
    out: list[tuple[str, BBox]] = []
    for obj in layout.get("objects", []):
        name = obj.get("name", "")
        if name.startswith("cluster"):
            x0, y0, x1, y1 = (float(v) for v in obj["bb"].split(","))
            out.append(("group", px(x0, y0, x1, y1)))
        elif "pos" in obj:
            x, y = (float(v) for v in obj["pos"].split(","))
            w, h = float(obj["width"]) * 72, float(obj["height"]) * 72
            cls = "operator" if shapes.get(name) == "operator" else "node"
            out.append((cls, px(x - w / 2, y - h / 2, x + w / 2, y + h / 2)))
            if cls == "operator":
                continue  # the glyph is part of the operator, not a text label
        tb = _text_box(obj.get("_ldraw_", []))
        if tb is not None:
            out.append(("text", px(*tb)))
    for edge in layout.get("edges", []):
        for key in ("_hdraw_", "_tdraw_"):
            pts = [p for op in edge.get(key, []) if op.get("op") in ("P", "p", "L") for p in op["points"]]
            if pts:
                xs, ys = [float(p[0]) for p in pts], [float(p[1]) for p in pts]
                out.append(("arrowhead", px(min(xs), min(ys), max(xs), max(ys))))
        tb = _text_box(edge.get("_ldraw_", []))
        if tb is not None:
            out.append(("text", px(*tb)))
    return out


def render(spec: dict[str, Any], item_id: str = "gv", max_side: int = 2000) -> SynthDiagram:
    """Render ``spec`` with ``dot``; returns the PNG as RGB and the exact ground truth.
    The dpi is lowered (not below 60) when the render would exceed ``max_side`` px."""
    dot = _dot()
    src = to_dot(spec).encode("utf-8")
    js = subprocess.run([dot, "-Tjson"], input=src, capture_output=True, check=True).stdout
    layout = json.loads(js.decode("utf-8"))
    bb = [float(v) for v in layout["bb"].split(",")]
    longest_in = (max(bb[2], bb[3]) + 2 * 0.3 * 72) / 72.0
    if longest_in * spec["dpi"] > max_side:  # keep renders at most max_side px (dpi >= 60)
        spec = dict(spec, dpi=max(60, int(max_side / longest_in)))
        src = to_dot(spec).encode("utf-8")
    png = subprocess.run([dot, "-Tpng"], input=src, capture_output=True, check=True).stdout
    img = np.asarray(Image.open(io.BytesIO(png)).convert("RGB"))
    g = truth_graph(spec, item_id, layout)
    return SynthDiagram(
        img,
        g,
        "graphviz",
        {k: v for k, v in spec.items() if k not in ("nodes", "edges", "clusters")}
        | {"clusters": len(spec["clusters"])},
        layout_elements(layout, spec),
    )


def generate(seed: int, n: int | None = None, **force: Any) -> SynthDiagram:
    """One random Graphviz diagram from ``seed`` (deterministic)."""
    rng = random.Random(seed)
    spec = make_spec(rng, n, **force)
    try:
        out = render(spec, item_id=f"gv-{seed}")
    except subprocess.CalledProcessError:
        # dot 2.x aborts on some ortho/cluster layouts: fall back to curved splines
        spec = dict(spec, splines="spline")
        out = render(spec, item_id=f"gv-{seed}")
    if max(out.image.shape[:2]) > 2200 and "rankdir" not in force:  # too elongated: turn it
        spec = dict(spec, rankdir="TB" if spec["rankdir"] == "LR" else "LR")
        out2 = render(spec, item_id=f"gv-{seed}")
        if max(out2.image.shape[:2]) < max(out.image.shape[:2]):
            out = out2
    return out
