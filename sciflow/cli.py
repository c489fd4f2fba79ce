"""The ``sciflow`` command line: argument parsing and presentation only."""

from __future__ import annotations

import argparse
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
    "n_items": "items", "n_missing": "miss", "n_errors": "err", "node_f1": "node F1",
    "edge_f1": "edge F1", "graph_easy": "easy", "graph_medium": "med", "graph_hard": "hard",
}


def leaderboard_table(summaries: Sequence[dict[str, Any]], title: str = "sciflow leaderboard") -> Table:
    from sciflow.summary import leaderboard_rows

    rows = leaderboard_rows(summaries)
    # The terminal shows the headline columns; leaderboard.csv holds every column.
    headline = ("overall", "graph", "text", "image", "node_f1", "edge_f1")
    cols = ["run", "n_items", "n_missing", "n_errors"] + [k for k in headline if k in rows[0]]
    cols += [f"graph_{d}" for d in ("easy", "medium", "hard") if any(r.get(f"n_{d}") for r in rows)]
    table = Table(title=title)
    for c in cols:
        table.add_column(_HEADERS.get(c, c), justify="left" if c == "run" else "right",
                         no_wrap=c == "run")
    for r in rows:
        table.add_row(*[_fmt(r.get(c)) for c in cols])
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
    from sciflow.scoring import ScoringError, run_scoring

    config = load_config(args.config)
    with Progress(
        TextColumn("[bold]scoring"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        TextColumn("{task.description}"), console=err_console, transient=True,
    ) as progress:
        task = progress.add_task("", total=None)
        try:
            result = run_scoring(
                args.pred_dir, args.refs, args.out, config,
                run_name=args.name, jobs=args.jobs,
                cache_dir=None if args.no_cache else args.cache_dir,
                on_start=lambda n: progress.update(task, total=n),
                on_item=lambda row: progress.update(task, advance=1, description=row["id"]),
            )
        except ScoringError as exc:
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
    if args.out:
        console.print(f"results written to {args.out}/ (results.jsonl, summary.json, leaderboard.csv, manifest.json)")
    return 0


def cmd_summarize(args: argparse.Namespace) -> int:
    from sciflow.summary import SummaryError, read_summary, write_leaderboard

    summaries = []
    for d in args.results_dirs:
        try:
            summaries.append(read_summary(d))
        except SummaryError as exc:
            err_console.print(f"[red]error:[/red] {exc}")
            return 2
    console.print(leaderboard_table(summaries))
    if args.output:
        write_leaderboard(summaries, Path(args.output))
        console.print(f"leaderboard written to {args.output}")
    return 0


def cmd_convert(args: argparse.Namespace) -> int:
    from sciflow.convert import convert_path

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
    from sciflow.graph import GraphFormatError, load_graph

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
    from sciflow.graph import schema

    console.print_json(json.dumps(schema()))
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
    s.add_argument("--jobs", type=int, default=1, help="parallel parse workers for image predictions")
    s.add_argument("--cache-dir", type=Path, default=Path(".sciflow-cache"), help="parse cache folder")
    s.add_argument("--no-cache", action="store_true", help="do not read or write the parse cache")
    s.set_defaults(func=cmd_score)

    m = sub.add_parser("summarize", help="leaderboard of one or more results folders side by side")
    m.add_argument("results_dirs", type=Path, nargs="+")
    m.add_argument("-o", "--output", default=None, help="write the combined leaderboard CSV here")
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
