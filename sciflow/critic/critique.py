"""A critique: pass/fail judgement, the structural errors in plain sentences, one edit per error.

This is SciGen-Verifier's triplet (binary judgement, explanation, editing instruction) computed
from sciflow's graph comparison (:func:`sciflow.metrics.graph_level.graph_level`) instead of
by a model. Everything is a deterministic function of the prediction, the reference and the
comparison.

Findings
--------
The comparison's verdicts are regrouped into *findings*, one per error a person would fix,
each with one edit (two for swapped labels). Findings are ordered by **severity** (1 = most
severe), then by the labels involved:

===  ===================  ========================================================  ======================
sev  kind                 when                                                      edit
===  ===================  ========================================================  ======================
1    ``missing_node``     a reference node without a match (and not part of a       ``add_node`` with all
                          merge). Its arrows, and shortcut arrows that skip it,     its arrows
                          are part of this finding.
2    ``merged_node``      a predicted box standing for two or more reference        ``split_node``
                          nodes: its label, split at ``/ | & + ;`` or " and ",
                          matches them part by part (string similarity >= 0.8),
                          or contains their labels; it is unmatched or matched
                          to one of them below the misspelling threshold, and at
                          least one of them is missing
3    ``hallucinated_node``  an unmatched predicted box (its arrows are part of it)  ``remove_node``
4    ``swapped_labels``   two matched boxes whose arrows fit each other's           two ``relabel``
                          reference nodes: exchanging them in the matching needs
                          fewer edits (2 relabels) than the arrow edits it saves
5    ``reversed_edge``    a predicted arrow a -> b where the reference has b -> a   ``reverse_edge``
6    ``missing_edge``     a reference edge between matched nodes not recovered      ``add_edge``
7    ``unsupported_edge`` a predicted arrow between matched boxes that the          ``remove_edge``
                          reference supports in neither direction
8    ``misspelled_label`` a matched box whose folded-string similarity to its       ``relabel``
                          reference label is below ``misspell_threshold``
===  ===================  ========================================================  ======================

Why this order: a missing component loses the component and every relation through it; a
merge loses a component and a relation; an extra component adds a false one; swapped labels
misplace two components; a reversed arrow states a false relation (worse than omitting it);
a missing arrow omits one; an extra arrow adds one; a misspelling leaves the structure right.

Unmatched-endpoint arrows are never separate findings: they touch an extra or merged box and
go with its removal or split. Skip-path arrows (correct under the metric because the diagram
skipped a node) are named in the missing node's ``add_node`` as ``replaces``.

Judgement
---------
The prediction **passes** when no finding is *blocking*; :class:`CritiqueRule` says which
kinds block (default: all; a hallucinated box also blocks through
``fail_on_unmatched_endpoint_edge`` when it has arrows). Non-blocking findings are still
listed, marked minor. Defaults come from the ``[critique]`` table of the configuration.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, fields
from typing import Any

from sciflow.config import CritiqueConfig, CritiqueRuleSettings, MatchingConfig
from sciflow.critic.instructions import Instruction, q, region_text, union_box
from sciflow.format.graph import DiagramGraph
from sciflow.metrics.graph_level import GraphLevelResult, graph_level, skip_path_edges
from sciflow.metrics.matching import fold, string_similarity

KINDS = (
    "missing_node",
    "merged_node",
    "hallucinated_node",
    "swapped_labels",
    "reversed_edge",
    "missing_edge",
    "unsupported_edge",
    "misspelled_label",
)
SEVERITY = {k: i + 1 for i, k in enumerate(KINDS)}
HEADINGS = {
    "missing_node": "Missing component",
    "merged_node": "Merged components",
    "hallucinated_node": "Extra component",
    "swapped_labels": "Swapped labels",
    "reversed_edge": "Reversed arrow",
    "missing_edge": "Missing arrow",
    "unsupported_edge": "Extra arrow",
    "misspelled_label": "Misspelled label",
}
NOUNS = {
    "missing_node": ("missing component", "missing components"),
    "merged_node": ("merged box", "merged boxes"),
    "hallucinated_node": ("extra component", "extra components"),
    "swapped_labels": ("label swap", "label swaps"),
    "reversed_edge": ("reversed arrow", "reversed arrows"),
    "missing_edge": ("missing arrow", "missing arrows"),
    "unsupported_edge": ("extra arrow", "extra arrows"),
    "misspelled_label": ("misspelled label", "misspelled labels"),
}
MERGE_SEPARATORS = re.compile(r"\s*(?:/|\||&|\+|;|\n|\band\b)\s*", re.I)
MERGE_PART_SIMILARITY = 0.8


@dataclass(frozen=True)
class CritiqueRule(CritiqueRuleSettings):
    """Which findings make a prediction fail, and when a label counts as misspelled."""

    @classmethod
    def from_config(cls, cfg: CritiqueConfig | Any) -> CritiqueRule:
        """From a :class:`CritiqueConfig` (or a :class:`~sciflow.config.Config`)."""
        if hasattr(cfg, "critique") and not isinstance(cfg, CritiqueConfig):
            cfg = cfg.critique
        names = {f.name for f in fields(cls)}
        return cls(**{k: v for k, v in asdict(cfg).items() if k in names})

    def blocks(self, kind: str, n_arrows: int = 0) -> bool:
        if kind == "misspelled_label":
            return True  # governed by misspell_threshold
        if kind == "hallucinated_node":
            return self.fail_on_hallucinated_node or (n_arrows > 0 and self.fail_on_unmatched_endpoint_edge)
        return bool(getattr(self, f"fail_on_{kind}"))


@dataclass(frozen=True)
class Finding:
    kind: str
    message: str
    instructions: tuple[Instruction, ...]
    blocking: bool = True

    @property
    def severity(self) -> int:
        return SEVERITY[self.kind]

    @property
    def heading(self) -> str:
        return HEADINGS[self.kind]

    @property
    def sentence(self) -> str:
        """``Heading[ (minor)]: message`` -- the explanation line."""
        return f"{self.heading}{'' if self.blocking else ' (minor)'}: {self.message}"

    def to_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "severity": self.severity, "blocking": self.blocking,
                "message": self.sentence, "instructions": [i.to_dict() for i in self.instructions]}

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Finding:
        kind = d["kind"]
        msg = d["message"]
        for prefix in (f"{HEADINGS[kind]}: ", f"{HEADINGS[kind]} (minor): "):
            if msg.startswith(prefix):
                msg = msg[len(prefix):]
        return cls(kind, msg, tuple(Instruction.from_dict(i) for i in d.get("instructions", ())),
                   bool(d.get("blocking", True)))


@dataclass(frozen=True)
class Critique:
    """Judgement + explanation + edits. ``item_id``, ``score`` and ``unparsed`` (edit lines a
    reader could not parse) are metadata, not part of equality."""

    passed: bool
    summary: str
    findings: tuple[Finding, ...] = ()
    item_id: str | None = field(default=None, compare=False)
    score: float | None = field(default=None, compare=False)
    unparsed: tuple[str, ...] = field(default=(), compare=False)
    #: the claims the diagram fails, of ``claims_checked`` (None: none given); :mod:`sciflow.critic.claims`
    failed_claims: tuple[Mapping[str, Any], ...] = field(default=(), compare=False)
    claims_checked: int | None = field(default=None, compare=False)

    @property
    def instructions(self) -> list[Instruction]:
        return [i for f in self.findings for i in f.instructions]

    @property
    def explanation(self) -> str:
        lines = [self.summary] + [f"{k}. {f.sentence}" for k, f in enumerate(self.findings, 1)]
        return "\n".join(lines)

    @property
    def answer(self) -> str:
        return "yes" if self.passed else "no"

    def to_dict(self) -> dict[str, Any]:
        return {
            "item": self.item_id,
            "passed": self.passed,
            "answer": self.answer,
            "score": self.score,
            "summary": self.summary,
            "findings": [f.to_dict() for f in self.findings],
            "instructions": [i.to_dict() for i in self.instructions],
            **({"claims_checked": self.claims_checked, "failed_claims": [dict(x) for x in self.failed_claims]}
               if self.claims_checked is not None or self.failed_claims else {}),
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> Critique:
        return cls(bool(d["passed"]), d.get("summary", ""), tuple(Finding.from_dict(f) for f in d.get("findings", ())),
                   item_id=d.get("item"), score=d.get("score"))


def summarize(passed: bool, findings: Sequence[Finding], n_nodes: int = 0, n_edges: int = 0) -> str:
    """The first explanation line."""
    if not findings:
        return (f"The diagram matches the reference: all {n_nodes} components and {n_edges} arrows are present, "
                "correctly labelled and pointing the right way.")
    counts: dict[str, int] = {}
    for f in findings:
        counts[f.kind] = counts.get(f.kind, 0) + 1
    parts = ", ".join(f"{n} {NOUNS[k][n != 1]}" for k, n in sorted(counts.items(), key=lambda x: SEVERITY[x[0]]))
    n = len(findings)
    if passed:
        return f"The diagram passes with {n} minor {'issue' if n == 1 else 'issues'} ({parts})."
    return f"The diagram does not match the reference: {n} {'error' if n == 1 else 'errors'} ({parts})."


# ------------------------------------------------------------------ analysis
def _merge_parts(label: str, cands: Sequence[tuple[str, str]]) -> list[str]:
    """Reference ids (in label order) of the candidates that ``label`` draws as one box."""
    found: dict[str, int] = {}
    parts = [p for p in MERGE_SEPARATORS.split(label) if fold(p)]
    if len(parts) >= 2 and cands:
        sim = string_similarity(parts, [c[1] for c in cands])
        scored = sorted(((float(sim[i, j]), i, j) for i in range(len(parts)) for j in range(len(cands))),
                        key=lambda x: (-x[0], x[1], x[2]))
        used_p: set[int] = set()
        for s, i, j in scored:
            if s < MERGE_PART_SIMILARITY:
                break
            if i in used_p or cands[j][0] in found:
                continue
            used_p.add(i)
            found[cands[j][0]] = i * 10_000
    folded = f" {fold(label)} "
    spans: list[tuple[int, int]] = []
    for rid, rlab in sorted(cands, key=lambda c: -len(fold(c[1]))):
        f = fold(rlab)
        if rid in found or len(f) < 3:
            continue
        at = folded.find(f" {f} ")
        if at >= 0 and not any(a < at + len(f) + 1 and at < b for a, b in spans):
            spans.append((at, at + len(f) + 1))
            found[rid] = at
    return [rid for rid, _ in sorted(found.items(), key=lambda x: (x[1], x[0]))] if len(found) >= 2 else []


def _edge_cost(m: Mapping[str, str], pred_edges: Sequence[tuple[str, str]], ref_edges_local: Sequence[tuple[str, str]],
               ref_edges: set[tuple[str, str]]) -> int:
    """Arrow edits needed on these edges under matching ``m`` (direct support only)."""
    rec: set[tuple[str, str]] = set()
    cost = 0
    for u, v in pred_edges:
        a, b = m.get(u), m.get(v)
        if a is None or b is None:
            continue
        if (a, b) in ref_edges:
            rec.add((a, b))
        else:
            cost += 1
            if (b, a) in ref_edges:
                rec.add((b, a))
    mapped = set(m.values())
    return cost + sum(1 for e in ref_edges_local if e not in rec and e[0] in mapped and e[1] in mapped)


def _box(bbox: Sequence[float] | None) -> str:
    return "" if bbox is None else f" at {region_text([round(v) for v in bbox])}"


def critique(
    pred: DiagramGraph,
    ref: DiagramGraph,
    *,
    rule: CritiqueRule | None = None,
    matching: MatchingConfig | None = None,
    embedder: Any = None,
) -> Critique:
    """Compare ``pred`` with ``ref`` (:func:`graph_level`) and critique the result."""
    result = graph_level(pred, ref, matching=matching, embedder=embedder)
    return critique_from_result(pred, ref, result, rule)


def critique_from_result(
    pred: DiagramGraph, ref: DiagramGraph, result: GraphLevelResult, rule: CritiqueRule | None = None
) -> Critique:
    """The critique of a comparison already computed (see the module docstring)."""
    rule = rule or CritiqueRule()
    thr = rule.misspell_threshold
    plab = {n.id: n.label for n in pred.nodes}
    pbox = {n.id: n.bbox for n in pred.nodes}
    rlab = {n.id: n.label for n in ref.nodes}
    ref_edges = {(e.source, e.target) for e in ref.edges}
    ref_order = sorted(ref_edges, key=lambda e: (rlab[e[0]], rlab[e[1]], e))
    ref_succ: dict[str, list[str]] = {n.id: [] for n in ref.nodes}
    for e in ref.edges:
        ref_succ[e.source].append(e.target)
    pred_edges = [(e.source, e.target) for e in pred.edges]
    pairs = {p.pred_id: p for p in result.matching.pairs}
    m: dict[str, str] = {p.pred_id: p.ref_id for p in result.matching.pairs}
    missing = [r for r in result.matching.unmatched_ref]
    hallucinated = list(result.matching.unmatched_pred)

    # 1. merged boxes -------------------------------------------------------------
    merges: list[tuple[str, list[str]]] = []
    pred_candidates = hallucinated + sorted(
        (pid for pid, p in pairs.items() if p.string_similarity < thr), key=lambda i: (plab[i], i))
    for pid in pred_candidates:
        pool = [(r, rlab[r]) for r in missing] + ([(m[pid], rlab[m[pid]])] if pid in m else [])
        parts = _merge_parts(plab[pid], pool)
        if not parts or not any(r in missing for r in parts):
            continue
        merges.append((pid, parts))
        m.pop(pid, None)
        missing = [r for r in missing if r not in parts]
        if pid in hallucinated:
            hallucinated.remove(pid)
    merged_pred = {pid for pid, _ in merges}

    # 2. swapped labels (greedy: the best improving exchange first) ----------------
    def relabels(mm: Mapping[str, str], ids: Sequence[str]) -> int:
        return sum(float(string_similarity([plab[i]], [rlab[mm[i]]])[0, 0]) < thr for i in ids)

    p_inc: dict[str, list[tuple[str, str]]] = {}
    for u, v in pred_edges:
        p_inc.setdefault(u, []).append((u, v))
        p_inc.setdefault(v, []).append((u, v))
    r_inc: dict[str, list[tuple[str, str]]] = {}
    for a, b in ref_edges:
        r_inc.setdefault(a, []).append((a, b))
        r_inc.setdefault(b, []).append((a, b))
    swaps: list[tuple[str, str]] = []
    swapped: set[str] = set()
    while True:
        best: tuple[int, str, str] | None = None
        matched = sorted((i for i in m if i not in swapped), key=lambda i: (plab[i], i))
        for p1, p2 in itertools.combinations(matched, 2):
            pe = sorted(set(p_inc.get(p1, []) + p_inc.get(p2, [])))
            if not pe:
                continue
            re_ = sorted(set(r_inc.get(m[p1], []) + r_inc.get(m[p2], [])))
            now = _edge_cost(m, pe, re_, ref_edges) + relabels(m, (p1, p2))
            if now <= 2:
                continue
            alt = dict(m)
            alt[p1], alt[p2] = m[p2], m[p1]
            gain = now - (_edge_cost(alt, pe, re_, ref_edges) + relabels(alt, (p1, p2)))
            if gain > 0 and (best is None or gain > best[0]):
                best = (gain, p1, p2)
        if best is None:
            break
        _, p1, p2 = best
        m[p1], m[p2] = m[p2], m[p1]
        swaps.append((p1, p2))
        swapped.update((p1, p2))

    inv = {r: p for p, r in m.items()}
    sim_now = {p: float(string_similarity([plab[p]], [rlab[r]])[0, 0]) for p, r in m.items()}
    relabel = {p for p in m if sim_now[p] < thr}

    def pname(p: str) -> str:  # a predicted box's label after the relabels
        return rlab[m[p]] if p in relabel else plab[p]

    def rname(r: str) -> str:  # a reference node's label in the edited drawing
        return pname(inv[r]) if r in inv else rlab[r]

    def rbox(r: str) -> Any:
        return pbox.get(inv[r]) if r in inv else None

    findings: list[Finding] = []

    def add(kind: str, message: str, instructions: Sequence[Instruction], n_arrows: int = 0) -> None:
        findings.append(Finding(kind, message, tuple(instructions), rule.blocks(kind, n_arrows)))

    # 3. arrows under the (possibly corrected) matching ----------------------------
    passable = {r for r in rlab if r not in inv}
    recovered: set[tuple[str, str]] = set()
    covered: set[tuple[str, str]] = set()
    shortcuts: list[tuple[str, str, tuple[tuple[str, str], ...]]] = []
    arrows_of: dict[str, int] = {}
    for u, v in pred_edges:
        if u in merged_pred or v in merged_pred:
            continue
        if u not in m or v not in m:
            for x in (u, v):
                if x not in m and x not in merged_pred:
                    arrows_of[x] = arrows_of.get(x, 0) + 1
            continue
        a, b = m[u], m[v]
        region = union_box([pbox[u], pbox[v]])
        hints = ((pname(u), u), (pname(v), v))
        if (a, b) in ref_edges:
            recovered.add((a, b))
            continue
        if (b, a) in ref_edges:  # checked before skip paths: every skipped box will be drawn again
            covered.add((b, a))
            add("reversed_edge",
                f"the arrow between {q(plab[u])}{_box(pbox[u])} and {q(plab[v])}{_box(pbox[v])} points the wrong "
                f"way: the reference has {q(rlab[b])} → {q(rlab[a])}.",
                [Instruction("reverse_edge", {"source": pname(u), "target": pname(v)}, region, hints)])
            continue
        path = skip_path_edges(ref_succ, a, b, passable)
        if path:
            recovered.update(path)
            shortcuts.append((u, v, path))
            continue
        back = skip_path_edges(ref_succ, b, a, passable)
        if back:
            via = sorted({x for e in back for x in e} - {a, b},
                         key=lambda r: rlab[r])
            add("reversed_edge",
                f"the arrow from {q(plab[u])}{_box(pbox[u])} to {q(plab[v])}{_box(pbox[v])} points the wrong way: "
                f"the reference goes from {q(rlab[b])} to {q(rlab[a])} through {', '.join(q(rlab[x]) for x in via)}.",
                [Instruction("remove_edge", {"source": pname(u), "target": pname(v)}, region, hints)])
        else:
            add("unsupported_edge",
                f"the arrow from {q(plab[u])}{_box(pbox[u])} to {q(plab[v])}{_box(pbox[v])} has no counterpart in "
                "the reference.",
                [Instruction("remove_edge", {"source": pname(u), "target": pname(v)}, region, hints)])

    # 4. merged boxes: split, with every arrow the parts need ----------------------
    assigned: set[tuple[str, str]] = set()
    for pid, parts in merges:
        edges = [e for e in ref_order if (e[0] in parts or e[1] in parts) and e not in assigned]
        assigned.update(edges)
        add("merged_node",
            f"the box {q(plab[pid])}{_box(pbox[pid])} draws the reference components "
            f"{' and '.join(q(rlab[r]) for r in parts)} as one box.",
            [Instruction("split_node", {"label": plab[pid], "into": [rlab[r] for r in parts],
                                        "edges": [[rname(a), rname(b)] for a, b in edges]},
                         pbox[pid], ((plab[pid], pid),) + tuple((pname(inv[r]), inv[r]) for e in edges
                                                              for r in e if r in inv))])

    # 5. missing nodes: add, with all their arrows and the shortcuts they end -------
    missing_set = set(missing)
    replaces: dict[str, list[tuple[str, str]]] = {}
    for u, v, path in shortcuts:
        inner = sorted({x for e in path for x in e} - {m[u], m[v]}, key=lambda r: (rlab[r], r))
        host = next((x for x in inner if x in missing_set), None)
        if host is not None:
            replaces.setdefault(host, []).append((u, v))
        else:  # skips only boxes that a split recreates
            add("unsupported_edge",
                f"the arrow from {q(plab[u])}{_box(pbox[u])} to {q(plab[v])}{_box(pbox[v])} skips "
                f"{', '.join(q(rlab[x]) for x in inner)}.",
                [Instruction("remove_edge", {"source": pname(u), "target": pname(v)},
                             union_box([pbox[u], pbox[v]]), ((pname(u), u), (pname(v), v)))])
    for r in sorted(missing, key=lambda x: (rlab[x], x)):
        srcs, tgts = [], []
        for a, b in ref_order:
            if (a, b) in assigned or r not in (a, b) or a == b:
                continue
            if b == r and a in missing_set and a != r:
                continue  # an arrow between two missing boxes goes with its source's addition
            assigned.add((a, b))
            (tgts if a == r else srcs).append(b if a == r else a)
        neigh = srcs + tgts
        rep = [(pname(u), pname(v)) for u, v in replaces.get(r, [])]
        region = union_box([rbox(x) for x in neigh])
        conn = ", ".join(f"{q(rlab[a])} → {q(rlab[b])}" for a, b in
                         [(s, r) for s in srcs] + [(r, t) for t in tgts])
        msg = f"the diagram has no box {q(rlab[r])}"
        msg += f"; the reference has {conn}." if conn else "."
        if rep:
            msg += " The diagram draws " + " and ".join(f"{q(a)} → {q(b)}" for a, b in rep) + " directly instead."
        hints = tuple((rname(x), inv[x]) for x in neigh if x in inv)
        add("missing_node", msg,
            [Instruction("add_node", {"label": rlab[r], "sources": [rname(x) for x in srcs],
                                      "targets": [rname(x) for x in tgts], "replaces": [list(x) for x in rep]},
                         region, hints)], n_arrows=len(neigh))

    # 6. missing arrows between matched boxes ------------------------------------
    for a, b in ref_order:
        if (a, b) in recovered or (a, b) in covered or (a, b) in assigned:
            continue
        if a not in inv or b not in inv:  # pragma: no cover - every other endpoint is handled above
            continue
        u, v = inv[a], inv[b]
        add("missing_edge",
            f"there is no arrow from {q(plab[u])}{_box(pbox[u])} to {q(plab[v])}{_box(pbox[v])}; the reference has "
            f"{q(rlab[a])} → {q(rlab[b])}.",
            [Instruction("add_edge", {"source": pname(u), "target": pname(v)}, union_box([pbox[u], pbox[v]]),
                         ((pname(u), u), (pname(v), v)))])

    # 7. extra boxes --------------------------------------------------------------
    for pid in sorted(hallucinated, key=lambda i: (plab[i], i)):
        n = arrows_of.get(pid, 0)
        tail = ", nor does its arrow" if n == 1 else (f", nor do its {n} arrows" if n else "")
        add("hallucinated_node", f"the box {q(plab[pid])}{_box(pbox[pid])} has no counterpart in the reference{tail}.",
            [Instruction("remove_node", {"label": plab[pid]}, pbox[pid], ((plab[pid], pid),))], n_arrows=n)

    # 8. labels -------------------------------------------------------------------
    for p1, p2 in swaps:
        add("swapped_labels",
            f"the boxes {q(plab[p1])}{_box(pbox[p1])} and {q(plab[p2])}{_box(pbox[p2])} carry each other's labels: "
            f"their arrows are those of {q(rlab[m[p1]])} and {q(rlab[m[p2]])}.",
            [Instruction("relabel", {"from": plab[p], "to": rlab[m[p]]}, pbox[p], ((plab[p], p),))
             for p in (p1, p2) if p in relabel])
    for p in sorted(relabel - swapped, key=lambda i: (plab[i], i)):
        where = f"the box{_box(pbox[p])} reads" if pbox[p] is not None else "the box"
        verb = f"{q(plab[p])} instead of {q(rlab[m[p]])}" if pbox[p] is not None else \
            f"{q(plab[p])} should read {q(rlab[m[p]])}"
        add("misspelled_label", f"{where} {verb}.",
            [Instruction("relabel", {"from": plab[p], "to": rlab[m[p]]}, pbox[p], ((plab[p], p),))])

    findings.sort(key=lambda f: (f.severity, f.message))
    passed = not any(f.blocking for f in findings)
    return Critique(
        passed=passed,
        summary=summarize(passed, findings, len(ref.nodes), len(ref.edges)),
        findings=tuple(findings),
        item_id=ref.id,
        score=result.score,
    )
