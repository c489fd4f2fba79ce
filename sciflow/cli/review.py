"""Commands for people reviewing diagrams: the verification page, agreement, critique, rectify."""

from __future__ import annotations

import argparse
import json
import sys

from sciflow.cli.common import _key_values, _progress, console, print_error
from sciflow.cli.grammar import emit
from sciflow.config import load_config


def cmd_verify(args: argparse.Namespace) -> int:
    """Refused in one line, rc 2, before anything is printed or written: a host that is not a
    loopback address, a figures folder that does not exist or holds no figure, a busy port; a
    missing ``verify`` extra (starlette, uvicorn)."""
    from sciflow.format.extras import require

    require("starlette", "verify", "sciflow verify")
    require("uvicorn", "verify", "sciflow verify")
    from sciflow.verify.server import ServeError, check_host, serve

    try:
        check_host(args.host, args.port)  # before loading anything
        config = load_config(args.config)
        serve(args.figures_dir, args.out, host=args.host, port=args.port, annotator=args.annotator, config=config)
    except (ServeError, FileNotFoundError, NotADirectoryError) as exc:
        print_error(exc)
        return 2
    return 0


def cmd_agreement(args: argparse.Namespace) -> int:
    from sciflow.verify.agreement import agreement

    try:
        report = agreement(args.verified_dir)
    except FileNotFoundError as exc:
        print_error(exc)
        return 2
    if args.format == "table":
        sys.stdout.write(report.format() + "\n")
    else:
        d = report.to_dict()
        rows = [{"item": i["item"], **{f"node_{k}": v for k, v in i["nodes"].items()},
                 **{f"edge_{k}": v for k, v in i["edges"].items()}} for i in d["items"]]
        rows.append({"item": "overall", **{f"node_{k}": v for k, v in d["overall"]["nodes"].items()},
                     **{f"edge_{k}": v for k, v in d["overall"]["edges"].items()}})
        emit(args.format, d, rows)
    return 1 if report.errors else 0  # the others are counted; an unreadable log is named in one line


def cmd_critique(args: argparse.Namespace) -> int:
    """With ``--claims`` or ``--text``, the critique also lists the claims the diagram fails (they
    do not change the judgement or the exit code); a bad claim line is an error (rc 2)."""
    from sciflow.claims import ClaimFormatError, ClaimsInputError, GrammarError
    from sciflow.critic import critique_input, format_critique
    from sciflow.critic.claims import critique_with_claims
    from sciflow.format.graph import GraphFormatError
    from sciflow.format.imageio import ImageLoadError
    from sciflow.models.judge import JudgeError

    claims, text, judge = getattr(args, "claims", None), getattr(args, "text", None), getattr(args, "judge", False)
    if judge and text is None:
        print_error("--judge reads --text; it has no use without it")
        return 2
    try:
        config = load_config(args.config)
        if claims is None and text is None:
            c = critique_input(args.input, args.ref, config=config)
        else:
            c = critique_with_claims(args.input, args.ref, claims, text=text, judge=judge, config=config)
    except (GraphFormatError, ImageLoadError, FileNotFoundError, ClaimFormatError, ClaimsInputError,
            GrammarError, JudgeError) as exc:
        print_error(exc)
        return 2
    if args.format in ("csv", "markdown", "latex"):  # one row per edit instruction
        d = c.to_dict()
        rows = [{"op": e.get("op"), "text": e.get("text"), "args": json.dumps(e.get("args"), ensure_ascii=False)}
                for e in d.get("instructions", [])]
        emit(args.format, d, rows, ["op", "text", "args"])
    else:
        sys.stdout.write(format_critique(c, "text" if args.format == "table" else args.format) + "\n")
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
            print_error(exc)
            return 2
    if args.format == "table":
        console.print_json(json.dumps(summary))
    else:
        items = summary.get("items") if isinstance(summary.get("items"), list) else []
        emit(args.format, summary, items or [{k: v for k, v in summary.items() if not isinstance(v, (dict, list))}])
    return 0
