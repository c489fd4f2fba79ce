"""Diagram generators: the models under evaluation, behind one small interface.

A generator receives a benchmark item (its canonical graph) and the prompt for it, and writes
one image. Users plug in their own text-to-image or text-to-code model by exposing a factory
in the ``sciflow.bench.generators`` entry-point group of their package::

    # pyproject.toml of the plug-in package
    [project.entry-points."sciflow.generators"]
    my-diffusion = "my_pkg.gen:make_generator"   # make_generator(**options) -> Generator

    # my_pkg/gen.py
    class DiffusionGenerator:
        name = "my-diffusion"
        def __init__(self, model="stabilityai/stable-diffusion-3-medium", steps=30, seed=0):
            from diffusers import DiffusionPipeline            # loaded once per run
            self.pipe = DiffusionPipeline.from_pretrained(model)
            self.steps, self.seed = steps, seed
        def describe(self):
            return {"model": "...", "steps": self.steps, "seed": self.seed}
        def generate(self, item, prompt, out_path):
            import torch
            g = torch.Generator().manual_seed(self.seed)
            self.pipe(prompt, num_inference_steps=self.steps, generator=g).images[0].save(out_path)
            return out_path

    def make_generator(**options):
        return DiffusionGenerator(**options)

Then ``sciflow generate my-diffusion --refs sciflow-bench-60@1 -o generated/my-diffusion/``.

Built in:

- ``graphviz``: the deterministic diagnostic reference: the canonical graph drawn in a
  paper-figure style (rounded boxes, groups as clusters, left-to-right or top-to-bottom by
  the layout hint), through :func:`sciflow.bench.drawing.render_graph`.
- ``perturbed``: the canonical graph with K controlled structural errors
  (:mod:`sciflow.bench.perturb`), optionally visually degraded, rendered the same way; the exact
  errors, their number as the damaged graph shows them (``realised``) and the damaged graph go
  to ``injected/<id>.json`` in the output folder.

:func:`run_generator` runs one over a folder of references with per-item errors and resume:
``generation.jsonl`` in the output folder records every item (ok or error, prompt SHA-256,
the generator's description); a rerun skips items whose image exists and whose record shows
the same prompt and generator.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from importlib.metadata import entry_points
from pathlib import Path
from typing import Any, Protocol

from PIL import Image

from sciflow.bench.perturb import DEGRADATIONS, degrade_image, differences, perturb_graph
from sciflow.bench.prompts import naive_prompt, structured_prompt
from sciflow.format.graph import DiagramGraph, GraphFormatError, load_graph

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "sciflow.generators"


class Generator(Protocol):
    name: str

    def describe(self) -> dict[str, Any]: ...

    def generate(self, item: DiagramGraph, prompt: str, out_path: Path) -> Path:
        """Write one image for ``item`` to ``out_path`` (a ``.png`` path) and return it."""


class GeneratorError(RuntimeError):
    """A generator that cannot be found or built."""


class GraphvizGenerator:
    """The canonical graph drawn by Graphviz in a paper-figure style (deterministic)."""

    name = "graphviz"

    def __init__(self, dpi: int = 144):
        self.dpi = dpi

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "dpi": self.dpi}

    def generate(self, item: DiagramGraph, prompt: str, out_path: Path) -> Path:
        from sciflow.bench.drawing import render_graph

        return render_graph(item, out_path, dpi=self.dpi)


class PerturbedGenerator:
    """K structural errors (seeded per item), then an optional visual degradation."""

    name = "perturbed"

    def __init__(self, severity: int = 1, seed: int = 0, degrade: str | None = None, dpi: int = 144):
        if degrade not in (None, "random", *DEGRADATIONS):
            raise GeneratorError(f"unknown degradation {degrade!r}; use one of {', '.join(DEGRADATIONS)} or random")
        self.severity, self.seed, self.degrade = severity, seed, degrade
        self.render = GraphvizGenerator(dpi)

    def describe(self) -> dict[str, Any]:
        return {"name": self.name, "severity": self.severity, "seed": self.seed, "degrade": self.degrade,
                "dpi": self.render.dpi}

    def item_seed(self, item: DiagramGraph) -> int:
        """The seed of ``item``'s errors: a hash of the generator's seed and the item id."""
        digest = hashlib.sha256(f"{self.seed}:{item.id}".encode()).hexdigest()
        return int(digest[:12], 16)

    def generate(self, item: DiagramGraph, prompt: str, out_path: Path) -> Path:
        seed = self.item_seed(item)
        bad, errors = perturb_graph(item, self.severity, seed)
        self.render.generate(bad, prompt, out_path)
        degradation = self.degrade
        if degradation == "random":
            degradation = DEGRADATIONS[seed % len(DEGRADATIONS)]
        if degradation:
            with Image.open(out_path) as im:
                degrade_image(im, degradation, seed).save(out_path)
        # "realised": the errors the damaged graph shows against the reference, recounted from
        # the two graphs (perturb_graph guarantees it equals the severity and len(errors)).
        realised = sum(differences(item, bad).values())
        record = {"item": item.id, "severity": self.severity, "seed": seed, "errors": errors,
                  "realised": realised, "degradation": degradation, "graph": bad.to_dict()}
        truth = out_path.parent / "injected"
        truth.mkdir(exist_ok=True)
        (truth / f"{out_path.stem}.json").write_text(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        return out_path


BUILTIN: dict[str, Callable[..., Generator]] = {
    "graphviz": GraphvizGenerator,
    "perturbed": PerturbedGenerator,
}


def available() -> dict[str, Callable[..., Generator]]:
    """Built-in generators plus those installed through the entry-point group."""
    found: dict[str, Callable[..., Generator]] = dict(BUILTIN)
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        if ep.name in found:
            log.warning("generator plug-in %r shadows a built-in; the built-in is kept", ep.name)
            continue
        found[ep.name] = ep.load
    return found


def get_generator(name: str, **options: Any) -> Generator:
    gens = available()
    if name not in gens:
        raise GeneratorError(f"unknown generator {name!r}; available: {', '.join(sorted(gens))}")
    factory = gens[name]
    if name not in BUILTIN:  # an entry point: load the factory, then build
        factory = factory()  # type: ignore[call-arg]
    try:
        return factory(**options)
    except TypeError as exc:
        raise GeneratorError(f"generator {name!r} rejected options {options}: {exc}") from exc


def build_prompt_text(item: DiagramGraph, style: str) -> str:
    if style == "structured":
        return structured_prompt(item)
    if style == "naive":
        return naive_prompt(item)
    raise ValueError(f"unknown prompt style {style!r} (structured or naive)")


@dataclass(frozen=True)
class GenerationOutcome:
    item_id: str
    image: Path | None
    status: str  # "ok" | "skipped" | "error"
    error: str | None = None


def run_generator(
    generator: Generator,
    refs_dir: str | Path,
    out_dir: str | Path,
    *,
    style: str = "structured",
    resume: bool = True,
    on_item: Callable[[GenerationOutcome], None] | None = None,
    on_start: Callable[[int], None] | None = None,
) -> list[GenerationOutcome]:
    """Run ``generator`` over every ``*.json`` reference in ``refs_dir`` (see module docstring)."""
    refs_dir, out_dir = Path(refs_dir), Path(out_dir)
    if not refs_dir.is_dir():
        raise GeneratorError(f"reference folder not found: {refs_dir}")
    out_dir.mkdir(parents=True, exist_ok=True)
    log_path = out_dir / "generation.jsonl"
    done: dict[str, dict[str, Any]] = {}
    if resume and log_path.is_file():
        for line in log_path.read_text(encoding="utf-8").splitlines():
            try:
                rec = json.loads(line)
            except json.JSONDecodeError:
                continue  # a line cut by a crash; that item is redone
            done[rec["id"]] = rec
    desc = generator.describe()
    refs = sorted(p for p in refs_dir.iterdir() if p.suffix.lower() == ".json" and p.is_file())
    if on_start:
        on_start(len(refs))
    outcomes = []
    with log_path.open("a", encoding="utf-8") as logf:
        for ref_path in refs:
            item_id = ref_path.stem
            image = out_dir / f"{item_id}.png"
            try:
                item = load_graph(ref_path)
                prompt = build_prompt_text(item, style)
            except (GraphFormatError, ValueError) as exc:
                outcome = GenerationOutcome(item_id, None, "error", str(exc))
            else:
                prompt_sha = hashlib.sha256(prompt.encode("utf-8")).hexdigest()
                prev = done.get(item_id)
                if (prev and prev.get("status") == "ok" and prev.get("prompt_sha256") == prompt_sha
                        and prev.get("generator") == desc and image.is_file()):
                    outcome = GenerationOutcome(item_id, image, "skipped")
                else:
                    try:
                        generator.generate(item, prompt, image)
                        outcome = GenerationOutcome(item_id, image, "ok")
                    except Exception as exc:  # a plug-in's failure is reported per item, never fatal
                        log.warning("generation failed for %s: %s", item_id, exc)
                        outcome = GenerationOutcome(item_id, None, "error", f"{type(exc).__name__}: {exc}")
                    logf.write(json.dumps({"id": item_id, "status": outcome.status, "error": outcome.error,
                                           "prompt_style": style, "prompt_sha256": prompt_sha,
                                           "generator": desc}) + "\n")
                    logf.flush()
            outcomes.append(outcome)
            if on_item:
                on_item(outcome)
    return outcomes
