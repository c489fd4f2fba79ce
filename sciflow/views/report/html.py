"""The HTML report: one self-contained page for one or more results folders.

:func:`build_report` writes a ``.html`` with everything it shows inline (CSS in a ``<style>``
element, images as small WebP thumbnails in ``data:`` URIs, diff renderings as inline SVG, a few
lines of vendored JavaScript to sort and filter the tables, no external requests), so it can be
mailed, archived or opened offline; beside it, ``<name>_files/`` holds the full-size images that
a click on a thumbnail opens. At benchmark size (60 image items) the page is about 2-3 MB and
builds in seconds (the items render in parallel):

1. header: the sciflow version, each run's config hash and models, and a **FALLBACK** banner
   naming every substitute backend a run used (its scores are not comparable with runs that
   used the paper's models);
2. leaderboard: runs side by side (overall/graph/text/image where present, node/edge F1, the
   main score by difficulty with item counts, missing and failed items);
3. plots (matplotlib, embedded PNG; :mod:`sciflow.views.report.charts`): the main score by
   difficulty per run, and image-level against graph-level score per item when image-level
   scores exist;
4. per item, per run: the generated image (when the prediction is an image), the parse
   overlay (when the row names a ``parsed_graph``), the diff rendering of the reference
   (:func:`sciflow.views.diff.diff_dot`) and the list of errors; unscored items show their error;
   the critique and the claims checked on the item, if any (:mod:`sciflow.views.report.verdicts`).

The diff is drawn from the diagnostics stored in ``results.jsonl`` (exactly what the run
scored, no model needed). With ``recompute=True``, or for rows without stored diagnostics,
the comparison is re-run with :func:`sciflow.metrics.graph_level.graph_level` under the run's
own configuration from ``manifest.json``.

Every string that comes from a results folder is escaped with :func:`html.escape`.

The folders are read by :mod:`sciflow.views.report.data`, images and SVG embedded by
:mod:`sciflow.views.report.embed`, the style sheet is :mod:`sciflow.views.report.style`; this
module writes the sections and the page.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
import shutil
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from html import escape
from pathlib import Path
from typing import Any
from urllib.parse import quote

from sciflow import __version__
from sciflow.bench.drawing import to_dot
from sciflow.format.graph import DiagramGraph
from sciflow.views.diff import COLORS, diff_dot, graph_diagnostics, legend_dot
from sciflow.views.notebook import diagnostics_rows
from sciflow.views.overlays import load_image, overlay
from sciflow.views.reliability import reliability_caption, reliability_overlay
from sciflow.views.report.charts import plots
from sciflow.views.report.data import DIFFICULTIES, Run, config_for, load_run, main_metric
from sciflow.views.report.embed import MAX_IMAGE_SIDE, full_size_file, inline_svg, thumbnail_uri
from sciflow.views.report.style import CSS, SCRIPT
from sciflow.views.report.verdicts import claims_part, critique_part
from sciflow.views.results import item_graphs, resolve_path

log = logging.getLogger(__name__)

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


# ------------------------------------------------------------------ helpers
def _fmt(v: Any, digits: int = 3) -> str:
    if v is None:
        return "–"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return escape(str(v))


def _slug(s: str) -> str:
    """An HTML id for an item id; ids that had to be changed get a hash, so two never collide."""
    safe = re.sub(r"[^A-Za-z0-9_.-]+", "-", s).strip("-")
    if safe == s:
        return s
    return f"{safe or 'item'}-{hashlib.sha1(s.encode('utf-8')).hexdigest()[:8]}"


def _model_text(desc: Any) -> str:
    if not isinstance(desc, Mapping):
        return str(desc)
    if isinstance(desc.get("backends"), Mapping):  # the parser's fingerprint: agent -> backend
        return ", ".join(f"{agent}={b}" for agent, b in desc["backends"].items())
    name = desc.get("model") or desc.get("name") or desc.get("backend") or "?"
    backend = desc.get("backend")
    return f"{name}" + (f" ({backend})" if backend and backend != name else "")


# ------------------------------------------------------------------ sections
def _header(runs: Sequence[Run], title: str) -> str:
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


def _leaderboard(runs: Sequence[Run]) -> str:
    metric = main_metric(runs)
    cols = [(k, lab) for k, lab in SCORE_COLUMNS if any(r.summary.get("means", {}).get(k) is not None for r in runs)]
    best: dict[str, float] = {}
    for k, _ in cols:
        vals = [r.summary["means"][k] for r in runs if r.summary.get("means", {}).get(k) is not None]
        if len(vals) > 1:
            best[k] = max(vals)
    head = ["run", "items", "scored", "missing", "errors"] + [lab for _, lab in cols]
    head += [f"{d} ({metric})" for d in DIFFICULTIES] + ["fallbacks", "low parse reliability"]
    body = []
    for r in runs:
        s = r.summary
        cells = [f"<td>{escape(r.name)}</td>"]
        cells += [f'<td class="num">{int(s.get(k, 0))}</td>' for k in ("n_items", "n_scored", "n_missing")]
        n_err = int(s.get("n_prediction_errors", 0)) + int(s.get("n_reference_errors", 0))
        cells.append(f'<td class="num">{n_err}</td>')
        cis = (s.get("intervals") or {}).get("means") or {}
        for k, _ in cols:
            v = s.get("means", {}).get(k)
            cls = "num best" if v is not None and k in best and v == best[k] else "num"
            ci = cis.get(k)
            ci_text = f'<br><span class="ci">[{_fmt(ci[0])}, {_fmt(ci[1])}]</span>' if ci else ""
            cells.append(f'<td class="{cls}">{_fmt(v)}{ci_text}</td>')
        for d in DIFFICULTIES:
            cell = s.get("by_difficulty", {}).get(d)
            if cell:
                n = f'<span class="muted">(n={cell["n"]})</span>'
                cells.append(f'<td class="num">{_fmt(cell.get(metric))} {n}</td>')
            else:
                cells.append('<td class="num muted">–</td>')
        cells.append(f"<td>{escape(', '.join(r.fallbacks)) or '–'}</td>")
        cells.append(_flagged_cell(s))
        body.append(f'<tr class="leaderboard-row">{"".join(cells)}</tr>')
    out = [
        '<h2 id="leaderboard">Leaderboard</h2>',
        '<p class="muted">Means over scored items; a missing or unreadable prediction counts as 0; items with an '
        "unusable reference are left out. Best value per column in bold; under each mean its 95% bootstrap "
        "interval over items. <em>Low parse reliability</em>: the parsed items flagged because the parser's "
        "evidence was weak, and the graph mean without them.</p>",
        '<table class="leaderboard sortable"><thead><tr>' + "".join(f"<th>{escape(h)}</th>" for h in head)
        + "</tr></thead>",
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


class _Renderer:
    """Per-item renderings, with the reference renderings shared across runs. Images are shown
    as thumbnails (:func:`~sciflow.views.report.embed.thumbnail_uri`) linking to their full size,
    written once into ``files_dir`` (``<report>_files/`` beside the page)."""

    def __init__(self, recompute: bool, max_image_side: int, files_dir: Path | None = None):
        self.recompute = recompute
        self.max_image_side = max_image_side
        self.files_dir = files_dir
        self.configs: dict[str, Any] = {}

    def svg(self, dot: Any, key: str) -> str:
        """Inline SVG of ``dot``, its ids prefixed from ``key`` (the same page for the same runs,
        whatever order the items were drawn in)."""
        try:
            return inline_svg(dot, f"g{hashlib.sha1(key.encode('utf-8')).hexdigest()[:10]}_")
        except Exception as exc:  # the dot binary missing or failing: say so, keep the report
            log.warning("graphviz rendering failed: %s", exc)
            return f'<pre class="error">rendering failed: {escape(str(exc))}</pre>'

    def diagnostics(self, run: Run, row: Mapping[str, Any], pred: DiagramGraph | None,
                    ref: DiagramGraph | None) -> Mapping[str, Any] | None:
        stored = graph_diagnostics(row) if row.get("graph_level") else {}
        if stored and not self.recompute:
            return stored
        if pred is None or ref is None:
            return stored or None
        from sciflow.metrics.graph_level import graph_level

        key = str(run.path)
        if key not in self.configs:
            self.configs[key] = config_for(run)
        cfg = self.configs[key]
        try:
            return graph_level(pred, ref, matching=cfg.matching, weights=cfg.graph).diagnostics()
        except Exception as exc:  # an embedder that cannot load here: fall back to what was stored
            log.warning("%s/%s: recomputing the comparison failed (%s)", run.name, row.get("id"), exc)
            return stored or None

    def image(self, path: Path, caption: str, cls: str, graph: DiagramGraph | None = None,
              diag: Mapping[str, Any] | None = None, im: Any = None, key: str = "") -> str:
        try:
            im = load_image(path) if im is None else im
            if graph is not None:
                drawn = overlay(im, graph, diagnostics=diag or None)
                return self.figure(drawn, caption, cls, key or f"{path.stem}-{cls}")
            return self.figure(im, caption, cls, key or f"{path.stem}-{cls}", original=path)
        except Exception as exc:  # unreadable image: report it in place
            return f'<pre class="error">{escape(caption)}: cannot show {escape(path.name)}: {escape(str(exc))}</pre>'

    def figure(self, im: Any, caption: str, cls: str, key: str, original: Path | None = None) -> str:
        """A thumbnail of ``im`` that opens its full size (a file in ``files_dir``: a copy of
        ``original`` when given, else ``im`` as JPEG) on click."""
        img = (f'<img alt="{escape(caption)}" loading="lazy" decoding="async" src="{thumbnail_uri(im)}">')
        if self.files_dir is not None:
            digest = hashlib.sha1(key.encode("utf-8")).hexdigest()[:8]
            if original is not None and original.suffix.lower() in (".png", ".jpg", ".jpeg", ".webp", ".gif"):
                name = f"{_slug(key)}-{digest}{original.suffix.lower()}"
                self.files_dir.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(original, self.files_dir / name)
            else:
                name = f"{_slug(key)}-{digest}.jpg"
                full_size_file(im, self.files_dir / name, self.max_image_side)
            img = (f'<a href="{escape(quote(self.files_dir.name))}/{escape(name)}" target="_blank" '
                   f'title="full size">{img}</a>')
        return f'<figure class="fig {cls}">{img}<figcaption>{escape(caption)}</figcaption></figure>'


def _scores_line(row: Mapping[str, Any]) -> str:
    scores = row.get("scores") or {}
    chips = []
    for k, lab in SCORE_COLUMNS:
        if scores.get(k) is not None:
            chips.append(f"<span>{escape(lab)} <strong>{_fmt(scores[k])}</strong></span>")
    return f'<div class="scores">{"".join(chips)}</div>' if chips else ""


def _flagged_cell(s: Mapping[str, Any]) -> str:
    """Leaderboard cell: flagged / parsed items and the graph mean without the flagged ones."""
    rel = s.get("reliability") or {}
    if not rel.get("n_parsed"):
        return '<td class="num muted">–</td>'
    without = (rel.get("means_without_flagged") or {}).get("graph")
    return (f'<td class="num">{int(rel["n_flagged"])}/{int(rel["n_parsed"])} '
            f'<span class="muted">(graph without: {_fmt(without)})</span></td>')


def _reliability_part(rend: _Renderer, row: Mapping[str, Any], pred_path: Path, pred: DiagramGraph | None) -> str:
    """A flagged item: the badge and the overlay explaining why; otherwise one line."""
    caption = reliability_caption(row)
    if not row.get("low_reliability"):
        return f'<p class="muted">{escape(caption)}</p>'
    badge = '<p><span class="badge low-reliability">low parse reliability</span> the score may reflect the ' \
            "parser misreading the figure more than the figure itself</p>"
    if pred is None:
        return badge + f'<p class="muted">{escape(caption)}</p>'
    legend = ("red: ink nothing explains, orange: connector ends attached to nothing, blue: connectors "
              "without an arrowhead, purple: nodes found by one agent")
    try:
        return badge + rend.figure(reliability_overlay(pred_path, pred), f"{caption} ({legend})",
                                   "overlay reliability", f"{pred_path.stem}-{row.get('id')}-reliability")
    except Exception as exc:  # unreadable image: say so in place
        return badge + f'<pre class="error">cannot draw the reliability overlay: {escape(str(exc))}</pre>'


def _run_item(rend: _Renderer, run: Run, row: Mapping[str, Any] | None) -> str:
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
        key = f"{run.name}-{row.get('id')}"
        try:
            im = load_image(pred_path)  # once for the image and its overlay
        except Exception:  # noqa: BLE001 - rend.image says what is wrong, in place
            im = None
        parts.append(rend.image(pred_path, "generated image", "generated", im=im, key=f"{key}-generated"))
        if pred is not None and row.get("parsed_graph"):
            parts.append(rend.image(pred_path, "parse overlay: the graph the parser read (green matched, "
                                    "orange hallucinated, purple reversed)", "overlay", graph=pred, diag=diag,
                                    im=im, key=f"{key}-overlay"))
        if row.get("parse_reliability") is not None:
            parts.append(_reliability_part(rend, row, pred_path, pred))
    elif row.get("prediction") and pred_path is None and status == "ok":
        parts.append(f'<p class="note">prediction file not found: {escape(str(row.get("prediction")))}</p>')

    if ref is not None and diag:
        drawn = rend.svg(diff_dot(pred, ref, diag, legend=False), f"{run.name}/{row.get('id')}/diff")
        parts.append('<figure class="fig diff">' + drawn +
                     "<figcaption>reference graph coloured by the comparison</figcaption></figure>")
    elif ref is not None and status in ("missing_prediction", "prediction_error"):
        drawn = rend.svg(to_dot(ref), f"{run.name}/{row.get('id')}/reference")
        parts.append('<figure class="fig reference">' + drawn +
                     "<figcaption>reference graph (nothing to compare)</figcaption></figure>")
    elif status == "ok" and ref is None:
        parts.append(f'<p class="note">reference file not found: {escape(str(row.get("reference")))}</p>')

    if diag:
        table = diagnostics_rows(diag, pred=pred, matched=False)
        n_match = len(diag.get("matched_nodes", []))
        head = f"<p><strong>{len(table)} error{'s' * (len(table) != 1)}</strong> · {n_match} nodes matched</p>"
        parts.append(head + (table.to_html() if table else ""))
    if isinstance(row.get("critique"), Mapping):  # written by `sciflow score --critique`
        parts.append(critique_part(row["critique"]))
    if run.claims.get(str(row.get("id"))):  # RESULTS/claims/<id>.json, written by `sciflow claims ... -o`
        parts.append(claims_part(run.claims[str(row.get("id"))]))
    parts.append("</div>")
    return "".join(parts)


#: score badge colours: the lower bound of each band (legend in the page)
BANDS = ((0.9, "s4", "≥ 0.90"), (0.75, "s3", "0.75–0.90"), (0.5, "s2", "0.50–0.75"), (0.25, "s1", "0.25–0.50"),
         (0.0, "s0", "< 0.25"))


def score_badge(v: float | None, title: str = "") -> str:
    """A badge coloured by the score's band (:data:`BANDS`); ``–`` for no score."""
    if v is None:
        return '<span class="badge">–</span>'
    band = next(cls for lo, cls, _ in BANDS if v >= lo)
    return f'<span class="badge score {band}" title="{escape(title)}">{_fmt(v)}</span>'


