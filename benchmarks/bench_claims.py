"""The claim benchmark: accuracy and macro-F1 per reasoning type.

    .venv/bin/python benchmarks/bench_claims.py [--refs sciflow/data/sciflow-bench-60] [--seed 0]
        [--per-type 6] [--parts refs,graphviz,perturbed,realfig] [--n N] [--realfig DIR]
        [--cache-dir .sciflow-cache/claims-bench] [--out benchmarks/results]

Claims: :func:`sciflow.claims.generate.generate_claims` per reference (balanced true/false per
type, seeded), gold labels from networkx (:func:`sciflow.claims.generate.gold_label`).

(i) ``refs``: the claims against their own reference graphs (closed world). Must be 100%.
(ii) ``graphviz``: against parses of clean Graphviz drawings of the references
    (:func:`sciflow.bench.drawing.render_graph`, then the parser with the default config).
(iii) ``perturbed``: against parses of the two-error perturbations (the ``perturbed``
    generator's damage, :class:`sciflow.bench.generators.PerturbedGenerator` severity 2 seed 0),
    gold from the damaged graph. A claim *touches an injected error* when the error changes it:
    true on the reference but not on the damaged graph, or naming a component the damage removed
    (dropped, merged); every such claim must come out refuted or not enough information.
(iv) ``realfig``: the 19 dev real figures (``image.png`` or ``.jpg``) with the hand-written claims of
    ``benchmarks/data/realfig_claims/<figure>.jsonl`` (gold labels written by hand from
    ``graph.json``).

Expected verdict on a parse (open world): the gold label, except that a claim naming a
component absent from the drawn graph expects ``not_enough_info`` (the parser cannot tell an
absent box from a missed one). Accuracy = share of claims whose verdict is the expected one;
macro-F1 over the expected classes. ``nei`` counts not-enough-information verdicts.
Parses are cached in ``--cache-dir`` by image SHA-256 and parser fingerprint.
Raw outputs: ``<out>/claims_<part>.json``.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

from sciflow.bench.drawing import render_graph
from sciflow.bench.generators import PerturbedGenerator
from sciflow.bench.perturb import perturb_graph
from sciflow.claims import NEI, check_graph, load_claims
from sciflow.claims.evidence import Regions, parse_with_regions
from sciflow.claims.generate import generate_claims, gold_label
from sciflow.claims.model import TYPES, Claim
from sciflow.config import load_config
from sciflow.format.graph import DiagramGraph, load_graph
from sciflow.metrics.matching import fold
from sciflow.models.embedding import get_embedder

ROOT = Path(__file__).resolve().parents[1]


def default_refs() -> Path:
    for p in (ROOT / "sciflow/data/sciflow-bench-60", ROOT / "reference_graphs"):
        if p.is_dir():
            return p
    return ROOT / "reference_graphs"


# ------------------------------------------------------------------ metrics
def macro_f1(expected: list[str], got: list[str]) -> float:
    classes = sorted(set(expected))
    f1s = []
    for c in classes:
        tp = sum(e == c and g == c for e, g in zip(expected, got, strict=True))
        fp = sum(e != c and g == c for e, g in zip(expected, got, strict=True))
        fn = sum(e == c and g != c for e, g in zip(expected, got, strict=True))
        f1s.append(2 * tp / (2 * tp + fp + fn) if tp else 0.0)
    return sum(f1s) / len(f1s) if f1s else 0.0


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for t in (*TYPES, "all"):
        sel = [r for r in rows if t == "all" or r["type"] == t]
        if not sel:
            continue
        exp, got = [r["expected"] for r in sel], [r["verdict"] for r in sel]
        decided = [(e, g) for e, g in zip(exp, got, strict=True) if e != NEI and g != NEI]
        out[t] = {"n": len(sel), "accuracy": round(sum(e == g for e, g in zip(exp, got, strict=True)) / len(sel), 4),
                  "macro_f1": round(macro_f1(exp, got), 4), "nei": sum(g == NEI for g in got),
                  "decided": len(decided),
                  "accuracy_decided": round(sum(e == g for e, g in decided) / len(decided), 4) if decided else None,
                  "expected": dict(Counter(exp)), "verdicts": dict(Counter(got))}
    return out


# ------------------------------------------------------------------ parses (cached)
class Parses:
    def __init__(self, cache_dir: Path, config: Any):
        from sciflow.pipeline import Parser

        self.parser = Parser(config)
        fp = json.dumps(self.parser.fingerprint(), sort_keys=True, default=str)
        self.key = hashlib.sha256(fp.encode()).hexdigest()[:16]
        self.dir = cache_dir / self.key
        self.dir.mkdir(parents=True, exist_ok=True)
        self.config = config
        self.hits = self.misses = 0
        self.seconds = 0.0

    def __call__(self, image: Path) -> tuple[DiagramGraph, Regions]:
        digest = hashlib.sha256(image.read_bytes()).hexdigest()
        f = self.dir / f"{digest}.json"
        if f.is_file():
            self.hits += 1
            d = json.loads(f.read_text("utf-8"))
            g = DiagramGraph.from_dict(d["graph"])
            lines = {(a, b): tuple(tuple(tuple(p) for p in line) for line in ls) for a, b, ls in d["polylines"]}
            return g, Regions(boxes={n.id: n.bbox for n in g.nodes if n.bbox}, polylines=lines, note=d["note"])
        self.misses += 1
        t = time.perf_counter()
        g, regions = parse_with_regions(image, self.config, self.parser)
        self.seconds += time.perf_counter() - t
        f.write_text(json.dumps({"graph": g.to_dict(), "note": regions.note,
                                 "polylines": [[a, b, [list(map(list, line)) for line in ls]]
                                               for (a, b), ls in regions.polylines.items()]}), "utf-8")
        return g, regions


# ------------------------------------------------------------------ rows
def rows_of(claims: list[Claim], report: Any, expected: list[str], extra: list[dict[str, Any]] | None = None
            ) -> list[dict[str, Any]]:
    out = []
    for k, (c, r, e) in enumerate(zip(claims, report.results, expected, strict=True)):
        row = {"id": c.id, "type": c.type, "kind": c.kind, "method": c.meta.get("method"), "negated": c.negated,
               "gold": c.label, "expected": e, "verdict": r.verdict, "explanation": r.explanation,
               "claim": c.describe()}
        if extra:
            row.update(extra[k])
        out.append(row)
    return out


def names_present(c: Claim, truth: DiagramGraph, resolve: dict[str, str] | None = None) -> bool:
    labels = {fold(n.label) for n in truth.nodes} | {fold(k) for k in (resolve or {})}
    groups = {fold(g.label or "") for g in truth.groups}
    return all(fold(x) in labels for x in c.names) and (c.group is None or fold(c.group) in groups)


def part_refs(refs: list[DiagramGraph], claims: dict[str, list[Claim]], cfg: Any, emb: Any) -> list[dict[str, Any]]:
    rows = []
    for g in refs:
        cs = claims[g.id]
        rep = check_graph(g, cs, config=cfg, embedder=emb)
        rows += rows_of(cs, rep, [c.label or "" for c in cs], [{"item": g.id}] * len(cs))
    return rows


def part_graphviz(refs: list[DiagramGraph], claims: dict[str, list[Claim]], cfg: Any, emb: Any, parses: Parses,
                  tmp: Path) -> list[dict[str, Any]]:
    rows = []
    for g in refs:
        png = render_graph(g, tmp / f"{g.id}.png")
        pg, regions = parses(png)
        cs = claims[g.id]
        rep = check_graph(pg, cs, config=cfg, embedder=emb, regions=regions)
        exp = [c.label if names_present(c, g) else NEI for c in cs]
        rows += rows_of(cs, rep, exp, [{"item": g.id, "parse_reliability": pg.meta.get("parse_reliability")}] * len(cs))
    return rows


def _touched(c: Claim, records: list[dict[str, Any]], ref_labels: dict[str, str]) -> bool:
    names = {fold(x) for x in c.names}
    for r in records:
        ids = [r.get(k) for k in ("node", "source", "target", "attached_to")] + list(r.get("nodes", []))
        labs = {fold(ref_labels[i]) for i in ids if i in ref_labels}
        if names & labs:
            return True
    return False


def part_perturbed(refs: list[DiagramGraph], claims: dict[str, list[Claim]], cfg: Any, emb: Any, parses: Parses,
                   tmp: Path, seed: int) -> list[dict[str, Any]]:
    gen = PerturbedGenerator(severity=2, seed=seed)
    rows = []
    for g in refs:
        bad, records = perturb_graph(g, 2, gen.item_seed(g))
        png = render_graph(bad, tmp / f"{g.id}.perturbed.png")
        pg, regions = parses(png)
        cs = claims[g.id]
        ref_lab = {n.id: n.label for n in g.nodes}
        resolve = {r["label"]: r["node"] for r in records if r["type"] == "misspell_label"}
        rep = check_graph(pg, cs, config=cfg, embedder=emb, regions=regions)
        exp, extra = [], []
        for c in cs:
            truth = gold_label(c, bad, resolve)
            present = names_present(c, bad, resolve)
            e = truth if present else NEI
            flips = c.label == "supported" and (truth != "supported" or not present)
            exp.append(e)
            extra.append({"item": g.id, "damaged_truth": truth, "touches_error": _touched(c, records, ref_lab),
                          "must_fail": flips, "errors": [r["type"] for r in records]})
        rows += rows_of(cs, rep, exp, extra)
    return rows


def part_realfig(folder: Path, cfg: Any, emb: Any, parses: Parses) -> list[dict[str, Any]]:
    rows = []
    for fig in sorted(p for p in folder.iterdir() if p.is_dir()):
        images = [fig / f"image{ext}" for ext in (".png", ".jpg", ".jpeg", ".webp")]
        image = next((p for p in images if p.is_file()), None)
        if image is None:
            continue
        claim_file = ROOT / "benchmarks/data/realfig_claims" / f"{fig.name}.jsonl"
        if not claim_file.is_file():
            print(f"no hand-written claims for {fig.name}", file=sys.stderr)
            continue
        cs = load_claims(claim_file)
        pg, regions = parses(image)
        rep = check_graph(pg, cs, config=cfg, embedder=emb, regions=regions)
        rows += rows_of(cs, rep, [c.label or "" for c in cs],
                        [{"item": fig.name, "parse_reliability": pg.meta.get("parse_reliability")}] * len(cs))
    return rows


def table(name: str, summary: dict[str, Any]) -> str:
    def cell(s: dict[str, Any]) -> str:
        return f"{s['accuracy']:.3f} / {s['macro_f1']:.3f} (n={s['n']}, nei={s['nei']})"

    cells = [cell(summary[t]) if t in summary else "—" for t in (*TYPES, "all")]
    return f"| {name} | " + " | ".join(cells) + " |"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--refs", type=Path, default=default_refs())
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--per-type", type=int, default=6)
    ap.add_argument("--parts", default="refs,graphviz,perturbed,realfig")
    ap.add_argument("--n", type=int, default=0, help="first N references only for the parse-based parts (0: all)")
    ap.add_argument("--realfig", type=Path, default=Path("/work/shared/dev-data/realfig"))
    ap.add_argument("--cache-dir", type=Path, default=ROOT / ".sciflow-cache/claims-bench")
    ap.add_argument("--out", type=Path, default=ROOT / "benchmarks/results")
    ap.add_argument("--embedder", default=None, help="override matching.embedder (default: the config's)")
    a = ap.parse_args(argv)
    cfg = load_config(overrides={"matching": {"embedder": a.embedder}} if a.embedder else None)
    emb = get_embedder(cfg.matching.embedder)
    refs = [load_graph(f) for f in sorted(a.refs.glob("*.json"))]
    claims = {g.id: generate_claims(g, seed=a.seed, per_type=a.per_type) for g in refs}
    parts = a.parts.split(",")
    a.out.mkdir(parents=True, exist_ok=True)
    parses = Parses(a.cache_dir, cfg) if set(parts) - {"refs"} else None
    few = refs[: a.n] if a.n else refs
    lines = ["| part | direct | parallel | sequential | analytical | all |", "|---|---|---|---|---|---|"]
    with tempfile.TemporaryDirectory() as tmp:
        for part in parts:
            t0 = time.perf_counter()
            if part == "refs":
                rows = part_refs(refs, claims, cfg, emb)
            elif part == "graphviz":
                rows = part_graphviz(few, claims, cfg, emb, parses, Path(tmp))
            elif part == "perturbed":
                rows = part_perturbed(few, claims, cfg, emb, parses, Path(tmp), a.seed)
            elif part == "realfig":
                rows = part_realfig(a.realfig, cfg, emb, parses)
            else:
                raise SystemExit(f"unknown part {part!r}")
            summary = summarise(rows)
            extra: dict[str, Any] = {}
            if part == "perturbed":
                must = [r for r in rows if r["must_fail"]]
                extra["error_touching"] = {
                    "n": len(must), "refuted": sum(r["verdict"] == "refuted" for r in must),
                    "nei": sum(r["verdict"] == NEI for r in must),
                    "supported": sum(r["verdict"] == "supported" for r in must),
                    "named_in_a_record": sum(r["touches_error"] for r in must)}
            doc = {"part": part, "seed": a.seed, "per_type": a.per_type, "n_items": len({r["item"] for r in rows}),
                   "embedder": emb.name, "fallback": emb.is_fallback, "summary": summary, **extra,
                   "seconds": round(time.perf_counter() - t0, 1), "rows": rows}
            if parses is not None:
                doc["parse_cache"] = {"hits": parses.hits, "misses": parses.misses, "parse_seconds":
                                      round(parses.seconds, 1), "parser_key": parses.key}
            (a.out / f"claims_{part}.json").write_text(json.dumps(doc, indent=1, ensure_ascii=False) + "\n", "utf-8")
            lines.append(table(part, summary))
            print(lines[-1] + (f"  error-touching: {extra['error_touching']}" if extra else ""), flush=True)
    print("\naccuracy / macro-F1 (n claims, not-enough-information verdicts)")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
