"""End-to-end throughput: parse + all three metric levels on rendered diagrams.

    .venv/bin/python benchmarks/bench_throughput.py [--n 500] [--workdir runs/throughput]
        [--skip-ray] [--skip-ocr]

Renders N synthetic framework diagrams (half Graphviz, half Pillow style, with exact truth
graphs as references), then scores the folder end to end (parse, graph, text and image level)
with 1 local worker, 2 local workers and Ray (2 actors), each from a cold parse cache.
Prints items/s, the 2-worker speed-up, peak RSS per worker, the time to re-score the same
items from the results log (resume) and from the parse cache alone (metrics recomputed), and
the parse time next to the OCR-alone time on the same images.

Targets (issue 8): N=500 in <= 10 min; speed-up >= 1.7x; re-score from cache <= 30 s;
peak memory per worker <= 2.5 GB; parse time <= 1.3x OCR alone.
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import sys
import time
from pathlib import Path

from PIL import Image

from sciflow.config import load_config
from sciflow.scoring import run_scoring


def render_set(n: int, folder: Path) -> tuple[Path, Path]:
    from sciflow.synth import graphviz_render, pillow_render

    preds, refs = folder / "images", folder / "refs"
    if preds.is_dir() and len(list(preds.glob("*.png"))) == n:
        return preds, refs
    shutil.rmtree(folder, ignore_errors=True)
    preds.mkdir(parents=True)
    refs.mkdir(parents=True)
    for i in range(n):
        mod = graphviz_render if i % 2 == 0 else pillow_render
        d = mod.generate(10_000 + i)
        item = f"item{i:04d}"
        Image.fromarray(d.image).save(preds / f"{item}.png")
        d.graph.__class__(item, d.graph.nodes, d.graph.edges, d.graph.groups, d.graph.prompt, d.graph.meta).save(
            refs / f"{item}.json"
        )
    return preds, refs


def peak_rss_gb(children: bool) -> float:
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024**2  # ru_maxrss is KiB on Linux


def timed_run(preds: Path, refs: Path, out: Path, cache: Path, **kw) -> float:
    t = time.perf_counter()
    run_scoring(preds, refs, out, load_config(), cache_dir=cache, **kw)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--workdir", type=Path, default=Path("runs/throughput"))
    ap.add_argument("--skip-ray", action="store_true")
    ap.add_argument("--skip-ocr", action="store_true")
    ap.add_argument("--modes", nargs="+", default=["local1", "local2", "ray2"])
    args = ap.parse_args()

    t = time.perf_counter()
    preds, refs = render_set(args.n, args.workdir / "data")
    print(f"rendered {args.n} diagrams in {time.perf_counter() - t:.0f} s -> {preds}")
    results = {}
    for mode in args.modes:
        if mode == "ray2" and args.skip_ray:
            continue
        out, cache = args.workdir / mode, args.workdir / f"cache-{mode}"
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
        kw = {"jobs": 1} if mode == "local1" else {"jobs": 2, "executor": "ray" if mode == "ray2" else "local"}
        secs = timed_run(preds, refs, out, cache, **kw)
        results[mode] = secs
        rss = peak_rss_gb(children=mode != "local1")
        print(
            f"{mode}: {secs:.0f} s, {args.n / secs:.2f} items/s, peak RSS per worker <= {rss:.2f} GB"
            + (" (max over this process's children so far)" if mode != "local1" else "")
        )
        sys.stdout.flush()
    if "local1" in results and "local2" in results:
        print(f"2-worker speed-up (local): {results['local1'] / results['local2']:.2f}x")
    first = next(iter(results), None)
    if first:
        out, cache = args.workdir / first, args.workdir / f"cache-{first}"
        kw = {"jobs": 1} if first == "local1" else {"jobs": 2}
        print(f"re-score from the results log (resume): {timed_run(preds, refs, out, cache, **kw):.1f} s")
        print(
            f"re-score from the parse cache (metrics recomputed): "
            f"{timed_run(preds, refs, out, cache, resume=False, **kw):.1f} s"
        )

    if not args.skip_ocr:
        from rapidocr import RapidOCR

        from sciflow.pipeline import Parser

        images = sorted(preds.glob("*.png"))[: min(args.n, 100)]
        ocr = RapidOCR()
        parser = Parser(load_config())
        ocr_t, parse_t = [], []
        for p in images:
            t = time.perf_counter()
            ocr(str(p))
            ocr_t.append(time.perf_counter() - t)
            t = time.perf_counter()
            parser(p)
            parse_t.append(time.perf_counter() - t)
        mo, mp = statistics.median(ocr_t), statistics.median(parse_t)
        print(
            f"on {len(images)} images: median OCR alone {mo:.2f} s, median full parse {mp:.2f} s ({mp / mo:.2f}x OCR)"
        )


if __name__ == "__main__":
    main()
