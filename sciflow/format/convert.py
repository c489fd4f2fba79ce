"""Convert SciFlow-Bench graph files (``canvas_full.json`` + ``prompt.json``) to sciflow's format."""

from __future__ import annotations

import logging
from dataclasses import dataclass, replace
from pathlib import Path

from sciflow.format.graph import GraphFormatError, load_graph

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


# The published layout's source figure, in the order its own evaluation looks for it.
SOURCE_FIGURE_NAMES = ("sam_results/segmentation_result.png", "segmentation_result.png")


@dataclass
class ImportReport:
    references: list[Path]
    generated: dict[str, list[Path]]
    parsed: dict[str, list[Path]]
    errors: list[tuple[str, str]]


def import_sciflow_bench(root: str | Path, out_dir: str | Path) -> ImportReport:
    """Build sciflow items from the published SciFlow-Bench layout.

    ``root`` holds one folder per paper with ``canvas_full.json`` (the reference graph),
    ``prompt.json``, the source figure (``sam_results/segmentation_result.png`` or
    ``segmentation_result.png``) and ``<baseline>.png`` generated images, optionally with
    ``<baseline>_autobench/canvas_full.json`` (that baseline's graph parsed by their parser).

    Writes ``OUT/references/<paper>.json`` with the source figure beside it as
    ``OUT/references/<paper>.png`` (so ``sciflow score`` finds it for the perceptual term),
    ``OUT/generated/<baseline>/<paper>.png`` and ``OUT/parsed/<baseline>/<paper>.json``.
    A paper folder that fails is reported in ``errors`` and the others are imported.
    """
    import shutil

    root, out = Path(root), Path(out_dir)
    if not root.is_dir():
        raise FileNotFoundError(f"no such folder: {root}")
    report = ImportReport([], {}, {}, [])
    refs = out / "references"
    refs.mkdir(parents=True, exist_ok=True)
    for paper in sorted(p for p in root.iterdir() if p.is_dir()):
        canvas = find_canvas(paper)
        if canvas is None:
            report.errors.append((paper.name, f"{paper}: no {' / '.join(CANVAS_NAMES)} found"))
            continue
        try:
            graph = load_graph(canvas)
        except GraphFormatError as exc:
            report.errors.append((paper.name, str(exc)))
            continue
        graph.save(refs / f"{paper.name}.json")
        report.references.append(refs / f"{paper.name}.json")
        sources = [paper / n for n in SOURCE_FIGURE_NAMES if (paper / n).is_file()]
        if sources:
            shutil.copyfile(sources[0], refs / f"{paper.name}.png")
        else:
            log.warning("%s: no source figure; the perceptual term will be unavailable", paper.name)
        source_names = {s.name for s in sources}
        for img in sorted(paper.glob("*.png")):
            if img.name in source_names:
                continue
            baseline = img.stem
            dest = out / "generated" / baseline
            dest.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(img, dest / f"{paper.name}.png")
            report.generated.setdefault(baseline, []).append(dest / f"{paper.name}.png")
            parsed_canvas = find_canvas(paper / f"{baseline}_autobench")
            if parsed_canvas is not None:
                try:
                    pg = load_graph(parsed_canvas)
                except GraphFormatError as exc:
                    report.errors.append((f"{paper.name}/{baseline}", str(exc)))
                    continue
                pdest = out / "parsed" / baseline
                pdest.mkdir(parents=True, exist_ok=True)
                replace(pg, id=paper.name).save(pdest / f"{paper.name}.json")
                report.parsed.setdefault(baseline, []).append(pdest / f"{paper.name}.json")
    return report
