"""Layout of the ``paper`` style: node sizes from the measured texts, ranks, order within
ranks, coordinates, panels and containers.

Everything is laid out left to right (``x`` the main axis, ``y`` the cross axis); a top-to-bottom
figure is the same layout transposed at the end (:func:`transpose`), node sizes having been
transposed before. Coordinates are figure pixels at scale 1 (the page scales the whole figure).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from sciflow.bench.synth.paper_scene import Scene, SGroup, SNode

Box = tuple[float, float, float, float]


@dataclass
class Layout:
    ranks: list[list[str]]  # node ids per rank, in cross order
    col0: list[float]  # main-axis start of each rank column
    colw: list[float]
    gaps: list[float]  # gap after each rank
    cross_gap: float
    occ: dict[str, tuple[float, float]] = field(default_factory=dict)  # cross extent above / below centre
    tb: bool = False


def node_sizes(sc: Scene, rng: random.Random) -> None:
    """Shape sizes (figure px, as drawn) of every node, from the measured label boxes."""
    s = sc.size
    padx, pady = s * rng.uniform(0.6, 1.2), s * rng.uniform(0.35, 0.8)
    uniform = rng.random() < 0.35
    pic_side = s * rng.uniform(3.6, 6.0)
    for nd in sc.nodes.values():
        if nd.kind in ("box", "text"):
            tw, th = nd.text.wh  # type: ignore[union-attr]
            if nd.kind == "text":
                nd.w, nd.h = tw, th
                continue
            w, h = tw + 2 * padx, th + 2 * pady
            if nd.style.get("icon") and nd.style.get("icon_pos") == "inside":
                w += s * 1.3 + 4
            if nd.shape == "pill":
                w += h * 0.5
            elif nd.shape == "ellipse":
                w, h = tw * 1.42 + padx, th * 1.42 + pady
            elif nd.shape == "hexagon":
                w += h * 0.6
            elif nd.shape == "trapezoid":
                h = th / 0.7 + 2 * pady
                w += 6
            elif nd.shape == "cylinder":
                nd.style["ry"] = min(8.0, w * 0.12)
                h += 2 * nd.style["ry"]
            if nd.text.rotation:  # type: ignore[union-attr]
                nd.w, nd.h = max(w, 1.7 * s), max(h, w * 0.95, 2.2 * s)
            else:
                nd.w, nd.h = max(w, h * 0.95, 2.2 * s), max(h, 1.7 * s)
        elif nd.kind == "operator":
            nd.w = nd.h = round(s * rng.uniform(1.3, 1.9), 1)
        elif nd.kind in ("picture", "decor"):
            side = pic_side * (0.7 if nd.style["pic"] == "icon" else 1.0)
            nd.w, nd.h = (side * 1.3, side) if nd.style["pic"] == "photo" and rng.random() < 0.5 else (side, side)
        else:  # card
            tw, th = nd.text.wh  # type: ignore[union-attr]
            pad = s * 0.6
            rw = max(r.wh[0] for r in nd.rows) + s
            rh = [r.wh[1] + s * 0.4 for r in nd.rows]
            nd.style["pad"], nd.style["row_w"], nd.style["row_h"] = pad, rw, rh
            nd.w = max(tw, rw) + 2 * pad
            nd.h = th + pad * 2 + sum(h + pad * 0.6 for h in rh)
    if uniform:
        boxes = [nd for nd in sc.nodes.values() if nd.kind == "box" and not (nd.text and nd.text.rotation)]
        if boxes:
            wmax = min(max(nd.w for nd in boxes), 14 * s)
            for nd in boxes:
                nd.w = max(nd.w, wmax)


def transpose(sc: Scene) -> None:
    """Swap the axes of every node and group (and their sizes); used before and after laying
    out a top-to-bottom figure."""
    for nd in sc.nodes.values():
        nd.x, nd.y, nd.w, nd.h = nd.y, nd.x, nd.h, nd.w
    for g in sc.groups:
        b = g.box
        g.box = (b[1], b[0], b[3], b[2])


def _caption_occ(sc: Scene, nd: SNode, tb: bool) -> tuple[float, float]:
    """Cross extent (above, below centre) of a node with its caption, in layout axes."""
    lo = hi = nd.h / 2
    if nd.kind == "picture" and nd.text is not None:
        tw, th = nd.text.wh
        extra = (tw if tb else th) + 4
        if nd.style["caption_side"] == "start":
            lo += extra
        else:
            hi += extra
    return lo, hi


def _ranks(sc: Scene) -> dict[str, int]:
    fwd = [(e.src, e.dst) for e in sc.edges if not e.back]
    rank = {nid: 0 for nid in sc.nodes}
    for _ in range(len(rank)):
        changed = False
        for a, b in fwd:
            if rank[b] < rank[a] + 1:
                rank[b] = rank[a] + 1
                changed = True
        if not changed:
            break
    for _ in range(3):  # pull sources (and decor) next to their successors
        for v in rank:
            succ = [rank[b] for a, b in fwd if a == v]
            if succ and not any(b == v for _, b in fwd):
                rank[v] = min(succ) - 1
    lo = min(rank.values())
    return {v: r - lo for v, r in rank.items()}


def _order(sc: Scene, rank: dict[str, int], rng: random.Random) -> list[list[str]]:
    nr = max(rank.values()) + 1
    ranks: list[list[str]] = [[] for _ in range(nr)]
    for nid in sc.nodes:  # creation order is a rough DFS order of the topology
        ranks[rank[nid]].append(nid)
    adj: dict[str, list[str]] = {v: [] for v in sc.nodes}
    for e in sc.edges:
        adj[e.src].append(e.dst)
        adj[e.dst].append(e.src)
    pos = {v: float(i) for r in ranks for i, v in enumerate(r)}
    for it in range(6):
        order = range(1, nr) if it % 2 == 0 else range(nr - 2, -1, -1)
        for r in order:
            ref = r - 1 if it % 2 == 0 else r + 1

            def bary(v: str, ref: int = ref) -> float:
                nb = [pos[u] for u in adj[v] if rank[u] == ref]
                return sum(nb) / len(nb) if nb else pos[v]

            ranks[r].sort(key=lambda v: (bary(v), pos[v]))
            for i, v in enumerate(ranks[r]):
                pos[v] = float(i)
    # brace fan groups: members next to each other
    groups: dict[str, set[str]] = {}
    for e in sc.edges:
        if e.fan:
            groups.setdefault(e.fan, set()).add(e.dst if e.meta["fan_way"] == "out" else e.src)
    for members in groups.values():
        r = rank[next(iter(members))]
        if any(rank[m] != r for m in members):
            continue
        row = ranks[r]
        first = min(row.index(m) for m in members)
        rest = [v for v in row if v not in members]
        ms = [v for v in row if v in members]
        k = sum(1 for v in row[:first] if v not in members)
        ranks[r] = rest[:k] + ms + rest[k:]
    if sc.knobs["crossing"]:
        _force_crossing(sc, ranks, rank, rng)
    return ranks


def _force_crossing(sc: Scene, ranks: list[list[str]], rank: dict[str, int], rng: random.Random) -> None:
    """Swap two nodes of one rank so that two arrows from the previous rank cross."""
    fan_members = {e.dst for e in sc.edges if e.fan} | {e.src for e in sc.edges if e.fan}
    cands = []
    for r in range(1, len(ranks)):
        row, prev = ranks[r], ranks[r - 1]
        for i in range(len(row)):
            for j in range(i + 1, len(row)):
                a, b = row[i], row[j]
                if a in fan_members or b in fan_members:
                    continue
                pa = [prev.index(e.src) for e in sc.edges if e.dst == a and e.src in prev]
                pb = [prev.index(e.src) for e in sc.edges if e.dst == b and e.src in prev]
                if pa and pb and min(pa) < max(pb) and set(pa) != set(pb):
                    cands.append((r, i, j))
    if cands:
        r, i, j = rng.choice(cands)
        ranks[r][i], ranks[r][j] = ranks[r][j], ranks[r][i]
        sc.meta["crossing"] = True


def _pav(targets: list[float], weights: list[float]) -> list[float]:
    """Non-decreasing least-squares fit (pool adjacent violators)."""
    blocks: list[list[float]] = []  # [value, weight, count]
    for t, w in zip(targets, weights, strict=True):
        blocks.append([t, w, 1])
        while len(blocks) > 1 and blocks[-2][0] > blocks[-1][0]:
            v2, w2, c2 = blocks.pop()
            v1, w1, c1 = blocks.pop()
            blocks.append([(v1 * w1 + v2 * w2) / (w1 + w2), w1 + w2, c1 + c2])
    out: list[float] = []
    for v, _, c in blocks:
        out.extend([v] * int(c))
    return out


def layout(sc: Scene, rng: random.Random) -> Layout:
    """Ranks, columns and cross positions (layout axes); groups' main-axis extents."""
    tb = sc.knobs["direction"] == "TB"
    if tb:
        transpose(sc)
    rank = _rank_fix(sc, _ranks(sc))
    ranks = _order(sc, rank, rng)
    for r, row in enumerate(ranks):
        for i, v in enumerate(row):
            sc.nodes[v].rank, sc.nodes[v].order = r, i
    for e in sc.edges:
        if e.fan:
            m = sc.nodes[e.dst if e.meta["fan_way"] == "out" else e.src]
            m.align = "start" if e.meta["fan_way"] == "out" else "end"
    s = sc.size
    cross_gap = s * rng.uniform(1.2, 3.0)
    lay = Layout(ranks, [], [], [], cross_gap, tb=tb)
    lay.occ = {v: _caption_occ(sc, nd, tb) for v, nd in sc.nodes.items()}
    _choose_groups(sc, lay, rng)
    nr = len(ranks)
    lay.colw = [max(sc.nodes[v].w for v in row) for row in ranks]
    base = s * rng.uniform(2.6, 5.0)
    gaps = [base] * nr
    for e in sc.edges:
        a, b = sc.nodes[e.src], sc.nodes[e.dst]
        if e.label is not None and abs(a.rank - b.rank) == 1:
            lw = e.label.wh[1] if tb else e.label.wh[0]
            r = min(a.rank, b.rank)
            gaps[r] = max(gaps[r], lw + 2.2 * s)
    for r in range(nr - 1):
        n_el = sum(1 for e in sc.edges if min(sc.nodes[e.src].rank, sc.nodes[e.dst].rank) == r
                   and abs(sc.nodes[e.src].rank - sc.nodes[e.dst].rank) == 1)
        borders = [g for g in sc.groups if g.ranks[0] == r + 1 or g.ranks[1] == r]
        gaps[r] = max(gaps[r], 14 + 9 * n_el + sum(g.style["pad"] + 14 for g in borders))
        if any(e.fan for e in sc.edges if r in (sc.nodes[e.src].rank, sc.nodes[e.dst].rank - 1)):
            gaps[r] = max(gaps[r], 3.5 * s + 24)
    for g in sc.groups:
        pad = g.style["pad"]
        need = 2 * pad + g.style.get("gap", 0) + 14 + (34 if sc.knobs["panel_arrow"] else 0)
        tneed = _title_main(g, tb)
        for r in (g.ranks[0] - 1, g.ranks[1]):
            if 0 <= r < nr - 1:
                gaps[r] = max(gaps[r], need)
        width = sum(lay.colw[g.ranks[0]: g.ranks[1] + 1]) + sum(gaps[g.ranks[0]: g.ranks[1]]) + 2 * pad
        over = max(0.0, tneed - width)
        for r in (g.ranks[0] - 1, g.ranks[1]):
            if 0 <= r < nr - 1:
                gaps[r] = max(gaps[r], need + over)
    if tb:  # horizontal titles of every group starting at a rank stack above it
        for r in range(1, nr):
            starting = [g for g in sc.groups if g.ranks[0] == r and g.title is not None and not g.title.rotation]
            if starting:
                room = sum(g.title.wh[1] + 6 + g.style["pad"] for g in starting)  # type: ignore[union-attr]
                gaps[r - 1] = max(gaps[r - 1], 2 * max(g.style["pad"] for g in sc.groups) + room + 24)
    lay.gaps = gaps
    x = 0.0
    for r in range(nr):
        lay.col0.append(x)
        x += lay.colw[r] + gaps[r]
    for r, row in enumerate(ranks):
        for v in row:
            nd = sc.nodes[v]
            c0, cw = lay.col0[r], lay.colw[r]
            nd.x = {"start": c0 + nd.w / 2, "end": c0 + cw - nd.w / 2}.get(nd.align, c0 + cw / 2)
    _cross_positions(sc, lay)
    _group_boxes(sc, lay)
    return lay


