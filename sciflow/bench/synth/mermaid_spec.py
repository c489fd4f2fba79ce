"""The random flowcharts of the ``mermaid`` style: knobs, the diagram spec and its Mermaid source.

:func:`choose_knobs` picks every knob for a seed, :func:`make_spec` draws the diagram (nodes,
subgraphs, links, classes) with ``random.Random(seed)``, :func:`to_source` writes the Mermaid
flowchart text and :func:`intended_graph` is the graph the spec means under the annotation
protocol (what the generator intended; the ground truth itself comes from Mermaid's parse, see
:mod:`sciflow.bench.synth.mermaid_render`).

Knob values are stratified over seeds: each knob deals its (weighted) values in shuffled
blocks of consecutive seeds, so every value appears in every block (at most 13 seeds) and any
50 consecutive seeds use every value of every knob, while the values of different knobs stay
independent of one another.
"""

from __future__ import annotations

import random
from typing import Any

from sciflow.bench.synth.common import CLUSTER_LABELS, EDGE_LABELS, random_topology, sample_labels
from sciflow.format.graph import DiagramGraph

#: Mermaid's node syntax per shape: ``id<open>"label"<close>``
SHAPES: dict[str, tuple[str, str]] = {
    "rect": ("[", "]"),
    "round": ("(", ")"),
    "stadium": ("([", "])"),
    "cylinder": ("[(", ")]"),
    "circle": ("((", "))"),
    "rhombus": ("{", "}"),
    "hexagon": ("{{", "}}"),
    "parallelogram": ("[/", "/]"),
    "subroutine": ("[[", "]]"),
}
#: the vertex ``type`` Mermaid's parser reports -> our shape name
MERMAID_TYPES = {"square": "rect", "round": "round", "stadium": "stadium", "cylinder": "cylinder",
                 "circle": "circle", "diamond": "rhombus", "hexagon": "hexagon",
                 "lean_right": "parallelogram", "subroutine": "subroutine"}

#: knob -> (value, weight) pairs; KNOBS (the values) is derived from it
_WEIGHTED: dict[str, list[tuple[Any, int]]] = {
    "size": [("small", 2), ("medium", 3), ("large", 2)],
    "direction": [("LR", 3), ("TB", 3), ("RL", 1), ("BT", 1)],
    "subgraphs": [("none", 1), ("flat", 1), ("nested", 1)],
    "subgraph_links": [(False, 2), (True, 1)],
    "edge_labels": [("none", 2), ("some", 2), ("many", 1)],
    "links": [("solid", 3), ("dotted", 1), ("thick", 1), ("mixed", 3)],
    "bidirectional": [(False, 2), (True, 1)],
    "chains": [(False, 1), (True, 1)],
    "headless": [(False, 3), (True, 1)],
    "shapes": [(s, 1) for s in SHAPES] + [("mixed", 4)],
    "class_defs": [(False, 1), (True, 1)],
    "labels": [("short", 1), ("medium", 3), ("long", 1)],
    "multiline": [(False, 2), (True, 1)],
    "theme": [("default", 2), ("neutral", 1), ("forest", 1), ("base", 1), ("neo", 1)],
    "look": [("classic", 2), ("neo", 2), ("handDrawn", 1)],
    "curve": [("basis", 2), ("linear", 1), ("step", 1), ("rounded", 2)],
    "html_labels": [(True, 2), (False, 1)],
    "font": [("default", 2), ("DejaVu Sans", 1), ("Liberation Sans", 1), ("Liberation Serif", 1)],
}
#: the values each knob can take (``generate(seed, **{knob: value})`` forces one)
KNOBS: dict[str, list[Any]] = {k: [v for v, _ in vals] for k, vals in _WEIGHTED.items()}

SIZES = {"small": (4, 7), "medium": (8, 12), "large": (13, 18)}
SHORT_LABELS = ["x", "y", "z", "h", "q", "k", "v", "z_t", "x_0", "W1", "W2", "MLP", "FFN", "LN", "Conv",
                "Attn", "Pool", "Loss", "CLS", "Enc", "Dec", "ReLU", "GELU", "Norm", "Add", "Concat",
                "Emb", "RNN", "LSTM", "GRU", "VQ", "KL", "Q-Net", "⊕", "⊗", "Softmax"]
