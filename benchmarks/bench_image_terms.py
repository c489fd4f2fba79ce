"""Do the image terms tell a clean drawing from a blank, a reversed and a shuffled one?

    .venv/bin/python benchmarks/bench_image_terms.py [--refs sciflow/data/sciflow-bench-60] [--n 20]
        [--out benchmarks/results/image_terms.json]

For the first ``--n`` references: the *source figure* is the reference drawn by Graphviz at
144 dpi; the *clean* drawing is the reference drawn at 120 dpi (same content, another
rendering); *reversed* is every arrow reversed (:func:`sciflow.bench.adversaries.all_arrows_reversed`),
*shuffled* the labels permuted among the boxes (:func:`~sciflow.bench.adversaries.labels_shuffled`),
both drawn at 120 dpi; *blank* a white page of the clean drawing's size. Each drawing is parsed
with the default parser and scored by :func:`sciflow.metrics.image_level.image_level` with the
backends this machine has (printed: offline they are the fallbacks ``ocr-text-embedding`` and
``ssim``). Prints, per term (semantic consistency, perceptual similarity, visual flow, the image
score), the mean over items of each drawing and on how many items each perturbed drawing scored
strictly below the clean one; writes the same to ``--out``.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import tempfile
from pathlib import Path

import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sciflow.bench.adversaries import all_arrows_reversed, labels_shuffled  # noqa: E402
from sciflow.bench.drawing import render_graph  # noqa: E402
from sciflow.config import load_config  # noqa: E402
from sciflow.format.graph import load_graph  # noqa: E402
from sciflow.metrics.image_level import image_level  # noqa: E402
from sciflow.metrics.text_level import prompt_text  # noqa: E402
from sciflow.models.image_models import get_image_models  # noqa: E402
from sciflow.pipeline import Parser  # noqa: E402

log = logging.getLogger("bench_image_terms")
TERMS = ("semantic_consistency", "perceptual_similarity", "visual_flow", "image")
DRAWINGS = ("clean", "blank", "reversed", "shuffled")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--refs", type=Path, default=Path("sciflow/data/sciflow-bench-60"))
    ap.add_argument("--n", type=int, default=20)
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/image_terms.json"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("sciflow", "PIL", "rapidocr", "RapidOCR"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    cfg = load_config()
    parser = Parser(cfg)
    models = get_image_models(cfg.image)
    backends = {r: d.get("backend") for r, d in models.describe().items() if isinstance(d, dict)}
    tmp = Path(tempfile.mkdtemp())
    scores: dict[str, dict[str, list[float]]] = {d: {t: [] for t in TERMS} for d in DRAWINGS}
    items = []
    for path in sorted(args.refs.glob("*.json"))[: args.n]:
        ref = load_graph(path)
        prompt = prompt_text(ref)
        source = render_graph(ref, tmp / f"{ref.id}.source.png", dpi=144)
        drawn = {
            "clean": render_graph(ref, tmp / f"{ref.id}.clean.png", dpi=120),
            "reversed": render_graph(all_arrows_reversed(ref), tmp / f"{ref.id}.reversed.png", dpi=120),
            "shuffled": render_graph(labels_shuffled(ref), tmp / f"{ref.id}.shuffled.png", dpi=120),
        }
        size = Image.open(drawn["clean"]).size
        drawn["blank"] = tmp / f"{ref.id}.blank.png"
        Image.new("RGB", size, (255, 255, 255)).save(drawn["blank"])
        row = {"id": ref.id}
        for name in DRAWINGS:
            graph = parser(drawn[name], item_id=f"{ref.id}-{name}").graph
            r = image_level(drawn[name], prompt, graph, source, cfg.image, models)
            vals = {"semantic_consistency": r.semantic_consistency, "perceptual_similarity": r.perceptual_similarity,
                    "visual_flow": r.visual_flow, "image": r.score}
            for t in TERMS:
                scores[name][t].append(float(vals[t] or 0.0))
            row[name] = vals
        items.append(row)
        log.info("%s: %s", ref.id, {d: round(row[d]["image"] or 0.0, 3) for d in DRAWINGS})
    n = len(items)
    table = {}
    for t in TERMS:
        clean = np.array(scores["clean"][t])
        table[t] = {d: round(float(np.mean(scores[d][t])), 4) for d in DRAWINGS}
        table[t]["below_clean"] = {d: int((np.array(scores[d][t]) < clean).sum()) for d in DRAWINGS[1:]}
    doc = {"command": "benchmarks/bench_image_terms.py", "n": n, "backends": backends, "terms": table,
           "items": items}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"backends: {backends}; {n} references")
    print(f"{'term':<24}" + "".join(f"{d:>10}" for d in DRAWINGS) + "   below clean (blank/reversed/shuffled)")
    for t in TERMS:
        below = table[t]["below_clean"]
        print(f"{t:<24}" + "".join(f"{table[t][d]:>10.3f}" for d in DRAWINGS)
              + f"   {below['blank']}/{n}  {below['reversed']}/{n}  {below['shuffled']}/{n}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
