"""Embedding in a self-contained page: images as base64 PNG ``data:`` URIs, Graphviz
renderings as inline SVG."""

from __future__ import annotations

import base64
import io
import re
from typing import Any

__all__ = ["MAX_IMAGE_SIDE", "image_png", "inline_svg", "png_uri"]

MAX_IMAGE_SIDE = 1400


def png_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def image_png(im: Any, max_side: int = MAX_IMAGE_SIDE) -> bytes:
    im = im.convert("RGB")
    w, h = im.size
    if max(w, h) > max_side:
        s = max_side / max(w, h)
        im = im.resize((max(1, round(w * s)), max(1, round(h * s))))
    buf = io.BytesIO()
    im.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


_SVG_DROP = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->|<title>.*?</title>", re.S)
_SVG_ID = re.compile(r'\bid="([^"]*)"')


def inline_svg(dot: Any, prefix: str) -> str:
    """Graphviz SVG for inlining: prolog, comments and tooltips dropped, ids made unique
    (graphviz writes no internal references for these graphs, so renaming ids is safe)."""
    svg = dot.pipe(format="svg").decode("utf-8")
    svg = _SVG_DROP.sub("", svg).strip()
    svg = _SVG_ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    return svg.replace("<svg ", '<svg class="graph" role="img" ', 1)