def _rank_fix(sc: Scene, rank: dict[str, int]) -> dict[str, int]:
    """Decor pictures sit one rank before / after the node they feed / are fed by."""
    for e in sc.edges:
        if e.src.startswith("d"):
            rank[e.src] = rank[e.dst] - 1
        if e.dst.startswith("d"):
            rank[e.dst] = rank[e.src] + 1
    lo = min(rank.values())
    return {v: r - lo for v, r in rank.items()}


def _title_main(g: SGroup, tb: bool) -> float:
    """Main-axis room a group's title needs."""
    if g.title is None:
        return 0.0
    w, h = g.title.wh
    if g.kind == "panel" and tb:
        return (w + 16) if g.title.rotation else 0.0
    return (h if tb else w) + 18


def _cross_positions(sc: Scene, lay: Layout) -> None:
    nodes = sc.nodes
    nbr: dict[str, list[tuple[str, float]]] = {v: [] for v in nodes}
    for e in sc.edges:
        if e.back:
            continue
        wgt = 1.0 if abs(nodes[e.src].rank - nodes[e.dst].rank) == 1 else 0.3
        nbr[e.src].append((e.dst, wgt))
        nbr[e.dst].append((e.src, wgt))

    def place(row: list[str], targets: dict[str, float]) -> None:
        cs, acc = [], 0.0
        for i, v in enumerate(row):
            if i:
                acc += lay.occ[row[i - 1]][1] + lay.occ[v][0] + lay.cross_gap
            cs.append(acc)
        ts = [targets.get(v, cs[i]) - cs[i] for i, v in enumerate(row)]
        ws = [1.0 if v in targets else 0.05 for v in row]
        z = _pav(ts, ws)
        for i, v in enumerate(row):
            nodes[v].y = z[i] + cs[i]

    for row in lay.ranks:
        place(row, {})
        mid = (nodes[row[0]].y + nodes[row[-1]].y) / 2
        for v in row:
            nodes[v].y -= mid
    nr = len(lay.ranks)
    for it in range(5):
        seq = range(nr) if it % 2 == 0 else range(nr - 1, -1, -1)
        for r in seq:
            row = lay.ranks[r]
            t: dict[str, float] = {}
            for v in row:
                side = [(nodes[u].y, w) for u, w in nbr[v] if (nodes[u].rank < r) == (it % 2 == 0)
                        and nodes[u].rank != r]
                if not side:
                    side = [(nodes[u].y, w) for u, w in nbr[v] if nodes[u].rank != r]
                if side:
                    t[v] = sum(y * w for y, w in side) / sum(w for _, w in side)
            place(row, t)
    top = min(nodes[v].y - lay.occ[v][0] for v in nodes)
    for nd in nodes.values():
        nd.y -= top


