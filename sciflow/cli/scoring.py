"""Commands that score, summarize, report, parse and render."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from sciflow.cli.common import _progress, breakdown_table, console, err_console, leaderboard_table, print_error, q, qmsg
from sciflow.cli.grammar import emit, headline_columns, write_rows
from sciflow.config import load_config
from sciflow.models.strict import fallback_line
from sciflow.runs.trust import reliability_line


def _check_score_inputs(args: argparse.Namespace) -> str | None:
    """Why ``score`` cannot run on these folders (before any model loads), or None."""
    from sciflow.runs.items import ScoringError, pair_items

    try:
        items, orphans = pair_items(args.pred_dir, args.refs)
    except ScoringError as exc:
        return str(exc)
    if not items:
        return f"no reference graph (*.json) in {args.refs}"
    if all(i.prediction is None and not i.samples for i in items):
        if orphans:
            shown = ", ".join(orphans[:3]) + (", ..." if len(orphans) > 3 else "")
            ids = ", ".join(i.id for i in items[:3]) + (", ..." if len(items) > 3 else "")
            return (f"no prediction in {args.pred_dir} matches a reference: predictions are named {shown}, "
                    f"references {ids}; name each prediction after its reference's id (e.g. {items[0].id}.png, "
                    f"or {items[0].id}/<k>.png for several samples)")
        return f"no prediction (a graph .json or an image) in {args.pred_dir}"
    if args.out is not None and args.out.exists() and not args.out.is_dir():
        return f"--out {args.out} is a file, not a folder"
    return None


def cmd_score(args: argparse.Namespace) -> int:
    from sciflow.runs.executors import ExecutorError
    from sciflow.runs.scoring import ScoringError, run_scoring
    from sciflow.runs.summary import leaderboard_rows

    config = load_config(args.config)
    problem = _check_score_inputs(args)
    if problem:
        print_error(problem)
        return 2
    if (args.strict or config.trust.strict) and (problem := _strict_problem(args, config)):
        print_error(problem)
        return 2
    with _progress("scoring") as progress:
        task = progress.add_task("", total=None)
        try:
            result = run_scoring(
                args.pred_dir, args.refs, args.out, config,
                run_name=args.name, executor=args.executor, jobs=args.jobs, threads=args.threads,
                address=args.address,
                cache_dir=None if args.no_cache else args.cache_dir, resume=not args.no_resume,
                critique=args.critique, device=args.device, min_reliability=args.min_reliability,
                on_start=lambda n: progress.update(task, total=n),
                on_item=lambda row: progress.update(task, advance=1, description=str(row["id"])),
            )
        except (ScoringError, ExecutorError) as exc:
            print_error(exc)
            return 2
    s = result.summary
    say = console if args.format == "table" else err_console  # machine formats: stdout holds them alone
    if args.format == "table":
        console.print(leaderboard_table([s]))
        for key, title in (("by_difficulty", "by difficulty"), ("by_area", "by research area")):
            t = breakdown_table(s, key, title)
            if t is not None:
                console.print(t)
    else:
        rows = leaderboard_rows([s])
        emit(args.format, s, rows, headline_columns(rows))
    for e in s["errors"]:
        err_console.print(f"[yellow]{q(e['status'])}[/yellow] {q(e['id'])}: {qmsg(e['error'])}")
    if s["missing"]:
        err_console.print(f"[yellow]missing predictions ({len(s['missing'])}):[/yellow] "
                          f"{', '.join(q(m) for m in s['missing'])}")
    if s["unreferenced_predictions"]:
        err_console.print(f"[yellow]predictions without reference (ignored):[/yellow] "
                          f"{', '.join(q(p) for p in s['unreferenced_predictions'])}")
    if result.n_reused:
        err_console.print(f"{result.n_reused} items reused from the previous run (unchanged inputs and config)")
    if spread := s.get("samples"):
        sd = spread["mean_sd"]
        err_console.print(f"{spread['items']} items with several samples ({spread['per_item']:.1f} per item): scored "
                          "per sample, averaged per item" + (f"; mean sd over items: graph {sd['graph']:.3f}"
                                                              if sd.get("graph") is not None else ""), soft_wrap=True)
    if args.out:
        say.print(f"results written to {q(args.out)}/ (results.jsonl, summary.json, leaderboard.csv, "
                  "manifest.json)", soft_wrap=True)
    if line := reliability_line(s):
        err_console.print(qmsg(line), soft_wrap=True)
    if line := fallback_line(result.manifest.get("models") or {}):  # the last line: every fallback, named
        err_console.print(f"[yellow]{qmsg(line)}[/yellow]", soft_wrap=True)
    return 0


def _strict_problem(args: argparse.Namespace, config: Any) -> str | None:
    """Why strict mode refuses this run (one line), or None (:func:`sciflow.models.strict.check_strict`)."""
    from sciflow.models.strict import StrictError, check_strict
    from sciflow.runs.items import is_image, pair_items
    from sciflow.runs.samples import expand_samples

    try:
        if getattr(args, "refs", None) is not None:  # score: the image models and the parser serve image predictions
            items = expand_samples(pair_items(args.pred_dir, args.refs)[0])  # samples <id>/<k>.png count too
            images = any(is_image(i.prediction) for i in items)
            check_strict(config, image=images, parser=images)
        else:  # parse: the parser only
            check_strict(config, image=False, parser=True)
    except StrictError as exc:
        return str(exc)
    return None


def cmd_summarize(args: argparse.Namespace) -> int:
    """Runs side by side. Runs that differ in reference set or metric version (or where one
    recorded it and another did not) are refused, rc 2 and one line naming the runs and what
    differs, unless ``--allow-mixed``; the table then says MIXED. Differing config hashes and
    fallbacks are marked ``*`` in the table and CSV and named in a footnote."""
    from sciflow.runs.summary import (
        DIFFERS,
        SummaryError,
        leaderboard_rows,
        read_summary,
        run_differences,
        unrecorded,
        write_leaderboard,
    )

    summaries = []
    for d in args.results_dirs:
        try:
            summaries.append(read_summary(d, min_reliability=args.min_reliability))
        except SummaryError as exc:
            print_error(exc)
            return 2
    for s in summaries:
        if missing := unrecorded(s):
            err_console.print(f"[yellow]warning:[/yellow] {q(s['run'])}: no {' and no '.join(missing)} "
                              "recorded (a run from before they were); treated as unknown")
    diffs = run_differences(summaries)
    blocking = [d for d in diffs if d.blocking]
    if blocking and not args.allow_mixed:
        what = " | ".join(d.describe() for d in blocking)
        print_error(f"not comparable: {what} (--allow-mixed to tabulate anyway)")
        return 2
    title = "sciflow leaderboard"
    if blocking:
        labels = [d.aspect.label for d in blocking]
        title += f" (MIXED: {' and '.join(labels)} {'differs' if len(labels) == 1 else 'differ'}; not comparable)"
    if args.min_reliability is not None:
        title += f" (items with parse reliability < {args.min_reliability:g} left out of the means)"
    say = console if args.format == "table" else err_console
    rows = leaderboard_rows(summaries)
    if args.format == "table":
        console.print(leaderboard_table(summaries, title=title))
    else:
        emit(args.format, rows, rows, headline_columns(rows))
    for s in summaries:
        if line := reliability_line(s):
            say.print(qmsg(f"{s['run']}: {line}"), soft_wrap=True)
    if diffs:
        say.print(f"{DIFFERS} differs from the first run ({q(summaries[0]['run'])}): "
                  + qmsg(" | ".join(d.describe() for d in diffs)), soft_wrap=True)
    if args.output:
        out = Path(args.output)
        out.parent.mkdir(parents=True, exist_ok=True)
        if out.suffix.lower() == ".csv":
            write_leaderboard(summaries, out)
        else:
            write_rows(out, rows, rows, headline_columns(rows))
        say.print(f"leaderboard written to {q(out)}")
    return 0


def cmd_compare(args: argparse.Namespace) -> int:
    """Two runs item by item (:func:`sciflow.runs.compare.compare_runs`): a table (or JSON) of
    the mean difference A − B, its paired bootstrap 95% interval and the Wilcoxon p-value per
    level, difficulty and area, then one verdict line per level. Runs against different
    reference sets or metric versions are refused, one line and rc 2."""
    from rich.table import Table

    from sciflow.runs.compare import compare_runs
    from sciflow.runs.summary import SummaryError

    try:
        result = compare_runs(args.run_a, args.run_b)
    except SummaryError as exc:
        print_error(exc)
        return 2
    rows = compare_table_rows(result)
    if args.out:
        write_rows(args.out, result, rows)
        err_console.print(f"comparison written to {q(args.out)}")
    if args.format != "table":
        emit(args.format, result, rows)
        return 0
    a, b = result["a"], result["b"]
    table = Table(title=q(f"{a} vs {b} ({result['n_common']} items in common)"))
    for col in ("scope", "key", "n", "A", "B", "A − B", "95% interval", "p"):
        table.add_column(col, justify="left" if col in ("scope", "key") else "right")
    cells = [("all", result["levels"])]
    cells += [(f"difficulty {d}", c) for d, c in result["by_difficulty"].items()]
    cells += [(f"area {q(ar)}", c) for ar, c in result["by_area"].items()]
    for scope, cell in cells:
        for key, st in cell.items():
            lo, hi = st["ci"]
            table.add_row(scope, key, str(st["n"]), f"{st['mean_a']:.3f}", f"{st['mean_b']:.3f}",
                          f"{st['diff']:+.3f}" + (" *" if st["significant"] else ""), f"[{lo:.3f}, {hi:.3f}]",
                          f"{st['p']:.4g}")
    console.print(table)
    for line in result["verdicts"]:
        console.print(q(line), soft_wrap=True)
    if result["only_a"] or result["only_b"]:
        err_console.print(f"[yellow]not paired:[/yellow] {len(result['only_a'])} items only in {q(a)}, "
                          f"{len(result['only_b'])} only in {q(b)}")
    return 0


def compare_table_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The comparison as flat rows (scope, key, n, means, difference, interval, p, significant)."""
    cells = [("all", result["levels"])]
    cells += [(f"difficulty {d}", c) for d, c in result["by_difficulty"].items()]
    cells += [(f"area {ar}", c) for ar, c in result["by_area"].items()]
    return [{"scope": scope, "key": key, "n": st["n"], "mean_a": st["mean_a"], "mean_b": st["mean_b"],
             "diff": st["diff"], "ci_lo": st["ci"][0], "ci_hi": st["ci"][1], "p": st["p"],
             "significant": st["significant"]} for scope, cell in cells for key, st in cell.items()]


