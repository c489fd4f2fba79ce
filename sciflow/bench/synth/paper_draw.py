"""SVG drawing of the ``paper`` style: panels, containers, node shapes (fills, gradients,
shadows, dashed and dash-dot outlines, icons, pictures, operators, cards), arrows (shafts,
heads of every style, braces, block arrows), label boxes, texts and legends.

Every element whose box the ground truth needs carries a ``data-*`` tag the page script
measures: ``data-box`` (node shapes, groups, pictures, label boxes), ``data-head``
(arrowheads), ``data-arrow`` (the arrow's whole path, tail to tip, sampled by the script) and
``data-text`` (every text).
"""

from __future__ import annotations

import math
from typing import Any

from sciflow.bench.synth.paper_geom import Path, end_dir, shorten, svg_d
from sciflow.bench.synth.paper_icons import icon_svg, photo_png
from sciflow.bench.synth.paper_scene import Scene, SEdge, SNode
from sciflow.bench.synth.paper_text import placed_svg
from sciflow.bench.synth.paper_theme import contrast_fill, mix

DASH = {"solid": None, "dashed": (5, 3), "dotted": (1.2, 2.6), "dashdot": (7, 3, 1.5, 3)}


def _dash(kind: str, w: float) -> str:
    pat = DASH.get(kind)
    if not pat:
        return ""
    k = max(1.0, w * 0.8)
    cap = ' stroke-linecap="round"' if kind == "dotted" else ""
    return f' stroke-dasharray="{" ".join(f"{v * k:.2f}" for v in pat)}"{cap}'


def head_len(e: SEdge) -> float:
    return 6.0 + 2.2 * e.width


def _head(e: SEdge, tip: tuple[float, float], u: tuple[float, float], bg: str, tag: str) -> tuple[str, float]:
    """One arrowhead at ``tip`` pointing along ``u``; returns (svg, how far the shaft stops short)."""
    L = head_len(e)
    W = L * 0.42
    n = (-u[1], u[0])
    bx, by = tip[0] - L * u[0], tip[1] - L * u[1]
    left = (bx + W * n[0], by + W * n[1])
    right = (bx - W * n[0], by - W * n[1])
    pad = e.width / 2
    pts = f"{tip[0]:.2f},{tip[1]:.2f} {left[0]:.2f},{left[1]:.2f} {right[0]:.2f},{right[1]:.2f}"
    style = e.head if e.head in ("filled", "open", "chevron", "barbed") else "filled"
    attrs = f'data-head="{tag}" data-pad="{pad:.2f}"'
    if style == "filled":
        return f'<polygon {attrs} points="{pts}" fill="{e.color}" stroke="{e.color}" stroke-width="0.6" ' \
               f'stroke-linejoin="miter"/>', L * 0.85
    if style == "open":
        return f'<polygon {attrs} points="{pts}" fill="{bg}" stroke="{e.color}" stroke-width="{e.width:.2f}" ' \
               f'stroke-linejoin="miter"/>', L
    if style == "chevron":
        return f'<polyline {attrs} points="{left[0]:.2f},{left[1]:.2f} {tip[0]:.2f},{tip[1]:.2f} {right[0]:.2f},' \
               f'{right[1]:.2f}" fill="none" stroke="{e.color}" stroke-width="{max(1.2, e.width):.2f}" ' \
               f'stroke-linejoin="miter" stroke-linecap="round"/>', e.width * 0.6
    notch = (tip[0] - 0.62 * L * u[0], tip[1] - 0.62 * L * u[1])
    return f'<polygon {attrs} points="{pts.split()[0]} {left[0]:.2f},{left[1]:.2f} {notch[0]:.2f},{notch[1]:.2f} ' \
           f'{right[0]:.2f},{right[1]:.2f}" fill="{e.color}"/>', L * 0.6