LONG_SUFFIXES = ["Block", "Layer Stack", "Stage 2", "(frozen)", "with Skip Connections", "x N", "Head (shared)",
                 "and Projection", "(pretrained)", "Module v2"]
TITLES = [*CLUSTER_LABELS, "Stage 1", "Stage 2", "Decoder Stack", "Environment Loop", "Memory Bank", "Teacher",
          "Student", "Pretraining", "Fine-tuning", "Retrieval"]
FILLS = [("#dae8fc", "#6c8ebf"), ("#d5e8d4", "#82b366"), ("#ffe6cc", "#d79b00"), ("#fff2cc", "#d6b656"),
         ("#f8cecc", "#b85450"), ("#e1d5e7", "#9673a6"), ("#f5f5f5", "#666666"), ("#ffffff", "#333333")]
#: link operator per (stroke, double): the arrow forms, and the head-less lines
ARROWS = {("normal", False): "-->", ("dotted", False): "-.->", ("thick", False): "==>",
          ("normal", True): "<-->", ("dotted", True): "<-.->", ("thick", True): "<==>"}
LINES = {"normal": "---", "dotted": "-.-", "thick": "==="}


def _block_pick(knob: str, seed: int) -> Any:
    vals = [v for v, w in _WEIGHTED[knob] for _ in range(w)]
    block, pos = divmod(seed, len(vals))
    random.Random(f"sciflow-mermaid/{knob}/{block}").shuffle(vals)
    return vals[pos]


def _convert(knob: str, value: Any) -> Any:
    from sciflow.bench.synth.styles import StyleError  # styles imports this module lazily: no cycle

    values = KNOBS[knob]
    if isinstance(value, str) and isinstance(values[0], bool):
        low = value.strip().lower()
        value = True if low in ("true", "1", "yes", "on") else False if low in ("false", "0", "no", "off") else value
    elif isinstance(value, str):
        by_lower = {str(v).lower(): v for v in values}
        value = by_lower.get(value.strip().lower(), value)
    if value not in values or type(value) is not type(values[0]):
        raise StyleError(f"mermaid knob {knob}={value!r}: expected one of {values}")
    return value


def choose_knobs(seed: int, **force: Any) -> dict[str, Any]:
    """Every knob's value for ``seed``; ``force`` (values or CLI strings) overrides."""
    from sciflow.bench.synth.styles import StyleError

    unknown = sorted(set(force) - set(KNOBS))
    if unknown:
        raise StyleError(f"mermaid has no knob {', '.join(unknown)}; knobs: {', '.join(KNOBS)}")
    out = {k: _convert(k, force[k]) if k in force else _block_pick(k, seed) for k in KNOBS}
    if out["subgraph_links"] and "subgraph_links" in force and "subgraphs" not in force and out["subgraphs"] == "none":
        out["subgraphs"] = "flat"  # a forced link to a subgraph needs a subgraph
    return out


def effective_knobs(spec: dict[str, Any], knobs: dict[str, Any]) -> dict[str, Any]:
    """``knobs`` as the spec realised them: a structural knob is ``True`` only when the item
    has the thing (a link to a subgraph needs a subgraph, for instance)."""
    links = spec["links"]
    sgs = {sg["id"] for sg in spec["subgraphs"]}
    return knobs | {
        "subgraph_links": any(lk["src"] in sgs or lk["dst"] in sgs for lk in links),
        "bidirectional": any(lk["double"] for lk in links),
        "headless": any(not lk["head"] for lk in links),
        "chains": bool(spec["chains"]),
        "multiline": any("<br/>" in nd["drawn"] for nd in spec["nodes"]),
        "class_defs": bool(spec["classes"]),
        "edge_labels": knobs["edge_labels"] if any(lk["label"] for lk in links) else "none",
    }


