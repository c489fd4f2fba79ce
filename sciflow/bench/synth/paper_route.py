"""Arrow routing of the ``paper`` style (layout axes: ranks left to right).

Adjacent-rank arrows are straight, elbow (a vertical run in the gap between the ranks, on a
slot of its own, or shared by a fan: a bus) or curved (cubic Bézier); arrows that skip ranks
run straight when nothing is in the way, else over the top or under the bottom of everything in
a channel of their own; feedback arrows use the channels too. Brace fans draw a curly brace
along the members. Every route is checked against every node box and against the arrows
already routed (no arrow may run along another one unless they share their tail or head node);
an arrow that cannot be routed is not drawn and is not in the ground truth.
"""

from __future__ import annotations

import random
from typing import Any

from sciflow.bench.synth.paper_geom import Path, flatten, grow, overlap_colinear, poly_hits_box
from sciflow.bench.synth.paper_layout import Layout
from sciflow.bench.synth.paper_scene import Scene, SEdge, SNode

MID_ONLY = {"ellipse", "pill", "hexagon", "circle", "cylinder"}


def _obstacle(sc: Scene, lay: Layout, nd: SNode) -> tuple[float, float, float, float]:
    lo, hi = lay.occ[nd.id]
    return (nd.x - nd.w / 2, nd.y - lo, nd.x + nd.w / 2, nd.y + hi)


def _side_ok(sc: Scene, lay: Layout, nd: SNode, side: str) -> bool:
    """Can a channel leg leave ``nd`` from its top (N) / bottom (S)?"""
    row = lay.ranks[nd.rank]
    if side == "N" and row.index(nd.id) != 0:
        return False
    if side == "S" and row.index(nd.id) != len(row) - 1:
        return False
    if nd.kind == "picture":
        return nd.style["caption_side"] != ("start" if side == "N" else "end")
    return True


def _clear(sc: Scene, lay: Layout, pts: list[tuple[float, float]], skip: set[str]) -> bool:
    for nd in sc.nodes.values():
        if nd.id in skip:
            continue
        if poly_hits_box(pts, grow(_obstacle(sc, lay, nd), 3.0)):
            return False
    return True


