"""The Layout Detector alone: per-class precision/recall on held-out renders, and speed.

    .venv/bin/python benchmarks/bench_detector.py --n 100 --seed 777

Renders ``--n`` items with :func:`sciflow.bench.detector.dataset.render_item` from seeds that the
training dataset never used (``--seed`` x 1,000,003 + i with a seed other than the dataset's),
runs the ``yolo_onnx`` backend as the parser does (text-scale tiles, NMS; the shipped weights
unless ``--weights``; the text height the parser takes from OCR is taken from the renderer's
text boxes x ``ocr_line_ratio``) and prints, per class, precision and recall at IoU >= 0.5
(greedy one-to-one by score; truth arrowheads padded to the squares the detector learns),
once on clean renders and once on augmented ones, then the
median / p90 milliseconds per image with onnxruntime limited to one thread (``--threads``).
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections import defaultdict
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from sciflow.agents.layout import BACKENDS  # noqa: E402
from sciflow.bench.detector import CLASSES  # noqa: E402
from sciflow.bench.detector.dataset import ARROWHEAD_SIDE, pad_arrowheads, render_item, text_height  # noqa: E402
from sciflow.bench.detector.evaluate import match  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100)
    ap.add_argument("--seed", type=int, default=777, help="must differ from the training dataset's seed")
    ap.add_argument("--weights", default="", help="an ONNX export (default: the shipped detector)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--conf", type=float, default=0.35)
    args = ap.parse_args(argv)
    det = BACKENDS.create("yolo_onnx", {"weights": args.weights, "threads": args.threads, "conf": args.conf})
    print(f"weights {det.weights} sha256 {det.sha256[:16]} imgsz {det.imgsz} threads {args.threads}")
    ms: list[float] = []
    for augmented in (False, True):
        totals: dict[str, list[int]] = defaultdict(lambda: [0, 0, 0])
        for i in range(args.n):
            item = render_item(args.seed * 1_000_003 + i, augmented=augmented)
            t0 = time.perf_counter()
            th = text_height(item.boxes)
            # the parser passes the OCR's median line height, about ocr_line_ratio x the glyph height
            boxes = det.detect(item.image, th * det.ocr_line_ratio if th else None)
            ms.append(1000 * (time.perf_counter() - t0))
            # the detector learned arrowheads as squares of ARROWHEAD_SIDE text heights: compare like with like
            truth = pad_arrowheads(item.boxes, ARROWHEAD_SIDE * th) if th else item.boxes
            for c, v in match(boxes, truth).items():
                totals[c] = [x + y for x, y in zip(totals[c], v, strict=True)]
        print(f"== {'augmented' if augmented else 'clean'} renders, n={args.n}, IoU >= 0.5")
        for c in CLASSES:
            tp, npred, ntruth = totals[c]
            p = tp / npred if npred else float("nan")
            r = tp / ntruth if ntruth else float("nan")
            print(f"{c:<10} truth {ntruth:>5}  pred {npred:>5}  precision {p:.3f}  recall {r:.3f}")
    print(f"== ms per image (median / p90 over {len(ms)}): {statistics.median(ms):.1f} / {np.percentile(ms, 90):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
