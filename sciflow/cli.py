"""The ``sciflow`` command line: argument parsing and presentation only."""

from __future__ import annotations

import argparse
import getpass
import json
import logging
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.logging import RichHandler
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from sciflow import __version__
from sciflow.config import ConfigError, load_config

# Wide enough for the leaderboard when output is piped (rich defaults to 80 columns there).
console = Console(width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True, soft_wrap=True)


def _fmt(v: Any) -> str:
    return "—" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


_HEADERS = {
    "n_items": "items", "n_missing": "miss", "n_errors": "err", "n_averaged": "n", "node_f1": "node F1",
    "edge_f1": "edge F1", "graph_easy": "easy", "graph_medium": "med", "graph_hard": "hard",
    "metric_version": "metric v",
}


def leaderboard_table(summaries: Sequence[dict[str, Any]], title: str = "sciflow leaderboard") -> Table:
    """The headline columns of :func:`sciflow.runs.summary.leaderboard_rows` (``n``: the items every
    mean is over) and, for runs that differ in them, the fallbacks, config hash, reference set
    and metric version, a value ending in ``*`` where it differs from the first run's (hashes
    shortened to 7 hex digits here; leaderboard.csv holds every column, always)."""
    from sciflow.runs.summary import DIFFERS, leaderboard_rows

    rows = leaderboard_rows(summaries)
    # The terminal shows the headline columns; leaderboard.csv holds every column.
    headline = ("overall", "graph", "text", "image", "node_f1", "edge_f1")
    cols = ["run", "n_items", "n_missing", "n_errors", "n_averaged"]
    cols += [k for k in headline if any(k in r for r in rows)]
    cols += [f"graph_{d}" for d in ("easy", "medium", "hard") if any(r.get(f"n_{d}") for r in rows)]
    provenance = [c for c in ("fallbacks", "config", "refs", "metric_version")
                  if any(str(r.get(c, "")).endswith(DIFFERS) for r in rows)]

    def cell(r: dict[str, Any], c: str) -> str:
        v = r.get(c)
        if c in ("config", "refs") and isinstance(v, str) and len(v) > 8:
            return v[:7] + (DIFFERS if v.endswith(DIFFERS) else "")
        return _fmt(v)

    table = Table(title=title)
    for c in cols:  # numbers are never cut either (headers wrap instead)
        width = max((len(cell(r, c)) for r in rows), default=1) if c != "run" else None
        table.add_column(_HEADERS.get(c, c), justify="left" if c == "run" else "right", no_wrap=c == "run",
                         min_width=width)
    for c in provenance:  # never cut: the marker is at the end
        width = max(len(_HEADERS.get(c, c)), *(len(cell(r, c)) for r in rows))
        table.add_column(_HEADERS.get(c, c), justify="left", no_wrap=True, min_width=width)
    for r in rows:
        table.add_row(*[cell(r, c) for c in cols + provenance])
    return table


def breakdown_table(summary: dict[str, Any], key: str, title: str) -> Table | None:
    cells = summary.get(key) or {}
    if not cells:
        return None
    metrics = [k for k in ("graph", "node_f1", "edge_f1") if k in summary["means"]]
    table = Table(title=title)
    table.add_column(key.replace("by_", ""))
    table.add_column("n", justify="right")
    for m in metrics:
        table.add_column(m, justify="right")
    for name, cell in cells.items():
        table.add_row(name, str(cell["n"]), *[_fmt(cell.get(m)) for m in metrics])
    return table


