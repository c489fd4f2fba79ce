"""The HTML report: one self-contained file for one or more results folders.

:func:`build_report` writes a single ``.html`` with everything inline (CSS in a ``<style>``
element, images as base64 ``data:`` URIs, diff renderings as inline SVG, no scripts, no
external requests), so it can be mailed, archived or opened offline:

1. header: the sciflow version, each run's config hash and models, and a **FALLBACK** banner
   naming every substitute backend a run used (its scores are not comparable with runs that
   used the paper's models);
2. leaderboard: runs side by side (overall/graph/text/image where present, node/edge F1, the
   main score by difficulty with item counts, missing and failed items);
3. plots (matplotlib, embedded PNG): the main score by difficulty per run, and image-level
   against graph-level score per item when image-level scores exist;
4. per item, per run: the generated image (when the prediction is an image), the parse
   overlay (when the row names a ``parsed_graph``), the diff rendering of the reference
   (:func:`sciflow.views.viz.diff_dot`) and the list of errors; unscored items show their error.

The diff is drawn from the diagnostics stored in ``results.jsonl`` (exactly what the run
scored, no model needed). With ``recompute=True``, or for rows without stored diagnostics,
the comparison is re-run with :func:`sciflow.metrics.graph_level.graph_level` under the run's
own configuration from ``manifest.json``.

Every string that comes from a results folder is escaped with :func:`html.escape`.
"""

from __future__ import annotations

import base64
import hashlib
import io
import json
import logging
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from html import escape
from pathlib import Path
from typing import Any

from sciflow import __version__
from sciflow.format.graph import DiagramGraph
from sciflow.views.viz import (
    COLORS,
    diagnostics_rows,
    diff_dot,
    graph_diagnostics,
    item_graphs,
    legend_dot,
    load_image,
    load_results,
    overlay,
    resolve_path,
    to_dot,
)

log = logging.getLogger(__name__)

DIFFICULTIES = ("easy", "medium", "hard")
#: Score columns of the leaderboard, in order, when any run has them.
SCORE_COLUMNS = (
    ("overall", "overall"),
    ("graph", "graph"),
    ("text", "text"),
    ("image", "image"),
    ("node_f1", "node F1"),
    ("edge_f1", "edge F1"),
)
IMAGE_SUFFIXES = frozenset({".png", ".jpg", ".jpeg", ".webp", ".bmp", ".tif", ".tiff", ".gif", ".svg", ".pdf"})
STATUS_TEXT = {
    "ok": "scored",
    "missing_prediction": "missing prediction",
    "prediction_error": "prediction error",
    "reference_error": "reference error",
}
MAX_IMAGE_SIDE = 1400
RUN_COLORS = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f")


@dataclass
class _Run:
    name: str
    path: Path
    rows: list[dict[str, Any]]
    manifest: dict[str, Any]
    summary: dict[str, Any]
    by_id: dict[str, dict[str, Any]] = field(default_factory=dict)

    @property
    def fallbacks(self) -> list[str]:
        return list(self.manifest.get("fallbacks") or self.summary.get("fallbacks") or [])


# ------------------------------------------------------------------ loading
def _read_json(path: Path) -> dict[str, Any]:
    if not path.is_file():
        return {}
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        log.warning("%s: unreadable (%s); ignored", path, exc)
        return {}
    return data if isinstance(data, dict) else {}


def _load_run(path: Path) -> _Run:
    from sciflow.runs.summary import read_summary

    if not (path / "results.jsonl").is_file():
        raise FileNotFoundError(f"{path}: no results.jsonl (is this a sciflow results folder?)")
    rows = load_results(path)
    manifest = _read_json(path / "manifest.json")
    summary = read_summary(path)
    run = _Run(summary.get("run") or path.name, path, rows, manifest, summary)
    run.by_id = {r["id"]: r for r in rows}
    return run


# ------------------------------------------------------------------ helpers
def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return escape(str(v))


def _png_uri(data: bytes) -> str:
    return "data:image/png;base64," + base64.b64encode(data).decode("ascii")