def _badge_legend() -> str:
    return ('<p class="legend">score badges: ' + " ".join(
        f'<span class="badge score {cls}">{escape(text)}</span>' for _, cls, text in BANDS) + "</p>")


def _items_table(runs: Sequence[Run], ids: list[str]) -> str:
    """Every item in one sortable, filterable table: id, area, difficulty, a badge per run."""
    head = ["item", "area", "difficulty"] + [r.name for r in runs]
    body = []
    for rid in ids:
        meta: dict[str, Any] = {}
        for r in runs:
            meta = meta or dict((r.by_id.get(rid) or {}).get("meta") or {})
        cells = [f'<td><a href="#item-{escape(_slug(rid))}">{escape(rid)}</a></td>',
                 f"<td>{escape(str(meta.get('area', '')))}</td>", f"<td>{escape(str(meta.get('difficulty', '')))}</td>"]
        for r in runs:
            row = r.by_id.get(rid)
            if row is None:
                cells.append('<td data-v="-1"><span class="badge">not in run</span></td>')
                continue
            st = str(row.get("status", "?"))
            g = (row.get("scores") or {}).get("graph")
            badge = score_badge(g, r.name) if st == "ok" else \
                f'<span class="badge {escape(_slug(st))}">{escape(STATUS_TEXT.get(st, st))}</span>'
            if row.get("low_reliability"):
                badge += '<span class="badge low-reliability" title="low parse reliability">?</span>'
            spread = (row.get("samples") or {}).get("sd", {}).get("graph")
            if spread is not None:
                badge += f' <span class="ci">sd {_fmt(spread)}</span>'
            cells.append(f'<td class="num" data-v="{g if g is not None and st == "ok" else -1}">{badge}</td>')
        body.append(f'<tr data-item="item-{escape(_slug(rid))}">{"".join(cells)}</tr>')
    return ('<input class="filter" type="search" placeholder="filter items (id, area, difficulty)" '
            'data-table="items-table" aria-label="filter items">'
            '<table class="sortable items" id="items-table"><thead><tr>'
            + "".join(f"<th>{escape(h)}</th>" for h in head) + "</tr></thead><tbody>" + "".join(body)
            + "</tbody></table>")