class Router:
    def __init__(self, sc: Scene, lay: Layout, rng: random.Random):
        self.sc, self.lay, self.rng = sc, lay, rng
        self.ends: dict[tuple[str, str], list[tuple[SEdge, str, float]]] = {}
        self.pinned: set[tuple[str, str]] = set()
        self.plan: dict[str, dict[str, Any]] = {}
        self.drawn: list[tuple[SEdge, list[tuple[float, float]]]] = []
        self.channels: dict[str, list[SEdge]] = {"N": [], "S": []}

    # ------------------------------------------------------------------ planning
    def classify(self) -> None:
        sc, lay, rng = self.sc, self.lay, self.rng
        bus = sc.knobs["fan"] == "bus"
        for e in sc.edges:
            a, b = sc.nodes[e.src], sc.nodes[e.dst]
            if e.fan:
                self._plan_brace_end(e, a, b)
                continue
            if not e.back and b.rank - a.rank == 1:
                fan_out = sum(1 for f in sc.edges if f.src == a.id and not f.back
                              and sc.nodes[f.dst].rank == a.rank + 1) >= 2
                fan_in = sum(1 for f in sc.edges if f.dst == b.id and not f.back
                             and sc.nodes[f.src].rank == b.rank - 1) >= 2
                route = e.route
                if bus and (fan_out or fan_in):
                    route = "bus"
                self.plan[e.id] = {"kind": "adj", "route": route, "fan_out": fan_out, "fan_in": fan_in}
                self._end(a, "E", e, "tail", b.y)
                self._end(b, "W", e, "head", a.y)
                if route == "bus":
                    self.pinned.add((a.id, "E") if fan_out else (b.id, "W"))
                continue
            if not e.back and abs(a.y - b.y) < 1.0:
                seg = [(a.x + a.w / 2, a.y), (b.x - b.w / 2, b.y)]
                if _clear(sc, lay, seg, {a.id, b.id}):
                    self.plan[e.id] = {"kind": "direct"}
                    self._end(a, "E", e, "tail", b.y)
                    self._end(b, "W", e, "head", a.y)
                    self.pinned |= {(a.id, "E"), (b.id, "W")}
                    continue
            sides = ["S", "N"] if e.back or rng.random() < 0.4 else ["N", "S"]
            for side in sides:
                if _side_ok(sc, lay, a, side) and _side_ok(sc, lay, b, side):
                    self.plan[e.id] = {"kind": "channel", "side": side}
                    self._end(a, side, e, "tail", b.x)
                    self._end(b, side, e, "head", a.x)
                    self.channels[side].append(e)
                    break
            else:
                self.plan[e.id] = {"kind": "none"}

    def _plan_brace_end(self, e: SEdge, a: SNode, b: SNode) -> None:
        way = e.meta["fan_way"]
        hub, member = (a, b) if way == "out" else (b, a)
        ok = abs(hub.rank - member.rank) == 1 and (member.rank > hub.rank) == (way == "out")
        if ok:  # the brace must stand clear of panel and container borders
            lay = self.lay
            r = member.rank
            edge = lay.col0[r] if way == "out" else lay.col0[r] + lay.colw[r]
            zone = (edge - self.sc.size * 0.7 - 14, edge) if way == "out" else (edge, edge + self.sc.size * 0.7 + 14)
            if any(zone[0] <= x <= zone[1] for g in self.sc.groups for x in (g.box[0], g.box[2])):
                e.fan = None
                self.plan[e.id] = {"kind": "adj", "route": "bus", "fan_out": way == "out", "fan_in": way == "in"}
                self._end(a, "E", e, "tail", b.y)
                self._end(b, "W", e, "head", a.y)
                self.pinned.add((a.id, "E") if way == "out" else (b.id, "W"))
                return
        self.plan[e.id] = {"kind": "brace" if ok else "none"}
        if ok:
            side = "E" if way == "out" else "W"
            self._end(hub, side, e, "tail" if way == "out" else "head", member.y)
            self.pinned.add((hub.id, side))

    def _end(self, nd: SNode, side: str, e: SEdge, role: str, other: float) -> None:
        self.ends.setdefault((nd.id, side), []).append((e, role, other))

    def assign_channels(self, top: float, bottom: float, step: float) -> dict[str, list[float]]:
        """Channel levels (interval colouring by span, shorter spans nearer the nodes)."""
        out: dict[str, list[float]] = {"N": [], "S": []}
        for side, edges in self.channels.items():
            levels: list[list[tuple[float, float]]] = []
            for e in sorted(edges, key=lambda f: abs(self.sc.nodes[f.src].x - self.sc.nodes[f.dst].x)):
                lo, hi = sorted((self.sc.nodes[e.src].x, self.sc.nodes[e.dst].x))
                level = next((i for i, spans in enumerate(levels)
                              if all(hi < s0 - 10 or lo > s1 + 10 for s0, s1 in spans)), len(levels))
                if level == len(levels):
                    levels.append([])
                levels[level].append((lo, hi))
                y = top - level * step if side == "N" else bottom + level * step
                self.plan[e.id]["y"] = y
                out[side].append(y)
        return out

    # ------------------------------------------------------------------ ports
    def ports(self) -> dict[tuple[str, str], float]:
        """Where each arrow end meets its node: ``(edge id, role) -> offset`` along the side."""
        out: dict[tuple[str, str], float] = {}
        for (nid, side), items in self.ends.items():
            nd = self.sc.nodes[nid]
            horiz = side in ("N", "S")
            length = nd.w if horiz else nd.h
            if nd.shape == "trapezoid" and side == "E":
                length *= 0.7
            if horiz:
                items = sorted(items, key=lambda it: (it[2] > nd.x, -it[2]))
            else:
                items = sorted(items, key=lambda it: it[2])
            k = len(items)
            mid_only = nd.shape in MID_ONLY or (nid, side) in self.pinned or k == 1
            if nd.shape == "cylinder" and not horiz:
                mid_only = k == 1 or (nid, side) in self.pinned
            step = 0.0 if mid_only else min(length * 0.7 / (k - 1), max(7.0, length * 0.3))
            for i, (e, role, _) in enumerate(items):
                out[(e.id, role)] = (i - (k - 1) / 2) * step
        return out

    # ------------------------------------------------------------------ routes
    def point(self, nd: SNode, side: str, off: float) -> tuple[float, float]:
        x0, y0, x1, y1 = nd.box
        g = self.sc.meta["gap"]
        if side == "E":
            return (x1 + g, nd.y + off)
        if side == "W":
            return (x0 - g, nd.y + off)
        if side == "N":
            return (nd.x + off, y0 - g)
        return (nd.x + off, y1 + g)

    def slots(self, ports: dict[tuple[str, str], float]) -> dict[str, float]:
        """Elbow slots (x of the vertical run) per adjacent arrow, spread over its gap."""
        sc, lay = self.sc, self.lay
        by_gap: dict[int, list[SEdge]] = {}
        for e in sc.edges:
            p = self.plan.get(e.id, {})
            if p.get("kind") == "adj" and p["route"] in ("elbow", "bus"):
                by_gap.setdefault(sc.nodes[e.src].rank, []).append(e)
        out: dict[str, float] = {}
        for r, edges in by_gap.items():
            lo = lay.col0[r] + lay.colw[r] + 7
            hi = lay.col0[r + 1] - 7
            avoid = [x for g in sc.groups for x in (g.box[0], g.box[2]) if lo - 8 < x < hi + 8]
            keys: list[str] = []
            for e in sorted(edges, key=lambda f: (sc.nodes[f.src].y + ports[(f.id, "tail")])):
                p = self.plan[e.id]
                key = (f"s{e.src}" if p["fan_out"] else f"t{e.dst}") if p["route"] == "bus" else e.id
                p["slot_key"] = key
                if key not in keys:
                    keys.append(key)
            cands = [lo + (hi - lo) * (i + 0.5) / 24 for i in range(24)]
            cands = [c for c in cands if all(abs(c - a) > 7 for a in avoid)]
            n = len(keys)
            if not cands:
                continue  # no room clear of group borders: these arrows take another route
            if n <= len(cands):
                pick = [cands[round(i * (len(cands) - 1) / max(1, n - 1))] if n > 1 else
                        cands[len(cands) // 2] for i in range(n)]
            else:
                pick = [cands[0] + (cands[-1] - cands[0]) * (i + 0.5) / n for i in range(n)]
            if self.rng.random() < 0.5:
                pick = pick[::-1]
            slot = dict(zip(keys, pick, strict=True))
            for e in edges:
                out[e.id] = slot[self.plan[e.id]["slot_key"]]
        return out

    def candidates(self, e: SEdge, ports: dict[tuple[str, str], float],
                   slots: dict[str, float]) -> list[tuple[str, Path]]:
        sc = self.sc
        p = self.plan[e.id]
        a, b = sc.nodes[e.src], sc.nodes[e.dst]
        kind = p["kind"]
        out: list[tuple[str, Path]] = []
        if kind in ("adj", "direct"):
            t = self.point(a, "E", ports[(e.id, "tail")])
            h = self.point(b, "W", ports[(e.id, "head")])
            if abs(t[1] - h[1]) < 2.0 and b.y - b.h / 2 < t[1] < b.y + b.h / 2:
                h = (h[0], t[1])
                style = "block" if e.head == "block" and kind == "adj" and not e.double else "straight"
                return [(style, [("M", *t), ("L", *h)])]
            order = [p.get("route", "straight")]
            order = ["elbow" if o == "bus" else o for o in order]
            order += [o for o in ("elbow", "curved", "straight") if o not in order]
            for style in order:
                if style == "straight":
                    out.append(("straight", [("M", *t), ("L", *h)]))
                elif style == "elbow" and e.id in slots:
                    s = slots[e.id]
                    out.append(("bus" if p.get("route") == "bus" else "elbow",
                                [("M", *t), ("L", s, t[1]), ("L", s, h[1]), ("L", *h)]))
                elif style == "curved":
                    d = (h[0] - t[0]) * self.rng.uniform(0.4, 0.6)
                    out.append(("curved", [("M", *t), ("C", t[0] + d, t[1], h[0] - d, h[1], *h)]))
            return out
        if kind == "channel":
            side, y = p["side"], p["y"]
            t = self.point(a, side, ports[(e.id, "tail")])
            h = self.point(b, side, ports[(e.id, "head")])
            if e.route == "curved":
                yc = (y - 0.25 * t[1]) / 0.75
                out.append(("channel", [("M", *t), ("C", t[0], yc, h[0], yc, *h)]))
            out.append(("channel", [("M", *t), ("L", t[0], y), ("L", h[0], y), ("L", *h)]))
            return out
        if kind == "brace":
            return [("brace", self._brace_path(e, ports))]
        return out

    def _brace_path(self, e: SEdge, ports: dict[tuple[str, str], float]) -> Path:
        sc = self.sc
        way = e.meta["fan_way"]
        hub = sc.nodes[e.src if way == "out" else e.dst]
        member = sc.nodes[e.dst if way == "out" else e.src]
        group = [sc.nodes[f.dst if way == "out" else f.src] for f in sc.edges if f.fan == e.fan]
        ys = [m.y for m in group]
        depth = sc.size * 0.7
        if way == "out":
            xb = min(m.box[0] for m in group) - 5
            tip = (xb - depth, (min(ys) + max(ys)) / 2)
            t = self.point(hub, "E", ports[(e.id, "tail")])
            path: Path = [("M", *t)]
            if abs(t[1] - tip[1]) > 1:
                xm = (t[0] + tip[0]) / 2
                path += [("L", xm, t[1]), ("L", xm, tip[1])]
            mx = member.box[0] - sc.meta["gap"]
            e.meta["draw_path"] = path + [("L", *tip)]
            self._brace_meta(e, xb, group, tip, -1)
            return path + [("L", *tip), ("L", xb, member.y), ("L", mx, member.y)]
        xb = max(m.box[2] for m in group) + 5
        tip = (xb + depth, (min(ys) + max(ys)) / 2)
        h = self.point(hub, "W", ports[(e.id, "head")])
        path = [("M", member.box[2] + sc.meta["gap"], member.y), ("L", xb, member.y), ("L", *tip)]
        vis: Path = [("M", *tip)]
        if abs(h[1] - tip[1]) > 1:
            xm = (h[0] + tip[0]) / 2
            path += [("L", xm, tip[1]), ("L", xm, h[1])]
            vis += [("L", xm, tip[1]), ("L", xm, h[1])]
        e.meta["draw_path"] = vis + [("L", *h)]
        self._brace_meta(e, xb, group, tip, 1)
        return path + [("L", *h)]

    def _brace_meta(self, e: SEdge, xb: float, group: list[SNode], tip: tuple[float, float], dirn: int) -> None:
        """The curly brace along the members (layout axes), drawn once per fan."""
        y0 = min(m.box[1] for m in group) + 1
        y1 = max(m.box[3] for m in group) - 1
        ym = tip[1]
        d = tip[0] - xb
        xm = xb + d / 2
        q = max(1.0, min(abs(d) / 2 + 2, (ym - y0) / 2, (y1 - ym) / 2))

        def quad(p0: tuple[float, float], c: tuple[float, float], p2: tuple[float, float]) -> tuple[float, ...]:
            c1 = (p0[0] + 2 / 3 * (c[0] - p0[0]), p0[1] + 2 / 3 * (c[1] - p0[1]))
            c2 = (p2[0] + 2 / 3 * (c[0] - p2[0]), p2[1] + 2 / 3 * (c[1] - p2[1]))
            return ("C", *c1, *c2, *p2)

        e.meta["brace_path"] = [("M", xb, y0), quad((xb, y0), (xm, y0), (xm, y0 + q)), ("L", xm, ym - q),
                                quad((xm, ym - q), (xm, ym), tip), quad(tip, (xm, ym), (xm, ym + q)),
                                ("L", xm, y1 - q), quad((xm, y1 - q), (xm, y1), (xb, y1))]
        e.meta["draw_key"] = e.fan

    def route_all(self) -> None:
        sc, lay = self.sc, self.lay
        ports = self.ports()
        slots = self.slots(ports)
        prio = {"brace": 0, "adj": 1, "direct": 2, "channel": 3, "none": 9}
        for e in sorted(sc.edges, key=lambda f: (prio[self.plan[f.id]["kind"]], int(f.id[1:]))):
            skip = {e.src, e.dst}
            for kind, path in self.candidates(e, ports, slots):
                pts = flatten(path)
                if not _clear(sc, lay, pts, skip):
                    continue
                if any(overlap_colinear(pts, q) for f, q in self.drawn if f.src != e.src and f.dst != e.dst):
                    continue
                e.kind, e.path, e.drawn = kind, path, True
                if kind == "block":
                    e.meta["hollow"] = self.rng.random() < 0.6
                self.drawn.append((e, pts))
                break
        # a brace fan is drawn whole or not at all
        for fan in {e.fan for e in sc.edges if e.fan}:
            members = [e for e in sc.edges if e.fan == fan]
            if not all(e.drawn for e in members) or len(members) < 2:
                for e in members:
                    e.drawn = False
