"""Parser benchmark on synthetic diagrams with exact ground truth, plus the real dev figures.

    .venv/bin/python benchmarks/bench_parse.py --n 200 --seed 7 [--styles graphviz,pillow,mermaid,paper]
    .venv/bin/python benchmarks/bench_parse.py --n 60 --seed 0 --config benchmarks/configs/detector.toml

Renders ``--n`` diagrams per style (:mod:`sciflow.bench.synth.styles`; the browser styles in one
Chromium kept open), parses each with one Parser and prints node and edge precision/recall/F1
(pooled over the items) per style, per knob bucket (``style/knob=value``: every knob of the
browser styles, splines/route and rankdir of the others) and overall, each F1 with a seeded
95% bootstrap interval over items; median/p90 seconds per agent; then, on the real dev figures
(``/work/shared/dev-data/realfig`` or ``--realfig DIR``), each figure's scores and the
**macro** node and edge F1 over all of them with bootstrap intervals.

Matching (deliberately independent of sciflow.metrics; the protocol of the dev-data README): a
predicted node matches a truth node with the same label after lower-casing and folding
punctuation to spaces (one-to-one; partners among repeated labels chosen to maximise the
correct edges, :func:`strict_matching`); an edge is correct when both ends match and the
direction is the same (strict, directed).
"""

from __future__ import annotations

import argparse
import itertools
import logging
import math
import statistics
import sys
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sciflow.config import load_config  # noqa: E402
from sciflow.format.graph import DiagramGraph, load_graph  # noqa: E402
from sciflow.pipeline import Parser  # noqa: E402


def fold(s: str) -> str:
    """Lower case, punctuation folded to spaces, whitespace collapsed (the dev-data protocol)."""
    s = unicodedata.normalize("NFKC", s).lower()
    return " ".join("".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in s).split())


TIE_EXACT_LIMIT = 50_000  # assignments of repeated-label classes evaluated exhaustively


def strict_matching(pred: DiagramGraph, truth: DiagramGraph) -> dict[str, str]:
    """One-to-one ``pred id -> truth id`` map of nodes with equal folded labels.

    Every label class (nodes whose labels fold alike) pairs ``min(#pred, #truth)`` nodes, so
    node counts do not depend on which partners are chosen. Which members of a repeated-label
    class pair up is chosen to maximise the correct directed edges: exhaustively when the
    classes admit at most ``TIE_EXACT_LIMIT`` assignments together, otherwise by improving
    changes (two members of a class trade partners, or one moves to an unpaired member; one
    change or two at a time) from the file order until none improves (a lower bound of the
    best). Pairing "in file order" instead made the score depend
    on how nodes happen to be listed: a figure with three "pair representation" boxes lost
    a third of its correct edges to an arbitrary permutation.

    >>> t = DiagramGraph.from_dict({"id": "t", "nodes": [{"id": "a", "label": "X"}, {"id": "b", "label": "X"},
    ...     {"id": "c", "label": "Y"}], "edges": [{"source": "b", "target": "c"}]})
    >>> p = DiagramGraph.from_dict({"id": "p", "nodes": [{"id": "u", "label": "x"}, {"id": "v", "label": "Y"}],
    ...     "edges": [{"source": "u", "target": "v"}]})
    >>> sorted(strict_matching(p, t).items())
    [('u', 'b'), ('v', 'c')]
    """
    pcls: dict[str, list[str]] = defaultdict(list)
    tcls: dict[str, list[str]] = defaultdict(list)
    for n in pred.nodes:
        pcls[fold(n.label)].append(n.id)
    for n in truth.nodes:
        tcls[fold(n.label)].append(n.id)
    tedges = {(e.source, e.target) for e in truth.edges}
    pedges = {(e.source, e.target) for e in pred.edges}

    def correct(m: dict[str, str]) -> int:
        return sum(1 for a, b in pedges if a in m and b in m and (m[a], m[b]) in tedges)

    m: dict[str, str] = {}
    tied: list[tuple[list[str], list[str]]] = []
    for key, ps in pcls.items():
        ts = tcls.get(key, [])
        m.update(zip(ps, ts, strict=False))
        if ts and max(len(ps), len(ts)) > 1:
            tied.append((ps, ts))
    if not tied:
        return m
    sizes = [math.perm(max(len(ps), len(ts)), min(len(ps), len(ts))) for ps, ts in tied]
    if math.prod(sizes) <= TIE_EXACT_LIMIT:
        def options(ps: list[str], ts: list[str]) -> list[list[tuple[str, str]]]:
            if len(ps) <= len(ts):
                return [list(zip(ps, perm, strict=True)) for perm in itertools.permutations(ts, len(ps))]
            return [list(zip(perm, ts, strict=True)) for perm in itertools.permutations(ps, len(ts))]

        fixed = {p: t for p, t in m.items() if not any(p in ps for ps, _ in tied)}
        best, best_score = m, correct(m)
        for combo in itertools.product(*(options(ps, ts) for ps, ts in tied)):
            cand = dict(fixed)
            for pairs in combo:
                cand.update(pairs)
            score = correct(cand)
            if score > best_score:
                best, best_score = cand, score
        return best
    def moves(cur: dict[str, str]) -> list[dict[str, str]]:
        """Maps one change away: two members of a class trade partners, or one takes a free one."""
        out = []
        for ps, ts in tied:
            for a, b in itertools.combinations(ps, 2):
                if a in cur or b in cur:
                    cand = {k: v for k, v in cur.items() if k not in (a, b)}
                    cand.update({k: v for k, v in ((a, cur.get(b)), (b, cur.get(a))) if v is not None})
                    out.append(cand)
            taken = {cur[p] for p in ps if p in cur}
            out.extend({**cur, a: t} for a in ps if a in cur for t in ts if t not in taken)
        return out

    # Improving single changes, then pairs of changes (a branch of two repeated classes, such as
    # embed -> rep, swaps only as a whole), until neither improves.
    score = correct(m)
    while True:
        step = max(((correct(c), c) for c in moves(m)), key=lambda x: x[0], default=(score, m))
        if step[0] <= score:
            step = max(((correct(c2), c2) for c in moves(m) for c2 in moves(c)), key=lambda x: x[0],
                       default=(score, m))
        if step[0] <= score:
            return m
        score, m = step


