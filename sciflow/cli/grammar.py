"""One grammar for every command: ``-o/--out`` (a file or a folder, checked before any work),
``--format table|json|csv|markdown|latex`` (machine formats on stdout, logs on stderr), help
that shows every default and an example, and quiet third-party libraries.

An ``--out`` path whose name ends in one of :data:`FILE_SUFFIXES` is a file, anything else a
folder. Each writing command says which it takes (:data:`OUT_RULES`): a folder where a file is
wanted gets the command's default file name inside it (``report -o dir/`` writes
``dir/report.html``); a file where a folder is wanted, or a suffix the command cannot write, is
a one-line error before anything loads.
"""

from __future__ import annotations

import argparse
import csv
import io
import json
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

FILE_SUFFIXES = frozenset({".json", ".jsonl", ".csv", ".html", ".md", ".svg", ".pdf", ".png", ".tex", ".txt"})
FORMATS = ("table", "json", "csv", "markdown", "latex")
_TEX = {"\\": "\\textbackslash{}", "&": "\\&", "%": "\\%", "_": "\\_", "#": "\\#", "$": "\\$", "{": "\\{",
        "}": "\\}", "~": "\\textasciitilde{}", "^": "\\textasciicircum{}"}


@dataclass(frozen=True)
class OutRule:
    """What a command's output option takes: ``dest`` (its argparse name), ``kind`` (``folder``,
    ``file`` or ``either``), the file ``suffixes`` it can write and the ``default`` file name a
    folder gets (for ``file`` commands)."""

    dest: str
    kind: str
    suffixes: tuple[str, ...] = ()
    default: str | None = None


OUT_RULES: dict[str, OutRule] = {
    "score": OutRule("out", "folder"),
    "summarize": OutRule("output", "file", (".csv", ".json", ".md", ".tex"), "leaderboard.csv"),
    "compare": OutRule("out", "file", (".json", ".csv", ".md", ".tex"), "compare.json"),
    "report": OutRule("output", "file", (".html",), "report.html"),
    "parse": OutRule("out", "either", (".json",)),
    "render": OutRule("output", "file", (".svg", ".png", ".pdf"), "graph.svg"),
    "stats": OutRule("out", "file", (".json", ".csv", ".md", ".tex", ".png", ".svg", ".pdf"), "stats.json"),
    "prompts": OutRule("out", "file", (".jsonl", ".json", ".csv"), "prompts.jsonl"),
    "convert": OutRule("out", "folder"),
    "import": OutRule("out", "folder"),
    "generate": OutRule("out", "folder"),
    "perturb": OutRule("out", "folder"),
    "rectify": OutRule("out", "folder"),
    "synth": OutRule("out", "folder"),
    "verify": OutRule("out", "folder"),
}


def is_file_path(path: Path) -> bool:
    """True when ``path`` names a file by its suffix (:data:`FILE_SUFFIXES`)."""
    return path.suffix.lower() in FILE_SUFFIXES


def check_out(args: argparse.Namespace) -> str | None:
    """Check (and complete) the command's output path before any work; the one-line problem, or None.

    A folder given to a ``file`` command becomes ``folder/<default>``."""
    rule = OUT_RULES.get(getattr(args, "command", ""))
    if rule is None or getattr(args, rule.dest, None) is None:
        return None
    out = Path(getattr(args, rule.dest))
    flag = "-o/--out"
    if rule.kind == "folder":
        if is_file_path(out) or (out.exists() and not out.is_dir()):
            return f"{flag} {out} is a file, not a folder: `sciflow {args.command}` writes a folder"
        return None
    if out.is_dir() or not is_file_path(out):
        if rule.kind == "either":
            return None
        setattr(args, rule.dest, out / str(rule.default))
        return None
    if out.suffix.lower() not in rule.suffixes:
        return (f"{flag} {out}: `sciflow {args.command}` writes {', '.join(rule.suffixes)} files "
                f"(or a folder), not {out.suffix}")
    return None


def quiet_libraries(verbose: bool) -> None:
    """Silence third-party progress bars and chatter (model-loading bars, hub retries) unless
    ``verbose``; Python warnings go through logging once (``sciflow: <message>`` on stderr)."""
    import logging

    logging.captureWarnings(True)
    if verbose:
        return
    for var, value in (("TQDM_DISABLE", "1"), ("HF_HUB_DISABLE_PROGRESS_BARS", "1"),
                       ("TRANSFORMERS_VERBOSITY", "error"), ("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1"),
                       ("YOLO_VERBOSE", "False")):
        os.environ.setdefault(var, value)  # inherited by spawned workers too
    for name in ("transformers", "sentence_transformers", "huggingface_hub", "urllib3", "filelock", "PIL"):
        logging.getLogger(name).setLevel(logging.ERROR)


