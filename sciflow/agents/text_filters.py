"""Step 2 of the Text Spotter: which of the OCR output is text (see :mod:`sciflow.agents.text_spotter`).

Arrow glyphs read as text are stripped or dropped (:func:`clean_text`), Latin diacritics are
folded (:func:`fold_latin_diacritics`), and a text of at most two characters whose box a stroke
crosses (:func:`_touches_stroke`) is an arrowhead read as a letter unless it sits centred in a
drawn outline (:func:`enclosed`).
"""

from __future__ import annotations

import re
import unicodedata

import cv2
import numpy as np

from sciflow.agents.diagram import BBox

_ARROW_CHARS = "→←↑↓⇒⇐⟶⟵➔➜➝➞►▶◄◀▸▹»«-—–−>|_=~<·•"
_ONLY_ARROWS = re.compile(f"^[\\s{re.escape(_ARROW_CHARS)}]*$")
_EDGE_ARROWS = re.compile(
    f"^(?:[{re.escape('→←↑↓⇒⇐⟶⟵➔➜➝➞►▶◄◀▸▹»«—–−')}]|->|<-|=>)+\\s*"
    f"|\\s*(?:[{re.escape('→←↑↓⇒⇐⟶⟵➔➜➝➞►▶◄◀▸▹»«—–−')}]|->|<-|=>)+$"
)


#: a run of dots at a text's start (two dots at least, or an ellipsis character)
_DOTS = re.compile(r"^(?:…|\.{2,}|·{2,})[.…·]*\s*")

#: Single characters that OCR reports for arrowheads and line ends.
_GLYPH_LETTERS = frozenset("VvΛ∧∨^AYTIl|17LJ")


def fold_latin_diacritics(text: str) -> str:
    """Fold Latin letters with combining marks to their base letter and expand Latin
    ligatures; everything else (Greek, math symbols, superscripts) is kept (module
    docstring, step 4)."""
    if text.isascii():
        return text
    out: list[str] = []
    for ch in unicodedata.normalize("NFC", text):
        if ch.isascii():
            out.append(ch)
            continue
        name = unicodedata.name(ch, "")
        if name.startswith("LATIN") and "LIGATURE" in name:
            out.append(unicodedata.normalize("NFKC", ch))
        elif name.startswith("LATIN"):
            base = unicodedata.normalize("NFD", ch)
            # keep the base letter only when the rest are combining marks (a true decomposition)
            if len(base) > 1 and all(unicodedata.combining(c) for c in base[1:]):
                out.append(base[0])
            else:
                out.append(ch)
        elif unicodedata.combining(ch) and out and out[-1].isascii() and out[-1].isalpha():
            continue  # a stray combining mark NFC could not compose onto a Latin letter
        else:
            out.append(ch)
    return "".join(out)


def fold_label(text: str) -> str:
    """A label compared as a label: lower case, runs of white space as one space.

    >>> fold_label("  Stage   2 ")
    'stage 2'
    """
    return " ".join(text.lower().split())


def clean_text(text: str, keep_letters: bool = False) -> str:
    """Strip arrow glyphs from both ends and collapse whitespace; '' if nothing remains.
    A text that is a single arrowhead-like character (``V v ^ A Y T I l | 1 7 L J``) is
    dropped too, unless ``keep_letters`` (text read where no arrowhead can be).

    >>> clean_text("-> Decoder"), clean_text("-weights-"), clean_text("-log p")
    ('Decoder', 'weights', '-log p')
    >>> clean_text("…context……"), clean_text("..state.."), clean_text("x1 …"), clean_text("...")
    ('context', 'state', 'x1 …', '...')
    >>> clean_text("v"), clean_text("v", keep_letters=True)
    ('', 'v')
    """
    t = " ".join(text.split())
    if _ONLY_ARROWS.match(t) or (t in _GLYPH_LETTERS and not keep_letters):
        return ""
    prev = None
    while prev != t:
        prev = t
        t = _EDGE_ARROWS.sub("", t).strip()
        # a line running through a label on both sides is read as hyphens at both ends
        # (``-weights-``); one hyphen alone may be the label's own (``-log p``)
        if len(t) > 2 and t[0] == "-" and t[-1] == "-":
            t = t.strip("-").strip()
        # a dotted line through a label is read as runs of dots or ellipses at both ends
        # (``…context……``); a label's own ellipsis stays at one end (``x1 …``)
        lead, trail = _DOTS.match(t), _DOTS.search(t[::-1])
        if lead and trail and lead.end() + trail.end() < len(t):
            t = t[lead.end() : len(t) - trail.end()].strip()
    return t


