"""Placement of the ``paper`` style after routing: channel and title bands, panels' cross
extents, the arrow between two panels, transposition to figure axes, and every text's
position (labels in their shapes, captions beside pictures, group titles, arrow labels,
notes, headers, legend, title, caption and footnote). A text that finds no free place is
not drawn (an arrow label then leaves the truth too)."""

from __future__ import annotations

import math
import random

from sciflow.bench.synth.paper_geom import (
    Box,
    box_poly_dist,
    boxes_meet,
    flatten,
    grow,
    poly_hits_box,
    transpose_path,
)
from sciflow.bench.synth.paper_layout import Layout, transpose
from sciflow.bench.synth.paper_route import Router
from sciflow.bench.synth.paper_scene import Scene, SEdge
from sciflow.bench.synth.paper_text import Text


def bands(sc: Scene, lay: Layout, router: Router, rng: random.Random) -> None:
    """Channels above / below the content, the panel-arrow band, panels' cross extents."""
    pa = sc.meta.get("panel_arrow")
    conts = {g.id: g for g in sc.groups}
    if pa and pa[0].startswith("c"):
        a, b = conts[pa[0]], conts[pa[1]]
        y = max(a.box[3], b.box[3]) + 10
        for g in (a, b):
            g.box = (g.box[0], g.box[1], g.box[2], y + 12)
        sc.meta["pa_y"] = y
    tops = [nd.y - lay.occ[nd.id][0] for nd in sc.nodes.values()] + [g.box[1] for g in sc.groups if g.kind != "panel"]
    bots = [nd.y + lay.occ[nd.id][1] for nd in sc.nodes.values()] + [g.box[3] for g in sc.groups if g.kind != "panel"]
    top, bot = min(tops), max(bots)
    m = rng.uniform(12, 18)
    step = rng.uniform(9, 13)
    ys = router.assign_channels(top - m, bot + m, step)
    top = min([top] + [y - 8 for y in ys["N"]])
    bot = max([bot] + [y + 8 for y in ys["S"]])
    if pa and pa[0].startswith("p"):
        sc.meta["pa_y"] = bot + 16
        bot += 26
    for g in sc.groups:
        if g.kind != "panel":
            continue
        pad = g.style["pad"]
        y0, y1 = top - pad, bot + pad
        if g.title is not None and not (lay.tb and not g.title.rotation):
            tw, th = g.title.wh
            band = (tw if lay.tb else th) + 8
            if g.title_pos.startswith("start"):
                y0 -= band
            else:
                y1 += band
        g.box = (g.box[0], y0, g.box[2], y1)
    # panels share one cross extent
    ps = [g for g in sc.groups if g.kind == "panel"]
    if ps:
        y0, y1 = min(g.box[1] for g in ps), max(g.box[3] for g in ps)
        for g in ps:
            g.box = (g.box[0], y0, g.box[2], y1)


def panel_arrow(sc: Scene) -> None:
    """The arrow that joins two panels (or containers) border to border: both become nodes."""
    pa = sc.meta.get("panel_arrow")
    if not pa or "pa_y" not in sc.meta:
        return
    g = {x.id: x for x in sc.groups}
    a, b = g[pa[0]], g[pa[1]]
    y = sc.meta["pa_y"]
    e = SEdge(f"e{len(sc.edges)}", a.id, b.id, width=sc.edges[0].width if sc.edges else 1.5,
              color=sc.theme.line, head="filled" if sc.knobs["head"] in ("block", "mixed") else sc.knobs["head"])
    e.kind, e.drawn = "panel", True
    e.path = [("M", a.box[2], y), ("L", b.box[0], y)]
    sc.edges.append(e)


def to_figure_axes(sc: Scene, lay: Layout) -> None:
    if not lay.tb:
        return
    transpose(sc)
    for e in sc.edges:
        e.path = transpose_path(e.path)
        for key in ("draw_path", "brace_path"):
            if key in e.meta:
                e.meta[key] = transpose_path(e.meta[key])


