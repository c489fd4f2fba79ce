"""Speed of the graph-level metric on synthetic reference/prediction pairs.

    .venv/bin/python benchmarks/bench_graph_metric.py [--n 500] [--seed 0] [--embedder minilm]

Builds N reference graphs of 5-60 nodes (labels drawn from a vocabulary of real method
components, random DAG-like topologies with some feedback edges) and a prediction for each
(nodes dropped, labels misspelt or paraphrased, edges reversed, dropped or hallucinated).
Prints the one-time model load, then two passes over the pairs: a cold pass (every new
label string is embedded once) and a warm pass (embeddings cached per label string), with
items/s, mean ms per item and ms per item for the 25-35-node pairs.
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from sciflow.config import MatchingConfig
from sciflow.format.graph import DiagramGraph, Edge, Node
from sciflow.metrics.graph_level import graph_level
from sciflow.models.embedding import get_embedder

HEADS = ["Image", "Text", "Audio", "Point Cloud", "Query", "Key", "Value", "Policy", "Reward", "State",
         "Latent", "Feature", "Patch", "Token", "Mask", "Depth", "Pose", "Action", "Memory", "Graph"]
TAILS = ["Encoder", "Decoder", "Embedding", "Projection", "Head", "Network", "Buffer", "Estimator",
         "Sampler", "Tokenizer", "Attention", "Normalization", "Fusion", "Predictor", "Loss", "Module"]
VOCAB = [f"{h} {t}" for h in HEADS for t in TAILS]  # 320 labels


def typo(label: str, rnd: random.Random) -> str:
    i = rnd.randrange(len(label))
    return label[:i] + label[i + 1:]


def make_pair(rnd: random.Random, n: int) -> tuple[DiagramGraph, DiagramGraph]:
    labels = rnd.sample(VOCAB, n)
    ids = [f"r{i}" for i in range(n)]
    edges = set()
    for k in range(1, n):  # a DAG backbone with branching and merging
        for _ in range(rnd.choice([1, 1, 1, 2])):
            edges.add((ids[rnd.randrange(k)], ids[k]))
    for _ in range(max(1, n // 10)):  # feedback loops
        a, b = sorted(rnd.sample(range(n), 2))
        edges.add((ids[b], ids[a]))
    ref = DiagramGraph("ref", tuple(Node(i, lab) for i, lab in zip(ids, labels, strict=True)),
                       tuple(Edge(a, b) for a, b in sorted(edges)))
    keep = [i for i in ids if rnd.random() > 0.1]
    pid = {i: f"p{k}" for k, i in enumerate(keep)}
    nodes = []
    for i in keep:
        lab = ref.node(i).label
        r = rnd.random()
        nodes.append(Node(pid[i], typo(lab, rnd) if r < 0.1 else (lab.lower() if r < 0.2 else lab)))
    pedges = set()
    for a, b in edges:
        if a in pid and b in pid and rnd.random() > 0.1:
            pedges.add((pid[b], pid[a]) if rnd.random() < 0.1 else (pid[a], pid[b]))
    extra = rnd.randrange(3)
    for k in range(extra):
        nodes.append(Node(f"h{k}", rnd.choice(VOCAB)))
    pids = [n.id for n in nodes]
    for _ in range(len(pedges) // 10 + 1):
        a, b = rnd.sample(pids, 2) if len(pids) > 1 else (pids[0], pids[0])
        pedges.add((a, b))
    pred = DiagramGraph("pred", tuple(nodes), tuple(Edge(a, b) for a, b in sorted(pedges)))
    return pred, ref


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "none"])
    args = ap.parse_args()

    rnd = random.Random(args.seed)
    pairs = [make_pair(rnd, rnd.randint(5, 60)) for _ in range(args.n)]
    cfg = MatchingConfig(embedder=args.embedder)

    t0 = time.perf_counter()
    embedder = get_embedder(args.embedder)
    load_s = time.perf_counter() - t0
    print(f"pairs: {len(pairs)} (nodes 5-60), embedder: {args.embedder}")
    print(f"one-time model load: {load_s:.2f} s")

    for name in ("cold (embeds each new label once)", "warm (embeddings cached per label)"):
        per_item: list[tuple[int, float]] = []
        t_all = time.perf_counter()
        for pred, ref in pairs:
            t = time.perf_counter()
            r = graph_level(pred, ref, matching=cfg, embedder=embedder)
            per_item.append((len(ref.nodes), time.perf_counter() - t))
            assert 0.0 <= r.score <= 1.0
        total = time.perf_counter() - t_all
        mid = [s for n, s in per_item if 25 <= n <= 35]
        print(
            f"{name}: {len(pairs) / total:.1f} items/s, mean {1000 * total / len(pairs):.2f} ms/item, "
            f"25-35 nodes: median {1000 * statistics.median(mid):.2f} ms, "
            f"p90 {1000 * sorted(mid)[int(0.9 * len(mid))]:.2f} ms (n={len(mid)})"
        )


if __name__ == "__main__":
    main()
