"""``sciflow claims``: check structural claims against a figure, or make a claim benchmark.

    sciflow claims IMAGE|GRAPH --claims FILE.jsonl [--format text|json] [--config FILE.toml]
    sciflow claims IMAGE|GRAPH --text "The encoder feeds the decoder." [--judge]
    sciflow claims IMAGE|GRAPH --claims FILE.jsonl -o RESULTS/claims/       # also write RESULTS/claims/<item>.json
    sciflow claims generate REFS... -o claims/ [--seed 0] [--per-type 6]     # REFS: folders, graphs, sciflow-bench-60

Checking exits 0 when every claim is supported, 1 when any is refuted or not enough
information, 2 on an expected error (a bad claim line: ``error: FILE line N: ...``).
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from pathlib import Path

from sciflow.cli.common import console, print_error
from sciflow.config import load_config

USAGE = ("sciflow claims IMAGE|GRAPH (--claims FILE.jsonl | --text SENTENCES) [--judge] [--format text|json] "
         "[-o FILE.json|FOLDER]\n"
         "       sciflow claims generate REFS... -o OUT [--seed N] [--per-type N]")


def add_claims_command(parser: argparse.ArgumentParser) -> argparse.ArgumentParser:
    """Add the ``claims`` command to the subcommands of ``parser``; returns ``parser``."""
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    c = sub.add_parser("claims", help="check structural claims (direct, parallel, sequential, analytical) against a "
                                      "figure, with evidence; or `claims generate` a claim benchmark", usage=USAGE)
    c.add_argument("inputs", nargs="+", metavar="IMAGE|GRAPH",
                   help="the figure (an image, parsed first) or a graph (.json); or `generate REFS...`")
    c.add_argument("--claims", type=Path, default=None, help="claims to check, one JSON object per line")
    c.add_argument("--text", default=None, help="sentences to read into claims with the claim grammar")
    c.add_argument("--judge", action="store_true",
                   help="read --text with the judge ([text.judge] in the config) instead of the grammar")
    c.add_argument("--format", choices=["text", "json"], default="text",
                   help="text (default) for people, json for programs")
    c.add_argument("--config", type=Path, default=None,
                   help="TOML file overriding the pinned config ([claims], [matching])")
    c.add_argument("-o", "--out", type=Path, default=None,
                   help="checking: also write the JSON result to FILE.json or FOLDER/<item>.json (in a results "
                        "folder's claims/, `sciflow report` shows it); generate: folder for <ref>.jsonl claim files")
    c.add_argument("--seed", type=int, default=0, help="generate: seed (default 0)")
    c.add_argument("--per-type", type=int, default=6, help="generate: claims per type and graph (default 6)")
    c.set_defaults(func=cmd_claims)
    return parser


def cmd_claims(args: argparse.Namespace) -> int:
    if args.inputs[0] == "generate" and (len(args.inputs) > 1 or not Path("generate").exists()):
        return _generate(args)
    if len(args.inputs) != 1:
        print_error(f"claims checks one figure at a time, got {len(args.inputs)}: {' '.join(args.inputs)}")
        return 2
    if (args.claims is None) == (args.text is None):
        print_error("give --claims FILE.jsonl or --text SENTENCES (one of them)")
        return 2
    if args.judge and args.text is None:
        print_error("--judge reads --text; it has no use with --claims")
        return 2
    from sciflow.claims import check_claims, format_report
    from sciflow.claims.report import save_report
    from sciflow.format.benchmarks import resolve_refs

    figure = resolve_refs(args.inputs[0])  # a path, or a graph inside a bundled benchmark (NAME@V/x.json)
    report = check_claims(figure, args.claims, text=args.text, judge=args.judge,
                          config=load_config(args.config))
    sys.stdout.write(format_report(report, args.format) + "\n")
    if args.out is not None:
        written = save_report(report, args.out)
        print(f"wrote {written}", file=sys.stderr)
    return 0 if all(r.verdict == "supported" for r in report.results) else 1


def _generate(args: argparse.Namespace) -> int:
    from sciflow.claims.generate import generate_claims
    from sciflow.claims.model import dump_claims
    from sciflow.format.graph import load_graph

    if args.out is None:
        print_error("claims generate needs -o/--out OUT (a folder for the claim files)")
        return 2
    if args.per_type < 2:
        print_error(f"--per-type {args.per_type}: needs at least 2 (one true, one false claim)")
        return 2
    from sciflow.format.benchmarks import resolve_refs

    refs = [resolve_refs(x) for x in args.inputs[1:]]  # a folder, a graph file, or a bundled benchmark name
    if not refs:
        print_error("claims generate needs reference graphs: a folder of *.json or graph files")
        return 2
    files: list[Path] = []
    for r in refs:
        if r.is_dir():
            files += sorted(r.glob("*.json"))
        elif r.is_file():
            files.append(r)
        else:
            print_error(f"no such file or folder: {r}")
            return 2
    if not files:
        print_error(f"no reference graphs (*.json) in {' '.join(map(str, refs))}")
        return 2
    args.out.mkdir(parents=True, exist_ok=True)
    counts: Counter[tuple[str, str]] = Counter()
    for f in files:
        claims = generate_claims(load_graph(f), seed=args.seed, per_type=args.per_type)
        (args.out / f"{f.stem}.jsonl").write_text(dump_claims(claims), "utf-8")
        counts.update((c.type, c.label or "") for c in claims)
    total = sum(counts.values())
    per = ", ".join(f"{t} {counts[(t, 'supported')]}+{counts[(t, 'refuted')]}"
                    for t in ("direct", "parallel", "sequential", "analytical"))
    console.print(f"wrote {len(files)} claim files, {total} claims (true+false: {per}) to {args.out}",
                  markup=False, highlight=False)
    return 0
