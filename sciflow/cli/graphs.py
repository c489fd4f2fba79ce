"""Commands about graph files and the reference set: convert, import, validate, schema, stats,
prompt, download-models."""

from __future__ import annotations

import argparse
import contextlib
import json
import logging
import sys
from pathlib import Path

from rich.table import Table

from sciflow.cli.common import console, err_console, error_text, print_error, problem_lines, q, qmsg
from sciflow.cli.grammar import emit, write_rows


def cmd_convert(args: argparse.Namespace) -> int:
    from sciflow.format.convert import convert_path

    try:
        results = convert_path(args.source, args.out)
    except FileNotFoundError as exc:
        print_error(exc)
        return 2
    failed = [r for r in results if r.error]
    for r in results:
        if r.error:
            err_console.print(f"[red]failed[/red] {q(r.item_id)}: {qmsg(r.error)}")
        else:
            console.print(f"{q(r.source)} -> {q(r.output)}")
    console.print(f"converted {len(results) - len(failed)} of {len(results)}")
    return 1 if failed else 0


def cmd_validate(args: argparse.Namespace) -> int:
    """Schema of every graph file (folders: their ``*.json``); files of the reference set (or
    every file, with ``--references``) also get the checks of :mod:`sciflow.bench.references`."""
    from sciflow.bench.references import check_reference, is_reference
    from sciflow.format.graph import GraphFormatError, load_graph

    files: list[Path] = []
    for p in args.files:
        files += sorted(p.glob("*.json")) if p.is_dir() else [p]
    if not files:
        print_error(f"no graph file (*.json) in {', '.join(str(p) for p in args.files)}")
        return 2
    bad = 0
    for p in files:
        try:
            g = load_graph(p)
        except GraphFormatError as exc:  # one line per problem: <file>: <json path>: <reason>
            bad += 1
            for line in problem_lines(exc) or [error_text(exc)]:
                err_console.print(f"[red]error[/red] {qmsg(line)}")
            continue
        reference = args.references or is_reference(g)
        problems = check_reference(g) if reference else []
        for problem in problems:
            err_console.print(f"[red]error[/red] {q(p)}: {qmsg(problem)}")
        bad += bool(problems)
        if not problems:
            kind = "reference" if reference else "graph"
            console.print(f"[green]ok[/green] {q(p)}: {kind}, {len(g.nodes)} nodes, {len(g.edges)} edges")
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
        print_error(exc)
        return 2
    for item, err in rep.errors:
        err_console.print(f"[red]failed[/red] {q(item)}: {qmsg(err)}")
    console.print(f"{len(rep.references)} references -> {q(args.out)}/references/")
    for baseline, files in sorted(rep.generated.items()):
        console.print(f"{q(baseline)}: {len(files)} generated images -> {q(args.out)}/generated/{q(baseline)}/")
    return 1 if rep.errors else 0


def cmd_download_models(args: argparse.Namespace) -> int:
    """Each target in turn: one line per file fetched, one line per target that failed (the
    others are still fetched); rc 2 when any failed."""
    from sciflow.models.download import DEFAULT_TARGETS, TARGETS, DownloadRefused, download_models

    targets = list(dict.fromkeys(args.targets or DEFAULT_TARGETS))
    unknown = [t for t in targets if t not in TARGETS]
    if unknown:
        print_error(f"unknown download target(s) {', '.join(unknown)}; known: {', '.join(TARGETS)}")
        return 2
    failed = 0
    if not getattr(args, "verbose", False):  # the hub client logs every retry (dozens of lines without a network)
        with contextlib.suppress(ImportError):
            from huggingface_hub.utils import logging as hf_logging  # it sets its level when first imported

            hf_logging.set_verbosity_error()
        for name in ("urllib3", "filelock"):
            logging.getLogger(name).setLevel(logging.ERROR)
    for target in targets:
        try:
            fetched = download_models([target], args.dest)
        except DownloadRefused as exc:  # offline mode: the same for every target
            print_error(exc)
            return 2
        except Exception as exc:  # no network, a proxy, a full disk: whatever the hub libraries raise
            failed += 1
            reason = error_text(exc)
            if not isinstance(exc, OSError) or not exc.strerror:
                reason = f"{type(exc).__name__}: {reason}"
            print_error(f"could not download {target}: {reason} (needs internet access to the model hubs; "
                        "rerun with `sciflow -v download-models` for the details)")
            continue
        for f in fetched:
            console.print(q(f), soft_wrap=True)
    return 2 if failed else 0


