"""A box holding a title over a paragraph is named by its title (issue 17, "box labelled by
title plus body where the protocol wants the title")."""

from __future__ import annotations

import doctest

from sciflow.agents import card_header as card_header_module
from sciflow.agents.card_header import card_header
from sciflow.agents.diagram import TextBox

from .drawing import Canvas, edges_by_label, font, labels


def _line(i: int, y: float, h: float, text: str | None = None, rotation: int = 0) -> TextBox:
    return TextBox(i, text or f"line{i}", (10.0, y, 210.0, y + h), 0.9, rotation=rotation)


def test_a_title_over_a_paragraph_is_the_header():
    lines = [_line(0, 0, 28), _line(1, 36, 16), _line(2, 56, 16), _line(3, 76, 16)]
    assert [t.text for t in card_header(lines)] == ["line0"]
    # a two-line title in the big font is kept whole, and the order of the input is irrelevant
    two = [_line(3, 96, 16), _line(0, 0, 28), _line(2, 76, 16), _line(1, 32, 28), _line(4, 116, 16)]
    assert [t.text for t in card_header(two)] == ["line0", "line1"]


def test_no_header_without_a_paragraph_a_larger_font_or_upright_text():
    assert card_header([_line(0, 0, 28), _line(1, 36, 16)]) is None                  # name + subtitle
    assert card_header([_line(0, 0, 28), _line(1, 36, 16), _line(2, 56, 16)]) is None  # two body lines
    assert card_header([_line(i, 20 * i, 16) for i in range(5)]) is None           # one font
    assert card_header([_line(0, 0, 20), _line(1, 36, 16), _line(2, 56, 16), _line(3, 76, 16)]) is None
    # a bigger line at the bottom is not a title (nothing leads the card)
    assert card_header([_line(0, 0, 16), _line(1, 20, 16), _line(2, 40, 16), _line(3, 60, 28)]) is None
    # a tall line beside the body, not above it, is no title
    assert card_header([_line(0, 30, 28), _line(1, 36, 16), _line(2, 56, 16), _line(3, 76, 16)]) is None
    turned = [_line(0, 0, 28, rotation=90), _line(1, 36, 16), _line(2, 56, 16), _line(3, 76, 16)]
    assert card_header(turned) is None
    # the knobs: fewer body lines asked for, a lower ratio
    assert [t.text for t in card_header([_line(0, 0, 28), _line(1, 36, 16)], min_body=1)] == ["line0"]
    lines = [_line(0, 0, 20), _line(1, 36, 16), _line(2, 56, 16), _line(3, 76, 16)]
    assert [t.text for t in card_header(lines, ratio=1.2)] == ["line0"]


def _card(c: Canvas, title: str, body: list[str], x: int, y: int, w: int = 260, size: int = 24) -> None:
    h = 24 + size + 24 * len(body)
    c.d.rectangle((x, y, x + w, y + h), outline="black", width=2, fill="white")
    c.d.text((x + 12, y + 10), title, font=font(size), fill="black")
    for i, s in enumerate(body):
        c.d.text((x + 12, y + 18 + size + 22 * i), s, font=font(15), fill="black")
    c.boxes[title] = (x, y, x + w, y + h)


def test_a_prompt_card_is_named_by_its_title_and_a_subtitled_box_by_all_its_text(parser):
    c = Canvas(900, 260)
    _card(c, "Prompt", ["Answer the question below", "using the context given", "in at most two sentences"], 30, 40)
    c.d.rectangle((400, 70, 600, 150), outline="black", width=2, fill="white")
    c.d.text((500, 98), "Encoder", font=font(24), fill="black", anchor="mm")
    c.d.text((500, 128), "frozen weights", font=font(15), fill="black", anchor="mm")
    c.box("Answer", 700, 85, w=150)
    c.arrow([(290, 110), (400, 110)])
    c.arrow([(600, 110), (700, 110)])
    g = parser(c.array()).graph
    assert labels(g) == {"prompt", "encoder frozen weights", "answer"}
    assert edges_by_label(g) == {("prompt", "encoder frozen weights"), ("encoder frozen weights", "answer")}


def test_docstring_examples():
    assert doctest.testmod(card_header_module).failed == 0