def cmd_report(args: argparse.Namespace) -> int:
    from sciflow.runs.summary import SummaryError
    from sciflow.views.report import build_report

    try:
        out = build_report(args.results_dirs, args.output, recompute=args.recompute)
    except (SummaryError, FileNotFoundError) as exc:
        print_error(exc)
        return 2
    console.print(f"wrote {q(out)}")
    return 0


def cmd_parse(args: argparse.Namespace) -> int:
    from sciflow.runs.parse_batch import collect_images, parse_to_dir

    config = load_config(args.config)
    try:
        images = collect_images(args.inputs)
    except FileNotFoundError as exc:
        print_error(exc)
        return 2
    if not images:
        print_error(f"no image in {', '.join(str(p) for p in args.inputs)}")
        return 2
    if (args.strict or config.trust.strict) and (problem := _strict_problem(args, config)):
        print_error(problem)
        return 2
    single = args.out.suffix.lower() == ".json"
    if single and len(images) != 1:
        print_error(f"-o {args.out} is one file: give one image (or -o a folder for {len(images)} images)")
        return 2
    if single:
        return _parse_one(args, images[0], config)
    with _progress("parsing") as progress:
        task = progress.add_task("", total=len(images))
        outcomes = parse_to_dir(
            images, args.out, config, jobs=args.jobs, debug_dir=args.debug_dir,
            cache_dir=None if args.no_cache else args.cache_dir, device=args.device,
            on_done=lambda o: progress.update(task, advance=1, description=str(o.item_id)),
        )
    failed = [o for o in outcomes if o.error]
    for o in failed:
        err_console.print(f"[red]failed[/red] {q(o.path)}: {qmsg(o.error)}")
    ok = len(outcomes) - len(failed)
    cached = sum(o.cached for o in outcomes if not o.error)
    console.print(f"parsed {ok} of {len(outcomes)} images into {q(args.out)}/ ({cached} from cache)")
    return 1 if failed else 0


