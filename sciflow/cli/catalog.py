"""What there is to use: ``sciflow list backends|generators|benchmarks`` and the benchmark's
prompts for a generator, ``sciflow prompts REFS -o prompts.jsonl``."""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from pathlib import Path
from typing import Any

from rich.table import Table

from sciflow.cli.common import console, err_console, print_error, q, refs_arg
from sciflow.cli.grammar import add_format, emit

#: the parser's agents, each with its backend registry (``[parser.<agent>] backend``)
_AGENT_MODULES = ("text_spotter", "layout", "shape_hunter", "grounder", "topology_coder", "graph_architect")


def _backends() -> list[dict[str, Any]]:
    """Every registered backend: parser agents, image-level models, label embedders, executors."""
    rows: list[dict[str, Any]] = []
    for agent in _AGENT_MODULES:
        registry = importlib.import_module(f"sciflow.agents.{agent}").BACKENDS
        rows += [{"kind": f"parser.{agent}", "name": n} for n in registry.names()]
    from sciflow.models import image_models
    from sciflow.runs.executors import EXECUTORS

    for role, names in (("image.semantic_backend", image_models._SEMANTIC),  # noqa: SLF001
                        ("image.perceptual_backend", image_models._PERCEPTUAL)):  # noqa: SLF001
        auto = image_models.AUTO_ORDER[role.split(".")[1].split("_")[0]]
        rows += [{"kind": role, "name": n, "note": "tried by auto" if n in auto else ""} for n in sorted(names)]
    rows += [{"kind": "matching.embedder", "name": n} for n in ("minilm", "none")]
    rows += [{"kind": "executor", "name": n} for n in EXECUTORS]
    return rows


def _generators() -> list[dict[str, Any]]:
    from sciflow.bench.generators import BUILTIN, available

    return [{"name": n, "source": "built-in" if n in BUILTIN else "plug-in"} for n in sorted(available())]


def _benchmarks() -> list[dict[str, Any]]:
    from sciflow.format.benchmarks import BENCHMARKS

    return [{"name": b.spec, "items": b.n_items, "sha256": b.sha256[:12],
             "examples": ", ".join(f"{b.spec}/examples/{p.name}" for p in b.examples()), "path": str(b.path),
             "description": b.description}
            for versions in BENCHMARKS.values() for b in versions.values()]


_WHAT = {"backends": _backends, "generators": _generators, "benchmarks": _benchmarks}


def cmd_list(args: argparse.Namespace) -> int:
    rows = _WHAT[args.what]()
    if args.format != "table":
        emit(args.format, rows, rows)
        return 0
    cols = list(dict.fromkeys(k for r in rows for k in r if k not in ("path", "description")))
    table = Table(title=f"sciflow {args.what}")
    for c in cols:
        table.add_column(c, justify="right" if c == "items" else "left")
    for r in rows:
        table.add_row(*[q(r.get(c, "")) for c in cols])
    console.print(table)
    if args.what == "benchmarks":
        for r in rows:
            console.print(f"{q(r['name'])}: {q(r['description'])}", soft_wrap=True)
    return 0


def prompt_records(refs: Path, style: str) -> list[dict[str, Any]]:
    """One record per reference graph of ``refs``: ``id``, ``prompt`` (the text to give a
    generator), ``style``, ``area``, ``difficulty`` and the image name a score run pairs with it."""
    from sciflow.bench.generators import build_prompt_text
    from sciflow.format.graph import load_graph

    out = []
    for path in sorted(refs.glob("*.json")):
        g = load_graph(path)
        out.append({"id": path.stem, "prompt": build_prompt_text(g, style), "style": style,
                    "area": g.meta.get("area"), "difficulty": g.meta.get("difficulty"), "image": f"{path.stem}.png"})
    return out


def cmd_prompts(args: argparse.Namespace) -> int:
    """Every prompt of a reference set, one JSON object per line (stdout, or ``-o``)."""
    from sciflow.runs.files import write_atomic

    if not args.refs.is_dir():
        print_error(f"reference folder not found: {args.refs}")
        return 2
    records = prompt_records(args.refs, args.style)
    if not records:
        print_error(f"no reference graph (*.json) in {args.refs}")
        return 2
    if args.out is None:
        sys.stdout.write("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records))
        return 0
    if args.out.suffix.lower() == ".csv":
        from sciflow.cli.grammar import render_rows

        text = render_rows(records, list(records[0]), "csv") + "\n"
    elif args.out.suffix.lower() == ".json":
        text = json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    else:
        text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(args.out, text)
    err_console.print(f"{len(records)} prompts written to {q(args.out)} (generate <id>.png for each, then "
                      "`sciflow score`)")
    return 0


def add_catalog_commands(sub: argparse._SubParsersAction) -> None:  # noqa: SLF001
    """Register ``list`` and ``prompts``."""
    ls = sub.add_parser("list", help="what is available: parser and image backends, generators, bundled benchmarks")
    ls.add_argument("what", choices=sorted(_WHAT), help="backends, generators or benchmarks")
    add_format(ls)
    ls.set_defaults(func=cmd_list)

    pr = sub.add_parser("prompts", help="every prompt of a reference set as JSON lines, for your generator")
    pr.add_argument("refs", type=refs_arg, help="reference graphs: a folder or a benchmark (sciflow-bench-60@1)")
    pr.add_argument("-o", "--out", type=Path, default=None,
                    help="FILE.jsonl (or .json, .csv), or a folder (its prompts.jsonl); default: stdout")
    pr.add_argument("--style", choices=["structured", "naive"], default="structured",
                    help="structured (components, relations, layout) or naive (one sentence)")
    pr.set_defaults(func=cmd_prompts)