def _image_png(im: Any, max_side: int = MAX_IMAGE_SIDE) -> bytes:
    im = im.convert("RGB")
    w, h = im.size
    if max(w, h) > max_side:
        s = max_side / max(w, h)
        im = im.resize((max(1, round(w * s)), max(1, round(h * s))))
    buf = io.BytesIO()
    im.save(buf, format="PNG", optimize=True)
    return buf.getvalue()


_SVG_DROP = re.compile(r"<\?xml[^>]*\?>|<!DOCTYPE[^>]*>|<!--.*?-->|<title>.*?</title>", re.S)
_SVG_ID = re.compile(r'\bid="([^"]*)"')


def _inline_svg(dot: Any, prefix: str) -> str:
    """Graphviz SVG for inlining: prolog, comments and tooltips dropped, ids made unique
    (graphviz writes no internal references for these graphs, so renaming ids is safe)."""
    svg = dot.pipe(format="svg").decode("utf-8")
    svg = _SVG_DROP.sub("", svg).strip()
    svg = _SVG_ID.sub(lambda m: f'id="{prefix}{m.group(1)}"', svg)
    return svg.replace("<svg ", '<svg class="graph" role="img" ', 1)


def _slug(s: str) -> str:
    """An HTML id for an item id; ids that had to be changed get a hash, so two never collide."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-")
    if safe == s:
        return s
    return f"{safe or 'item'}-{hashlib.sha1(s.encode('utf-8')).hexdigest()[:8]}"


def _main_metric(runs: Sequence[_Run]) -> str:
    if runs and all(r.summary.get("means", {}).get("overall") is not None for r in runs):
        return "overall"
    return "graph"


def _config_for(run: _Run) -> Any:
    from sciflow.config import ConfigError, load_config

    overrides = run.manifest.get("config")
    try:
        return load_config(overrides=overrides if isinstance(overrides, Mapping) else None)
    except (ConfigError, KeyError, TypeError, ValueError) as exc:
        log.warning("%s: manifest config not usable (%s); using the pinned defaults", run.path, exc)
        return load_config()


def _model_text(desc: Any) -> str:
    if not isinstance(desc, Mapping):
        return str(desc)
    if isinstance(desc.get("backends"), Mapping):  # the parser's fingerprint: agent -> backend
        return ", ".join(f"{agent}={b}" for agent, b in desc["backends"].items())
    name = desc.get("model") or desc.get("name") or desc.get("backend") or "?"
    backend = desc.get("backend")
    return f"{name}" + (f" ({backend})" if backend and backend != name else "")


# ------------------------------------------------------------------ sections
CSS = """
:root { --fg:#1d2730; --muted:#5f6b76; --line:#d5dde3; --bg:#f6f8fa; --ok:#2e7d32; --bad:#c62828;
  --warn:#e65100; }
* { box-sizing: border-box; }
body { font: 14px/1.45 -apple-system, "Segoe UI", "DejaVu Sans", Helvetica, Arial, sans-serif; color: var(--fg);
  margin: 0; background: #fff; }
header { padding: 18px 28px 10px; border-bottom: 1px solid var(--line); background: var(--bg); }
h1 { font-size: 22px; margin: 0 0 4px; }
h2 { font-size: 18px; margin: 28px 0 10px; border-bottom: 1px solid var(--line); padding-bottom: 4px; }
h3 { font-size: 15px; margin: 0 0 6px; }
main { padding: 0 28px 40px; }
.muted { color: var(--muted); }
code, .mono { font-family: "DejaVu Sans Mono", Menlo, Consolas, monospace; font-size: 12px; }
table { border-collapse: collapse; margin: 6px 0 10px; }
th, td { border: 1px solid var(--line); padding: 4px 8px; text-align: left; vertical-align: top; }
th { background: var(--bg); font-weight: 600; }
td.num { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
td.best { font-weight: 700; }
.banner { margin: 12px 0 4px; padding: 10px 14px; border-radius: 6px; border: 2px solid var(--warn);
  background: #fff3e0; }
.banner strong.tag { background: var(--warn); color: #fff; padding: 1px 8px; border-radius: 4px;
  letter-spacing: .05em; margin-right: 6px; }
.banner ul { margin: 6px 0 0 18px; padding: 0; }
.plots { display: flex; flex-wrap: wrap; gap: 16px; }
.plots figure { margin: 0; }
.plots img { max-width: 100%; border: 1px solid var(--line); }
.note { color: var(--muted); font-style: italic; }
nav.toc { columns: 3 260px; margin: 6px 0 0; padding: 0; list-style: none; }
nav.toc li { margin: 0 0 3px; }
.badge { display: inline-block; padding: 0 6px; border-radius: 9px; font-size: 11px; color: #fff;
  background: var(--muted); margin-left: 4px; white-space: nowrap; }
.badge.ok { background: var(--ok); } .badge.missing_prediction, .badge.prediction_error,
.badge.reference_error { background: var(--bad); }
section.item { margin: 22px 0 0; }
.runs { display: grid; grid-template-columns: repeat(auto-fit, minmax(460px, 1fr)); gap: 14px; }
.run-item { border: 1px solid var(--line); border-radius: 8px; padding: 10px 12px; min-width: 0; }
.run-item.status-ok { border-top: 4px solid var(--ok); }
.run-item:not(.status-ok) { border-top: 4px solid var(--bad); }
.scores { margin: 0 0 8px; }
.scores span { display: inline-block; margin: 0 10px 2px 0; }
figure.fig { margin: 8px 0; }
figure.fig figcaption { font-size: 12px; color: var(--muted); margin-top: 2px; }
figure.fig img { max-width: 100%; height: auto; border: 1px solid var(--line); }
svg.graph { max-width: 100%; height: auto; display: block; }
pre.error { white-space: pre-wrap; word-break: break-word; background: #fdecec; border: 1px solid #f3b9b9;
  padding: 8px; border-radius: 4px; margin: 6px 0; }
table.diagnostics { font-size: 12.5px; width: 100%; }
table.diagnostics tr.d-missing-node td:first-child, table.diagnostics tr.d-missing-edge td:first-child
  { color: var(--bad); }
table.diagnostics tr.d-hallucinated-node td:first-child, table.diagnostics tr.d-unsupported-edge td:first-child,
table.diagnostics tr.d-unmatched-endpoint-edge td:first-child { color: var(--warn); }
table.diagnostics tr.d-reversed-edge td:first-child { color: #7b1fa2; }
table.diagnostics tr.d-skip-path-credit td:first-child { color: var(--ok); }
ul.notes { margin: 4px 0; padding-left: 18px; color: var(--muted); }
"""


def _header(runs: Sequence[_Run], title: str) -> str:
    versions = sorted({str(r.manifest.get("sciflow_version", "?")) for r in runs})
    hashes = sorted({str(r.manifest.get("config_hash") or r.summary.get("config_hash") or "?") for r in runs})
    parts = [f"<header><h1>{escape(title)}</h1>"]
    parts.append(
        f'<div class="muted">report by sciflow {escape(__version__)} · results by sciflow '
        f"{escape(', '.join(versions))} · config hash "
        + ", ".join(f'<code title="{escape(h)}">{escape(h[:12])}</code>' for h in hashes)
        + (" <strong>(runs used different configurations)</strong>" if len(hashes) > 1 else "")
        + "</div>"
    )
    fb = [r for r in runs if r.fallbacks]
    if fb:
        items = []
        for r in fb:
            models = r.manifest.get("models") or {}
            what = ", ".join(f"{escape(role)}: {escape(_model_text(models.get(role, '?')))}" for role in r.fallbacks)
            items.append(f"<li><strong>{escape(r.name)}</strong> — {what}</li>")
        parts.append(
            '<div class="banner fallback" id="fallback-banner"><strong class="tag">FALLBACK</strong>'
            "Some runs used substitute backends instead of the paper's models; their scores are not "
            "comparable with runs that did not.<ul>" + "".join(items) + "</ul></div>"
        )
    rows = []
    for r in runs:
        models = r.manifest.get("models") or {}
        mtext = "; ".join(f"{escape(k)}: {escape(_model_text(v))}" for k, v in sorted(models.items())) or "–"
        h = str(r.manifest.get("config_hash") or r.summary.get("config_hash") or "")
        rows.append(
            f"<tr><td>{escape(r.name)}</td><td class='mono'>{escape(str(r.path))}</td>"
            f"<td><code title='{escape(h)}'>{escape(h[:12])}</code></td><td>{mtext}</td>"
            f"<td>{escape(', '.join(r.fallbacks)) or '–'}</td></tr>"
        )
    parts.append(
        '<table class="runs-table"><thead><tr><th>run</th><th>results folder</th><th>config</th><th>models</th>'
        "<th>fallbacks</th></tr></thead><tbody>" + "".join(rows) + "</tbody></table></header>"
    )
    return "".join(parts)


def _leaderboard(runs: Sequence[_Run]) -> str:
    metric = _main_metric(runs)
    cols = [(k, lab) for k, lab in SCORE_COLUMNS if any(r.summary.get("means", {}).get(k) is not None for r in runs)]
    best: dict[str, float] = {}
    for k, _ in cols:
        vals = [r.summary["means"][k] for r in runs if r.summary.get("means", {}).get(k) is not None]
        if len(vals) > 1:
            best[k] = max(vals)
    head = ["run", "items", "scored", "missing", "errors"] + [lab for _, lab in cols]
    head += [f"{d} ({metric})" for d in DIFFICULTIES] + ["fallbacks"]
    body = []
    for r in runs:
        s = r.summary
        cells = [f"<td>{escape(r.name)}</td>"]
        cells += [f'<td class="num">{int(s.get(k, 0))}</td>' for k in ("n_items", "n_scored", "n_missing")]
        n_err = int(s.get("n_prediction_errors", 0)) + int(s.get("n_reference_errors", 0))
        cells.append(f'<td class="num">{n_err}</td>')
        for k, _ in cols:
            v = s.get("means", {}).get(k)
            cls = "num best" if v is not None and k in best and v == best[k] else "num"
            cells.append(f'<td class="{cls}">{_fmt(v)}</td>')
        for d in DIFFICULTIES:
            cell = s.get("by_difficulty", {}).get(d)
            if cell:
                n = f'<span class="muted">(n={cell["n"]})</span>'
                cells.append(f'<td class="num">{_fmt(cell.get(metric))} {n}</td>')
            else:
                cells.append('<td class="num muted">–</td>')
        cells.append(f"<td>{escape(', '.join(r.fallbacks)) or '–'}</td>")
        body.append(f'<tr class="leaderboard-row">{"".join(cells)}</tr>')
    out = [
        '<h2 id="leaderboard">Leaderboard</h2>',
        '<p class="muted">Means over scored items; a missing or unreadable prediction counts as 0; items with an '
        "unusable reference are left out. Best value per column in bold.</p>",
        '<table class="leaderboard"><thead><tr>' + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead>",
        "<tbody>" + "".join(body) + "</tbody></table>",
    ]
    unscored = []
    for r in runs:
        for rid in r.summary.get("missing", []):
            unscored.append(f"<li>{escape(r.name)} · <a href='#item-{escape(_slug(rid))}'>{escape(rid)}</a>: "
                            "missing prediction</li>")
        for e in r.summary.get("errors", []):
            unscored.append(f"<li>{escape(r.name)} · <a href='#item-{escape(_slug(e['id']))}'>{escape(e['id'])}</a>: "
                            f"{escape(STATUS_TEXT.get(e['status'], e['status']))}</li>")
    if unscored:
        out.append('<p><strong>Not scored:</strong></p><ul class="unscored">' + "".join(unscored) + "</ul>")
    return "".join(out)


def _plots(runs: Sequence[_Run]) -> str:
    import matplotlib

    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    metric = _main_metric(runs)
    out = ['<h2 id="plots">Plots</h2><div class="plots">']

    def save(fig: Any, alt: str, caption: str) -> str:
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=110, bbox_inches="tight", metadata={"Software": None})
        plt.close(fig)
        return (f'<figure class="fig"><img alt="{escape(alt)}" src="{_png_uri(buf.getvalue())}">'
                f"<figcaption>{escape(caption)}</figcaption></figure>")

    diffs = [d for d in DIFFICULTIES if any(d in r.summary.get("by_difficulty", {}) for r in runs)]
    if diffs:
        fig, ax = plt.subplots(figsize=(6.4, 3.4))
        width = 0.8 / max(1, len(runs))
        for i, r in enumerate(runs):
            xs, ys, ns = [], [], []
            for j, d in enumerate(diffs):
                cell = r.summary.get("by_difficulty", {}).get(d)
                if cell and cell.get(metric) is not None:
                    xs.append(j + (i - (len(runs) - 1) / 2) * width)
                    ys.append(cell[metric])
                    ns.append(cell["n"])
            bars = ax.bar(xs, ys, width=width * 0.95, label=r.name, color=RUN_COLORS[i % len(RUN_COLORS)])
            for b, n in zip(bars, ns, strict=True):
                ax.annotate(f"n={n}", (b.get_x() + b.get_width() / 2, b.get_height()), ha="center", va="bottom",
                            fontsize=7, xytext=(0, 2), textcoords="offset points")
        ax.set_xticks(range(len(diffs)), diffs)
        ax.set_ylim(0, 1.1)
        ax.set_ylabel(f"{metric} score")
        ax.set_title(f"{metric} score by difficulty")
        ax.legend(fontsize=8, loc="upper right", frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
        out.append(save(fig, f"{metric} score by difficulty per run", f"Mean {metric} score by difficulty; "
                        "n = items behind each bar."))
    else:
        out.append('<p class="note">No difficulty labels in these runs; the by-difficulty plot is omitted.</p>')

    pts = [
        (i, r.name, row["id"], row["scores"]["graph"], row["scores"]["image"])
        for i, r in enumerate(runs)
        for row in r.rows
        if isinstance(row.get("scores"), Mapping)
        and row["scores"].get("image") is not None
        and row["scores"].get("graph") is not None
    ]
    if pts:
        fig, ax = plt.subplots(figsize=(4.6, 4.2))
        for i, r in enumerate(runs):
            mine = [p for p in pts if p[0] == i]
            if mine:
                ax.scatter([p[3] for p in mine], [p[4] for p in mine], s=28, label=r.name, alpha=0.85,
                           color=RUN_COLORS[i % len(RUN_COLORS)])
        ax.plot([0, 1], [0, 1], color="#bbb", lw=1, ls="--")
        ax.set_xlim(-0.03, 1.03)
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("graph-level score")
        ax.set_ylabel("image-level score")
        ax.set_title("image-level vs graph-level, per item")
        ax.legend(fontsize=8, frameon=False)
        ax.spines[["top", "right"]].set_visible(False)
        out.append(save(fig, "image-level against graph-level score per item",
                        "Each point is one item of one run; the dashed line is equality."))
    else:
        out.append('<p class="note" id="no-image-plot">No image-level scores in these runs, so the '
                   "image-level vs graph-level plot is omitted.</p>")
    out.append("</div>")
    return "".join(out)


class _Renderer:
    """Per-item renderings, with the reference renderings shared across runs."""

    def __init__(self, recompute: bool, max_image_side: int):
        self.recompute = recompute
        self.max_image_side = max_image_side
        self.counter = 0
        self.configs: dict[str, Any] = {}

    def svg(self, dot: Any) -> str:
        self.counter += 1
        try:
            return _inline_svg(dot, f"g{self.counter}_")
        except Exception as exc:  # the dot binary missing or failing: say so, keep the report
            log.warning("graphviz rendering failed: %s", exc)
            return f'<pre class="error">rendering failed: {escape(str(exc))}</pre>'

    def diagnostics(self, run: _Run, row: Mapping[str, Any], pred: DiagramGraph | None,
                    ref: DiagramGraph | None) -> Mapping[str, Any] | None:
        stored = graph_diagnostics(row) if row.get("graph_level") else {}
        if stored and not self.recompute:
            return stored
        if pred is None or ref is None:
            return stored or None
        from sciflow.metrics.graph_level import graph_level

        key = str(run.path)
        if key not in self.configs:
            self.configs[key] = _config_for(run)
        cfg = self.configs[key]
        try:
            return graph_level(pred, ref, matching=cfg.matching, weights=cfg.graph).diagnostics()
        except Exception as exc:  # an embedder that cannot load here: fall back to what was stored
            log.warning("%s/%s: recomputing the comparison failed (%s)", run.name, row.get("id"), exc)
            return stored or None

    def image(self, path: Path, caption: str, cls: str, graph: DiagramGraph | None = None,
              diag: Mapping[str, Any] | None = None) -> str:
        try:
            im = load_image(path)
            if graph is not None:
                im = overlay(im, graph, diagnostics=diag or None)
            data = _image_png(im, self.max_image_side)
        except Exception as exc:  # unreadable image: report it in place
            return f'<pre class="error">{escape(caption)}: cannot show {escape(path.name)}: {escape(str(exc))}</pre>'
        return (f'<figure class="fig {cls}"><img alt="{escape(caption)}" src="{_png_uri(data)}">'
                f"<figcaption>{escape(caption)}</figcaption></figure>")


def _scores_line(row: Mapping[str, Any]) -> str:
    scores = row.get("scores") or {}
    chips = []
    for k, lab in SCORE_COLUMNS:
        if scores.get(k) is not None:
            chips.append(f"<span>{escape(lab)} <strong>{_fmt(scores[k])}</strong></span>")
    return f'<div class="scores">{"".join(chips)}</div>' if chips else ""


def _run_item(rend: _Renderer, run: _Run, row: Mapping[str, Any] | None) -> str:
    if row is None:
        return (f'<div class="run-item status-absent"><h3>{escape(run.name)}<span class="badge">not in run</span>'
                "</h3></div>")
    status = str(row.get("status", "?"))
    parts = [f'<div class="run-item status-{escape(_slug(status))}" data-run="{escape(run.name)}">',
             f'<h3>{escape(run.name)}<span class="badge {escape(_slug(status))}">'
             f"{escape(STATUS_TEXT.get(status, status))}</span></h3>",
             _scores_line(row)]
    if status != "ok":
        parts.append(f'<pre class="error">{escape(str(row.get("error") or status))}</pre>')
    notes = row.get("notes") or []
    if notes:
        parts.append('<ul class="notes">' + "".join(f"<li>{escape(str(n))}</li>" for n in notes) + "</ul>")

    pred, ref = item_graphs(run.path, row)
    pred_path = resolve_path(run.path, row.get("prediction"))
    is_image = pred_path is not None and pred_path.suffix.lower() in IMAGE_SUFFIXES
    diag = rend.diagnostics(run, row, pred, ref) if status == "ok" else None

    if is_image and pred_path is not None:
        parts.append(rend.image(pred_path, "generated image", "generated"))
        if pred is not None and row.get("parsed_graph"):
            parts.append(rend.image(pred_path, "parse overlay: the graph the parser read (green matched, "
                                    "orange hallucinated, purple reversed)", "overlay", graph=pred, diag=diag))
    elif row.get("prediction") and pred_path is None and status == "ok":
        parts.append(f'<p class="note">prediction file not found: {escape(str(row.get("prediction")))}</p>')

    if ref is not None and diag:
        parts.append('<figure class="fig diff">' + rend.svg(diff_dot(pred, ref, diag, legend=False)) +
                     "<figcaption>reference graph coloured by the comparison</figcaption></figure>")
    elif ref is not None and status in ("missing_prediction", "prediction_error"):
        parts.append('<figure class="fig reference">' + rend.svg(to_dot(ref)) +
                     "<figcaption>reference graph (nothing to compare)</figcaption></figure>")
    elif status == "ok" and ref is None:
        parts.append(f'<p class="note">reference file not found: {escape(str(row.get("reference")))}</p>')

    if diag:
        table = diagnostics_rows(diag, pred=pred, matched=False)
        n_match = len(diag.get("matched_nodes", []))
        head = f"<p><strong>{len(table)} error{'s' * (len(table) != 1)}</strong> · {n_match} nodes matched</p>"
        parts.append(head + (table.to_html() if table else ""))
    crit = row.get("critique")
    if isinstance(crit, Mapping):  # written by `sciflow score --critique`
        verdict = "pass" if crit.get("passed") else "fail"
        items = "".join(f"<li>{escape(str(f.get('message', '')))}</li>" for f in crit.get("findings", []))
        edits = "".join(f"<li><code>{escape(str(i.get('text') or i.get('op', '')))}</code></li>"
                        for i in crit.get("instructions", []))
        parts.append(f'<div class="critique"><p><strong>critique: {verdict}</strong> · '
                     f'{escape(str(crit.get("summary", "")))}</p>'
                     + (f"<p>explanation</p><ol>{items}</ol>" if items else "")
                     + (f"<p>edit instructions</p><ol>{edits}</ol>" if edits else "") + "</div>")
    parts.append("</div>")
    return "".join(parts)


def _items(runs: Sequence[_Run], rend: _Renderer) -> str:
    ids = sorted({rid for r in runs for rid in r.by_id})
    toc = []
    for rid in ids:
        badges = []
        for r in runs:
            row = r.by_id.get(rid)
            if row is None:
                continue
            st = str(row.get("status", "?"))
            g = (row.get("scores") or {}).get("graph")
            text = _fmt(g) if st == "ok" and g is not None else STATUS_TEXT.get(st, st)
            badges.append(f'<span class="badge {escape(_slug(st))}" title="{escape(r.name)}">{text}</span>')
        toc.append(f'<li><a href="#item-{escape(_slug(rid))}">{escape(rid)}</a>{"".join(badges)}</li>')
    order = ", ".join(escape(r.name) for r in runs)
    out = ['<h2 id="items">Items</h2>',
           f'<p class="muted">Badges: graph score (or status) per run, in the order {order}.</p>',
           '<nav class="toc"><ul class="toc">' + "".join(toc) + "</ul></nav>",
           '<figure class="fig legend">' + rend.svg(legend_dot()) +
           "<figcaption>how to read the diff renderings: the reference graph, coloured by what the "
           "diagram drew</figcaption></figure>"]
    for rid in ids:
        meta: dict[str, Any] = {}
        for r in runs:
            meta = meta or dict((r.by_id.get(rid) or {}).get("meta") or {})
        mtext = " · ".join(f"{escape(str(k))}: {escape(str(v))}" for k, v in sorted(meta.items()))
        out.append(f'<section class="item" id="item-{escape(_slug(rid))}"><h2>{escape(rid)} '
                   f'<span class="muted" style="font-size:13px;font-weight:normal">{mtext}</span></h2>'
                   '<div class="runs">')
        out += [_run_item(rend, r, r.by_id.get(rid)) for r in runs]
        out.append("</div></section>")
    return "".join(out)


def build_report(
    results_dirs: Sequence[str | Path],
    out_html: str | Path,
    *,
    title: str = "sciflow report",
    recompute: bool = False,
    max_image_side: int = MAX_IMAGE_SIDE,
) -> Path:
    """Write one self-contained HTML report for the results folders (see the module docstring);
    returns the path written. Runs appear in the order given; two folders with the same run
    name are told apart by a suffix.

    >>> runs = [Path("runs/demo/careful-gen"), Path("runs/demo/sloppy-gen")]
    >>> build_report(runs, Path("report.html"))  # doctest: +SKIP
    PosixPath('report.html')
    """
    if not results_dirs:
        raise ValueError("build_report needs at least one results folder")
    runs = [_load_run(Path(d)) for d in results_dirs]
    seen: dict[str, int] = {}
    for r in runs:
        seen[r.name] = seen.get(r.name, 0) + 1
        if seen[r.name] > 1:
            r.name = f"{r.name} ({seen[r.name]})"
    rend = _Renderer(recompute, max_image_side)
    body = [
        _header(runs, title),
        "<main>",
        _leaderboard(runs),
        _plots(runs),
        _items(runs, rend),
        f'<p class="muted" style="margin-top:30px">Colours of the diff renderings: '
        f'<span style="color:{COLORS["matched"][0]}">green</span> matched / recovered, '
        f'<span style="color:{COLORS["missing"][0]}">red dashed</span> missing, '
        f'<span style="color:{COLORS["hallucinated"][0]}">orange</span> hallucinated / unsupported, '
        f'<span style="color:{COLORS["reversed"][0]}">purple</span> reversed; "skip": reference edges credited '
        "because the diagram skipped the nodes between.</p>",
        "</main>",
    ]
    html = (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>" + "".join(body) + "</body></html>\n"
    )
    out = Path(out_html)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out