def arrow_svg(sc: Scene, e: SEdge, bg: str, done_heads: set[str]) -> str:
    """Shaft, heads, and the hidden whole path (``data-arrow``) of one arrow."""
    out = [f'<path data-arrow="{e.id}" d="{svg_d(e.path)}" fill="none" stroke="none"/>']
    if e.kind == "block":
        return "".join(out) + _block(sc, e, bg)
    vis: Path = e.meta.get("draw_path", e.path)
    key = e.meta.get("draw_key")
    if key:
        if key in done_heads:
            return "".join(out)  # a brace fan's shared shaft, brace and head are drawn once
        done_heads.add(key)
    head_svg, cut_end, cut_start = "", 0.0, 0.0
    if not e.headless:
        tip, u = end_dir(vis, True)
        h, cut_end = _head(e, tip, u, bg, f"{e.id}:h")
        head_svg += h
    if e.double:
        tip, u = end_dir(vis, False)
        h, cut_start = _head(e, tip, u, bg, f"{e.id}:t")
        head_svg += h
    d = svg_d(shorten(vis, cut_end, cut_start))
    out.append(f'<path d="{d}" fill="none" stroke="{e.color}" stroke-width="{e.width:.2f}" '
               f'stroke-linejoin="round"{_dash(e.line, e.width)}/>')
    br = e.meta.get("brace_path")
    if br:
        out.append(f'<path data-box="brace:{key}" d="{svg_d(br)}" fill="none" stroke="{e.color}" '
                   f'stroke-width="{max(1.0, e.width):.2f}"/>')
    out.append(head_svg)
    return "".join(out)


def _block(sc: Scene, e: SEdge, bg: str) -> str:
    (x0, y0), (x1, y1) = e.path[0][1:3], e.path[-1][1:3]
    L = math.hypot(x1 - x0, y1 - y0) or 1.0
    u = ((x1 - x0) / L, (y1 - y0) / L)
    n = (-u[1], u[0])
    sw = 3.0 + e.width * 1.6
    hw = sw * 2.0
    hl = min(hw * 1.3, L * 0.6)
    bx, by = x1 - hl * u[0], y1 - hl * u[1]

    def p(x: float, y: float, k: float) -> str:
        return f"{x + k * n[0]:.2f},{y + k * n[1]:.2f}"

    poly = " ".join([p(x0, y0, sw), p(bx, by, sw), p(bx, by, hw), p(x1, y1, 0), p(bx, by, -hw), p(bx, by, -sw),
                     p(x0, y0, -sw)])
    hollow = e.meta.get("hollow", True)
    fill = bg if hollow else mix(e.color, bg, 0.45)
    head = " ".join([p(bx, by, hw), p(x1, y1, 0), p(bx, by, -hw)])
    return (f'<polygon points="{poly}" fill="{fill}" stroke="{e.color}" stroke-width="{max(1.0, e.width * 0.8):.2f}" '
            f'stroke-linejoin="miter"/><polygon data-head="{e.id}:h" data-pad="{e.width * 0.4:.2f}" points="{head}" '
            f'fill="none" stroke="none"/>')


def _fill_attr(sc: Scene, nd: SNode, defs: list[str]) -> str:
    st = nd.style
    if st.get("gradient") and nd.kind in ("box", "card"):
        gid = f"gr{nd.id}"
        a, b = st["fill"], mix(st["fill"], "#ffffff" if not sc.theme.dark else "#000000", 0.55)
        horiz = (hash_key(nd.id) % 2) == 0
        coords = 'x1="0" y1="0" x2="1" y2="0"' if horiz else 'x1="0" y1="0" x2="0" y2="1"'
        defs.append(f'<linearGradient id="{gid}" {coords}><stop offset="0" stop-color="{a}"/>'
                    f'<stop offset="1" stop-color="{b}"/></linearGradient>')
        return f'url(#{gid})'
    return st["fill"]


def hash_key(s: str) -> int:
    return sum(ord(c) * (i + 1) for i, c in enumerate(s))


def _stroke_attr(sc: Scene, nd: SNode) -> str:
    st = nd.style
    if st["outline"] == "none":
        return ' stroke="none"'
    col = sc.theme.stroke if st.get("stroke_col", 0) == 0 else mix(st["fill"], "#000000", 0.5)
    dash = {"dashed": "dashed", "dashdot": "dashdot"}.get(st["outline"], "solid")
    return f' stroke="{col}" stroke-width="{st["stroke_w"]:.2f}"' + _dash(dash, st["stroke_w"])


