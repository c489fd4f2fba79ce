"""The parser pipeline: image -> :class:`Diagram` -> agents -> :class:`DiagramGraph`.

:class:`Parser` builds every agent named in ``[parser] agents`` from its
``[parser.<agent>]`` table once (models load once), then each call loads the image,
brings it to the working resolution (:func:`sciflow.format.imageio.fit_working_size`) and runs the
agents in order. Same image + same config -> identical graph.

With ``debug_dir``, after each agent the pipeline writes ``<item>.<k>_<agent>.png``: a faded
copy of the working image (:func:`sciflow.agents.overlay.faded`) on which the agent draws what
it added with its own ``draw_overlay(diagram, canvas)``. An agent without that method still
gets its file, the plain faded copy, so there is one overlay per agent. Every file has a title
band on top (item, step, agent and backend) and a legend of the colours the agent draws with
(its ``overlay_legend``: ``(meaning, colour)`` pairs); the pipeline knows no
agent's drawing, and adding an agent never edits it.
"""

from __future__ import annotations

import copy
import hashlib
import json
import logging
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import cv2

from sciflow.agents import (  # noqa: F401
    graph_architect,
    grounder,
    layout,
    reliability,
    shape_hunter,
    shape_text,
    text_spotter,
    topology_coder,
)
from sciflow.agents.diagram import Diagram
from sciflow.agents.overlay import faded, framed
from sciflow.agents.registry import AGENTS
from sciflow.config import Config
from sciflow.format.graph import DiagramGraph
from sciflow.format.imageio import MAX_PIXELS, fit_working_size, to_rgb

log = logging.getLogger(__name__)

DEFAULT_AGENTS = (
    "text_spotter", "shape_hunter", "shape_text", "layout", "grounder", "topology_coder", "graph_architect",
    "reliability",
)


@dataclass
class ParseResult:
    """``graph`` in input-image pixels; ``evidence`` per agent (plain data);
    ``timings`` seconds per agent (plus ``load``); ``backends`` agent -> backend name."""

    graph: DiagramGraph
    evidence: dict[str, Any]
    timings: dict[str, float]
    backends: dict[str, str]


def parser_config_hash(parser_cfg: Mapping[str, Any]) -> str:
    """SHA-256 of the canonical JSON of the ``[parser]`` table."""
    canon = json.dumps(parser_cfg, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(canon.encode("utf-8")).hexdigest()


class Parser:
    """Built once from a :class:`Config`; call it on images."""

    def __init__(self, config: Config | None = None, *, threads: int = 0, device: str | None = None):
        """``threads > 0`` caps the intra-op thread pools of the OCR engine and the layout
        detector; ``device`` (a torch device string such as ``"cpu"`` or ``"cuda:0"``, see
        :func:`sciflow.models.device.resolve_device`) is put into every agent's backend table as
        ``device``. Both are runtime resource settings: they are not part of the hashed
        configuration (nor of the parser fingerprint)."""
        self.config = config or Config()
        self.params: Mapping[str, Any] = self.config.parser
        self.agent_names: list[str] = list(self.params.get("agents", DEFAULT_AGENTS))
        self.agents: dict[str, Any] = {}
        for name in self.agent_names:
            table = copy.deepcopy(dict(self.params.get(name, {})))
            backend = str(table.get("backend") or getattr(AGENTS.get(name), "default_backend", "") or "")
            if threads > 0 and name in ("text_spotter", "shape_text", "layout") and backend:  # the onnxruntime sessions
                table[backend] = {**dict(table.get(backend, {})), "threads": threads}
            if device is not None and backend:
                table[backend] = {**dict(table.get(backend, {})), "device": device}
            self.agents[name] = AGENTS.create(name, table)
        self.max_side = int(self.params.get("max_side", 2400))
        self.min_side = int(self.params.get("min_side", 500))
        self.max_pixels = int(self.params.get("max_pixels", MAX_PIXELS))
        self._fingerprint: dict[str, Any] | None = None

    @property
    def backends(self) -> dict[str, str]:
        return {n: str(getattr(a, "backend_name", "default")) for n, a in self.agents.items()}

    def fingerprint(self) -> dict[str, Any]:
        """Agent names, backend names, model names + weight hashes, parser-config hash."""
        if self._fingerprint is None:
            self._fingerprint = {
                "agents": list(self.agent_names),
                "backends": self.backends,
                "models": {n: a.fingerprint() for n, a in self.agents.items() if hasattr(a, "fingerprint")},
                "parser_config_hash": parser_config_hash(self.params),
            }
        return self._fingerprint

    def __call__(self, image: Any, *, item_id: str | None = None, debug_dir: Path | None = None) -> ParseResult:
        t0 = time.perf_counter()
        name = str(image) if isinstance(image, (str, Path)) else (item_id or "<image>")
        rgb = to_rgb(image, name=name, max_pixels=self.max_pixels)
        work, scale = fit_working_size(rgb, max_side=self.max_side, min_side=self.min_side)
        if item_id is None:
            item_id = Path(image).stem if isinstance(image, (str, Path)) else "diagram"
        d = Diagram(
            image=work, item_id=item_id, scale=scale, source=str(image) if isinstance(image, (str, Path)) else None
        )
        timings = {"load": time.perf_counter() - t0}
        if debug_dir is not None:
            debug_dir = Path(debug_dir)
            debug_dir.mkdir(parents=True, exist_ok=True)
        for i, (aname, agent) in enumerate(self.agents.items()):
            t = time.perf_counter()
            agent.run(d)
            timings[aname] = time.perf_counter() - t
            if debug_dir is not None:
                canvas = faded(d.image)
                draw = getattr(agent, "draw_overlay", None)
                if draw is not None:
                    draw(d, canvas)
                backend = getattr(agent, "backend_name", None)
                title = f"{item_id} - step {i + 1}: {aname}" + (f" ({backend})" if backend else "")
                canvas = framed(canvas, title, tuple(getattr(agent, "overlay_legend", ())))
                cv2.imwrite(str(debug_dir / f"{item_id}.{i + 1}_{aname}.png"), canvas[:, :, ::-1])
        if d.graph is None:
            raise RuntimeError("the parser config has no graph_architect agent: nothing built the graph")
        return ParseResult(graph=d.graph, evidence=dict(d.evidence), timings=timings, backends=self.backends)


def parse(image: Any, config: Config | None = None, **kw: Any) -> ParseResult:
    """Parse one image with a fresh :class:`Parser` (use a Parser to parse many)."""
    return Parser(config)(image, **kw)
