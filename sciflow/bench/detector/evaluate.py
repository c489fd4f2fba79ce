"""Detector evaluation: per-class matches of detected boxes against exact truth boxes."""

from __future__ import annotations

from collections import defaultdict

from sciflow.agents.diagram import BBox, LayoutBox, bbox_iou


def match(pred: list[LayoutBox], truth: list[tuple[str, BBox]], thr: float = 0.5) -> dict[str, list[int]]:
    """Per class [tp, n_pred, n_truth]: predictions by descending score take the free truth
    box of their class with the highest IoU >= ``thr``."""
    out: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
    for c, _ in truth:
        out[c][2] += 1
    used: set[int] = set()
    for p in sorted(pred, key=lambda b: -b.confidence):
        out[p.cls][1] += 1
        best, best_iou = -1, thr
        for j, (c, b) in enumerate(truth):
            if j not in used and c == p.cls:
                v = bbox_iou(p.bbox, b)
                if v >= best_iou:
                    best, best_iou = j, v
        if best >= 0:
            used.add(best)
            out[p.cls][0] += 1
    return out

