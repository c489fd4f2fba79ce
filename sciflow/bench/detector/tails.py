"""Arrow tails: where each drawn connector leaves its source, from the renderer's exact geometry.

A tail is the end of a connector **without** a head (the annotation protocol: direction is
read from heads, so the tail is the other end). Per connector:

* one head: the tail is the path's point at the other end;
* a head at both ends (double-headed arrow): no tail;
* no head at all (a plain line): neither end is marked, since the drawing says nothing
  about which end the line leaves from.

Where the geometry comes from, per style (all exact, none guessed from pixels):

* ``graphviz``: the first (or, for an edge whose head is drawn at its tail, the last) point
  of the edge's ``_draw_`` Bézier in ``dot -Tjson`` (the same layout the PNG is drawn from,
  recomputed from the item's spec with its final dpi and splines);
* ``pillow``: the first point of the polyline handed to the renderer's one drawing call per
  connector (:func:`sciflow.bench.synth.pillow_render._polyline`), recorded while it draws
  (every Pillow connector has one head, at its target);
* ``mermaid`` and ``paper``: the first point of each arrow's measured ``polyline`` in the
  browser record (Mermaid: the link's SVG path sampled with ``getPointAtLength``; paper: the
  drawn shaft), for arrows with ``head_style`` other than ``none`` and not ``double``; paper's
  brace fans are left out (the brace is drawn along the members, apart from the recorded
  path, so the path's first point is not on ink).

Each tail is returned as a small box (:data:`TAIL_HALF` px on each side of the point);
:func:`sciflow.bench.detector.dataset.pad_arrowheads` grows it to the same square as an
arrowhead's at the training scale.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
from collections.abc import Iterator
from typing import Any

from sciflow.bench.detector.augment import Box
from sciflow.bench.synth import graphviz_render, pillow_render

#: half the side of the native-resolution tail box around the tail point (padded later)
TAIL_HALF = 1.5

Point = tuple[float, float]


def tail_box(p: Point, half: float = TAIL_HALF) -> tuple[str, Box]:
    """The ``arrowtail`` element at point ``p``."""
    return ("arrowtail", (p[0] - half, p[1] - half, p[0] + half, p[1] + half))


def _bezier_points(ops: list[dict[str, Any]]) -> list[list[float]]:
    pts: list[list[float]] = []
    for op in ops:
        if op.get("op") in ("b", "B"):
            pts.extend(op["points"])
    return pts


def graphviz_tails(spec: dict[str, Any], meta: dict[str, Any]) -> list[Point]:
    """Tail points (image pixels) of a Graphviz render of ``spec`` whose ``meta`` (the
    :class:`~sciflow.bench.synth.common.SynthDiagram` meta) holds the final ``dpi`` and
    ``splines``. Uses the pixel mapping of :func:`~sciflow.bench.synth.graphviz_render.layout_elements`."""
    final = dict(spec, dpi=meta["dpi"], splines=meta["splines"])
    js = subprocess.run(
        [graphviz_render._dot(), "-Tjson"], input=graphviz_render.to_dot(final).encode("utf-8"),
        capture_output=True, check=True,
    ).stdout
    layout = json.loads(js.decode("utf-8"))
    s = final["dpi"] / 72.0
    top = float(layout["bb"].split(",")[3])
    pad = 0.3 * 72.0
    out: list[Point] = []
    for edge in layout.get("edges", []):
        pts = _bezier_points(edge.get("_draw_", []))
        head, back = bool(edge.get("_hdraw_")), bool(edge.get("_tdraw_"))
        if not pts or head == back:  # no head, or heads at both ends: no tail
            continue
        x, y = (float(v) for v in (pts[0] if head else pts[-1]))
        out.append((round((x + pad) * s, 1), round((top - y + pad) * s, 1)))
    return out


@contextlib.contextmanager
def _recorded_polylines(calls: list[list[Point]]) -> Iterator[None]:
    """While active, every connector the Pillow renderer draws appends its polyline to ``calls``."""
    original = pillow_render._polyline

    def recording(draw: Any, pts: list[Point], *args: Any, **kwargs: Any) -> None:
        calls.append(list(pts))
        original(draw, pts, *args, **kwargs)

    pillow_render._polyline = recording  # type: ignore[assignment]
    try:
        yield
    finally:
        pillow_render._polyline = original  # type: ignore[assignment]


def pillow_render_with_tails(spec: dict[str, Any], item_id: str) -> tuple[Any, list[Point]]:
    """Render ``spec`` with the Pillow renderer; returns the diagram and its tail points (the
    first point of each drawn connector; every Pillow connector has one head, at its target)."""
    calls: list[list[Point]] = []
    with _recorded_polylines(calls):
        d = pillow_render.render(spec, item_id=item_id)
    return d, [(float(p[0][0]), float(p[0][1])) for p in calls if p]


def record_tails(record: dict[str, Any]) -> list[Point]:
    """Tail points of a browser style's element record (arrows with one head)."""
    out: list[Point] = []
    for a in record.get("arrows", []):
        if a.get("head_style", "none") == "none" or a.get("double") or not a.get("polyline"):
            continue
        if a.get("route") == "brace":  # a brace fan's members leave from the brace, drawn apart from the path
            continue
        x, y = a["polyline"][0]
        out.append((float(x), float(y)))
    return out