def _labels(rng: random.Random, n: int, mode: str) -> list[str]:
    medium = sample_labels(rng, n)
    short = rng.sample(SHORT_LABELS, min(n, len(SHORT_LABELS)))
    out: list[str] = []
    seen: set[str] = set()
    for i in range(n):
        r = rng.random()
        if mode == "short":
            lab = short[i] if r < 0.7 and i < len(short) else medium[i]
        elif mode == "long":
            lab = f"{medium[i]} {rng.choice(LONG_SUFFIXES)}" if r < 0.7 else medium[i]
        else:
            lab = short[i] if r < 0.1 and i < len(short) else medium[i]
        if lab.lower() in seen:
            lab = medium[i]
        seen.add(lab.lower())
        out.append(lab)
    return out


def _drawn(rng: random.Random, label: str, multiline: bool) -> str:
    words = label.split()
    if multiline and len(words) >= 2 and rng.random() < 0.6:
        cut = rng.randint(1, len(words) - 1)
        return " ".join(words[:cut]) + "<br/>" + " ".join(words[cut:])
    return label


def _subgraphs(rng: random.Random, n: int, mode: str) -> list[dict[str, Any]]:
    """Subgraphs as contiguous runs of node indices (the topologies are roughly ordered, so a
    run reads as a stage); ``nested`` puts one run inside another (sometimes two levels)."""
    if mode == "none" or n < 4:
        return []
    titles = rng.sample(TITLES, 6)
    out: list[dict[str, Any]] = []

    def add(members: list[int], parent: str | None) -> str:
        sid = f"sg{len(out)}"
        out.append({"id": sid, "title": titles[len(out)], "parent": parent, "members": members})
        return sid

    if mode == "flat":
        k = rng.randint(1, max(1, min(3, n // 4)))
        start = rng.randrange(0, 2)
        for _ in range(k):
            size = rng.randint(2, max(2, min(4, n // (k + 1))))
            if start + size > n:
                break
            add(list(range(start, start + size)), None)
            start += size + rng.randint(0, 2)
    else:
        size = rng.randint(3, max(3, min(7, n - 1)))
        start = rng.randrange(0, n - size + 1)
        outer = list(range(start, start + size))
        top = add(outer, None)
        isize = rng.randint(1, max(1, min(3, size - 1)))
        istart = rng.randrange(start, start + size - isize + 1)
        inner = add(list(range(istart, istart + isize)), top)
        if isize >= 3 and rng.random() < 0.5:
            add([istart + isize - 1], inner)
        rest = [i for i in range(n) if i not in outer]
        if len(rest) >= 3 and rng.random() < 0.5:
            a = rng.randrange(0, len(rest) - 1)
            run = [rest[a]] + [r for r in rest[a + 1 : a + 3] if r == rest[a] + 1 or r == rest[a] + 2]
            if len(run) >= 2:
                add(run, None)
    # each node belongs to its innermost subgraph only
    owner: dict[int, str] = {}
    for sg in out:
        for m in sg["members"]:
            owner[m] = sg["id"]
    for sg in out:
        sg["members"] = [f"n{m}" for m in sg["members"] if owner[m] == sg["id"]]
    return out


def descendants(spec: dict[str, Any], sid: str) -> set[str]:
    """The node ids inside subgraph ``sid``, nested subgraphs included (and their ids)."""
    out = set()
    for sg in spec["subgraphs"]:
        if sg["id"] == sid:
            out |= set(sg["members"])
        elif sg["parent"] == sid:
            out |= {sg["id"]} | descendants(spec, sg["id"])
    return out


def make_spec(seed: int, knobs: dict[str, Any]) -> dict[str, Any]:
    """The diagram ``seed`` draws with ``knobs`` (every choice explicit)."""
    rng = random.Random(seed)
    n = rng.randint(*SIZES[knobs["size"]])
    topology, pairs = random_topology(rng, n)
    labels = _labels(rng, n, knobs["labels"])
    nodes = []
    for i, lab in enumerate(labels):
        shape = rng.choice(list(SHAPES)) if knobs["shapes"] == "mixed" else knobs["shapes"]
        nodes.append({"id": f"n{i}", "label": lab, "drawn": _drawn(rng, lab, knobs["multiline"]), "shape": shape})
    if knobs["multiline"] and not any("<br/>" in nd["drawn"] for nd in nodes):
        multi = [nd for nd in nodes if len(nd["label"].split()) >= 2]
        if multi:
            nd = rng.choice(multi)
            words = nd["label"].split()
            nd["drawn"] = words[0] + "<br/>" + " ".join(words[1:])
    subgraphs = _subgraphs(rng, n, knobs["subgraphs"])
    label_p = {"none": 0.0, "some": 0.25, "many": 0.6}[knobs["edge_labels"]]
    mix = {"solid": ["normal"] * 9 + ["dotted"], "dotted": ["dotted"] * 4 + ["normal"],
           "thick": ["thick"] * 4 + ["normal"], "mixed": ["normal"] * 3 + ["dotted", "thick"]}[knobs["links"]]
    links: list[dict[str, Any]] = []
    for a, b in pairs:
        links.append({"src": f"n{a}", "dst": f"n{b}", "stroke": rng.choice(mix), "double": False, "head": True,
                      "label": rng.choice(EDGE_LABELS) if rng.random() < label_p else None})
    if label_p and not any(lk["label"] for lk in links):
        rng.choice(links)["label"] = rng.choice(EDGE_LABELS)
    if knobs["bidirectional"]:
        for lk in rng.sample(links, min(len(links), rng.randint(1, 2))):
            lk["double"] = True
    linked = {frozenset((lk["src"], lk["dst"])) for lk in links}
    if knobs["headless"]:
        free = [(f"n{a}", f"n{b}") for a in range(n) for b in range(a + 1, n)
                if frozenset((f"n{a}", f"n{b}")) not in linked]
        for a, b in rng.sample(free, min(len(free), rng.randint(1, 2))):
            links.append({"src": a, "dst": b, "stroke": rng.choice(mix), "double": False, "head": False,
                          "label": rng.choice(EDGE_LABELS) if rng.random() < label_p else None})
    spec: dict[str, Any] = {"n": n, "topology": topology, "direction": knobs["direction"], "nodes": nodes,
                            "subgraphs": subgraphs, "links": links, "chains": [], "classes": []}
    if knobs["subgraph_links"] and subgraphs:
        sg = rng.choice(subgraphs)
        outside = sorted({nd["id"] for nd in nodes} - descendants(spec, sg["id"]), key=lambda s: int(s[1:]))
        if outside:
            other = rng.choice(outside)
            src, dst = (other, sg["id"]) if rng.random() < 0.6 else (sg["id"], other)
            links.append({"src": src, "dst": dst, "stroke": rng.choice(mix), "double": False, "head": True,
                          "label": rng.choice(EDGE_LABELS) if rng.random() < label_p else None})
    if knobs["chains"]:
        used: set[int] = set()
        for i in range(len(links)):
            if i in used or not links[i]["head"]:
                continue
            chain = [i]
            while len(chain) < 4 and rng.random() < 0.8:
                nxt = [j for j in range(len(links)) if j not in used and j not in chain and links[j]["head"]
                       and links[j]["src"] == links[chain[-1]]["dst"]]
                if not nxt:
                    break
                chain.append(nxt[0])
            if len(chain) >= 2:
                spec["chains"].append(chain)
                used.update(chain)
        pairs_ = [[i, j] for i, a in enumerate(links) for j, b in enumerate(links)
                  if i != j and a["head"] and b["head"] and a["dst"] == b["src"] and a["src"] != b["dst"]]
        if not spec["chains"] and pairs_:
            spec["chains"].append(rng.choice(pairs_))
    if knobs["class_defs"]:
        for c, (fill, stroke) in enumerate(rng.sample(FILLS, rng.randint(1, 3))):
            members = [nd["id"] for nd in nodes if rng.random() < 0.4]
            if c == 0 and subgraphs and rng.random() < 0.5:
                members.append(subgraphs[0]["id"])
            if members:
                spec["classes"].append({"name": f"c{c}", "fill": fill, "stroke": stroke,
                                        "width": rng.choice([1, 1.5, 2, 3]), "members": members})
    return spec


def _node_text(nd: dict[str, Any]) -> str:
    op, cl = SHAPES[nd["shape"]]
    return f'{nd["id"]}{op}"{nd["drawn"]}"{cl}'


def _link_op(lk: dict[str, Any]) -> str:
    op = ARROWS[(lk["stroke"], lk["double"])] if lk["head"] else LINES[lk["stroke"]]
    return f'{op}|"{lk["label"]}"|' if lk["label"] else op


def to_source(spec: dict[str, Any]) -> str:
    """The Mermaid flowchart text of ``spec``: nodes declared inside their subgraph blocks,
    links after all blocks (so a link never moves a node into a subgraph), chained links as
    one statement, then classDefs."""
    lines = [f"flowchart {spec['direction']}"]
    by_parent: dict[str | None, list[dict[str, Any]]] = {}
    for sg in spec["subgraphs"]:
        by_parent.setdefault(sg["parent"], []).append(sg)
    members = {m for sg in spec["subgraphs"] for m in sg["members"]}
    nodes = {nd["id"]: nd for nd in spec["nodes"]}

    def block(sg: dict[str, Any], depth: int) -> None:
        pad = "    " * depth
        lines.append(f'{pad}subgraph {sg["id"]} ["{sg["title"]}"]')
        for m in sg["members"]:
            lines.append(f"{pad}    {_node_text(nodes[m])}")
        for child in by_parent.get(sg["id"], []):
            block(child, depth + 1)
        lines.append(f"{pad}end")

    for nd in spec["nodes"]:
        if nd["id"] not in members:
            lines.append(f"    {_node_text(nd)}")
    for sg in by_parent.get(None, []):
        block(sg, 1)
    in_chain = {i for ch in spec["chains"] for i in ch}
    chain_at = {ch[0]: ch for ch in spec["chains"]}
    for i, lk in enumerate(spec["links"]):
        if i in chain_at:
            ch = chain_at[i]
            text = lk["src"] + "".join(f" {_link_op(spec['links'][j])} {spec['links'][j]['dst']}" for j in ch)
            lines.append(f"    {text}")
        elif i not in in_chain:
            lines.append(f"    {lk['src']} {_link_op(lk)} {lk['dst']}")
    for c in spec["classes"]:
        lines.append(f"    classDef {c['name']} fill:{c['fill']},stroke:{c['stroke']},stroke-width:{c['width']}px")
        lines.append(f"    class {','.join(c['members'])} {c['name']}")
    return "\n".join(lines) + "\n"


def intended_graph(spec: dict[str, Any], item_id: str = "intended") -> DiagramGraph:
    """The graph the spec means under the annotation protocol: every node; a subgraph that a
    link ends on is a node too (labelled with its title); ``<-->`` is two edges; head-less
    lines are no edges; subgraphs are groups."""
    sg_by_id = {sg["id"]: sg for sg in spec["subgraphs"]}
    group_of = {m: sg["id"] for sg in spec["subgraphs"] for m in sg["members"]}
    ends = {x for lk in spec["links"] for x in (lk["src"], lk["dst"])}
    nodes: list[dict[str, Any]] = [{"id": nd["id"], "label": nd["label"]} for nd in spec["nodes"]]
    nodes += [{"id": s, "label": sg_by_id[s]["title"]} for s in sg_by_id if s in ends]
    for nd in nodes:
        g = group_of.get(nd["id"]) or (sg_by_id[nd["id"]]["parent"] if nd["id"] in sg_by_id else None)
        if g:
            nd["group"] = g
    edges = []
    for lk in spec["links"]:
        if not lk["head"]:
            continue
        pairs = [(lk["src"], lk["dst"])] + ([(lk["dst"], lk["src"])] if lk["double"] else [])
        edges += [{"source": a, "target": b, **({"label": lk["label"]} if lk["label"] else {})} for a, b in pairs]
    groups = [{"id": sg["id"], "label": sg["title"], **({"parent": sg["parent"]} if sg["parent"] else {})}
              for sg in spec["subgraphs"]]
    return DiagramGraph.from_dict({"id": item_id, "nodes": nodes, "edges": edges, "groups": groups})
