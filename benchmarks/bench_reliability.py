"""Validate parse reliability on the real dev figures, which the fit never saw.

    .venv/bin/python benchmarks/bench_reliability.py [--realfig /work/shared/dev-data/realfig]
        [--out benchmarks/results/reliability.json] [--n-boot 2000] [--seed 0]

Parses every figure of ``--realfig`` (``<id>/image.*`` + ``<id>/graph.json``) with the default
configuration, takes ``meta["parse_reliability"]`` and the strict directed edge-F1 against the
hand-made graph (``benchmarks/bench_parse.py``'s matching, the dev-data protocol), and reports

- Spearman(reliability, edge-F1) (target >= 0.6);
- AUROC of ``1 - reliability`` for telling parses with edge-F1 < 0.5 from the rest (target >= 0.8);

each with a 95% percentile bootstrap interval over figures (``--n-boot`` resamples, seeded;
resamples where a statistic is undefined are left out and counted), plus each signal's own
Spearman with edge-F1 (descriptive only: nothing here feeds back into the fit). Writes the
numbers and every figure's reliability, signals and F1 to ``--out``. Each figure's signals and
match counts are cached under ``--cache/<parser key>/`` (the key of ``fit_reliability.py``, which
leaves the coefficients out), and the reliability is computed from them with the shipped
coefficients exactly as the agent does, so a refit is validated without parsing again.
"""

from __future__ import annotations

import argparse
import json
import logging
import sys
import warnings
from pathlib import Path
from typing import Any

import numpy as np
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_parse import match_counts, prf, realfig_items  # noqa: E402
from fit_reliability import auroc, parse_key  # noqa: E402

from sciflow.agents.reliability import SIGNALS, load_coefficients, reliability_from_signals  # noqa: E402
from sciflow.config import load_config  # noqa: E402
from sciflow.format.graph import load_graph  # noqa: E402
from sciflow.pipeline import Parser  # noqa: E402

log = logging.getLogger("bench_reliability")


def spearman(a: np.ndarray, b: np.ndarray) -> float | None:
    if len(a) < 3 or np.all(a == a[0]) or np.all(b == b[0]):
        return None
    return float(spearmanr(a, b).statistic)


def boot(stat, r: np.ndarray, y: np.ndarray, n_boot: int, seed: int) -> dict[str, Any]:
    """The statistic, its 95% percentile interval over resampled figures and how many resamples were undefined."""
    rng = np.random.default_rng(seed)
    k = len(r)
    vals = []
    undefined = 0
    for _ in range(n_boot):
        idx = rng.integers(0, k, k)
        v = stat(r[idx], y[idx])
        if v is None:
            undefined += 1
        else:
            vals.append(v)
    point = stat(r, y)
    ci = [round(float(np.percentile(vals, 2.5)), 4), round(float(np.percentile(vals, 97.5)), 4)] if vals else None
    return {"value": None if point is None else round(point, 4), "ci95": ci, "undefined_resamples": undefined}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--realfig", type=Path, default=Path("/work/shared/dev-data/realfig"))
    ap.add_argument("--out", type=Path, default=Path("benchmarks/results/reliability.json"))
    ap.add_argument("--n-boot", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--config", type=Path, default=None, help="a sciflow config TOML (e.g. the detector on)")
    ap.add_argument("--cache", type=Path, default=Path(".sciflow-cache/reliability-realfig"))
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("sciflow", "PIL", "rapidocr", "RapidOCR"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    parser = Parser(load_config(args.config) if args.config else None)
    coefficients = load_coefficients()
    folder = args.cache / parse_key(parser)
    folder.mkdir(parents=True, exist_ok=True)
    items = []
    for name, image, graph in realfig_items(args.realfig):
        cached = folder / f"{name}.json"
        if cached.is_file():
            rec = json.loads(cached.read_text())
        else:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                truth = load_graph(graph)
            res = parser(image, item_id=name)
            rec = {"signals": res.graph.meta["reliability_signals"], "counts": list(match_counts(res.graph, truth))}
            cached.write_text(json.dumps(rec, sort_keys=True))
        c = rec["counts"]
        f1 = prf(c[3], c[4], c[5])[2]
        r, model = reliability_from_signals(rec["signals"], coefficients)  # what the agent computes
        items.append({"figure": name, "parse_reliability": r, "model": model, "edge_f1": round(f1, 4),
                      "node_f1": round(prf(c[0], c[1], c[2])[2], 4), "signals": rec["signals"]})
        log.info("%-24s reliability %.3f  edge-F1 %.3f", name, r, f1)
    r = np.array([it["parse_reliability"] for it in items], float)
    y = np.array([it["edge_f1"] for it in items], float)
    rho = boot(spearman, r, y, args.n_boot, args.seed)
    auc = boot(lambda a, b: auroc(-a, b < 0.5), r, y, args.n_boot, args.seed + 1)
    per_signal = {
        s: spearman(np.array([float(it["signals"][s]) for it in items]), y) for s in SIGNALS
    }
    doc = {
        "command": "benchmarks/bench_reliability.py" + (f" --config {args.config}" if args.config else ""),
        "figures": len(items),
        "n_low": int((y < 0.5).sum()),
        "spearman_reliability_edge_f1": {**rho, "target": 0.6},
        "auroc_edge_f1_below_0.5": {**auc, "target": 0.8},
        "signal_spearman_edge_f1": {k: None if v is None else round(v, 4) for k, v in per_signal.items()},
        "n_boot": args.n_boot,
        "seed": args.seed,
        "items": items,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    log.info("Spearman %s %s (target 0.6)   AUROC %s %s (target 0.8)   n=%d, %d with edge-F1 < 0.5",
             rho["value"], rho["ci95"], auc["value"], auc["ci95"], len(items), doc["n_low"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
