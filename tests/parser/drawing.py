"""Tiny hand-drawn diagrams with known answers for the parser tests."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from PIL import Image, ImageDraw, ImageFont

FONT = Path("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf")


def font(size: int = 18) -> ImageFont.ImageFont:
    return ImageFont.truetype(str(FONT), size) if FONT.is_file() else ImageFont.load_default(size=size)


class Canvas:
    def __init__(self, w: int, h: int):
        self.img = Image.new("RGB", (w, h), "white")
        self.d = ImageDraw.Draw(self.img)
        self.boxes: dict[str, tuple[int, int, int, int]] = {}

    def box(self, name: str, x: int, y: int, w: int = 150, h: int = 50, fill: str = "white", label: str | None = None):
        self.d.rectangle((x, y, x + w, y + h), outline="black", width=2, fill=fill)
        self.d.text((x + w / 2, y + h / 2), label or name, font=font(), fill="black", anchor="mm")
        self.boxes[name] = (x, y, x + w, y + h)

    def text(self, s: str, x: int, y: int, size: int = 18):
        self.d.text((x, y), s, font=font(size), fill="black", anchor="mm")

    def line(self, pts, dashed: bool = False, width: int = 2):
        if not dashed:
            self.d.line(pts, fill="black", width=width)
            return
        for p, q in zip(pts, pts[1:], strict=False):
            n = math.hypot(q[0] - p[0], q[1] - p[1])
            t = 0.0
            while t < n:
                t1 = min(n, t + 8)
                a = (p[0] + (q[0] - p[0]) * t / n, p[1] + (q[1] - p[1]) * t / n)
                b = (p[0] + (q[0] - p[0]) * t1 / n, p[1] + (q[1] - p[1]) * t1 / n)
                self.d.line([a, b], fill="black", width=width)
                t += 13

    def head(self, tip, frm, size: float = 14, style: str = "filled"):
        ang = math.atan2(tip[1] - frm[1], tip[0] - frm[0])
        left = (tip[0] - size * math.cos(ang - 0.4), tip[1] - size * math.sin(ang - 0.4))
        right = (tip[0] - size * math.cos(ang + 0.4), tip[1] - size * math.sin(ang + 0.4))
        if style == "filled":
            self.d.polygon([tip, left, right], fill="black")
        else:
            self.d.line([left, tip, right], fill="black", width=2)

    def arrow(self, pts, dashed: bool = False, style: str = "filled", both: bool = False):
        self.line(pts, dashed=dashed)
        self.head(pts[-1], pts[-2], style=style)
        if both:
            self.head(pts[0], pts[1], style=style)

    def array(self) -> np.ndarray:
        return np.asarray(self.img)


def edges_by_label(graph) -> set[tuple[str, str]]:
    lab = {n.id: " ".join(n.label.lower().split()) for n in graph.nodes}
    return {(lab[e.source], lab[e.target]) for e in graph.edges}


def labels(graph) -> set[str]:
    return {" ".join(n.label.lower().split()) for n in graph.nodes}
