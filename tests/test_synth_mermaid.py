"""The `mermaid` synthetic style: the graph is Mermaid's own parse and what the generator meant,
the geometry lies on the drawn pixels, items are deterministic, every knob value is used.

Needs Debian's chromium (and Playwright) and Mermaid's bundle (`make install-bench`); skipped
with the reason otherwise. One browser for the module; 50 items drawn once and shared.
"""

from __future__ import annotations

import io
import json
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from PIL import Image

from sciflow.bench.synth import mermaid_render as mr
from sciflow.bench.synth.browser import Browser, BrowserUnavailable, chromium_path
from sciflow.bench.synth.common import elements_record
from sciflow.bench.synth.mermaid_spec import KNOBS, intended_graph

N_ITEMS = 50
INK = 10  # a pixel is ink when a channel differs from white by more than this (pale fills count)


def _unavailable() -> str | None:
    try:
        import playwright.sync_api  # noqa: F401
    except ImportError:
        return "playwright is not installed"
    try:
        chromium_path()
        mr.bundle_path()
    except BrowserUnavailable as exc:
        return str(exc)
    return None


@pytest.fixture(scope="module")
def browser():
    reason = _unavailable()
    if reason:
        pytest.skip(f"mermaid style unavailable: {reason}")
    with Browser() as b:
        yield b


@pytest.fixture(scope="module")
def items(browser):
    return {seed: mr.generate(seed, browser) for seed in range(N_ITEMS)}


def _edges(g):
    return {(e.source, e.target, e.label) for e in g.edges}


def _png(img: np.ndarray) -> bytes:
    buf = io.BytesIO()
    Image.fromarray(img).save(buf, format="PNG", optimize=False)
    return buf.getvalue()


def _json(d) -> str:
    return json.dumps([d.graph.to_dict(), elements_record(d)], sort_keys=True, ensure_ascii=False)


def _ink(img: np.ndarray, box, inset: float = 0.0) -> np.ndarray:
    x0, y0, x1, y1 = box
    x0, y0 = int(np.floor(x0 + inset)), int(np.floor(y0 + inset))
    x1, y1 = int(np.ceil(x1 - inset)), int(np.ceil(y1 - inset))
    crop = img[max(0, y0) : max(0, y1), max(0, x0) : max(0, x1)].astype(int)
    return np.abs(crop - 255).max(axis=-1) > INK if crop.size else np.zeros((0, 0), bool)


def _seg_dist(p, pts) -> float:
    """Distance from point ``p`` to the polyline ``pts``."""
    pts, p = np.asarray(pts, float), np.asarray(p, float)
    if len(pts) == 1:
        return float(np.hypot(*(pts[0] - p)))
    a, d = pts[:-1], pts[1:] - pts[:-1]
    length = np.maximum((d**2).sum(1), 1e-12)
    t = np.clip(((p - a) * d).sum(1) / length, 0, 1)
    return float(np.hypot(*(a + t[:, None] * d - p).T).min())


def _box_dist(box, poly) -> float:
    """Distance from the polyline to the box (0 when it enters the box)."""
    pts = np.asarray(poly, float)
    dense = [pts[0]]
    for a, b in zip(pts[:-1], pts[1:], strict=True):
        n = max(1, int(np.hypot(*(b - a)) / 0.5))
        dense += [a + (b - a) * k / n for k in range(1, n + 1)]
    q = np.asarray(dense)
    x0, y0, x1, y1 = box
    dx = np.maximum(0, np.maximum(x0 - q[:, 0], q[:, 0] - x1))
    dy = np.maximum(0, np.maximum(y0 - q[:, 1], q[:, 1] - y1))
    return float(np.hypot(dx, dy).min())


# ----------------------------------------------------------------- graph


