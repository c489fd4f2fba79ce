"""Agreement of the automatic parse with the human-verified graphs, from the edit logs alone.

Identity-consistent editing (SciFlow-Bench, Appendix B.4 and Table 1) keeps every id, so no
semantic matching is needed. Replaying an item's audit log up to its last ``save``:

- an inherited node or edge still included is a true positive,
- an inherited node or edge excluded is a false positive (an edge also when one of its nodes was
  excluded: it is not in the verified graph),
- a node or edge added by hand (and present at the save) is a false negative.

precision = TP / (TP + FP), recall = TP / (TP + FN), F1 their harmonic mean. As in the graph
metric, when both sides are empty (no automatic and no verified elements) all three are 1; when
only one side is empty they are 0. ``overall`` is the micro average (counts summed over items),
the number Table 1 reports; ``macro`` (the mean of per-item F1) is given alongside.

Items whose log has no ``save`` are listed under ``unsaved`` and left out; an unreadable log (not
JSON, nested too deeply, values of the wrong kind) is listed under ``errors``, one line naming the
file, and the other items are still counted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sciflow.verify.store import EDIT_ACTIONS, LOG_SUFFIX, ItemError, last_save_index, read_log, replay


@dataclass(frozen=True)
class Counts:
    tp: int = 0
    fp: int = 0
    fn: int = 0

    def __add__(self, other: Counts) -> Counts:
        return Counts(self.tp + other.tp, self.fp + other.fp, self.fn + other.fn)

    @property
    def precision(self) -> float:
        if self.tp + self.fp == 0:
            return 1.0 if self.fn == 0 else 0.0
        return self.tp / (self.tp + self.fp)

    @property
    def recall(self) -> float:
        if self.tp + self.fn == 0:
            return 1.0 if self.fp == 0 else 0.0
        return self.tp / (self.tp + self.fn)

    @property
    def f1(self) -> float:
        p, r = self.precision, self.recall
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)

    def to_dict(self) -> dict[str, Any]:
        return {
            "tp": self.tp,
            "fp": self.fp,
            "fn": self.fn,
            "precision": round(self.precision, 6),
            "recall": round(self.recall, 6),
            "f1": round(self.f1, 6),
        }


@dataclass(frozen=True)
class ItemAgreement:
    item: str
    nodes: Counts
    edges: Counts
    annotators: tuple[str, ...] = ()
    time_spent_s: float = 0.0
    edits: int = 0

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item,
            "nodes": self.nodes.to_dict(),
            "edges": self.edges.to_dict(),
            "annotators": list(self.annotators),
            "time_spent_s": self.time_spent_s,
            "edits": self.edits,
        }


@dataclass(frozen=True)
class AgreementReport:
    items: tuple[ItemAgreement, ...]
    unsaved: tuple[str, ...] = ()
    errors: tuple[tuple[str, str], ...] = ()
    nodes: Counts = field(default_factory=Counts)
    edges: Counts = field(default_factory=Counts)

    @property
    def macro(self) -> dict[str, float]:
        n = len(self.items)
        if n == 0:
            return {"node_f1": 0.0, "edge_f1": 0.0}
        return {
            "node_f1": round(sum(i.nodes.f1 for i in self.items) / n, 6),
            "edge_f1": round(sum(i.edges.f1 for i in self.items) / n, 6),
        }

    def to_dict(self) -> dict[str, Any]:
        return {
            "overall": {"items": len(self.items), "nodes": self.nodes.to_dict(), "edges": self.edges.to_dict()},
            "macro": self.macro,
            "items": [i.to_dict() for i in self.items],
            "unsaved": list(self.unsaved),
            "errors": [{"item": i, "error": e} for i, e in self.errors],
        }

    def format(self) -> str:
        """A plain-text table: per item, then the micro overall (Table 1)."""
        head = f"{'item':<28} {'node P':>7} {'node R':>7} {'node F1':>7}   {'edge P':>7} {'edge R':>7} {'edge F1':>7}"
        lines = [head, "-" * len(head)]

        def row(name: str, n: Counts, e: Counts) -> str:
            return (
                f"{name:<28} {n.precision:7.3f} {n.recall:7.3f} {n.f1:7.3f}   "
                f"{e.precision:7.3f} {e.recall:7.3f} {e.f1:7.3f}"
            )

        for it in self.items:
            lines.append(row(it.item[:28], it.nodes, it.edges))
        lines.append("-" * len(head))
        if self.items:
            lines.append(row(f"overall (micro, {len(self.items)} items)", self.nodes, self.edges))
        else:
            lines.append("no saved items: nothing to measure yet")
        if self.unsaved:
            lines.append(f"not saved, left out: {', '.join(self.unsaved)}")
        for item, err in self.errors:
            lines.append(f"error: {item}: {err}")
        return "\n".join(lines)


def _one_line(text: str) -> str:
    return "; ".join(part.strip() for part in text.splitlines() if part.strip())


def item_agreement(entries: list[dict[str, Any]], item: str = "item") -> ItemAgreement | None:
    """Counts for one item's log, replayed up to its last ``save`` (None when never saved)."""
    last = last_save_index(entries)
    if last is None:
        return None
    upto = entries[: last + 1]
    counts = replay(upto, item).counts()
    return ItemAgreement(
        item=item,
        nodes=Counts(**counts["nodes"]),
        edges=Counts(**counts["edges"]),
        annotators=tuple(sorted({str(e["annotator"]) for e in upto if e.get("annotator")})),
        time_spent_s=float(upto[-1].get("item_time_s", 0.0) or 0.0),
        edits=sum(1 for e in upto if e.get("action") in EDIT_ACTIONS),
    )


def agreement(verified_dir: str | Path) -> AgreementReport:
    """Node and edge precision/recall/F1 of the automatic parse, per item and overall (micro),
    from the ``*.log.jsonl`` audit logs in ``verified_dir``."""
    verified_dir = Path(verified_dir)
    if not verified_dir.is_dir():
        raise FileNotFoundError(f"verified folder not found: {verified_dir}")
    items: list[ItemAgreement] = []
    unsaved: list[str] = []
    errors: list[tuple[str, str]] = []
    for path in sorted(verified_dir.glob(f"*{LOG_SUFFIX}")):
        item = path.name[: -len(LOG_SUFFIX)]
        try:
            res = item_agreement(read_log(path), item)
        except ItemError as exc:  # names the file and the line
            errors.append((item, _one_line(str(exc))))
            continue
        except (OSError, ValueError, TypeError, KeyError, RecursionError) as exc:  # a log of valid lines, bad values
            errors.append((item, f"{path}: unusable log: {type(exc).__name__}: {_one_line(str(exc))}"))
            continue
        if res is None:
            unsaved.append(item)
        else:
            items.append(res)
    nodes, edges = Counts(), Counts()
    for it in items:
        nodes, edges = nodes + it.nodes, edges + it.edges
    return AgreementReport(tuple(items), tuple(unsaved), tuple(errors), nodes, edges)
