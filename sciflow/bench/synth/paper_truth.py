"""Ground truth of the ``paper`` style, read from what the browser measured, following the
annotation protocol of the dev-data README:

* boxes, operators, captioned pictures and cards are nodes (a card is a container an arrow
  attaches to: labelled by its title, its rows are content); free text is a node only when an
  arrow's tail or head touches it, else it is a caption; an operator no line touches is not
  drawn at all;
* a panel or container is a node only when an arrow attaches to its border (then labelled by
  its title); otherwise it is a group; arrows crossing its border are edges of the inner nodes;
* one edge per drawn arrow between two nodes (a brace or bus fan: one per member), two for a
  double-headed arrow; arrows from or to an unlabelled picture are not edges; lines without a
  head only run into operators, so they are edges;
* titles, captions, notes, column headers, legends and footnotes are texts, never nodes.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from sciflow.bench.synth.common import SynthDiagram
from sciflow.bench.synth.paper_geom import poly_cross
from sciflow.bench.synth.paper_scene import Scene, SEdge
from sciflow.format.graph import DiagramGraph


def _r(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return [_r(x) for x in v]
    return round(float(v), 2)


def simplify(pts: list[list[float]], tol: float = 0.3) -> list[list[float]]:
    """Ramer-Douglas-Peucker."""
    if len(pts) < 3:
        return pts
    a, b = np.asarray(pts[0]), np.asarray(pts[-1])
    arr = np.asarray(pts)
    d = b - a
    L = float(np.hypot(*d))
    if L < 1e-9:
        dist = np.hypot(*(arr - a).T)
    else:
        dist = np.abs(d[0] * (arr[:, 1] - a[1]) - d[1] * (arr[:, 0] - a[0])) / L
    i = int(np.argmax(dist))
    if dist[i] <= tol:
        return [pts[0], pts[-1]]
    return simplify(pts[: i + 1], tol)[:-1] + simplify(pts[i:], tol)


def head_style(e: SEdge) -> str:
    if e.headless:
        return "none"
    if e.kind == "block":
        return "block"
    return e.head if e.head in ("filled", "open", "chevron", "barbed") else "filled"


def build(sc: Scene, img: np.ndarray, res: dict[str, Any], item_id: str) -> SynthDiagram:
    boxes, heads, tboxes, arrows = res["boxes"], res["heads"], res["texts"], res["arrows"]
    drawn = [e for e in sc.edges if e.drawn]
    touched = {x for e in drawn for x in (e.src, e.dst)}
    node_box: dict[str, list[float]] = {}
    nodes: list[dict[str, Any]] = []
    rec_nodes: list[dict[str, Any]] = []
    containers: list[dict[str, Any]] = []
    elements: list[tuple[str, tuple[float, float, float, float]]] = []
    role_of: dict[str, str] = {}
    card_rows_nodes: list[tuple[str, Any]] = []

    def group_of(rank: int) -> str | None:
        inner = [g for g in sc.groups if g.kind == "container" and g.ranks[0] <= rank <= g.ranks[1]]
        outer = [g for g in sc.groups if g.kind == "panel" and g.ranks[0] <= rank <= g.ranks[1]]
        found = inner or outer
        return found[0].id if found else None

    for nd in sc.nodes.values():
        if nd.kind == "decor" or nd.style.get("hidden"):
            continue
        if nd.kind == "text":
            if nd.id not in touched:
                role_of[nd.text.key] = "caption"  # type: ignore[union-attr]
                continue
            b = tboxes[nd.text.key]  # type: ignore[union-attr]
        elif nd.kind == "card" and nd.id not in touched:
            # a card no arrow attaches to is a group; its labelled rows are then nodes
            b = boxes[f"node:{nd.id}"]
            containers.append({"id": nd.id, "label": nd.label, "bbox": _r(b), "is_node": False})
            elements.append(("group", tuple(_r(b))))
            for i, r in enumerate(nd.rows):
                card_rows_nodes.append((f"{nd.id}r{i}", r))
                role_of[r.key] = "node"
            continue
        else:
            b = boxes[f"node:{nd.id}"]
        node_box[nd.id] = b
        kind = nd.shape if nd.kind == "box" else nd.kind
        entry = {"id": nd.id, "label": nd.label, "kind": kind, "bbox": _r(b)}
        g = group_of(nd.rank)
        if g:
            entry["group"] = g
        nodes.append(entry)
        rec_nodes.append({"id": nd.id, "label": nd.label, "bbox": _r(b), "shape": kind})
        if nd.kind == "card":
            containers.append({"id": nd.id, "label": nd.label, "bbox": _r(b), "is_node": True})
            elements.append(("group", tuple(_r(b))))
        elif nd.kind == "operator":
            elements.append(("operator", tuple(_r(b))))
        elif nd.kind != "text":
            elements.append(("node", tuple(_r(b))))
    for rid, t in card_rows_nodes:
        b = boxes[f"row:{rid}"]
        node_box[rid] = b
        nodes.append({"id": rid, "label": t.truth, "kind": "rounded", "bbox": _r(b)})
        rec_nodes.append({"id": rid, "label": t.truth, "bbox": _r(b), "shape": "rounded"})
        elements.append(("node", tuple(_r(b))))
    graph_groups = []
    for g in sc.groups:
        b = boxes[f"group:{g.id}"]
        is_node = g.is_node and any(e.kind == "panel" and g.id in (e.src, e.dst) for e in drawn)
        label = g.title.truth if g.title is not None and g.title.drawn else ""
        containers.append({"id": g.id, "label": label, "bbox": _r(b), "is_node": is_node})
        elements.append(("group", tuple(_r(b))))
        gg: dict[str, Any] = {"id": g.id, "bbox": _r(b)}
        if label:
            gg["label"] = label
        if g.parent:
            gg["parent"] = g.parent
        graph_groups.append(gg)
        if is_node:
            node_box[g.id] = b
            nodes.append({"id": g.id, "label": label, "kind": "container", "bbox": _r(b)})
            rec_nodes.append({"id": g.id, "label": label, "bbox": _r(b), "shape": "container"})
    edges: list[dict[str, Any]] = []
    rec_arrows: list[dict[str, Any]] = []
    head_of_key: dict[str, Any] = {}
    seen_heads: set[tuple[float, ...]] = set()
    for e in drawn:
        pts = simplify([[float(x), float(y)] for x, y in arrows[e.id]])
        key = e.meta.get("draw_key")
        hb = heads.get(f"{e.id}:h")
        if key:
            hb = head_of_key.setdefault(key, hb)
        src = e.src if e.src in node_box else None
        dst = e.dst if e.dst in node_box else None
        lab = e.label.truth if e.label is not None and e.label.drawn else None
        a = {"id": e.id, "source": src, "target": dst, "polyline": _r(pts), "tail": _r(pts[0]), "head": _r(pts[-1]),
             "head_box": _r(hb) if hb and not e.headless else None, "label": lab,
             "label_box": _r(tboxes[e.label.key]) if lab else None, "style": e.line, "head_style": head_style(e),
             "double": e.double, "route": e.kind}
        if e.double:
            a["tail_box"] = _r(heads[f"{e.id}:t"])
        if lab:
            a["label_mode"] = e.label_mode
        rec_arrows.append(a)
        for h in (hb if not e.headless else None, heads.get(f"{e.id}:t")):
            if h and tuple(_r(h)) not in seen_heads:
                seen_heads.add(tuple(_r(h)))
                elements.append(("arrowhead", tuple(_r(h))))
        if src and dst and e.truth:
            ed: dict[str, Any] = {"source": src, "target": dst}
            if lab:
                ed["label"] = lab
            if e.line != "solid":
                ed["style"] = e.line
            edges.append(ed)
            if e.double:
                edges.append(dict(ed, source=dst, target=src))
    texts = []
    for t in sc.texts:
        if not t.drawn:
            continue
        role = role_of.get(t.key, t.role)
        b = tboxes[t.key]
        entry = {"text": t.truth, "bbox": _r(b), "role": role, "rotation": t.rotation}
        if t.owner:
            entry["owner"] = t.owner
        texts.append(entry)
        elements.append(("text", tuple(_r(b))))
    graph = DiagramGraph.from_dict({"id": item_id, "nodes": nodes, "edges": edges, "groups": graph_groups})
    polys = [a["polyline"] for a in rec_arrows]
    crossings = sum(1 for i in range(len(polys)) for j in range(i + 1, len(polys)) if poly_cross(polys[i], polys[j]))
    th = sc.theme
    meta = {"topology": sc.meta.get("topology"), "n_nodes": len(nodes), "n_edges": len(graph.edges),
            "arrows": len(rec_arrows), "dropped_arrows": sum(1 for e in sc.edges if not e.drawn),
            "crossings": crossings, "routes": {r: sum(1 for a in rec_arrows if a["route"] == r)
                                               for r in sorted({a["route"] for a in rec_arrows})},
            "container_nodes": sum(1 for c in containers if c["is_node"]), "theme_bg": th.bg, "background": th.page,
            "transparent": th.transparent, "composited_on": (sc.knobs["composite"] if th.transparent else None)}
    record = {"nodes": rec_nodes, "containers": containers, "texts": texts, "arrows": rec_arrows}
    return SynthDiagram(img, graph, "paper", meta, elements, record, dict(sc.knobs))
