"""Per-item cost of each metric level, with the backends this machine has.

    .venv/bin/python benchmarks/bench_levels.py [--refs sciflow/data/sciflow-bench-60] [--n 30]

Renders the first N references with the Graphviz generator, parses them once (not timed
here; see bench_parse.py), then times the graph, text and image levels on every item, first
cold (new labels and prompts: embeddings computed) and then warm (same inputs again: label and
prompt embeddings cached). Prints the backends used, so fallback timings are never mistaken
for the paper's models.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from sciflow.bench.generators import GraphvizGenerator, run_generator
from sciflow.config import load_config
from sciflow.format.graph import load_graph
from sciflow.metrics.graph_level import graph_level
from sciflow.metrics.image_level import image_level
from sciflow.metrics.text_level import prompt_text, text_level
from sciflow.models.embedding import get_embedder
from sciflow.models.image_models import get_image_models
from sciflow.pipeline import Parser


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--refs", type=Path, default=Path("sciflow/data/sciflow-bench-60"))
    ap.add_argument("--n", type=int, default=30)
    args = ap.parse_args()

    cfg = load_config()
    tmp = Path(tempfile.mkdtemp())
    refs_dir = tmp / "refs"
    refs_dir.mkdir()
    for p in sorted(args.refs.glob("*.json"))[: args.n]:
        (refs_dir / p.name).write_bytes(p.read_bytes())
    run_generator(GraphvizGenerator(), refs_dir, tmp / "img")
    parser = Parser(cfg)
    items = []
    for p in sorted(refs_dir.glob("*.json")):
        img = tmp / "img" / f"{p.stem}.png"
        items.append((load_graph(p), parser(img).graph, img))
    emb = get_embedder(cfg.matching.embedder)
    t = time.perf_counter()
    models = get_image_models(cfg.image)
    print(f"{len(items)} items; image models loaded in {time.perf_counter() - t:.1f} s")
    d = models.describe()
    print(f"backends: embedder={emb.describe()['model']}; semantic={d['semantic'].get('backend')} "
          f"(fallback={d['semantic'].get('fallback')}); perceptual={d['perceptual'].get('backend')} "
          f"(fallback={d['perceptual'].get('fallback')})")
    for rnd in ("cold", "warm"):
        times: dict[str, list[float]] = {"graph": [], "text": [], "image": []}
        for ref, pred, img in items:
            t = time.perf_counter()
            graph_level(pred, ref, cfg.matching, cfg.graph, embedder=emb)
            times["graph"].append(time.perf_counter() - t)
            t = time.perf_counter()
            text_level(pred, ref, cfg.text, cfg.matching, embedder=emb)
            times["text"].append(time.perf_counter() - t)
            t = time.perf_counter()
            image_level(img, prompt_text(ref), pred, img, cfg.image, models)
            times["image"].append(time.perf_counter() - t)
        print(f"{rnd}: " + "; ".join(
            f"{k} median {1000 * statistics.median(v):.1f} ms (p90 {1000 * sorted(v)[int(0.9 * len(v))]:.1f})"
            for k, v in times.items()))


if __name__ == "__main__":
    main()
