// A flame graph and icicle drawn with plain positioned elements: zoom by clicking a frame (its
// ancestors stay, full width), search with a substring or /regex/ (the matched share is reported),
// and a differential mode (width from the new profile, colour from the change of each frame's share).
"use strict";

const Flame = (() => {
  const ROW = 17;
  const MIN_PX = 0.6;

  // Warm colours hashed from the name, so a frame keeps its colour across redraws.
  function colour(name) {
    let h = 0;
    for (let i = 0; i < name.length; i++) h = (h * 31 + name.charCodeAt(i)) | 0;
    const r = 205 + (Math.abs(h) % 50), g = 80 + (Math.abs(h >> 8) % 130), b = 40 + (Math.abs(h >> 16) % 40);
    return `rgb(${r},${g},${b})`;
  }

  // Red where the frame's share grew from base to new, blue where it shrank.
  function diffColour(node, total, baseTotal) {
    const now = total ? node.v / total : 0, before = baseTotal ? (node.b || 0) / baseTotal : 0;
    const d = now - before;
    const k = Math.min(1, Math.abs(d) * 20);
    const shade = Math.round(255 - 155 * k);
    return d >= 0 ? `rgb(255,${shade},${shade})` : `rgb(${shade},${shade},255)`;
  }

  function matcher(text) {
    if (!text) return null;
    const m = /^\/(.+)\/$/.exec(text);
    if (m) {
      try { const re = new RegExp(m[1]); return (s) => re.test(s); } catch (e) { return null; }
    }
    const t = text.toLowerCase();
    return (s) => s.toLowerCase().includes(t);
  }

  function depthOf(node) {
    let d = 0;
    for (const c of node.c || []) d = Math.max(d, depthOf(c));
    return d + 1;
  }

  // Sum of the values of the outermost matching frames under `node`: a frame inside a match is already
  // counted by it.
  function matched(node, match) {
    if (match(node.n)) return node.v;
    let s = 0;
    for (const c of node.c || []) s += matched(c, match);
    return s;
  }

  // Draws `tree` into `el`. opts: {icicle, search, diff, total, baseTotal, unit, onInfo, rootLabel}.
  function render(el, tree, opts) {
    const state = { zoom: [tree], opts };
    function draw() {
      el.textContent = "";
      const focus = state.zoom[state.zoom.length - 1];
      const ancestors = state.zoom.slice(0, -1);
      const depth = ancestors.length + depthOf(focus);
      const width = el.clientWidth || 1000;
      el.style.height = (depth * ROW + 2) + "px";
      const match = matcher(opts.search);
      const y = (d) => (opts.icicle ? d * ROW : (depth - 1 - d) * ROW);
      const frag = document.createDocumentFragment();
      const add = (node, d, x, w, dim) => {
        const div = document.createElement("div");
        div.className = "fr" + (match && match(node.n) ? " match" : "") + (dim ? " dim" : "");
        div.style.left = x + "px";
        div.style.top = y(d) + "px";
        div.style.width = Math.max(w, 1) + "px";
        div.style.background = opts.diff ? diffColour(node, opts.total, opts.baseTotal) : colour(node.n);
        if (w > 30) div.textContent = node.n;
        const pct = opts.total ? (100 * node.v / opts.total).toFixed(2) : "0";
        let title = `${node.n}\n${node.v.toLocaleString("en-US")} ${opts.unit || ""} (${pct}%)`;
        if (opts.diff) title += `\nbefore: ${(node.b || 0).toLocaleString("en-US")}`;
        div.title = title;
        div.dataset.name = node.n;
        div.addEventListener("click", (ev) => { ev.stopPropagation(); zoomTo(node, d); });
        frag.appendChild(div);
      };
      ancestors.forEach((a, d) => add(a, d, 0, width, true));
      const walk = (node, d, x, w) => {
        add(node, d, x, w, false);
        let cx = x;
        for (const c of node.c || []) {
          const cw = node.v ? (w * c.v) / node.v : 0;
          if (cw >= MIN_PX) walk(c, d + 1, cx, cw);
          cx += cw;
        }
      };
      walk(focus, ancestors.length, 0, width);
      el.appendChild(frag);
      if (opts.onInfo) {
        const m = match ? matched(tree, match) : null;
        opts.onInfo({ focus, zoomed: state.zoom.length > 1, matched: m, total: tree.v });
      }
    }
    // Clicking a frame zooms to it; clicking an ancestor (drawn dimmed) zooms back out to it.
    function zoomTo(node, d) {
      const at = state.zoom.indexOf(node);
      if (at >= 0) {
        state.zoom = state.zoom.slice(0, at + 1);
      } else {
        // Rebuild the chain from the root to the node.
        const chain = [];
        const find = (n) => {
          chain.push(n);
          if (n === node) return true;
          for (const c of n.c || []) if (find(c)) return true;
          chain.pop();
          return false;
        };
        find(tree);
        state.zoom = chain;
      }
      draw();
    }
    draw();
    return {
      redraw: draw,
      reset() { state.zoom = [tree]; draw(); },
      search(text) { opts.search = text; draw(); },
      setIcicle(on) { opts.icicle = on; draw(); },
      zoomTo,
    };
  }

  return { render, matcher, matched };
})();
