"""Procedural pictures of the ``paper`` style: small glyph icons (SVG) and photo-like patches
(noise / gradient images, masked patch grids, small plots) embedded as PNG data URIs.
Everything is drawn from a seed, so the same item gives the same bytes."""

from __future__ import annotations

import base64
import io
import math

import numpy as np
from PIL import Image


def icon_svg(name: str, x: float, y: float, s: float, color: str, accent: str = "#ff8c1a") -> str:
    """Glyph ``name`` in the ``s`` x ``s`` box at ``(x, y)``."""
    c = f'stroke="{color}" fill="none" stroke-width="{max(1.0, s / 12):.2f}" stroke-linecap="round"'
    cx, cy, r = x + s / 2, y + s / 2, s / 2
    if name == "gear":
        teeth = "".join(
            f'<line x1="{cx + r * 0.55 * math.cos(a):.2f}" y1="{cy + r * 0.55 * math.sin(a):.2f}" '
            f'x2="{cx + r * 0.95 * math.cos(a):.2f}" y2="{cy + r * 0.95 * math.sin(a):.2f}" {c} '
            f'stroke-width="{s / 6:.2f}"/>' for a in [i * math.pi / 4 for i in range(8)])
        return teeth + f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{r * 0.55:.2f}" {c}/>' + \
            f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{r * 0.2:.2f}" {c}/>'
    if name == "snowflake":
        out = ""
        for i in range(3):
            a = i * math.pi / 3 + math.pi / 2
            dx, dy = r * 0.95 * math.cos(a), r * 0.95 * math.sin(a)
            out += f'<line x1="{cx - dx:.2f}" y1="{cy - dy:.2f}" x2="{cx + dx:.2f}" y2="{cy + dy:.2f}" {c}/>'
        return out.replace(f'stroke="{color}"', 'stroke="#3d8bfd"')
    if name == "flame":
        return (f'<path d="M{cx:.2f},{y + s * 0.05:.2f} C{x + s * 0.95:.2f},{y + s * 0.45:.2f} {x + s * 0.85:.2f},'
                f'{y + s:.2f} {cx:.2f},{y + s:.2f} C{x + s * 0.15:.2f},{y + s:.2f} '
                f'{x + s * 0.05:.2f},{y + s * 0.5:.2f} '
                f'{cx:.2f},{y + s * 0.05:.2f} Z" fill="{accent}"/>')
    if name == "lock":
        return (f'<rect x="{x + s * 0.15:.2f}" y="{y + s * 0.45:.2f}" width="{s * 0.7:.2f}" height="{s * 0.5:.2f}" '
                f'fill="{color}"/><path d="M{x + s * 0.3:.2f},{y + s * 0.45:.2f} V{y + s * 0.3:.2f} A{s * 0.2:.2f},'
                f'{s * 0.2:.2f} 0 0 1 {x + s * 0.7:.2f},{y + s * 0.3:.2f} V{y + s * 0.45:.2f}" {c}/>')
    if name == "doc":
        lines = "".join(f'<line x1="{x + s * 0.3:.2f}" y1="{y + s * f:.2f}" x2="{x + s * 0.7:.2f}" '
                        f'y2="{y + s * f:.2f}" {c}/>'
                        for f in (0.4, 0.55, 0.7))
        return (f'<path d="M{x + s * 0.15:.2f},{y + s * 0.05:.2f} H{x + s * 0.65:.2f} L{x + s * 0.85:.2f},'
                f'{y + s * 0.25:.2f} V{y + s * 0.95:.2f} H{x + s * 0.15:.2f} Z" {c}/>' + lines)
    if name == "bolt":
        pts = [(0.55, 0.0), (0.2, 0.55), (0.48, 0.55), (0.4, 1.0), (0.8, 0.4), (0.52, 0.4)]
        return '<polygon points="' + " ".join(f"{x + s * a:.2f},{y + s * b:.2f}" for a, b in pts) + \
            '" fill="#f2b705"/>'
    if name == "person":
        return (f'<circle cx="{cx:.2f}" cy="{y + s * 0.28:.2f}" r="{s * 0.2:.2f}" fill="{color}"/>'
                f'<path d="M{x + s * 0.12:.2f},{y + s:.2f} A{s * 0.38:.2f},{s * 0.4:.2f} 0 0 1 {x + s * 0.88:.2f},'
                f'{y + s:.2f} Z" fill="{color}"/>')
    if name == "robot":
        return (f'<rect x="{x + s * 0.15:.2f}" y="{y + s * 0.3:.2f}" width="{s * 0.7:.2f}" height="{s * 0.55:.2f}" '
                f'rx="{s * 0.1:.2f}" {c}/><circle cx="{x + s * 0.36:.2f}" cy="{y + s * 0.55:.2f}" r="{s * 0.07:.2f}" '
                f'fill="{color}"/><circle cx="{x + s * 0.64:.2f}" cy="{y + s * 0.55:.2f}" r="{s * 0.07:.2f}" '
                f'fill="{color}"/><line x1="{cx:.2f}" y1="{y + s * 0.3:.2f}" x2="{cx:.2f}" '
                f'y2="{y + s * 0.1:.2f}" {c}/>')
    if name == "db":
        ry = s * 0.12
        return (f'<path d="M{x + s * 0.15:.2f},{y + s * 0.2:.2f} V{y + s * 0.8:.2f} A{s * 0.35:.2f},{ry:.2f} 0 0 0 '
                f'{x + s * 0.85:.2f},{y + s * 0.8:.2f} V{y + s * 0.2:.2f}" {c}/><ellipse cx="{cx:.2f}" '
                f'cy="{y + s * 0.2:.2f}" rx="{s * 0.35:.2f}" ry="{ry:.2f}" {c}/>')
    if name == "molecule":
        pts = [(0.2, 0.3), (0.5, 0.15), (0.8, 0.35), (0.65, 0.75), (0.3, 0.8)]
        bonds = "".join(f'<line x1="{x + s * a[0]:.2f}" y1="{y + s * a[1]:.2f}" x2="{x + s * b[0]:.2f}" '
                        f'y2="{y + s * b[1]:.2f}" {c}/>' for a, b in zip(pts, pts[1:] + pts[:1], strict=True))
        atoms = "".join(f'<circle cx="{x + s * a:.2f}" cy="{y + s * b:.2f}" r="{s * 0.09:.2f}" fill="{col}"/>'
                        for (a, b), col in zip(pts, ["#e03131", color, "#1971c2", color, "#2f9e44"], strict=True))
        return bonds + atoms
    if name == "globe":
        return (f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{r * 0.9:.2f}" {c}/><ellipse cx="{cx:.2f}" cy="{cy:.2f}" '
                f'rx="{r * 0.4:.2f}" ry="{r * 0.9:.2f}" {c}/><line x1="{x + s * 0.05:.2f}" y1="{cy:.2f}" '
                f'x2="{x + s * 0.95:.2f}" y2="{cy:.2f}" {c}/>')
    if name == "car":
        return (f'<path d="M{x + s * 0.05:.2f},{y + s * 0.7:.2f} V{y + s * 0.5:.2f} L{x + s * 0.25:.2f},'
                f'{y + s * 0.3:.2f} H{x + s * 0.7:.2f} L{x + s * 0.95:.2f},{y + s * 0.5:.2f} V{y + s * 0.7:.2f} Z" '
                f'fill="{color}"/><circle cx="{x + s * 0.27:.2f}" cy="{y + s * 0.72:.2f}" r="{s * 0.1:.2f}" '
                f'fill="{accent}"/><circle cx="{x + s * 0.73:.2f}" cy="{y + s * 0.72:.2f}" r="{s * 0.1:.2f}" '
                f'fill="{accent}"/>')
    return f'<circle cx="{cx:.2f}" cy="{cy:.2f}" r="{r * 0.8:.2f}" {c}/>'