# ----------------------------------------------------------------- formats
def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:.3f}"
    return str(v)


def render_rows(rows: Sequence[dict[str, Any]], columns: Sequence[str], fmt: str) -> str:
    """``rows`` (dicts) as ``csv``, ``markdown`` or ``latex`` text over ``columns``.

    >>> print(render_rows([{"run": "a_b", "graph": 0.5}], ["run", "graph"], "markdown"))
    | run | graph |
    |---|---|
    | a_b | 0.500 |
    >>> print(render_rows([{"run": "a_b", "graph": 0.5}], ["run", "graph"], "latex"))
    \\begin{tabular}{lr}
    \\toprule
    run & graph \\\\
    \\midrule
    a\\_b & 0.500 \\\\
    \\bottomrule
    \\end{tabular}
    """
    if fmt == "csv":
        buf = io.StringIO(newline="")
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(columns)
        for r in rows:
            w.writerow(["" if r.get(c) is None else (f"{r[c]:.6f}" if isinstance(r[c], float) else r[c])
                        for c in columns])
        return buf.getvalue().rstrip("\n")
    if fmt == "markdown":
        lines = ["| " + " | ".join(columns) + " |", "|" + "---|" * len(columns)]
        lines += ["| " + " | ".join(_cell(r.get(c)).replace("|", "\\|") for c in columns) + " |" for r in rows]
        return "\n".join(lines)
    if fmt == "latex":
        def tex(s: str) -> str:
            return "".join(_TEX.get(ch, ch) for ch in s)

        numeric = [all(isinstance(r.get(c), (int, float)) or r.get(c) is None for r in rows) for c in columns]
        spec = "".join("r" if n else "l" for n in numeric)
        lines = [f"\\begin{{tabular}}{{{spec}}}", "\\toprule", " & ".join(tex(c) for c in columns) + " \\\\",
                 "\\midrule"]
        lines += [" & ".join(tex(_cell(r.get(c))) for c in columns) + " \\\\" for r in rows]
        return "\n".join([*lines, "\\bottomrule", "\\end{tabular}"])
    raise ValueError(f"unknown format {fmt!r}")


def emit(fmt: str, data: Any, rows: Sequence[dict[str, Any]] = (), columns: Sequence[str] = ()) -> None:
    """Print ``data`` as JSON, or ``rows`` as csv/markdown/latex, on stdout (never ``table``)."""
    if fmt == "json":
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        cols = list(columns) or list(dict.fromkeys(k for r in rows for k in r))
        sys.stdout.write(render_rows(rows, cols, fmt) + "\n")


def write_rows(path: Path, data: Any, rows: Sequence[dict[str, Any]], columns: Sequence[str] = ()) -> Path:
    """Write ``data`` (``.json``) or ``rows`` (``.csv``, ``.md``, ``.tex``) to ``path`` by its suffix."""
    from sciflow.runs.files import write_atomic

    fmt = {".json": "json", ".csv": "csv", ".md": "markdown", ".tex": "latex"}[path.suffix.lower()]
    path.parent.mkdir(parents=True, exist_ok=True)
    if fmt == "json":
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        cols = list(columns) or list(dict.fromkeys(k for r in rows for k in r))
        write_atomic(path, render_rows(rows, cols, fmt) + "\n")
    return path


def add_format(parser: argparse.ArgumentParser, default: str = "table", extra: Sequence[str] = ()) -> None:
    """The ``--format`` option (table for people; json, csv, markdown, latex on stdout for tools)."""
    parser.add_argument("--format", choices=[*FORMATS, *extra], default=default,
                        help="how to print the result: table (for people), json, csv, markdown or latex "
                             "(machine formats go to stdout alone; messages to stderr)")


