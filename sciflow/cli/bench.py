"""Benchmark-content commands: generate, perturb, the detector's dataset and training."""

from __future__ import annotations

import argparse
import json

from sciflow.cli.common import _key_values, _progress, console, err_console, print_error, q, qmsg


def _run_generation(generator, args: argparse.Namespace) -> int:
    from sciflow.bench.generators import GeneratorError, run_generator

    with _progress(f"generating ({generator.name})") as progress:
        task = progress.add_task("", total=None)
        try:
            outcomes = run_generator(
                generator, args.refs, args.out, style=args.style, resume=not args.no_resume,
                on_start=lambda n: progress.update(task, total=n),
                on_item=lambda o: progress.update(task, advance=1, description=str(o.item_id)),
            )
        except GeneratorError as exc:
            print_error(exc)
            return 2
    for o in outcomes:
        if o.status == "error":
            err_console.print(f"[red]failed[/red] {q(o.item_id)}: {qmsg(o.error)}")
    counts = {k: sum(o.status == k for o in outcomes) for k in ("ok", "skipped", "error")}
    console.print(
        f"{counts['ok']} generated, {counts['skipped']} already done, {counts['error']} failed -> {q(args.out)}/"
    )
    return 1 if counts["error"] else 0


def cmd_generate(args: argparse.Namespace) -> int:
    from sciflow.bench.generators import GeneratorError, get_generator

    options = _key_values(args.option)
    try:
        gen = get_generator(args.name, **options)
    except GeneratorError as exc:
        print_error(exc)
        return 2
    return _run_generation(gen, args)


def cmd_perturb(args: argparse.Namespace) -> int:
    from sciflow.bench.generators import GeneratorError, PerturbedGenerator

    try:
        gen = PerturbedGenerator(severity=args.severity, seed=args.seed, degrade=args.degrade)
    except GeneratorError as exc:
        print_error(exc)
        return 2
    return _run_generation(gen, args)


def cmd_detector_dataset(args: argparse.Namespace) -> int:
    from sciflow.bench.detector.dataset import parse_shares, write_dataset

    try:
        shares = parse_shares(args.styles)
    except ValueError as exc:
        print_error(exc)
        return 2
    with _progress("rendering") as progress:
        task = progress.add_task("", total=args.n)
        summary = write_dataset(
            args.out, args.n, seed=args.seed, val_fraction=args.val_fraction, tile=args.tile, text_px=args.text_px,
            progress=lambda k: progress.update(task, completed=k), shares=shares,
        )
    console.print_json(json.dumps({k: summary[k] for k in ("images", "boxes", "styles")}))
    console.print(f"dataset written to {q(args.out)}/ (data.yaml, dataset.json)")
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
        print_error(exc)
        return 2
    console.print_json(json.dumps({"validation": meta["validation"], "onnx_sha256": meta["onnx_sha256"]}))
    console.print(f"weights and metadata in {q(args.out)}/ (layout-detector.onnx, layout-detector.json)")
    return 0


def cmd_synth(args: argparse.Namespace) -> int:
    from sciflow.bench.synth.browser import BrowserUnavailable
    from sciflow.bench.synth.styles import StyleError, parse_knobs, synth_items

    failed: list[str] = []
    try:
        knobs = parse_knobs(args.style, args.knob or [])
        with _progress(f"{args.style}") as progress:
            task = progress.add_task("", total=args.n)

            def on_item(o) -> None:
                progress.advance(task)
                if o.status == "failed":
                    failed.append(o.item)
                    err_console.print(f"[red]failed[/red] {q(o.item)}: {qmsg(o.error or '')}")

            outcomes = synth_items(args.style, args.n, args.out, seed=args.seed, knobs=knobs, on_item=on_item)
    except (StyleError, BrowserUnavailable) as exc:
        print_error(exc)
        return 2
    kept = sum(o.status == "kept" for o in outcomes)
    console.print(f"{len(outcomes) - len(failed)} of {len(outcomes)} items in {q(args.out)}/ "
                  f"({kept} already there){f'; {len(failed)} failed' if failed else ''}")
    return 1 if failed else 0
