"""Where an arrow ends on a container's border (issue 17, cause 1; the annotation protocol of
the dev figures): an arrow from outside that ends on a titled container's border is an edge
to the container, named by its title, and the items listed inside it, which no arrow touches
one by one, are its content, not nodes; a line drawn inside a panel from its border (the
panel's input or output port) is no edge of the panel; a box drawn against the container's
side still takes the arrow that reaches it through the frame."""

from __future__ import annotations

from pathlib import Path

import pytest

from .drawing import Canvas, edges_by_label, font, labels

FIXTURES = Path(__file__).parent / "fixtures"


def _card(c: Canvas, title: str, items: list[str], x: int, y: int, w: int = 200, gap: int = 12
          ) -> tuple[int, int, int, int]:
    """A titled card listing ``items`` in small boxes under its title, the last ``gap`` px
    above the bottom border; returns its frame."""
    h = 38 + 44 * len(items) + gap
    c.d.rectangle((x, y, x + w, y + h), outline="#333333", width=2, fill="#eef3fb")
    c.d.text((x + w / 2, y + 22), title, font=font(20), fill="black", anchor="mm")
    for k, item in enumerate(items):
        top = y + 48 + 44 * k
        c.d.rectangle((x + 40, top, x + w - 40, top + 34), outline="#888888", width=1, fill="white")
        c.d.text((x + w / 2, top + 17), item, font=font(16), fill="black", anchor="mm")
    return x, y, x + w, y + h


@pytest.mark.parametrize("gap", [10, 16])
def test_arrows_to_and_from_a_titled_card_join_the_card_not_its_items(parser, gap):
    """``gap``: the padding between the card's border and its last item; the arrow ends on the
    border beside that item (the old tracer gave the end to the item within 2.5 text heights)."""
    c = Canvas(720, 420)
    c.box("Planner", 30, 40, w=150)
    _, _, _, bottom = _card(c, "Tools", ["search", "math", "llm"], 300, 40, gap=gap)
    c.box("Executor", 325, 340, w=150)
    c.arrow([(180, 65), (300, 65)])                      # Planner -> the card's left border
    c.arrow([(400, bottom), (400, 340)])                 # the card's bottom border -> Executor
    c.arrow([(475, 365), (620, 365), (620, 120), (500, 120)])  # Executor -> the card's right border
    g = parser(c.array()).graph
    assert labels(g) == {"planner", "tools", "executor"}
    assert edges_by_label(g) == {("planner", "tools"), ("tools", "executor"), ("executor", "tools")}


def test_a_container_whose_items_have_their_own_arrows_stays_a_group(parser):
    """An arrow to the container's border makes the container a node, but its items are
    joined one by one, so they are components, not content."""
    c = Canvas(760, 320)
    c.box("Input", 30, 130, w=120)
    c.d.rectangle((250, 60, 720, 280), outline="#333333", width=2)
    c.d.text((485, 85), "Encoder", font=font(20), fill="black", anchor="mm")
    c.box("Conv", 290, 150, w=140)
    c.box("Norm", 540, 150, w=140)
    c.arrow([(150, 155), (250, 155)])                    # Input -> the container's border
    c.arrow([(430, 175), (540, 175)])                    # Conv -> Norm inside
    g = parser(c.array()).graph
    assert labels(g) == {"input", "encoder", "conv", "norm"}
    assert edges_by_label(g) == {("input", "encoder"), ("conv", "norm")}


def test_lines_drawn_inward_from_a_panel_border_are_no_edges_of_the_panel(parser):
    """A detail panel's input enters from its left border and its output leaves through its
    right border: ports of the panel, not arrows to or from it (the old tracer kept both ends on
    the titled panel and made it a node)."""
    c = Canvas(760, 300)
    c.d.rectangle((20, 20, 740, 280), outline="#333333", width=2)
    c.d.text((380, 45), "Tensor Field Network", font=font(20), fill="black", anchor="mm")
    c.box("Radial", 170, 130, w=140)
    c.box("Graph Conv", 450, 130, w=150)
    c.arrow([(21, 155), (170, 155)])                     # from the border, inward
    c.arrow([(310, 155), (450, 155)])
    c.arrow([(600, 155), (739, 155)])                    # out to the border from inside
    g = parser(c.array()).graph
    assert "tensor field network" not in labels(g)
    assert edges_by_label(g) == {("radial", "graph conv")}


