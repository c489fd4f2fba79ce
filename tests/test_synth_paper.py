"""The `paper` synthetic style: every recorded box lies on drawn ink, arrows start and end on
their nodes' borders, arrow labels touch their arrows, the graph follows the annotation
protocol, items are deterministic, every knob value is used and forcing a knob works.

Needs Debian's chromium and Playwright; skipped with the reason otherwise. One browser for the
module; 50 items are drawn once and shared (plus a handful for determinism and forcing).
"""

from __future__ import annotations

import io
import json
import math

import numpy as np
import pytest
from PIL import Image

from sciflow.bench.synth import paper_render as pr
from sciflow.bench.synth.browser import Browser, BrowserUnavailable, chromium_path
from sciflow.bench.synth.common import elements_record
from sciflow.bench.synth.paper_knobs import KNOBS, coerce
from sciflow.bench.synth.styles import StyleError

N_ITEMS = 50
INK = 36  # a pixel is ink when its channels differ from the local background by more than this in sum
NOT_NODES = {"title", "caption", "legend", "footnote", "content", "edge_label"}
DETECTOR_CLASSES = {"node", "arrowhead", "text", "group", "operator"}


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed (pip install playwright; it drives Debian's chromium)"
    try:
        chromium_path()
    except BrowserUnavailable as exc:
        return str(exc)
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _unavailable()
    if reason:
        pytest.skip(f"paper style needs a headless Chromium: {reason}")
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def items(browser):
    return {seed: pr.generate(seed, browser) for seed in range(N_ITEMS)}


def _png(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def _json(d) -> str:
    return json.dumps([d.graph.to_dict(), elements_record(d), d.meta], sort_keys=True, ensure_ascii=False)


def _local_bg(img: np.ndarray, box, off: int = 2, w: int = 2) -> np.ndarray:
    """Median colour of a ring just outside ``box``."""
    h, wd = img.shape[:2]
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    X0, Y0, X1, Y1 = max(0, x0 - off - w), max(0, y0 - off - w), min(wd, x1 + off + w), min(h, y1 + off + w)
    mask = np.ones((Y1 - Y0, X1 - X0), bool)
    mask[max(0, y0 - off - Y0): max(0, y1 + off - Y0), max(0, x0 - off - X0): max(0, x1 + off - X0)] = False
    ring = img[Y0:Y1, X0:X1][mask]
    return np.median(ring, axis=0) if len(ring) else np.array([255, 255, 255])


def _ink(img: np.ndarray, box) -> tuple[int, float]:
    """(ink pixels inside ``box``, the larger share of the box's width / height they span)."""
    h, w = img.shape[:2]
    bg = _local_bg(img, box)
    x0, y0, x1, y1 = (int(round(v)) for v in box)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    crop = img[y0:y1, x0:x1].astype(int)
    if crop.size == 0:
        return 0, 0.0
    m = np.abs(crop - bg).sum(axis=-1) > INK
    if not m.any():
        return 0, 0.0
    ys, xs = np.nonzero(m)
    return int(m.sum()), max((xs.max() - xs.min() + 1) / (x1 - x0), (ys.max() - ys.min() + 1) / (y1 - y0))


def _border_dist(p, box) -> float:
    x, y = p
    x0, y0, x1, y1 = box
    if x0 <= x <= x1 and y0 <= y <= y1:
        return min(x - x0, x1 - x, y - y0, y1 - y)
    return math.hypot(max(x0 - x, 0, x - x1), max(y0 - y, 0, y - y1))


def _box_line_dist(box, pts) -> float:
    """Distance between a box and a polyline (0 when they meet), by sampling the line every
    half pixel."""
    x0, y0, x1, y1 = box
    best = math.inf
    for a, b in zip(pts, pts[1:], strict=False):
        n = max(1, int(math.hypot(b[0] - a[0], b[1] - a[1]) * 2))
        t = np.linspace(0, 1, n + 1)
        xs, ys = a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t
        dx = np.maximum(np.maximum(x0 - xs, 0), xs - x1)
        dy = np.maximum(np.maximum(y0 - ys, 0), ys - y1)
        best = min(best, float(np.hypot(dx, dy).min()))
    return best


def test_every_box_lies_on_ink(items):
    bad = []
    for seed, d in items.items():
        rec = d.record
        for n in rec["nodes"]:
            count, _ = _ink(d.image, n["bbox"])
            if count < 4:
                bad.append((seed, "node", n["id"], n["shape"]))
        for t in rec["texts"]:
            count, span = _ink(d.image, t["bbox"])
            if count < 4 or span < 0.4:
                bad.append((seed, "text", t["text"], t["role"], count, round(span, 2)))
        for a in rec["arrows"]:
            if a["head_box"] is not None and _ink(d.image, a["head_box"])[0] < 3:
                bad.append((seed, "head", a["id"]))
        for cls, box in d.elements:
            if cls in ("group", "operator") and _ink(d.image, box)[0] < 4:
                bad.append((seed, cls, box))
    assert not bad, bad[:10]


def test_arrows_start_and_end_on_their_nodes(items):
    bad = []
    for seed, d in items.items():
        boxes = {n["id"]: n["bbox"] for n in d.record["nodes"]}
        tol = 2.5 + 1.5 * d.knobs["scale"]
        for a in d.record["arrows"]:
            assert a["polyline"][0] == a["tail"] and a["polyline"][-1] == a["head"]
            for end, nid in (("tail", a["source"]), ("head", a["target"])):
                if nid is not None and _border_dist(a[end], boxes[nid]) > tol:
                    bad.append((seed, a["id"], a["route"], end, round(_border_dist(a[end], boxes[nid]), 1)))
    assert not bad, bad[:10]


def test_edge_labels_touch_their_arrow(items):
    bad, n = [], 0
    for seed, d in items.items():
        tol = 4 * d.knobs["scale"] + 1
        for a in d.record["arrows"]:
            if a["label"] is None:
                continue
            n += 1
            if _box_line_dist(a["label_box"], a["polyline"]) > tol:
                bad.append((seed, a["id"], a["label"], a.get("label_mode")))
            assert any(t["role"] == "edge_label" and t["text"] == a["label"] and t["bbox"] == a["label_box"]
                       for t in d.record["texts"])
    assert n >= 20 and not bad, bad[:10]


def test_graph_follows_the_protocol(items):
    for seed, d in items.items():
        rec = d.record
        texts = rec["texts"]
        node_ids = {n.id for n in d.graph.nodes}
        kinds = {n.id: n.kind for n in d.graph.nodes}
        touched = {x for a in rec["arrows"] for x in (a["source"], a["target"]) if x}
        for n in d.graph.nodes:
            if n.kind == "operator":
                assert n.label in ("⊕", "⊗") and n.id in touched, (seed, n)
                continue
            support = [t for t in texts if t["text"] == n.label and t["role"] in ("node", "icon_caption",
                                                                                   "container_title")]
            assert support, (seed, n.id, n.label, "no drawn text names this node")
            if n.kind == "text":
                assert n.id in touched, (seed, n.id, "free text is a node only when an arrow touches it")
            if n.kind == "container":
                assert n.id in touched, (seed, n.id, "a container is a node only when an arrow attaches")
        for t in texts:
            if t["role"] in NOT_NODES:
                assert t.get("owner") not in node_ids or t["role"] == "content" and kinds[t["owner"]] == "card", \
                    (seed, t)
            if t["role"] in ("title", "caption", "legend", "footnote"):
                assert t["text"] not in {n.label for n in d.graph.nodes}, (seed, t)
        for c in rec["containers"]:
            assert (c["id"] in node_ids) == c["is_node"], (seed, c)
        arrows = {(a["source"], a["target"]) for a in rec["arrows"]}
        doubles = {(a["target"], a["source"]) for a in rec["arrows"] if a["double"]}
        for e in d.graph.edges:
            assert (e.source, e.target) in arrows | doubles, (seed, e)
        for a in rec["arrows"]:
            if a["source"] in node_ids and a["target"] in node_ids:
                assert any(e.source == a["source"] and e.target == a["target"] for e in d.graph.edges)
                if a["double"]:
                    assert any(e.source == a["target"] and e.target == a["source"] for e in d.graph.edges)
            if a["head_style"] == "none":
                assert kinds.get(a["target"]) == "operator", (seed, a["id"], "headless lines only feed operators")
        assert {c for c, _ in d.elements} <= DETECTOR_CLASSES


def test_record_is_complete(items):
    d = items[0]
    rec = elements_record(d)
    assert rec["style"] == "paper" and rec["size"] == [d.image.shape[1], d.image.shape[0]]
    assert set(rec["knobs"]) == set(KNOBS)
    for a in rec["arrows"]:
        assert {"source", "target", "polyline", "tail", "head", "head_box", "label", "label_box", "style",
                "head_style", "double"} <= set(a)
    for t in rec["texts"]:
        assert {"text", "bbox", "role", "rotation"} <= set(t)


def test_every_knob_value_is_used(items):
    missing = {k: [v for v in vals if not any(d.knobs[k] == v for d in items.values())] for k, vals in KNOBS.items()}
    assert not {k: v for k, v in missing.items() if v}
    seen = {x for d in items.values() for a in d.record["arrows"] for x in (a["route"], a["head_style"])}
    assert {"straight", "elbow", "curved", "channel", "brace", "bus", "block", "panel"} <= seen
    assert {"filled", "open", "chevron", "barbed", "none"} <= seen
    roles = {t["role"] for d in items.values() for t in d.record["texts"]}
    assert roles >= {"node", "edge_label", "container_title", "title", "caption", "legend", "footnote",
                     "icon_caption", "content"}
    assert any(t["rotation"] for d in items.values() for t in d.record["texts"])
    assert any(d.meta["crossings"] for d in items.values())


def test_same_seed_same_bytes(items, browser):
    for seed in (3, 11):
        again = pr.generate(seed, browser)
        assert _png(again.image) == _png(items[seed].image)
        assert _json(again) == _json(items[seed])


def test_forcing_knobs(browser):
    d = pr.generate(5, browser, theme="dark", fan="brace", panel_arrow="true", direction="TB", labels="math")
    assert d.knobs["theme"] == "dark" and d.knobs["fan"] == "brace" and d.knobs["direction"] == "TB"
    assert d.knobs["panel_arrow"] is True and (d.knobs["panels"] or d.knobs["containers"])
    assert any(a["route"] == "brace" for a in d.record["arrows"])
    assert any(n.kind == "container" for n in d.graph.nodes)
    assert np.median(d.image.reshape(-1, 3), axis=0).max() < 80  # a dark page
    t = pr.generate(5, browser, transparent="yes", composite="white", theme="dark", pictures="captioned",
                    head="block")
    assert t.meta["transparent"] and t.meta["composited_on"] == "white" and t.meta["background"] == "#ffffff"
    assert any(x["role"] == "icon_caption" for x in t.record["texts"])
    assert any(n.kind == "picture" for n in t.graph.nodes)
    assert any(a["head_style"] == "block" for a in t.record["arrows"])


def test_bad_knobs_are_clear_errors():
    with pytest.raises(StyleError, match="expected one of"):
        coerce("theme", "sepia")
    with pytest.raises(StyleError, match="no knob"):
        pr.generate(0, None, wobble="1")
    assert coerce("scale", "1.5") == 1.5 and coerce("double", "TRUE") is True and coerce("theme", "Dark") == "dark"
