"""Convert SciFlow-Bench graph files (``canvas_full.json`` + ``prompt.json``) to sciflow's format."""

from __future__ import annotations

import logging
from dataclasses import dataclass
from pathlib import Path

from sciflow.graph import GraphFormatError, load_graph

log = logging.getLogger(__name__)

# The published layout sometimes holds only an intermediate canvas; the first present wins.
CANVAS_NAMES = ("canvas_full.json", "canvas_full_merge.json", "canvas_full_step10.json")


@dataclass(frozen=True)
class Converted:
    source: Path
    item_id: str
    output: Path | None
    error: str | None


def find_canvas(folder: Path) -> Path | None:
    for name in CANVAS_NAMES:
        if (folder / name).is_file():
            return folder / name
    return None


def convert_path(src: str | Path, out_dir: str | Path) -> list[Converted]:
    """Convert one ``canvas_full.json``, one paper folder, or a root of paper folders.

    Each output is ``OUT_DIR/<paper folder name>.json``. A folder without a canvas file or
    with a malformed one is reported in the returned list, never raised.
    """
    src, out_dir = Path(src), Path(out_dir)
    if src.is_file():
        sources = [src]
    elif src.is_dir() and find_canvas(src):
        sources = [find_canvas(src)]
    elif src.is_dir():
        sources = []
        for sub in sorted(p for p in src.iterdir() if p.is_dir()):
            c = find_canvas(sub)
            sources.append(c if c else sub)
    else:
        raise FileNotFoundError(f"no such file or folder: {src}")
    out_dir.mkdir(parents=True, exist_ok=True)
    results = []
    for s in sources:
        item_id = s.parent.name if s.is_file() else s.name
        if not s.is_file():
            results.append(Converted(s, item_id, None, f"{s}: no {' / '.join(CANVAS_NAMES)} found"))
            continue
        try:
            graph = load_graph(s)
        except GraphFormatError as exc:
            results.append(Converted(s, item_id, None, str(exc)))
            continue
        out = out_dir / f"{graph.id}.json"
        graph.save(out)
        results.append(Converted(s, graph.id, out, None))
    return results
