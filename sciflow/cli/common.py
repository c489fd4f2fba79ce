"""Shared presentation helpers of the command line: consoles, number formatting, tables, progress."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

# Wide enough for the leaderboard when output is piped (rich defaults to 80 columns there).
console = Console(width=None if sys.stdout.isatty() else 120)
err_console = Console(stderr=True, soft_wrap=True)


def q(value: Any) -> str:
    """A value that came from input (a file name, an id, a label, a run name), ready for a rich
    markup string: escaped (``[/bold]`` and ``[nan, 0, 10, 10]`` print as written) and on one
    line (a line break shows as ``\\n``)."""
    return escape(str(value).replace("\r", "\\r").replace("\n", "\\n"))


def one_line(text: Any) -> str:
    """A message on one line: its lines, stripped, joined with ``; `` (not escaped)."""
    return "; ".join(part.strip() for part in str(text).splitlines() if part.strip())


def qmsg(text: Any) -> str:
    """A message that came from input or an exception, escaped and on one line."""
    return escape(one_line(text))


def problem_lines(exc: BaseException) -> list[str]:
    """One line per problem of a :class:`~sciflow.format.graph.GraphFormatError` (``<file>:
    <json path>: <reason>``, the path left out for the whole document), not escaped."""
    source = getattr(exc, "source", "")
    return [f"{source}: {reason}" if path == "$" else f"{source}: {path}: {reason}"
            for path, reason in getattr(exc, "problems", [])]


def error_text(exc: BaseException) -> str:
    """One line saying what went wrong, for an exception the person can act on (not escaped).

    A graph file with several problems is named with its first (``sciflow validate`` lists
    them all); an ``OSError`` is its reason and file; anything else its message on one line."""
    from sciflow.format.graph import GraphFormatError

    text = str(exc)
    if isinstance(exc, GraphFormatError) and "\n" in text and getattr(exc, "problems", None):
        first = problem_lines(exc)[0]
        more = len(exc.problems) - 1
        return f"invalid graph file {first} (and {more} more problem{'s' if more > 1 else ''}; " \
               f"`sciflow validate {exc.source}` lists them)"
    if isinstance(exc, OSError) and exc.strerror:
        files = [f for f in (exc.filename, exc.filename2) if f is not None]
        return f"{exc.strerror}: {' -> '.join(map(str, files))}" if files else exc.strerror
    if isinstance(exc, RecursionError):
        return "input nested too deeply to read"
    return one_line(text) or type(exc).__name__


def print_error(exc: BaseException | str, prefix: str = "error") -> None:
    """``error: <one line>`` on stderr (the message escaped)."""
    text = exc if isinstance(exc, str) else error_text(exc)
    err_console.print(f"[red]{escape(prefix)}:[/red] {qmsg(text)}")


_HEADERS = {
    "n_items": "items", "n_missing": "miss", "n_errors": "err", "n_averaged": "n", "node_f1": "node F1",
    "edge_f1": "edge F1", "graph_easy": "easy", "graph_medium": "med", "graph_hard": "hard",
    "metric_version": "metric v",
}


def _fmt(v: Any) -> str:
    return "—" if v is None else (f"{v:.3f}" if isinstance(v, float) else str(v))


def leaderboard_table(summaries: Sequence[dict[str, Any]], title: str = "sciflow leaderboard",
                      width: int | None = None) -> Table:
    """The headline columns of :func:`sciflow.runs.summary.leaderboard_rows` (``n``: the items every
    mean is over) and, for runs that differ in them, the fallbacks, config hash, reference set
    and metric version, a value ending in ``*`` where it differs from the first run's (hashes
    shortened to 7 hex digits here; leaderboard.csv holds every column, always). A mean with
    a bootstrap interval reads ``0.812 ±0.034``: ± half the width of its 95% interval (the CSV
    has the interval itself, ``<key>_lo``/``<key>_hi``).

    The table fits ``width`` columns (default: the terminal's): columns are left out, least
    important first (the difficulty tiers, the item counts, the ± intervals, node and edge F1),
    and the caption names them; no number is ever cut."""
    from sciflow.runs.summary import DIFFERS, leaderboard_rows

    rows = leaderboard_rows(summaries)
    # The terminal shows the headline columns; leaderboard.csv holds every column.
    headline = ("overall", "graph", "text", "image", "node_f1", "edge_f1")
    cols = ["run", "n_items", "n_missing", "n_errors", "n_averaged"]
    cols += [k for k in headline if any(k in r for r in rows)]
    cols += [f"graph_{d}" for d in ("easy", "medium", "hard") if any(r.get(f"n_{d}") for r in rows)]
    provenance = [c for c in ("fallbacks", "config", "refs", "metric_version")
                  if any(str(r.get(c, "")).endswith(DIFFERS) for r in rows)]
    intervals = True

    def cell(r: dict[str, Any], c: str) -> str:
        v = r.get(c)
        lo, hi = r.get(f"{c}_lo"), r.get(f"{c}_hi")
        if intervals and isinstance(v, float) and isinstance(lo, float) and isinstance(hi, float):
            return f"{v:.3f} ±{(hi - lo) / 2:.3f}"  # half the 95% interval's width
        if c in ("config", "refs") and isinstance(v, str) and len(v) > 8:
            return v[:7] + (DIFFERS if v.endswith(DIFFERS) else "")
        return _fmt(v)

    def shown(r: dict[str, Any], c: str) -> str:  # cells are rich markup: a run name is input
        return q(cell(r, c))

    def col_width(c: str) -> int:
        return max(len(_HEADERS.get(c, c)), *(len(cell(r, c)) for r in rows)) if rows else len(c)

    def total() -> int:  # rich's default box: one border per column plus one, padding 1 each side
        return 1 + sum(col_width(c) + 3 for c in cols + provenance)

    limit = width or console.width
    hidden: list[str] = []
    for drop in ("graph_hard", "graph_medium", "graph_easy", "n_errors", "n_missing", "n_items", "±", "edge_f1",
                 "node_f1"):
        if total() <= limit:
            break
        if drop == "±":
            intervals, hidden = False, [*hidden, "± intervals"]
        elif drop in cols:
            cols.remove(drop)
            hidden.append(_HEADERS.get(drop, drop))

    table = Table(title=q(title))
    if hidden:
        table.caption = f"not shown at this width: {', '.join(hidden)} (leaderboard.csv or --format csv has them)"
    for c in cols:  # numbers are never cut (headers wrap instead)
        table.add_column(_HEADERS.get(c, c), justify="left" if c == "run" else "right", no_wrap=True,
                         min_width=col_width(c) if c != "run" else None)
    for c in provenance:  # never cut: the marker is at the end
        table.add_column(_HEADERS.get(c, c), justify="left", no_wrap=True, min_width=col_width(c))
    for r in rows:
        table.add_row(*[shown(r, c) for c in cols + provenance])
    return table


def breakdown_table(summary: dict[str, Any], key: str, title: str) -> Table | None:
    cells = summary.get(key) or {}
    if not cells:
        return None
    metrics = [k for k in ("graph", "node_f1", "edge_f1") if k in summary["means"]]
    table = Table(title=q(title))
    table.add_column(key.replace("by_", ""))
    table.add_column("n", justify="right")
    for m in metrics:
        table.add_column(m, justify="right")
    for name, cell in cells.items():
        table.add_row(q(name), str(cell["n"]), *[_fmt(cell.get(m)) for m in metrics])
    return table


def _progress(label: str) -> Progress:
    """A progress bar on stderr; ``description`` is shown as plain text (an item id is input)."""
    return Progress(
        TextColumn(f"[bold]{q(label)}"), BarColumn(), MofNCompleteColumn(), TimeRemainingColumn(),
        TextColumn("{task.description}", markup=False), console=err_console, transient=True,
    )


def default_cache_dir() -> Path:
    """Where parses and label embeddings are cached unless ``--cache-dir`` says otherwise:
    ``$SCIFLOW_CACHE_DIR``, else the platform's user cache folder (``~/.cache/sciflow`` on Linux)."""
    import os

    from platformdirs import user_cache_dir

    return Path(os.environ.get("SCIFLOW_CACHE_DIR") or user_cache_dir("sciflow", appauthor=False))


def refs_arg(value: str) -> Path:
    """The argparse type of every ``--refs``/``--ref``/``REFS`` (and of a prediction folder): a
    path, or a bundled benchmark's name (``sciflow-bench-60@1``, ``sciflow-bench-60@1/cv_vit.json``),
    resolved by :func:`sciflow.format.benchmarks.resolve_refs` (one resolver for every command)."""
    from sciflow.format.benchmarks import BenchmarkError, resolve_refs

    try:
        return resolve_refs(value)
    except BenchmarkError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


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
