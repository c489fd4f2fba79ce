"""Small sample items for trying ``sciflow verify`` without the parser (and for its tests).

:func:`write_sample_items` draws framework figures with Pillow and writes, beside each
``<stem>.png``, an imperfect "automatic" parse ``<stem>.json`` (a hallucinated box, a missing
box, a missing and a wrong arrow), so every editing mode has something to do::

    python -m sciflow.verify.sample /tmp/figs && sciflow verify /tmp/figs --out /tmp/verified
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

Box = tuple[int, int, int, int]

# stem -> (size, drawn boxes {id: (label, box)}, drawn arrows, parse)
SAMPLES: dict[str, dict[str, Any]] = {
    "encoder_decoder": {
        "size": (720, 320),
        "boxes": {
            "a": ("Image", (30, 120, 130, 170)),
            "b": ("Encoder", (190, 105, 320, 185)),
            "c": ("Decoder", (380, 105, 510, 185)),
            "d": ("Output", (580, 120, 690, 170)),
            "loss": ("Loss", (380, 240, 510, 290)),
        },
        "arrows": [("a", "b"), ("b", "c"), ("c", "d"), ("c", "loss")],
        # the parse: misses "Loss" and the arrow to it, hallucinates "Noise" with an arrow
        "parse_nodes": ["a", "b", "c", "d"],
        "parse_extra_nodes": [{"id": "x", "label": "Noise", "bbox": [200, 20, 310, 60]}],
        "parse_edges": [("a", "b"), ("b", "c"), ("c", "d"), ("x", "c")],
    },
    "retrieval": {
        "size": (640, 300),
        "boxes": {
            "q": ("Query", (30, 40, 150, 90)),
            "r": ("Retriever", (250, 40, 390, 90)),
            "db": ("Document Store", (250, 200, 390, 250)),
            "g": ("Generator", (480, 40, 610, 90)),
        },
        "arrows": [("q", "r"), ("db", "r"), ("r", "g")],
        "parse_nodes": ["q", "r", "db", "g"],
        "parse_extra_nodes": [],
        "parse_edges": [("q", "r"), ("r", "db"), ("r", "g")],  # one arrow read backwards
    },
}


def _font(size: int) -> Any:
    from PIL import ImageFont

    try:
        return ImageFont.load_default(size=size)
    except TypeError:  # Pillow < 10.1
        return ImageFont.load_default()


def _arrow(draw: Any, a: Box, b: Box) -> None:
    ax, ay = (a[0] + a[2]) / 2, (a[1] + a[3]) / 2
    bx, by = (b[0] + b[2]) / 2, (b[1] + b[3]) / 2
    # from the side of a facing b to the side of b facing a
    if abs(bx - ax) >= abs(by - ay):
        x0, x1 = (a[2], b[0]) if bx > ax else (a[0], b[2])
        p0, p1 = (x0, ay), (x1, by)
    else:
        y0, y1 = (a[3], b[1]) if by > ay else (a[1], b[3])
        p0, p1 = (ax, y0), (bx, y1)
    draw.line([p0, p1], fill=(40, 40, 40), width=3)
    import math

    ang = math.atan2(p1[1] - p0[1], p1[0] - p0[0])
    size = 11
    left = (p1[0] - size * math.cos(ang - 0.4), p1[1] - size * math.sin(ang - 0.4))
    right = (p1[0] - size * math.cos(ang + 0.4), p1[1] - size * math.sin(ang + 0.4))
    draw.polygon([p1, left, right], fill=(40, 40, 40))


def write_sample_items(folder: str | Path, stems: list[str] | None = None) -> list[Path]:
    """Write ``<stem>.png`` and its parse ``<stem>.json`` for each sample; returns the figures."""
    from PIL import Image, ImageDraw

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    font = _font(18)
    out = []
    for stem in stems or list(SAMPLES):
        spec = SAMPLES[stem]
        im = Image.new("RGB", spec["size"], "white")
        draw = ImageDraw.Draw(im)
        for label, box in spec["boxes"].values():
            draw.rounded_rectangle(box, radius=8, outline=(30, 30, 30), width=2, fill=(232, 241, 252))
            cx, cy = (box[0] + box[2]) / 2, (box[1] + box[3]) / 2
            draw.text((cx, cy), label, fill=(10, 10, 10), font=font, anchor="mm")
        for s, t in spec["arrows"]:
            _arrow(draw, spec["boxes"][s][1], spec["boxes"][t][1])
        png = folder / f"{stem}.png"
        im.save(png)
        nodes = [
            {"id": n, "label": spec["boxes"][n][0], "bbox": list(spec["boxes"][n][1])} for n in spec["parse_nodes"]
        ]
        nodes += [dict(n) for n in spec["parse_extra_nodes"]]
        graph = {
            "format": "sciflow.graph/v1",
            "id": stem,
            "nodes": nodes,
            "edges": [{"source": s, "target": t} for s, t in spec["parse_edges"]],
            "meta": {"origin": "sciflow.verify.sample"},
        }
        (folder / f"{stem}.json").write_text(json.dumps(graph, indent=2) + "\n", encoding="utf-8")
        out.append(png)
    return out


if __name__ == "__main__":  # pragma: no cover
    for p in write_sample_items(sys.argv[1] if len(sys.argv) > 1 else "sample-figures"):
        print(p)
