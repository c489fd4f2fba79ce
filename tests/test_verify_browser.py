"""The verification page in a real headless Chromium (Debian's /usr/bin/chromium, driven by Playwright).

Load an item, exclude a node (and with it its edges), add a node by drawing its box, link it,
save, reload and check the page, the saved graph and the audit log; then the next item, a link
between inherited nodes, a rejected duplicate link, and the agreement of both items.

Set SCIFLOW_SCREENSHOTS=DIR to keep the screenshots taken on the way.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from sciflow.format.graph import DiagramGraph
from sciflow.verify.agreement import Counts, agreement
from sciflow.verify.sample import write_sample_items
from sciflow.verify.server import BackgroundServer, create_app
from sciflow.verify.store import read_log

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(), reason=f"{CHROMIUM} not found: install Debian's chromium (apt-get install chromium)"
)
sync_api = pytest.importorskip("playwright.sync_api", reason="playwright (the Python package) is not installed")

AUTO_BLUE = "rgb(31, 95, 191)"
ADDED_MAGENTA = "rgb(194, 24, 155)"


@pytest.fixture
def env(tmp_path: Path) -> Iterator[dict]:
    figs, out = tmp_path / "figs", tmp_path / "verified"
    write_sample_items(figs)
    with BackgroundServer(create_app(figs, out, annotator="alice")) as srv, sync_api.sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page(viewport={"width": 1400, "height": 850})
        page.set_default_timeout(15_000)
        problems: list[str] = []
        outside: list[str] = []

        def only_local(route) -> None:  # the page must work offline: nothing but this server
            if route.request.url.startswith(srv.url) or route.request.url.startswith("data:"):
                route.continue_()
            else:
                outside.append(route.request.url)
                route.abort()

        page.route("**/*", only_local)
        page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
        page.on(
            "console",
            lambda m: (
                problems.append(f"console {m.type}: {m.text}")
                if m.type == "error" and "status of 400" not in m.text
                else None
            ),
        )
        yield {"page": page, "srv": srv, "out": out, "problems": problems, "outside": outside, "tmp": tmp_path}
        browser.close()


def shot(env: dict, name: str) -> Path:
    path = env["tmp"] / f"{name}.png"
    env["page"].screenshot(path=str(path), full_page=False)
    keep = os.environ.get("SCIFLOW_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        shutil.copy(path, Path(keep) / path.name)
    return path


def open_item(page, item: str) -> None:
    page.wait_for_selector(f'body[data-loaded="{item}"]')


def classes(page, selector: str) -> list[str]:
    return page.eval_on_selector(selector, "el => [...el.classList]")


def cy_classes(page, cy_id: str) -> list[str]:
    return page.evaluate("id => window.sciflowVerify.cy.getElementById(id).classes()", cy_id)


def drag_box(page, box: list[float]) -> None:
    """Drag on the figure from image pixel (x0, y0) to (x1, y1)."""
    img = page.locator("#figure")
    bb = img.bounding_box()
    natural = page.evaluate("document.querySelector('#figure').naturalWidth")
    s = bb["width"] / natural
    x0, y0, x1, y1 = box
    page.mouse.move(bb["x"] + x0 * s, bb["y"] + y0 * s)
    page.mouse.down()
    page.mouse.move(bb["x"] + (x0 + x1) / 2 * s, bb["y"] + (y0 + y1) / 2 * s, steps=4)
    page.mouse.move(bb["x"] + x1 * s, bb["y"] + y1 * s, steps=4)
    page.mouse.up()


def test_verify_an_item_end_to_end(env: dict) -> None:
    page, srv, out = env["page"], env["srv"], env["out"]
    page.goto(srv.url)
    open_item(page, "encoder_decoder")

    # everything extracted starts included, blue, in both views
    assert page.locator("#overlay rect.node").count() == 5
    assert page.evaluate("window.sciflowVerify.cy.nodes().length") == 5
    assert page.evaluate("window.sciflowVerify.cy.edges().length") == 4
    assert page.eval_on_selector('#overlay rect.node[data-id="c"]', "r => getComputedStyle(r).stroke") == AUTO_BLUE
    assert page.locator("#progress").inner_text() == "0 / 2 saved"

    # hovering a box highlights the node in the graph and its row; and back from the list
    page.hover('#overlay rect.node[data-id="c"]')
    assert "hover" in cy_classes(page, "n:c")
    assert "hover" in classes(page, 'tr[data-kind="node"][data-id="c"]')
    page.hover('tr[data-kind="edge"][data-id="b->c"]')
    assert "hover" in cy_classes(page, "e:b->c")
    assert "endpoint" in classes(page, '#overlay rect.node[data-id="b"]')
    assert page.locator("#overlay line.edge").count() == 1

    # select/exclude: the hallucinated "Noise" box and, with it, its edge
    page.click('#overlay rect.node[data-id="x"]')
    assert "selected" in classes(page, '#overlay rect.node[data-id="x"]')
    assert "sel" in cy_classes(page, "n:x")
    page.keyboard.press("x")
    page.wait_for_selector('tr[data-kind="node"][data-id="x"].excluded')
    assert "excluded" in classes(page, 'tr[data-kind="edge"][data-id="x->c"]')
    assert "excluded" in cy_classes(page, "n:x") and "excluded" in cy_classes(page, "e:x->c")
    assert "excluded" in classes(page, '#overlay rect.node[data-id="x"]')
    assert "excluded 1 " not in page.locator("#message").inner_text()
    assert "with 1 edge" in page.locator("#message").inner_text()

    # add node: draw the box of the missing "Loss" component and type its label
    page.keyboard.press("a")
    assert "active" in classes(page, '.modes button[data-mode="add"]')
    drag_box(page, [380, 240, 510, 290])
    page.wait_for_selector("#add-form:not([hidden])")
    page.fill("#add-label", "Loss")
    page.keyboard.press("Enter")
    page.wait_for_selector('tr[data-kind="node"][data-id="h1"].added')
    rect = '#overlay rect.node[data-id="h1"]'
    assert "selected" in classes(page, rect)  # the new node is selected (orange) ...
    page.keyboard.press("Escape")
    assert "selected" not in classes(page, rect)  # ... and magenta otherwise
    assert page.eval_on_selector(rect, "r => getComputedStyle(r).stroke") == ADDED_MAGENTA
    x, y, w, h = (float(page.get_attribute(rect, a)) for a in ("x", "y", "width", "height"))
    assert abs(x - 380) < 3 and abs(y - 240) < 3 and abs(x + w - 510) < 3 and abs(y + h - 290) < 3

    # link nodes: Decoder -> Loss
    page.keyboard.press("l")
    page.click('#overlay rect.node[data-id="c"]')
    assert "link-source" in classes(page, '#overlay rect.node[data-id="c"]')
    page.click('#overlay rect.node[data-id="h1"]')
    page.wait_for_selector('tr[data-kind="edge"][data-id="c->h1"].added')
    assert "added" in cy_classes(page, "e:c->h1")
    assert "unsaved" in page.locator("#save-state").inner_text()
    page.mouse.move(5, 840)
    shot(env, "verify-edited")

    # save (Ctrl+S), then check the files
    page.keyboard.press("Control+s")
    page.wait_for_selector("#save-state.saved-flag")
    assert page.locator("#progress").inner_text() == "1 / 2 saved"
    saved = DiagramGraph.load(out / "encoder_decoder.json")
    assert [n.id for n in saved.nodes] == ["a", "b", "c", "d", "h1"]
    assert saved.node("h1").label == "Loss" and saved.node("c").label == "Decoder"
    assert [(e.source, e.target) for e in saved.edges] == [("a", "b"), ("b", "c"), ("c", "d"), ("c", "h1")]
    log = read_log(out / "encoder_decoder.log.jsonl")
    assert [(e["action"], e["element"]) for e in log] == [
        ("load", None),
        ("exclude_node", "x"),
        ("add_node", "h1"),
        ("add_edge", "c->h1"),
        ("save", None),
    ]
    assert all(e["annotator"] == "alice" and e["item"] == "encoder_decoder" for e in log)
    assert log[1]["cascade"] == ["x->c"] and log[2]["after"]["label"] == "Loss"

    # reload: the page resumes where it was
    page.reload()
    open_item(page, "encoder_decoder")
    assert "excluded" in classes(page, 'tr[data-kind="node"][data-id="x"]')
    assert "excluded" in classes(page, 'tr[data-kind="edge"][data-id="x->c"]')
    assert "added" in classes(page, '#overlay rect.node[data-id="h1"]')
    assert page.evaluate("window.sciflowVerify.cy.getElementById('e:c->h1').length") == 1
    assert page.locator("#save-state").inner_text() == "✓ saved"
    assert page.locator("#progress").inner_text() == "1 / 2 saved"
    assert read_log(out / "encoder_decoder.log.jsonl")[-1]["action"] == "open"

    # next item (N): exclude a reversed edge from its row, link the arrow the right way round
    page.keyboard.press("n")
    open_item(page, "retrieval")
    page.click('tr[data-kind="edge"][data-id="r->db"]')
    page.keyboard.press("Delete")
    page.wait_for_selector('tr[data-kind="edge"][data-id="r->db"].excluded')
    page.keyboard.press("l")
    page.click('#overlay rect.node[data-id="q"]')
    page.click('#overlay rect.node[data-id="r"]')  # q -> r exists already: refused, and said so
    page.wait_for_selector("#message.error")
    assert "already exists" in page.locator("#message").inner_text()
    page.click('#overlay rect.node[data-id="db"]')
    page.click('#overlay rect.node[data-id="r"]')
    page.wait_for_selector('tr[data-kind="edge"][data-id="db->r"].added')
    page.mouse.move(5, 840)
    shot(env, "verify-second-item")
    page.click("#save")
    page.wait_for_selector("#save-state.saved-flag")
    assert page.locator("#progress").inner_text() == "2 / 2 saved"
    page.keyboard.press("p")
    open_item(page, "encoder_decoder")

    rep = agreement(out)
    by = {i.item: i for i in rep.items}
    assert by["encoder_decoder"].nodes == Counts(tp=4, fp=1, fn=1)
    assert by["encoder_decoder"].edges == Counts(tp=3, fp=1, fn=1)
    assert by["retrieval"].nodes == Counts(tp=4) and by["retrieval"].edges == Counts(tp=2, fp=1, fn=1)
    assert rep.nodes == Counts(tp=8, fp=1, fn=1) and rep.edges == Counts(tp=5, fp=2, fn=2)

    assert env["outside"] == [], "the page asked for something outside the local server"
    assert env["problems"] == []
