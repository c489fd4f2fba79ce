"""Parse reliability: how far to trust one parse, from evidence the parser already has.

The ``reliability`` agent runs last (after the Graph Architect) and writes into the graph's
``meta``:

- ``reliability_signals``: a dict of the signals below, each in [0, 1] (0 = no sign of
  trouble), plus ``layout`` (whether a Layout Detector ran) and the counts behind them;
- ``parse_reliability``: the estimate ``r`` in [0, 1] of how close the parsed graph is to the
  truth (fitted to the parse's strict directed edge-F1);
- ``reliability_evidence``: where the signals come from, in input pixels
  (:func:`reliability_evidence`), which the HTML report draws over the image of a flagged item.

Signals (``th`` = median OCR line height; a *connector* is one :class:`~.diagram.Stroke`):

``unexplained_ink``
    share of the image's ink (pixels whose max channel difference from the border's median
    colour exceeds ``ink_threshold``) that no node, shape, operator, text line or connector
    explains: the ink left after masking node and shape polygons (container outlines only),
    operators and OCR line boxes, in 8-connected pieces of >= 3 px whose box lies inside no
    connector's box (grown by 2 px).
``dangling_ends``
    share of connectors that attach at one end only.
``headless``
    share of connectors with two or more contacts and no arrowhead at all (direction
    undecided; no edge unless an operator decides it).
``both_heads``
    share of connectors with two or more contacts, every one with a head (both ends alike).
``weak_heads``
    mean over the edges of ``1 - margin``, the head's evidence margin read back from the edge
    confidence (``conf = m (0.6 + 0.4 margin)``, ``m`` = 0.9 for dashed connectors).
``ocr_low_conf``
    share of OCR lines read with confidence below 0.8.
``text_unassigned``
    share of text labels that ended up neither in a graph node nor as an arrow label.
``single_agent``
    share of graph nodes found by one agent only (text with no shape, or a shape with no text).
``isolated``
    share of graph nodes that no graph edge touches (1.0 for a graph without edges).
``layout_disagreement``
    with a Layout Detector only (else 0): share of detector ``node`` boxes (score >= 0.5) that
    no graph node overlaps (IoU >= 0.3), averaged with the share of detector ``arrowhead``
    boxes that hold no connector's head contact, and of head contacts that no arrowhead box
    holds.

Estimate (a monotone logistic model; every weight ``w_i >= 0``, so more trouble never raises it)::

    r = sigmoid(b - sum_i w_i * s_i)

Fitting (``benchmarks/fit_reliability.py``, deterministic): items rendered with exact ground
truth in all four styles (graphviz, pillow, mermaid, paper; never the real dev figures) are
parsed with the default configuration; the target is each parse's strict directed edge-F1
(labels folded, one-to-one, the dev-data protocol). ``b`` and ``w`` minimise the binary cross
entropy between ``r`` and the edge-F1 (a fractional-response logistic regression), each style
weighted equally, plus ``1e-3 * |w|^2``, under ``w >= 0`` (L-BFGS-B from zeros). The fitted
values ship in ``sciflow/models/parse-reliability.json`` (with the fit's item counts and
in-sample metrics); ``[parser.reliability] coefficients`` may point at another such file.
A weight the fit set cannot inform (``layout_disagreement`` without a detector) stays 0. A second
model of the same form, ``with_layout``, is fitted the same way on parses made with the shipped
layout detector switched on (``benchmarks/configs/detector.toml``, 30 items per style) and is
used for a parse where the detector found boxes; ``reliability_signals["model"]`` says which.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
from collections.abc import Mapping
from importlib import resources
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from sciflow.agents import overlay
from sciflow.agents.diagram import Diagram, GroundedNode, bbox_iou
from sciflow.agents.registry import AGENTS
from sciflow.agents.shape_hunter import background_color, channel_difference

#: the signals of the model, in the order of its weights
SIGNALS = (
    "unexplained_ink",
    "dangling_ends",
    "headless",
    "both_heads",
    "weak_heads",
    "ocr_low_conf",
    "text_unassigned",
    "single_agent",
    "isolated",
    "layout_disagreement",
)
#: bumped whenever a signal's definition changes (part of the agent fingerprint and of the fit cache key)
SIGNALS_VERSION = 1
COEFFICIENTS_FILE = "parse-reliability.json"
LOW_OCR_CONF = 0.8


def load_coefficients(path: str | Path | None = None) -> dict[str, Any]:
    """The fitted model: ``{"intercept": b, "weights": {signal: w}, ...}`` from ``path`` or the
    shipped ``sciflow/models/parse-reliability.json``. Missing weights are 0."""
    if path:
        raw = Path(path).read_text(encoding="utf-8")
    else:
        raw = resources.files("sciflow.models").joinpath(COEFFICIENTS_FILE).read_text(encoding="utf-8")
    data = json.loads(raw)
    out = _model(data)
    if isinstance(data.get("with_layout"), Mapping):
        out["with_layout"] = _model(data["with_layout"])
    return out


def _model(data: Mapping[str, Any]) -> dict[str, Any]:
    weights = {s: float(data.get("weights", {}).get(s, 0.0)) for s in SIGNALS}
    return {**data, "intercept": float(data.get("intercept", 0.0)), "weights": weights}


def estimate(signals: Mapping[str, float], coefficients: Mapping[str, Any]) -> float:
    """``sigmoid(b - sum w_i s_i)`` rounded to 1e-4 (the module docstring's formula).

    >>> estimate({"isolated": 1.0}, {"intercept": 2.0, "weights": {"isolated": 4.0}})
    0.1192
    """
    z = float(coefficients["intercept"]) - sum(
        float(coefficients["weights"].get(s, 0.0)) * float(signals.get(s, 0.0)) for s in SIGNALS
    )
    return round(1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z)))), 4)


def reliability_from_signals(signals: Mapping[str, Any], coefficients: Mapping[str, Any]) -> tuple[float, str]:
    """``(r, model)``: the ``with_layout`` model when the detector found boxes (``signals["layout"]``)
    and the coefficients have one, else the default model."""
    model = coefficients.get("with_layout") if signals.get("layout") else None
    return estimate(signals, model or coefficients), "with_layout" if model else "default"


def _kept_nodes(d: Diagram) -> list[GroundedNode]:
    """The grounded nodes the Graph Architect keeps (its step 1)."""
    attached = {e.source for e in d.edges} | {e.target for e in d.edges}
    return [n for n in d.nodes if (not n.candidate or n.id in attached) and n.label.strip()]


def _share(k: float, n: float) -> float:
    return round(float(k) / n, 4) if n > 0 else 0.0


def unexplained_ink(d: Diagram, ink_threshold: int) -> tuple[float, np.ndarray]:
    """``(share, mask)``: the ``unexplained_ink`` signal and the unexplained pixels."""
    img = d.image
    bg = np.empty_like(img)
    bg[:] = background_color(img).astype(np.uint8)
    ink = (channel_difference(img, bg) > ink_threshold).astype(np.uint8)
    total = int(ink.sum())
    if total == 0:
        return 0.0, ink.astype(bool)
    masked = np.zeros(ink.shape, np.uint8)
    for n in d.nodes:
        if len(n.polygon) < 3:
            continue
        pts = np.round(np.array(n.polygon)).astype(np.int32)
        if n.kind == "container":
            cv2.polylines(masked, [pts], True, 1, thickness=5)
        else:
            cv2.fillPoly(masked, [pts], 1)
            cv2.polylines(masked, [pts], True, 1, thickness=5)
    container_shapes = {n.shape_id for n in d.nodes if n.kind == "container"}
    for s in d.shapes:
        if len(s.polygon) < 3:
            continue
        pts = np.round(np.array(s.polygon)).astype(np.int32)
        if s.id in container_shapes or s.kind == "region":
            cv2.polylines(masked, [pts], True, 1, thickness=5)
        else:
            cv2.fillPoly(masked, [pts], 1)
    for o in d.operators:
        cv2.circle(masked, (int(o.center[0]), int(o.center[1])), int(o.radius + 3), 1, -1)
    for t in d.text_lines:
        x0, y0, x1, y1 = (int(round(v)) for v in t.bbox)
        masked[max(0, y0 - 2) : y1 + 2, max(0, x0 - 2) : x1 + 2] = 1
    rest = ink & (1 - masked)
    k, lab, stats, _ = cv2.connectedComponentsWithStats(rest, connectivity=8)
    boxes = [s.bbox for s in d.strokes]
    bad = np.zeros(k, bool)
    for i in range(1, k):
        x, y, w, h, area = (int(v) for v in stats[i])
        if area < 3:
            continue
        inside = any(b[0] - 2 <= x and b[1] - 2 <= y and x + w <= b[2] + 2 and y + h <= b[3] + 2 for b in boxes)
        bad[i] = not inside
    mask = bad[lab]
    return _share(int(mask.sum()), total), mask


def layout_disagreement(d: Diagram, kept: list[GroundedNode]) -> float:
    """The ``layout_disagreement`` signal (0.0 without detector boxes)."""
    if not d.layout:
        return 0.0
    nodes = [b for b in d.layout if b.cls == "node" and b.confidence >= 0.5]
    heads = [b for b in d.layout if b.cls == "arrowhead" and b.confidence >= 0.5]
    parts = []
    if nodes:
        unmatched = sum(1 for b in nodes if not any(bbox_iou(b.bbox, n.bbox) >= 0.3 for n in kept))
        parts.append(_share(unmatched, len(nodes)))
    pad = 0.5 * d.text_height()
    contacts = [(x, y) for s in d.strokes for _nid, x, y, head in s.contacts if head]

    def holds(b: Any, x: float, y: float) -> bool:
        return b.bbox[0] - pad <= x <= b.bbox[2] + pad and b.bbox[1] - pad <= y <= b.bbox[3] + pad

    if heads or contacts:
        missed = sum(1 for b in heads if not any(holds(b, x, y) for x, y in contacts))
        unsupported = sum(1 for x, y in contacts if not any(holds(b, x, y) for b in heads))
        parts.append(_share(missed + unsupported, len(heads) + len(contacts)))
    return round(float(np.mean(parts)), 4) if parts else 0.0


def reliability_signals(d: Diagram, ink_threshold: int = 60) -> tuple[dict[str, Any], np.ndarray]:
    """``(signals, unexplained-ink mask)`` of a parsed :class:`Diagram` (module docstring)."""
    kept = _kept_nodes(d)
    ink_share, mask = unexplained_ink(d, ink_threshold)
    strokes = d.strokes
    multi = [s for s in strokes if len(s.contacts) >= 2]
    margins = []
    for e in d.edges:
        m = 0.9 if e.style != "solid" else 1.0
        margins.append(min(1.0, max(0.0, (e.confidence / m - 0.6) / 0.4)))
    graph = d.graph
    g_nodes = list(graph.nodes) if graph is not None else []
    g_edges = list(graph.edges) if graph is not None else []
    touched = {e.source for e in g_edges} | {e.target for e in g_edges}
    used_lines = {i for n in kept for i in n.text_ids}
    arrow_labels = {e.label for e in d.edges if e.label}
    labels = list(d.text_labels)
    unassigned = sum(1 for lb in labels if not used_lines & set(lb.line_ids) and lb.text not in arrow_labels)
    single = sum(1 for n in kept if n.kind not in ("operator",) and (n.shape_id is None or not n.text_ids))
    signals: dict[str, Any] = {
        "unexplained_ink": ink_share,
        "dangling_ends": _share(sum(1 for s in strokes if len(s.contacts) == 1), len(strokes)),
        "headless": _share(sum(1 for s in multi if not any(c[3] for c in s.contacts)), len(multi)),
        "both_heads": _share(sum(1 for s in multi if all(c[3] for c in s.contacts)), len(multi)),
        "weak_heads": round(1.0 - float(np.mean(margins)), 4) if margins else 0.0,
        "ocr_low_conf": _share(sum(1 for t in d.text_lines if t.confidence < LOW_OCR_CONF), len(d.text_lines)),
        "text_unassigned": _share(unassigned, len(labels)),
        "single_agent": _share(single, len(kept)),
        "isolated": _share(sum(1 for n in g_nodes if n.id not in touched), len(g_nodes)) if g_nodes else 1.0,
        "layout_disagreement": layout_disagreement(d, kept),
        "layout": bool(d.layout),
        "counts": {
            "connectors": len(strokes),
            "edges": len(g_edges),
            "nodes": len(g_nodes),
            "text_lines": len(d.text_lines),
            "text_labels": len(labels),
        },
    }
    return signals, mask


def reliability_evidence(d: Diagram, mask: np.ndarray, max_regions: int = 40) -> dict[str, list[list[float]]]:
    """Where the signals come from, in input-image pixels (``working / scale``), for overlays:
    ``unexplained`` (boxes of the largest ``max_regions`` unexplained ink pieces), ``dangling``
    (the one contact of connectors attached at one end), ``headless`` (the contacts of connectors
    without a head) and ``single_agent`` (boxes of nodes found by one agent)."""
    s = d.scale or 1.0

    def pt(x: float, y: float) -> list[float]:
        return [round(x / s, 1), round(y / s, 1)]

    def bx(b: Any) -> list[float]:
        return [round(float(v) / s, 1) for v in b]

    k, _lab, stats, _ = cv2.connectedComponentsWithStats(mask.astype(np.uint8), connectivity=8)
    regions = sorted(range(1, k), key=lambda i: (-int(stats[i][4]), i))[:max_regions]
    return {
        "unexplained": [bx((stats[i][0], stats[i][1], stats[i][0] + stats[i][2], stats[i][1] + stats[i][3]))
                        for i in regions],
        "dangling": [pt(x, y) for st in d.strokes if len(st.contacts) == 1 for _n, x, y, _h in st.contacts],
        "headless": [pt(x, y) for st in d.strokes if len(st.contacts) >= 2 and not any(c[3] for c in st.contacts)
                     for _n, x, y, _h in st.contacts],
        "single_agent": [bx(n.bbox) for n in _kept_nodes(d)
                         if n.kind != "operator" and (n.shape_id is None or not n.text_ids)],
    }


@AGENTS.register("reliability")
class ReliabilityAgent:
    """Writes ``parse_reliability`` and ``reliability_signals`` into ``diagram.graph.meta``.

    Table ``[parser.reliability]``: ``coefficients`` (a JSON file; "" = the shipped fit) and
    ``ink_threshold`` (as the other agents')."""

    backend_name = "logistic"
    overlay_legend = (
        ("unexplained ink", overlay.RED),
        ("connector attached at one end", overlay.ORANGE),
        ("connector without a head", overlay.BLUE),
        ("node found by one agent", overlay.PURPLE),
        ("isolated node", overlay.GREY),
    )

    def __init__(self, params: Mapping[str, Any]):
        self.params = dict(params)
        self.ink_threshold = int(self.params.get("ink_threshold", 60))
        self.coefficients = load_coefficients(str(self.params.get("coefficients", "") or "") or None)
        wl = self.coefficients.get("with_layout") or {}
        canon = json.dumps({"intercept": self.coefficients["intercept"], "weights": self.coefficients["weights"],
                            "with_layout": [wl.get("intercept"), wl.get("weights")]}, sort_keys=True)
        self._hash = hashlib.sha256(canon.encode()).hexdigest()

    def fingerprint(self) -> dict[str, Any]:
        return {"backend": "logistic", "signals_version": SIGNALS_VERSION, "coefficients_sha256": self._hash,
                "evidence": 1}

    def run(self, diagram: Diagram) -> None:
        if diagram.graph is None:
            return
        signals, mask = reliability_signals(diagram, self.ink_threshold)
        r, signals["model"] = reliability_from_signals(signals, self.coefficients)
        meta = {**dict(diagram.graph.meta), "parse_reliability": r, "reliability_signals": signals,
                "reliability_evidence": reliability_evidence(diagram, mask)}
        diagram.graph = dataclasses.replace(diagram.graph, meta=meta)
        diagram.evidence["reliability"] = {"parse_reliability": r, "signals": signals}

    def draw_overlay(self, diagram: Diagram, canvas: np.ndarray) -> None:
        """Why the estimate is what it is: unexplained ink in red, connectors attached at one
        end (orange ring at the end), connectors without a head (blue rings at both ends),
        nodes found by one agent (purple boxes), isolated graph nodes (grey boxes), and the
        estimate with its three largest signals at the top left."""
        _share_, mask = unexplained_ink(diagram, self.ink_threshold)
        if mask.shape == canvas.shape[:2]:
            canvas[mask] = overlay.RED
        for s in diagram.strokes:
            if len(s.contacts) == 1:
                _n, x, y, _h = s.contacts[0]
                cv2.circle(canvas, (int(x), int(y)), 7, overlay.ORANGE, 2)
            elif not any(c[3] for c in s.contacts):
                for _n, x, y, _h in s.contacts:
                    cv2.circle(canvas, (int(x), int(y)), 7, overlay.BLUE, 2)
        for n in _kept_nodes(diagram):
            if n.kind != "operator" and (n.shape_id is None or not n.text_ids):
                overlay.box(canvas, n.bbox, overlay.PURPLE, 2)
        graph = diagram.graph
        if graph is not None:
            s = diagram.scale or 1.0
            touched = {e.source for e in graph.edges} | {e.target for e in graph.edges}
            for n in graph.nodes:
                if n.id not in touched and n.bbox:
                    overlay.box(canvas, [v * s for v in n.bbox], overlay.GREY, 1)
            sig = graph.meta.get("reliability_signals") or {}
            top = sorted((k for k in SIGNALS if sig.get(k)), key=lambda k: -float(sig[k]))[:3]
            head = f"reliability {graph.meta.get('parse_reliability', 0):.2f}: " + ", ".join(
                f"{k} {float(sig[k]):.2f}" for k in top
            )
            overlay.text(canvas, head, 4, 14, overlay.BLACK)
