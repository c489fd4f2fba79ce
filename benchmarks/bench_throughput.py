"""End-to-end throughput: parse + all three metric levels on rendered diagrams.

    .venv/bin/python benchmarks/bench_throughput.py [--n 500] [--workdir runs/throughput]
        [--modes local1 local1x1 local2 ray2] [--rescore-from local2] [--ocr-images 100]

Renders N synthetic framework diagrams (half Graphviz, half Pillow style, with exact truth
graphs as references), then scores the folder end to end (parse, graph, text and image level)
in each mode, each from a cold cache (no parse cache, no embedding store) and each in its own
Python process, so that peak memory and thread settings do not leak between modes:

- ``local1``: one worker, the libraries' default threads (onnxruntime and torch use every core);
- ``local1x1``: one worker with one math thread (one core);
- ``local2``: two local workers, one math thread each (the default split of the cores);
- ``ray2``: two Ray actors on a local Ray runtime, one CPU each.

Prints items/s, peak RSS per worker, the 2-worker speed-up over both one-worker baselines,
three re-scoring times on the ``--rescore-from`` run's output (from the results log; from the
parse cache with every metric recomputed; after a metric-config change), and, on
``--ocr-images`` images in one process with one thread, the full parse time next to the
OCR alone (the Text Spotter on the same working image).

Targets (issue 8): N=500 in <= 10 min; 2-worker speed-up >= 1.7x; re-score from cache <= 30 s;
peak memory per worker <= 2.5 GB; parse time <= 1.3x OCR alone.
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from PIL import Image

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from sciflow.config import load_config  # noqa: E402
from sciflow.runs.scoring import run_scoring  # noqa: E402

#: mode -> run_scoring keyword arguments
MODES: dict[str, dict[str, Any]] = {
    "local1": {"jobs": 1},
    "local1x1": {"jobs": 1, "threads": 1},
    "local2": {"jobs": 2},
    "ray2": {"jobs": 2, "executor": "ray"},
}
#: a metric-only config change: rows are recomputed, parses and label embeddings are reused
METRIC_CHANGE = {"graph": {"edge_weight": 0.5, "node_weight": 0.5}}


def render_set(n: int, folder: Path) -> tuple[Path, Path]:
    from sciflow.bench.synth import graphviz_render, pillow_render

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


def peak_rss_gb() -> dict[str, float]:
    """Peak RSS of this process and of its largest child so far (``ru_maxrss`` is KiB on Linux)."""
    return {
        "self": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024**2,
        "children": resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024**2,
    }


class RayActorMemory:
    """Peak RSS of the Ray actor processes, sampled every ``period`` s: they are the raylet's
    children, not this process's, so ``getrusage`` cannot see them. Needs psutil (a Ray
    dependency); :attr:`peak_gb` stays None without it."""

    def __init__(self, period: float = 0.5):
        import threading

        self.peak_gb: float | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, args=(period,), daemon=True)
        self._thread.start()

    def _poll(self, period: float) -> None:
        try:
            import psutil
        except ImportError:
            return
        while not self._stop.wait(period):
            for proc in psutil.process_iter(["cmdline", "memory_info"]):
                cmd = " ".join(proc.info.get("cmdline") or [])
                mem = proc.info.get("memory_info")
                if "_RayWorker" in cmd and mem is not None:
                    self.peak_gb = max(self.peak_gb or 0.0, mem.rss / 1024**3)

    def stop(self) -> float | None:
        self._stop.set()
        self._thread.join()
        return self.peak_gb


def one_run(args: argparse.Namespace) -> None:
    """Child process: one scoring run; prints a JSON line with its seconds and peak RSS."""
    preds, refs = args.workdir / "data" / "images", args.workdir / "data" / "refs"
    out, cache = args.workdir / args.mode, args.workdir / f"cache-{args.mode}"
    if args.phase == "cold":
        shutil.rmtree(out, ignore_errors=True)
        shutil.rmtree(cache, ignore_errors=True)
    config = load_config(overrides=METRIC_CHANGE) if args.phase == "metric-change" else load_config()
    ray_memory = RayActorMemory() if MODES[args.mode].get("executor") == "ray" else None
    t = time.perf_counter()
    result = run_scoring(preds, refs, out, config, cache_dir=cache, resume=args.phase != "parse-cache",
                         **MODES[args.mode])
    secs = time.perf_counter() - t
    rss = peak_rss_gb()
    rss["ray_actors"] = ray_memory.stop() if ray_memory is not None else None
    statuses: dict[str, int] = {}
    for row in result.rows:
        statuses[row["status"]] = statuses.get(row["status"], 0) + 1
    print(json.dumps({"secs": secs, "rss": rss, "reused": result.n_reused, "statuses": statuses,
                      "mean_overall": result.summary.get("means", {}).get("overall")}))


def spawn(args: argparse.Namespace, mode: str, phase: str) -> dict[str, Any]:
    cmd = [sys.executable, __file__, "--n", str(args.n), "--workdir", str(args.workdir), "--mode", mode,
           "--phase", phase]
    proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError(f"{mode}/{phase} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def ocr_versus_parse(preds: Path, n: int) -> None:
    """Full parse vs the Text Spotter alone on the same working images, one thread."""
    from sciflow.agents.diagram import Diagram
    from sciflow.format.imageio import fit_working_size, to_rgb
    from sciflow.pipeline import Parser
    from sciflow.runs.worker import limit_threads

    limit_threads(1)
    parser = Parser(load_config(), threads=1)
    spotter = parser.agents["text_spotter"]
    images = sorted(preds.glob("*.png"))[:n]
    parser(images[0])  # warm-up (sessions, caches)
    ocr_t, parse_t = [], []
    for p in images:
        work, scale = fit_working_size(to_rgb(p, name=str(p)), max_side=parser.max_side, min_side=parser.min_side)
        t = time.perf_counter()
        spotter.run(Diagram(image=work, item_id=p.stem, scale=scale))
        ocr_t.append(time.perf_counter() - t)
        t = time.perf_counter()
        parser(p)
        parse_t.append(time.perf_counter() - t)
    mo, mp = statistics.median(ocr_t), statistics.median(parse_t)
    print(f"on {len(images)} images, 1 thread: OCR alone median {mo:.2f} s (total {sum(ocr_t):.0f} s), "
          f"full parse median {mp:.2f} s (total {sum(parse_t):.0f} s): "
          f"{mp / mo:.2f}x OCR by medians, {sum(parse_t) / sum(ocr_t):.2f}x by totals")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=500)
    ap.add_argument("--workdir", type=Path, default=Path("runs/throughput"))
    ap.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    ap.add_argument("--rescore-from", default="local2", help="the mode whose output is re-scored")
    ap.add_argument("--ocr-images", type=int, default=100, help="0 skips the OCR-versus-parse timing")
    ap.add_argument("--mode", help=argparse.SUPPRESS)  # child process: one run
    ap.add_argument("--phase", default="cold", choices=["cold", "resume", "parse-cache", "metric-change"],
                    help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.mode:
        one_run(args)
        return

    t = time.perf_counter()
    preds, _refs = render_set(args.n, args.workdir / "data")
    print(f"rendered {args.n} diagrams in {time.perf_counter() - t:.0f} s -> {preds}", flush=True)
    secs: dict[str, float] = {}
    for mode in args.modes:
        r = spawn(args, mode, "cold")
        secs[mode] = r["secs"]
        rss = r["rss"]["self"] if MODES[mode]["jobs"] == 1 else r["rss"]["children"]
        if MODES[mode].get("executor") == "ray":
            rss = r["rss"]["ray_actors"] if r["rss"]["ray_actors"] is not None else float("nan")
        print(f"{mode}: {r['secs']:.0f} s, {args.n / r['secs']:.2f} items/s, peak RSS per worker {rss:.2f} GB, "
              f"rows {r['statuses']}, mean overall {r['mean_overall']}", flush=True)
    if "local2" in secs:
        for base, what in (("local1", "one worker on all cores"), ("local1x1", "one worker on one core")):
            if base in secs:
                print(f"2-worker speed-up over {what} ({base}): {secs[base] / secs['local2']:.2f}x")
    if args.rescore_from in secs:
        for phase, what in (("resume", "from the results log (resume)"),
                            ("parse-cache", "from the parse cache and embedding store, every metric recomputed"),
                            ("metric-change", "after a metric-config change (graph weights 0.5/0.5)")):
            r = spawn(args, args.rescore_from, phase)
            print(f"re-score {what}: {r['secs']:.1f} s ({r['reused']} rows reused)", flush=True)
    if args.ocr_images > 0:
        ocr_versus_parse(preds, args.ocr_images)


if __name__ == "__main__":
    main()