class Placer:
    """Texts placed so far, and the free-space test new ones must pass."""

    def __init__(self, sc: Scene, rng: random.Random):
        self.sc, self.rng = sc, rng
        self.polys = {e.id: flatten(e.meta.get("draw_path", e.path)) for e in sc.edges if e.drawn}
        for e in sc.edges:
            if e.drawn and "brace_path" in e.meta:
                self.polys[f"{e.id}:brace"] = flatten(e.meta["brace_path"])
        self.boxes: list[Box] = []
        for nd in sc.nodes.values():
            self.boxes.append(nd.box)
        self.texts: list[Box] = []
        self.gboxes = [g.box for g in sc.groups]

    def free(self, b: Box, own: str | None = None, line_gap: float = 2.0, nodes: bool = True) -> bool:
        if nodes and any(boxes_meet(grow(b, 2), nb) for nb in self.boxes):
            return False
        if any(boxes_meet(grow(b, 2), t) for t in self.texts):
            return False
        return all(eid == own or box_poly_dist(b, pts) >= line_gap for eid, pts in self.polys.items())

    def put(self, t: Text, cx: float, cy: float) -> None:
        t.cx, t.cy, t.drawn = cx, cy, True
        self.texts.append(t.box())


def place_node_texts(sc: Scene, pl: Placer) -> None:
    tb = sc.knobs["direction"] == "TB"
    for nd in sc.nodes.values():
        t = nd.text
        if t is None:
            continue
        x0, y0, x1, y1 = nd.box
        tw, th = t.wh
        cx, cy = nd.x, nd.y
        if nd.kind == "box":
            if nd.style.get("icon") and nd.style.get("icon_pos") == "inside":
                cx += (sc.size * 1.3 + 4) / 2
            if nd.shape == "cylinder":
                cy += nd.style["ry"] / 2
            pl.put(t, cx, cy)
        elif nd.kind == "text":
            pl.put(t, cx, cy)
        elif nd.kind == "picture":
            side = nd.style["caption_side"]
            if tb:
                cx = x0 - 4 - tw / 2 if side == "start" else x1 + 4 + tw / 2
            else:
                cy = y0 - 4 - th / 2 if side == "start" else y1 + 4 + th / 2
            pl.put(t, cx, cy)
        elif nd.kind == "card":
            pad = nd.style["pad"]
            pl.put(t, cx, y0 + pad + th / 2)
            y = y0 + pad * 1.6 + th
            for r, rh in zip(nd.rows, nd.style["row_h"], strict=True):
                pl.put(r, cx, y + rh / 2)
                y += rh + pad * 0.6


def place_group_titles(sc: Scene, pl: Placer) -> None:
    tb = sc.knobs["direction"] == "TB"
    for g in sc.groups:
        t = g.title
        if t is None:
            continue
        x0, y0, x1, y1 = g.box
        tw, th = t.wh
        if g.kind == "panel":
            pos = g.title_pos
            if not tb:
                cy = y0 + 5 + th / 2 if pos.startswith("start") else y1 - 5 - th / 2
                cx = {"start-left": x0 + 8 + tw / 2, "start-center": (x0 + x1) / 2}.get(pos, x1 - 8 - tw / 2)
            elif t.rotation:
                cx = x0 + 5 + tw / 2 if pos.startswith("start") else x1 - 5 - tw / 2
                cy = {"start-left": y0 + 8 + th / 2, "start-center": (y0 + y1) / 2}.get(pos, y1 - 8 - th / 2)
            else:  # top-to-bottom, horizontal title: inside the panel's top, where arrows leave it room
                spots = [(x0 + 8 + tw / 2, y0 + 4 + th / 2), (x1 - 8 - tw / 2, y0 + 4 + th / 2),
                         ((x0 + x1) / 2, y0 + 4 + th / 2)]
                cx, cy = next(((x, y) for x, y in spots if pl.free((x - tw / 2, y - th / 2, x + tw / 2, y + th / 2),
                                                                  line_gap=3.0)), spots[0])
            pl.put(t, cx, cy)
            continue
        spots = [(x0 + 6 + tw / 2, y0 + 3 + th / 2), (x1 - 6 - tw / 2, y0 + 3 + th / 2)]
        for cx, cy in spots:
            b = (cx - tw / 2, cy - th / 2, cx + tw / 2, cy + th / 2)
            if pl.free(b, line_gap=3.0):
                pl.put(t, cx, cy)
                break
        else:
            if g.is_node:  # it names a node: keep it, above the container
                pl.put(t, x0 + 6 + tw / 2, y0 - 3 - th / 2)
            else:
                g.title = None


