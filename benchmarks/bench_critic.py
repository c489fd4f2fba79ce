"""How good is the critic? Edit-instruction precision/recall, judgement accuracy, and the loop.

    .venv/bin/python benchmarks/bench_critic.py [--refs sciflow/data/sciflow-bench-60] [--seeds 3] [--kmax 3]
        [--embedder minilm|none] [--max-steps 10] [--parse N] [--json OUT.json]

Items: every reference graph clean, and perturbed (:func:`sciflow.bench.perturb.perturb_graph`, all
error types) with K = 1..kmax errors under seeds 0..seeds-1 (mixed with the item id and K).
The critic sees the damaged graph.

Correspondence (an instruction *matches* an injected error; labels compared after folding;
edge endpoints by the reference labels of the ids in the record; instruction edge endpoints
name boxes by their label after relabelling, which under the default rule is the reference label):

==================  ===============================================================
injected            matching instruction
==================  ===============================================================
drop_node X         ``add_node`` label X
drop_edge A->B      ``add_edge`` A -> B
reverse_edge A->B   ``reverse_edge`` of the arrow drawn B -> A
add_edge A->B       ``remove_edge`` A -> B
add_node X          ``remove_node`` label X
merge_nodes A, B    ``split_node`` of the box "A / B" into {A, B}
misspell_label      ``relabel`` from the misspelling to the label
swap_labels A, B    both ``relabel`` B -> A and ``relabel`` A -> B (one alone matches nothing)
==================  ===============================================================

Two special cases: an ``add_edge`` drawn from/to a box that an earlier ``merge_nodes`` of the
same sample created is *covered* (found when that merge's ``split_node`` matched; it has no own
instruction, since the split redraws the merged boxes' arrows from the reference); a
``swap_labels`` of two nodes whose exchange leaves the labelled graph unchanged (same labelled
in- and out-neighbours) is *void* (the damaged diagram is correct) and left out of recall.

- precision = matching instructions / all instructions on perturbed items
  (instructions on clean items are reported as false alarms);
- recall = injected errors found / non-void injected errors;
- judgement accuracy: a clean item (or one whose errors are all void) should pass, any other fail;
- one-shot repair: applying all instructions once (:func:`apply_instructions`) makes the critique pass;
- loop: :func:`rectify` with the perturbed generator (graph-aware) and the graph editor, per K and
  seed, under SciGen-Verifier's policy (edit when <= 2 local instructions, else regenerate; a
  regeneration is a fresh damaged sample, next seed) with decay 0 (regeneration ignores the
  critique) and decay 1 (each regeneration has one error fewer), and with the editor always used.

``--parse N``: the same precision/recall/accuracy through Graphviz render -> parser for the first
N references (clean and K=1 seed 0), reported separately.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from sciflow.bench.perturb import PerturbationError, perturb_graph
from sciflow.config import MatchingConfig
from sciflow.critic import CritiqueRule, apply_instructions, critique, rectify
from sciflow.critic.rectify import GraphEditor, graph_aware_generator
from sciflow.format.graph import DiagramGraph, load_graph
from sciflow.metrics.matching import fold
from sciflow.models.embedding import get_embedder


def item_seed(ref: DiagramGraph, k: int, seed: int) -> int:
    """Per item, K and seed (perturb_graph draws error types from its seed, so one seed for all
    items would give every item the same types)."""
    return int(hashlib.sha256(f"{seed}:{k}:{ref.id}".encode()).hexdigest()[:12], 16)


def _f(s: str) -> str:
    return fold(s)


def void_swap(ref: DiagramGraph, a: str, b: str) -> bool:
    lab = {n.id: n.label for n in ref.nodes}
    sw = dict(lab)
    sw[a], sw[b] = lab[b], lab[a]
    edges = {(lab[e.source], lab[e.target]) for e in ref.edges}
    return edges == {(sw[e.source], sw[e.target]) for e in ref.edges}


def match_errors(ref: DiagramGraph, records: list[dict[str, Any]], instructions: list) -> dict[str, Any]:
    """Which instructions match which injected errors (see the module docstring)."""
    rl = {n.id: n.label for n in ref.nodes}
    ins = [(i.op, {k: v for k, v in i.args.items()}) for i in instructions]
    used: set[int] = set()

    def find(op: str, pred) -> int | None:
        for k, (o, a) in enumerate(ins):
            if k not in used and o == op and pred(a):
                return k
        return None

    found = 0
    void = 0
    per_type: dict[str, list[int]] = {}
    split_ok: dict[str, bool] = {}
    deferred = []
    for r in records:
        t = r["type"]
        hit: list[int | None] = []
        if t == "swap_labels" and void_swap(ref, *r["nodes"]):
            void += 1
            continue
        if t == "drop_node":
            hit = [find("add_node", lambda a, r=r: _f(a["label"]) == _f(r["label"]))]
        elif t == "add_node":
            hit = [find("remove_node", lambda a, r=r: _f(a["label"]) == _f(r["label"]))]
        elif t in ("drop_edge", "add_edge", "reverse_edge"):
            s, d = _f(rl[r["source"]]), _f(rl[r["target"]])
            if t == "add_edge" and (r["source"] in split_ok or r["target"] in split_ok):
                deferred.append(r)
                continue
            op = {"drop_edge": "add_edge", "add_edge": "remove_edge", "reverse_edge": "reverse_edge"}[t]
            if t == "reverse_edge":
                s, d = d, s  # the arrow as drawn
            hit = [find(op, lambda a, s=s, d=d: _f(a["source"]) == s and _f(a["target"]) == d)]
        elif t == "misspell_label":
            hit = [find("relabel", lambda a, r=r: a["from"] == r["misspelled"] and _f(a["to"]) == _f(r["label"]))]
        elif t == "merge_nodes":
            want = sorted(_f(x) for x in r["labels"])
            k = find(
                "split_node",
                lambda a, r=r, want=want: (
                    _f(a["label"]) == _f(r["merged_label"]) and sorted(_f(x) for x in a["into"]) == want
                ),
            )
            hit = [k]
            split_ok.update({n: k is not None for n in r["nodes"]})
        elif t == "swap_labels":
            la, lb = r["labels"]
            k1 = find("relabel", lambda a, la=la, lb=lb: _f(a["from"]) == _f(lb) and _f(a["to"]) == _f(la))
            if k1 is not None:
                used.add(k1)
            k2 = find("relabel", lambda a, la=la, lb=lb: _f(a["from"]) == _f(la) and _f(a["to"]) == _f(lb))
            if k1 is not None and k2 is None:
                used.discard(k1)
            hit = [k1, k2] if k1 is not None and k2 is not None else [None]
        ok = all(h is not None for h in hit)
        if ok:
            used.update(h for h in hit if h is not None)
        found += ok
        per_type.setdefault(t, []).append(int(ok))
    for r in deferred:  # add_edge on a merged box: covered by the split
        ok = bool(split_ok.get(r["source"]) or split_ok.get(r["target"]))
        found += ok
        per_type.setdefault("add_edge", []).append(int(ok))
    return {
        "errors": len(records) - void,
        "found": found,
        "void": void,
        "instructions": len(ins),
        "matching_instructions": len(used),
        "per_type": per_type,
    }


def evaluate(pairs, matching, embedder, rule, label: str) -> dict[str, Any]:
    """pairs: (ref, predicted graph, records or None for clean)."""
    tp_i = n_i = found = n_err = void = 0
    false_alarm_ins = 0
    correct_judgement = n_items = 0
    repaired_once = n_pert = 0
    per_type: dict[str, list[int]] = {}
    clean_pass = n_clean = 0
    misses: list[str] = []
    for ref, pred, records in pairs:
        c = critique(pred, ref, rule=rule, matching=matching, embedder=embedder)
        n_items += 1
        if records is None:
            n_clean += 1
            clean_pass += c.passed
            correct_judgement += c.passed
            false_alarm_ins += len(c.instructions)
            continue
        m = match_errors(ref, records, c.instructions)
        tp_i += m["matching_instructions"]
        n_i += m["instructions"]
        found += m["found"]
        n_err += m["errors"]
        void += m["void"]
        for t, xs in m["per_type"].items():
            per_type.setdefault(t, []).extend(xs)
        should_pass = m["errors"] == 0
        correct_judgement += c.passed == should_pass
        if m["found"] < m["errors"] or m["matching_instructions"] < m["instructions"]:
            misses.append(f"{ref.id}: injected {[r['type'] for r in records]}, critic {[i.op for i in c.instructions]}")
        if not should_pass:
            n_pert += 1
            fixed = apply_instructions(pred, c.instructions)
            repaired_once += critique(fixed, ref, rule=rule, matching=matching, embedder=embedder).passed
    return {
        "setting": label,
        "items": n_items,
        "clean_items": n_clean,
        "instruction_precision": tp_i / n_i if n_i else 1.0,
        "instruction_recall": found / n_err if n_err else 1.0,
        "instructions": n_i,
        "injected_errors": n_err,
        "void_errors": void,
        "recall_by_type": {t: sum(x) / len(x) for t, x in sorted(per_type.items())},
        "judgement_accuracy": correct_judgement / n_items if n_items else 1.0,
        "clean_pass_rate": clean_pass / n_clean if n_clean else None,
        "false_alarm_instructions_on_clean": false_alarm_ins,
        "one_shot_repair_rate": repaired_once / n_pert if n_pert else None,
        "mismatched_examples": misses[:8],
    }


def loop(refs, ks, seeds, matching, embedder, rule, max_steps: int, decay: int, limit: int | None) -> dict[str, Any]:
    trajs = []
    editor = GraphEditor(render=False)
    for k in ks:
        for s in seeds:
            gen = graph_aware_generator("perturbed", render=False, severity=k, seed=s, decay=decay)
            for ref in refs:
                try:
                    trajs.append(
                        rectify(
                            ref,
                            gen,
                            edit=editor,
                            rule=rule,
                            matching=matching,
                            embedder=embedder,
                            max_steps=max_steps,
                            local_edit_limit=limit,
                        )
                    )
                except PerturbationError:
                    continue
    failed0 = [t for t in trajs if not t.steps[0].passed]
    rep = [t for t in failed0 if t.passed]
    return {
        "policy": f"edit when <= {limit} local instructions, else regenerate (decay {decay})",
        "runs": len(trajs),
        "failed_initially": len(failed0),
        "repaired_share": len(rep) / len(failed0) if failed0 else None,
        "mean_steps_repaired": statistics.fmean(t.n_steps for t in rep) if rep else None,
        "edits": sum(s.action == "edit" for t in trajs for s in t.steps),
        "regenerations": sum(s.action == "regenerate" for t in trajs for s in t.steps),
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--refs", default="sciflow/data/sciflow-bench-60")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--kmax", type=int, default=3)
    ap.add_argument("--embedder", default="minilm", choices=["minilm", "none"])
    ap.add_argument("--max-steps", type=int, default=10)
    ap.add_argument("--parse", type=int, default=0, metavar="N", help="also through render -> parse for N items")
    ap.add_argument("--no-loop", action="store_true")
    ap.add_argument("--json", type=Path, help="write all numbers here")
    args = ap.parse_args(argv)

    matching = MatchingConfig(embedder=args.embedder)
    t0 = time.perf_counter()
    embedder = get_embedder(args.embedder)
    rule = CritiqueRule()
    refs = [load_graph(p) for p in sorted(Path(args.refs).glob("*.json"))]
    ks = list(range(1, args.kmax + 1))
    seeds = list(range(args.seeds))
    pairs = [(r, r, None) for r in refs]
    skipped = 0
    for k in ks:
        for s in seeds:
            for r in refs:
                try:
                    bad, rec = perturb_graph(r, k, item_seed(r, k, s))
                except PerturbationError:
                    skipped += 1
                    continue
                pairs.append((r, bad, rec))
    out: dict[str, Any] = {
        "embedder": embedder.name,
        "references": len(refs),
        "K": ks,
        "seeds": seeds,
        "skipped_perturbations": skipped,
    }
    out["graphs"] = evaluate(pairs, matching, embedder, rule, "graphs")
    for k in ks:
        sub = [p for p in pairs if p[2] is None or len(p[2]) == k]
        r = evaluate(sub, matching, embedder, rule, f"graphs K={k}")
        out[f"graphs_K{k}"] = {
            x: r[x]
            for x in ("instruction_precision", "instruction_recall", "judgement_accuracy", "one_shot_repair_rate")
        }
    if not args.no_loop:
        out["loop"] = [
            loop(refs, ks, seeds, matching, embedder, rule, args.max_steps, decay=0, limit=2),
            loop(refs, ks, seeds, matching, embedder, rule, args.max_steps, decay=1, limit=2),
            loop(refs, ks, seeds, matching, embedder, rule, args.max_steps, decay=0, limit=None),
        ]
        out["loop"][2]["policy"] = "always edit"
    if args.parse:
        from sciflow.bench.drawing import render_graph
        from sciflow.pipeline import Parser

        parser = Parser()
        ppairs = []
        with tempfile.TemporaryDirectory() as tmp:
            for r in refs[: args.parse]:
                for bad, rec in [(r, None), perturb_graph(r, 1, item_seed(r, 1, 0))]:
                    png = render_graph(bad, Path(tmp) / f"{r.id}_{'clean' if rec is None else 'bad'}.png")
                    ppairs.append((r, parser(png).graph, rec))
        out["render_parse"] = evaluate(ppairs, matching, embedder, rule, f"render->parse, {args.parse} refs, K=1")
    out["seconds"] = round(time.perf_counter() - t0, 1)

    g = out["graphs"]
    print(f"critic benchmark: {len(refs)} references, K={ks}, seeds={seeds}, embedder {embedder.name}")
    print(
        f"  graphs: {g['items']} items ({g['clean_items']} clean), {g['injected_errors']} injected errors "
        f"({g['void_errors']} void), {g['instructions']} instructions"
    )
    print(
        f"  instruction precision {g['instruction_precision']:.3f}  recall {g['instruction_recall']:.3f}  "
        f"judgement accuracy {g['judgement_accuracy']:.3f}  clean pass rate {g['clean_pass_rate']:.3f}  "
        f"one-shot repair {g['one_shot_repair_rate']:.3f}"
    )
    for k in ks:
        x = out[f"graphs_K{k}"]
        print(
            f"    K={k}: P {x['instruction_precision']:.3f}  R {x['instruction_recall']:.3f}  "
            f"acc {x['judgement_accuracy']:.3f}  one-shot repair {x['one_shot_repair_rate']:.3f}"
        )
    print("  recall by error type: " + ", ".join(f"{t} {v:.2f}" for t, v in g["recall_by_type"].items()))
    for lp in out.get("loop", []):
        steps = "-" if lp["mean_steps_repaired"] is None else f"{lp['mean_steps_repaired']:.2f}"
        print(
            f"  loop [{lp['policy']}]: repaired {lp['repaired_share']:.3f} of {lp['failed_initially']} within "
            f"{args.max_steps} steps, mean steps {steps} (edits {lp['edits']}, regenerations {lp['regenerations']})"
        )
    if "render_parse" in out:
        p = out["render_parse"]
        print(
            f"  render->parse ({p['items']} items): P {p['instruction_precision']:.3f}  R "
            f"{p['instruction_recall']:.3f}  accuracy {p['judgement_accuracy']:.3f}  clean pass "
            f"{p['clean_pass_rate']:.3f}"
        )
    if g["mismatched_examples"]:
        print("  examples of mismatches:")
        for line in g["mismatched_examples"]:
            print("    " + line)
    print(f"  ({out['seconds']} s)")
    if args.json:
        args.json.write_text(json.dumps(out, indent=2, ensure_ascii=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
