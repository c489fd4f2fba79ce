"""Render framework-like diagrams and write an ultralytics detection dataset with exact boxes.

Boxes come from the renderers themselves (:attr:`sciflow.bench.synth.common.SynthDiagram.elements`:
Graphviz ``-Tjson`` geometry, the Pillow renderer's own drawing calls, the browser styles'
measured SVG), never from guesses; ``arrowtail`` boxes (the end of a one-headed connector
without the head) come from the same geometry (:mod:`sciflow.bench.detector.tails`).
Styles: Graphviz (the parser benchmark's generator, with some fan-in nodes drawn as operator
circles), Pillow, and the browser-drawn Mermaid and paper styles. Each render is rescaled to a
common text height (``text_px`` x a random factor in [0.75, 1.33]), augmented
(:func:`sciflow.bench.detector.augment.augment`) and cut to one random ``tile`` x ``tile``
window: the detector works at a fixed text scale on tiles, which keeps 8-20 px arrowheads
visible whatever the size of the figure.

Layout written (the ultralytics convention)::

    DIR/images/{train,val}/<name>.png|jpg
    DIR/labels/{train,val}/<name>.txt   # one "class cx cy w h" line per box, normalised
    DIR/data.yaml                       # path, train, val, names
    DIR/dataset.json                    # seed, sizes, class counts, styles, augmentations
"""

from __future__ import annotations

import json
import logging
import random
import subprocess
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from PIL import Image

from sciflow.bench.detector import CLASSES
from sciflow.bench.detector.augment import Box, augment, rescale
from sciflow.bench.detector.tails import graphviz_tails, pillow_render_with_tails, record_tails, tail_box
from sciflow.bench.synth import graphviz_render, pillow_render

log = logging.getLogger(__name__)

#: Graphviz share of the items (the rest are drawn with Pillow)
GRAPHVIZ_SHARE = 0.6
#: the default share of each style (``sciflow detector dataset --styles``); the order fixes
#: which draw of the item's generator picks which style
DEFAULT_SHARES: dict[str, float] = {"graphviz": GRAPHVIZ_SHARE, "pillow": 1 - GRAPHVIZ_SHARE}
STYLE_ORDER = ("graphviz", "pillow", "mermaid", "paper")
MIN_BOX_PX = 2.0
#: arrowhead and arrowtail boxes are squares of at least this x the text height (see :func:`pad_arrowheads`)
ARROWHEAD_SIDE = 1.2
#: classes drawn as a square around a point of a connector (see :func:`pad_arrowheads`)
END_CLASSES = ("arrowhead", "arrowtail")


@dataclass
class DetectorItem:
    """One training image and its boxes (class name, pixel box)."""

    name: str
    image: np.ndarray
    boxes: list[tuple[str, Box]]
    style: str
    augmentations: list[str] = field(default_factory=list)


def _with_operators(spec: dict[str, Any], rng: random.Random) -> dict[str, Any]:
    """Draw some fan-in nodes (in-degree >= 2) as operator circles (``+`` or ``x``)."""
    indeg = Counter(e["target"] for e in spec["edges"])
    nodes = []
    for nd in spec["nodes"]:
        if indeg[nd["id"]] >= 2 and rng.random() < 0.35:
            plus = rng.random() < 0.7
            nd = dict(nd, shape="operator", drawn="+" if plus else "×", label="⊕" if plus else "⊗", fill=None)
        nodes.append(nd)
    return dict(spec, nodes=nodes)


def _render_graphviz(rng: random.Random, name: str) -> tuple[np.ndarray, list[tuple[str, Box]]]:
    spec = _with_operators(graphviz_render.make_spec(rng, rng.randint(4, 24)), rng)
    try:
        d = graphviz_render.render(spec, item_id=name)
    except subprocess.CalledProcessError:  # dot aborts on some ortho/cluster layouts
        d = graphviz_render.render(dict(spec, splines="spline"), item_id=name)
    return d.image, list(d.elements) + [tail_box(p) for p in graphviz_tails(spec, d.meta)]