def glyph_span(image: np.ndarray, bbox: BBox, thr: int = 60, tall: float = 0.5) -> BBox:
    """``bbox`` (an upright line's box) cut at the left and right to its glyphs: the columns
    whose ink (max channel difference from the box's median colour over ``thr``) spans at
    least ``tall`` x the 90th percentile of the inked columns' spans (the capitals' and
    ascenders' height; a lower-case letter is about 0.7 of it). A line's dots, dashes or
    arrow characters read into the text at its ends are short. Unchanged when no column is
    inked.

    >>> img = np.full((20, 60, 3), 255, np.uint8)
    >>> img[10:12, 0:60:4] = 0                       # a dotted line through the box ...
    >>> img[4:16, 24:27] = 0; img[7:16, 32:35] = 0   # ... a capital and a small letter on it
    >>> glyph_span(img, (0.0, 2.0, 60.0, 18.0))
    (24.0, 2.0, 35.0, 18.0)
    """
    cs = column_spans(image, bbox, thr)
    if cs is None:
        return bbox
    x0, top, bottom = cs
    span = bottom - top + 1
    if not (span > 0).any():
        return bbox
    cols = np.nonzero(span >= tall * float(np.percentile(span[span > 0], 90)))[0]
    return (float(x0 + cols[0]), bbox[1], float(x0 + cols[-1] + 1), bbox[3])


def column_spans(image: np.ndarray, bbox: BBox, thr: int = 60) -> tuple[int, np.ndarray, np.ndarray] | None:
    """``(x0, top, bottom)`` for the box ``bbox`` clipped to the image: its first column and,
    per column, the first and last row (from the box's top) holding ink, i.e. a max channel
    difference from the box's median colour over ``thr`` (``top`` is the box height and
    ``bottom`` -1 where a column holds none); None for a box under 2 px either way.

    >>> img = np.full((10, 6, 3), 255, np.uint8); img[3:7, 2] = 0
    >>> x0, top, bottom = column_spans(img, (1.0, 1.0, 5.0, 9.0))
    >>> x0, top.tolist(), bottom.tolist()
    (1, [8, 2, 8, 8], [-1, 5, -1, -1])
    """
    h, w = image.shape[:2]
    x0, y0 = max(0, int(bbox[0])), max(0, int(bbox[1]))
    x1, y1 = min(w, int(np.ceil(bbox[2]))), min(h, int(np.ceil(bbox[3])))
    if x1 - x0 < 2 or y1 - y0 < 2:
        return None
    crop = image[y0:y1, x0:x1].astype(np.int16)
    ref = np.median(crop.reshape(-1, 3), axis=0)
    ink = np.abs(crop - ref).max(axis=2) > thr
    rows = np.arange(y1 - y0)[:, None]
    return x0, np.where(ink, rows, y1 - y0).min(axis=0), np.where(ink, rows, -1).max(axis=0)


def _touches_stroke(image: np.ndarray, bbox: BBox, pad: int = 2, thr: int = 60) -> bool:
    """True when ink crosses the ring just outside ``bbox`` (a stroke runs into the box):
    at least 2 ring pixels differ from the ring's median colour by more than ``thr``."""
    h, w = image.shape[:2]
    x0, y0 = max(0, int(bbox[0]) - pad), max(0, int(bbox[1]) - pad)
    x1, y1 = min(w - 1, int(np.ceil(bbox[2])) + pad), min(h - 1, int(np.ceil(bbox[3])) + pad)
    if x1 <= x0 or y1 <= y0:
        return False
    ring = np.concatenate(
        [image[y0, x0 : x1 + 1], image[y1, x0 : x1 + 1], image[y0 : y1 + 1, x0], image[y0 : y1 + 1, x1]]
    )
    med = np.median(ring, axis=0)
    dev = np.abs(ring.astype(np.int16) - med.astype(np.int16)).max(axis=1)
    return int((dev > thr).sum()) >= 2


