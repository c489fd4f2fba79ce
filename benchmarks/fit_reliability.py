"""Fit the parse-reliability model on rendered diagrams with exact ground truth.

    .venv/bin/python benchmarks/fit_reliability.py [--n 50] [--seed 11] [--styles graphviz,pillow,mermaid,paper]
        [--out sciflow/models/parse-reliability.json] [--cache .sciflow-cache/reliability-fit]

Renders ``--n`` items per style (:func:`sciflow.bench.synth.styles.make_item`, seeds ``seed *
100003 + i``; the browser styles in one Chromium), parses each with the default configuration
and records its reliability signals (:func:`sciflow.agents.reliability.reliability_signals`,
through the ``reliability`` agent) and its strict directed edge-F1 against the truth
(``benchmarks/bench_parse.py``'s matching, the dev-data protocol). Parses are cached per item
under ``--cache/<key>/`` where ``key`` hashes the parser fingerprint without the reliability
coefficients, the parser's source code and the signals version, so a refit never re-parses and a
changed parser always does. Then it fits ``r = sigmoid(b - sum w_i s_i)`` with ``w >= 0`` (the
module docstring of :mod:`sciflow.agents.reliability`) and writes the coefficients with the
fit's counts and in-sample Spearman / AUROC. With ``--detector-n N`` (default 30) the first
``N`` items per style are parsed again with ``--detector-config`` (the shipped layout detector
on) and a second model of the same form is fitted on those parses alone, with
``layout_disagreement`` among its signals; it is written under ``with_layout`` and used for
parses where the detector found boxes.
Same arguments, same file. The real dev figures are never read here.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import sys
from pathlib import Path
from typing import Any

import numpy as np
from scipy.optimize import minimize
from scipy.stats import spearmanr

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from bench_parse import match_counts, prf  # noqa: E402

from sciflow.agents.reliability import SIGNALS, SIGNALS_VERSION  # noqa: E402
from sciflow.config import load_config  # noqa: E402
from sciflow.pipeline import Parser  # noqa: E402

log = logging.getLogger("fit_reliability")
L2 = 1e-3


def parser_code_sha256() -> str:
    """SHA-256 over the parser's source (``sciflow/agents/**/*.py`` and ``sciflow/pipeline.py``, paths
    and bytes) without the reliability agent, whose signals are versioned by ``SIGNALS_VERSION``."""
    root = Path(__file__).resolve().parents[1] / "sciflow"
    files = sorted(p for p in (root / "agents").rglob("*.py") if p.name != "reliability.py")
    h = hashlib.sha256()
    for p in [*files, root / "pipeline.py"]:
        h.update(str(p.relative_to(root)).encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def parse_key(parser: Parser) -> str:
    """Cache key: the parser fingerprint without the reliability coefficients, the parser's source
    (:func:`parser_code_sha256`, so a changed agent is parsed again) and the signals version."""
    fp = json.loads(json.dumps(parser.fingerprint(), default=str))
    fp.get("models", {}).pop("reliability", None)
    fp["agents"] = [a for a in fp.get("agents", []) if a != "reliability"]
    fp["backends"] = {k: v for k, v in fp.get("backends", {}).items() if k != "reliability"}
    fp.pop("parser_config_hash", None)  # the [parser.reliability] table is in it; the rest is in the models
    fp["signals_version"] = SIGNALS_VERSION
    fp["code"] = parser_code_sha256()
    return hashlib.sha256(json.dumps(fp, sort_keys=True).encode()).hexdigest()[:16]


def edge_f1(counts: list[int]) -> float:
    return prf(counts[3], counts[4], counts[5])[2]


def collect(styles: list[str], n: int, seed: int, cache: Path, config: Path | None = None) -> list[dict[str, Any]]:
    """One record per item: style, seed, signals, counts (parsed now or read from the cache);
    ``config``: a sciflow config TOML for the parser (default: the pinned configuration)."""
    from sciflow.bench.synth.browser import Browser
    from sciflow.bench.synth.styles import STYLES, make_item

    parser = Parser(load_config(config) if config else None)
    folder = cache / parse_key(parser)
    folder.mkdir(parents=True, exist_ok=True)
    browser = None
    out = []
    for style in styles:
        for i in range(n):
            s = seed * 100003 + i
            f = folder / f"{style}-{s}.json"
            if f.is_file():
                out.append(json.loads(f.read_text()))
                continue
            if STYLES[style][1] and browser is None:
                browser = Browser()
            try:
                d = make_item(style, s, browser)
            except Exception as exc:  # noqa: BLE001 - a renderer failure skips one item
                log.warning("skipped %s seed=%d: %s", style, s, exc)
                continue
            res = parser(d.image, item_id=f"{style}-{s}")
            rec = {
                "style": style,
                "seed": s,
                "signals": {k: res.graph.meta["reliability_signals"][k] for k in (*SIGNALS, "layout")},
                "counts": list(match_counts(res.graph, d.graph)),
            }
            f.write_text(json.dumps(rec, sort_keys=True))
            out.append(rec)
            if i % 10 == 0:
                log.info("%s %d/%d", style, i, n)
    if browser is not None:
        browser.close()
    return out


def auroc(scores: np.ndarray, positive: np.ndarray) -> float | None:
    """P(score of a positive > score of a negative), ties half (Mann-Whitney)."""
    pos, neg = scores[positive], scores[~positive]
    if len(pos) == 0 or len(neg) == 0:
        return None
    gt = (pos[:, None] > neg[None, :]).sum() + 0.5 * (pos[:, None] == neg[None, :]).sum()
    return float(gt / (len(pos) * len(neg)))


def fit(records: list[dict[str, Any]], active: list[str]) -> tuple[float, dict[str, float]]:
    """``(b, w)`` minimising the style-balanced cross entropy + L2 under ``w >= 0``."""
    x = np.array([[r["signals"][k] for k in active] for r in records], float)
    y = np.array([edge_f1(r["counts"]) for r in records], float)
    styles = [r["style"] for r in records]
    per = {s: styles.count(s) for s in set(styles)}
    sw = np.array([1.0 / (per[s] * len(per)) for s in styles])

    def loss(theta: np.ndarray) -> tuple[float, np.ndarray]:
        b, w = theta[0], theta[1:]
        z = b - x @ w
        p = 1.0 / (1.0 + np.exp(-z))
        eps = 1e-9
        ll = -(y * np.log(p + eps) + (1 - y) * np.log(1 - p + eps))
        g_z = p - y  # d ll / d z
        grad = np.concatenate([[np.sum(sw * g_z)], -(sw * g_z) @ x]) + np.concatenate([[0.0], 2 * L2 * w])
        return float(np.sum(sw * ll) + L2 * np.sum(w * w)), grad

    theta0 = np.zeros(1 + len(active))
    res = minimize(loss, theta0, jac=True, method="L-BFGS-B", bounds=[(None, None)] + [(0.0, None)] * len(active))
    b = float(res.x[0])
    return round(b, 4), {k: round(float(v), 4) for k, v in zip(active, res.x[1:], strict=True)}


def fitted(records: list[dict[str, Any]], n: int, seed: int, styles: list[str], config: Path | None) -> dict[str, Any]:
    """The coefficients fitted on ``records`` with the fit's description and in-sample metrics."""
    active = [k for k in SIGNALS if any(r["signals"][k] for r in records)]
    b, w = fit(records, active)
    weights = {k: w.get(k, 0.0) for k in SIGNALS}
    x = np.array([[r["signals"][k] for k in SIGNALS] for r in records], float)
    r_hat = 1.0 / (1.0 + np.exp(-(b - x @ np.array([weights[k] for k in SIGNALS]))))
    y = np.array([edge_f1(r["counts"]) for r in records])
    rho = spearmanr(r_hat, y).statistic
    log.info("fit (%s): intercept %.4f, weights %s; in-sample Spearman %.3f", config or "default config", b,
             weights, rho)
    return {
        "intercept": b,
        "weights": weights,
        "fit": {
            "script": "benchmarks/fit_reliability.py",
            "args": {"n": n, "seed": seed, "styles": styles, "config": str(config) if config else None},
            "items": {s: sum(1 for r in records if r["style"] == s) for s in styles},
            "target": "strict directed edge-F1 (benchmarks/bench_parse.py matching)",
            "loss": f"style-balanced binary cross entropy + {L2} * |w|^2, w >= 0 (L-BFGS-B from zeros)",
            "in_sample_spearman": round(float(rho), 4),
            "in_sample_auroc_f1_below_0.5": auroc(-r_hat, y < 0.5),
            "mean_edge_f1": round(float(y.mean()), 4),
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", type=int, default=50, help="items per style")
    ap.add_argument("--seed", type=int, default=11)
    ap.add_argument("--styles", default="graphviz,pillow,mermaid,paper")
    ap.add_argument("--out", type=Path, default=Path("sciflow/models/parse-reliability.json"))
    ap.add_argument("--cache", type=Path, default=Path(".sciflow-cache/reliability-fit"))
    ap.add_argument("--detector-config", type=Path, default=Path("benchmarks/configs/detector.toml"),
                    help="config with the layout detector on: the with_layout model is fitted on its parses")
    ap.add_argument("--detector-n", type=int, default=30, help="items per style for the with_layout model (0: none)")
    args = ap.parse_args(argv)
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    for noisy in ("sciflow", "PIL", "rapidocr", "RapidOCR"):
        logging.getLogger(noisy).setLevel(logging.ERROR)
    styles = args.styles.split(",")
    doc: dict[str, Any] = {
        "model": "r = sigmoid(intercept - sum_i weights[i] * signal[i]), weights >= 0; with_layout: the same "
                 "form, used when the layout detector found boxes",
        **fitted(collect(styles, args.n, args.seed, args.cache), args.n, args.seed, styles, None),
        "signals_version": SIGNALS_VERSION,
    }
    if args.detector_n > 0:
        records = collect(styles, args.detector_n, args.seed, args.cache, args.detector_config)
        doc["with_layout"] = fitted(records, args.detector_n, args.seed, styles, args.detector_config)
    args.out.write_text(json.dumps(doc, indent=2, sort_keys=False) + "\n")
    log.info("wrote %s", args.out)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
