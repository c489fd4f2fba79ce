"""Splitting an OCR line that spans two labels: a wide empty gap, or a drawn arrow, between them.

The text detector joins words in one row into one line when they are close enough, so two
captions side by side ("matmul" under one box, "all-gather" under the next), or two labels
with a short arrow drawn between them ("features ⟶ Image Head", "Encoder ⇨ Decoder"), come
back as one line and one label. What the image shows: inside a line, words are separated by
spaces of about a quarter of the font size; between two labels lies a run of columns holding
no glyph (empty, or crossed only by a thin line at mid-height: an arrow's shaft) far wider
than any space. Such a run splits the line, and each piece is read again by the recogniser.

Measured on the columns of the line's box: a column's ink span (max channel difference from
the box's median colour over ``thr``) is a *glyph column* when it reaches ``tall`` x the
capital height (the 90th percentile of the inked columns' spans, as
:func:`~sciflow.agents.text_filters.glyph_span`; a column inked over nine tenths of the
box's height or more is a drawn edge the box overlaps, left out). Between two glyph columns,
a run of empty columns at least ``gap`` x the capital height wide (a word space is about
0.35 x), or at least ``shaft`` x the capital height of columns inked only in the middle three
fifths of the text's band with nothing else between (an arrow's shaft: longer than any
hyphen or dash, and an underscore or dots along the baseline belong to the text) is a
separator, when it is also at least twice as wide as the median of the line's other word
spaces (a justified paragraph, or a line of monospaced code, spaces its words evenly and
wide).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import replace

import numpy as np

from sciflow.agents.diagram import TextBox
from sciflow.agents.text_filters import column_spans
from sciflow.agents.text_rotation import upright_crop

__all__ = ["line_pieces", "split_wide_lines"]

Recognizer = Callable[[Sequence[np.ndarray]], list[tuple[str, float]]]


def line_pieces(
    image: np.ndarray,
    bbox: tuple[float, float, float, float],
    *,
    gap: float = 0.8,
    shaft: float = 2.0,
    spaces: int = 0,
    tall: float = 0.5,
    thr: int = 60,
) -> list[tuple[float, float]]:
    """The column spans ``(x0, x1)`` (image coordinates) of the pieces of text in the upright
    line box ``bbox``, split at runs of non-glyph columns at least ``gap`` x the capital height
    wide or a shaft ``shaft`` x as long, and twice the median of the line's other word spaces
    (``spaces``: how many its reading holds, taken as its widest gaps; module docstring);
    one span (the glyphs' extent) when nothing splits it, none
    when the box holds no ink.

    >>> img = np.full((30, 200, 3), 255, np.uint8)
    >>> for x in (10, 20, 30, 40): img[8:22, x:x + 6] = 0        # a word ...
    >>> for x in (120, 130, 140): img[8:22, x:x + 6] = 0         # ... a wide gap, another word
    >>> line_pieces(img, (0.0, 4.0, 200.0, 26.0))
    [(10.0, 46.0), (120.0, 146.0)]
    >>> img[14:16, 50:115] = 0                                    # an arrow's shaft between them
    >>> line_pieces(img, (0.0, 4.0, 200.0, 26.0))
    [(10.0, 46.0), (120.0, 146.0)]
    >>> line_pieces(img, (0.0, 4.0, 100.0, 26.0))                 # one word (and a shaft)
    [(10.0, 46.0)]
    >>> img[14:16, 50:115] = 255; img[20:22, 50:115] = 0          # an underscore instead
    >>> line_pieces(img, (0.0, 4.0, 200.0, 26.0))
    [(10.0, 146.0)]
    >>> even = np.full((30, 300, 3), 255, np.uint8)               # five words evenly spaced
    >>> for x in (10, 70, 130, 190, 250): even[8:22, x:x + 30] = 0
    >>> line_pieces(even, (0.0, 4.0, 300.0, 26.0), spaces=4)
    [(10.0, 280.0)]
    >>> tight = np.full((24, 120, 3), 255, np.uint8)              # a short label in a tight box
    >>> for x in (20, 28, 39, 47): tight[8:16, x:x + 6] = 0       # two words a space apart
    >>> tight[:, 2:4] = 0; tight[:, 116:118] = 0                  # the box's sides in the line box
    >>> line_pieces(tight, (0.0, 0.0, 120.0, 24.0), spaces=1)
    [(20.0, 53.0)]
    """
    cs = column_spans(image, bbox, thr)
    if cs is None:
        return []
    x0, top, bottom = cs
    span = bottom - top + 1
    if not (span > 0).any():
        return []
    # a column inked over (nearly) the box's whole height is a drawn edge the box overlaps
    # (an ellipse's side hugging a short label), neither a glyph nor a gap
    height = min(image.shape[0], int(np.ceil(bbox[3]))) - max(0, int(bbox[1]))
    edge = span >= 0.9 * height
    if not (~edge & (span > 0)).any():
        return []
    cap = float(np.percentile(span[~edge & (span > 0)], 90))
    glyph = (span >= tall * cap) & ~edge
    cols = np.nonzero(glyph)[0]
    if cols.size == 0:
        return []
    # the text's band, capitals' tops to descenders' bottoms; a shaft runs through its middle,
    # an underscore or a row of dots along its bottom belongs to the text
    lo, hi = float(np.percentile(top[glyph], 10)), float(np.percentile(bottom[glyph], 90))
    m0, m1 = lo + 0.2 * (hi - lo), hi - 0.2 * (hi - lo)
    empty = span <= 0
    mid = ~glyph & ~empty & ~edge & (top >= m0) & (bottom <= m1)
    # every gap between glyph columns; the line's reading has ``spaces`` word spaces, taken
    # as its widest gaps: a separator is also at least twice the median of the other word
    # spaces, so a justified paragraph's or a monospaced code line's even spaces split nothing
    gaps = [(int(a), int(b)) for a, b in zip(cols[:-1], cols[1:], strict=True) if b - a > 1]
    words = sorted((b - a - 1 for a, b in gaps), reverse=True)[:spaces] if spaces else []
    pieces: list[tuple[float, float]] = []
    start = int(cols[0])
    for prev, c in gaps:
        others = list(words)
        if c - prev - 1 in others:
            others.remove(c - prev - 1)
        wide = max(gap * cap, 2.0 * float(np.median(others))) if others else gap * cap
        if _separates(empty[prev + 1:c], mid[prev + 1:c], wide, max(shaft * cap, wide)):
            pieces.append((float(x0 + start), float(x0 + prev + 1)))
            start = c
    pieces.append((float(x0 + start), float(x0 + int(cols[-1]) + 1)))
    return pieces


def _separates(empty: np.ndarray, mid: np.ndarray, gap: float, shaft: float) -> bool:
    """Whether the columns between two glyph columns (``empty``: no ink; ``mid``: ink only
    mid-height) part two labels: an empty run at least ``gap`` wide, or a shaft, at least
    ``shaft`` columns inked mid-height with nothing else but the two columns at either end
    (a glyph's anti-aliased edge)."""
    if empty.size == 0:
        return False
    runs = np.diff(np.concatenate([[0], empty.astype(np.int8), [0]]))
    longest = int((np.nonzero(runs == -1)[0] - np.nonzero(runs == 1)[0]).max(initial=0))
    if longest >= gap:
        return True
    inner = slice(2, max(2, empty.size - 2))
    return bool(mid.sum() >= shaft and (empty | mid)[inner].all())


def split_wide_lines(
    image: np.ndarray,
    lines: list[TextBox],
    recognize: Recognizer,
    *,
    gap: float = 0.8,
    min_chars: int = 2,
    scale: float = 1.0,
) -> list[TextBox]:
    """``lines`` with every upright line of at least ``min_chars`` characters (spaces aside) that
    :func:`line_pieces` splits replaced by its pieces, each read again by ``recognize`` on its
    crop (the line's rows, the piece's columns plus a quarter of the line height either side,
    enlarged ``scale`` times as the OCR saw it); a piece read as nothing is dropped. Lines
    drawn turned, and lines that do not split, are returned unchanged, in order.

    >>> def fake(crops):
    ...     return [("left", 0.9) if c.shape[1] < 45 else ("right", 0.8) for c in crops]
    >>> img = np.full((30, 220, 3), 255, np.uint8)
    >>> for x in (10, 20, 30): img[8:22, x:x + 6] = 0
    >>> for x in (120, 130, 140, 150, 160): img[8:22, x:x + 6] = 0
    >>> out = split_wide_lines(img, [TextBox(0, "lef right", (0.0, 4.0, 220.0, 26.0), 0.7)], fake)
    >>> [(t.text, t.confidence, t.bbox) for t in out]
    [('left', 0.9, (10.0, 4.0, 36.0, 26.0)), ('right', 0.8, (120.0, 4.0, 166.0, 26.0))]
    """
    out: list[TextBox] = []
    for t in lines:
        if t.rotation or len(t.text.replace(" ", "")) < min_chars:
            out.append(t)
            continue
        pieces = line_pieces(image, t.bbox, gap=gap, spaces=t.text.count(" "))
        if len(pieces) < 2:
            out.append(t)
            continue
        pad = 0.25 * t.height
        crops = [upright_crop(image, (a - pad, t.bbox[1], b + pad, t.bbox[3]), 0, scale) for a, b in pieces]
        for (a, b), (text, conf) in zip(pieces, recognize(crops), strict=True):
            if text.strip():
                box = (a, t.bbox[1], b, t.bbox[3])
                out.append(replace(t, text=text, confidence=float(conf), bbox=box,
                                   polygon=((a, box[1]), (b, box[1]), (b, box[3]), (a, box[3]))))
    return out
