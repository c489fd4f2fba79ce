"""Writes the example predictions bundled with the benchmark (run from the repository root):
``sciflow/data/sciflow-bench-60/examples/perturbed-k2/<id>.json``, every reference graph with two
controlled structural errors (:func:`sciflow.bench.perturb.perturb_graph`, the per-item seeds of
``sciflow perturb --severity 2 --seed 0``), as graph predictions that score without a parser.

    .venv/bin/python examples/build_bench_examples.py
"""

from __future__ import annotations

from dataclasses import replace

from sciflow.bench.generators import PerturbedGenerator
from sciflow.bench.perturb import perturb_graph
from sciflow.format.benchmarks import resolve_refs
from sciflow.format.graph import load_graph

SEVERITY = 2


def main() -> None:
    refs = resolve_refs("sciflow-bench-60@1")
    out = refs / "examples" / f"perturbed-k{SEVERITY}"
    out.mkdir(parents=True, exist_ok=True)
    gen = PerturbedGenerator(severity=SEVERITY, seed=0)
    for path in sorted(refs.glob("*.json")):
        ref = load_graph(path)
        bad, _ = perturb_graph(ref, SEVERITY, gen.item_seed(ref))
        origin = f"sciflow perturb --severity {SEVERITY} --seed 0 (graph only)"
        replace(bad, prompt=None, meta={"origin": origin}).save(out / path.name)
    print(f"wrote {len(list(out.glob('*.json')))} predictions to {out}")


if __name__ == "__main__":
    main()
