"""The abstract figure of the ``paper`` style: which nodes, arrows, groups and texts it has and
how each is styled, before anything is measured or placed.

Node kinds: ``box`` (a shape holding its label), ``text`` (free-standing text an arrow
touches), ``operator`` (a circled plus or times), ``picture`` (a procedural photo or icon named
by the caption beside it), ``card`` (a titled box of content rows that arrows attach to: a
container that is a node), ``decor`` (an unlabelled picture: not a node, arrows touching it are
not edges).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

from sciflow.bench.synth.common import random_topology
from sciflow.bench.synth.paper_text import (
    CAPTIONS,
    CARD_ROWS,
    CONTAINER_TITLES,
    FOOTNOTES,
    HEADERS,
    LEGEND,
    NOTES,
    PANEL_TITLES,
    Text,
    caption_text,
    edge_label,
    model_name,
    node_labels,
    plain,
    title_text,
    truth_of,
)
from sciflow.bench.synth.paper_theme import Theme, make_theme, mix

Box = tuple[float, float, float, float]
MIXED_SHAPES = ["rect", "rounded", "rounded", "pill", "ellipse", "hexagon", "trapezoid", "cylinder"]
HEADS = ["filled", "open", "chevron", "barbed"]


@dataclass
class SNode:
    id: str
    kind: str
    shape: str
    text: Text | None = None
    label: str = ""
    w: float = 0.0
    h: float = 0.0
    rank: int = 0
    order: int = 0
    x: float = 0.0
    y: float = 0.0
    align: str = "center"  # within its rank column: start / center / end (main axis)
    style: dict[str, Any] = field(default_factory=dict)
    rows: list[Text] = field(default_factory=list)
    group: str | None = None

    @property
    def box(self) -> Box:
        return (self.x - self.w / 2, self.y - self.h / 2, self.x + self.w / 2, self.y + self.h / 2)

    @property
    def is_node(self) -> bool:
        return self.kind != "decor"


@dataclass
class SEdge:
    id: str
    src: str
    dst: str
    back: bool = False
    label: Text | None = None
    label_mode: str = "beside"
    double: bool = False
    head: str = "filled"
    line: str = "solid"
    width: float = 1.5
    color: str = "#000000"
    headless: bool = False
    route: str = "straight"
    fan: str | None = None  # brace group id
    kind: str = ""  # as routed: straight elbow curved channel brace bus block panel
    path: list[tuple[Any, ...]] = field(default_factory=list)  # logical path, tail -> tip, figure px
    drawn: bool = False
    meta: dict[str, Any] = field(default_factory=dict)

    @property
    def truth(self) -> bool:
        return not (self.src.startswith("d") or self.dst.startswith("d"))


@dataclass
class SGroup:
    id: str
    kind: str  # panel | container
    title: Text | None
    ranks: tuple[int, int] = (0, 0)
    box: Box = (0.0, 0.0, 0.0, 0.0)
    style: dict[str, Any] = field(default_factory=dict)
    is_node: bool = False
    parent: str | None = None
    title_pos: str = "start-left"


@dataclass
class Scene:
    knobs: dict[str, Any]
    theme: Theme
    font: str
    math_font: str
    size: float
    nodes: dict[str, SNode] = field(default_factory=dict)
    edges: list[SEdge] = field(default_factory=list)
    groups: list[SGroup] = field(default_factory=list)
    texts: list[Text] = field(default_factory=list)
    extras: dict[str, Any] = field(default_factory=dict)
    canvas: Box = (0.0, 0.0, 0.0, 0.0)
    meta: dict[str, Any] = field(default_factory=dict)

    def text(self, lines: Any, role: str, **kw: Any) -> Text:
        if isinstance(lines, str):
            lines = plain(lines)
        kw.setdefault("family", self.font)
        kw.setdefault("size", self.size)
        kw.setdefault("fill", self.theme.text)
        t = Text(f"t{len(self.texts)}", lines, truth_of(lines), role, **kw)
        self.texts.append(t)
        return t


def _preds(edges: list[tuple[int, int]], v: int) -> list[int]:
    return [a for a, b in edges if b == v]


def _succs(edges: list[tuple[int, int]], v: int) -> list[int]:
    return [b for a, b in edges if a == v]


def build(rng: random.Random, k: dict[str, Any]) -> Scene:
    """The abstract figure for knobs ``k`` (all randomness from ``rng``)."""
    theme = make_theme(rng, k["theme"] == "dark", k["transparent"], k["composite"])
    size = float(rng.choice([11, 12, 13, 14, 15, 16]))
    math_font = rng.choice(["DejaVu Serif", "Liberation Serif", k["font"]])
    sc = Scene(dict(k), theme, k["font"], math_font, size)
    n = {"small": rng.randint(3, 6), "medium": rng.randint(7, 11), "large": rng.randint(12, 17)}[k["size"]]
    topo, edges = random_topology(rng, n)
    sc.meta["topology"] = topo
    back = {(a, b) for a, b in edges if topo == "feedback" and b < a}
    kinds = ["box"] * n
    ops: dict[int, str] = {}
    fan_groups: list[tuple[int, list[int], str]] = []

    def new(kind: str) -> int:
        kinds.append(kind)
        return len(kinds) - 1

    fwd = [e for e in edges if e not in back]
    if k["operators"]:
        for _ in range(rng.randint(1, 3 if n > 6 else 1)):
            merges = [v for v in range(len(kinds)) if kinds[v] == "box" and len(_preds(fwd, v)) >= 2]
            o = new("operator")
            ops[o] = "plus" if rng.random() < 0.7 else "times"
            if merges and rng.random() < 0.6:
                v = rng.choice(merges)
                ins = _preds(fwd, v)
                fwd = [e for e in fwd if e[1] != v] + [(a, o) for a in ins] + [(o, v)]
            else:
                cand = [e for e in fwd if kinds[e[0]] == "box" and kinds[e[1]] == "box"]
                if not cand:
                    kinds.pop()
                    ops.pop(o)
                    continue
                a, b = rng.choice(cand)
                pa = [p for p in _preds(fwd, a) if kinds[p] == "box"]
                extra = rng.choice(pa) if pa and rng.random() < 0.5 else new("box")
                fwd = [e for e in fwd if e != (a, b)] + [(a, o), (extra, o), (o, b)]
    if k["fan"] != "none":
        has_fan = any(len(_succs(fwd, v)) >= 2 or len(_preds(fwd, v)) >= 2 for v in range(len(kinds)))
        if k["fan"] == "brace" or not has_fan:
            hub = rng.choice([v for v in range(len(kinds)) if kinds[v] == "box"])
            members = [new("box") for _ in range(rng.randint(2, 3))]
            way = rng.choice(["out", "in"])
            fwd += [(hub, m) for m in members] if way == "out" else [(m, hub) for m in members]
            if k["fan"] == "brace":
                fan_groups.append((hub, members, way))
    edges_all = fwd + sorted(back)
    nn = len(kinds)
    sources = [v for v in range(nn) if kinds[v] == "box" and not _preds(fwd, v)]
    sinks = [v for v in range(nn) if kinds[v] == "box" and not _succs(fwd, v)]
    ends = sources + [v for v in sinks if v not in sources]
    rng.shuffle(ends)
    if k["free_text"] and ends:
        picked = [v for v in ends if rng.random() < 0.5] or ends[:1]
        for v in picked:
            kinds[v] = "text"
    if k["pictures"] in ("captioned", "both"):
        left = [v for v in ends if kinds[v] == "box"] or [v for v in ends if kinds[v] == "text"]
        for v in left[: rng.randint(1, 2)]:
            kinds[v] = "picture"
    decor: list[tuple[int, int]] = []
    if k["pictures"] in ("unlabelled", "both"):
        cands = [v for v in range(nn) if kinds[v] in ("box", "text")]
        for v in rng.sample(cands, min(len(cands), rng.randint(1, 2))):
            d = new("decor")
            decor.append((d, v) if not _preds(fwd, v) or rng.random() < 0.5 else (v, d))
    if k["cards"]:
        inner = [v for v in range(nn) if kinds[v] == "box" and (_preds(fwd, v) or _succs(fwd, v))]
        for v in rng.sample(inner, min(len(inner), rng.randint(1, 2))):
            kinds[v] = "card"
    _make_nodes(sc, rng, kinds, ops)
    _make_edges(sc, rng, edges_all, back, decor, fan_groups)
    _make_groups_and_extras(sc, rng)
    return sc


def _make_nodes(sc: Scene, rng: random.Random, kinds: list[str], ops: dict[int, str]) -> None:
    k, th = sc.knobs, sc.theme
    labelled = [v for v, kd in enumerate(kinds) if kd in ("box", "text", "card")]
    labels = node_labels(rng, len(labelled), k["labels"], k["multiline"])
    lab_of = dict(zip(labelled, labels, strict=True))
    bold = rng.random() < 0.25
    shape0 = k["shape"]
    captions = rng.sample(CAPTIONS, len(CAPTIONS))
    fill_i = rng.randrange(len(th.fills))
    color_text = rng.random() < 0.15
    rot_frac = rng.uniform(0.3, 1.0) if k["rotated_text"] else 0.0
    for v, kind in enumerate(kinds):
        nid = f"d{v}" if kind == "decor" else f"n{v}"
        node = SNode(nid, kind, "rect")
        st = node.style
        fill = th.fills[(fill_i + rng.randrange(3)) % len(th.fills)] if rng.random() < 0.7 else rng.choice(th.fills)
        outline = k["outline"] if k["outline"] != "mixed" else \
            rng.choice(["solid", "solid", "none", "dashed", "dashdot"])
        st.update(fill=fill, outline=outline, gradient=k["fill"] == "gradient",
                  shadow=k["shadow"] and rng.random() < 0.8,
                  stroke_w=rng.choice([1.0, 1.0, 1.5, 2.0]), radius=rng.choice([4, 6, 8, 10]),
                  stroke_col=int(rng.random() < 0.4))
        if k["fill"] == "white" and outline != "none":
            st["fill"] = th.bg if rng.random() < 0.5 else ("#ffffff" if not th.dark else th.bg)
        if kind in ("box", "text", "card"):
            lines = lab_of[v]
            is_math = any(r[2] for line in lines for r in line)
            fam = sc.math_font if is_math else sc.font
            fill_t = th.text
            if color_text and kind == "box" and not th.dark:
                fill_t = mix(fill, "#000000", 0.65)
            node.text = sc.text(lines, "node", family=fam, weight="bold" if bold and kind != "text" else "normal",
                                fill=fill_t, owner=nid)
            node.label = node.text.truth
            if kind == "box":
                if shape0 == "mixed":
                    node.shape = rng.choice(MIXED_SHAPES)
                    if is_math and rng.random() < 0.4:
                        node.shape = rng.choice(["ellipse", "rounded"])
                else:
                    node.shape = shape0
                single = len(lines) == 1
                if single and node.shape in ("rect", "rounded") and rng.random() < rot_frac:
                    node.text.rotation = 90
                if k["icons"] and rng.random() < 0.35 and not node.text.rotation:
                    st["icon"] = rng.choice(["gear", "snowflake", "flame", "lock", "doc", "bolt", "person", "photo"])
                    st["icon_seed"] = rng.randrange(1 << 30)
                    st["icon_pos"] = rng.choice(["inside", "inside", "corner"])
            elif kind == "text":
                node.shape = "text"
            else:
                node.shape = "card"
                node.text.role = "container_title"
                node.text.weight = "bold"
                node.rows = [sc.text(r, "content", size=round(sc.size * 0.82, 1), owner=nid)
                             for r in rng.sample(CARD_ROWS, rng.randint(2, 4))]
                st["row_fill"] = mix(fill, th.bg, 0.5)
                st["fill"] = mix(fill, th.bg, 0.55 if not th.dark else 0.3)
        elif kind == "operator":
            node.shape = "circle"
            node.label = "⊕" if ops[v] == "plus" else "⊗"
            st["op"] = ops[v]
            st["fill"] = th.bg if rng.random() < 0.6 else fill
        else:  # picture / decor
            node.shape = "picture"
            st["pic"] = rng.choice(["photo", "photo", "grid", "icon", "plot"])
            if st["pic"] == "icon":
                st["icon"] = rng.choice(["person", "robot", "doc", "db", "molecule", "globe", "car"])
            st["seed"] = rng.randrange(1 << 30)
            if kind == "picture":
                node.text = sc.text(captions.pop(), "icon_caption", owner=nid)
                node.label = node.text.truth
                st["caption_side"] = rng.choice(["start", "end"])
        sc.nodes[nid] = node
    # picture captions must not repeat a node label
    seen = {nd.label.lower() for nd in sc.nodes.values() if nd.kind != "picture"}
    for nd in sc.nodes.values():
        if nd.kind == "picture" and nd.label.lower() in seen:
            nd.text.lines = plain(nd.label + " (a)")  # type: ignore[union-attr]
            nd.text.truth = nd.label = nd.label + " (a)"  # type: ignore[union-attr]


def _make_edges(sc: Scene, rng: random.Random, edges: list[tuple[int, int]], back: set[tuple[int, int]],
                decor: list[tuple[int, int]], fan_groups: list[tuple[int, list[int], str]]) -> None:
    k, th = sc.knobs, sc.theme
    ids = {int(nid[1:]): nid for nid in sc.nodes}
    width = float(k["line_width"])
    lab_p = rng.uniform(0.2, 0.5)
    dash_p = rng.uniform(0.2, 0.5)
    head0 = k["head"]
    mono = th.line
    for i, (a, b) in enumerate(list(edges) + decor):
        e = SEdge(f"e{i}", ids[a], ids[b], back=(a, b) in back, width=width)
        e.color = mono if k["arrow_color"] == "mono" or rng.random() < 0.3 else rng.choice(th.colored)
        e.head = head0 if head0 != "mixed" else rng.choice(HEADS + ["block"])
        e.route = k["route"] if k["route"] != "mixed" else rng.choice(["straight", "elbow", "curved"])
        if k["dashed_arrows"] and rng.random() < dash_p:
            e.line = rng.choice(["dashed", "dashed", "dotted", "dashdot"])
        dst = sc.nodes[e.dst]
        if k["headless"] and dst.kind == "operator" and rng.random() < 0.7:
            e.headless = True
        if k["edge_labels"] != "none" and e.truth and rng.random() < lab_p:
            e.label_mode = k["edge_labels"] if k["edge_labels"] != "mixed" else rng.choice(["beside", "boxed", "halo"])
            e.label = _edge_text(sc, rng, e)
            e.meta["label_border"] = rng.random() < 0.35
        if (k["double"] and not e.back and e.truth and rng.random() < 0.3
                and "operator" not in (sc.nodes[e.src].kind, dst.kind)):
            e.double = True
        sc.edges.append(e)
    for gi, (hub, members, way) in enumerate(fan_groups):
        mids = {ids[m] for m in members}
        for e in sc.edges:
            if (way == "out" and e.src == ids[hub] and e.dst in mids) or (way == "in" and e.dst == ids[hub]
                                                                           and e.src in mids):
                e.fan, e.double, e.route, e.label = f"b{gi}", False, "straight", None
                e.meta["fan_way"] = way
    true_edges = [e for e in sc.edges if e.truth]
    if k["edge_labels"] != "none" and true_edges and not any(e.label for e in true_edges):
        e = rng.choice(true_edges)
        e.label_mode = k["edge_labels"] if k["edge_labels"] != "mixed" else "boxed"
        e.label = _edge_text(sc, rng, e)
    if k["dashed_arrows"] and true_edges and all(e.line == "solid" for e in true_edges):
        rng.choice(true_edges).line = "dashed"
    if k["headless"]:
        into = [e for e in sc.edges if sc.nodes[e.dst].kind == "operator"]
        if into and not any(e.headless for e in into):
            rng.choice(into).headless = True
    if k["double"] and not any(e.double for e in sc.edges):
        ok = [e for e in true_edges if not e.back and not e.fan
              and "operator" not in (sc.nodes[e.src].kind, sc.nodes[e.dst].kind)]
        if ok:
            rng.choice(ok).double = True
    for e in sc.edges:
        if e.double:
            e.headless = False


def _edge_text(sc: Scene, rng: random.Random, e: SEdge) -> Text:
    lines = edge_label(rng)
    is_math = any(r[2] for line in lines for r in line)
    t = sc.text(lines, "edge_label", family=sc.math_font if is_math else sc.font,
                size=round(sc.size * rng.choice([0.8, 0.85, 0.9, 1.0]), 1), italic=rng.random() < 0.25 and not is_math,
                fill=e.color if rng.random() < 0.3 else sc.theme.text, owner=e.id)
    return t


def _make_groups_and_extras(sc: Scene, rng: random.Random) -> None:
    k = sc.knobs
    bold = rng.random() < 0.65
    titles = rng.sample(PANEL_TITLES, len(PANEL_TITLES))
    if k["panels"] or k["panel_arrow"]:
        prefix = rng.random() < 0.25
        for i in range(6):
            lab = titles[i]
            if prefix:
                lab = f"({'abcdef'[i]}) {lab}"
            t = sc.text(lab, "container_title", weight="bold" if bold else "normal", size=round(sc.size * 1.05, 1))
            sc.extras.setdefault("panel_titles", []).append(t)
        sc.extras["panel_style"] = dict(radius=rng.choice([0, 0, 6, 12]), stroke=rng.random() < 0.35,
                                        gap=rng.choice([0, 4, 8, 12]), pad=rng.uniform(14, 24),
                                        title_pos=rng.choice(["start-left", "start-center", "end-right"]),
                                        rotate_titles=k["rotated_text"] and rng.random() < 0.7)
    if k["containers"] or k["panel_arrow"]:
        ctitles = rng.sample(CONTAINER_TITLES, 3)
        sc.extras["container_titles"] = [sc.text(c, "container_title", size=round(sc.size * 0.95, 1),
                                                 italic=rng.random() < 0.3) for c in ctitles]
        sc.extras["container_style"] = dict(dash=rng.choice(["6 4", "4 3", "8 3 2 3", None]),
                                            filled=rng.random() < 0.4, radius=rng.choice([0, 8, 12]),
                                            pad=rng.uniform(7, 11), titled=rng.random() < 0.85)
    name = model_name(rng)
    if k["title"]:
        sc.extras["title"] = sc.text(title_text(rng, name), "title", weight="bold", size=round(sc.size * 1.35, 1))
    if k["caption"]:
        sc.extras["caption"] = sc.text(caption_text(rng, name), "caption", size=round(sc.size * 0.95, 1))
    if k["legend"]:
        entries = rng.sample(LEGEND, rng.randint(2, 4))
        sc.extras["legend"] = [sc.text(e, "legend", size=round(sc.size * 0.85, 1)) for e in entries]
        sc.extras["legend_kind"] = [rng.choice(["swatch", "line", "icon"]) for _ in entries]
        sc.extras["legend_frame"] = rng.random() < 0.5
    if k["footnote"]:
        sc.extras["footnote"] = sc.text(rng.choice(FOOTNOTES), "footnote", size=round(sc.size * 0.8, 1), italic=True)
    if k["notes"]:
        sc.extras["notes"] = [sc.text(s, "caption", size=round(sc.size * 0.8, 1), italic=rng.random() < 0.5)
                              for s in rng.sample(NOTES, 3)]
        if rng.random() < 0.5:
            sc.extras["headers"] = [sc.text(s, "caption", size=round(sc.size * 0.9, 1)) for s in HEADERS]
