"""The argument parser: every command, its options and defaults (workflow order)."""

from __future__ import annotations

import argparse
import getpass
import textwrap
from pathlib import Path

from sciflow import __version__
from sciflow.cli.bench import cmd_detector_dataset, cmd_detector_train, cmd_generate, cmd_perturb, cmd_synth
from sciflow.cli.catalog import add_catalog_commands
from sciflow.cli.common import default_cache_dir, refs_arg
from sciflow.cli.grammar import MAIN_EPILOG, HelpFormatter, add_format
from sciflow.cli.graphs import (
    cmd_convert,
    cmd_download_models,
    cmd_import,
    cmd_prompt,
    cmd_schema,
    cmd_stats,
    cmd_validate,
)
from sciflow.cli.review import cmd_agreement, cmd_critique, cmd_rectify, cmd_verify
from sciflow.cli.scoring import cmd_compare, cmd_parse, cmd_render, cmd_report, cmd_score, cmd_summarize

_DEVICE_HELP = ("where the models run: cpu (default), cuda, cuda:N or auto (cuda when usable, else cpu); "
                "not part of the config hash, recorded in the manifest")


REFS_HELP = ("reference graphs: a folder of *.json, or a bundled benchmark by name "
             "(sciflow-bench-60@1; `sciflow list benchmarks`)")
_STRICT_HELP = ("refuse to run (rc 2) when any backend would fall back (CLIP, LPIPS, SAM, judge, MiniLM); "
                "also [trust] strict = true in the config")
_MIN_REL_HELP = ("leave items whose parse_reliability is below X out of the means (recorded in the summary "
                 "and manifest)")


def _unit(text: str) -> float:
    """A number in [0, 1] (``--min-reliability``)."""
    try:
        v = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text!r}") from None
    if not 0.0 <= v <= 1.0:
        raise argparse.ArgumentTypeError(f"expected a number in [0, 1], got {text}")
    return v


DESCRIPTION = (
    "sciflow checks whether AI-generated scientific diagrams are structurally right. It parses each "
    "diagram image back into a directed graph (boxes and arrows, the inverse parser), matches it with the "
    "item's reference graph and scores it on three levels: graph (are the right boxes joined by the right "
    "arrows, in the right direction?), text (does it say what the prompt asked for?) and image (semantic "
    "consistency, perceptual similarity, visual flow). Scores are in [0, 1]; every mean has a 95% bootstrap "
    "interval. The bundled benchmark sciflow-bench-60@1 holds 60 reference graphs with their prompts: "
    "write its prompts (`sciflow prompts`), generate one image per prompt, then `sciflow score` the folder.")