def _point_at(pts: list[tuple[float, float]], frac: float) -> tuple[tuple[float, float], tuple[float, float], float]:
    lens = [math.hypot(q[0] - p[0], q[1] - p[1]) for p, q in zip(pts, pts[1:], strict=False)]
    total = sum(lens)
    want = total * frac
    acc = 0.0
    for (p, q), L in zip(zip(pts, pts[1:], strict=False), lens, strict=True):
        if acc + L >= want and L > 0:
            u = (want - acc) / L
            return (p[0] + (q[0] - p[0]) * u, p[1] + (q[1] - p[1]) * u), ((q[0] - p[0]) / L, (q[1] - p[1]) / L), total
        acc += L
    return pts[-1], (1.0, 0.0), total


def _straight_run(pts: list[tuple[float, float]], frac: float, half: float) -> bool:
    """Is the path straight for ``half`` px either side of ``frac`` of its length?"""
    (p, d, total) = _point_at(pts, frac)
    f0, f1 = max(0.0, frac - half / max(total, 1)), min(1.0, frac + half / max(total, 1))
    (_, d0, _), (_, d1, _) = _point_at(pts, f0), _point_at(pts, f1)
    return d0[0] * d1[0] + d0[1] * d1[1] > 0.995 and d0[0] * d[0] + d0[1] * d[1] > 0.995


def place_edge_labels(sc: Scene, pl: Placer) -> None:
    rot_ok = sc.knobs["rotated_text"]
    for e in sc.edges:
        t = e.label
        if t is None or not e.drawn:
            continue
        pts = pl.polys[e.id]
        gap = e.width / 2 + 1.5
        done = False
        for frac in (0.5, 0.4, 0.6, 0.3, 0.7, 0.25, 0.75):
            p, d, total = _point_at(pts, frac)
            head = 7 + 2.5 * e.width
            horiz = abs(d[0]) >= abs(d[1])
            straight = abs(d[0]) > 0.999 or abs(d[1]) > 0.999
            if rot_ok and not horiz and straight and pl.rng.random() < 0.5:
                t.rotation = 90
            else:
                t.rotation = 0
            tw, th = t.wh
            along = tw if horiz else th
            if total * min(frac, 1 - frac) < head + along / 2 + 3:
                continue
            cands: list[tuple[str, float, float]] = []
            if (e.label_mode in ("boxed", "halo") or not straight) and _straight_run(pts, frac, along / 2 + 3):
                cands.append((e.label_mode if e.label_mode != "beside" else "halo", p[0], p[1]))
            if e.label_mode == "beside" and straight:
                if horiz:
                    cands += [("beside", p[0], p[1] - gap - th / 2), ("beside", p[0], p[1] + gap + th / 2)]
                else:
                    cands += [("beside", p[0] + gap + tw / 2, p[1]), ("beside", p[0] - gap - tw / 2, p[1])]
            for mode, cx, cy in cands:
                b = (cx - tw / 2, cy - th / 2, cx + tw / 2, cy + th / 2)
                if not pl.free(b, own=e.id, line_gap=3.0):
                    continue
                if mode == "beside" and poly_hits_box(pts, grow(b, 0.5)):
                    continue
                if any(boxes_meet(grow(b, 3), gb) and not _inside(b, gb) for gb in pl.gboxes):
                    continue  # never on a panel / container border
                e.label_mode = mode
                pl.put(t, cx, cy)
                done = True
                break
            if done:
                break
        if not done:
            e.label = None


def _inside(b: Box, g: Box) -> bool:
    return g[0] + 3 <= b[0] and g[1] + 3 <= b[1] and b[2] <= g[2] - 3 and b[3] <= g[3] - 3


def place_notes(sc: Scene, pl: Placer) -> None:
    """Notes under a few boxes (captions, not labels: no arrow comes near them)."""
    notes = sc.extras.get("notes") or []
    boxes = [nd for nd in sc.nodes.values() if nd.kind == "box"]
    pl.rng.shuffle(boxes)
    for t in notes:
        tw, th = t.wh
        for nd in boxes:
            x0, y0, x1, y1 = nd.box
            cx, cy = nd.x, y1 + 4 + th / 2
            b = (cx - tw / 2, cy - th / 2, cx + tw / 2, cy + th / 2)
            if pl.free(grow(b, 2), line_gap=10.0) and not any(boxes_meet(grow(b, 3), gb) and not _inside(b, gb)
                                                               for gb in pl.gboxes):
                pl.put(t, cx, cy)
                boxes.remove(nd)
                break


