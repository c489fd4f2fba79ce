"""The report's style sheet (inlined in a ``<style>`` element: no external requests)."""

__all__ = ["CSS", "SCRIPT"]

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
.badge.low-reliability { background: #b8860b; } .ci { color: var(--muted); font-size: 11px; }
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
table.claims td:first-child { white-space: nowrap; }
tr.claim-refuted td:first-child { color: #b3261e; font-weight: 600; }
tr.claim-not_enough_info td:first-child { color: #9a6700; }
.badge.score { color: #fff; min-width: 38px; text-align: center; }
.badge.s4 { background: #1b5e20; } .badge.s3 { background: #43a047; } .badge.s2 { background: #c49000; }
.badge.s1 { background: #e65100; } .badge.s0 { background: #b71c1c; }
p.legend .badge { margin: 0 4px 0 0; }
table.sortable th { cursor: pointer; user-select: none; }
table.sortable th[data-dir="asc"]::after { content: " ▲"; } table.sortable th[data-dir="desc"]::after { content: " ▼"; }
input.filter { margin: 6px 0; padding: 4px 8px; width: 320px; max-width: 100%; border: 1px solid var(--line);
  border-radius: 4px; font: inherit; }
table.items td, table.items th { padding: 2px 8px; }
figure.fig a img { cursor: zoom-in; }
/* wide diffs keep a readable size and scroll sideways inside their card */
figure.fig.diff { overflow-x: auto; } figure.fig.diff svg.graph { max-width: none; }
"""

#: sort any ``table.sortable`` by a click on a header (numbers by value: a cell's ``data-v`` or its
#: text), filter a table from an ``input.filter`` (``data-table``: its id; rows with ``data-item``
#: show or hide the element of that id too). Vendored here: no library, no network.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (t) {
  var head = t.tHead.rows[0];
  Array.prototype.forEach.call(head.cells, function (th, i) {
    th.addEventListener("click", function () {
      var dir = th.dataset.dir === "asc" ? "desc" : "asc", body = t.tBodies[0];
      Array.prototype.forEach.call(head.cells, function (c) { delete c.dataset.dir; });
      th.dataset.dir = dir;
      var key = function (r) { var c = r.cells[i], v = c.dataset.v !== undefined ? c.dataset.v : c.textContent.trim(),
        n = parseFloat(v); return isNaN(n) ? [1, v.toLowerCase()] : [0, n]; };
      Array.prototype.slice.call(body.rows).sort(function (a, b) {
        var x = key(a), y = key(b), o = x[0] - y[0] || (x[1] < y[1] ? -1 : x[1] > y[1] ? 1 : 0);
        return dir === "asc" ? o : -o;
      }).forEach(function (r) { body.appendChild(r); });
    });
  });
});
document.querySelectorAll("input.filter").forEach(function (input) {
  input.addEventListener("input", function () {
    var q = input.value.toLowerCase(), t = document.getElementById(input.dataset.table);
    Array.prototype.forEach.call(t.tBodies[0].rows, function (r) {
      var show = r.textContent.toLowerCase().indexOf(q) >= 0,
        target = r.dataset.item && document.getElementById(r.dataset.item);
      r.hidden = !show;
      if (target) { target.hidden = !show; }
    });
  });
});
"""