def _render_pillow(rng: random.Random, name: str) -> tuple[np.ndarray, list[tuple[str, Box]]]:
    d, tails = pillow_render_with_tails(pillow_render.make_spec(rng, rng.randint(4, 14)), item_id=name)
    return d.image, list(d.elements) + [tail_box(p) for p in tails]


def clip_boxes(
    boxes: list[tuple[str, Box]], width: int, height: int, keep: tuple[str, ...] = ()
) -> list[tuple[str, Box]]:
    """Clip to the image and drop boxes under :data:`MIN_BOX_PX` on a side (boxes of the
    classes in ``keep`` are left as they are: point boxes, padded later)."""
    out = []
    for c, b in boxes:
        if c in keep:
            out.append((c, b))
            continue
        x0, y0 = max(0.0, b[0]), max(0.0, b[1])
        x1, y1 = min(float(width), b[2]), min(float(height), b[3])
        if x1 - x0 >= MIN_BOX_PX and y1 - y0 >= MIN_BOX_PX:
            out.append((c, (x0, y0, x1, y1)))
    return out


def crop_window(
    image: np.ndarray, boxes: list[tuple[str, Box]], window: tuple[int, int, int, int], min_visible: float = 0.3
) -> tuple[np.ndarray, list[tuple[str, Box]]]:
    """Crop ``image`` to ``window`` (x0, y0, x1, y1); boxes move with it and are clipped, and
    a box keeps its label when at least ``min_visible`` of its area stays in the window."""
    x0, y0, x1, y1 = window
    out = []
    for c, b in boxes:
        area = max(1e-6, (b[2] - b[0]) * (b[3] - b[1]))
        cb = (max(b[0], x0), max(b[1], y0), min(b[2], x1), min(b[3], y1))
        if cb[2] > cb[0] and cb[3] > cb[1] and (cb[2] - cb[0]) * (cb[3] - cb[1]) >= min_visible * area:
            out.append((c, (cb[0] - x0, cb[1] - y0, cb[2] - x0, cb[3] - y0)))
    return np.ascontiguousarray(image[y0:y1, x0:x1]), out


def text_height(boxes: list[tuple[str, Box]]) -> float | None:
    """The height of one text line in a render: the 25th percentile of its ``text`` box heights
    (most labels are one line; multi-line ones sit above the percentile)."""
    hs = [b[3] - b[1] for c, b in boxes if c == "text"]
    return float(np.percentile(hs, 25)) if hs else None


def parse_shares(text: str) -> dict[str, float]:
    """``"graphviz=0.4,pillow=0.2,mermaid=0.2,paper=0.2"`` -> shares (normalised to sum 1).

    >>> parse_shares("graphviz=3,paper=1")
    {'graphviz': 0.75, 'paper': 0.25}
    """
    shares: dict[str, float] = {}
    for part in text.split(","):
        name, sep, value = part.strip().partition("=")
        if not sep or name not in STYLE_ORDER:
            raise ValueError(f"--styles {text!r}: expected STYLE=SHARE,... with styles from {', '.join(STYLE_ORDER)}")
        shares[name] = float(value)
    total = sum(shares.values())
    if total <= 0 or any(v < 0 for v in shares.values()):
        raise ValueError(f"--styles {text!r}: shares must be >= 0 and not all 0")
    return {k: v / total for k, v in shares.items()}


def _pick_style(rng: random.Random, shares: dict[str, float]) -> str:
    r, acc = rng.random(), 0.0
    styles = [s for s in STYLE_ORDER if shares.get(s, 0) > 0]
    for style in styles:
        acc += shares[style]
        if r < acc:
            return style
    return styles[-1]


def _render_browser(style: str, rng: random.Random, browser: Any) -> tuple[np.ndarray, list[tuple[str, Box]]]:
    from sciflow.bench.synth.styles import make_item

    d = make_item(style, rng.randrange(2**31), browser)
    return d.image, list(d.elements) + [tail_box(p) for p in record_tails(d.record)]