def node_svg(sc: Scene, nd: SNode, defs: list[str]) -> str:
    st = nd.style
    x0, y0, x1, y1 = nd.box
    w, h = nd.w, nd.h
    tag = f'data-box="node:{nd.id}"'
    if nd.kind == "text" or st.get("hidden"):
        return ""
    if nd.kind in ("picture", "decor"):
        return _picture(sc, nd, tag if nd.kind == "picture" else f'data-box="pic:{nd.id}"')
    if nd.kind == "operator":
        r = w / 2
        col = sc.theme.line
        sw = max(1.0, sc.edges[0].width if sc.edges else 1.0)
        k = r * 0.999
        if st["op"] == "plus":
            lines = (f'<line x1="{nd.x - k:.2f}" y1="{nd.y:.2f}" x2="{nd.x + k:.2f}" y2="{nd.y:.2f}"/>'
                     f'<line x1="{nd.x:.2f}" y1="{nd.y - k:.2f}" x2="{nd.x:.2f}" y2="{nd.y + k:.2f}"/>')
        else:
            q = r * 0.7071
            lines = (f'<line x1="{nd.x - q:.2f}" y1="{nd.y - q:.2f}" x2="{nd.x + q:.2f}" y2="{nd.y + q:.2f}"/>'
                     f'<line x1="{nd.x - q:.2f}" y1="{nd.y + q:.2f}" x2="{nd.x + q:.2f}" y2="{nd.y - q:.2f}"/>')
        return (f'<circle {tag} cx="{nd.x:.2f}" cy="{nd.y:.2f}" r="{r:.2f}" fill="{st["fill"]}" stroke="{col}" '
                f'stroke-width="{sw:.2f}"/><g stroke="{col}" stroke-width="{sw:.2f}">{lines}</g>')
    fill = _fill_attr(sc, nd, defs)
    stroke = _stroke_attr(sc, nd)
    filt = ' filter="url(#shadow)"' if st.get("shadow") else ""
    shape = nd.shape
    if shape in ("rect", "rounded", "pill", "card"):
        rx = {"rect": 0, "rounded": st["radius"], "pill": h / 2, "card": st["radius"]}[shape]
        el = (f'<rect {tag} x="{x0:.2f}" y="{y0:.2f}" width="{w:.2f}" height="{h:.2f}" rx="{rx:.2f}" '
              f'fill="{fill}"{stroke}{filt}/>')
    elif shape == "ellipse":
        el = (f'<ellipse {tag} cx="{nd.x:.2f}" cy="{nd.y:.2f}" rx="{w / 2:.2f}" ry="{h / 2:.2f}" '
              f'fill="{fill}"{stroke}{filt}/>')
    elif shape == "hexagon":
        k = min(h * 0.3, w * 0.25)
        pts = [(x0, nd.y), (x0 + k, y0), (x1 - k, y0), (x1, nd.y), (x1 - k, y1), (x0 + k, y1)]
        el = f'<polygon {tag} points="{_pts(pts)}" fill="{fill}"{stroke}{filt}/>'
    elif shape == "trapezoid":
        if sc.knobs["direction"] == "LR":
            i = h * 0.15
            pts = [(x0, y0), (x1, y0 + i), (x1, y1 - i), (x0, y1)]
        else:
            i = w * 0.15
            pts = [(x0, y0), (x1, y0), (x1 - i, y1), (x0 + i, y1)]
        el = f'<polygon {tag} points="{_pts(pts)}" fill="{fill}"{stroke}{filt}/>'
    else:  # cylinder
        ry = st["ry"]
        d = (f"M{x0:.2f},{y0 + ry:.2f} A{w / 2:.2f},{ry:.2f} 0 0 1 {x1:.2f},{y0 + ry:.2f} V{y1 - ry:.2f} "
             f"A{w / 2:.2f},{ry:.2f} 0 0 1 {x0:.2f},{y1 - ry:.2f} Z")
        rim = stroke if st["outline"] != "none" else f' stroke="{mix(st["fill"], "#000000", 0.3)}"'
        top = f'<path d="M{x0:.2f},{y0 + ry:.2f} A{w / 2:.2f},{ry:.2f} 0 0 0 {x1:.2f},{y0 + ry:.2f}" fill="none"{rim}/>'
        el = f'<path {tag} d="{d}" fill="{fill}"{stroke}{filt}/>' + top
    out = [el]
    if nd.kind == "card":
        rw = st["row_w"]
        for i, (r, rh) in enumerate(zip(nd.rows, st["row_h"], strict=True)):
            out.append(f'<rect data-box="row:{nd.id}r{i}" x="{nd.x - rw / 2:.2f}" y="{r.cy - rh / 2:.2f}" '
                       f'width="{rw:.2f}" height="{rh:.2f}" '
                       f'rx="3" fill="{st["row_fill"]}" stroke="{mix(st["row_fill"], "#000000", 0.25)}" '
                       f'stroke-width="0.8"/>')
    icon = st.get("icon")
    if icon:
        s = sc.size * 1.3
        col = sc.theme.text
        ix, iy, isz = (x0 + 5, nd.y - s / 2, s) if st.get("icon_pos") == "inside" else \
            (x1 - s * 0.7, y0 - s * 0.45, s * 0.9)
        if icon == "photo":  # a thumbnail photo
            k = float(sc.knobs["scale"])
            uri = photo_png("photo", st["icon_seed"], round(isz * k), round(isz * k))
            out.append(f'<image x="{ix:.2f}" y="{iy:.2f}" width="{isz:.2f}" height="{isz:.2f}" '
                       f'preserveAspectRatio="none" href="{uri}"/>')
        else:
            out.append(icon_svg(icon, ix, iy, isz, col))
    return "".join(out)