def match_counts(pred: DiagramGraph, truth: DiagramGraph) -> tuple[int, int, int, int, int, int]:
    """(node tp, node pred, node truth, edge tp, edge pred, edge truth) under :func:`strict_matching`."""
    m = strict_matching(pred, truth)
    tedges = {(e.source, e.target) for e in truth.edges}
    pedges = {(e.source, e.target) for e in pred.edges}
    etp = sum(1 for a, b in pedges if a in m and b in m and (m[a], m[b]) in tedges)
    return len(m), len(pred.nodes), len(truth.nodes), etp, len(pedges), len(tedges)


def prf(tp: int, npred: int, ntruth: int) -> tuple[float, float, float]:
    p = tp / npred if npred else (1.0 if ntruth == 0 else 0.0)
    r = tp / ntruth if ntruth else 1.0
    f = 2 * p * r / (p + r) if p + r else 0.0
    return p, r, f


def pooled_f1(rows: list[list[int]]) -> tuple[float, float]:
    c = [sum(col) for col in zip(*rows, strict=True)] if rows else [0] * 7
    return prf(c[0], c[1], c[2])[2], prf(c[3], c[4], c[5])[2]


def bootstrap(rows: list[list[int]], stat, n_boot: int = 1000, seed: int = 0) -> list[tuple[float, float]]:
    """95% percentile intervals of each value of ``stat(rows)`` over items resampled with replacement."""
    rng = np.random.default_rng(seed)
    k = len(rows)
    if k == 0:
        return []
    draws = np.array([stat([rows[i] for i in rng.integers(0, k, k)]) for _ in range(n_boot)])
    return [(float(np.percentile(draws[:, j], 2.5)), float(np.percentile(draws[:, j], 97.5)))
            for j in range(draws.shape[1])]


def report(name: str, rows: list[list[int]]) -> str:
    c = [sum(col) for col in zip(*rows, strict=True)]
    np_, nr, nf = prf(c[0], c[1], c[2])
    ep, er, ef = prf(c[3], c[4], c[5])
    (nlo, nhi), (elo, ehi) = bootstrap(rows, pooled_f1)
    return (f"{name:<40} n={len(rows):>4}  node P/R/F1 {np_:.3f}/{nr:.3f}/{nf:.3f} [{nlo:.3f}, {nhi:.3f}]   "
            f"edge P/R/F1 {ep:.3f}/{er:.3f}/{ef:.3f} [{elo:.3f}, {ehi:.3f}]")


def knob_buckets(style: str, d) -> list[str]:
    """Bucket names of one item: the style, and style/knob=value for each recorded knob."""
    out = [style]
    knobs = dict(d.knobs) or {k: d.meta[k] for k in ("splines", "route", "rankdir") if d.meta.get(k) is not None}
    for k, v in sorted(knobs.items()):
        if isinstance(v, (bool, int, float, str)) and not (isinstance(v, float) and not v.is_integer()):
            out.append(f"{style}/{k}={v}")
    return out