def _choose_groups(sc: Scene, lay: Layout, rng: random.Random) -> None:
    """Panels (consecutive rank ranges covering every rank) and containers (rank ranges)."""
    nr = len(lay.ranks)
    k = sc.knobs
    panels: list[SGroup] = []
    if "panel_titles" in sc.extras and (k["panels"] or k["panel_arrow"]):
        np_ = 1 if nr == 1 else rng.randint(2, min(5, nr))
        cuts = sorted(rng.sample(range(1, nr), np_ - 1)) if np_ > 1 else []
        bounds = [0, *cuts, nr]
        ps = sc.extras["panel_style"]
        if k["panel_arrow"]:
            ps["gap"] = max(ps["gap"], rng.uniform(30, 44))
        for i in range(np_):
            g = SGroup(f"p{i}", "panel", sc.extras["panel_titles"][i], (bounds[i], bounds[i + 1] - 1))
            g.style = dict(ps, fill=sc.theme.panels[(i * 3 + 1) % len(sc.theme.panels)])
            g.title_pos = ps["title_pos"]
            if lay.tb and ps["rotate_titles"]:
                g.title.rotation = 90  # type: ignore[union-attr]
            g.title.owner = g.id  # type: ignore[union-attr]
            panels.append(g)
    conts: list[SGroup] = []
    if "container_titles" in sc.extras and (k["containers"] or (k["panel_arrow"] and not panels)):
        want = 2 if (k["panel_arrow"] and not panels) else rng.randint(1, 2)
        free = list(range(nr))
        cs = sc.extras["container_style"]
        for i in range(want):
            if not free:
                break
            span = [r for r in range(nr) if r in free and (not panels or _panel_of(panels, r) is
                                                          _panel_of(panels, free[0]))]
            if not span:
                break
            r0 = rng.choice(span) if not (k["panel_arrow"] and not panels) else span[0]
            r1 = r0
            while r1 + 1 in span and r1 - r0 < 2 and rng.random() < 0.5:
                r1 += 1

            def members_ok(a: int, b: int) -> bool:  # never a lone free text in a frame (it would read as a box)
                ms = [sc.nodes[v] for r in range(a, b + 1) for v in lay.ranks[r]]
                return len(ms) >= 2 and any(m.kind != "text" for m in ms)

            while not members_ok(r0, r1) and r1 + 1 in span:
                r1 += 1
            if not members_ok(r0, r1):
                free = [r for r in free if r > r1]
                continue
            if k["panel_arrow"] and not panels and i == 0 and r1 == nr - 1 and r1 > r0:
                r1 -= 1
            g = SGroup(f"c{i}", "container", sc.extras["container_titles"][i] if cs["titled"] else None, (r0, r1))
            g.style = dict(cs, fill=sc.theme.panels[(i * 5 + 2) % len(sc.theme.panels)])
            if g.title is not None:
                g.title.owner = g.id
            if panels:
                g.parent = _panel_of(panels, r0).id
            conts.append(g)
            free = [r for r in free if r > r1 + (0 if (k["panel_arrow"] and not panels) else 1)]
    sc.groups = panels + conts
    if k["panel_arrow"]:
        # containers that an arrow must join need titles (their label)
        kind = "panel" if panels else "container"
        ring = [g for g in sc.groups if g.kind == kind]
        for a, b in zip(ring, ring[1:], strict=False):
            if a.ranks[1] + 1 == b.ranks[0]:
                a.is_node = b.is_node = True
                for g in (a, b):
                    if g.title is None:
                        g.title = sc.extras["container_titles"][int(g.id[1:])]
                        g.title.owner = g.id
                sc.meta["panel_arrow"] = (a.id, b.id)
                break