def _pts(pts: list[tuple[float, float]]) -> str:
    return " ".join(f"{x:.2f},{y:.2f}" for x, y in pts)


def _picture(sc: Scene, nd: SNode, tag: str) -> str:
    st = nd.style
    x0, y0 = nd.box[0], nd.box[1]
    if st["pic"] == "icon":
        return (f'<rect {tag} x="{x0:.2f}" y="{y0:.2f}" width="{nd.w:.2f}" height="{nd.h:.2f}" fill="none" '
                f'stroke="none"/>' + icon_svg(st["icon"], x0, y0, min(nd.w, nd.h), sc.theme.text))
    s = float(sc.knobs["scale"])
    uri = photo_png(st["pic"], st["seed"], round(nd.w * s), round(nd.h * s))
    border = (f'<rect x="{x0:.2f}" y="{y0:.2f}" width="{nd.w:.2f}" height="{nd.h:.2f}" fill="none" '
              f'stroke="{sc.theme.stroke}" stroke-width="1"/>') if st["seed"] % 2 else ""
    return (f'<image {tag} x="{x0:.2f}" y="{y0:.2f}" width="{nd.w:.2f}" height="{nd.h:.2f}" '
            f'preserveAspectRatio="none" href="{uri}"/>' + border)


def group_svg(sc: Scene, g: Any) -> str:
    x0, y0, x1, y1 = g.box
    st = g.style
    if g.kind == "panel":
        stroke = f' stroke="{mix(st["fill"], "#000000", 0.25)}" stroke-width="1"' if st["stroke"] else ""
        return (f'<rect data-box="group:{g.id}" x="{x0:.2f}" y="{y0:.2f}" width="{x1 - x0:.2f}" height="{y1 - y0:.2f}" '
                f'rx="{st["radius"]}" fill="{st["fill"]}"{stroke}/>')
    fill = mix(st["fill"], sc.theme.bg, 0.4) if st["filled"] else "none"
    col = mix(sc.theme.line, sc.theme.bg, 0.25)
    dash = f' stroke-dasharray="{st["dash"]}"' if st["dash"] else ""
    return (f'<rect data-box="group:{g.id}" x="{x0:.2f}" y="{y0:.2f}" width="{x1 - x0:.2f}" height="{y1 - y0:.2f}" '
            f'rx="{st["radius"]}" fill="{fill}" stroke="{col}" stroke-width="1.3"{dash}/>')


def local_bg(sc: Scene, x: float, y: float) -> str:
    """The colour under point (x, y): the innermost filled group there, else the page."""
    col = sc.theme.bg if not sc.theme.transparent else sc.theme.page
    for g in sc.groups:  # panels first, then containers (drawn on top)
        x0, y0, x1, y1 = g.box
        if x0 <= x <= x1 and y0 <= y <= y1:
            if g.kind == "panel":
                col = g.style["fill"]
            elif g.style.get("filled"):
                col = mix(g.style["fill"], sc.theme.bg, 0.4)
    return col


