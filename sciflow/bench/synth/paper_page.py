"""The page of the ``paper`` style: the figure's SVG in a bare HTML page, plus the script that
measures, with the browser's own geometry, every tagged element once fonts are ready:
``getBoundingClientRect`` for boxes, heads and texts, ``getPointAtLength`` through
``getScreenCTM`` for arrow paths. ``window.__result`` holds page pixels (scale applied)."""

from __future__ import annotations

from html import escape

MEASURE_JS = """
document.fonts.ready.then(() => {
  try {
    const S = %(scale)s;
    const rect = el => { const r = el.getBoundingClientRect(); return [r.left, r.top, r.right, r.bottom]; };
    const R = {boxes: {}, heads: {}, texts: {}, arrows: {}};
    document.querySelectorAll('[data-box]').forEach(el => { R.boxes[el.dataset.box] = rect(el); });
    document.querySelectorAll('[data-head]').forEach(el => {
      const p = parseFloat(el.dataset.pad || '0') * S, r = rect(el);
      R.heads[el.dataset.head] = [r[0] - p, r[1] - p, r[2] + p, r[3] + p];
    });
    document.querySelectorAll('[data-text]').forEach(el => { R.texts[el.dataset.text] = rect(el); });
    document.querySelectorAll('path[data-arrow]').forEach(p => {
      const L = p.getTotalLength(), m = p.getScreenCTM();
      const n = Math.max(2, Math.ceil(L / 2.5)), pts = [];
      for (let i = 0; i <= n; i++) {
        const q = p.getPointAtLength(L * i / n), s = new DOMPoint(q.x, q.y).matrixTransform(m);
        pts.push([s.x, s.y]);
      }
      R.arrows[p.dataset.arrow] = pts;
    });
    window.__result = R;
  } catch (e) { window.__error = String(e && e.stack || e); }
  window.__ready = true;
});
"""


def page_html(svg: str, background: str, scale: float, title: str = "paper figure") -> str:
    css = (f"html,body{{margin:0;padding:0;overflow:hidden;background:{background}}}"
           "svg{display:block}")
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(title)}</title><style>{css}</style>"
            f"</head><body>{svg}<script>{MEASURE_JS % {'scale': repr(float(scale))}}</script></body></html>")
