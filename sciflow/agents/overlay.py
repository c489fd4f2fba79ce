"""Drawing helpers for the agents' debug overlays (``--debug-dir``).

Each agent draws what it added to a :class:`~sciflow.agents.diagram.Diagram` with its own
``draw_overlay(diagram, canvas)`` method, on the faded copy of the image that :func:`faded`
returns; the pipeline only calls that method, so adding an agent never edits the pipeline.
"""

from __future__ import annotations

from typing import Any

import cv2
import numpy as np

PALETTE = [(230, 25, 75), (60, 180, 75), (0, 130, 200), (245, 130, 48), (145, 30, 180), (70, 240, 240)]
RED, GREEN, BLUE, ORANGE, PURPLE = PALETTE[0], PALETTE[1], PALETTE[2], PALETTE[3], PALETTE[4]
GREY, BLACK = (160, 160, 160), (0, 0, 0)


def faded(image: np.ndarray) -> np.ndarray:
    """An RGB copy of ``image`` blended towards white, to draw evidence on."""
    return (image.astype(np.float32) * 0.45 + 255 * 0.55).astype(np.uint8).copy()


def box(canvas: np.ndarray, b: Any, color: tuple[int, int, int], th: int = 1) -> None:
    """Outline the box ``(x0, y0, x1, y1)``."""
    cv2.rectangle(canvas, (int(b[0]), int(b[1])), (int(b[2]), int(b[3])), color, th)


def text(canvas: np.ndarray, s: str, x: float, y: float, color: tuple[int, int, int]) -> None:
    """Write ``s`` (ASCII, first 40 characters) with its baseline at ``(x, y)``."""
    cv2.putText(canvas, s.encode("ascii", "replace").decode()[:40], (int(x), int(max(10, y))),
                cv2.FONT_HERSHEY_SIMPLEX, 0.4, color, 1, cv2.LINE_AA)


def centre_arrow(canvas: np.ndarray, a: Any, b: Any, color: tuple[int, int, int]) -> None:
    """An arrow from the centre of box ``a`` to the centre of box ``b``."""
    pa = (int((a[0] + a[2]) / 2), int((a[1] + a[3]) / 2))
    pb = (int((b[0] + b[2]) / 2), int((b[1] + b[3]) / 2))
    cv2.arrowedLine(canvas, pa, pb, color, 2, tipLength=0.05)


#: height of the title band :func:`framed` adds above an overlay
TITLE_BAND = 34


def framed(canvas: np.ndarray, title: str, legend: tuple[tuple[str, tuple[int, int, int]], ...] = ()) -> np.ndarray:
    """``canvas`` with a white band on top holding ``title`` and, after it, one colour swatch
    per ``(meaning, colour)`` of ``legend``; the drawing itself is unchanged below the band
    (so coordinates in it are the working image's plus :data:`TITLE_BAND` in y).

    >>> out = framed(np.zeros((10, 400, 3), np.uint8), "step 1: text_spotter", (("OCR line", BLUE),))
    >>> out.shape
    (44, 400, 3)
    """
    h, w = canvas.shape[:2]
    band = np.full((TITLE_BAND, w, 3), 255, np.uint8)
    cv2.putText(band, title.encode("ascii", "replace").decode()[:80], (6, 14), cv2.FONT_HERSHEY_SIMPLEX, 0.45,
                BLACK, 1, cv2.LINE_AA)
    x = 6
    for meaning, color in legend:
        if x > w - 40:
            break
        cv2.rectangle(band, (x, 20), (x + 12, 30), color, -1)
        label = meaning.encode("ascii", "replace").decode()[:60]
        cv2.putText(band, label, (x + 16, 29), cv2.FONT_HERSHEY_SIMPLEX, 0.38, BLACK, 1, cv2.LINE_AA)
        x += 24 + cv2.getTextSize(label, cv2.FONT_HERSHEY_SIMPLEX, 0.38, 1)[0][0]
    return np.vstack([band, canvas])