def _section(runs: Sequence[Run], rend: _Renderer, rid: str) -> str:
    meta: dict[str, Any] = {}
    for r in runs:
        meta = meta or dict((r.by_id.get(rid) or {}).get("meta") or {})
    mtext = " · ".join(f"{escape(str(k))}: {escape(str(v))}" for k, v in sorted(meta.items()))
    return (f'<section class="item" id="item-{escape(_slug(rid))}"><h2>{escape(rid)} '
            f'<span class="muted" style="font-size:13px;font-weight:normal">{mtext}</span></h2>'
            '<div class="runs">' + "".join(_run_item(rend, r, r.by_id.get(rid)) for r in runs) + "</div></section>")


def _items(runs: Sequence[Run], rend: _Renderer) -> str:
    ids = sorted({rid for r in runs for rid in r.by_id})
    out = ['<h2 id="items">Items</h2>',
           '<p class="muted">Graph score (or status) of each item per run; click a header to sort, type to '
           "filter (the item sections below follow). Images are thumbnails: click one for its full size.</p>",
           _badge_legend(), _items_table(runs, ids),
           '<figure class="fig legend">' + rend.svg(legend_dot(), "legend") +
           "<figcaption>how to read the diff renderings: the reference graph, coloured by what the "
           "diagram drew</figcaption></figure>"]
    # the items are independent: images decode and encode, and Graphviz runs, in parallel
    with ThreadPoolExecutor(max_workers=max(1, min(8, os.cpu_count() or 1))) as pool:
        out += list(pool.map(lambda rid: _section(runs, rend, rid), ids))
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
    runs = [load_run(Path(d)) for d in results_dirs]
    seen: dict[str, int] = {}
    for r in runs:
        seen[r.name] = seen.get(r.name, 0) + 1
        if seen[r.name] > 1:
            r.name = f"{r.name} ({seen[r.name]})"
    out = Path(out_html)
    files_dir = out.with_name(f"{out.stem}_files")  # the full-size images, opened on click
    if files_dir.is_dir():
        shutil.rmtree(files_dir)
    rend = _Renderer(recompute, max_image_side, files_dir)
    body = [
        _header(runs, title),
        "<main>",
        _leaderboard(runs),
        plots(runs),
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
        f"<title>{escape(title)}</title><style>{CSS}</style></head><body>" + "".join(body)
        + f"<script>{SCRIPT}</script></body></html>\n"
    )
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(html, encoding="utf-8")
    return out
