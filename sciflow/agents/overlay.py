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
