"""The header of a text card: a box holding a title in a larger font above a body of text.

Papers draw prompts, code and documents as *cards*: a box with a bold title ("Original
Prompt") over a paragraph of smaller text (the prompt itself). The card is one component and
its name is the title; the body is content, as a container's items are (issue 17, "box
labelled by title plus body where the protocol wants the title").

What the image shows: the title's glyphs are clearly taller than the body's, the title lies
above every body line, and the body is a paragraph (several lines), not a one-line subtitle
such as "(ViT-L/14)" under "Image Encoder", which stays part of the name.
"""

from __future__ import annotations

import statistics

from sciflow.agents.diagram import TextBox

__all__ = ["card_header"]


def card_header(lines: list[TextBox], *, ratio: float = 1.35, min_body: int = 3) -> list[TextBox] | None:
    """The title lines of a text card, or None when ``lines`` are not a titled card.

    ``lines`` are the OCR lines inside one shape. Sorted top to bottom, the title is the
    longest run of leading lines whose glyph height (:attr:`TextBox.height`) is at least
    ``ratio`` x the median height of the remaining lines, when at least ``min_body`` lines
    remain and every title line ends above the top of every remaining line (a quarter of a
    body line's height of overlap allowed: OCR boxes are padded). Rotated lines are never a
    card (a turned label is read in its own frame).

    >>> t = lambda i, y, h: TextBox(i, f"line{i}", (0.0, y, 100.0, y + h), 0.9)
    >>> [b.text for b in card_header([t(0, 0, 30), t(1, 40, 18), t(2, 60, 18), t(3, 80, 18)])]
    ['line0']
    >>> card_header([t(0, 0, 30), t(1, 40, 18)]) is None   # a name with a one-line subtitle
    True
    >>> card_header([t(0, 0, 19), t(1, 40, 18), t(2, 60, 18), t(3, 80, 18)]) is None  # one font
    True
    """
    if len(lines) < min_body + 1 or any(t.rotation for t in lines):
        return None
    ordered = sorted(lines, key=lambda t: (t.bbox[1], t.bbox[0]))
    best: list[TextBox] | None = None
    for k in range(1, len(ordered) - min_body + 1):
        head, body = ordered[:k], ordered[k:]
        h_body = statistics.median(t.height for t in body)
        if min(t.height for t in head) < ratio * h_body:
            break
        top = min(t.bbox[1] for t in body)
        if max(t.bbox[3] for t in head) <= top + 0.25 * h_body:
            best = head
    return best
