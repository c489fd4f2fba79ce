// The in-page half of sciflow.bench.synth.mermaid_render: parse one flowchart with Mermaid's
// own parser, render it with mermaid.render, and measure everything in the drawn SVG.
//
// Input: window.__MM = {key, id, src, config, pad, maxSide}. Output: window.__result =
// {parse: {vertices, edges, subgraphs, direction}, size: [w, h], nodes: {vertexId: {...}},
// clusters: {subgraphId: {...}}, edges: [{...}]} in page pixels (the screenshot's pixels:
// the frame sits at the page origin and the page is not scrolled). window.__ready = true when
// done; window.__error on failure. The bundle (mermaid.min.js) is loaded once per page: the
// global survives set_content, and when it is missing the page asks for it ({need_bundle}).
(async () => {
  const MM = window.__MM;
  try {
    if (typeof mermaid === 'undefined' || window.__sciflowMermaidKey !== MM.key) {
      window.__result = { need_bundle: true };
      return;
    }
    if (document.fonts && document.fonts.ready) await document.fonts.ready;
    mermaid.initialize(MM.config);
    const r2 = (v) => Math.round(v * 100) / 100;
    const diagram = await mermaid.mermaidAPI.getDiagramFromText(MM.src);
    const db = diagram.db;
    const parse = {
      direction: db.getDirection ? db.getDirection() || null : null,
      vertices: [...db.getVertices().values()].map((v) => ({
        id: v.id, text: v.text ?? '', type: v.type ?? null, domId: v.domId, classes: [...(v.classes || [])],
      })),
      edges: db.getEdges().map((e) => ({
        id: e.id, start: e.start, end: e.end, type: e.type, stroke: e.stroke ?? null, text: e.text ?? '',
      })),
      subgraphs: db.getSubGraphs().map((s) => ({ id: s.id, title: s.title ?? '', nodes: [...s.nodes] })),
    };
    const { svg } = await mermaid.render(MM.id, MM.src);
    const frame = document.getElementById('frame');
    frame.innerHTML = svg;
    const el = frame.querySelector('svg');
    // natural size from the viewBox, scaled down to maxSide (the SVG keeps its own geometry)
    const vb = el.viewBox.baseVal;
    const scale = Math.min(1, MM.maxSide / Math.max(vb.width, vb.height));
    const w = Math.ceil(vb.width * scale), h = Math.ceil(vb.height * scale);
    el.removeAttribute('style');
    el.setAttribute('width', String(w));
    el.setAttribute('height', String(h));
    el.setAttribute('preserveAspectRatio', 'xMinYMin meet');
    frame.style.width = (w + 2 * MM.pad) + 'px';
    frame.style.height = (h + 2 * MM.pad) + 'px';
    void frame.getBoundingClientRect(); // layout now

    const box = (r) => [r2(r.left), r2(r.top), r2(r.right), r2(r.bottom)];
    const union = (rects) => {
      const rs = [...rects].filter((r) => r.width > 0 && r.height > 0);
      if (!rs.length) return null;
      return [r2(Math.min(...rs.map((r) => r.left))), r2(Math.min(...rs.map((r) => r.top))),
        r2(Math.max(...rs.map((r) => r.right))), r2(Math.max(...rs.map((r) => r.bottom)))];
    };
    const toPage = (elem, x, y) => {
      const m = elem.getScreenCTM();
      const p = new DOMPoint(x, y).matrixTransform(m);
      return [p.x, p.y];
    };
    // the glyphs of one label: a Range over the HTML text (htmlLabels) or the SVG text boxes
    const textBox = (container) => {
      if (!container) return null;
      const texts = container.querySelectorAll('text');
      if (texts.length) return union([...texts].map((t) => t.getBoundingClientRect()));
      const rects = [];
      const walk = document.createTreeWalker(container, NodeFilter.SHOW_TEXT);
      for (let t = walk.nextNode(); t; t = walk.nextNode()) {
        for (const m of t.textContent.matchAll(/\S+/g)) { // word by word: no trailing spaces at wraps
          const range = document.createRange();
          range.setStart(t, m.index);
          range.setEnd(t, m.index + m[0].length);
          rects.push(...range.getClientRects());
        }
      }
      return union(rects);
    };
    const textOf = (container) => {
      if (!container) return '';
      const texts = container.querySelectorAll('text');
      if (texts.length) {
        return [...texts].map((t) => { const ts = t.querySelectorAll('tspan.text-outer-tspan, tspan.row');
          return ts.length ? [...ts].map((x) => x.textContent).join(' ') : t.textContent; }).join(' ');
      }
      const holder = container.querySelector('span, div, p') || container;
      return holder.innerText.replace(/\s+/g, ' ').trim();
    };
    // the outline of a node's or cluster's shape, in page pixels (for the endpoint checks)
    const outline = (geoms, step) => {
      const pts = [];
      for (const g of geoms) {
        if (typeof g.getTotalLength !== 'function') continue;
        let len = 0;
        try { len = g.getTotalLength(); } catch (e) { continue; }
        const n = Math.max(8, Math.min(96, Math.ceil(len / step)));
        for (let i = 0; i <= n; i++) {
          const p = g.getPointAtLength((len * i) / n);
          const q = toPage(g, p.x, p.y);
          pts.push([r2(q[0]), r2(q[1])]);
        }
      }
      return pts;
    };
    // a shape's drawn geometry, labels left out; in the hand-drawn look each rough shape is a
    // group of a hachure fill path (stroked in the fill colour) and then the outline: the last
    const shapeGeoms = (g) => {
      const all = [...g.querySelectorAll('path, rect, polygon, circle, ellipse, polyline, line')]
        .filter((x) => !x.closest('.label') && !x.closest('foreignObject') && !x.closest('.cluster-label'));
      if (MM.config.look !== 'handDrawn') return all;
      const last = new Map();
      for (const x of all) last.set(x.parentNode, x);
      return [...last.values()];
    };

    const nodes = {};
    for (const v of parse.vertices) {
      const g = document.getElementById(`${MM.id}-${v.domId}`);
      if (!g) continue;
      const label = g.querySelector('.label');
      nodes[v.id] = {
        bbox: box(g.getBoundingClientRect()), text: textOf(label), text_bbox: textBox(label),
        outline: outline(shapeGeoms(g), 3), classes: g.getAttribute('class'),
      };
    }
    const clusters = {};
    for (const s of parse.subgraphs) {
      const g = document.getElementById(`${MM.id}-${s.id}`);
      if (!g) continue;
      const rect = g.querySelector(':scope > rect');
      const geoms = rect ? [rect] : shapeGeoms(g);
      const label = g.querySelector('.cluster-label');
      clusters[s.id] = {
        bbox: union(geoms.map((x) => x.getBoundingClientRect())) || box(g.getBoundingClientRect()),
        text: textOf(label), text_bbox: textBox(label), outline: outline(geoms, 3),
      };
    }

    // the box of the marker drawn at one end of a path: the marker's shape mapped by the SVG
    // marker rules (viewBox -> markerWidth/Height with preserveAspectRatio, refX/refY at the
    // vertex, orient auto along the path's direction there, markerUnits), then to the page
    const markerBox = (path, which) => {
      const ref = path.getAttribute(`marker-${which}`);
      const m = ref && ref.match(/url\(#([^)]+)\)/);
      if (!m) return null;
      const mk = document.getElementById(m[1]);
      if (!mk) return null;
      const shape = mk.querySelector('path, polygon, polyline, circle, ellipse, rect');
      if (!shape) return null;
      const vbm = mk.viewBox.baseVal;
      const mw = mk.markerWidth.baseVal.value, mh = mk.markerHeight.baseVal.value;
      let sx = 1, sy = 1;
      if (vbm && vbm.width > 0 && vbm.height > 0) {
        sx = mw / vbm.width; sy = mh / vbm.height;
        const par = mk.preserveAspectRatio.baseVal;
        if (par.align !== SVGPreserveAspectRatio.SVG_PRESERVEASPECTRATIO_NONE) {
          const s = par.meetOrSlice === SVGPreserveAspectRatio.SVG_MEETORSLICE_SLICE ? Math.max(sx, sy) : Math.min(sx, sy);
          sx = sy = s;
        }
      }
      const units = mk.markerUnits.baseVal === SVGMarkerElement.SVG_MARKERUNITS_STROKEWIDTH
        ? parseFloat(getComputedStyle(path).strokeWidth) || 1 : 1;
      const rx = mk.refX.baseVal.value, ry = mk.refY.baseVal.value;
      const len = path.getTotalLength();
      const d = Math.min(0.5, len / 2);
      const a = which === 'end' ? path.getPointAtLength(len - d) : path.getPointAtLength(0);
      const b = which === 'end' ? path.getPointAtLength(len) : path.getPointAtLength(d);
      let ang = Math.atan2(b.y - a.y, b.x - a.x);
      if (mk.getAttribute('orient') === 'auto-start-reverse' && which === 'start') ang += Math.PI;
      const orient = mk.getAttribute('orient');
      if (orient && orient !== 'auto' && orient !== 'auto-start-reverse') ang = (parseFloat(orient) * Math.PI) / 180;
      const vx = which === 'end' ? b : a;
      const c = Math.cos(ang), sn = Math.sin(ang);
      const pts = [];
      const slen = shape.getTotalLength();
      for (let i = 0; i <= 48; i++) {
        const p = shape.getPointAtLength((slen * i) / 48);
        const lx = (p.x - rx) * sx * units, ly = (p.y - ry) * sy * units;
        pts.push(toPage(path, vx.x + lx * c - ly * sn, vx.y + lx * sn + ly * c));
      }
      const xs = pts.map((p) => p[0]), ys = pts.map((p) => p[1]);
      return [r2(Math.min(...xs)), r2(Math.min(...ys)), r2(Math.max(...xs)), r2(Math.max(...ys))];
    };

    const edges = [];
    for (const e of parse.edges) {
      const path = el.querySelector(`path[data-id="${CSS.escape(e.id)}"]`) || document.getElementById(`${MM.id}-${e.id}`);
      if (!path) { edges.push({ id: e.id, missing: true }); continue; }
      const len = path.getTotalLength();
      const n = Math.max(2, Math.min(250, Math.ceil(len / 3)));
      const poly = [];
      for (let i = 0; i <= n; i++) {
        const p = path.getPointAtLength((len * i) / n);
        const q = toPage(path, p.x, p.y);
        poly.push([r2(q[0]), r2(q[1])]);
      }
      const lab = el.querySelector(`.edgeLabels .label[data-id="${CSS.escape(e.id)}"]`);
      const hasText = lab && lab.textContent.trim().length > 0;
      edges.push({
        id: e.id, polyline: poly, head_box: markerBox(path, 'end'), tail_box: markerBox(path, 'start'),
        label: hasText ? textOf(lab) : null, label_text_bbox: hasText ? textBox(lab) : null,
        label_bbox: hasText ? box(lab.getBoundingClientRect()) : null,
        classes: path.getAttribute('class'), dash: getComputedStyle(path).strokeDasharray,
        width: parseFloat(getComputedStyle(path).strokeWidth) || null,
      });
    }
    window.__result = { parse, size: [w + 2 * MM.pad, h + 2 * MM.pad], scale: r2(scale), nodes, clusters, edges };
  } catch (err) {
    window.__error = String((err && (err.stack || err.message)) || err);
  } finally {
    window.__ready = true;
  }
})();
