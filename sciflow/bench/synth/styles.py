"""The synthetic styles by name, and writing items to a folder (``sciflow synth``).

A style is a module with ``generate(seed, **knobs) -> SynthDiagram`` (browser-drawn styles also
take ``browser=``) and, for the browser styles, ``KNOBS`` (the values each knob can take).
:func:`make_item` is the one place that dispatches on the style name.

Every written item is three files: ``<id>.png`` (the image), ``<id>.json`` (the canonical
graph, annotation protocol of the dev-data README) and ``<id>.elements.json``
(:func:`sciflow.bench.synth.common.elements_record`). Ids are ``<style>-<seed>``; a folder
is resumable: an item whose three files exist is not drawn again.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from PIL import Image

from sciflow.bench.synth.browser import BrowserUnavailable
from sciflow.bench.synth.common import SynthDiagram, elements_record

#: style name -> (module, draws in the browser)
STYLES: dict[str, tuple[str, bool]] = {
    "graphviz": ("sciflow.bench.synth.graphviz_render", False),
    "pillow": ("sciflow.bench.synth.pillow_render", False),
    "mermaid": ("sciflow.bench.synth.mermaid_render", True),
    "paper": ("sciflow.bench.synth.paper_render", True),
}


class StyleError(ValueError):
    """An unknown style or knob, or a knob value the style cannot take."""


def style_module(style: str) -> Any:
    if style not in STYLES:
        raise StyleError(f"unknown style {style!r}; known: {', '.join(STYLES)}")
    return importlib.import_module(STYLES[style][0])


def knobs_of(style: str) -> dict[str, list[Any]]:
    """The knobs a style can be forced with and their values ({} for styles without KNOBS)."""
    return dict(getattr(style_module(style), "KNOBS", {}))


def parse_knobs(style: str, pairs: list[str]) -> dict[str, str]:
    """``NAME=VALUE`` strings, checked against the style's knob names (values are converted by
    the style itself)."""
    known = knobs_of(style)
    out: dict[str, str] = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or not name:
            raise StyleError(f"--knob {pair!r}: expected NAME=VALUE")
        if not known:
            raise StyleError(f"style {style!r} has no knobs to force")
        if name not in known:
            raise StyleError(f"style {style!r} has no knob {name!r}; knobs: {', '.join(sorted(known))}")
        out[name] = value
    return out


def make_item(style: str, seed: int, browser: Any = None, knobs: Mapping[str, Any] | None = None) -> SynthDiagram:
    """One item of ``style`` drawn from ``seed`` (deterministic), with ``knobs`` forced."""
    module = style_module(style)
    kw = dict(knobs or {})
    if STYLES[style][1]:
        kw["browser"] = browser
    return module.generate(seed, **kw)


def item_id(style: str, seed: int) -> str:
    return f"{style}-{seed}"


def write_item(d: SynthDiagram, out_dir: Path, name: str) -> None:
    """Write the three files of one item (PNG, graph JSON, elements JSON)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    Image.fromarray(d.image).save(out_dir / f"{name}.png", optimize=False)
    d.graph.save(out_dir / f"{name}.json")
    (out_dir / f"{name}.elements.json").write_text(
        json.dumps(elements_record(d), indent=1, ensure_ascii=False, sort_keys=True) + "\n", "utf-8")


def is_written(out_dir: Path, name: str) -> bool:
    return all((out_dir / f"{name}{ext}").is_file() for ext in (".png", ".json", ".elements.json"))


@dataclass
class SynthOutcome:
    item: str
    status: str  # "written" | "kept" | "failed"
    error: str | None = None


def synth_items(
    style: str, n: int, out_dir: Path, seed: int = 0, knobs: Mapping[str, Any] | None = None,
    on_item: Callable[[SynthOutcome], None] | None = None,
) -> list[SynthOutcome]:
    """Draw items ``seed .. seed + n - 1`` of ``style`` into ``out_dir``; an item already there
    is kept; a failure is reported for its item and the rest go on."""
    style_module(style)  # unknown style: fail before any work
    browser = None
    outcomes: list[SynthOutcome] = []
    try:
        for k in range(n):
            name = item_id(style, seed + k)
            if is_written(out_dir, name):
                outcome = SynthOutcome(name, "kept")
            else:
                try:
                    if STYLES[style][1] and browser is None:
                        from sciflow.bench.synth.browser import Browser

                        browser = Browser()
                    write_item(make_item(style, seed + k, browser, knobs), out_dir, name)
                    outcome = SynthOutcome(name, "written")
                except (StyleError, BrowserUnavailable):
                    raise  # the same for every item: say it once
                except Exception as exc:  # noqa: BLE001 - one failed item never stops the batch
                    outcome = SynthOutcome(name, "failed", f"{type(exc).__name__}: {exc}")
            outcomes.append(outcome)
            if on_item:
                on_item(outcome)
    finally:
        if browser is not None:
            browser.close()
    return outcomes
