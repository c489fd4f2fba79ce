"""The critic in the loop: iterative rectification (SciGen-Verifier, Appendix D.2).

:func:`rectify` runs, for one benchmark item::

    step 0: candidate = generate(item, prompt)
    every step: graph  = the candidate's graph (a graph-aware generator or editor returns it;
                         otherwise the image is parsed), critique = critique(graph, item)
                stop when the critique passes, or after ``max_steps`` corrections;
                otherwise, when an editor is given and the edits are LOCAL, candidate = edit(...);
                else candidate = generate(item, prompt + the edit instructions)   (regenerate)

LOCAL (:func:`is_local`) is SciGen-Verifier's policy in graph terms: at most
``local_edit_limit`` (default 2, i.e. fewer than three) instructions, none of them a new or
split box needing more than two arrows (the graph analogue of a "global regeneration" keyword).

Every step records the image, the graph, the critique and the graph score; with an output
folder they are written as ``step00.png``/``step00.graph.json``/... and ``trajectory.json``.

Built-in pieces:

- :class:`GraphEditor` (``--editor graph``): the deterministic editor for candidates that come
  with a graph: :func:`~sciflow.critic.instructions.apply_instructions` on the graph, then a
  Graphviz re-render (:class:`sciflow.bench.generators.GraphvizGenerator`).
- :func:`graph_aware_generator`: ``graphviz`` returns the item's own graph with its render;
  ``perturbed`` returns the damaged graph it drew (the one it writes to ``injected/<id>.json``).
  The perturbed generator ignores prompts, so **regeneration is modelled as a fresh damaged
  sample**: the k-th regeneration of an item draws with generator seed ``seed + k`` and
  ``max(0, severity - decay * k)`` errors (``decay = 0``, the default, ignores the critique
  entirely: a regenerated sample is as bad as the first; ``decay = 1`` models a generator that
  honours one more correction per attempt). Any other generator name is a plain image
  generator: its images are parsed (:class:`sciflow.pipeline.Parser`).
"""

from __future__ import annotations

import json
import logging
import statistics
import tempfile
from collections.abc import Callable, Iterable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from sciflow.config import Config, MatchingConfig
from sciflow.critic.critique import Critique, CritiqueRule, critique_from_result
from sciflow.critic.instructions import Instruction, apply_instructions
from sciflow.format.graph import DiagramGraph, load_graph
from sciflow.metrics.graph_level import graph_level

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Candidate:
    """One attempt: its image (may be ``None`` for graph-only runs) and, when known, its graph."""

    image: Path | None = None
    graph: DiagramGraph | None = None


GenerateFn = Callable[[DiagramGraph, str, Path], "Candidate | Path | DiagramGraph"]
EditFn = Callable[[Candidate, Sequence[Instruction], Path], "Candidate | Path | DiagramGraph"]
ParseFn = Callable[[Path], DiagramGraph]


def _as_candidate(x: Candidate | Path | str | DiagramGraph) -> Candidate:
    if isinstance(x, Candidate):
        return x
    if isinstance(x, DiagramGraph):
        return Candidate(graph=x)
    return Candidate(image=Path(x))


def is_local(instructions: Sequence[Instruction], limit: int = 2) -> bool:
    """SciGen-Verifier's edit-or-regenerate test (see the module docstring)."""
    return 0 < len(instructions) <= limit and all(i.n_arrows <= 2 for i in instructions)


def regeneration_prompt(prompt: str, c: Critique) -> str:
    """The prompt with the critic's instructions appended."""
    lines = "\n".join(f"- {i.text}" for i in c.instructions)
    return f"{prompt}\n\nA reviewer found errors in the previous attempt. Apply these corrections:\n{lines}"


