"""Flowcharts drawn by the real Mermaid renderer, with ground truth from Mermaid itself.

Each item is a random flowchart (:mod:`sciflow.bench.synth.mermaid_spec`: nested subgraphs
with titles, arrows that enter, leave and cross them, links to subgraphs, edge labels,
``-->``/``-.->``/``==>``/``<-->`` and chained links, head-less lines, nine node shapes,
``classDef`` fills and strokes, LR/TB/RL/BT, short, long and multi-line labels, themes, looks,
curves, HTML or SVG labels, fonts). It is drawn by the ``mermaid`` npm package's own browser
bundle (``dist/mermaid.min.js``, version pinned by ``make install-bench``) in one page of the
shared headless Chromium (:class:`sciflow.bench.synth.browser.Browser`), kept open across
items: the bundle is loaded into the page once (the page global survives ``set_content``;
when it is missing the page asks for it and the next render inlines it).

We do not spawn mermaid-cli (``mmdc``) per item: a process per item (Node, Puppeteer, a
fresh browser) is far too slow, and it does not expose the parser's database.

Ground truth is never read back from the source text with a regex. In the page
(``mermaid_page.js``) Mermaid's own parser reads the source
(``mermaid.mermaidAPI.getDiagramFromText``: ``db.getVertices()``, ``getEdges()``,
``getSubGraphs()``), ``mermaid.render`` draws it, and the drawn SVG is measured: node boxes
(each ``g.node``), node outlines (the shape's geometry sampled with ``getPointAtLength``),
subgraph boxes and titles, edge paths (each link's ``path`` sampled into a polyline: tail =
first point, head = last point), arrowhead boxes (the marker's shape mapped by the SVG
marker rules at the path's end), edge-label boxes and every label's glyph box, all through
``getScreenCTM``/``getBoundingClientRect`` in the screenshot's pixels.

The graph follows the annotation protocol of the dev-data README:

* nodes are Mermaid's vertices, labelled with their text (``<br/>`` line breaks as spaces),
  ``kind`` the shape; subgraphs are ``groups`` (``parent`` for nesting, ``node.group`` for the
  innermost subgraph of each member);
* a subgraph that a link ends on (Mermaid allows ``A --> sg0``) is also a node, with the
  subgraph's id, labelled with its title, ``kind="container"`` and the subgraph's box (the
  protocol: a container is a node only when an arrow attaches to it);
* edges are Mermaid's edges source -> target with their label; a bidirectional link
  (``<-->``, ``<-.->``, ``<==>``) is two edges, A->B and B->A, and one arrow (``double``) in
  the record; head-less lines (``---``, ``-.-``, ``===``) are not edges (the protocol: a line
  without an arrowhead is an edge only when its direction is unambiguous, and in doubt it is
  left out) but are kept in the record's arrows with ``head_style="none"``;
* ``Edge.style`` is the stroke pattern (``solid`` or ``dotted``); the record's arrow
  ``style`` also tells ``thick`` (``==>``) apart.

``generate(seed, browser=None, **knobs)`` is deterministic: the same seed gives a
byte-identical PNG and identical graph and element JSON (Mermaid's ids are deterministic and
the hand-drawn look is seeded).
"""

from __future__ import annotations

import hashlib
import html
import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from sciflow.bench.synth.browser import Browser, BrowserUnavailable
from sciflow.bench.synth.common import SynthDiagram
from sciflow.bench.synth.mermaid_spec import (
    KNOBS,
    MERMAID_TYPES,
    choose_knobs,
    effective_knobs,
    intended_graph,
    make_spec,
    to_source,
)
from sciflow.format.graph import DiagramGraph

__all__ = ["KNOBS", "MermaidUnavailable", "generate", "intended_graph", "render_source", "bundle_path"]

BUNDLE_ENV = "SCIFLOW_MERMAID_JS"
BUNDLE_DEFAULT = Path(".cache/npm/node_modules/mermaid/dist/mermaid.min.js")
REPO_ROOT = Path(__file__).resolve().parents[3]
PAGE_JS = Path(__file__).with_name("mermaid_page.js")
PAD = 16  # white margin around the drawing, px
MAX_SIDE = 2000  # the drawing is scaled down to at most this many px on its longer side
VIEWPORT = MAX_SIDE + 2 * PAD
SVG_ID = "mmd"
BBox = tuple[float, float, float, float]