def realfig_items(root: Path) -> list[tuple[str, Path, Path]]:
    """(name, image, graph.json) of every figure folder (image.png, .jpg, .jpeg or .webp)."""
    items = []
    for d in sorted(p for p in root.iterdir() if p.is_dir()):
        image = next((d / f"image{ext}" for ext in (".png", ".jpg", ".jpeg", ".webp") if (d / f"image{ext}").is_file()),
                     None)
        if image is not None and (d / "graph.json").is_file():
            items.append((d.name, image, d / "graph.json"))
    return items


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=60, help="diagrams per style")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--styles", default="graphviz,pillow")
    ap.add_argument("--realfig", type=Path, default=Path("/work/shared/dev-data/realfig"))
    ap.add_argument("--no-realfig", action="store_true")
    ap.add_argument("--show-errors", action="store_true")
    ap.add_argument("--config", type=Path, default=None, help="a sciflow config TOML (e.g. another layout backend)")
    ap.add_argument("--out", type=Path, default=None, help="write every item's counts and knobs to this JSON file")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)
    from sciflow.bench.synth.browser import Browser
    from sciflow.bench.synth.styles import STYLES, make_item

    parser = Parser(load_config(args.config) if args.config else None)
    print(f"parser backends: {parser.backends}", file=sys.stderr)
    buckets: dict[str, list[list[int]]] = defaultdict(list)
    timings: dict[str, list[float]] = defaultdict(list)
    per_kpx: list[float] = []
    dump: list[dict] = []
    browser = None
    for style in args.styles.split(","):
        if STYLES[style][1] and browser is None:
            browser = Browser()
        for i in range(args.n):
            seed = args.seed * 100003 + i
            if i % 20 == 0:
                print(f"[{style} {i}/{args.n}]", file=sys.stderr, flush=True)
            try:
                d = make_item(style, seed, browser)
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
            for b in [*knob_buckets(style, d), "overall"]:
                buckets[b].append(c)
            dump.append({"style": style, "seed": seed, "counts": c[:6], "knobs": d.knobs or d.meta})
            if args.show_errors and (c[0] < c[2] or c[3] < c[5] or c[1] > c[0] or c[4] > c[3]):
                print(f"  {style} seed={seed} {d.image.shape[:2]} counts={c[:6]}")
    if browser is not None:
        browser.close()
    print(f"== synthetic diagrams (--n {args.n} per style, --seed {args.seed}; F1 [95% bootstrap interval])")
    for name in sorted(buckets, key=lambda b: (b == "overall", b.count("/"), b)):
        print(report(name, buckets[name]))
    print("== seconds per image (median / p90)")
    for k, v in timings.items() if per_kpx else ():
        print(f"{k:<18} {statistics.median(v):.3f} / {float(np.percentile(v, 90)):.3f}")
    if per_kpx:
        print(f"{'total per 1000px':<18} {statistics.median(per_kpx):.3f} / {float(np.percentile(per_kpx, 90)):.3f}")
    if args.realfig.is_dir() and not args.no_realfig:
        import warnings

        print("== real figures (strict labels, strict directed edges)")
        rows = []
        for name, image, graph in realfig_items(args.realfig):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                truth = load_graph(graph)
            res = parser(image, item_id=name)
            c = list(match_counts(res.graph, truth)) + [1]
            rows.append(c)
            n3, e3 = prf(c[0], c[1], c[2]), prf(c[3], c[4], c[5])
            print(f"{name:<40} node P/R/F1 {n3[0]:.3f}/{n3[1]:.3f}/{n3[2]:.3f}   "
                  f"edge P/R/F1 {e3[0]:.3f}/{e3[1]:.3f}/{e3[2]:.3f}  ({sum(res.timings.values()):.2f}s)")
            dump.append({"style": "realfig", "item": name, "counts": c[:6]})

        def macro(rs: list[list[int]]) -> tuple[float, float]:
            return (float(np.mean([prf(r[0], r[1], r[2])[2] for r in rs])),
                    float(np.mean([prf(r[3], r[4], r[5])[2] for r in rs])))

        node_f1, edge_f1 = macro(rows)
        (nlo, nhi), (elo, ehi) = bootstrap(rows, macro)
        print(f"macro over {len(rows)} real figures: node F1 {node_f1:.3f} [{nlo:.3f}, {nhi:.3f}]  "
              f"edge F1 {edge_f1:.3f} [{elo:.3f}, {ehi:.3f}]")
    if args.out:
        import json

        args.out.write_text(json.dumps(dump, indent=1, default=str))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