def _panel_of(panels: list[SGroup], r: int) -> SGroup:
    return next(p for p in panels if p.ranks[0] <= r <= p.ranks[1])


def _group_boxes(sc: Scene, lay: Layout) -> None:
    """Main-axis extents of groups, and cross extents of containers (panels get theirs when
    the bands are known)."""
    nr = len(lay.ranks)
    for g in sorted(sc.groups, key=lambda x: x.kind == "panel"):
        r0, r1 = g.ranks
        pad = g.style["pad"]
        gap = g.style.get("gap", 0)
        if g.kind == "panel":
            x0 = lay.col0[r0] - pad if r0 == 0 else lay.col0[r0] - lay.gaps[r0 - 1] / 2 + gap / 2
            if lay.tb and g.title is not None and not g.title.rotation:
                inner = [c.box[0] for c in sc.groups if c.kind == "container" and c.ranks[0] == r0]
                x0 = min([x0 - (g.title.wh[1] + 6 if r0 == 0 else 0)] + [c - g.title.wh[1] - 10 for c in inner])
            x1 = lay.col0[r1] + lay.colw[r1] + (pad if r1 == nr - 1 else lay.gaps[r1] / 2 - gap / 2)
            g.box = (x0, 0.0, x1, 0.0)
            continue
        members = [sc.nodes[v] for r in range(r0, r1 + 1) for v in lay.ranks[r]]
        x0 = lay.col0[r0] - pad
        x1 = lay.col0[r1] + lay.colw[r1] + pad
        y0 = min(m.y - lay.occ[m.id][0] for m in members) - pad
        y1 = max(m.y + lay.occ[m.id][1] for m in members) + pad
        if g.title is not None:
            tw, th = g.title.wh
            if lay.tb:  # title above the members: main-axis room; its width along the cross axis
                x0 -= th + 6
                y1 = max(y1, y0 + tw + 14)
            else:
                y0 -= th + 4
                if x1 - x0 < tw + 14:
                    grow = (tw + 14 - (x1 - x0)) / 2
                    x0, x1 = x0 - grow, x1 + grow
        g.box = (x0, y0, x1, y1)