def content_box(sc: Scene, pl: Placer) -> Box:
    xs0, ys0, xs1, ys1 = [], [], [], []
    for b in pl.boxes + pl.texts + [g.box for g in sc.groups]:
        xs0.append(b[0])
        ys0.append(b[1])
        xs1.append(b[2])
        ys1.append(b[3])
    for pts in pl.polys.values():
        xs0 += [p[0] for p in pts]
        xs1 += [p[0] for p in pts]
        ys0 += [p[1] for p in pts]
        ys1 += [p[1] for p in pts]
    return (min(xs0) - 4, min(ys0) - 4, max(xs1) + 4, max(ys1) + 4)


def place_extras(sc: Scene, pl: Placer, lay: Layout) -> None:
    """Headers above the columns, then title above and legend, footnote, caption below."""
    rng = pl.rng
    x0, y0, x1, y1 = content_box(sc, pl)
    heads = sc.extras.get("headers")
    if heads and not lay.tb:
        row = []
        for r, t in zip(range(len(lay.ranks)), heads, strict=False):
            top = sc.nodes[lay.ranks[r][0]]
            if top.kind in ("text", "picture", "decor"):
                continue  # a header right above free text or a picture would read as its label / caption
            xs = [sc.nodes[v].x for v in lay.ranks[r]]
            row.append((t, sum(xs) / len(xs)))
        if row:
            th = max(t.wh[1] for t, _ in row)
            last = -1e9
            for t, cx in row:
                tw = t.wh[0]
                if cx - tw / 2 > last + 6:
                    pl.put(t, cx, y0 - 12 - th / 2)
                    last = cx + tw / 2
            y0 -= th + 14
    t = sc.extras.get("title")
    if t is not None:
        tw, th = t.wh
        pl.put(t, (x0 + x1) / 2, y0 - 10 - th / 2)
        y0 -= th + 14
    y = y1 + rng.uniform(10, 18)
    leg = sc.extras.get("legend")
    if leg:
        sw = sc.size * 1.1
        items = []
        for t, kind in zip(leg, sc.extras["legend_kind"], strict=True):
            tw, th = t.wh
            items.append((t, kind, tw, th))
        width = sum(sw * (2.2 if kind == "line" else 1) + 6 + tw + 16 for _, kind, tw, _ in items)
        th = max(i[3] for i in items)
        xl = x1 - width if rng.random() < 0.6 else x0 + 4
        sc.extras["legend_marks"] = []
        for t, kind, tw, _ in items:
            w = sw * (2.2 if kind == "line" else 1)
            sc.extras["legend_marks"].append((kind, (xl, y + th / 2 - sw / 2, xl + w, y + th / 2 + sw / 2)))
            pl.put(t, xl + w + 6 + tw / 2, y + th / 2)
            xl += w + 6 + tw + 16
        sc.extras["legend_box"] = (min(b[1][0] for b in sc.extras["legend_marks"]) - 6, y - 5, xl - 10, y + th + 5)
        y += th + 14
    fn = sc.extras.get("footnote")
    if fn is not None:
        tw, th = fn.wh
        pl.put(fn, x0 + 4 + tw / 2, y + th / 2)
        y += th + 10
    cap = sc.extras.get("caption")
    if cap is not None:
        tw, th = cap.wh
        cx = (x0 + x1) / 2 if rng.random() < 0.6 or tw > x1 - x0 else x0 + tw / 2
        pl.put(cap, cx, y + 4 + th / 2)


def place_all(sc: Scene, lay: Layout, rng: random.Random) -> Placer:
    pl = Placer(sc, rng)
    place_node_texts(sc, pl)
    place_group_titles(sc, pl)
    place_edge_labels(sc, pl)
    place_notes(sc, pl)
    place_extras(sc, pl, lay)
    x0, y0, x1, y1 = content_box(sc, pl)
    if "legend_box" in sc.extras:
        lb = sc.extras["legend_box"]
        x0, y0, x1, y1 = min(x0, lb[0] - 2), min(y0, lb[1] - 2), max(x1, lb[2] + 2), max(y1, lb[3] + 2)
    m = rng.uniform(8, 28)
    sc.canvas = (x0 - m, y0 - m, x1 + m, y1 + m)
    return pl