def cmd_stats(args: argparse.Namespace) -> int:
    from sciflow.bench.stats import load_references, plot_stats, reference_stats

    if not args.refs.is_dir():
        print_error(f"reference folder not found: {args.refs}")
        return 2
    graphs, errors = load_references(args.refs)
    for path, err in errors:  # err: the file's error message (it names the file)
        err_console.print(f"[red]error[/red] {qmsg(_graph_error_line(err, path))}")
    if not graphs:
        print_error(f"no valid reference graph (*.json) in {args.refs}" if errors
                    else f"no reference graph (*.json) in {args.refs}")
        return 2
    s = reference_stats(graphs)
    rows = [{"measure": f"area: {area}", "value": n} for area, n in s["areas"].items()]
    rows += [{"measure": f"difficulty: {tier}", "value": n} for tier, n in s["difficulty"].items()]
    for key in ("nodes", "edges"):
        rows += [{"measure": f"{key} per item ({stat})", "value": s[key][stat]} for stat in ("min", "median", "mean",
                                                                                              "max")]
    rows += [{"measure": "non-linear share", "value": s["share_nonlinear"]},
             {"measure": "with feedback loops", "value": s["with_cycles"]},
             {"measure": "with groups", "value": s["with_groups"]}]
    say = console if args.format == "table" else err_console
    if args.format == "table":
        title = f"{args.refs}: {s['n_items']} items"
        t = Table(title=q(title), min_width=len(title) + 2)
        t.add_column("measure")
        t.add_column("value", justify="right")
        for r in rows:
            v = r["value"]
            t.add_row(q(r["measure"]), f"{v:.2f}" if isinstance(v, float) else str(v))
        console.print(t)
    else:
        emit(args.format, s, rows)
    if s["difficulty_mismatch"]:
        err_console.print(f"[yellow]stored difficulty differs from the computed one:[/yellow] "
                          f"{q(', '.join(s['difficulty_mismatch']))}")
    for figure in (p for p in (args.plot, args.out) if p is not None and p.suffix.lower() in (".png", ".svg", ".pdf")):
        say.print(f"plot written to {q(plot_stats(s, figure))}")
    if args.out is not None and args.out.suffix.lower() in (".json", ".csv", ".md", ".tex"):
        say.print(f"statistics written to {q(write_rows(args.out, s, rows))}")
    return 1 if errors else 0


def _graph_error_line(message: str, path: str) -> str:
    """One line for a graph file's error message (as :func:`str` of a GraphFormatError gives it:
    one line, or a header line over one line per problem), naming the file."""
    lines = [line.strip() for line in str(message).splitlines() if line.strip()]
    if not lines:
        return f"{path}: invalid graph file"
    text = lines[0] if len(lines) == 1 else f"{lines[0]}: {lines[1]}"
    if len(lines) > 2:
        text += f" (and more; `sciflow validate {path}` lists them)"
    return text if str(path) in text else f"{path}: {text}"


def cmd_prompt(args: argparse.Namespace) -> int:
    from sciflow.bench.generators import build_prompt_text
    from sciflow.bench.references import with_derived_fields
    from sciflow.format.graph import GraphFormatError, load_graph

    try:
        graph = load_graph(args.ref)
        if args.write:  # after a hand edit: the prompt and tier the checker expects
            with_derived_fields(graph).save(args.ref)
            console.print(f"rewrote the prompt and difficulty tier of {q(args.ref)}")
            return 0
        text = build_prompt_text(graph, args.style)
    except (GraphFormatError, ValueError) as exc:
        print_error(exc)
        return 2
    sys.stdout.write(text + "\n")  # verbatim: the prompt must not be re-wrapped
    return 0