def test_an_arrow_through_the_frame_to_a_box_against_the_side_reaches_the_box(parser):
    """A box drawn against the container's side: the arrow ends on both outlines at once and
    belongs to the box, as before."""
    c = Canvas(700, 300)
    c.box("Downsample", 20, 125, w=150)
    c.d.rectangle((260, 40, 680, 260), outline="#333333", width=2)
    c.d.text((470, 65), "Stage 3", font=font(20), fill="black", anchor="mm")
    c.box("Mixer", 260, 125, w=150)                      # its left side on the frame's
    c.box("MLP", 500, 125, w=140)
    c.arrow([(170, 150), (260, 150)])
    c.arrow([(410, 150), (500, 150)])
    g = parser(c.array()).graph
    assert edges_by_label(g) == {("downsample", "mixer"), ("mixer", "mlp")}
    assert "stage 3" not in labels(g)


def _dashed_frame(c: Canvas, x0: int, y0: int, x1: int, y1: int) -> None:
    c.line([(x0, y0), (x1, y0), (x1, y1), (x0, y1), (x0, y0)], dashed=True)


def test_an_arrow_between_two_stacked_dashed_stages_joins_the_stages(parser):
    """Two dashed training stages under a figure title, each listing its modules, and a short
    arrow from the first stage's bottom border to the second's top border (mm_mplug_owl's
    left half drawn again): the stages are the nodes, named by their titles, and the modules
    are their content. The figure title sits just above the first stage's dashed top border,
    which keeps the two titles apart (they were read as one label, and the stage untitled)."""
    c = Canvas(460, 560)
    c.text("Training Paradigm", 230, 16, size=22)
    for k, (title, rows) in enumerate((("Stage-1: Pre-training", ["Pre-trained LLM", "Visual Encoder"]),
                                       ("Stage-2: Instruction tuning", ["Pre-trained LLM", "Visual Encoder"]))):
        top = 34 + 262 * k
        _dashed_frame(c, 20, top, 440, top + 228)
        c.text(title, 230, top + 20, size=20)
        for j, row in enumerate(rows):
            y = top + 48 + 86 * j
            c.d.rectangle((40, y, 420, y + 68), fill="#cfe0f1")
            c.text(row, 230, y + 34)
    c.arrow([(230, 263), (230, 295)])
    g = parser(c.array()).graph
    assert labels(g) == {"stage-1: pre-training", "stage-2: instruction tuning"}
    assert edges_by_label(g) == {("stage-1: pre-training", "stage-2: instruction tuning")}


def test_arrows_converging_on_a_node_just_inside_a_titled_container_reach_the_node(parser):
    """``fixtures/mermaid_converging_heads.png``: Mermaid renderer (seed 1100065): three
    dotted and solid arrows cross the ``Fine-tuning`` subgraph's side and converge on
    ``Temporal Discriminator`` 20 px inside it, their heads side by side. The crossings' inner
    pieces merge into one and the outer pieces left over end on the frame: they go on to the
    node, which strokes touch there, and do not make the subgraph a node."""
    g = parser(str(FIXTURES / "mermaid_converging_heads.png")).graph
    assert "fine-tuning" not in labels(g)
    into = {a for a, b in edges_by_label(g) if b == "temporal discriminator"}
    assert into == {"audio refiner", "audio classifier", "motion embedding"}


def test_a_port_line_fanning_out_to_two_boxes_is_no_arrow_between_them(parser):
    """A detail panel's input enters at its left border and forks to two boxes, a head on each
    (se3's "Equivariant normalization" panel): the forked line's tail is the port, so neither
    box feeds the other. The port's end was given to the nearer box before (within 2.5 text
    heights), which read the fork as a double arrow between the two boxes."""
    c = Canvas(700, 330)
    c.d.rectangle((20, 20, 680, 310), outline="#333333", width=3)
    c.d.text((350, 45), "Equivariant normalization", font=font(20), fill="black", anchor="mm")
    c.box("L2 norm", 110, 80, w=130)
    c.box("phase", 110, 220, w=130)
    c.box("ReLU", 420, 80, w=130)
    c.line([(21, 175), (70, 175)])
    c.line([(70, 105), (70, 245)])
    c.arrow([(70, 105), (110, 105)])
    c.arrow([(70, 245), (110, 245)])
    c.arrow([(240, 105), (420, 105)])
    g = parser(c.array()).graph
    assert "equivariant normalization" not in labels(g)
    assert edges_by_label(g) == {("l2 norm", "relu")}
