"""Does the metric mean what it says? Score the perturbation suite end to end.

    .venv/bin/python benchmarks/bench_metric_validity.py [--refs reference_graphs] [--severities 0 1 2 3]
        [--seed 0] [--jobs 2] [--limit N] [--no-parse] [--out runs/validity]

For every reference and severity K, the perturbed generator renders the canonical graph with K
controlled structural errors (K = 0: the clean render); the inverse parser turns each image
back into a graph (``--no-parse`` scores the damaged graphs directly, isolating the metric from
the parser); the graph level scores it against the reference. Printed:

- the graph score of clean renders (target >= 0.95);
- Spearman correlation between injected error count and graph score, pooled over all
  items and as the mean of per-item correlations (target <= -0.9);
- per error type, the share of injections that the diagnostics name correctly (target >= 0.9).
  Correspondence: drop_node -> its label among the missing nodes; drop_edge -> the pair among
  the missing edges; reverse_edge -> the pair among the reversed edges; add_edge -> the pair
  among the wrong predicted edges (unsupported, reversed or unmatched endpoint); add_node ->
  its label among the hallucinated nodes; merge_nodes -> one of the two labels missing or
  matched below exact; misspell_label -> a matched pair for that component whose labels
  differ; swap_labels -> a missing edge at either node (when the two nodes' edges differ).
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path

from scipy.stats import spearmanr

from sciflow.config import load_config
from sciflow.embedding import get_embedder
from sciflow.generators import PerturbedGenerator, run_generator
from sciflow.graph import DiagramGraph, load_graph
from sciflow.metrics.graph_level import GraphLevelResult, graph_level


def named(rec: dict, res: GraphLevelResult, pred: DiagramGraph, ref: DiagramGraph) -> bool | None:
    """Whether the diagnostics name the injected error (None: not observable, skipped)."""
    d = res.diagnostics()
    ref_lab = {n.id: n.label for n in ref.nodes}
    missing_nodes = {m["label"] for m in d["missing_nodes"]}
    missing_edges = {(e["source_label"], e["target_label"]) for e in d["missing_edges"]}
    wrong = {(e["source_label"], e["target_label"]) for k in ("unsupported_edges", "reversed_edges",
                                                               "unmatched_endpoint_edges") for e in d[k]}
    reversed_ = {(e["source_label"], e["target_label"]) for e in d["reversed_edges"]}
    pred_lab = {n.id: n.label for n in pred.nodes}
    halluc = {pred_lab[i] for i in d["hallucinated_nodes"]}
    t = rec["type"]
    if t == "drop_node":
        return rec["label"] in missing_nodes
    if t == "drop_edge":
        return (rec["source_label"], rec["target_label"]) in missing_edges
    if t == "reverse_edge":
        return (rec["target_label"], rec["source_label"]) in reversed_
    if t == "add_edge":
        return (rec["source_label"], rec["target_label"]) in wrong
    if t == "add_node":
        return rec["label"] in halluc
    if t == "merge_nodes":
        exact = {(p["ref_label"]) for p in d["matched_nodes"] if p["string_similarity"] >= 0.999}
        return any(lab not in exact for lab in rec["labels"])
    if t == "misspell_label":
        return any(p["ref_label"] == rec["label"] and p["pred_label"] != p["ref_label"] for p in d["matched_nodes"])
    if t == "swap_labels":
        a, b = rec["nodes"]
        nbrs = {x: ({(ref_lab[e.source], ref_lab[e.target]) for e in ref.edges if x in (e.source, e.target)})
                for x in (a, b)}
        if not nbrs[a] and not nbrs[b]:
            return None
        involved = {ref_lab[a], ref_lab[b]}
        return any(s in involved or t_ in involved for s, t_ in missing_edges)
    raise ValueError(t)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--refs", type=Path, default=Path("reference_graphs"))
    ap.add_argument("--severities", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="only the first N references")
    ap.add_argument("--no-parse", action="store_true", help="score the damaged graphs, not parsed images")
    ap.add_argument("--out", type=Path, default=Path("runs/validity"))
    args = ap.parse_args()

    config = load_config()
    refs_dir = args.refs
    if args.limit:
        refs_dir = args.out / "refs"
        refs_dir.mkdir(parents=True, exist_ok=True)
        for p in sorted(args.refs.glob("*.json"))[: args.limit]:
            (refs_dir / p.name).write_bytes(p.read_bytes())
    refs = {p.stem: load_graph(p) for p in sorted(refs_dir.glob("*.json"))}
    embedder = get_embedder(config.matching.embedder)

    rows = []
    t0 = time.perf_counter()
    for k in args.severities:
        gen_dir = args.out / f"perturbed-{k}"
        run_generator(PerturbedGenerator(severity=k, seed=args.seed), refs_dir, gen_dir)
        records = {p.stem: json.loads(p.read_text()) for p in (gen_dir / "injected").glob("*.json")}
        if args.no_parse:
            preds = {i: DiagramGraph.from_dict(r["graph"]) for i, r in records.items()}
        else:
            from sciflow.parse_batch import parse_many

            images = sorted(gen_dir.glob("*.png"))
            outcomes = parse_many(images, config, jobs=args.jobs, cache_dir=args.out / "cache")
            preds = {o.item_id: o.graph for o in outcomes if o.graph is not None}
            for o in outcomes:
                if o.error:
                    print(f"parse failed: {o.path}: {o.error}")
        for item_id, ref in refs.items():
            pred = preds.get(item_id)
            if pred is None:
                continue
            res = graph_level(pred, ref, config.matching, config.graph, embedder=embedder)
            errs = records.get(item_id, {}).get("errors", [])
            rows.append({"id": item_id, "k": k, "score": res.score, "errors": errs,
                         "named": [named(e, res, pred, ref) for e in errs]})
    elapsed = time.perf_counter() - t0

    print(f"items: {len(refs)} references x severities {args.severities}; "
          f"{'damaged graphs (no parser)' if args.no_parse else 'render -> parse -> score'}; {elapsed:.0f} s")
    clean = [r["score"] for r in rows if r["k"] == 0]
    if clean:
        print(f"clean renders: mean graph score {statistics.fmean(clean):.3f} "
              f"(min {min(clean):.3f}; {sum(s >= 0.95 for s in clean)}/{len(clean)} >= 0.95)")
    ks = [r["k"] for r in rows]
    scores = [r["score"] for r in rows]
    if len(set(ks)) > 1:
        rho = spearmanr(ks, scores).statistic
        per_item = []
        for item_id in refs:
            sub = [(r["k"], r["score"]) for r in rows if r["id"] == item_id]
            if len({s for _, s in sub}) > 1:
                per_item.append(spearmanr([k for k, _ in sub], [s for _, s in sub]).statistic)
        print(f"Spearman(errors, graph score): pooled {rho:.3f}; mean per item {statistics.fmean(per_item):.3f}")
        for k in sorted(set(ks)):
            sk = [r["score"] for r in rows if r["k"] == k]
            print(f"  K={k}: mean graph score {statistics.fmean(sk):.3f} (n={len(sk)})")
    by_type: dict[str, list[bool]] = {}
    for r in rows:
        for e, ok in zip(r["errors"], r["named"], strict=True):
            if ok is not None:
                by_type.setdefault(e["type"], []).append(ok)
    print("diagnostics name the injected error:")
    for t, oks in sorted(by_type.items()):
        print(f"  {t:15s} {sum(oks)}/{len(oks)} = {sum(oks) / len(oks):.2f}")
    (args.out / "validity_rows.json").write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
