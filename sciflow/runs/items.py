"""Benchmark items: references paired with predictions by file stem."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from sciflow.format.hashing import file_sha256
from sciflow.format.imageio import RASTER_SUFFIXES, VECTOR_SUFFIXES

GRAPH_SUFFIXES = frozenset({".json"})
# Image predictions are parsed by the inverse parser before scoring.
IMAGE_SUFFIXES = RASTER_SUFFIXES | VECTOR_SUFFIXES

GRAPH_KEYS = ("graph", "node_precision", "node_recall", "node_f1", "edge_precision", "edge_recall", "edge_f1")
TEXT_KEYS = ("text", "coverage", "faithfulness", "alignment")
IMAGE_KEYS = ("image", "semantic_consistency", "perceptual_similarity", "visual_flow")


@dataclass
class Item:
    """One benchmark item: a reference and (maybe) its prediction, paired by file stem."""

    id: str
    reference: Path | None
    prediction: Path | None
    source_image: Path | None = None
    notes: list[str] = field(default_factory=list)
    #: several samples of one prompt: ``(key, path)`` each (:mod:`sciflow.runs.samples`)
    samples: list[tuple[str, Path]] = field(default_factory=list)
    #: the item id this is a sample of (set by :func:`sciflow.runs.samples.expand_samples`)
    sample_of: str | None = None


#: ``<id>_s<k>``: sample ``k`` of item ``<id>``
SAMPLE_NAME = re.compile(r"^(.+)_s(\d+)$")


class ScoringError(RuntimeError):
    """A run that cannot start at all (a folder that does not exist, say)."""


def pair_items(pred_dir: Path, ref_dir: Path) -> tuple[list[Item], list[str]]:
    """Pair ``REF_DIR/*.json`` with predictions in ``PRED_DIR`` by file stem.

    Returns the items (sorted by id) and the stems of predictions that have no reference.

    Several predictions with one stem (``x.json`` and ``x.png``, or ``x.png`` and ``x.bmp``): one
    is scored, by a fixed precedence -- a graph (``.json``) before an image, then the first by
    file name (``x.bmp`` before ``x.png``) -- and the item gets a note naming every file and the
    one used (logged as a warning by the run, kept in the row's ``notes``). Several references
    with one stem (``x.json`` and ``x.JSON``) likewise: the first by file name is used, with a note.
    An image beside a reference with the same stem (``REF_DIR/<stem>.png`` ...) is the item's
    source figure, used by the perceptual-similarity term of the image level. A folder named like
    a prediction (``PRED_DIR/x.json/``) is not one: the item is missing, and its note (and the
    row's error) says that the path is a folder.

    Layouts of the prediction folder: flat (``PRED_DIR/<id>.png``); several samples per prompt,
    ``PRED_DIR/<id>/<k>.png`` (a folder named after the reference) or ``PRED_DIR/<id>_s<k>.png``
    (when ``<id>_s<k>`` is no reference id itself), which become the item's ``samples`` (a flat
    file beside them is left out, with a note). Any other folder is not scored: it is listed
    among the orphans as ``<name>/`` (the run warns about it).
    """
    for d, what in ((pred_dir, "prediction"), (ref_dir, "reference")):
        if not d.is_dir():
            raise ScoringError(f"{what} folder not found: {d}")
    refs: dict[str, Path] = {}
    ref_clashes: dict[str, list[Path]] = {}
    sources: dict[str, Path] = {}
    for p in sorted(ref_dir.iterdir()):
        if p.is_file() and p.suffix.lower() == ".json":
            if p.stem in refs:
                ref_clashes.setdefault(p.stem, [refs[p.stem]]).append(p)
            else:
                refs[p.stem] = p
        elif p.is_file() and p.suffix.lower() in IMAGE_SUFFIXES:
            sources.setdefault(p.stem, p)
    preds: dict[str, list[Path]] = {}
    not_files: dict[str, list[Path]] = {}  # folders (or other non-files) named like a prediction
    samples: dict[str, list[tuple[str, Path]]] = {}
    nested: list[str] = []  # folders that are no reference id
    kinds = GRAPH_SUFFIXES | IMAGE_SUFFIXES
    for p in sorted(pred_dir.iterdir()):
        if p.suffix.lower() in kinds:
            m = SAMPLE_NAME.match(p.stem)
            if p.is_file() and p.stem not in refs and m and m.group(1) in refs:  # <id>_s<k>.png
                samples.setdefault(m.group(1), []).append((m.group(2), p))
            elif p.is_file():
                preds.setdefault(p.stem, []).append(p)
            elif p.is_dir():
                not_files.setdefault(p.stem, []).append(p)
        elif p.is_dir():
            files = sorted(f for f in p.iterdir() if f.is_file() and f.suffix.lower() in kinds)
            if p.name in refs and files:  # <id>/<k>.png
                samples.setdefault(p.name, []).extend((f.stem, f) for f in files)
            elif files or any(f.is_dir() for f in p.iterdir()):
                nested.append(f"{p.name}/")
    items = []
    for stem in sorted(refs):
        cands = sorted(preds.get(stem, []), key=lambda p: (p.suffix.lower() not in GRAPH_SUFFIXES, p.name))
        item = Item(stem, refs[stem], cands[0] if cands else None, sources.get(stem))
        if stem in ref_clashes:
            names = ", ".join(p.name for p in ref_clashes[stem])
            item.notes.append(f"several references for {stem!r}: {names}; using {refs[stem].name}")
        if not cands and stem in not_files:
            item.notes.append(f"{not_files[stem][0]} is a folder, not a prediction file")
        if stem in samples:
            item.samples = sorted(samples[stem], key=lambda kp: (len(kp[0]), kp[0], kp[1].suffix))
            if cands:
                item.notes.append(f"{stem!r} has {len(item.samples)} samples; {cands[0].name} beside them "
                                  "is not scored")
            item.prediction, cands = None, []
        if len(cands) > 1:
            item.notes.append(
                f"several predictions for {stem!r}: {', '.join(p.name for p in cands)}; using {cands[0].name}"
                " (a .json before an image, then by file name)"
            )
        items.append(item)
    orphans = sorted(set(preds) - set(refs)) + nested
    return items, orphans


def is_image(path: Path | None) -> bool:
    return path is not None and path.suffix.lower() in IMAGE_SUFFIXES


def input_hashes(item: Item) -> dict[str, str]:
    """SHA-256 of every file the item's scores depend on (a rerun redoes the item when one changes)."""
    out = {}
    for key, path in (("reference", item.reference), ("prediction", item.prediction), ("source", item.source_image)):
        if path is not None and path.is_file():
            out[f"{key}_sha256"] = file_sha256(path)
    return out
