"""The model card of a trained detector, rendered from its metadata file.

The card is generated, never edited by hand, so its hash, data sizes and scores cannot drift
from the weights: ``python -m sciflow.bench.detector.card sciflow/models/layout-detector.json``
rewrites ``README.md`` beside it. An ``evaluation`` entry in the metadata (added after the
parse benchmark was run with and without the detector) is rendered as its own section.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def _table(rows: list[list[str]], header: list[str]) -> str:
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(out)


def render_card(meta: dict[str, Any]) -> str:
    """Markdown model card for the metadata written by :func:`sciflow.bench.detector.train.finalize`."""
    cfg = meta["train_config"]
    ds = meta.get("dataset", {})
    val = meta["validation"]
    boxes = ds.get("boxes", {})
    class_rows = []
    for c in meta["classes"]:
        pc = val["per_class"].get(c, {})
        class_rows.append(
            [
                c,
                str(boxes.get("train", {}).get(c, "—")),
                str(boxes.get("val", {}).get(c, "—")),
                f"{pc['mAP50']:.3f}" if pc else "—",
                f"{pc['mAP50-95']:.3f}" if pc else "—",
            ]
        )
    hours = meta.get("training_seconds")
    name = meta.get("name", "layout-detector")  # the file stem; the first shipped model has none recorded
    styles = ds.get("styles", {})
    names = {"graphviz": "Graphviz", "pillow": "Pillow", "mermaid": "Mermaid", "paper": "paper"}
    drawn = [names.get(k, k) for k in ("graphviz", "pillow", "mermaid", "paper") if k in styles]
    style_words = " and ".join(drawn) if len(drawn) <= 2 else ", ".join(drawn[:-1]) + " and " + drawn[-1]
    hw = meta.get("hardware", {})
    where = f"{hw.get('cpus', '?')}-core CPU ({hw.get('processor') or hw.get('machine', '?')})"
    if hw.get("gpu"):
        where = f"GPU {hw['gpu']}"
    lines = [
        "# Layout detector: model card" if name == "layout-detector" else f"# Layout detector `{name}`: model card",
        "",
        f"Generated from `{name}.json` by `python -m sciflow.bench.detector.card`; do not edit.",
        "",
        "## What it is",
        "",
        f"A YOLOv8-architecture detector (ultralytics {meta['versions'].get('ultralytics', '?')}, "
        f"width multiple {cfg.get('width') or 'of ' + str(cfg.get('model'))}), trained **from scratch** on "
        "framework diagrams rendered by sciflow itself with exact boxes (`sciflow detector dataset`), "
        "exported to ONNX (opset 17) and run by the Layout Detector's `yolo_onnx` backend through "
        f"onnxruntime. Input: {meta['imgsz']}x{meta['imgsz']} tiles of the image rescaled so a text line is "
        f"{meta.get('text_px')} px high. "
        f"Classes: {', '.join('`' + c + '`' for c in meta['classes'])}.",
        "",
        "| file | sha256 |",
        "|---|---|",
        f"| `{name}.onnx` | `{meta['onnx_sha256']}` |",
        f"| ultralytics checkpoint it was exported from | `{meta['pt_sha256']}` |",
        "",
        "## Training",
        "",
        f"- Data: {ds.get('n', '?')} rendered images (seed {ds.get('seed', '?')}; "
        f"{ds.get('images', {}).get('train', '?')} train / {ds.get('images', {}).get('val', '?')} validation; "
        f"styles {json.dumps(ds.get('styles', {}))}), augmented with background panels, decorative icons, "
        "colour shifts, blur, noise and JPEG, rescaled to the text scale (x0.75-1.33) and cut to one random tile each.",
        f"- Schedule: {meta.get('epochs_completed', '?')} of {cfg['epochs']} epochs, image size {cfg['imgsz']}, "
        f"batch {cfg['batch']}, seed {cfg['seed']}, mosaic {cfg['mosaic']} (off for the last {cfg['close_mosaic']}), "
        f"no horizontal flips; from scratch (no pretrained weights).",
        f"- Hardware and time: {where}, "
        + (f"{hours / 3600:.2f} h." if isinstance(hours, (int, float)) else "time not recorded."),
        f"- Reproduce: `sciflow detector dataset -o DATA --n {ds.get('n', 'N')} --seed {ds.get('seed', 0)} "
        f"--tile {cfg['imgsz']} --text-px {meta.get('text_px')}{_styles_option(ds)}` then "
        f"`sciflow detector train --data DATA --epochs {cfg['epochs']} --imgsz {cfg['imgsz']} "
        f"--width {cfg.get('width')} --batch {cfg['batch']} --seed {cfg['seed']}` (needs `pip install "
        "'sciflow[detector]'`; `--resume` continues an interrupted run).",
        *_resume_lines(meta),
        "",
        "## Validation (held-out renders, ultralytics `val`)",
        "",
        f"All classes: mAP50 **{val['mAP50']:.3f}**, mAP50-95 **{val['mAP50-95']:.3f}**.",
        "",
        _table(class_rows, ["class", "train boxes", "val boxes", "mAP50", "mAP50-95"]),
        "",
    ]
    ev = meta.get("evaluation")
    if ev:
        lines += ["## Effect on the parser", "", str(ev.get("summary", "")), ""]
        if ev.get("rows"):
            lines += [_table(ev["rows"], ev["header"]), ""]
    lines += [
        "## Limits",
        "",
        f"- Trained only on sciflow's own renderers ({style_words} styles plus augmentations); real "
        "paper figures (photos, 3-D blocks, dense annotations) are outside its training distribution.",
        "- The text scale comes from the OCR line heights: a figure without readable text is seen whole, at "
        "one tile, where small arrowheads vanish.",
        "- Trained with ultralytics (AGPL-3.0); check its licence terms before redistributing the weights "
        "commercially.",
        "",
    ]
    return "\n".join(lines)


def _styles_option(ds: dict[str, Any]) -> str:
    """`` --styles a=x,b=y`` when the dataset recorded its style shares (datasets before v2 did not)."""
    shares = ds.get("style_shares")
    return " --styles " + ",".join(f"{k}={v:g}" for k, v in shares.items()) if shares else ""


def _resume_lines(meta: dict[str, Any]) -> list[str]:
    """The card's line on the committed resumable checkpoint, when the metadata names one."""
    ckpt = meta.get("resume_checkpoint")
    if not ckpt:
        return []
    return [
        f"- Resumable: `{ckpt['file']}` (sha256 `{ckpt['sha256']}`) is `last.pt` after epoch "
        f"{ckpt['epoch']} of {meta['train_config']['epochs']}, with `{ckpt['record']}` (the recorded "
        "schedule); `prepare_resume` in `sciflow.bench.detector.train` copies both into a run folder, "
        "then `sciflow detector train --data DATA -o RUN --resume` continues the schedule."
    ]


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    meta_path = Path(args[0]) if args else Path(__file__).resolve().parents[2] / "models" / "layout-detector.json"
    meta = json.loads(meta_path.read_text())
    card = "README.md" if meta_path.name == "layout-detector.json" else meta_path.with_suffix(".md").name
    (meta_path.parent / card).write_text(render_card(meta))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