def enclosed(image: np.ndarray, bbox: BBox, thr: int = 60, reach: float = 2.0) -> bool:
    """True when the text in box ``bbox`` sits inside a drawn outline. The glyphs are the ink
    pieces (pixels differing by more than ``thr`` from the box's median colour) inside the box
    that do not touch its border (an OCR box often takes in the outline or the stroke next to
    it); going out from the glyphs' bounding box along its middle row and column, ink is met on
    all four sides within ``reach`` box heights, and the two gaps of each pair differ by at
    most 3x + 3 px (the text is centred in its shape). A short label in a tight box (``x``,
    ``W1``) is enclosed; an arrowhead read as a letter is part of a stroke that leaves the box,
    so it has no glyph of its own.

    >>> img = np.full((60, 60, 3), 255, np.uint8)
    >>> img[15, 15:45] = img[45, 15:45] = img[15:46, 15] = img[15:46, 44] = 0   # a box
    >>> img[27:33, 28:32] = 0                                                    # a glyph
    >>> enclosed(img, (14.0, 14.0, 46.0, 46.0)), enclosed(img, (25.0, 24.0, 35.0, 36.0))
    (True, True)
    >>> img[15, 15:45] = img[45, 15:45] = 255                                    # top and bottom gone
    >>> enclosed(img, (25.0, 24.0, 35.0, 36.0))
    False
    """
    h, w = image.shape[:2]
    x0, y0, x1, y1 = (int(round(v)) for v in bbox)
    x0, y0, x1, y1 = max(0, x0), max(0, y0), min(w, x1), min(h, y1)
    if x1 - x0 < 3 or y1 - y0 < 3:
        return False
    crop = image[y0:y1, x0:x1]
    ref = np.median(crop.reshape(-1, 3), axis=0).astype(np.int16)
    ink = (np.abs(crop.astype(np.int16) - ref).max(axis=2) > thr).astype(np.uint8)
    n, lab, st, _ = cv2.connectedComponentsWithStats(ink, connectivity=8)
    inner = [i for i in range(1, n) if st[i, 0] > 0 and st[i, 1] > 0
             and st[i, 0] + st[i, 2] < ink.shape[1] and st[i, 1] + st[i, 3] < ink.shape[0]]
    if not inner:
        return False
    gx0 = x0 + min(int(st[i, 0]) for i in inner)
    gy0 = y0 + min(int(st[i, 1]) for i in inner)
    gx1 = x0 + max(int(st[i, 0] + st[i, 2]) for i in inner)
    gy1 = y0 + max(int(st[i, 1] + st[i, 3]) for i in inner)
    far = int(max(3, reach * (y1 - y0)))
    cx, cy = (gx0 + gx1) // 2, (gy0 + gy1) // 2

    def gap(line: np.ndarray) -> int | None:
        dev = np.abs(line.astype(np.int16) - ref).max(axis=1) > thr
        hit = np.flatnonzero(dev)
        return int(hit[0]) if hit.size else None

    gaps = [
        gap(image[cy, max(0, gx0 - far) : gx0][::-1]),
        gap(image[cy, gx1 : min(w, gx1 + far)]),
        gap(image[max(0, gy0 - far) : gy0, cx][::-1]),
        gap(image[gy1 : min(h, gy1 + far), cx]),
    ]
    if any(g is None for g in gaps):
        return False
    a, b, c, d = gaps  # type: ignore[misc]
    return max(a, b) <= 3 * min(a, b) + 3 and max(c, d) <= 3 * min(c, d) + 3


def symbol_reading(text: str) -> bool:
    """Whether an OCR reading may be a drawn operator symbol misread: one character that is
    not an ASCII letter or digit. The recogniser's dictionary has no ``⊕`` or ``⊗`` and
    reads them as the nearest glyph it knows (``④``, ``田``, ``+``); a letter stays a letter.

    >>> [symbol_reading(t) for t in ("④", " ⊕ ", "+", "x", "7", "W1", "θ")]
    [True, True, True, False, False, False, True]
    """
    t = text.strip()
    return len(t) == 1 and not (t.isascii() and t.isalnum())