DESCRIPTION = textwrap.fill(DESCRIPTION, 88)


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sciflow", description=DESCRIPTION, epilog=MAIN_EPILOG,
                                formatter_class=HelpFormatter)
    p.add_argument("--version", action="version", version=f"sciflow {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", title="commands (in workflow order)")

    s = sub.add_parser("score", help="score predictions (graphs or images) against reference graphs")
    s.add_argument("pred_dir", type=refs_arg, help="folder of predicted graphs (*.json) or images")
    s.add_argument("--refs", "--ref", dest="refs", type=refs_arg, required=True, help=REFS_HELP)
    s.add_argument("-o", "--out", type=Path, default=None, help="results folder to write (default: none, print only)")
    s.add_argument("--name", default=None, help="run name in the leaderboard (default: the --out folder name)")
    s.add_argument("--config", type=Path, default=None, help="TOML file overriding the pinned config")
    s.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local process pool (default) or Ray (pip install 'sciflow-eval[ray]')")
    s.add_argument("--jobs", type=int, default=1, help="workers (processes or Ray actors)")
    s.add_argument("--threads", type=int, default=0,
                   help="math threads per worker (OCR, torch); default: all cores for one local worker, "
                        "cores / jobs for several, 1 per Ray actor")
    s.add_argument("--address", default=None, help="Ray cluster address (default: start a local runtime)")
    s.add_argument("--no-resume", action="store_true", help="rescore every item even if results exist")
    s.add_argument("--critique", action="store_true", help="write a critique (verdict, explanation, edits) per item")
    s.add_argument("--cache-dir", type=Path, default=default_cache_dir(),
                   help="cache folder: parsed graphs and the label-embedding store (default: the user cache "
                        "folder, or $SCIFLOW_CACHE_DIR)")
    s.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    s.add_argument("--device", default="cpu", help=_DEVICE_HELP)
    s.add_argument("--strict", action="store_true", help=_STRICT_HELP)
    s.add_argument("--min-reliability", type=_unit, default=None, metavar="X", help=_MIN_REL_HELP)
    add_format(s)
    s.set_defaults(func=cmd_score)

    m = sub.add_parser("summarize", help="leaderboard of one or more results folders side by side")
    m.add_argument("results_dirs", type=Path, nargs="+", help="results folders written by `sciflow score`")
    m.add_argument("-o", "--out", "--output", dest="output", type=Path, default=None,
                   help="also write the leaderboard: FILE.csv, .json, .md or .tex, or a folder (its leaderboard.csv)")
    m.add_argument("--allow-mixed", action="store_true",
                   help="tabulate runs scored against different reference sets or metric versions "
                        "(the table is marked MIXED)")
    m.add_argument("--min-reliability", type=_unit, default=None, metavar="X", help=_MIN_REL_HELP)
    add_format(m)
    m.set_defaults(func=cmd_summarize)

    cp = sub.add_parser("compare", help="two runs item by item: mean difference, bootstrap interval, "
                                        "Wilcoxon p-value and a verdict per level")
    cp.add_argument("run_a", type=Path, help="results folder A")
    cp.add_argument("run_b", type=Path, help="results folder B")
    add_format(cp)
    cp.add_argument("-o", "--out", type=Path, default=None, help="also write the comparison: FILE.json, .csv, "
                    ".md or .tex, or a folder (its compare.json)")
    cp.set_defaults(func=cmd_compare)

    c = sub.add_parser("convert", help="convert SciFlow-Bench canvas_full.json files to sciflow graphs")
    c.add_argument("source", type=Path, help="a canvas_full.json, a paper folder, or a root of paper folders")
    c.add_argument("-o", "--out", type=Path, required=True, help="folder for the converted graphs")
    c.set_defaults(func=cmd_convert)

    v = sub.add_parser("validate", help="validate graph files (and reference-set rules) against the canonical format")
    v.add_argument("files", type=refs_arg, nargs="+",
                   help="graph files or folders of them (*.json), or a benchmark (sciflow-bench-60@1)")
    v.add_argument("--references", action="store_true",
                   help="apply the reference-set checks to every file (default: to files whose meta.origin "
                        "names the sciflow reference set)")
    v.set_defaults(func=cmd_validate)

    sc = sub.add_parser("schema", help="print the JSON Schema of the canonical graph format")
    sc.set_defaults(func=cmd_schema)

    pa = sub.add_parser("parse", help="parse diagram images into graphs (the inverse parser)")
    pa.add_argument("inputs", type=Path, nargs="+", help="image files or folders of images")
    pa.add_argument("-o", "--out", type=Path, required=True,
                    help="folder for the parsed graphs (<stem>.json), or FILE.json for a single image")
    pa.add_argument("--debug-dir", type=Path, default=None, help="write one overlay PNG per agent here")
    pa.add_argument("--config", type=Path, default=None, help="TOML file overriding the pinned config")
    pa.add_argument("--jobs", type=int, default=1, help="worker processes")
    pa.add_argument("--cache-dir", type=Path, default=default_cache_dir(),
                    help="parse cache (default: the user cache folder, or $SCIFLOW_CACHE_DIR)")
    pa.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    pa.add_argument("--device", default="cpu", help=_DEVICE_HELP)
    pa.add_argument("--strict", action="store_true", help=_STRICT_HELP)
    pa.set_defaults(func=cmd_parse)

    r = sub.add_parser("render", help="Graphviz rendering of a graph, or of its comparison with another")
    r.add_argument("graph", type=Path, help="the graph to draw (with --diff: the prediction)")
    r.add_argument("--diff", type=Path, default=None, help="reference graph: draw it coloured by the comparison")
    r.add_argument("-o", "--out", "--output", dest="output", type=Path, required=True,
                   help="FILE.svg, FILE.png or FILE.pdf")
    r.add_argument("--no-legend", action="store_true", help="leave the colour legend out of a --diff drawing")
    r.add_argument("--config", type=Path, default=None, help="TOML file overriding the pinned config (matching)")
    r.set_defaults(func=cmd_render)

    rp = sub.add_parser("report", help="one self-contained HTML report of one or more results folders")
    rp.add_argument("results_dirs", type=Path, nargs="+", help="results folders written by `sciflow score`")
    rp.add_argument("-o", "--out", "--output", dest="output", type=Path, required=True,
                    help="FILE.html, or a folder (its report.html)")
    rp.add_argument("--recompute", action="store_true", help="recompute diffs instead of using stored diagnostics")
    rp.set_defaults(func=cmd_report)

    dm = sub.add_parser("download-models", help="fetch the real CLIP/LPIPS weights (needs internet)")
    dm.add_argument("targets", nargs="*", help="clip, lpips, minilm (default: clip and lpips)")
    dm.add_argument("--dest", type=Path, default=None, help="cache folder (default: the libraries' own caches)")
    dm.set_defaults(func=cmd_download_models)

    st_ = sub.add_parser("stats", help="distributions of a folder of reference graphs")
    st_.add_argument("refs", type=refs_arg, help=REFS_HELP)
    st_.add_argument("--plot", type=Path, default=None, help="also write a figure (PNG/SVG/PDF)")
    st_.add_argument("-o", "--out", type=Path, default=None,
                     help="also write the statistics: FILE.json, .csv, .md or .tex, or a figure (.png, .svg, .pdf)")
    add_format(st_)
    st_.set_defaults(func=cmd_stats)

    pr = sub.add_parser("prompt", help="the prompt of a reference graph")
    pr.add_argument("ref", type=refs_arg, help="a reference graph file (or NAME@V/<id>.json)")
    pr.add_argument("--style", choices=["structured", "naive"], default="structured",
                    help="structured (components, relations, layout) or naive (the description alone)")
    pr.add_argument("--write", action="store_true",
                    help="rewrite the file's prompt and difficulty tier from its graph (after a hand edit)")
    pr.set_defaults(func=cmd_prompt)

    for name, helptext in (("generate", "run a generator over the reference set"),
                           ("perturb", "render references with K controlled structural errors")):
        g = sub.add_parser(name, help=helptext)
        if name == "generate":
            g.add_argument("name", help="graphviz, perturbed, or an installed plug-in")
            g.add_argument("--option", action="append", help="KEY=VALUE passed to the generator (repeatable)")
            g.set_defaults(func=cmd_generate)
        else:
            g.add_argument("--severity", type=int, required=True, help="number of errors per item")
            g.add_argument("--seed", type=int, default=0, help="seed of the errors (each item's seed derives from it)")
            g.add_argument("--degrade", default=None,
                           help="visual degradation: blur, jpeg20, noise, downscale, rotate, clutter or random")
            g.set_defaults(func=cmd_perturb)
        g.add_argument("--refs", "--ref", dest="refs", type=refs_arg, required=True, help=REFS_HELP)
        g.add_argument("-o", "--out", type=Path, required=True, help="folder for the generated images")
        g.add_argument("--style", choices=["structured", "naive"], default="structured", help="prompt style")
        g.add_argument("--no-resume", action="store_true", help="regenerate items already done")

    ve = sub.add_parser(
        "verify", help="serve the human verification page for parsed figures (on this machine only)",
        description="Serve the human verification page for the figures in FIGURES_DIR, writing verified graphs "
                    "and audit logs to --out. The page is for local use: it listens on a loopback address only "
                    "(another --host, 0.0.0.0 included, is refused); to open it from another machine, forward the "
                    "port over SSH (ssh -L 8765:127.0.0.1:8765 HOST).")
    ve.add_argument("figures_dir", type=Path, help="folder of figures (png, jpg, jpeg, webp, gif, bmp)")
    ve.add_argument("-o", "--out", type=Path, required=True, help="folder for verified graphs and audit logs")
    ve.add_argument("--host", default="127.0.0.1",
                    help="loopback address to listen on: 127.0.0.1 (default), localhost or ::1; "
                         "any other address is refused")
    ve.add_argument("--port", type=int, default=8765, help="port (default 8765; a busy port is refused)")
    ve.add_argument("--annotator", default=getpass.getuser(), help="name written into the audit log")
    ve.add_argument("--config", type=Path, default=None, help="TOML file overriding the pinned config (parser)")
    ve.set_defaults(func=cmd_verify)

    ag = sub.add_parser("agreement", help="parser agreement (P/R/F1) from verification edit logs")
    ag.add_argument("verified_dir", type=Path, help="the --out folder of `sciflow verify`")
    add_format(ag)
    ag.add_argument("--json", dest="format", action="store_const", const="json", help="the same as --format json")
    ag.set_defaults(func=cmd_agreement)

    cr = sub.add_parser("critique", help="judgement, explanation and edit instructions for one diagram")
    cr.add_argument("input", type=Path, help="an image (parsed first) or a predicted graph (.json)")
    cr.add_argument("--ref", "--refs", dest="ref", type=refs_arg, required=True,
                    help="the reference graph file (or NAME@V/<id>.json)")
    add_format(cr, extra=("text", "tagged"))
    cr.add_argument("--config", type=Path, default=None, help="TOML file overriding the pinned config")
    cr.add_argument("--claims", type=Path, default=None,
                    help="also check these structural claims (one JSON object per line) and list the failed ones")
    cr.add_argument("--text", default=None, help="also check the claims these sentences make (the claim grammar)")
    cr.add_argument("--judge", action="store_true", help="read --text with the judge ([text.judge]), not the grammar")
    cr.set_defaults(func=cmd_critique)

    rf = sub.add_parser("rectify", help="generate, critique and repair until the critique passes")
    rf.add_argument("--generator", required=True, help="graphviz, perturbed, or an installed plug-in")
    rf.add_argument("--editor", default="graph", help="graph (apply instructions to the graph) or none")
    rf.add_argument("--option", action="append", help="KEY=VALUE for the generator (repeatable)")
    rf.add_argument("--refs", "--ref", dest="refs", type=refs_arg, required=True, help=REFS_HELP)
    rf.add_argument("-o", "--out", type=Path, required=True, help="folder for every step of every item")
    rf.add_argument("--max-steps", type=int, default=None, help="steps per item (default: [critique] max_steps)")
    rf.add_argument("--parse-images", action="store_true", help="critique the parsed image, not the known graph")
    rf.add_argument("--config", type=Path, default=None, help="TOML file overriding the pinned config")
    add_format(rf)
    rf.set_defaults(func=cmd_rectify)

    sy = sub.add_parser("synth", help="synthetic diagrams with exact ground truth (graphviz, pillow, mermaid, paper)")
    sy.add_argument("--style", required=True, choices=["graphviz", "pillow", "mermaid", "paper"],
                    help="renderer: graphviz, pillow, mermaid or paper (the last two draw in Chromium)")
    sy.add_argument("-n", type=int, default=100, help="number of items (default 100)")
    sy.add_argument("-o", "--out", type=Path, required=True, help="folder: <id>.png, <id>.json, <id>.elements.json")
    sy.add_argument("--seed", type=int, default=0, help="seed of the first item; item k uses seed + k (default 0)")
    sy.add_argument("--knob", action="append", metavar="NAME=VALUE",
                    help="force a knob of the style (repeatable); an item already in the folder is kept")
    sy.set_defaults(func=cmd_synth)

    de = sub.add_parser("detector", help="the learned diagram-element detector: dataset and training")
    dsub = de.add_subparsers(dest="detector_command", required=True)
    dd = dsub.add_parser("dataset", help="render diagrams and write an ultralytics dataset with exact boxes")
    dd.add_argument("-o", "--out", type=Path, required=True, help="dataset folder (data.yaml, images/, labels/)")
    dd.add_argument("--n", type=int, default=1000, help="number of images (default 1000)")
    dd.add_argument("--seed", type=int, default=0, help="seed of the first rendered diagram")
    dd.add_argument("--val-fraction", type=float, default=0.1, help="share of the images held out for validation")
    dd.add_argument("--tile", type=int, default=640, help="side of the square training tiles (= train --imgsz)")
    dd.add_argument("--text-px", type=float, default=20.0, help="text line height the renders are scaled to")
    dd.add_argument("--styles", default="graphviz=0.6,pillow=0.4",
                    help="share of each style, e.g. graphviz=0.4,pillow=0.2,mermaid=0.2,paper=0.2 "
                         "(default graphviz=0.6,pillow=0.4; mermaid and paper draw in Chromium)")
    dd.set_defaults(func=cmd_detector_dataset)
    dt = dsub.add_parser("train", help="train the detector from scratch (needs the `detector` extra)")
    dt.add_argument("--data", type=Path, required=True, help="a dataset folder (its data.yaml)")
    dt.add_argument("-o", "--out", type=Path, default=Path("runs/detector/train"), help="run folder")
    dt.add_argument("--epochs", type=int, default=30, help="training epochs")
    dt.add_argument("--imgsz", type=int, default=640, help="training image size (= dataset --tile)")
    dt.add_argument("--model", default="yolov8n.yaml", help="an ultralytics model yaml (from scratch)")
    dt.add_argument("--width", type=float, default=None, help="YOLOv8 width multiple, e.g. 0.125 (narrower)")
    dt.add_argument("--batch", type=int, default=16, help="batch size")
    dt.add_argument("--seed", type=int, default=0, help="training seed")
    dt.add_argument("--device", default="cpu", help="cpu, or a CUDA device such as 0")
    dt.add_argument("--workers", type=int, default=0, help="dataloader workers")
    dt.add_argument("--resume", action="store_true", help="continue the run in --out from weights/last.pt")
    dt.set_defaults(func=cmd_detector_train)

    im = sub.add_parser("import", help="import a published benchmark layout")
    im.add_argument("layout", choices=["sciflow-bench"], help="the published layout: sciflow-bench")
    im.add_argument("source", type=Path, help="the root folder of the published benchmark")
    im.add_argument("-o", "--out", type=Path, required=True,
                    help="folder: references/, source figures and generated/<baseline>/ images")
    im.set_defaults(func=cmd_import)
    add_catalog_commands(sub)
    return p
