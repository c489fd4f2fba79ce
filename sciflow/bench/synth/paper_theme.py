"""Colours of the ``paper`` style: light and dark palettes and small colour helpers."""

from __future__ import annotations

import random
from dataclasses import dataclass

LIGHT_BG = ["#ffffff", "#fbfbf8", "#f7f8fa"]
DARK_BG = ["#1e1e1e", "#0d1117", "#22272e"]
LIGHT_PANELS = ["#eef2fb", "#eaf5e9", "#fdeef4", "#f1ecfa", "#e6f7fa", "#fff6dd", "#f2f2f2", "#e8eefc"]
DARK_PANELS = ["#27303d", "#2a3a2e", "#3a2a33", "#332e42", "#253a3d", "#3b3526", "#2c2c2c"]
LIGHT_FILLS = ["#dae8fc", "#d5e8d4", "#ffe6cc", "#fff2cc", "#f8cecc", "#e1d5e7", "#e8e8e8", "#cde9f2",
               "#fce4d6", "#d9ead3", "#c9daf8", "#f4cccc", "#b7e1cd", "#ffd966"]
DARK_FILLS = ["#3b5b8c", "#3c6e47", "#8c5a2b", "#7a6a2a", "#8c3b3b", "#5e4b7a", "#44484f", "#2d6a73"]
LIGHT_LINES = ["#000000", "#333333", "#555555", "#404040"]
DARK_LINES = ["#d0d0d0", "#e6e6e6", "#bdbdbd"]
LIGHT_COLORED = ["#d62728", "#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd", "#e377c2", "#8c564b", "#e06666"]
DARK_COLORED = ["#ff6b6b", "#6fa8ff", "#ffb347", "#7bd88f", "#c39bff", "#ff8fd1", "#f2d16b"]


def rgb(c: str) -> tuple[int, int, int]:
    c = c.lstrip("#")
    return int(c[0:2], 16), int(c[2:4], 16), int(c[4:6], 16)


def hexc(r: float, g: float, b: float) -> str:
    return "#" + "".join(f"{max(0, min(255, round(v))):02x}" for v in (r, g, b))


def mix(a: str, b: str, t: float) -> str:
    """``a`` moved a fraction ``t`` towards ``b``."""
    ra, rb = rgb(a), rgb(b)
    return hexc(*(x + (y - x) * t for x, y in zip(ra, rb, strict=True)))


def diff(a: str, b: str) -> int:
    """Sum of absolute channel differences."""
    return sum(abs(x - y) for x, y in zip(rgb(a), rgb(b), strict=True))


def contrast_fill(fill: str, under: str, dark: bool, need: int = 45) -> str:
    """``fill``, darkened (light theme) or lightened (dark theme) until it differs from
    ``under`` by at least ``need``."""
    target = "#ffffff" if dark else "#000000"
    out = fill
    for _ in range(12):
        if diff(out, under) >= need:
            break
        out = mix(out, target, 0.12)
    return out


@dataclass
class Theme:
    dark: bool
    bg: str  # the figure's own background colour
    page: str  # the colour the PNG shows where nothing is drawn (bg, or the composite colour)
    transparent: bool
    text: str
    line: str
    stroke: str  # node outlines
    panels: list[str]
    fills: list[str]
    colored: list[str]


def make_theme(rng: random.Random, dark: bool, transparent: bool, composite: str) -> Theme:
    bg = rng.choice(DARK_BG if dark else LIGHT_BG)
    page = bg if (not transparent or composite == "theme") else "#ffffff"
    line = rng.choice(DARK_LINES if dark else LIGHT_LINES)
    stroke = rng.choice(DARK_LINES if dark else ["#000000", "#333333", "#4d4d4d", "#6b6b6b"])
    return Theme(dark, bg, page, transparent, "#e8e8e8" if dark else rng.choice(["#000000", "#111111", "#222222"]),
                 line, stroke, list(DARK_PANELS if dark else LIGHT_PANELS), list(DARK_FILLS if dark else LIGHT_FILLS),
                 list(DARK_COLORED if dark else LIGHT_COLORED))
