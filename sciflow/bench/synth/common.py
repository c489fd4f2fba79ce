"""Shared pieces of the synthetic renderers: vocabulary, topologies, result type."""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from sciflow.format.graph import DiagramGraph

MODIFIERS = [
    "Image",
    "Text",
    "Audio",
    "Graph",
    "Visual",
    "Query",
    "Latent",
    "Multi-Scale",
    "Temporal",
    "Spatial",
    "Masked",
    "Contrastive",
    "Patch",
    "Token",
    "Cross-Modal",
    "Prompt",
    "Motion",
    "Depth",
    "Point Cloud",
    "Semantic",
    "Policy",
    "Reward",
    "Value",
    "Style",
    "Residual",
]
COMPONENTS = [
    "Encoder",
    "Decoder",
    "Projector",
    "Attention",
    "Fusion",
    "Head",
    "Embedding",
    "Tokenizer",
    "Loss",
    "Pooling",
    "Transformer",
    "Adapter",
    "Classifier",
    "Memory",
    "Backbone",
    "Network",
    "Module",
    "Predictor",
    "Generator",
    "Discriminator",
    "Refiner",
    "Aggregator",
    "Estimator",
]
SINGLES = [
    "Input Image",
    "Text Prompt",
    "Feature Map",
    "Self-Attention",
    "Layer Norm",
    "Softmax",
    "Linear Layer",
    "Output Mask",
    "Ground Truth",
    "Replay Buffer",
    "Environment",
    "Reward Model",
    "KL Divergence",
    "Final Prediction",
    "Noise Schedule",
    "U-Net",
    "VAE Decoder",
    "CLIP Encoder",
    "Retriever",
    "Knowledge Base",
    "Language Model",
    "Vision Transformer",
    "MLP",
    "GNN Layer",
    "Loss L_cls",
    "Loss L_rec",
    "z_img",
    "Codebook",
    "Critic",
    "Actor",
    "Optimizer",
]
EDGE_LABELS = [
    "features",
    "tokens",
    "logits",
    "queries",
    "keys",
    "mask",
    "reward",
    "gradients",
    "embeddings",
    "latent z",
    "context",
    "scores",
    "action",
    "state",
    "weights",
]
CLUSTER_LABELS = ["Encoder Stage", "Training Loop", "Inference", "Backbone Block", "Fusion Stage", "Data Pipeline"]


@dataclass
class SynthDiagram:
    """One rendered diagram: ``image`` RGB uint8, ``graph`` the exact ground truth
    (node labels as they appear, line breaks as spaces; edges source->target)."""

    image: np.ndarray
    graph: DiagramGraph
    style: str
    meta: dict[str, Any] = field(default_factory=dict)
    #: every drawn element as ``(class, (x0, y0, x1, y1))`` in image pixels, exact from the
    #: renderer: ``node`` (a node's shape), ``arrowhead``, ``text`` (one label, all its lines),
    #: ``group`` (a container), ``operator`` (an operator symbol such as a circled plus).
    elements: list[tuple[str, tuple[float, float, float, float]]] = field(default_factory=list)
    #: the browser-drawn styles' full element record (``<id>.elements.json``, see
    #: :func:`elements_record`): nodes, containers, texts with roles, arrows with polylines.
    record: dict[str, Any] = field(default_factory=dict)
    #: the knob values this item was drawn with (recorded per item, for knob buckets)
    knobs: dict[str, Any] = field(default_factory=dict)


ELEMENTS_FORMAT = "sciflow.elements/v1"


def elements_record(d: SynthDiagram) -> dict[str, Any]:
    """The ``<id>.elements.json`` document of one item, in image pixels::

        {"format": "sciflow.elements/v1", "style": ..., "size": [w, h], "knobs": {...},
         "nodes":  [{"id", "label", "bbox", "shape"}],            graph nodes (containers that are nodes too)
         "containers": [{"id", "label", "bbox", "is_node"}],      panels / subgraphs / groups
         "texts":  [{"text", "bbox", "role", "rotation"}],        role: node | edge_label | container_title |
                                                                  title | caption | legend | footnote | icon_caption
         "arrows": [{"source", "target", "polyline", "tail", "head", "head_box", "label", "label_box",
                     "style", "head_style", "double"}],           one per drawn arrow (a double-headed arrow once)
         "elements": [[class, bbox], ...]}                        the detector's boxes (node, arrowhead, text, ...)

    Renderers without a browser (graphviz, pillow) fill only ``elements`` and ``knobs``.
    """
    h, w = d.image.shape[:2]
    rec = {"format": ELEMENTS_FORMAT, "style": d.style, "size": [int(w), int(h)], "knobs": dict(d.knobs)}
    for key in ("nodes", "containers", "texts", "arrows"):
        rec[key] = list(d.record.get(key, []))
    rec["elements"] = [[c, [round(float(v), 2) for v in b]] for c, b in d.elements]
    return rec


def sample_labels(rng: random.Random, n: int) -> list[str]:
    """``n`` distinct multi-word labels (case-insensitively distinct)."""
    pool = [f"{m} {c}" for m in MODIFIERS for c in COMPONENTS] + SINGLES
    rng.shuffle(pool)
    out: list[str] = []
    seen: set[str] = set()
    for lab in pool:
        key = lab.lower()
        if key not in seen:
            seen.add(key)
            out.append(lab)
        if len(out) == n:
            break
    return out


def random_topology(rng: random.Random, n: int, kind: str | None = None) -> tuple[str, list[tuple[int, int]]]:
    """A connected directed topology on nodes ``0..n-1``.

    kinds: ``linear`` (a chain), ``branching`` (fan-out tree), ``merging`` (fan-in tree),
    ``feedback`` (a chain with back edges), ``dag`` (layered random DAG with skips).
    """
    if kind is None:
        kinds = ["linear", "branching", "merging", "feedback", "dag"] if n <= 12 else ["branching", "merging", "dag"]
        kind = rng.choice(kinds)
    edges: set[tuple[int, int]] = set()
    if kind == "linear":
        edges = {(i, i + 1) for i in range(n - 1)}
    elif kind == "branching":
        for i in range(1, n):
            edges.add((rng.randrange(max(1, i - 3), i) if i > 1 else 0, i))
    elif kind == "merging":
        for i in range(1, n):
            edges.add((i, rng.randrange(max(1, i - 3), i) if i > 1 else 0))
    elif kind == "feedback":
        edges = {(i, i + 1) for i in range(n - 1)}
        for _ in range(max(1, n // 5)):
            a = rng.randrange(1, n)
            b = rng.randrange(0, a)
            if a - b >= 2:
                edges.add((a, b))
    else:
        for i in range(1, n):
            edges.add((rng.randrange(max(0, i - 4), i), i))
        for _ in range(max(1, n // 4)):
            a = rng.randrange(0, n - 1)
            b = rng.randrange(a + 1, n)
            edges.add((a, b))
    return kind, sorted(edges)


def wrap_label(rng: random.Random, label: str, p: float) -> tuple[str, str]:
    """Maybe break a multi-word label onto two lines. Returns ``(drawn, truth)``."""
    words = label.split()
    if len(words) >= 2 and rng.random() < p:
        k = len(words) // 2
        return " ".join(words[:k]) + "\n" + " ".join(words[k:]), label
    return label, label