def test_graph_is_mermaids_own_parse(items):
    for seed, d in items.items():
        parse = d.meta["parse"]
        subgraphs = {s["id"]: s for s in parse["subgraphs"]}
        ends = {x for e in parse["edges"] for x in (e["start"], e["end"])}
        want_nodes = {v["id"]: mr.clean_label(v["text"]) for v in parse["vertices"] if v["id"] not in subgraphs}
        want_nodes |= {s: mr.clean_label(subgraphs[s]["title"]) for s in subgraphs if s in ends}
        assert {n.id: n.label for n in d.graph.nodes} == want_nodes, seed
        want_edges = set()
        for e in parse["edges"]:
            label = mr.clean_label(e["text"]) or None
            if e["type"] == "arrow_open":
                continue  # a line without a head is no edge
            want_edges.add((e["start"], e["end"], label))
            if e["type"] == "double_arrow_point":
                want_edges.add((e["end"], e["start"], label))
        assert _edges(d.graph) == want_edges, seed
        assert {g.id: g.label for g in d.graph.groups} == {s: mr.clean_label(x["title"]) for s, x in subgraphs.items()}
        assert len(d.record["arrows"]) == len(parse["edges"]), seed


def test_drawn_text_is_the_label(items):
    """The text in the SVG (HTML or SVG labels, wrapped or broken) reads as the truth label."""
    for seed, d in items.items():
        for n in d.graph.nodes:
            assert " ".join(d.meta["drawn_text"][n.id].split()) == n.label, (seed, n.id)
        for a, drawn in zip(d.record["arrows"], d.meta["drawn_edge_labels"], strict=True):
            assert (" ".join(drawn.split()) if drawn else None) == a["label"], (seed, a["label"])


def test_graph_is_what_the_generator_meant(items):
    for seed, d in items.items():
        want = intended_graph(d.meta["spec"])
        assert {n.id: (n.label, n.group) for n in d.graph.nodes} == {n.id: (n.label, n.group) for n in want.nodes}, seed
        assert _edges(d.graph) == _edges(want), seed
        assert {g.id: (g.label, g.parent) for g in d.graph.groups} == {g.id: (g.label, g.parent) for g in want.groups}
        kinds = {nd["id"]: nd["shape"] for nd in d.meta["spec"]["nodes"]}
        assert all(n.kind == kinds.get(n.id, "container") for n in d.graph.nodes), seed


def test_protocol_cases_appear(items):
    """Across the items: two-way links are two edges, head-less lines no edge, links to
    subgraphs make the subgraph a node, subgraphs nest."""
    doubles = [a for d in items.values() for a in d.record["arrows"] if a["double"]]
    lines = [a for d in items.values() for a in d.record["arrows"] if a["head_style"] == "none"]
    container_nodes = [n for d in items.values() for n in d.graph.nodes if n.kind == "container"]
    nested = [g for d in items.values() for g in d.graph.groups if g.parent]
    assert doubles and lines and container_nodes and nested
    for d in items.values():
        pairs = {(e.source, e.target) for e in d.graph.edges}
        for a in d.record["arrows"]:
            if a["double"]:
                assert {(a["source"], a["target"]), (a["target"], a["source"])} <= pairs
            elif a["head_style"] == "none":
                assert (a["source"], a["target"]) not in pairs and (a["target"], a["source"]) not in pairs
        grouped = {g.id for g in d.graph.groups}
        assert all(n.group in grouped for n in d.graph.nodes if n.group)


# -------------------------------------------------------------- geometry


def test_boxes_lie_on_ink(items):
    for seed, d in items.items():
        img = d.image
        h, w = img.shape[:2]
        for cls, box in d.elements:
            assert 0 <= box[0] < box[2] <= w + 1 and 0 <= box[1] < box[3] <= h + 1, (seed, cls, box)
            ink = _ink(img, box)
            if cls == "arrowhead":
                assert ink.mean() > 0.3, (seed, cls, box)
            elif cls == "text":
                assert ink.mean() > 0.04, (seed, cls, box)
                assert ink[:, :4].any() and ink[:, -4:].any(), (seed, "text box not tight", box)
            elif cls == "node":  # the shape touches all four sides of its box
                strips = (ink[:3], ink[-3:], ink[:, :3], ink[:, -3:])
                assert all(s.any() for s in strips), (seed, cls, box)
            else:
                assert ink.any(), (seed, cls, box)