def _parse_one(args: argparse.Namespace, image: Path, config: Any) -> int:
    """``parse x.png -o x.json``: that one file (parsed into a temporary folder, then moved)."""
    import shutil
    import tempfile

    from sciflow.runs.parse_batch import parse_to_dir

    with tempfile.TemporaryDirectory(prefix="sciflow-parse-") as tmp:
        [o] = parse_to_dir([image], Path(tmp), config, jobs=1, debug_dir=args.debug_dir,
                           cache_dir=None if args.no_cache else args.cache_dir, device=args.device)
        if o.error:
            err_console.print(f"[red]failed[/red] {q(o.path)}: {qmsg(o.error)}")
            return 1
        [written] = sorted(Path(tmp).glob("*.json"))
        args.out.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(written, args.out)
    console.print(f"parsed {q(image)} into {q(args.out)}{' (from cache)' if o.cached else ''}")
    return 0


def cmd_render(args: argparse.Namespace) -> int:
    from sciflow.format.graph import GraphFormatError, load_graph
    from sciflow.views.viz import render_graph

    try:
        graph = load_graph(args.graph)
        other = load_graph(args.diff) if args.diff else None
        config = load_config(args.config)
        out = render_graph(graph, args.output, diff=other, matching=config.matching, legend=not args.no_legend)
    except (GraphFormatError, ValueError) as exc:
        print_error(exc)
        return 2
    console.print(f"wrote {q(out)}")
    return 0