@dataclass
class StepRecord:
    step: int
    action: str  # "generate" | "edit" | "regenerate"
    image: str | None
    graph: str | None
    score: float
    passed: bool
    n_instructions: int
    critique: dict[str, Any]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class Trajectory:
    item_id: str
    steps: list[StepRecord] = field(default_factory=list)
    max_steps: int = 10

    @property
    def passed(self) -> bool:
        return bool(self.steps) and self.steps[-1].passed

    @property
    def n_steps(self) -> int:
        """Corrections made (edits + regenerations); 0 when the first attempt passed."""
        return max(0, len(self.steps) - 1)

    def to_dict(self) -> dict[str, Any]:
        return {"item": self.item_id, "passed": self.passed, "n_steps": self.n_steps, "max_steps": self.max_steps,
                "initial_score": self.steps[0].score if self.steps else None,
                "final_score": self.steps[-1].score if self.steps else None,
                "actions": [s.action for s in self.steps[1:]],
                "steps": [s.to_dict() for s in self.steps]}


def rectify(
    item: DiagramGraph,
    generate: GenerateFn,
    *,
    edit: EditFn | None = None,
    parse: ParseFn | None = None,
    prompt: str | None = None,
    rule: CritiqueRule | None = None,
    matching: MatchingConfig | None = None,
    embedder: Any = None,
    max_steps: int = 10,
    local_edit_limit: int | None = 2,
    out_dir: str | Path | None = None,
    render_images: bool = True,
) -> Trajectory:
    """Generate, critique against ``item``, and edit or regenerate until the critique passes.

    ``generate(item, prompt, out_path)`` and ``edit(candidate, instructions, out_path)`` return a
    :class:`Candidate`, an image path, or a graph. A candidate without a graph is parsed with
    ``parse`` (default: a :class:`sciflow.pipeline.Parser` built on first use). ``out_dir``: write
    the trajectory there (graph-only candidates are drawn with Graphviz when ``render_images``).
    ``local_edit_limit=None``: always edit when an editor is given.
    """
    from sciflow.bench.prompts import structured_prompt

    rule = rule or CritiqueRule()
    base_prompt = prompt if prompt is not None else structured_prompt(item)
    traj = Trajectory(item.id, max_steps=max_steps)
    tmp = None
    if out_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="sciflow-rectify-")
        folder = Path(tmp.name)
    else:
        folder = Path(out_dir)
        folder.mkdir(parents=True, exist_ok=True)
    parser_box: list[ParseFn] = []

    def graph_of(c: Candidate) -> DiagramGraph:
        if c.graph is not None:
            return c.graph
        if c.image is None:
            raise ValueError("a candidate needs an image or a graph")
        if parse is not None:
            return parse(c.image)
        if not parser_box:
            from sciflow.pipeline import Parser

            p = Parser()
            parser_box.append(lambda path: p(path).graph)
        return parser_box[0](c.image)

    try:
        action = "generate"
        cand = _as_candidate(generate(item, base_prompt, folder / "step00.png"))
        regenerations = 0
        for step in range(max_steps + 1):
            graph = graph_of(cand)
            result = graph_level(graph, item, matching=matching, embedder=embedder)
            crit = critique_from_result(graph, item, result, rule)
            image, gpath = cand.image, None
            if out_dir is not None:
                gpath = folder / f"step{step:02d}.graph.json"
                graph.save(gpath)
                if image is None and render_images:
                    from sciflow.bench.drawing import render_graph

                    image = render_graph(graph, folder / f"step{step:02d}.png")
            traj.steps.append(StepRecord(
                step=step, action=action, image=None if out_dir is None or image is None else str(image),
                graph=None if gpath is None else str(gpath), score=result.score, passed=crit.passed,
                n_instructions=len(crit.instructions), critique=crit.to_dict()))
            if crit.passed or step == max_steps:
                break
            nxt = folder / f"step{step + 1:02d}.png"
            instructions = crit.instructions
            if edit is not None and (local_edit_limit is None or is_local(instructions, local_edit_limit)):
                action = "edit"
                cand = _as_candidate(edit(Candidate(cand.image, graph), instructions, nxt))
            else:
                action = "regenerate"
                regenerations += 1
                cand = _as_candidate(generate(item, regeneration_prompt(base_prompt, crit), nxt))
    finally:
        if tmp is not None:
            tmp.cleanup()
    if out_dir is not None:
        (folder / "trajectory.json").write_text(json.dumps(traj.to_dict(), indent=2, ensure_ascii=False) + "\n",
                                                "utf-8")
    return traj


