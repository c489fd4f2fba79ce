"""Writes the bundled example data used by `make demo` (run from the repository root).

Two made-up generators: careful-gen (a paraphrase, a skipped node drawn as direct arrows)
and sloppy-gen (reversed arrows, a hallucinated box, a misspelling, a missing and a corrupt item).
"""

import json
import pathlib

root = pathlib.Path("examples")


def G(id, nodes, edges, meta, groups=None, layout="left-to-right"):
    labels = dict(nodes)
    d = {
        "id": id,
        "nodes": [{"id": k, "label": v} for k, v in nodes],
        "edges": [{"source": a, "target": b} for a, b in edges],
    }
    if groups:
        d["groups"] = groups
    d["prompt"] = {
        "text": "",
        "components": [v for _, v in nodes],
        "relations": [[labels[a], labels[b]] for a, b in edges],
        "layout": layout,
    }
    comp = "; ".join(v for _, v in nodes)
    rel = "; ".join(f"{labels[a]} -> {labels[b]}" for a, b in edges)
    d["prompt"]["text"] = f"Draw a {layout} framework diagram. Components: {comp}. Directed relations: {rel}."
    d["meta"] = meta
    return d


refs = {
    "vit": G(
        "vit",
        [
            ("n1", "Image"),
            ("n2", "Patch Embedding"),
            ("n3", "Position Embedding"),
            ("n4", "Transformer Encoder"),
            ("n5", "MLP Head"),
            ("n6", "Class Label"),
        ],
        [("n1", "n2"), ("n2", "n4"), ("n3", "n4"), ("n4", "n5"), ("n5", "n6")],
        {
            "area": "computer vision",
            "difficulty": "easy",
            "title": "An Image is Worth 16x16 Words",
            "origin": "sciflow example",
        },
    ),
    "rag": G(
        "rag",
        [
            ("n1", "Query"),
            ("n2", "Query Encoder"),
            ("n3", "Document Index"),
            ("n4", "Retriever"),
            ("n5", "Generator"),
            ("n6", "Answer"),
        ],
        [("n1", "n2"), ("n2", "n4"), ("n3", "n4"), ("n4", "n5"), ("n1", "n5"), ("n5", "n6")],
        {
            "area": "natural language processing",
            "difficulty": "medium",
            "title": "Retrieval-Augmented Generation",
            "origin": "sciflow example",
        },
    ),
    "ppo": G(
        "ppo",
        [
            ("n1", "Environment"),
            ("n2", "Policy Network"),
            ("n3", "Rollout Buffer"),
            ("n4", "Advantage Estimation"),
            ("n5", "Value Network"),
            ("n6", "Clipped Objective"),
        ],
        [("n2", "n1"), ("n1", "n3"), ("n3", "n4"), ("n5", "n4"), ("n4", "n6"), ("n6", "n2")],
        {
            "area": "machine learning",
            "difficulty": "medium",
            "title": "Proximal Policy Optimization",
            "origin": "sciflow example",
        },
    ),
    "sar_adc": G(
        "sar_adc",
        [
            ("n1", "Analog Input"),
            ("n2", "Sample and Hold"),
            ("n3", "Comparator"),
            ("n4", "SAR Logic"),
            ("n5", "Capacitive DAC"),
            ("n6", "Digital Output"),
        ],
        [("n1", "n2"), ("n2", "n3"), ("n3", "n4"), ("n4", "n5"), ("n5", "n3"), ("n4", "n6")],
        {
            "area": "integrated circuits",
            "difficulty": "medium",
            "title": "Successive-approximation ADC",
            "origin": "sciflow example",
        },
    ),
}
for k, d in refs.items():
    (root / "references").mkdir(parents=True, exist_ok=True)
    (root / "references" / f"{k}.json").write_text(json.dumps(d, indent=2, ensure_ascii=False) + "\n")


def pred(d, drop_nodes=(), rename=None, reverse=(), add_edges=(), add_nodes=(), drop_edges=()):
    rename = rename or {}
    nodes = [
        {"id": "p" + n["id"][1:], "label": rename.get(n["id"], n["label"])}
        for n in d["nodes"]
        if n["id"] not in drop_nodes
    ]
    nodes += [{"id": i, "label": lab} for i, lab in add_nodes]
    keep = {n["id"] for n in nodes}
    edges = []
    for e in d["edges"]:
        a, b = "p" + e["source"][1:], "p" + e["target"][1:]
        if (e["source"], e["target"]) in drop_edges:
            continue
        if (e["source"], e["target"]) in reverse:
            a, b = b, a
        if a in keep and b in keep:
            edges.append({"source": a, "target": b})
    edges += [{"source": a, "target": b} for a, b in add_edges]
    return {"id": d["id"], "nodes": nodes, "edges": edges}


gens = {
    # a careful generator: one paraphrase, one skipped intermediate node drawn as a direct arrow
    "careful-gen": {
        "vit": pred(refs["vit"], rename={"n4": "Transformer encoder (ViT)"}),
        "rag": pred(refs["rag"]),
        "ppo": pred(refs["ppo"], drop_nodes=("n4",), add_edges=(("p3", "p6"), ("p5", "p6"))),
        "sar_adc": pred(refs["sar_adc"]),
    },
    # a sloppy generator: reversed arrows, a hallucinated box, a misspelling, a missing item
    "sloppy-gen": {
        "vit": pred(
            refs["vit"], reverse=(("n2", "n4"),), add_nodes=(("px", "Dropout Layer"),), add_edges=(("px", "p5"),)
        ),
        "rag": pred(refs["rag"], drop_nodes=("n3",), rename={"n4": "Retreiver"}, reverse=(("n5", "n6"),)),
        "ppo": pred(refs["ppo"], drop_edges=(("n6", "n2"), ("n5", "n4")), add_edges=(("p1", "p6"),)),
    },
}
for g, items in gens.items():
    out = root / "predictions" / g
    out.mkdir(parents=True, exist_ok=True)
    for k, d in items.items():
        (out / f"{k}.json").write_text(json.dumps(d, indent=2, ensure_ascii=False) + "\n")
# an unreadable prediction: the batch must report it and carry on
(root / "predictions" / "sloppy-gen" / "sar_adc.json").write_text(
    '{"id": "sar_adc", "nodes": [{"id": "a", "label": 7}], "edges": []}\n'
)
refs["diffusion_policy"] = G(
    "diffusion_policy",
    [
        ("n1", "Camera Images"),
        ("n2", "Robot State"),
        ("n3", "Visual Encoder"),
        ("n4", "Observation Features"),
        ("n5", "Noisy Action Sequence"),
        ("n6", "Conditional U-Net"),
        ("n7", "Denoised Actions"),
        ("n8", "Robot Controller"),
    ],
    [("n1", "n3"), ("n3", "n4"), ("n2", "n4"), ("n4", "n6"), ("n5", "n6"), ("n6", "n7"), ("n7", "n8"), ("n7", "n5")],
    {
        "area": "robotics",
        "difficulty": "hard",
        "title": "Diffusion Policy: Visuomotor Policy Learning via Action Diffusion",
        "origin": "sciflow example",
    },
    layout="top-to-bottom",
)
(root / "references" / "diffusion_policy.json").write_text(
    json.dumps(refs["diffusion_policy"], indent=2, ensure_ascii=False) + "\n"
)
(root / "predictions" / "careful-gen" / "diffusion_policy.json").write_text(
    json.dumps(pred(refs["diffusion_policy"], rename={"n6": "Conditional UNet"}), indent=2, ensure_ascii=False) + "\n"
)
