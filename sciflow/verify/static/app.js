/* sciflow verify: the figure and its graph side by side, identity-consistent edits only.
 * Served by sciflow/verify/server.py; no network access beyond that server. */
(() => {
  "use strict";

  const $ = (sel) => document.querySelector(sel);
  const SVGNS = "http://www.w3.org/2000/svg";
  const COLORS = { auto: "#1f5fbf", added: "#c2189b", muted: "#9aa0a6", hot: "#ff8c00", link: "#0a8f5a" };
  const MODE_HINTS = {
    select: "Select / exclude: click a box, a graph element or a row; X or Delete excludes it (or restores it). " +
      "Excluding a node excludes its edges.",
    link: "Link nodes: click the source node, then the target node (figure, graph or list). Esc cancels.",
    add: "Add node: drag a box on the figure around a missing, visible component, then type its label. Esc cancels.",
  };

  // Everything the page knows; exposed for tests and the console.
  const S = {
    listing: null, item: null, view: null, mode: "select", selected: null, hover: null,
    linkSource: null, draft: null, cy: null, fontK: 1, layout: "figure", busy: false,
  };
  window.sciflowVerify = S;

  // ------------------------------------------------------------------ server
  async function api(method, url, body) {
    const opts = { method, headers: { Accept: "application/json" } };
    if (body !== undefined) {
      opts.headers["Content-Type"] = "application/json";
      opts.body = JSON.stringify(body);
    }
    const r = await fetch(url, opts);
    let data = null;
    try { data = await r.json(); } catch (e) { /* not JSON */ }
    if (!r.ok) throw new Error((data && data.error) || `${r.status} ${r.statusText}`);
    return data;
  }
  const itemUrl = (item) => "/api/items/" + encodeURIComponent(item);

  function say(text, kind) {
    const m = $("#message");
    m.textContent = text;
    m.className = kind || "";
  }

  // ------------------------------------------------------------- element keys
  const key = (kind, id) => ({ kind, id });
  const same = (a, b) => !!a && !!b && a.kind === b.kind && a.id === b.id;
  const nodeById = (id) => S.view && S.view.nodes.find((n) => n.id === id);
  const edgeById = (id) => S.view && S.view.edges.find((e) => e.id === id);
  const element = (k) => (k ? (k.kind === "node" ? nodeById(k.id) : edgeById(k.id)) : null);
  const cyId = (k) => (k.kind === "node" ? "n:" : "e:") + k.id;
  function cyEl(k) {
    if (!S.cy || !k) return null;
    const el = S.cy.getElementById(cyId(k));
    return el && el.length ? el : null;
  }
  const esc = (s) => (window.CSS && CSS.escape ? CSS.escape(s) : String(s).replace(/["\\]/g, "\\$&"));
  const rectOf = (id) => document.querySelector(`#overlay rect.node[data-id="${esc(id)}"]`);
  const rowOf = (k) => document.querySelector(`tr[data-kind="${k.kind}"][data-id="${esc(k.id)}"]`);

  // ------------------------------------------------------------------ items
  async function refreshListing() {
    S.listing = await api("GET", "/api/items");
    renderProgress();
    return S.listing;
  }

  function neighbour(step) {
    if (!S.listing) return null;
    const names = S.listing.items.map((x) => x.item);
    const i = names.indexOf(S.item);
    const j = i + step;
    return j >= 0 && j < names.length ? names[j] : null;
  }

  async function openItem(item) {
    delete document.body.dataset.loaded;
    cancelTransient();
    S.selected = null;
    S.hover = null;
    S.item = item;
    history.replaceState(null, "", "#" + encodeURIComponent(item));
    say(`Loading ${item} …`);
    try {
      const v = await api("GET", itemUrl(item) + "?open=1");
      setView(v, true);
      say("");
    } catch (e) {
      showItemError(item, e.message);
    }
    await refreshListing();
    document.body.dataset.loaded = item;
  }

  function showItemError(item, message) {
    S.view = null;
    $("#item-title").textContent = item;
    $("#figure-wrap").hidden = true;
    let box = $("#figure-pane .error-box");
    if (!box) {
      box = document.createElement("div");
      box.className = "error-box";
      $("#figure-pane").appendChild(box);
    }
    box.textContent = `This item cannot be verified:\n${message}`;
    if (S.cy) S.cy.elements().remove();
    $("#node-list tbody").replaceChildren();
    $("#edge-list tbody").replaceChildren();
    $("#counts").textContent = "";
    $("#meta").textContent = "";
    say(message, "error");
    updateToggle();
  }

  // ------------------------------------------------------------------ views
  function setView(v, fresh) {
    S.view = v;
    if (S.listing) S.listing.saved = v.saved_count;
    if (S.selected && !element(S.selected)) S.selected = null;
    if (S.linkSource && !nodeById(S.linkSource)) S.linkSource = null;
    const box = $("#figure-pane .error-box");
    if (box) box.remove();
    $("#figure-wrap").hidden = false;
    renderHeader();
    renderFigure(fresh);
    renderGraph(fresh);
    renderLists();
    applyHighlights();
  }

  function fmtTime(s) {
    s = Math.round(s || 0);
    const m = Math.floor(s / 60);
    return m ? `${m} min ${s % 60} s` : `${s} s`;
  }

  function renderHeader() {
    const v = S.view;
    const title = $("#item-title");
    title.textContent = `${v.item}  (${v.index + 1} of ${v.total}) `;
    const flag = document.createElement("span");
    flag.id = "save-state";
    if (v.dirty) { flag.className = "dirty-flag"; flag.textContent = "● unsaved changes"; }
    else if (v.saved) { flag.className = "saved-flag"; flag.textContent = "✓ saved"; }
    else { flag.textContent = "not saved yet"; }
    title.appendChild(flag);
    const c = v.counts;
    $("#counts").textContent =
      `nodes: ${c.nodes.tp} kept, ${c.nodes.fp} excluded, ${c.nodes.fn} added · ` +
      `edges: ${c.edges.tp} kept, ${c.edges.fp} excluded, ${c.edges.fn} added`;
    $("#meta").textContent =
      `annotator ${v.annotator} · ${fmtTime(v.time_spent_s)} on this item · ${v.edits} edits · graph from ${v.source || "?"}`;
    renderProgress();
  }

  function renderProgress() {
    const l = S.listing;
    if (l) $("#progress").textContent = `${l.saved} / ${l.total} saved`;
    $("#prev").disabled = !neighbour(-1);
    $("#next").disabled = !neighbour(+1);
  }

  // ------------------------------------------------------------ figure side
  function renderFigure(fresh) {
    const v = S.view;
    const img = $("#figure");
    const svg = $("#overlay");
    if (fresh || img.dataset.item !== v.item) {
      img.dataset.item = v.item;
      img.src = v.figure.url;
      img.alt = `figure ${v.figure.name}`;
    }
    const w = v.figure.width || img.naturalWidth || 1000;
    const h = v.figure.height || img.naturalHeight || 1000;
    svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
    svg.replaceChildren();
    const boxes = v.nodes.filter((n) => Array.isArray(n.bbox));
    // big boxes first, so nested small ones stay clickable on top
    boxes.sort((a, b) => area(b.bbox) - area(a.bbox));
    for (const n of boxes) {
      const [x0, y0, x1, y1] = n.bbox;
      const r = document.createElementNS(SVGNS, "rect");
      r.setAttribute("x", x0);
      r.setAttribute("y", y0);
      r.setAttribute("width", Math.max(x1 - x0, 1));
      r.setAttribute("height", Math.max(y1 - y0, 1));
      r.setAttribute("rx", 3);
      r.setAttribute("vector-effect", "non-scaling-stroke");
      r.setAttribute("class", `node ${n.origin}${n.included ? "" : " excluded"}`);
      r.dataset.id = n.id;
      const t = document.createElementNS(SVGNS, "title");
      t.textContent = `${n.label}  [${n.id}, ${n.origin === "added" ? "added" : "inherited"}` +
        `${n.included ? "" : ", excluded"}]`;
      r.appendChild(t);
      r.addEventListener("mouseenter", () => setHover(key("node", n.id)));
      r.addEventListener("mouseleave", () => setHover(null));
      r.addEventListener("click", (ev) => { ev.stopPropagation(); clickNode(n.id); });
      svg.appendChild(r);
    }
    if (S.draft) svg.appendChild(S.draft.rect);
  }

  const area = (b) => Math.max(b[2] - b[0], 0) * Math.max(b[3] - b[1], 0);

  function svgPoint(ev) {
    const svg = $("#overlay");
    const p = svg.createSVGPoint();
    p.x = ev.clientX;
    p.y = ev.clientY;
    const m = svg.getScreenCTM();
    return m ? p.matrixTransform(m.inverse()) : { x: 0, y: 0 };
  }

  function setupDrawing() {
    const svg = $("#overlay");
    svg.addEventListener("pointerdown", (ev) => {
      if (S.mode !== "add" || ev.button !== 0 || !S.view) return;
      ev.preventDefault();
      hideAddForm();
      const p = svgPoint(ev);
      const rect = document.createElementNS(SVGNS, "rect");
      rect.setAttribute("class", "draft");
      rect.setAttribute("vector-effect", "non-scaling-stroke");
      S.draft = { x0: p.x, y0: p.y, x1: p.x, y1: p.y, rect, drawing: true };
      updateDraft();
      svg.appendChild(rect);
      svg.setPointerCapture(ev.pointerId);
    });
    svg.addEventListener("pointermove", (ev) => {
      if (!S.draft || !S.draft.drawing) return;
      const p = svgPoint(ev);
      S.draft.x1 = p.x;
      S.draft.y1 = p.y;
      updateDraft();
    });
    const finish = (ev) => {
      if (!S.draft || !S.draft.drawing) return;
      S.draft.drawing = false;
      const b = draftBox();
      if (b[2] - b[0] < 4 || b[3] - b[1] < 4) {
        cancelDraft();
        say("Drag a box around the missing component.", "");
        return;
      }
      showAddForm(ev.clientX, ev.clientY);
    };
    svg.addEventListener("pointerup", finish);
    svg.addEventListener("pointercancel", () => cancelDraft());
    svg.addEventListener("click", (ev) => {
      if (S.mode === "select" && ev.target === svg) select(null);
    });
  }

  function draftBox() {
    const d = S.draft;
    const v = S.view;
    const W = v.figure.width || Infinity;
    const H = v.figure.height || Infinity;
    const clamp = (x, hi) => Math.min(Math.max(x, 0), hi);
    return [
      clamp(Math.min(d.x0, d.x1), W), clamp(Math.min(d.y0, d.y1), H),
      clamp(Math.max(d.x0, d.x1), W), clamp(Math.max(d.y0, d.y1), H),
    ].map((x) => Math.round(x * 10) / 10);
  }

  function updateDraft() {
    const [x0, y0, x1, y1] = draftBox();
    const r = S.draft.rect;
    r.setAttribute("x", x0);
    r.setAttribute("y", y0);
    r.setAttribute("width", Math.max(x1 - x0, 0));
    r.setAttribute("height", Math.max(y1 - y0, 0));
  }

  function cancelDraft() {
    if (S.draft && S.draft.rect.parentNode) S.draft.rect.remove();
    S.draft = null;
    hideAddForm();
  }

  function showAddForm(cx, cy) {
    const f = $("#add-form");
    f.hidden = false;
    const w = 330;
    const h = 130;
    f.style.left = `${Math.max(8, Math.min(cx + 12, window.innerWidth - w - 8))}px`;
    f.style.top = `${Math.max(8, Math.min(cy + 12, window.innerHeight - h - 8))}px`;
    const input = $("#add-label");
    input.value = "";
    input.focus();
  }

  function hideAddForm() {
    $("#add-form").hidden = true;
  }

  // ------------------------------------------------------------- graph side
  // A node's box in the graph. With figure boxes the graph mirrors the figure (same place, same
  // size, the label fitted inside); without, a size that fits the label.
  function nodeSize(n) {
    const label = String(n.label);
    const chars = Math.max(label.length, 1);
    if (S.layout === "figure" && Array.isArray(n.bbox)) {
      const w = Math.max(n.bbox[2] - n.bbox[0], 24);
      const h = Math.max(n.bbox[3] - n.bbox[1], 18);
      // between 8 and 16 pixels on screen once the graph is fitted to its pane (S.fontK)
      const k = S.fontK || 1;
      let font = 16 * k;
      while (font > 8 * k) {
        const perLine = Math.max(Math.floor((w - 6) / (font * 0.56)), 1);
        const longest = Math.max(...label.split(/\s+/).map((t) => t.length));
        if (Math.ceil(chars / perLine) * font * 1.25 <= h - 2 && longest <= perLine) break;
        font -= k;
      }
      return { w, h, tw: Math.max(w - 6, 10), font };
    }
    const lines = Math.ceil((chars * 7) / 100);
    return { w: Math.min(chars * 7, 100) + 18, h: Math.min(lines, 5) * 15 + 14, tw: 100, font: 12 };
  }

  function center(b) {
    return [(b[0] + b[2]) / 2, (b[1] + b[3]) / 2];
  }

  // Without boxes: layers by longest path (arrows left to right), cycles broken in document order.
  function layeredPositions(nodes, edges, vertical) {
    const ids = nodes.map((n) => n.id);
    const preds = new Map(ids.map((id) => [id, []]));
    const indeg = new Map(ids.map((id) => [id, 0]));
    for (const e of edges) {
      if (!preds.has(e.target) || !preds.has(e.source) || e.source === e.target) continue;
      preds.get(e.target).push(e.source);
      indeg.set(e.target, indeg.get(e.target) + 1);
    }
    const depth = new Map();
    const done = new Set();
    while (done.size < ids.length) {
      let next = ids.find((id) => !done.has(id) && preds.get(id).every((p) => done.has(p)));
      if (next === undefined) next = ids.find((id) => !done.has(id)); // a cycle: take the first left
      depth.set(next, Math.max(0, ...preds.get(next).filter((p) => done.has(p)).map((p) => depth.get(p) + 1)));
      done.add(next);
    }
    const layers = new Map();
    for (const id of ids) {
      const d = depth.get(id);
      if (!layers.has(d)) layers.set(d, []);
      layers.get(d).push(id);
    }
    const pos = new Map();
    for (const [d, members] of layers) {
      members.forEach((id, i) => {
        const along = d * 170;
        const across = (i - (members.length - 1) / 2) * 80;
        pos.set(id, vertical ? { x: across * 2.2, y: along * 0.6 } : { x: along, y: across });
      });
    }
    return pos;
  }

  function positionOf(n, i, nodes) {
    if (Array.isArray(n.bbox) && S.layout === "figure") {
      const [x, y] = center(n.bbox);
      return { x, y };
    }
    if (S.layout === "auto" && S.cy && S.cy.nodes().length) {
      // a node added to a graph laid out without boxes: to the right of what is there
      const bb = S.cy.nodes().boundingBox();
      const k = addedIndex(n);
      return { x: bb.x2 + 120, y: bb.y1 + 20 + 60 * k };
    }
    // no box: a row under the figure's nodes
    const ys = nodes.filter((m) => Array.isArray(m.bbox)).map((m) => m.bbox[3]);
    const base = ys.length ? Math.max(...ys) + 90 : 0;
    const k = nodes.filter((m) => !Array.isArray(m.bbox)).indexOf(n);
    return { x: k * 170, y: base };
  }

  function addedIndex(n) {
    return S.view.nodes.filter((m) => m.origin === "added").findIndex((m) => m.id === n.id);
  }

  function cyNode(n, i, nodes) {
    const sz = nodeSize(n);
    return {
      group: "nodes",
      data: { id: "n:" + n.id, nid: n.id, label: n.label, w: sz.w, h: sz.h, tw: sz.tw, font: sz.font },
      classes: [n.origin, n.included ? "" : "excluded"].join(" ").trim(),
      position: positionOf(n, i, nodes),
    };
  }

  function cyEdge(e) {
    return {
      group: "edges",
      data: { id: "e:" + e.id, eid: e.id, source: "n:" + e.source, target: "n:" + e.target, label: e.label || "" },
      classes: [e.origin, e.included ? "" : "excluded"].join(" ").trim(),
    };
  }

  // line widths and paddings that look the same on screen whatever the figure's resolution
  const K = (x) => () => x * (S.fontK || 1);

  function ensureCy() {
    if (S.cy || typeof window.cytoscape !== "function") return S.cy;
    S.cy = window.cytoscape({
      container: $("#cy"),
      elements: [],
      layout: { name: "preset" },
      autoungrabify: true,
      autounselectify: true,
      boxSelectionEnabled: false,
      minZoom: 0.1,
      maxZoom: 4,
      style: [
        {
          selector: "node",
          style: {
            shape: "round-rectangle", "background-color": "#fff", "border-width": K(2), "border-color": COLORS.auto,
            label: "data(label)", "text-wrap": "wrap", "text-max-width": "data(tw)", "text-valign": "center",
            "text-halign": "center", "font-size": "data(font)", color: "#1d232b", width: "data(w)", height: "data(h)",
          },
        },
        { selector: "node.added", style: { "border-color": COLORS.added, color: COLORS.added, "border-width": K(3) } },
        {
          selector: "node.excluded",
          style: {
            "border-color": COLORS.muted, color: COLORS.muted, "border-style": "dashed",
            "background-color": "#f1f2f4", opacity: 0.6,
          },
        },
        {
          selector: "edge",
          style: {
            width: K(2), "line-color": COLORS.auto, "target-arrow-color": COLORS.auto, "target-arrow-shape": "triangle",
            "curve-style": "bezier", "arrow-scale": 1.2, label: "data(label)", "font-size": K(10), color: "#555",
            "text-background-color": "#fff", "text-background-opacity": 0.85, "text-background-padding": 1,
          },
        },
        { selector: "edge.added", style: { "line-color": COLORS.added, "target-arrow-color": COLORS.added, width: K(3) } },
        {
          selector: "edge.excluded",
          style: { "line-color": COLORS.muted, "target-arrow-color": COLORS.muted, "line-style": "dashed", opacity: 0.55 },
        },
        { selector: ".hover", style: { "underlay-color": COLORS.hot, "underlay-opacity": 0.35, "underlay-padding": K(6) } },
        { selector: ".sel", style: { "underlay-color": COLORS.hot, "underlay-opacity": 0.55, "underlay-padding": K(8) } },
        {
          selector: "node.link-source",
          style: { "underlay-color": COLORS.link, "underlay-opacity": 0.6, "underlay-padding": K(8) },
        },
      ],
    });
    S.cy.on("mouseover", "node", (ev) => setHover(key("node", ev.target.data("nid"))));
    S.cy.on("mouseover", "edge", (ev) => setHover(key("edge", ev.target.data("eid"))));
    S.cy.on("mouseout", "node, edge", () => setHover(null));
    S.cy.on("tap", "node", (ev) => clickNode(ev.target.data("nid")));
    S.cy.on("tap", "edge", (ev) => clickEdge(ev.target.data("eid")));
    S.cy.on("tap", (ev) => { if (ev.target === S.cy && S.mode !== "link") select(null); });
    return S.cy;
  }

  function renderGraph(fresh) {
    const cy = ensureCy();
    if (!cy) { say("The graph library did not load (static/vendor/cytoscape.min.js).", "error"); return; }
    const v = S.view;
    cy.batch(() => {
      if (fresh) {
        cy.elements().remove();
        // positions mirror the figure when the parse has boxes; otherwise a layered layout
        S.layout = v.nodes.some((n) => Array.isArray(n.bbox) && n.origin === "auto") ? "figure" : "auto";
        S.fontK = 1;
        const boxes = v.nodes.filter((n) => Array.isArray(n.bbox)).map((n) => n.bbox);
        if (S.layout === "figure" && boxes.length) {
          const ew = Math.max(...boxes.map((b) => b[2])) - Math.min(...boxes.map((b) => b[0])) + 60;
          const eh = Math.max(...boxes.map((b) => b[3])) - Math.min(...boxes.map((b) => b[1])) + 60;
          S.fontK = Math.max(1, ew / Math.max(cy.width(), 1), eh / Math.max(cy.height(), 1));
        }
        cy.add(v.nodes.map((n, i) => cyNode(n, i, v.nodes)));
        cy.add(v.edges.map(cyEdge));
        return;
      }
      const want = new Set([...v.nodes.map((n) => "n:" + n.id), ...v.edges.map((e) => "e:" + e.id)]);
      cy.elements().forEach((el) => { if (!want.has(el.id())) el.remove(); });
      v.nodes.forEach((n, i) => {
        const el = cy.getElementById("n:" + n.id);
        if (el.length) el.classes(cyNode(n, i, v.nodes).classes);
        else cy.add(cyNode(n, i, v.nodes));
      });
      v.edges.forEach((e) => {
        const el = cy.getElementById("e:" + e.id);
        if (el.length) el.classes(cyEdge(e).classes);
        else cy.add(cyEdge(e));
      });
    });
    if (fresh) {
      cy.resize();
      if (S.layout === "auto" && v.nodes.length) {
        const pos = layeredPositions(v.nodes, v.edges, cy.width() < cy.height());
        cy.nodes().positions((n) => pos.get(n.data("nid")) || { x: 0, y: 0 });
      }
      cy.fit(undefined, 30);
      if (cy.zoom() > 1.5) { cy.zoom(1.5); cy.center(); }
    }
  }

  // ------------------------------------------------------------------ lists
  function renderLists() {
    const v = S.view;
    const labels = new Map(v.nodes.map((n) => [n.id, n.label]));
    const row = (kind, x, labelText) => {
      const tr = document.createElement("tr");
      tr.dataset.kind = kind;
      tr.dataset.id = x.id;
      tr.className = `${x.origin}${x.included ? "" : " excluded"}`;
      const tdId = document.createElement("td");
      tdId.className = "id";
      tdId.textContent = x.id;
      const tdLabel = document.createElement("td");
      tdLabel.className = "label";
      tdLabel.textContent = labelText;
      const tdAct = document.createElement("td");
      tdAct.className = "act";
      const b = document.createElement("button");
      b.type = "button";
      b.textContent = toggleName(key(kind, x.id));
      b.addEventListener("click", (ev) => { ev.stopPropagation(); select(key(kind, x.id)); toggle(key(kind, x.id)); });
      tdAct.appendChild(b);
      tr.append(tdId, tdLabel, tdAct);
      tr.addEventListener("mouseenter", () => setHover(key(kind, x.id)));
      tr.addEventListener("mouseleave", () => setHover(null));
      tr.addEventListener("click", () => (kind === "node" ? clickNode(x.id) : clickEdge(x.id)));
      return tr;
    };
    $("#node-list tbody").replaceChildren(...v.nodes.map((n) => row("node", n, n.label)));
    $("#edge-list tbody").replaceChildren(
      ...v.edges.map((e) => row("edge", e, `${labels.get(e.source)} → ${labels.get(e.target)}${e.label ? ` (${e.label})` : ""}`)),
    );
  }

  // ------------------------------------------------------------- highlights
  function setHover(k) {
    if (same(k, S.hover) || (!k && !S.hover)) return;
    S.hover = k;
    applyHighlights();
  }

  function applyHighlights() {
    document.querySelectorAll("#overlay .hover, #overlay .selected, #overlay .endpoint, #overlay .link-source")
      .forEach((el) => el.classList.remove("hover", "selected", "endpoint", "link-source"));
    document.querySelectorAll("#overlay line.edge, #overlay polygon.edge-head").forEach((el) => el.remove());
    document.querySelectorAll("tr.hover, tr.selected").forEach((el) => el.classList.remove("hover", "selected"));
    if (S.cy) S.cy.elements().removeClass("hover sel link-source");
    const mark = (k, cls, cyCls) => {
      if (!k || !element(k)) return;
      const c = cyEl(k);
      if (c) c.addClass(cyCls);
      const tr = rowOf(k);
      if (tr) tr.classList.add(cls);
      if (k.kind === "node") {
        const r = rectOf(k.id);
        if (r) r.classList.add(cls);
      } else {
        const e = edgeById(k.id);
        [e.source, e.target].forEach((id) => { const r = rectOf(id); if (r) r.classList.add("endpoint"); });
        drawEdgeLine(e);
      }
    };
    mark(S.selected, "selected", "sel");
    mark(S.hover, "hover", "hover");
    if (S.linkSource) {
      const r = rectOf(S.linkSource);
      if (r) r.classList.add("link-source");
      const c = cyEl(key("node", S.linkSource));
      if (c) c.addClass("link-source");
    }
    updateToggle();
  }

  // The edge on the figure: from the border of its source box to the border of its target box.
  function drawEdgeLine(e) {
    const a = nodeById(e.source);
    const b = nodeById(e.target);
    if (!a || !b || !Array.isArray(a.bbox) || !Array.isArray(b.bbox)) return;
    const [ax, ay] = center(a.bbox);
    const [bx, by] = center(b.bbox);
    const dx = bx - ax;
    const dy = by - ay;
    const exit = (box) => {  // fraction of the centre-to-centre segment inside half of a box
      const hw = (box[2] - box[0]) / 2;
      const hh = (box[3] - box[1]) / 2;
      return Math.min(dx ? hw / Math.abs(dx) : Infinity, dy ? hh / Math.abs(dy) : Infinity, 0.5);
    };
    const t0 = exit(a.bbox);
    const t1 = 1 - exit(b.bbox);
    const [x1, y1, x2, y2] = t1 > t0 ? [ax + dx * t0, ay + dy * t0, ax + dx * t1, ay + dy * t1] : [ax, ay, bx, by];
    const svg = $("#overlay");
    const l = document.createElementNS(SVGNS, "line");
    l.setAttribute("class", "edge");
    l.setAttribute("x1", x1);
    l.setAttribute("y1", y1);
    l.setAttribute("x2", x2);
    l.setAttribute("y2", y2);
    l.setAttribute("vector-effect", "non-scaling-stroke");
    svg.appendChild(l);
    // arrowhead about 14 screen pixels long whatever the figure's zoom
    const img = $("#figure");
    const k = img.naturalWidth && img.clientWidth ? img.naturalWidth / img.clientWidth : 1;
    const len = Math.hypot(x2 - x1, y2 - y1) || 1;
    const ux = (x2 - x1) / len;
    const uy = (y2 - y1) / len;
    const size = 14 * k;
    const head = document.createElementNS(SVGNS, "polygon");
    head.setAttribute("class", "edge-head");
    head.setAttribute("points", [
      [x2, y2],
      [x2 - ux * size - uy * size * 0.45, y2 - uy * size + ux * size * 0.45],
      [x2 - ux * size + uy * size * 0.45, y2 - uy * size - ux * size * 0.45],
    ].map((p) => p.join(",")).join(" "));
    svg.appendChild(head);
  }

  function select(k) {
    S.selected = k;
    applyHighlights();
    const tr = k && rowOf(k);
    if (tr) tr.scrollIntoView({ block: "nearest" });
  }

  // ------------------------------------------------------------------ edits
  function toggleAction(k) {
    const x = element(k);
    if (!x) return null;
    if (x.origin === "added") return `delete_${k.kind}`;
    if (k.kind === "edge" && !x.included && !x.excluded_itself) return "restore_edge";
    return `${x.included ? "exclude" : "restore"}_${k.kind}`;
  }

  function toggleName(k) {
    const a = toggleAction(k);
    return a ? { exclude: "Exclude", restore: "Restore", delete: "Delete" }[a.split("_")[0]] : "Exclude";
  }

  function updateToggle() {
    const b = $("#toggle");
    const k = S.selected;
    b.disabled = !k || !element(k);
    b.firstChild.textContent = (k && element(k) ? toggleName(k) : "Exclude") + " ";
  }

  async function send(edit) {
    if (S.busy || !S.item) return null;
    S.busy = true;
    try {
      const res = await api("POST", itemUrl(S.item) + "/edit", edit);
      setView(res.view, false);
      renderProgress();
      return res.entry;
    } catch (e) {
      say(e.message, "error");
      return null;
    } finally {
      S.busy = false;
    }
  }

  async function toggle(k) {
    k = k || S.selected;
    const action = toggleAction(k);
    if (!action) return;
    const x = element(k);
    const entry = await send({ action, id: k.id });
    if (entry) {
      const what = k.kind === "node" ? `node “${x.label}”` : `edge ${k.id}`;
      const more = entry.cascade && entry.cascade.length ? ` (with ${entry.cascade.length} edge(s))` : "";
      say(`${action.split("_")[0].replace(/e$/, "")}ed ${what}${more}`, "ok");
    }
  }

  async function clickNode(id) {
    const k = key("node", id);
    if (S.mode === "link") {
      if (!S.linkSource) {
        const n = nodeById(id);
        if (n && !n.included) { say(`Node “${n.label}” is excluded; restore it before linking it.`, "error"); return; }
        S.linkSource = id;
        say(`Link from “${n ? n.label : id}”: now click the target node.`, "");
        applyHighlights();
        return;
      }
      if (S.linkSource === id) { S.linkSource = null; say("Link cancelled.", ""); applyHighlights(); return; }
      const source = S.linkSource;
      S.linkSource = null;
      const entry = await send({ action: "add_edge", source, target: id });
      if (entry) {
        select(key("edge", entry.element));
        say(`Added edge ${entry.element}`, "ok");
      } else {
        applyHighlights();
      }
      return;
    }
    select(k);
  }

  function clickEdge(id) {
    if (S.mode === "link") return;
    select(key("edge", id));
  }

  async function submitAddForm(ev) {
    ev.preventDefault();
    if (!S.draft) { hideAddForm(); return; }
    const label = $("#add-label").value.trim();
    if (!label) { say("Type the label exactly as written in the figure.", "error"); return; }
    const bbox = draftBox();
    const entry = await send({ action: "add_node", label, bbox });
    if (entry) {
      cancelDraft();
      select(key("node", entry.element));
      say(`Added node “${entry.after.label}” (${entry.element})`, "ok");
    }
  }

  async function save() {
    if (!S.item || !S.view || S.busy) return;
    S.busy = true;
    try {
      const res = await api("POST", itemUrl(S.item) + "/save", {});
      setView(res.view, false);
      await refreshListing();
      say(`Saved ${res.saved}`, "ok");
    } catch (e) {
      say(e.message, "error");
    } finally {
      S.busy = false;
    }
  }

  // ------------------------------------------------------------------ modes
  function setMode(mode) {
    if (!MODE_HINTS[mode]) return;
    S.mode = mode;
    if (mode !== "link") S.linkSource = null;
    if (mode !== "add") cancelDraft();
    document.body.classList.remove("mode-select", "mode-link", "mode-add");
    document.body.classList.add(`mode-${mode}`);
    document.querySelectorAll(".modes button").forEach((b) => b.classList.toggle("active", b.dataset.mode === mode));
    const hint = $("#hint");
    hint.textContent = MODE_HINTS[mode];
    hint.className = `hint ${mode}`;
    applyHighlights();
  }

  function cancelTransient() {
    cancelDraft();
    S.linkSource = null;
  }

  function onKey(ev) {
    const t = ev.target;
    const typing = t && (t.tagName === "INPUT" || t.tagName === "TEXTAREA" || t.isContentEditable);
    if (ev.key === "Escape") {
      if (!$("#add-form").hidden || S.draft) { cancelDraft(); say("", ""); }
      else if (S.linkSource) { S.linkSource = null; say("Link cancelled.", ""); applyHighlights(); }
      else select(null);
      return;
    }
    if ((ev.ctrlKey || ev.metaKey) && ev.key.toLowerCase() === "s") {
      ev.preventDefault();
      save();
      return;
    }
    if (typing || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const k = ev.key.toLowerCase();
    if (k === "s") setMode("select");
    else if (k === "l") setMode("link");
    else if (k === "a") setMode("add");
    else if (k === "x" || ev.key === "Delete" || ev.key === "Backspace") { ev.preventDefault(); if (S.selected) toggle(); }
    else if (k === "n") { const n = neighbour(+1); if (n) openItem(n); }
    else if (k === "p") { const p = neighbour(-1); if (p) openItem(p); }
    else return;
  }

  // ------------------------------------------------------------------ start
  async function start() {
    document.querySelectorAll(".modes button").forEach((b) => b.addEventListener("click", () => setMode(b.dataset.mode)));
    $("#toggle").addEventListener("click", () => toggle());
    $("#save").addEventListener("click", () => save());
    $("#prev").addEventListener("click", () => { const p = neighbour(-1); if (p) openItem(p); });
    $("#next").addEventListener("click", () => { const n = neighbour(+1); if (n) openItem(n); });
    $("#add-form").addEventListener("submit", submitAddForm);
    $("#add-cancel").addEventListener("click", () => cancelDraft());
    $("#figure").addEventListener("error", () => say("The figure could not be loaded.", "error"));
    document.addEventListener("keydown", onKey);
    window.addEventListener("resize", () => { if (S.cy) S.cy.resize(); });
    setupDrawing();
    setMode("select");
    setInterval(() => {
      if (S.item && S.view && document.visibilityState === "visible" && document.hasFocus()) {
        api("POST", itemUrl(S.item) + "/heartbeat", {}).catch(() => {});
      }
    }, 20000);
    try {
      await refreshListing();
    } catch (e) {
      say(`Cannot reach the sciflow server: ${e.message}`, "error");
      return;
    }
    const names = S.listing.items.map((x) => x.item);
    if (!names.length) { say("No figures in this folder.", "error"); return; }
    const wanted = decodeURIComponent(location.hash.slice(1));
    const first = S.listing.items.find((x) => x.status !== "saved");
    await openItem(names.includes(wanted) ? wanted : (first ? first.item : names[0]));
  }

  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", start);
  else start();
})();
