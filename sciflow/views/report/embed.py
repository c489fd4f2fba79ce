"""Embedding in a self-contained page: images as small base64 ``data:`` URIs (thumbnails; the
full size is a file beside the page), Graphviz renderings as inline SVG."""

from __future__ import annotations

import base64
import io
import re
from pathlib import Path
from typing import Any

from PIL import Image

__all__ = ["MAX_IMAGE_SIDE", "THUMB_SIDE", "full_size_file", "image_png", "inline_svg", "png_uri", "thumbnail_uri"]

MAX_IMAGE_SIDE = 1400
#: the longest side of an image shown inline (the full size opens on click)
THUMB_SIDE = 360


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


def thumbnail_uri(im: Any, max_side: int = THUMB_SIDE) -> str:
    """A small WebP ``data:`` URI of ``im`` (longest side ``max_side``): about 10 KB for a diagram."""
    small = im.convert("RGB")
    small.thumbnail((max_side, max_side), resample=Image.Resampling.BILINEAR, reducing_gap=2.0)
    buf = io.BytesIO()
    small.save(buf, format="WEBP", quality=65)
    return "data:image/webp;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def full_size_file(im: Any, path: Path, max_side: int = MAX_IMAGE_SIDE) -> Path:
    """``im`` as a JPEG file at ``path`` (longest side at most ``max_side``), for the full-size view."""
    big = im.convert("RGB")
    if max(big.size) > 1.5 * max_side:  # a little over is kept as it is: resampling costs more than bytes
        big.thumbnail((max_side, max_side), resample=Image.Resampling.BILINEAR, reducing_gap=2.0)
    path.parent.mkdir(parents=True, exist_ok=True)
    big.save(path, format="JPEG", quality=82)
    return path


_SVG_DROP = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->|<title>.*?</title>", re.S)
_SVG_ID = re.compile(r'\bid="([^"]*)"')


def inline_svg(dot: Any, prefix: str) -> str:
    """Graphviz SVG for inlining: prolog, comments and tooltips dropped, ids made unique
    (graphviz writes no internal references for these graphs, so renaming ids is safe)."""
    svg = dot.pipe(format="svg").decode("utf-8")
    svg = _SVG_DROP.sub("", svg).strip()
    svg = _SVG_ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    return svg.replace("<svg ", '<svg class="graph" role="img" ', 1)