def _smooth(rng: np.random.Generator, w: int, h: int, cells: int) -> np.ndarray:
    small = rng.random((max(2, cells * h // max(w, 1)), cells))
    img = Image.fromarray((small * 255).astype(np.uint8)).resize((w, h), Image.BICUBIC)
    return np.asarray(img, dtype=np.float32) / 255.0


def photo_png(kind: str, seed: int, w: int, h: int) -> str:
    """A photo-like patch as a ``data:image/png`` URI (``photo`` / ``grid`` / ``plot``)."""
    rng = np.random.default_rng(seed)
    w, h = max(8, int(w)), max(8, int(h))
    if kind == "grid":
        n = int(rng.integers(4, 8))
        base = _smooth(rng, n, n, 3)
        hue = rng.random(3)
        cells = (base[..., None] * (0.5 + 0.5 * hue) * 255).astype(np.uint8)
        mask = rng.random((n, n)) < 0.45
        cells[mask] = 200
        img = np.asarray(Image.fromarray(cells).resize((w, h), Image.NEAREST)).copy()
        step = max(1, w // n)
        img[:, ::step] = 255
        img[::max(1, h // n), :] = 255
    elif kind == "plot":
        img = np.full((h, w, 3), 250, np.uint8)
        xs = np.arange(w)
        f = rng.uniform(1, 4)
        ys = (h / 2 + h * 0.3 * np.sin(xs / w * f * math.pi + rng.uniform(0, 6))).astype(int).clip(1, h - 2)
        col = (rng.integers(0, 120, 3)).astype(np.uint8)
        for dx in (-1, 0, 1):
            img[(ys + dx).clip(0, h - 1), xs] = col
        img[h - 2, :] = 60
        img[:, 1] = 60
    else:
        sky = np.array(rng.uniform(120, 230, 3))
        ground = np.array(rng.uniform(40, 160, 3))
        t = _smooth(rng, w, h, 5)
        yy = np.linspace(0, 1, h)[:, None]
        horizon = rng.uniform(0.35, 0.7)
        mixw = np.clip((yy - horizon + 0.25 * (t - 0.5)) * 6, 0, 1)[..., None]
        img = sky * (1 - mixw) + ground * mixw
        img = img * (0.75 + 0.5 * _smooth(rng, w, h, 12))[..., None]
        for _ in range(int(rng.integers(2, 6))):
            x0, y0 = int(rng.integers(0, w)), int(rng.integers(0, h))
            bw, bh = int(rng.integers(3, max(4, w // 3))), int(rng.integers(3, max(4, h // 3)))
            img[y0:y0 + bh, x0:x0 + bw] = rng.uniform(0, 255, 3)
        img = img + rng.normal(0, 6, img.shape)
        img = np.clip(img, 0, 255).astype(np.uint8)
    buf = io.BytesIO()
    Image.fromarray(np.asarray(img, np.uint8)).save(buf, format="PNG", optimize=False)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")
