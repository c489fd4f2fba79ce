"""Step 5: edges per connector, from its tails (contacts without a head) and heads.

On a connector with 3+ contacts, some with and some without a head, each tail gets an edge
to every head its path reaches along the connector's skeleton (see
:func:`~sciflow.agents.topology_coder.reach.reachability`). Otherwise, with tails T and
heads H: one tail -> an edge to every head (fan-out); one head -> an edge from every tail
(fan-in); several of both -> each head pairs with the tail best aligned with the stroke
direction leaving that head; no tail and two heads -> two edges (double-headed). No head ->
an edge only when one end is an operator that already has an outgoing (resp. incoming)
headed edge, in which case the line flows into (resp. out of) the operator
(:func:`plain_to_operators`). Edge confidence = ``0.6 + 0.4 x`` the head's evidence margin,
times 0.9 for dashed or dotted connectors.
"""

from __future__ import annotations

import math

from sciflow.agents.diagram import EdgeEvidence, GroundedNode, Stroke
from sciflow.agents.topology_coder.attach import Contact


def connector_edges(
    cts: list[Contact],
    targets: list[GroundedNode],
    style: str,
    sid: int,
    reach: list[set[int]] | None = None,
) -> list[EdgeEvidence]:
    """The edges of stroke ``sid`` with contacts ``cts`` (``reach``: which contacts each
    contact reaches along the connector, or ``None``)."""
    heads = [c for c in cts if c.head]
    tails = [c for c in cts if not c.head]
    pairs: list[tuple[Contact, Contact]] = []
    if reach is not None:
        # several connectors merged into one ink component (crossings, shared trunks):
        # a tail feeds exactly the heads its traced path reaches
        pairs = [(cts[i], cts[j]) for i, t in enumerate(cts) if not t.head for j in sorted(reach[i]) if cts[j].head]
    elif heads and tails:
        if len(tails) == 1:
            pairs = [(tails[0], h) for h in heads]
        elif len(heads) == 1:
            pairs = [(t, heads[0]) for t in tails]
        else:
            for h in heads:
                best = max(
                    tails,
                    key=lambda t, h=h: (
                        ((t.x - h.x) * h.out_dir[0] + (t.y - h.y) * h.out_dir[1])
                        / (math.hypot(t.x - h.x, t.y - h.y) or 1.0)
                    ),
                )
                pairs.append((best, h))
    elif len(heads) == 2 and not tails:
        pairs = [(heads[0], heads[1]), (heads[1], heads[0])]
    out = []
    mult = 0.9 if style != "solid" else 1.0
    for t, h in pairs:
        if t.target == h.target:
            continue
        conf = mult * (0.6 + 0.4 * min(1.0, h.margin))
        out.append(EdgeEvidence(targets[t.target].id, targets[h.target].id, round(conf, 4), style, None, sid))
    return out


def plain_to_operators(
    strokes: list[Stroke], edges: list[EdgeEvidence], targets: list[GroundedNode]
) -> list[EdgeEvidence]:
    """``edges`` plus the headless two-contact strokes that flow into (or out of) an operator
    with an outgoing (incoming) headed edge."""
    kind = {t.id: t.kind for t in targets}
    out_ops = {e.source for e in edges if kind.get(e.source) == "operator"}
    in_ops = {e.target for e in edges if kind.get(e.target) == "operator"}
    with_edges = {e.stroke_id for e in edges}
    extra = []
    for s in strokes:
        if s.id in with_edges or len(s.contacts) != 2 or any(c[3] for c in s.contacts):
            continue
        (a, *_), (b, *_) = s.contacts
        for x, op in ((a, b), (b, a)):
            if kind.get(op) != "operator" or kind.get(x) == "operator":
                continue
            if op in out_ops:
                extra.append(EdgeEvidence(x, op, 0.6, s.style, None, s.id))
            elif op in in_ops:
                extra.append(EdgeEvidence(op, x, 0.6, s.style, None, s.id))
    return edges + extra