class MermaidUnavailable(BrowserUnavailable):
    """Mermaid's browser bundle is missing (``make install-bench`` installs it)."""


def bundle_path() -> Path:
    """``$SCIFLOW_MERMAID_JS``, else ``.cache/npm/node_modules/mermaid/dist/mermaid.min.js``
    under the repository root or the current directory; :class:`MermaidUnavailable` if none."""
    env = os.environ.get(BUNDLE_ENV)
    if env:
        if Path(env).is_file():
            return Path(env)
        raise MermaidUnavailable(f"{BUNDLE_ENV}={env} is not a file; unset it or run `make install-bench`")
    for base in (REPO_ROOT, Path.cwd()):
        if (base / BUNDLE_DEFAULT).is_file():
            return base / BUNDLE_DEFAULT
    raise MermaidUnavailable(f"Mermaid's bundle {BUNDLE_DEFAULT} is missing: run `make install-bench` "
                             f"(it npm-installs the pinned mermaid into .cache/npm) or set {BUNDLE_ENV}")


_BUNDLES: dict[str, tuple[str, str, str]] = {}


def _bundle() -> tuple[str, str, str]:
    """(script text, key, version) of the bundle, read once per process."""
    path = bundle_path()
    st = path.stat()
    cache_key = f"{path.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    if cache_key not in _BUNDLES:
        text = path.read_text("utf-8")
        version = "unknown"
        pkg = path.parent.parent / "package.json"
        if pkg.is_file():
            version = str(json.loads(pkg.read_text("utf-8")).get("version", "unknown"))
        key = hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]
        _BUNDLES.clear()
        _BUNDLES[cache_key] = (text.replace("</script", "<\\/script"), key, version)
    return _BUNDLES[cache_key]


def _script(text: str) -> str:
    return "<script>" + text.replace("</", "<\\/") + "</script>"


_PAGE_JS: list[str] = []


def _page_js() -> str:
    if not _PAGE_JS:
        _PAGE_JS.append(PAGE_JS.read_text("utf-8"))
    return _PAGE_JS[0]


def _page(src: str, config: dict[str, Any], with_bundle: bool) -> str:
    bundle, key, _ = _bundle()
    mm = {"key": key, "id": SVG_ID, "src": src, "config": config, "pad": PAD, "maxSide": MAX_SIDE}
    load = ""
    if with_bundle:
        load = f"<script>{bundle}</script>" + _script(f"window.__sciflowMermaidKey = {json.dumps(key)};")
    return (
        '<!doctype html><html><head><meta charset="utf-8">'
        "<script>window.__ready = false; window.__result = null; window.__error = null;</script>"
        "<style>html,body{margin:0;padding:0;background:#fff;overflow:hidden}"
        f"#frame{{box-sizing:border-box;padding:{PAD}px;background:#fff;width:10px;height:10px}}"
        "#frame>svg{display:block}</style>"
        '</head><body><div id="frame"></div>'
        + load
        + _script("window.__MM = " + json.dumps(mm, ensure_ascii=True) + ";")
        + _script(_page_js())
        + "</body></html>"
    )


def mermaid_config(seed: int, knobs: dict[str, Any]) -> dict[str, Any]:
    """The ``mermaid.initialize`` options of one item."""
    cfg: dict[str, Any] = {
        "startOnLoad": False,
        "securityLevel": "strict",
        "deterministicIds": True,
        "deterministicIDSeed": "sciflow",
        "theme": knobs["theme"],
        "look": knobs["look"],
        "handDrawnSeed": seed % 100000 + 1,
        "htmlLabels": knobs["html_labels"],
        "flowchart": {"curve": knobs["curve"], "useMaxWidth": False, "htmlLabels": knobs["html_labels"]},
    }
    if knobs["font"] != "default":
        cfg["fontFamily"] = f'"{knobs["font"]}", sans-serif'
        cfg["themeVariables"] = {"fontFamily": cfg["fontFamily"]}
    return cfg


