"""Does the metric mean what it says? The adversary table, and the perturbation suite end to end.

    .venv/bin/python benchmarks/bench_metric_validity.py --adversaries [--refs sciflow/data/sciflow-bench-60] [--seed 0]
    .venv/bin/python benchmarks/bench_metric_validity.py [--refs sciflow/data/sciflow-bench-60] [--severities 0 1 2 3]
        [--seed 0] [--jobs 2] [--limit N] [--no-parse] [--out runs/validity]

``--adversaries`` scores, on every reference and without the parser, the graph and text level
of each prediction in :mod:`sciflow.bench.adversaries` (perfect copy, shortcut arrows only, ...,
best 2 nodes + 1 arrow) and of the K = 0..4 injected-error perturbations
(:func:`sciflow.bench.perturb.perturb_graph`, seed ``--seed``). Printed: each one's mean graph and
text score and on how many items it scores below the two-error perturbation on each level
(target: all, for every adversary but the perfect copy, which must score 1.0); whether the
component list without arrows stays below the prediction that draws every box and half the
reference arrows right; the per-K means; and the share of items whose score falls with each
added error (K - 1 -> K, same seed; target 100%).

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

from sciflow.bench.generators import PerturbedGenerator, run_generator
from sciflow.config import load_config
from sciflow.format.graph import DiagramGraph, load_graph
from sciflow.metrics.graph_level import GraphLevelResult, graph_level
from sciflow.models.embedding import get_embedder


def named(rec: dict, res: GraphLevelResult, pred: DiagramGraph, ref: DiagramGraph) -> bool | None:
    """Whether the diagnostics name the injected error (None: not observable, skipped)."""
    d = res.diagnostics()
    ref_lab = {n.id: n.label for n in ref.nodes}
    missing_nodes = {m["label"] for m in d["missing_nodes"]}
    missing_edges = {(e["source_label"], e["target_label"]) for e in d["missing_edges"]}
    wrong = {(e["source_label"], e["target_label"]) for k in ("unsupported_edges", "reversed_edges",
                                                               "unmatched_endpoint_edges", "two_way_edges")
             for e in d[k]}
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


def adversary_table(refs: dict[str, DiagramGraph], config, embedder, seed: int, out: Path) -> None:
    from sciflow.bench.adversaries import ADVERSARIES, half_the_arrows, two_nodes_of_edge
    from sciflow.bench.perturb import PerturbationError, perturb_graph
    from sciflow.metrics.text_level import text_level

    def both(pred: DiagramGraph, ref: DiagramGraph) -> tuple[float, float]:
        g = graph_level(pred, ref, config.matching, config.graph, embedder=embedder).score
        t = text_level(pred, ref, config.text, config.matching, (), embedder).score
        return g, t

    per_k: dict[int, dict[str, tuple[float, float]]] = {k: {} for k in range(5)}
    last_type: dict[tuple[int, str], str] = {}  # (K, item) -> type of the K-th error
    for item, ref in refs.items():
        item_seed = PerturbedGenerator(seed=seed).item_seed(ref)  # the seed `sciflow perturb` uses
        for k in range(5):
            try:
                damaged, errors = (ref, []) if k == 0 else perturb_graph(ref, k, item_seed)
                if errors:
                    last_type[(k, item)] = errors[-1]["type"]
            except PerturbationError:
                continue
            per_k[k][item] = both(damaged, ref)
    k2 = per_k[2]
    rows: dict[str, dict[str, tuple[float, float]]] = {}
    for name, build in ADVERSARIES.items():
        rows[name] = {i: both(build(ref, seed), ref) for i, ref in refs.items()}
    best2: dict[str, tuple[float, float]] = {}
    for i, ref in refs.items():
        cands = [both(two_nodes_of_edge(ref, (e.source, e.target)), ref) for e in ref.edges]
        if cands:
            best2[i] = (max(c[0] for c in cands), max(c[1] for c in cands))
    rows["best 2 nodes + 1 arrow"] = best2
    half = {i: both(half_the_arrows(ref, seed), ref) for i, ref in refs.items()}
    print(f"adversary table: {len(refs)} references, seed {seed}, embedder {embedder.name}")
    print(f"{'prediction':32s} {'graph':>7s} {'text':>7s}   below K=2 (graph / text)")
    table = {}
    for name, vals in [("two injected errors (K=2)", k2), *rows.items()]:
        shared = [i for i in vals if i in k2]
        g_mean = statistics.fmean(v[0] for v in vals.values())
        t_mean = statistics.fmean(v[1] for v in vals.values())
        below_g = sum(vals[i][0] < k2[i][0] for i in shared)
        below_t = sum(vals[i][1] < k2[i][1] for i in shared)
        table[name] = {"graph": g_mean, "text": t_mean, "n": len(vals), "below_k2_graph": below_g,
                       "below_k2_text": below_t, "n_shared": len(shared)}
        tail = "" if name.startswith("two injected") else f"   {below_g}/{len(shared)} / {below_t}/{len(shared)}"
        print(f"{name:32s} {g_mean:7.3f} {t_mean:7.3f}{tail}")
    # where the prompt-order chain is not below K=2: how far is it from the reference?
    from sciflow.bench.adversaries import chain_in_prompt_order

    chain_rows = rows["chain in prompt order"]
    close = []
    for i, ref in refs.items():
        if i in k2 and chain_rows[i][0] >= k2[i][0]:
            ch = chain_in_prompt_order(ref, seed)
            cl = {n.id: n.label for n in ch.nodes}
            rl = {n.id: n.label for n in ref.nodes}
            a = {(cl[e.source], cl[e.target]) for e in ch.edges}
            b = {(rl[e.source], rl[e.target]) for e in ref.edges}
            close.append(len(a ^ b))
    if close:
        print(f"chain in prompt order, on the {len(close)} items where it is not below K=2: it differs from the "
              f"reference in {statistics.median(close):.0f} arrows (median; min {min(close)}, max {max(close)}): "
              f"those references are drawn in prompt order already")
    lst = rows["component list without arrows"]
    ok_g = sum(lst[i][0] < half[i][0] for i in refs)
    ok_t = sum(lst[i][1] < half[i][1] for i in refs)
    print(f"component list without arrows below every box + half the arrows: graph {ok_g}/{len(refs)}, "
          f"text {ok_t}/{len(refs)} (half-arrows means: graph {statistics.fmean(v[0] for v in half.values()):.3f}, "
          f"text {statistics.fmean(v[1] for v in half.values()):.3f})")
    print("per-K means (K injected errors, same seed):")
    for k in range(5):
        vals = per_k[k]
        print(f"  K={k}: graph {statistics.fmean(v[0] for v in vals.values()):.3f}  "
              f"text {statistics.fmean(v[1] for v in vals.values()):.3f}  (n={len(vals)})")
    falls: dict[str, list[bool]] = {"graph": [], "text": []}
    by_type: dict[str, list[tuple[bool, bool]]] = {}
    for k in range(1, 5):
        for i in per_k[k]:
            if i in per_k[k - 1]:
                g, t = per_k[k][i][0] < per_k[k - 1][i][0], per_k[k][i][1] < per_k[k - 1][i][1]
                falls["graph"].append(g)
                falls["text"].append(t)
                by_type.setdefault(last_type.get((k, i), "?"), []).append((g, t))
    for level, f in falls.items():
        print(f"  {level}: score falls with each added error on {sum(f)}/{len(f)} steps = {sum(f) / len(f):.1%}")
    print("  by the type of the error added at that step (graph falls / text falls / steps):")
    for t, v in sorted(by_type.items()):
        print(f"    {t:15s} {sum(g for g, _ in v):3d} / {sum(x for _, x in v):3d} / {len(v)}")
    out.mkdir(parents=True, exist_ok=True)
    (out / "adversary_table.json").write_text(json.dumps({
        "table": table, "per_k": {k: {i: list(v) for i, v in per_k[k].items()} for k in per_k},
        "falls": {lv: sum(f) / len(f) for lv, f in falls.items()}}, indent=1))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--refs", type=Path, default=Path("sciflow/data/sciflow-bench-60"))
    ap.add_argument("--severities", type=int, nargs="+", default=[0, 1, 2, 3])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--limit", type=int, default=None, help="only the first N references")
    ap.add_argument("--no-parse", action="store_true", help="score the damaged graphs, not parsed images")
    ap.add_argument("--out", type=Path, default=Path("runs/validity"))
    ap.add_argument("--adversaries", action="store_true", help="print the adversary table (no rendering) and stop")
    args = ap.parse_args()
    if args.adversaries:
        config = load_config()
        refs = {p.stem: load_graph(p) for p in sorted(args.refs.glob("*.json"))[: args.limit]}
        adversary_table(refs, config, get_embedder(config.matching.embedder), args.seed, args.out)
        return

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
            from sciflow.runs.parse_batch import parse_many

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
