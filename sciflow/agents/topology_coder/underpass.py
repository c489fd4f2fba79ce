"""Step 3c: strokes passing under a free text.

A connector drawn through a free text box is cut by the text mask: two contacts on the same
text candidate whose strokes leave in opposite directions (within 30 degrees) along the line
joining them are one stroke passing under the text (joined, contacts dropped).
"""

from __future__ import annotations

import math
from collections.abc import Callable

from sciflow.agents.diagram import GroundedNode
from sciflow.agents.topology_coder.attach import Contact, direction
from sciflow.agents.topology_coder.components import Comp


def bridge_text(
    contacts: list[Contact],
    comps: dict[int, Comp],
    targets: list[GroundedNode],
    th: float,
    head: float,
    find: Callable[[int], int],
    parent: dict[int, int],
    bridges: list[tuple[float, float, float, float]],
) -> list[Contact]:
    """Join the pieces of strokes passing under a free text and drop their contacts there
    (the stroke direction at every text contact is set on the way, see
    :func:`~sciflow.agents.topology_coder.attach.direction`)."""
    for ct in contacts:
        if targets[ct.target].kind == "text":
            direction(ct, comps, th, head)
    drop: set[int] = set()
    idx = [i for i, ct in enumerate(contacts) if targets[ct.target].kind == "text"]
    cos30 = math.cos(math.radians(30))
    for ai, a in enumerate(idx):
        for b in idx[ai + 1 :]:
            ca, cb = contacts[a], contacts[b]
            if ca.target != cb.target or find(ca.comp) == find(cb.comp) or a in drop or b in drop:
                continue
            vx, vy = cb.x - ca.x, cb.y - ca.y
            nv = math.hypot(vx, vy) or 1.0
            vx, vy = vx / nv, vy / nv
            if (
                -(ca.out_dir[0] * vx + ca.out_dir[1] * vy) >= cos30
                and (cb.out_dir[0] * vx + cb.out_dir[1] * vy) >= cos30
            ):
                parent[find(ca.comp)] = find(cb.comp)
                drop.update((a, b))
                bridges.append((ca.x, ca.y, cb.x, cb.y))
    return [ct for i, ct in enumerate(contacts) if i not in drop]
