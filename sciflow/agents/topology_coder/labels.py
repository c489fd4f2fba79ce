"""Step 6b: edge labels.

Free text labels that are not edge ends and lie within ``label_dist * th`` of exactly one
connector with exactly one edge become that edge's label. Hyphens and dashes at either end of
such a label are the line itself running into the text, read as glyphs (``-weights``), and
are stripped.
"""

from __future__ import annotations

import numpy as np

from sciflow.agents.diagram import EdgeEvidence, GroundedNode


def edge_labels(
    edges: list[EdgeEvidence],
    labels: np.ndarray,
    groups: dict[int, list[int]],
    gid_of_stroke: dict[int, int],
    label_dist: float,
    th: float,
    targets: list[GroundedNode],
) -> None:
    """Label ``edges`` in place; ``labels`` is the ink component image, ``groups`` the pieces of
    each connector root and ``gid_of_stroke`` each stroke's connector root."""
    used = {e.source for e in edges} | {e.target for e in edges}
    comp_to_stroke = {}
    for sid, g in gid_of_stroke.items():
        for m in groups[g]:
            comp_to_stroke[m] = sid
    pad = int(label_dist * th)
    h, w = labels.shape
    for n in targets:
        if n.kind != "text" or n.id in used:
            continue
        x0, y0, x1, y1 = (int(round(v)) for v in n.bbox)
        crop = labels[max(0, y0 - pad) : min(h, y1 + pad), max(0, x0 - pad) : min(w, x1 + pad)]
        sids = {comp_to_stroke[c] for c in np.unique(crop).tolist() if c in comp_to_stroke}
        owners = [i for i, e in enumerate(edges) if e.stroke_id in sids]
        if len(sids) == 1 and len(owners) == 1:
            e = edges[owners[0]]
            text = n.label.strip(" -\u2013\u2014_") or n.label
            edges[owners[0]] = EdgeEvidence(e.source, e.target, e.confidence, e.style, text, e.stroke_id)