def render_item(seed: int, augmented: bool = True, shares: dict[str, float] | None = None,
                browser: Any = None) -> DetectorItem:
    """One diagram from ``seed`` (deterministic) at its native resolution, with its exact
    element boxes; augmented unless ``augmented`` is False. ``shares`` (default
    :data:`DEFAULT_SHARES`) chooses the style; the browser styles draw in ``browser``."""
    rng = random.Random(seed)
    name = f"det-{seed}"
    style = _pick_style(rng, shares or DEFAULT_SHARES)
    if style == "graphviz":
        image, boxes = _render_graphviz(rng, name)
    elif style == "pillow":
        image, boxes = _render_pillow(rng, name)
    else:
        image, boxes = _render_browser(style, rng, browser)
    applied: list[str] = []
    if augmented:
        image, boxes, applied = augment(image, boxes, rng)
    return DetectorItem(name, image, boxes, style, applied)


def training_tile(
    item: DetectorItem, seed: int, tile: int = 640, text_px: float = 20.0, augmented: bool = True
) -> DetectorItem:
    """The square window the detector trains on: ``item`` rescaled so a text line is
    ``text_px`` x U(0.75, 1.33) px high (the Layout Detector rescales images the same way,
    from the OCR line heights, so it sees every diagram at one scale), augmented (see
    :func:`sciflow.bench.detector.augment.augment`), then a random ``tile`` x ``tile`` window; the
    page colour pads what the image does not cover."""
    rng = random.Random(seed)
    image, boxes = item.image, item.boxes
    applied = list(item.augmentations)
    th = text_height(boxes)
    if th:
        factor = text_px * (rng.uniform(0.75, 1.33) if augmented else 1.0) / th
        image, boxes = rescale(image, boxes, factor)
        applied.append("text_scale")
    if augmented:
        image, boxes, more = augment(image, boxes, rng)
        applied += more
    h, w = image.shape[:2]
    x0 = rng.randrange(0, w - tile + 1) if w > tile else 0
    y0 = rng.randrange(0, h - tile + 1) if h > tile else 0
    image, boxes = crop_window(image, boxes, (x0, y0, min(w, x0 + tile), min(h, y0 + tile)))
    canvas = np.full((tile, tile, 3), 255, dtype=np.uint8)
    canvas[: image.shape[0], : image.shape[1]] = image
    boxes = pad_arrowheads(clip_boxes(boxes, tile, tile, keep=("arrowtail",)), ARROWHEAD_SIDE * text_px)
    return DetectorItem(item.name, canvas, clip_boxes(boxes, tile, tile), item.style, applied)


def pad_arrowheads(boxes: list[tuple[str, Box]], side: float) -> list[tuple[str, Box]]:
    """Arrowhead (and arrowtail) boxes grown to a square of at least ``side`` px around the
    drawn head's centre (the tail point).

    A drawn head is 7-15 px at the training scale, too few anchor points for the detector to
    learn it (it stayed at zero recall for 12 epochs with tight boxes); the square names the
    head's neighbourhood, which is what the Topology Coder asks about (is there a head at this
    contact?)."""
    out = []
    for c, b in boxes:
        if c in END_CLASSES:
            cx, cy = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
            half = max(b[2] - b[0], b[3] - b[1], side) / 2
            b = (cx - half, cy - half, cx + half, cy + half)
        out.append((c, b))
    return out


def yolo_lines(boxes: list[tuple[str, Box]], width: int, height: int) -> list[str]:
    """``class cx cy w h`` lines (normalised to the image, 6 decimals) in :data:`CLASSES` order."""
    lines = []
    for c, (x0, y0, x1, y1) in boxes:
        cx, cy = (x0 + x1) / 2 / width, (y0 + y1) / 2 / height
        lines.append(f"{CLASSES.index(c)} {cx:.6f} {cy:.6f} {(x1 - x0) / width:.6f} {(y1 - y0) / height:.6f}")
    return lines