# -------------------------------------------------------------------- help
class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and examples as written; every option's default after its help (unless the
    help already names it)."""

    def _get_help_string(self, action: argparse.Action) -> str:
        text = action.help or ""
        if "default" in text or action.default in (None, argparse.SUPPRESS, False) or not action.option_strings:
            return text
        return f"{text} (default: %(default)s)"


#: commands in the order of the workflow (the order of `sciflow --help`)
WORKFLOW = ("list", "prompts", "prompt", "generate", "perturb", "parse", "score", "summarize", "compare", "report",
            "render", "critique", "rectify", "claims", "verify", "agreement", "stats", "validate", "schema",
            "convert", "import", "synth", "detector", "download-models")

#: one example per command (shown under its --help; the README's commands are tested)
EXAMPLES: dict[str, str] = {
    "list": "sciflow list benchmarks",
    "prompts": "sciflow prompts sciflow-bench-60@1 -o prompts.jsonl",
    "prompt": "sciflow prompt sciflow-bench-60@1/cv_vit.json --style naive",
    "generate": "sciflow generate graphviz --refs sciflow-bench-60@1 -o generated/graphviz",
    "perturb": "sciflow perturb --refs sciflow-bench-60@1 --severity 2 -o generated/perturbed-2",
    "parse": "sciflow parse figures/ -o parsed/          # or: sciflow parse x.png -o x.json",
    "score": "sciflow score my-images/ --refs sciflow-bench-60@1 -o runs/my-gen",
    "summarize": "sciflow summarize runs/gen-a runs/gen-b -o leaderboard.md",
    "compare": "sciflow compare runs/gen-a runs/gen-b --format json",
    "report": "sciflow report runs/gen-a runs/gen-b -o report.html",
    "render": "sciflow render parsed/cv_vit.json --diff sciflow-bench-60@1/cv_vit.json -o diff.pdf",
    "critique": "sciflow critique image.png --ref sciflow-bench-60@1/cv_vit.json --format json",
    "rectify": "sciflow rectify --generator perturbed --option severity=2 --refs sciflow-bench-60@1 -o runs/rectify",
    "claims": "sciflow claims image.png --text 'A feeds B.'",
    "verify": "sciflow verify figures/ -o verified/",
    "agreement": "sciflow agreement verified/ --format markdown",
    "stats": "sciflow stats sciflow-bench-60@1 --plot stats.png",
    "validate": "sciflow validate graph.json",
    "schema": "sciflow schema > graph.schema.json",
    "convert": "sciflow convert path/to/sciflow-bench -o converted/",
    "import": "sciflow import sciflow-bench path/to/autobench -o imported/",
    "synth": "sciflow synth --style graphviz -n 20 -o synth/",
    "detector": "sciflow detector dataset -o data/ --n 200",
    "download-models": "sciflow download-models clip lpips",
}

MAIN_EPILOG = """workflow:
  sciflow prompts sciflow-bench-60@1 -o prompts.jsonl   # 1. the prompts, one JSON object per line
  # 2. generate one image per prompt with your model: my-gen/<id>.png
  sciflow score my-gen/ --refs sciflow-bench-60@1 -o runs/my-gen   # 3. parse and score
  sciflow summarize runs/my-gen runs/other-gen                     # 4. leaderboard
  sciflow report runs/my-gen runs/other-gen -o report.html         # 5. look at the items

`sciflow COMMAND --help` explains every option with its default and shows an example."""


def finish_parser(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Give every command the help formatter and its example, and list the commands in
    workflow order (:data:`WORKFLOW`)."""
    for action in parser._subparsers._group_actions if parser._subparsers else ():  # noqa: SLF001
        if not isinstance(action, argparse._SubParsersAction):  # noqa: SLF001
            continue
        for name, sub in action.choices.items():
            sub.formatter_class = HelpFormatter
            if name in EXAMPLES and not sub.epilog:
                sub.epilog = f"example:\n  {EXAMPLES[name]}"
            if sub.description is None and name in {a.dest for a in action._choices_actions}:  # noqa: SLF001
                sub.description = next(a.help for a in action._choices_actions if a.dest == name)  # noqa: SLF001
        order = {n: i for i, n in enumerate(WORKFLOW)}
        action._choices_actions.sort(key=lambda a: order.get(a.dest, len(order)))  # noqa: SLF001
    return parser


def headline_columns(rows: Sequence[dict[str, Any]]) -> list[str]:
    """The leaderboard columns a machine format shows (``leaderboard.csv`` keeps every column):
    run, counts, then each level's mean with its 95% interval, node and edge F1."""
    cols = ["run", "n_items", "n_missing", "n_errors", "n_averaged"]
    for k in ("overall", "graph", "text", "image"):
        if any(k in r for r in rows):
            cols += [k, f"{k}_lo", f"{k}_hi"]
    cols += [k for k in ("node_f1", "edge_f1") if any(k in r for r in rows)]
    return [c for c in cols if any(c in r for r in rows)]
