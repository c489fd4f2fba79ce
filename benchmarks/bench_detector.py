"""The Layout Detector alone: per-style, per-class precision/recall on held-out renders, and speed.

    .venv/bin/python benchmarks/bench_detector.py --n 100 --seed 777
    .venv/bin/python benchmarks/bench_detector.py --n 40 --styles graphviz,pillow,mermaid,paper \\
        --weights "" --weights sciflow/models/layout-detector-v2.onnx

Renders ``--n`` items per style with :func:`sciflow.bench.detector.dataset.render_item` from seeds
that the training datasets never used (``--seed`` x 1,000,003 + i with a seed other than the
datasets'), runs each ``--weights`` (``""``: the shipped detector; repeat the option to compare
models on the same items) through the ``yolo_onnx`` backend as the parser does (text-scale
tiles, NMS; the text height the parser takes from OCR is taken from the renderer's text boxes x
``ocr_line_ratio``) and prints, per style and class, precision and recall at IoU >= 0.5 (greedy
one-to-one by score; truth arrowheads and arrowtails padded to the squares the detector learns),
once on clean renders and once on augmented ones, with the detections read at the wrong end
(a head detection on a truth tail and not on a head, and the converse), then the median / p90
milliseconds per image
with onnxruntime limited to one thread (``--threads``). A class a model does not know (the
shipped detector has no ``arrowtail``) prints ``—``.
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

Totals = dict[str, list[int]]


def wrong_end(pred: list, truth: list, cls: str, other: str, thr: float = 0.5) -> int:
    """Detections of ``cls`` that match no truth box of ``cls`` but a truth box of ``other``
    at IoU >= ``thr``: a head detected at a tail (or a tail at a head), direction read backwards."""
    from sciflow.agents.diagram import bbox_iou

    own = [b for c, b in truth if c == cls]
    opp = [b for c, b in truth if c == other]
    return sum(1 for p in pred if p.cls == cls and not any(bbox_iou(p.bbox, b) >= thr for b in own)
               and any(bbox_iou(p.bbox, b) >= thr for b in opp))


def _pr(v: list[int]) -> str:
    tp, npred, ntruth = v
    p = f"{tp / npred:.3f}" if npred else "  nan"
    r = f"{tp / ntruth:.3f}" if ntruth else "  nan"
    return f"P {p} R {r}"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=100, help="items per style")
    ap.add_argument("--seed", type=int, default=777, help="must differ from the training datasets' seeds")
    ap.add_argument("--styles", default="graphviz,pillow", help="comma-separated: graphviz,pillow,mermaid,paper")
    ap.add_argument("--weights", action="append", default=None,
                    help="an ONNX export (\"\": the shipped detector); repeat to compare on the same items")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--conf", type=float, default=0.35)
    args = ap.parse_args(argv)
    styles = [s.strip() for s in args.styles.split(",") if s.strip()]
    dets = [BACKENDS.create("yolo_onnx", {"weights": w, "threads": args.threads, "conf": args.conf})
            for w in (args.weights or [""])]
    for k, det in enumerate(dets):
        print(f"[{k}] weights {det.weights} sha256 {det.sha256[:16]} imgsz {det.imgsz} classes {','.join(det.classes)}")
    browser = None
    if any(s in ("mermaid", "paper") for s in styles):
        from sciflow.bench.synth.browser import Browser

        browser = Browser()
    ms: list[list[float]] = [[] for _ in dets]
    try:
        for augmented in (False, True):
            totals: list[dict[str, Totals]] = [defaultdict(lambda: defaultdict(lambda: [0, 0, 0])) for _ in dets]
            flips: list[dict[str, list[int]]] = [defaultdict(lambda: [0, 0]) for _ in dets]
            for style in styles:
                for i in range(args.n):
                    item = render_item(args.seed * 1_000_003 + i, augmented=augmented, shares={style: 1.0},
                                       browser=browser)
                    th = text_height(item.boxes)
                    # the detector learned heads and tails as squares of ARROWHEAD_SIDE text heights
                    truth = pad_arrowheads(item.boxes, ARROWHEAD_SIDE * th) if th else item.boxes
                    for k, det in enumerate(dets):
                        t0 = time.perf_counter()
                        # the parser passes the OCR's median line height, about ocr_line_ratio x the glyph height
                        boxes = det.detect(item.image, th * det.ocr_line_ratio if th else None)
                        ms[k].append(1000 * (time.perf_counter() - t0))
                        flip = (wrong_end(boxes, truth, "arrowhead", "arrowtail"),
                                wrong_end(boxes, truth, "arrowtail", "arrowhead"))
                        for key in (style, "all"):
                            flips[k][key] = [flips[k][key][0] + flip[0], flips[k][key][1] + flip[1]]
                        for c, v in match(boxes, truth).items():
                            for key in (style, "all"):
                                totals[k][key][c] = [x + y for x, y in zip(totals[k][key][c], v, strict=True)]
            print(f"== {'augmented' if augmented else 'clean'} renders, n={args.n} per style, IoU >= 0.5")
            print(f"{'style':<9} {'class':<10} {'truth':>6}  " + "  ".join(f"[{k}] {'':<18}" for k in range(len(dets))))
            for key in [*styles, "all"] if len(styles) > 1 else styles:
                for c in CLASSES:
                    ntruth = totals[0][key][c][2]
                    cells = [_pr(totals[k][key][c]) if c in det.classes else f"{'—':<22}" for k, det in enumerate(dets)]
                    print(f"{key:<9} {c:<10} {ntruth:>6}  " + "  ".join(cells))
                print(f"{key:<9} {'wrong end':<10} {'':>6}  " + "  ".join(
                    f"heads at tails {flips[k][key][0]:>4}, tails at heads {flips[k][key][1]:>4}"
                    if "arrowtail" in det.classes else f"heads at tails {flips[k][key][0]:>4}{'':<20}"
                    for k, det in enumerate(dets)))
    finally:
        if browser is not None:
            browser.close()
    for k, m in enumerate(ms):
        print(f"== [{k}] ms per image (median / p90 over {len(m)}): {statistics.median(m):.1f} / "
              f"{np.percentile(m, 90):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