def write_dataset(
    out: Path,
    n: int,
    seed: int = 0,
    val_fraction: float = 0.1,
    tile: int = 640,
    text_px: float = 20.0,
    progress: Callable[[int], None] | None = None,
    shares: dict[str, float] | None = None,
) -> dict[str, Any]:
    """Write ``n`` items to ``out`` (item ``i`` rendered from seed ``seed * 1_000_003 + i``;
    every ``round(1 / val_fraction)``-th item goes to ``val``). Lossy-augmented items are
    stored as JPEG (the bytes that were augmented), the rest as PNG. Returns the summary
    also written to ``dataset.json``. ``shares`` is the share of each style (default
    :data:`DEFAULT_SHARES`; the browser styles open one Chromium for the whole dataset)."""
    if n < 2:
        raise ValueError("a detector dataset needs at least 2 items (one for validation)")
    out = Path(out)
    every = max(2, round(1 / val_fraction)) if val_fraction > 0 else 0
    counts: dict[str, Counter[str]] = {"train": Counter(), "val": Counter()}
    sizes: Counter[str] = Counter()
    styles: Counter[str] = Counter()
    augs: Counter[str] = Counter()
    for split in ("train", "val"):
        (out / "images" / split).mkdir(parents=True, exist_ok=True)
        (out / "labels" / split).mkdir(parents=True, exist_ok=True)
    shares = shares or DEFAULT_SHARES
    browser = None
    if any(shares.get(s, 0) > 0 for s in ("mermaid", "paper")):
        from sciflow.bench.synth.browser import Browser

        browser = Browser()
    try:
        _write_items(out, n, seed, every, tile, text_px, progress, shares, browser, counts, sizes, styles, augs)
    finally:
        if browser is not None:
            browser.close()
    names = "\n".join(f"  {i}: {c}" for i, c in enumerate(CLASSES))
    (out / "data.yaml").write_text(f"path: {out.resolve()}\ntrain: images/train\nval: images/val\nnames:\n{names}\n")
    summary = {
        "n": n,
        "seed": seed,
        "val_fraction": val_fraction,
        "tile": tile,
        "text_px": text_px,
        "classes": list(CLASSES),
        "images": dict(sizes),
        "boxes": {s: {c: counts[s][c] for c in CLASSES} for s in counts},
        "styles": dict(styles),
        "style_shares": {k: round(v, 6) for k, v in shares.items()},
        "augmentations": dict(sorted(augs.items())),
    }
    (out / "dataset.json").write_text(json.dumps(summary, indent=2) + "\n")
    log.info("detector dataset: %d images in %s", n, out)
    return summary


def _write_items(out: Path, n: int, seed: int, every: int, tile: int, text_px: float,
                 progress: Callable[[int], None] | None, shares: dict[str, float], browser: Any,
                 counts: dict[str, Counter[str]], sizes: Counter[str], styles: Counter[str],
                 augs: Counter[str]) -> None:
    for i in range(n):
        split = "val" if every and i % every == 0 else "train"
        item_seed = seed * 1_000_003 + i
        item = training_tile(render_item(item_seed, augmented=False, shares=shares, browser=browser), item_seed,
                             tile=tile, text_px=text_px)
        h, w = item.image.shape[:2]
        ext = "jpg" if "jpeg" in item.augmentations else "png"
        img = Image.fromarray(item.image)
        if ext == "jpg":
            img.save(out / "images" / split / f"{item.name}.jpg", quality=95)
        else:
            img.save(out / "images" / split / f"{item.name}.png")
        (out / "labels" / split / f"{item.name}.txt").write_text("\n".join(yolo_lines(item.boxes, w, h)) + "\n")
        counts[split].update(c for c, _ in item.boxes)
        sizes[split] += 1
        styles[item.style] += 1
        augs.update(item.augmentations)
        if progress is not None:
            progress(i + 1)