def label_svg(sc: Scene, e: SEdge) -> str:
    t = e.label
    if t is None or not t.drawn:
        return ""
    bg = local_bg(sc, t.cx, t.cy)
    if e.label_mode == "halo":
        t.halo = bg
        return ""
    if e.label_mode != "boxed":
        return ""
    x0, y0, x1, y1 = t.box()
    p = 3.0
    stroke = f' stroke="{e.color}" stroke-width="0.8"' if e.meta.get("label_border") else ""
    return (f'<rect data-box="lbox:{e.id}" x="{x0 - p:.2f}" y="{y0 - p + 1:.2f}" width="{x1 - x0 + 2 * p:.2f}" '
            f'height="{y1 - y0 + 2 * p - 2:.2f}" rx="2" fill="{bg}"{stroke}/>')


def legend_svg(sc: Scene) -> str:
    marks = sc.extras.get("legend_marks")
    if not marks:
        return ""
    out = []
    if sc.extras.get("legend_frame"):
        x0, y0, x1, y1 = sc.extras["legend_box"]
        out.append(f'<rect x="{x0:.2f}" y="{y0:.2f}" width="{x1 - x0:.2f}" height="{y1 - y0:.2f}" fill="none" '
                   f'stroke="{mix(sc.theme.line, sc.theme.bg, 0.4)}" stroke-width="1"/>')
    for i, (kind, (x0, y0, x1, y1)) in enumerate(marks):
        if kind == "swatch":
            f = sc.theme.fills[(i * 3) % len(sc.theme.fills)]
            out.append(f'<rect x="{x0:.2f}" y="{y0:.2f}" width="{x1 - x0:.2f}" height="{y1 - y0:.2f}" fill="{f}" '
                       f'stroke="{sc.theme.stroke}" stroke-width="0.8"/>')
        elif kind == "line":
            ym = (y0 + y1) / 2
            col = sc.theme.colored[i % len(sc.theme.colored)]
            out.append(f'<line x1="{x0:.2f}" y1="{ym:.2f}" x2="{x1:.2f}" y2="{ym:.2f}" stroke="{col}" '
                       f'stroke-width="2"{_dash(["solid", "dashed"][i % 2], 2)}/>')
        else:
            out.append(icon_svg(["snowflake", "flame", "lock", "gear"][i % 4], x0, y0, y1 - y0, sc.theme.text))
    return "".join(out)


def figure_svg(sc: Scene) -> tuple[str, int, int]:
    """The whole figure as one ``<svg>`` and its pixel size (scale applied)."""
    s = float(sc.knobs["scale"])
    cx0, cy0, cx1, cy1 = sc.canvas
    W, H = math.ceil((cx1 - cx0) * s), math.ceil((cy1 - cy0) * s)
    defs = ['<filter id="shadow" x="-20%" y="-20%" width="150%" height="160%"><feDropShadow dx="2" dy="2.5" '
            'stdDeviation="1.6" flood-color="#000000" flood-opacity="0.28"/></filter>']
    body: list[str] = []
    if not sc.theme.transparent:
        body.append(f'<rect x="{cx0:.2f}" y="{cy0:.2f}" width="{cx1 - cx0:.2f}" height="{cy1 - cy0:.2f}" '
                    f'fill="{sc.theme.bg}"/>')
    for g in sc.groups:
        body.append(group_svg(sc, g))
    for nd in sc.nodes.values():
        if nd.kind in ("box", "card") and (nd.style["outline"] == "none" or nd.style.get("shadow")):
            nd.style["fill"] = contrast_fill(nd.style["fill"], local_bg(sc, nd.x, nd.y), sc.theme.dark)
        body.append(node_svg(sc, nd, defs))
    done: set[str] = set()
    for e in sc.edges:
        if e.drawn:
            body.append(arrow_svg(sc, e, local_bg(sc, *e.path[-1][-2:]), done))
    for e in sc.edges:
        if e.drawn:
            body.append(label_svg(sc, e))
    body.append(legend_svg(sc))
    for t in sc.texts:
        if t.drawn:
            body.append(placed_svg(t))
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" viewBox="0 0 {W} {H}">'
           f'<defs>{"".join(defs)}</defs><g transform="scale({s}) translate({-cx0:.2f},{-cy0:.2f})">'
           + "".join(body) + "</g></svg>")
    return svg, W, H