def ruled_apart(image: np.ndarray, a: BBox, b: BBox, thr: int = 60, cover: float = 0.9) -> bool:
    """True when a drawn line runs between text boxes ``a`` and ``b`` across their whole shared
    extent: side by side, a column of the gap between them is ink over ``cover`` of the rows
    both boxes span; one above the other, a row of the gap is ink over ``cover`` of the shared
    columns; or that row or column is a dashed line (:func:`dashed_run`). Ink differs by more
    than ``thr`` from the median colour of the two boxes. Two words on either side of a box's
    edge, above and below a box's inner rule, or a panel's title and the title of the dashed
    container just under it, are then not one label (the grouping of step 3 would join them
    by distance alone).

    >>> img = np.full((40, 100, 3), 255, np.uint8)
    >>> a, b = (10, 10, 40, 30), (46, 10, 80, 30)
    >>> ruled_apart(img, a, b)
    False
    >>> img[0:40, 43] = 0   # a box edge between the words
    >>> ruled_apart(img, a, b)
    True
    >>> img = np.full((60, 120, 3), 255, np.uint8)
    >>> img[29, [x for x in range(120) if (x // 6) % 2 == 0]] = 0  # a dashed frame
    >>> ruled_apart(img, (10, 5, 110, 25), (10, 34, 110, 54))
    True
    """
    h, w = image.shape[:2]
    iy0, iy1 = max(a[1], b[1]), min(a[3], b[3])
    ix0, ix1 = max(a[0], b[0]), min(a[2], b[2])
    if iy1 - iy0 >= 1 and ix1 <= ix0:  # side by side: the gap is ix1 .. ix0
        x0, x1, y0, y1, axis = ix1, ix0, iy0, iy1, 0
    elif ix1 - ix0 >= 1 and iy1 <= iy0:  # one above the other
        x0, x1, y0, y1, axis = ix0, ix1, iy1, iy0, 1
    else:
        return False
    X0, X1 = max(0, int(np.floor(x0))), min(w, int(np.ceil(x1)))
    Y0, Y1 = max(0, int(np.floor(y0))), min(h, int(np.ceil(y1)))
    if X1 <= X0 or Y1 <= Y0:
        return False
    boxes = [image[max(0, int(r[1])):int(np.ceil(r[3])), max(0, int(r[0])):int(np.ceil(r[2]))].reshape(-1, 3)
             for r in (a, b)]
    ref = np.median(np.concatenate(boxes), axis=0).astype(np.int16)
    gap = np.abs(image[Y0:Y1, X0:X1].astype(np.int16) - ref).max(axis=2) > thr
    if (gap.mean(axis=axis) >= cover).any():
        return True
    rules = gap if axis == 1 else gap.T  # one row per line running along the gap
    return any(dashed_run(r) for r in rules)


def dashed_run(row: np.ndarray, min_dashes: int = 4, min_cover: float = 0.35) -> bool:
    """Whether the boolean ``row`` is a dashed line across its length: at least
    ``min_dashes`` ink runs of 2 px or more covering ``min_cover`` of it, as evenly spaced as
    a dash pattern (no gap between runs wider than twice the median run plus 4 px) and
    reaching both ends (the first and last runs within that gap of the ends). Text never lies
    on such a row in the gap between two OCR boxes, which are padded around their glyphs.

    >>> dashed_run(np.array([(x // 5) % 2 == 0 for x in range(60)]))
    True
    >>> dashed_run(np.array([x < 12 or 48 <= x < 52 for x in range(60)]))   # two marks
    False
    """
    ink = np.concatenate([[False], row.astype(bool), [False]])
    d = np.diff(ink.astype(np.int8))
    starts, ends = np.nonzero(d == 1)[0], np.nonzero(d == -1)[0]
    keep = ends - starts >= 2
    starts, ends = starts[keep], ends[keep]
    if len(starts) < min_dashes or (ends - starts).sum() < min_cover * len(row):
        return False
    limit = 2 * float(np.median(ends - starts)) + 4
    gaps = np.concatenate([[starts[0]], starts[1:] - ends[:-1], [len(row) - ends[-1]]])
    return bool(gaps.max() <= limit)