def render_source(src: str, config: dict[str, Any], browser: Browser) -> tuple[np.ndarray, dict[str, Any]]:
    """Draw Mermaid source ``src`` in ``browser``; returns the RGB image and the page's
    measurements (``parse``, ``nodes``, ``clusters``, ``edges``, ``size``)."""
    img, res = browser.render(_page(src, config, False), VIEWPORT, VIEWPORT, selector="#frame")
    if isinstance(res, dict) and res.get("need_bundle"):
        img, res = browser.render(_page(src, config, True), VIEWPORT, VIEWPORT, selector="#frame")
    if not isinstance(res, dict) or "parse" not in res:
        raise RuntimeError(f"the Mermaid page returned no measurements: {str(res)[:200]}")
    w, h = res["size"]
    if img.shape[:2] != (h, w):
        raise RuntimeError(f"screenshot {img.shape[1]}x{img.shape[0]} does not match the drawing {w}x{h}")
    return img, res


def clean_label(text: str) -> str:
    """A label on one line: ``<br>`` and newlines as spaces, entities decoded, tags dropped."""
    text = re.sub(r"<br\s*/?>", " ", text or "", flags=re.I)
    text = html.unescape(re.sub(r"<[^>]+>", "", text))
    return " ".join(text.split())


def _simplify(pts: list[list[float]], tol: float = 0.4) -> list[list[float]]:
    """Ramer-Douglas-Peucker on the sampled path (endpoints kept exactly)."""
    if len(pts) < 3:
        return [list(p) for p in pts]
    a, b = np.asarray(pts[0], float), np.asarray(pts[-1], float)
    arr = np.asarray(pts, float)
    d = b - a
    norm = float(np.hypot(*d))
    if norm < 1e-9:
        dist = np.hypot(*(arr - a).T)
    else:
        dist = np.abs(d[0] * (arr[:, 1] - a[1]) - d[1] * (arr[:, 0] - a[0])) / norm
    i = int(np.argmax(dist))
    if dist[i] <= tol:
        return [list(pts[0]), list(pts[-1])]
    return _simplify(pts[: i + 1], tol)[:-1] + _simplify(pts[i:], tol)


def _bbox(b: Any) -> list[float] | None:
    return [round(float(v), 2) for v in b] if b else None


def _innermost(subgraphs: list[dict[str, Any]]) -> tuple[dict[str, str], dict[str, str]]:
    """(member -> innermost subgraph, subgraph -> parent subgraph) from Mermaid's subgraph lists."""
    ids = {s["id"] for s in subgraphs}
    contains = {s["id"]: set(s["nodes"]) for s in subgraphs}

    def inside(a: str, b: str, seen: frozenset[str] = frozenset()) -> bool:  # subgraph a nested in b?
        if a in contains[b]:
            return True
        return any(inside(a, c, seen | {b}) for c in contains[b] if c in ids and c not in seen)

    def pick(x: str) -> str | None:
        cands = [s for s in contains if x in contains[s] and s != x]
        inner = [c for c in cands if not any(o != c and inside(o, c) for o in cands)]
        return inner[0] if inner else None

    members = {x for s in subgraphs for x in s["nodes"]}
    owner = {x: g for x in members if x not in ids and (g := pick(x))}
    parent = {s: g for s in ids if (g := pick(s))}
    return owner, parent