# ------------------------------------------------------------------ built-in generators and editors
class GraphEditor:
    """Apply the instructions to the candidate's graph and re-render it with Graphviz."""

    name = "graph"

    def __init__(self, dpi: int = 144, render: bool = True):
        self.dpi, self.render = dpi, render

    def __call__(self, cand: Candidate, instructions: Sequence[Instruction], out_path: Path) -> Candidate:
        if cand.graph is None:
            raise ValueError("the graph editor needs the candidate's graph")
        new = apply_instructions(cand.graph, instructions)
        if not self.render:
            return Candidate(graph=new)
        from sciflow.bench.generators import GraphvizGenerator

        return Candidate(GraphvizGenerator(self.dpi).generate(new, "", Path(out_path)), new)


EDITORS: dict[str, Callable[..., EditFn]] = {"graph": GraphEditor}


def get_editor(name: str, **options: Any) -> EditFn:
    if name not in EDITORS:
        raise ValueError(f"unknown editor {name!r}; available: {', '.join(sorted(EDITORS))}")
    return EDITORS[name](**options)


class _PerturbedAware:
    """The perturbed generator as a graph-aware generator; see the module docstring."""

    def __init__(self, severity: int = 1, seed: int = 0, degrade: str | None = None, dpi: int = 144,
                 decay: int = 0, render: bool = True):
        self.severity, self.seed, self.degrade, self.dpi = severity, seed, degrade, dpi
        self.decay, self.render = decay, render
        self.attempts: dict[str, int] = {}

    def __call__(self, item: DiagramGraph, prompt: str, out_path: Path) -> Candidate:
        from sciflow.bench.generators import PerturbedGenerator
        from sciflow.bench.perturb import perturb_graph

        k = self.attempts.get(item.id, 0)
        self.attempts[item.id] = k + 1
        gen = PerturbedGenerator(max(0, self.severity - self.decay * k), self.seed + k, self.degrade, self.dpi)
        if not self.render:
            bad, _ = perturb_graph(item, gen.severity, gen.item_seed(item))
            return Candidate(graph=bad)
        out_path = Path(out_path)
        gen.generate(item, prompt, out_path)
        record = json.loads((out_path.parent / "injected" / f"{out_path.stem}.json").read_text("utf-8"))
        return Candidate(out_path, DiagramGraph.from_dict(record["graph"]))


def graph_aware_generator(name: str, *, render: bool = True, **options: Any) -> GenerateFn:
    """A generate function for :func:`rectify` (see the module docstring)."""
    if name == "perturbed":
        return _PerturbedAware(render=render, **options)
    if name == "graphviz":
        from sciflow.bench.generators import GraphvizGenerator

        gv = GraphvizGenerator(**options)

        def draw(item: DiagramGraph, prompt: str, out_path: Path) -> Candidate:
            return Candidate(gv.generate(item, prompt, Path(out_path)) if render else None, item)

        return draw
    from sciflow.bench.generators import get_generator

    gen = get_generator(name, **options)
    return lambda item, prompt, out_path: Candidate(gen.generate(item, prompt, Path(out_path)))


