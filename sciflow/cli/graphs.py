"""Commands about graph files and the reference set: convert, import, validate, schema, stats,
prompt, download-models."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from rich.table import Table

from sciflow.cli.common import console, err_console


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
    """Schema of every graph file (folders: their ``*.json``); reference files (with a prompt or
    a difficulty tier) also get the reference checks of :mod:`sciflow.bench.references`."""
    from rich.markup import escape

    from sciflow.bench.references import check_reference, is_reference
    from sciflow.format.graph import GraphFormatError, load_graph

    files: list[Path] = []
    for p in args.files:
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    if not files:
        err_console.print(f"[red]error:[/red] no graph file in {', '.join(escape(str(p)) for p in args.files)}")
        return 2
    bad = 0
    for p in files:
        try:
            g = load_graph(p)
        except GraphFormatError as exc:
            bad += 1
            err_console.print(f"[red]error[/red] {escape(str(exc))}")
            continue
        problems = check_reference(g) if is_reference(g) else []
        for problem in problems:
            err_console.print(f"[red]error[/red] {escape(str(p))}: {escape(problem)}")
        bad += bool(problems)
        if not problems:
            kind = "reference" if is_reference(g) else "graph"
            console.print(f"[green]ok[/green] {escape(str(p))}: {kind}, {len(g.nodes)} nodes, {len(g.edges)} edges")
    console.print(f"{bad} of {len(files)} files have problems" if bad else f"all {len(files)} files are valid")
    return 1 if bad else 0


def cmd_schema(args: argparse.Namespace) -> int:
    from sciflow.format.graph import schema

    console.print_json(json.dumps(schema()))
    return 0


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
    import dataclasses

    from sciflow.bench.difficulty import difficulty
    from sciflow.bench.generators import build_prompt_text
    from sciflow.bench.prompts import build_prompt
    from sciflow.format.graph import GraphFormatError, load_graph

    try:
        graph = load_graph(args.ref)
        if args.write:  # after a hand edit: the prompt and tier the checker expects
            graph = dataclasses.replace(graph, meta={**graph.meta, "difficulty": difficulty(graph)}, prompt=None)
            graph = dataclasses.replace(graph, prompt=build_prompt(graph))
            graph.save(args.ref)
            console.print(f"rewrote the prompt and difficulty tier of {args.ref}")
            return 0
        text = build_prompt_text(graph, args.style)
    except (GraphFormatError, ValueError) as exc:
        err_console.print(f"[red]error:[/red] {exc}")
        return 2
    sys.stdout.write(text + "\n")  # verbatim: the prompt must not be re-wrapped
    return 0