def test_arrows_run_from_border_to_border(items):
    for seed, d in items.items():
        # Mermaid stops the arrow tip about 4 px short of the head node; rough outlines wobble
        tol = 8.5 if d.knobs["look"] == "handDrawn" else 6.5
        outlines = d.meta["outlines"]
        for a in d.record["arrows"]:
            assert a["tail"] == a["polyline"][0] and a["head"] == a["polyline"][-1]
            assert _seg_dist(a["tail"], outlines[a["source"]]) <= tol, (seed, a["source"], a["target"], "tail")
            assert _seg_dist(a["head"], outlines[a["target"]]) <= tol, (seed, a["source"], a["target"], "head")
            if a["head_style"] == "arrow":
                x0, y0, x1, y1 = a["head_box"]
                hx, hy = a["head"]
                assert x0 - 1 <= hx <= x1 + 1 and y0 - 1 <= hy <= y1 + 1, (seed, "head outside its arrowhead")
            else:
                assert a["head_box"] is None


def test_edge_labels_touch_their_arrow(items):
    n = 0
    for seed, d in items.items():
        for a in d.record["arrows"]:
            if a["label"]:
                n += 1
                assert _box_dist(a["label_box"], a["polyline"]) <= 1.0, (seed, a["label"])
        roles = {t["role"] for t in d.record["texts"]}
        assert roles <= {"node", "edge_label", "container_title"}
    assert n > 20


# --------------------------------------------------------- determinism, knobs


def test_same_seed_same_bytes(browser, items):
    """Drawn again after other items (a page that has drawn other things) and in a fresh
    browser: the same PNG bytes and the same graph and element JSON."""
    for seed in (3, 11):
        again = mr.generate(seed, browser)
        assert _png(again.image) == _png(items[seed].image), seed
        assert _json(again) == _json(items[seed]), seed
    with ThreadPoolExecutor(1) as pool:  # its own browser (a second sync Playwright needs its own thread)
        fresh = pool.submit(mr.generate, 10).result()  # drawn after seed 9 (other font, theme, look) above
    assert _png(fresh.image) == _png(items[10].image)
    assert _json(fresh) == _json(items[10])


def test_every_knob_value_is_used(items):
    for knob, values in KNOBS.items():
        used = {d.knobs[knob] for d in items.values()}
        assert used == set(values), (knob, set(values) - used)


def test_forcing_knobs(browser):
    d = mr.generate(5, browser, direction="bt", subgraphs="nested", subgraph_links="true", bidirectional="yes",
                    headless=True, shapes="hexagon", edge_labels="many", look="classic")
    assert d.knobs["direction"] == "BT" and d.knobs["subgraph_links"] is True and d.knobs["shapes"] == "hexagon"
    assert d.meta["source"].startswith("flowchart BT\n")
    assert {n.kind for n in d.graph.nodes} == {"hexagon", "container"}
    assert any(g.parent for g in d.graph.groups)
    assert any(a["double"] for a in d.record["arrows"])
    assert any(a["head_style"] == "none" for a in d.record["arrows"])
    assert mr.generate(5, browser, direction="BT").knobs["direction"] == "BT"
    from sciflow.bench.synth.styles import StyleError

    with pytest.raises(StyleError):
        mr.generate(5, browser, direction="sideways")
    with pytest.raises(StyleError):
        mr.generate(5, browser, no_such_knob=1)


def test_missing_bundle_says_make_install_bench(monkeypatch, tmp_path):
    monkeypatch.setenv(mr.BUNDLE_ENV, str(tmp_path / "nope.js"))
    with pytest.raises(mr.MermaidUnavailable, match="make install-bench"):
        mr.bundle_path()
    assert issubclass(mr.MermaidUnavailable, BrowserUnavailable)


def test_the_installed_bundle_is_the_pinned_one(items):
    """Renders are byte-stable for one Mermaid version: the one `make install-bench` pins."""
    import re
    from pathlib import Path

    makefile = Path(__file__).resolve().parents[1] / "Makefile"
    pinned = re.search(r"^MERMAID_VERSION := (\S+)", makefile.read_text("utf-8"), re.M)
    assert pinned, "the Makefile pins no MERMAID_VERSION"
    assert items[0].meta["mermaid"] == pinned.group(1), "a different mermaid is installed: run `make install-bench`"