def rectify_folder(
    generator_name: str,
    refs_dir: str | Path,
    out_dir: str | Path,
    *,
    editor: str | None = "graph",
    generator_options: dict[str, Any] | None = None,
    config: Config | None = None,
    rule: CritiqueRule | None = None,
    max_steps: int | None = None,
    parse_images: bool = False,
    items: Iterable[str] | None = None,
    on_item: Callable[[Trajectory], None] | None = None,
) -> dict[str, Any]:
    """Run :func:`rectify` on every ``*.json`` reference in ``refs_dir`` (for ``sciflow rectify``).

    Writes ``OUT/<id>/`` (steps and ``trajectory.json``), ``OUT/trajectories.jsonl`` (one line
    per item, without the per-step critiques) and ``OUT/summary.json``; returns the summary:
    items, share passing at step 0, share repaired within ``max_steps``, mean corrections of
    the repaired items, mean initial and final graph scores. ``parse_images``: critique the parsed
    image even when the generator knows its graph. Items that fail to load or generate are
    listed under ``errors`` and do not stop the run.
    """
    config = config or Config()
    cc = config.critique
    rule = rule or CritiqueRule.from_config(cc)
    steps = cc.max_steps if max_steps is None else max_steps
    refs_dir, out_dir = Path(refs_dir), Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    generate = graph_aware_generator(generator_name, **(generator_options or {}))
    if parse_images:
        inner = generate

        def generate(item: DiagramGraph, prompt: str, out_path: Path) -> Candidate:  # type: ignore[misc]
            c = _as_candidate(inner(item, prompt, out_path))
            return Candidate(c.image, None)

    edit = get_editor(editor) if editor else None
    parse: ParseFn | None = None
    wanted = set(items) if items is not None else None
    trajs: list[Trajectory] = []
    errors: list[dict[str, str]] = []
    with (out_dir / "trajectories.jsonl").open("w", encoding="utf-8") as f:
        for ref_path in sorted(p for p in refs_dir.iterdir() if p.suffix.lower() == ".json"):
            if wanted is not None and ref_path.stem not in wanted:
                continue
            try:
                item = load_graph(ref_path)
                if parse is None and (parse_images or generator_name not in ("perturbed", "graphviz")):
                    parse = _parser_fn(config)
                t = rectify(item, generate, edit=edit, parse=parse, rule=rule, matching=config.matching,
                            max_steps=steps, local_edit_limit=cc.local_edit_limit, out_dir=out_dir / ref_path.stem)
            except Exception as exc:  # one item's failure never stops the run
                log.warning("rectify failed for %s: %s", ref_path.stem, exc)
                errors.append({"item": ref_path.stem, "error": f"{type(exc).__name__}: {exc}"})
                continue
            trajs.append(t)
            row = t.to_dict()
            row["steps"] = [{k: v for k, v in s.items() if k != "critique"} for s in row["steps"]]
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
            if on_item:
                on_item(t)
    summary = summarize_trajectories(trajs)
    summary.update({"generator": generator_name, "generator_options": generator_options or {}, "editor": editor,
                    "max_steps": steps, "local_edit_limit": cc.local_edit_limit, "parse_images": parse_images,
                    "rule": asdict(rule), "errors": errors})
    (out_dir / "summary.json").write_text(json.dumps(summary, indent=2, ensure_ascii=False) + "\n", "utf-8")
    return summary


def _parser_fn(config: Config) -> ParseFn:
    from sciflow.pipeline import Parser

    parser = Parser(config)
    return lambda path: parser(path).graph


def summarize_trajectories(trajs: Sequence[Trajectory]) -> dict[str, Any]:
    n = len(trajs)
    repaired = [t for t in trajs if t.passed]
    return {
        "items": n,
        "passed_initially": sum(t.steps[0].passed for t in trajs) / n if n else 0.0,
        "repaired": len(repaired) / n if n else 0.0,
        "mean_steps_repaired": statistics.fmean(t.n_steps for t in repaired) if repaired else None,
        "mean_initial_score": statistics.fmean(t.steps[0].score for t in trajs) if n else None,
        "mean_final_score": statistics.fmean(t.steps[-1].score for t in trajs) if n else None,
        "edits": sum(s.action == "edit" for t in trajs for s in t.steps),
        "regenerations": sum(s.action == "regenerate" for t in trajs for s in t.steps),
    }


def critique_input(
    input_path: str | Path,
    ref: str | Path | DiagramGraph,
    *,
    config: Config | None = None,
    rule: CritiqueRule | None = None,
    parser: Any = None,
) -> Critique:
    """``sciflow critique INPUT --ref REF``: INPUT is a graph ``.json`` or an image (parsed first,
    with ``parser`` or a :class:`sciflow.pipeline.Parser` built from ``config``)."""
    config = config or Config()
    rule = rule or CritiqueRule.from_config(config.critique)
    ref_graph = ref if isinstance(ref, DiagramGraph) else load_graph(ref)
    path = Path(input_path)
    if path.suffix.lower() == ".json":
        pred = load_graph(path)
    else:
        if parser is None:
            from sciflow.pipeline import Parser

            parser = Parser(config)
        pred = parser(path).graph
    result = graph_level(pred, ref_graph, matching=config.matching, weights=config.graph)
    return critique_from_result(pred, ref_graph, result, rule)