def cmd_score(args: argparse.Namespace) -> int:
    from sciflow.runs.executors import ExecutorError
    from sciflow.runs.scoring import ScoringError, run_scoring

    config = load_config(args.config)
    with Progress(
        TextColumn("[bold]scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        TextColumn("{task.description}"), console=err_console, transient=True,
    ) as progress:
        task = progress.add_task("", total=None)
        try:
            result = run_scoring(
                args.pred_dir, args.refs, args.out, config,
                run_name=args.name, executor=args.executor, jobs=args.jobs, threads=args.threads,
                address=args.address,
                cache_dir=None if args.no_cache else args.cache_dir, resume=not args.no_resume,
                critique=args.critique, device=args.device,
                on_start=lambda n: progress.update(task, total=n),
                on_item=lambda row: progress.update(task, advance=1, description=row["id"]),
            )
        except (ScoringError, ExecutorError) as exc:
            err_console.print(f"[red]error:[/red] {exc}")
            return 2
    s = result.summary
    console.print(leaderboard_table([s]))
    for key, title in (("by_difficulty", "by difficulty"), ("by_area", "by research area")):
        t = breakdown_table(s, key, title)
        if t is not None:
            console.print(t)
    for e in s["errors"]:
        err_console.print(f"[yellow]{e['status']}[/yellow] {e['id']}: {e['error']}")
    if s["missing"]:
        err_console.print(f"[yellow]missing predictions ({len(s['missing'])}):[/yellow] {', '.join(s['missing'])}")
    if s["unreferenced_predictions"]:
        err_console.print(
            f"[yellow]predictions without reference (ignored):[/yellow] {', '.join(s['unreferenced_predictions'])}"
        )
    if s["fallbacks"]:
        err_console.print(f"[yellow]FALLBACK backends used:[/yellow] {', '.join(s['fallbacks'])}")
    if result.n_reused:
        err_console.print(f"{result.n_reused} items reused from the previous run (unchanged inputs and config)")
    if args.out:
        console.print(f"results written to {args.out}/ (results.jsonl, summary.json, leaderboard.csv, manifest.json)")
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    """Runs side by side. Runs that differ in reference set or metric version (or where one
    recorded it and another did not) are refused, rc 2 and one line naming the runs and what
    differs, unless ``--allow-mixed``; the table then says MIXED. Differing config hashes and
    fallbacks are marked ``*`` in the table and CSV and named in a footnote."""
    from rich.markup import escape

    from sciflow.runs.summary import DIFFERS, SummaryError, read_summary, run_differences, unrecorded, write_leaderboard

    summaries = []
    for d in args.results_dirs:
        try:
            summaries.append(read_summary(d))
        except SummaryError as exc:
            err_console.print(f"[red]error:[/red] {escape(str(exc))}")
            return 2
    for s in summaries:
        if missing := unrecorded(s):
            err_console.print(f"[yellow]warning:[/yellow] {escape(str(s['run']))}: no {' and no '.join(missing)} "
                              "recorded (a run from before they were); treated as unknown")
    diffs = run_differences(summaries)
    blocking = [d for d in diffs if d.blocking]
    if blocking and not args.allow_mixed:
        what = " | ".join(d.describe() for d in blocking)
        err_console.print(f"[red]error:[/red] not comparable: {escape(what)} (--allow-mixed to tabulate anyway)")
        return 2
    title = "sciflow leaderboard"
    if blocking:
        labels = [d.aspect.label for d in blocking]
        title += f" (MIXED: {' and '.join(labels)} {'differs' if len(labels) == 1 else 'differ'}; not comparable)"
    console.print(leaderboard_table(summaries, title=title))
    if diffs:
        console.print(f"{DIFFERS} differs from the first run ({escape(str(summaries[0]['run']))}): "
                      + escape(" | ".join(d.describe() for d in diffs)), soft_wrap=True)
    if args.output:
        write_leaderboard(summaries, Path(args.output))
        console.print(f"leaderboard written to {escape(str(args.output))}")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from sciflow.format.convert import convert_path

    try:
        results = convert_path(args.source, args.out)
    except FileNotFoundError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    failed = [r for r in results if r.error]
    for r in results:
        if r.error:
            err_console.print(f"[red]failed[/red] {r.item_id}: {r.error}")
        else:
            console.print(f"{r.source} -> {r.output}")
    console.print(f"converted {len(results) - len(failed)} of {len(results)}")
    return 1 if failed else 0


def cmd_validate(args: argparse.Namespace) -> int:
    from sciflow.format.graph import GraphFormatError, load_graph

    bad = 0
    for p in args.files:
        try:
            g = load_graph(p)
            console.print(f"[green]ok[/green] {p}: {len(g.nodes)} nodes, {len(g.edges)} edges")
        except GraphFormatError as exc:
            bad += 1
            err_console.print(f"[red]invalid[/red] {exc}")
    return 1 if bad else 0


def cmd_schema(args: argparse.Namespace) -> int:
    from sciflow.format.graph import schema

    console.print_json(json.dumps(schema()))
    return 0


def _progress(label: str) -> Progress:
    return Progress(
        TextColumn(f"[bold]{label}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        TextColumn("{task.description}"), console=err_console, transient=True,
    )


def cmd_parse(args: argparse.Namespace) -> int:
    from sciflow.runs.parse_batch import collect_images, parse_to_dir

    config = load_config(args.config)
    try:
        images = collect_images(args.inputs)
    except FileNotFoundError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    with _progress("parsing") as progress:
        task = progress.add_task("", total=len(images))
        outcomes = parse_to_dir(
            images, args.out, config, jobs=args.jobs, debug_dir=args.debug_dir,
            cache_dir=None if args.no_cache else args.cache_dir, device=args.device,
            on_done=lambda o: progress.update(task, advance=1, description=o.item_id),
        )
    failed = [o for o in outcomes if o.error]
    for o in failed:
        err_console.print(f"[red]failed[/red] {o.path}: {o.error}")
    ok = len(outcomes) - len(failed)
    cached = sum(o.cached for o in outcomes if not o.error)
    console.print(f"parsed {ok} of {len(outcomes)} images into {args.out}/ ({cached} from cache)")
    return 1 if failed else 0


def cmd_render(args: argparse.Namespace) -> int:
    from sciflow.format.graph import GraphFormatError, load_graph
    from sciflow.views.viz import render_graph

    try:
        graph = load_graph(args.graph)
        other = load_graph(args.diff) if args.diff else None
        config = load_config(args.config)
        out = render_graph(graph, args.output, diff=other, matching=config.matching)
    except (GraphFormatError, ValueError) as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    console.print(f"wrote {out}")
    return 0


def cmd_report(args: argparse.Namespace) -> int:
    from sciflow.runs.summary import SummaryError
    from sciflow.views.report import build_report

    try:
        out = build_report(args.results_dirs, args.output, recompute=args.recompute)
    except (SummaryError, FileNotFoundError) as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    console.print(f"wrote {out}")
    return 0


def cmd_download_models(args: argparse.Namespace) -> int:
    from sciflow.models.download import DownloadRefused, download_models

    try:
        fetched = download_models(args.targets or None, args.dest)
    except (DownloadRefused, ValueError) as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    for f in fetched:
        console.print(f)
    return 0


def cmd_stats(args: argparse.Namespace) -> int:
    from sciflow.bench.stats import load_references, plot_stats, reference_stats

    graphs, errors = load_references(args.refs)
    for _path, err in errors:
        err_console.print(f"[red]invalid[/red] {err}")
    s = reference_stats(graphs)
    t = Table(title=f"{args.refs}: {s['n_items']} items")
    t.add_column("measure")
    t.add_column("value", justify="right")
    for area, n in s["areas"].items():
        t.add_row(f"area: {area}", str(n))
    for tier, n in s["difficulty"].items():
        t.add_row(f"difficulty: {tier}", str(n))
    for key in ("nodes", "edges"):
        d = s[key]
        t.add_row(f"{key} per item", f"min {d['min']}  median {d['median']}  mean {d['mean']:.1f}  max {d['max']}")
    t.add_row("non-linear", f"{100 * s['share_nonlinear']:.0f}%")
    t.add_row("with feedback loops", str(s["with_cycles"]))
    t.add_row("with groups", str(s["with_groups"]))
    console.print(t)
    if s["difficulty_mismatch"]:
        err_console.print(f"[yellow]stored difficulty differs from the computed one:[/yellow] "
                          f"{', '.join(s['difficulty_mismatch'])}")
    if args.plot:
        console.print(f"plot written to {plot_stats(s, args.plot)}")
    return 1 if errors else 0


def cmd_prompt(args: argparse.Namespace) -> int:
    from sciflow.bench.generators import build_prompt_text
    from sciflow.format.graph import GraphFormatError, load_graph

    try:
        text = build_prompt_text(load_graph(args.ref), args.style)
    except (GraphFormatError, ValueError) as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    sys.stdout.write(text + "\n")  # verbatim: the prompt must not be re-wrapped
    return 0


def _key_values(pairs: Sequence[str] | None) -> dict[str, Any]:
    """``["severity=2", "degrade=blur"]`` -> ``{"severity": 2, "degrade": "blur"}`` (JSON values when they parse)."""
    options: dict[str, Any] = {}
    for opt in pairs or []:
        key, _, value = opt.partition("=")
        try:
            options[key] = json.loads(value)
        except json.JSONDecodeError:
            options[key] = value
    return options


def _run_generation(generator, args: argparse.Namespace) -> int:
    from sciflow.bench.generators import GeneratorError, run_generator

    with _progress(f"generating ({generator.name})") as progress:
        task = progress.add_task("", total=None)
        try:
            outcomes = run_generator(
                generator, args.refs, args.out, style=args.style, resume=not args.no_resume,
                on_start=lambda n: progress.update(task, total=n),
                on_item=lambda o: progress.update(task, advance=1, description=o.item_id),
            )
        except GeneratorError as exc:
            err_console.print(f"[red]error:[/red] {exc}")
            return 2
    for o in outcomes:
        if o.status == "error":
            err_console.print(f"[red]failed[/red] {o.item_id}: {o.error}")
    counts = {k: sum(o.status == k for o in outcomes) for k in ("ok", "skipped", "error")}
    console.print(
        f"{counts['ok']} generated, {counts['skipped']} already done, {counts['error']} failed -> {args.out}/"
    )
    return 1 if counts["error"] else 0


def cmd_generate(args: argparse.Namespace) -> int:
    from sciflow.bench.generators import GeneratorError, get_generator

    options = _key_values(args.option)
    try:
        gen = get_generator(args.name, **options)
    except GeneratorError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    return _run_generation(gen, args)


def cmd_perturb(args: argparse.Namespace) -> int:
    from sciflow.bench.generators import GeneratorError, PerturbedGenerator

    try:
        gen = PerturbedGenerator(severity=args.severity, seed=args.seed, degrade=args.degrade)
    except GeneratorError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    return _run_generation(gen, args)


def cmd_import(args: argparse.Namespace) -> int:
    from sciflow.format.convert import import_sciflow_bench

    try:
        rep = import_sciflow_bench(args.source, args.out)
    except FileNotFoundError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    for item, err in rep.errors:
        err_console.print(f"[red]failed[/red] {item}: {err}")
    console.print(f"{len(rep.references)} references -> {args.out}/references/")
    for baseline, files in sorted(rep.generated.items()):
        console.print(f"{baseline}: {len(files)} generated images -> {args.out}/generated/{baseline}/")
    return 1 if rep.errors else 0


def cmd_verify(args: argparse.Namespace) -> int:
    from sciflow.verify.server import serve

    config = load_config(args.config)
    serve(args.figures_dir, args.out, host=args.host, port=args.port, annotator=args.annotator, config=config)
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from sciflow.verify.agreement import agreement

    try:
        report = agreement(args.verified_dir)
    except FileNotFoundError as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    if args.json:
        sys.stdout.write(json.dumps(report.to_dict(), indent=2) + "\n")
    else:
        sys.stdout.write(report.format() + "\n")
    return 0


def cmd_critique(args: argparse.Namespace) -> int:
    from sciflow.critic import critique_input, format_critique
    from sciflow.format.graph import GraphFormatError
    from sciflow.format.imageio import ImageLoadError

    try:
        c = critique_input(args.input, args.ref, config=load_config(args.config))
    except (GraphFormatError, ImageLoadError, FileNotFoundError) as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    sys.stdout.write(format_critique(c, args.format) + "\n")
    return 0 if c.passed else 1


def cmd_rectify(args: argparse.Namespace) -> int:
    from sciflow.bench.generators import GeneratorError
    from sciflow.critic import rectify_folder

    options = _key_values(args.option)
    with _progress("rectifying") as progress:
        task = progress.add_task("", total=None)
        try:
            summary = rectify_folder(
                args.generator, args.refs, args.out, editor=None if args.editor == "none" else args.editor,
                generator_options=options, config=load_config(args.config), max_steps=args.max_steps,
                parse_images=args.parse_images,
                on_item=lambda t: progress.update(task, advance=1, description=t.item_id),
            )
        except GeneratorError as exc:
            err_console.print(f"[red]error:[/red] {exc}")
            return 2
    console.print_json(json.dumps(summary))
    return 0


_DEVICE_HELP = ("where the models run: cpu (default), cuda, cuda:N or auto (cuda when usable, else cpu); "
                "not part of the config hash, recorded in the manifest")


def cmd_detector_dataset(args: argparse.Namespace) -> int:
    from sciflow.bench.detector.dataset import write_dataset

    with _progress("rendering") as progress:
        task = progress.add_task("", total=args.n)
        summary = write_dataset(
            args.out, args.n, seed=args.seed, val_fraction=args.val_fraction, tile=args.tile, text_px=args.text_px,
            progress=lambda k: progress.update(task, completed=k),
        )
    console.print_json(json.dumps({k: summary[k] for k in ("images", "boxes", "styles")}))
    console.print(f"dataset written to {args.out}/ (data.yaml, dataset.json)")
    return 0


def cmd_detector_train(args: argparse.Namespace) -> int:
    from sciflow.bench.detector.train import TrainConfig, train

    config = TrainConfig(
        data=str(args.data), epochs=args.epochs, imgsz=args.imgsz, model=args.model, width=args.width,
        batch=args.batch, seed=args.seed, device=args.device, workers=args.workers,
    )
    try:
        meta = train(config, args.out, resume=args.resume)
    except (FileNotFoundError, RuntimeError) as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    console.print_json(json.dumps({"validation": meta["validation"], "onnx_sha256": meta["onnx_sha256"]}))
    console.print(f"weights and metadata in {args.out}/ (layout-detector.onnx, layout-detector.json)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="sciflow", description=__doc__)
    p.add_argument("--version", action="version", version=f"sciflow {__version__}")
    p.add_argument("-v", "--verbose", action="store_true", help="debug logging")
    sub = p.add_subparsers(dest="command", required=True)

    s = sub.add_parser("score", help="score predictions (graphs or images) against reference graphs")
    s.add_argument("pred_dir", type=Path, help="folder of predicted graphs (*.json) or images")
    s.add_argument("--refs", type=Path, required=True, help="folder of reference graphs (*.json)")
    s.add_argument("--out", type=Path, default=None, help="results folder to write")
    s.add_argument("--name", default=None, help="run name in the leaderboard (default: the --out folder name)")
    s.add_argument("--config", type=Path, default=None, help="TOML file overriding the pinned config")
    s.add_argument("--executor", choices=["local", "ray"], default="local",
                   help="local process pool (default) or Ray (pip install 'sciflow[ray]')")
    s.add_argument("--jobs", type=int, default=1, help="workers (processes or Ray actors)")
    s.add_argument("--threads", type=int, default=0,
                   help="math threads per worker (OCR, torch); default: all cores for one local worker, "
                        "cores / jobs for several, 1 per Ray actor")
    s.add_argument("--address", default=None, help="Ray cluster address (default: start a local runtime)")
    s.add_argument("--no-resume", action="store_true", help="rescore every item even if results exist")
    s.add_argument("--critique", action="store_true", help="write a critique (verdict, explanation, edits) per item")
    s.add_argument("--cache-dir", type=Path, default=Path(".sciflow-cache"),
                   help="cache folder: parsed graphs and the label-embedding store")
    s.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    s.add_argument("--device", default="cpu", help=_DEVICE_HELP)
    s.set_defaults(func=cmd_score)

    m = sub.add_parser("summarize", help="leaderboard of one or more results folders side by side")
    m.add_argument("results_dirs", type=Path, nargs="+")
    m.add_argument("-o", "--output", default=None, help="write the combined leaderboard CSV here")
    m.add_argument("--allow-mixed", action="store_true",
                   help="tabulate runs scored against different reference sets or metric versions "
                        "(the table is marked MIXED)")
    m.set_defaults(func=cmd_summarize)

    c = sub.add_parser("convert", help="convert SciFlow-Bench canvas_full.json files to sciflow graphs")
    c.add_argument("source", type=Path, help="a canvas_full.json, a paper folder, or a root of paper folders")
    c.add_argument("-o", "--out", type=Path, required=True)
    c.set_defaults(func=cmd_convert)

    v = sub.add_parser("validate", help="validate graph files against the canonical format")
    v.add_argument("files", type=Path, nargs="+")
    v.set_defaults(func=cmd_validate)

    sc = sub.add_parser("schema", help="print the JSON Schema of the canonical graph format")
    sc.set_defaults(func=cmd_schema)

    pa = sub.add_parser("parse", help="parse diagram images into graphs (the inverse parser)")
    pa.add_argument("inputs", type=Path, nargs="+", help="image files or folders of images")
    pa.add_argument("-o", "--out", type=Path, required=True, help="folder for the parsed graphs (<stem>.json)")
    pa.add_argument("--debug-dir", type=Path, default=None, help="write one overlay PNG per agent here")
    pa.add_argument("--config", type=Path, default=None)
    pa.add_argument("--jobs", type=int, default=1)
    pa.add_argument("--cache-dir", type=Path, default=Path(".sciflow-cache"))
    pa.add_argument("--no-cache", action="store_true")
    pa.add_argument("--device", default="cpu", help=_DEVICE_HELP)
    pa.set_defaults(func=cmd_parse)

    r = sub.add_parser("render", help="Graphviz rendering of a graph, or of its comparison with another")
    r.add_argument("graph", type=Path, help="the graph to draw (with --diff: the prediction)")
    r.add_argument("--diff", type=Path, default=None, help="reference graph: draw it coloured by the comparison")
    r.add_argument("-o", "--output", type=Path, required=True, help="FILE.svg or FILE.png")
    r.add_argument("--config", type=Path, default=None)
    r.set_defaults(func=cmd_render)

    rp = sub.add_parser("report", help="one self-contained HTML report of one or more results folders")
    rp.add_argument("results_dirs", type=Path, nargs="+")
    rp.add_argument("-o", "--output", type=Path, required=True)
    rp.add_argument("--recompute", action="store_true", help="recompute diffs instead of using stored diagnostics")
    rp.set_defaults(func=cmd_report)

    dm = sub.add_parser("download-models", help="fetch the real CLIP/LPIPS weights (needs internet)")
    dm.add_argument("targets", nargs="*", help="clip, lpips, minilm (default: clip and lpips)")
    dm.add_argument("--dest", type=Path, default=None, help="cache folder (default: the libraries' own caches)")
    dm.set_defaults(func=cmd_download_models)

    st_ = sub.add_parser("stats", help="distributions of a folder of reference graphs")
    st_.add_argument("refs", type=Path)
    st_.add_argument("--plot", type=Path, default=None, help="also write a figure (PNG/SVG/PDF)")
    st_.set_defaults(func=cmd_stats)

    pr = sub.add_parser("prompt", help="the prompt of a reference graph")
    pr.add_argument("ref", type=Path)
    pr.add_argument("--style", choices=["structured", "naive"], default="structured")
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
            g.add_argument("--seed", type=int, default=0)
            g.add_argument("--degrade", default=None,
                           help="visual degradation: blur, jpeg20, noise, downscale, rotate, clutter or random")
            g.set_defaults(func=cmd_perturb)
        g.add_argument("--refs", type=Path, required=True)
        g.add_argument("-o", "--out", type=Path, required=True)
        g.add_argument("--style", choices=["structured", "naive"], default="structured")
        g.add_argument("--no-resume", action="store_true", help="regenerate items already done")

    ve = sub.add_parser("verify", help="serve the human verification page for parsed figures")
    ve.add_argument("figures_dir", type=Path)
    ve.add_argument("--out", type=Path, required=True, help="folder for verified graphs and audit logs")
    ve.add_argument("--host", default="127.0.0.1")
    ve.add_argument("--port", type=int, default=8765)
    ve.add_argument("--annotator", default=getpass.getuser(), help="name written into the audit log")
    ve.add_argument("--config", type=Path, default=None)
    ve.set_defaults(func=cmd_verify)

    ag = sub.add_parser("agreement", help="parser agreement (P/R/F1) from verification edit logs")
    ag.add_argument("verified_dir", type=Path)
    ag.add_argument("--json", action="store_true")
    ag.set_defaults(func=cmd_agreement)

    cr = sub.add_parser("critique", help="judgement, explanation and edit instructions for one diagram")
    cr.add_argument("input", type=Path, help="an image (parsed first) or a predicted graph (.json)")
    cr.add_argument("--ref", type=Path, required=True)
    cr.add_argument("--format", choices=["json", "text", "tagged"], default="text")
    cr.add_argument("--config", type=Path, default=None)
    cr.set_defaults(func=cmd_critique)

    rf = sub.add_parser("rectify", help="generate, critique and repair until the critique passes")
    rf.add_argument("--generator", required=True, help="graphviz, perturbed, or an installed plug-in")
    rf.add_argument("--editor", default="graph", help="graph (apply instructions to the graph) or none")
    rf.add_argument("--option", action="append", help="KEY=VALUE for the generator (repeatable)")
    rf.add_argument("--refs", type=Path, required=True)
    rf.add_argument("-o", "--out", type=Path, required=True)
    rf.add_argument("--max-steps", type=int, default=None)
    rf.add_argument("--parse-images", action="store_true", help="critique the parsed image, not the known graph")
    rf.add_argument("--config", type=Path, default=None)
    rf.set_defaults(func=cmd_rectify)

    de = sub.add_parser("detector", help="the learned diagram-element detector: dataset and training")
    dsub = de.add_subparsers(dest="detector_command", required=True)
    dd = dsub.add_parser("dataset", help="render diagrams and write an ultralytics dataset with exact boxes")
    dd.add_argument("-o", "--out", type=Path, required=True)
    dd.add_argument("--n", type=int, default=1000, help="number of images (default 1000)")
    dd.add_argument("--seed", type=int, default=0)
    dd.add_argument("--val-fraction", type=float, default=0.1)
    dd.add_argument("--tile", type=int, default=640, help="side of the square training tiles (= train --imgsz)")
    dd.add_argument("--text-px", type=float, default=20.0, help="text line height the renders are scaled to")
    dd.set_defaults(func=cmd_detector_dataset)
    dt = dsub.add_parser("train", help="train the detector from scratch (needs the `detector` extra)")
    dt.add_argument("--data", type=Path, required=True, help="a dataset folder (its data.yaml)")
    dt.add_argument("-o", "--out", type=Path, default=Path("runs/detector/train"), help="run folder")
    dt.add_argument("--epochs", type=int, default=30)
    dt.add_argument("--imgsz", type=int, default=640)
    dt.add_argument("--model", default="yolov8n.yaml", help="an ultralytics model yaml (from scratch)")
    dt.add_argument("--width", type=float, default=None, help="YOLOv8 width multiple, e.g. 0.125 (narrower)")
    dt.add_argument("--batch", type=int, default=16)
    dt.add_argument("--seed", type=int, default=0)
    dt.add_argument("--device", default="cpu", help="cpu, or a CUDA device such as 0")
    dt.add_argument("--workers", type=int, default=0, help="dataloader workers")
    dt.add_argument("--resume", action="store_true", help="continue the run in --out from weights/last.pt")
    dt.set_defaults(func=cmd_detector_train)

    im = sub.add_parser("import", help="import a published benchmark layout")
    im.add_argument("layout", choices=["sciflow-bench"])
    im.add_argument("source", type=Path)
    im.add_argument("-o", "--out", type=Path, required=True)
    im.set_defaults(func=cmd_import)
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    logging.basicConfig(
        level=logging.DEBUG if args.verbose else logging.WARNING,
        format="%(message)s",
        handlers=[RichHandler(console=err_console, show_path=False)],
    )
    try:
        return args.func(args)
    except ConfigError as exc:
        err_console.print(f"[red]config error:[/red] {exc}")
        return 2


if __name__ == "__main__":
    sys.exit(main())