def build(res: dict[str, Any], img: np.ndarray, item_id: str) -> tuple[DiagramGraph, dict[str, Any], list]:
    """The graph, the element record and the detector elements of one rendered item, from the
    page's parse and measurements."""
    parse = res["parse"]
    sgs = {s["id"]: s for s in parse["subgraphs"]}
    owner, parent = _innermost(parse["subgraphs"])
    edge_kinds = {e["id"]: e for e in parse["edges"]}
    ends = {x for e in parse["edges"] for x in (e["start"], e["end"])}
    nodes, rec_nodes, texts, elements = [], [], [], []
    seen: set[str] = set()
    for v in parse["vertices"]:
        if v["id"] in sgs:
            continue  # a subgraph that is a link end: a container node, below
        m = res["nodes"].get(v["id"])
        if m is None:
            raise RuntimeError(f"vertex {v['id']!r} was not drawn")
        label = clean_label(v["text"])
        kind = MERMAID_TYPES.get(v["type"] or "square", v["type"])
        nd: dict[str, Any] = {"id": v["id"], "label": label, "kind": kind, "bbox": _bbox(m["bbox"])}
        if v["id"] in owner:
            nd["group"] = owner[v["id"]]
        nodes.append(nd)
        seen.add(v["id"])
        rec_nodes.append({"id": v["id"], "label": label, "bbox": nd["bbox"], "shape": kind})
        elements.append(("node", tuple(nd["bbox"])))
        if m["text_bbox"]:
            texts.append({"text": label, "bbox": _bbox(m["text_bbox"]), "role": "node", "rotation": 0})
    groups, containers = [], []
    for sid, s in sgs.items():
        c = res["clusters"].get(sid)
        if c is None:
            raise RuntimeError(f"subgraph {sid!r} was not drawn")
        title = clean_label(s["title"])
        g: dict[str, Any] = {"id": sid, "label": title, "bbox": _bbox(c["bbox"])}
        if sid in parent:
            g["parent"] = parent[sid]
        groups.append(g)
        is_node = sid in ends
        containers.append({"id": sid, "label": title, "bbox": g["bbox"], "is_node": is_node})
        elements.append(("group", tuple(g["bbox"])))
        if is_node:
            nd = {"id": sid, "label": title, "kind": "container", "bbox": g["bbox"]}
            if sid in parent:
                nd["group"] = parent[sid]
            nodes.append(nd)
            rec_nodes.append({"id": sid, "label": title, "bbox": g["bbox"], "shape": "container"})
        if c["text_bbox"] and title:
            texts.append({"text": title, "bbox": _bbox(c["text_bbox"]), "role": "container_title", "rotation": 0})
    edges, arrows = [], []
    for m in res["edges"]:
        e = edge_kinds[m["id"]]
        if m.get("missing"):
            raise RuntimeError(f"edge {m['id']!r} was not drawn")
        label = clean_label(e["text"]) or None
        double = e["type"] == "double_arrow_point"
        head = e["type"] != "arrow_open"
        pattern = "dotted" if e["stroke"] == "dotted" else "solid"
        if head:
            pairs = [(e["start"], e["end"])] + ([(e["end"], e["start"])] if double else [])
            for a, b in pairs:
                edges.append({"source": a, "target": b, "style": pattern, **({"label": label} if label else {})})
        poly = _simplify(m["polyline"])
        arrows.append({
            "source": e["start"], "target": e["end"], "polyline": poly, "tail": poly[0], "head": poly[-1],
            "head_box": _bbox(m["head_box"]), "label": label, "label_box": _bbox(m["label_bbox"]) if label else None,
            "style": {"dotted": "dotted", "thick": "thick"}.get(e["stroke"], "solid"),
            "head_style": "arrow" if head else "none", "double": double,
        })
        for key in ("head_box", "tail_box"):
            if m[key]:
                elements.append(("arrowhead", tuple(_bbox(m[key]))))
        if label and m["label_text_bbox"]:
            texts.append({"text": label, "bbox": _bbox(m["label_text_bbox"]), "role": "edge_label", "rotation": 0})
    elements += [("text", tuple(t["bbox"])) for t in texts]
    graph = DiagramGraph.from_dict({"id": item_id, "nodes": nodes, "edges": edges, "groups": groups})
    record = {"nodes": rec_nodes, "containers": containers, "texts": texts, "arrows": arrows}
    return graph, record, elements


def generate(seed: int, browser: Browser | None = None, **knobs: Any) -> SynthDiagram:
    """One Mermaid flowchart from ``seed`` (deterministic). ``knobs`` force values of
    :data:`KNOBS` (values or CLI strings such as ``"true"``, ``"LR"``); the rest are drawn
    for the seed. Without ``browser`` a Chromium is opened and closed for this one item."""
    chosen = choose_knobs(seed, **knobs)
    spec = make_spec(seed, chosen)
    src = to_source(spec)
    config = mermaid_config(seed, chosen)
    _, _, version = _bundle()
    own = browser is None
    b = Browser() if own else browser
    try:
        img, res = render_source(src, config, b)
    finally:
        if own:
            b.close()
    graph, record, elements = build(res, img, f"mermaid-{seed}")
    meta = {"source": src, "mermaid": version, "spec": spec, "config": config, "parse": res["parse"],
            "outlines": {k: v["outline"] for k, v in res["nodes"].items()}
            | {k: v["outline"] for k, v in res["clusters"].items()}, "scale": res["scale"],
            "drawn_text": {k: v["text"] for k, v in res["nodes"].items()}
            | {k: v["text"] for k, v in res["clusters"].items()},
            "drawn_edge_labels": [m.get("label") for m in res["edges"]]}
    return SynthDiagram(img, graph, "mermaid", meta, elements, record, effective_knobs(spec, chosen))
