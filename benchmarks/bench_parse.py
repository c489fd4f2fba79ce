"""Parser benchmark on synthetic diagrams with exact ground truth, plus the real dev figures.

    .venv/bin/python benchmarks/bench_parse.py --n 60 --seed 0
    .venv/bin/python benchmarks/bench_parse.py --n 60 --seed 0 --config benchmarks/configs/detector.toml

Renders ``--n`` diagrams per style (Graphviz, Pillow), parses each with one Parser and
prints node and edge precision/recall/F1 per bucket (style x splines/route, rankdir) and
overall, median/p90 seconds per agent, then node/edge F1 on
``/work/shared/dev-data/realfig`` (or ``--realfig DIR``).

Matching (deliberately independent of sciflow.metrics): a predicted node matches a truth
node with the same label after lower-casing and collapsing whitespace (one-to-one, in order);
an edge is correct when both ends match and the direction is the same (strict, directed).
"""

from __future__ import annotations

import argparse
import logging
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sciflow.config import load_config  # noqa: E402
from sciflow.format.graph import DiagramGraph, load_graph  # noqa: E402
from sciflow.pipeline import Parser  # noqa: E402


def fold(s: str) -> str:
    return " ".join(s.lower().split())


def match_counts(pred: DiagramGraph, truth: DiagramGraph) -> tuple[int, int, int, int, int, int]:
    """(node tp, node pred, node truth, edge tp, edge pred, edge truth)."""
    free: dict[str, list[str]] = defaultdict(list)
    for n in truth.nodes:
        free[fold(n.label)].append(n.id)
    m: dict[str, str] = {}
    for n in pred.nodes:
        ids = free.get(fold(n.label))
        if ids:
            m[n.id] = ids.pop(0)
    tedges = {(e.source, e.target) for e in truth.edges}
    pedges = {(e.source, e.target) for e in pred.edges}
    etp = sum(1 for a, b in pedges if a in m and b in m and (m[a], m[b]) in tedges)
    return len(m), len(pred.nodes), len(truth.nodes), etp, len(pedges), len(tedges)


def prf(tp: int, npred: int, ntruth: int) -> tuple[float, float, float]:
    p = tp / npred if npred else (1.0 if ntruth == 0 else 0.0)
    r = tp / ntruth if ntruth else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def report(name: str, c: list[int]) -> str:
    np_, nr, nf = prf(c[0], c[1], c[2])
    ep, er, ef = prf(c[3], c[4], c[5])
    return f"{name:<34} n={c[6]:>4}  node P/R/F1 {np_:.3f}/{nr:.3f}/{nf:.3f}   edge P/R/F1 {ep:.3f}/{er:.3f}/{ef:.3f}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=60, help="diagrams per style")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--styles", default="graphviz,pillow")
    ap.add_argument("--realfig", type=Path, default=Path("/work/shared/dev-data/realfig"))
    ap.add_argument("--show-errors", action="store_true")
    ap.add_argument("--config", type=Path, default=None, help="a sciflow config TOML (e.g. another layout backend)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    from sciflow.bench.synth import graphviz_render, pillow_render

    gens = {"graphviz": graphviz_render.generate, "pillow": pillow_render.generate}
    parser = Parser(load_config(args.config) if args.config else None)
    print(f"parser backends: {parser.backends}", file=sys.stderr)
    buckets: dict[str, list[int]] = defaultdict(lambda: [0] * 7)
    timings: dict[str, list[float]] = defaultdict(list)
    per_kpx: list[float] = []
    for style in args.styles.split(","):
        for i in range(args.n):
            seed = args.seed * 100003 + i
            if i % 20 == 0:
                print(f"[{style} {i}/{args.n}]", file=sys.stderr, flush=True)
            try:
                d = gens[style](seed)
            except Exception as exc:  # noqa: BLE001 - a renderer failure skips one diagram
                print(f"  skipped {style} seed={seed}: {exc}", file=sys.stderr)
                continue
            t0 = time.perf_counter()
            res = parser(d.image, item_id=f"{style}-{seed}")
            total = time.perf_counter() - t0
            timings["total"].append(total)
            per_kpx.append(total / (max(d.image.shape[:2]) / 1000.0))
            for k, v in res.timings.items():
                timings[k].append(v)
            c = list(match_counts(res.graph, d.graph)) + [1]
            sub = d.meta.get("splines") or d.meta.get("route")
            for b in (style, f"{style}/{sub}", f"{style}/{d.meta.get('rankdir')}", "overall"):
                buckets[b] = [x + y for x, y in zip(buckets[b], c, strict=True)]
            if args.show_errors and (c[0] < c[2] or c[3] < c[5] or c[1] > c[0] or c[4] > c[3]):
                print(f"  {style} seed={seed} {d.image.shape[:2]} counts={c[:6]}")
    print(f"== synthetic diagrams (--n {args.n} per style, --seed {args.seed})")
    for name in sorted(buckets, key=lambda b: (b == "overall", b)):
        print(report(name, buckets[name]))
    print("== seconds per image (median / p90)")
    for k, v in timings.items() if per_kpx else ():
        print(f"{k:<18} {statistics.median(v):.3f} / {float(np.percentile(v, 90)):.3f}")
    if per_kpx:
        print(f"{'total per 1000px':<18} {statistics.median(per_kpx):.3f} / {float(np.percentile(per_kpx, 90)):.3f}")
    if args.realfig.is_dir():
        print("== real figures")
        for d in sorted(p for p in args.realfig.iterdir() if (p / "image.png").is_file()):
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                truth = load_graph(d / "graph.json")
            res = parser(d / "image.png", item_id=d.name)
            c = list(match_counts(res.graph, truth)) + [1]
            print(report(d.name, c), f"  ({sum(res.timings.values()):.2f}s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
