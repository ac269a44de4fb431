// hprof serve's single-page application: views over the JSON API (/api/...), routed by the URL's hash
// (#/view?key=value…) so that every view can be linked and reloaded. No framework: small render
// functions that build elements with h().
"use strict";

const App = (() => {
  const view = document.getElementById("view");
  const nav = document.getElementById("nav");
  const fileSelect = document.getElementById("file");
  const statusEl = document.getElementById("status");
  let files = [];          // /api/status's files
  const summaries = {};    // f -> /api/summary
  let renderId = 0;        // a newer route abandons an older one's late answers

  // ---- helpers -----------------------------------------------------------------------------------

  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else if (k === "class") el.className = v;
      else if (k === "dataset") Object.assign(el.dataset, v);
      else el.setAttribute(k, v === true ? "" : v);
    }
    for (const kid of kids.flat()) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.appendChild(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }

  const num = (n) => (n === null || n === undefined ? "–" : Number(n).toLocaleString("en-US"));
  function bytes(n) {
    if (n === null || n === undefined) return "–";
    const u = ["B", "KiB", "MiB", "GiB", "TiB"];
    let i = 0, x = Math.abs(n);
    while (x >= 1024 && i < u.length - 1) { x /= 1024; i++; }
    return (n < 0 ? "-" : "") + (i ? x.toFixed(1) : x) + " " + u[i];
  }
  const pct = (a, b) => (b ? (100 * a / b).toFixed(2) + "%" : "–");
  const signed = (n) => (n > 0 ? "+" : "") + num(n);

  function parseHash() {
    const raw = location.hash.replace(/^#\/?/, "");
    const [name, qs] = raw.split("?");
    const params = new URLSearchParams(qs || "");
    return { name: name || "overview", params };
  }

  // A link to a view: #/name?params with the current file kept.
  function href(name, params) {
    const p = new URLSearchParams();
    const cur = parseHash().params;
    if (cur.get("f") && !(params && "f" in params)) p.set("f", cur.get("f"));
    for (const [k, v] of Object.entries(params || {})) if (v !== null && v !== undefined && v !== "") p.set(k, v);
    const s = p.toString();
    return "#/" + name + (s ? "?" + s : "");
  }
  const go = (name, params) => { location.hash = href(name, params); };

  async function api(path, params) {
    const p = new URLSearchParams(params || {});
    if (!p.has("f")) p.set("f", currentFile());
    const r = await fetch("/api/" + path + "?" + p.toString(), { credentials: "same-origin" });
    let body;
    try { body = await r.json(); } catch (e) { body = { error: `${r.status} ${r.statusText}` }; }
    if (!r.ok) throw new Error(body.error || `${r.status} ${r.statusText}`);
    return body;
  }

  const currentFile = () => parseHash().params.get("f") || "0";

  function objectLink(o) {
    return h("a", { href: href("object", { id: o.id }), class: "obj", dataset: { id: o.id } }, o.label || `${o.class}@${o.id}`);
  }

  function table(cls, head, rows) {
    return h("table", { class: cls },
      h("thead", {}, h("tr", {}, head.map((c) => h("th", { class: c.n ? "n" : "" }, c.t || c)))),
      h("tbody", {}, rows));
  }

  function pager(total, offset, limit, onPage) {
    if (total <= limit && offset === 0) return null;
    return h("div", { class: "pager" },
      h("button", { disabled: offset === 0, onclick: () => onPage(Math.max(0, offset - limit)) }, "‹ previous"),
      h("span", { class: "muted" }, `${num(offset + 1)}–${num(Math.min(total, offset + limit))} of ${num(total)}`),
      h("button", { disabled: offset + limit >= total, onclick: () => onPage(offset + limit) }, "next ›"));
  }

  function showError(e, where) {
    return h("div", { class: "error", id: "view-error" }, (where ? where + ": " : "") + (e.message || e));
  }

  // ---- the file's state: progress while indexing, the error page if it cannot be read ------------

  async function status() {
    const r = await fetch("/api/status", { credentials: "same-origin" });
    const s = await r.json();
    files = s.files || [s];
    return files;
  }

  function fillFiles() {
    fileSelect.textContent = "";
    files.forEach((f, i) => fileSelect.appendChild(h("option", { value: i }, f.file.split("/").pop())));
    fileSelect.value = currentFile();
    fileSelect.hidden = files.length < 2;
  }

  // Waits for file f's index, showing its progress; resolves to its summary or throws its error.
  async function ready(f) {
    if (summaries[f]) return summaries[f];
    let shown = false;
    for (;;) {
      await status();
      const s = files[Number(f)];
      if (!s) throw new Error(`no file ${f}`);
      if (s.state === "ready") break;
      if (s.state === "failed") {
        const err = new Error(s.error);
        err.fileError = s;
        throw err;
      }
      const frac = s.total ? s.done / s.total : 0;
      if (!shown) {
        view.textContent = "";
        view.appendChild(h("div", { id: "progress-view" },
          h("h1", {}, "Indexing " + s.file),
          h("p", { id: "progress" }, ""),
          h("div", { class: "bar" }, h("div", { id: "progress-bar" }))));
        shown = true;
      }
      document.getElementById("progress").textContent =
        `${s.stage}${s.total ? ` — ${(100 * frac).toFixed(0)}%` : ""}`;
      document.getElementById("progress-bar").style.width = (100 * frac).toFixed(1) + "%";
      statusEl.textContent = "indexing…";
      await new Promise((r) => setTimeout(r, 400));
    }
    statusEl.textContent = "";
    summaries[f] = await api("summary", { f });
    return summaries[f];
  }

  // ---- navigation: only the views this file has --------------------------------------------------

  function views(sum) {
    const v = [["overview", "Overview"]];
    const f = Number(currentFile());
    const others = files.map((_, i) => i).filter((i) => i !== f);
    if (sum.heap) {
      v.push(["histo", "Histogram"], ["dominators", "Dominator tree"], ["leaks", "Leak suspects"], ["waste", "Waste"],
        ["loaders", "Class loaders"], ["threads", "Threads"]);
    }
    if (sum.profiles.length) v.push(["flame", "Flame graph"], ["callers", "Callers"]);
    if (others.length) {
      if (sum.heap) v.push(["diff", "Dump diff"]);
      if (sum.profiles.length) v.push(["flamediff", "Diff flame graph"]);
    }
    return v;
  }

  function drawNav(sum, active) {
    nav.textContent = "";
    for (const [name, label] of views(sum)) {
      nav.appendChild(h("a", { href: href(name, {}), id: "nav-" + name, class: name === active ? "active" : "" }, label));
    }
  }

  // ---- views ---------------------------------------------------------------------------------------

  function overview(sum) {
    const left = h("div", { class: "panel", id: "summary" },
      h("h2", {}, "Summary"),
      table("kv", ["", ""], [
        h("tr", {}, h("td", {}, "file"), h("td", { class: "name" }, sum.file)),
        h("tr", {}, h("td", {}, "format"), h("td", {}, `${sum.version}, ${sum.id_size}-byte identifiers`)),
        sum.heap && h("tr", {}, h("td", {}, "objects"), h("td", { id: "objects-total" }, num(sum.heap.objects_total))),
        sum.heap && h("tr", {}, h("td", {}, "reachable"), h("td", {}, `${num(sum.heap.reachable)} objects, ${bytes(sum.heap.reachable_bytes)}`)),
        sum.heap && h("tr", {}, h("td", {}, "classes"), h("td", {}, num(sum.heap.classes_total))),
        sum.heap && h("tr", {}, h("td", {}, "GC roots"), h("td", {}, num(sum.heap.roots))),
        ...sum.profiles.map((p) => h("tr", {}, h("td", {}, p.title), h("td", {}, h("a", { href: href("flame", { kind: p.kind }) }, `${num(p.total)} ${p.unit}`)))),
      ]),
      sum.damage && h("p", { class: "error" }, `damaged: ${sum.damage}; what is shown comes from before it`),
      sum.incomplete && h("p", { class: "error" }, sum.incomplete),
      sum.no_heap && h("p", { class: "muted" }, sum.no_heap),
      h("h2", {}, "Records"),
      table("records", ["record", { t: "count", n: 1 }], sum.records.map((r) => h("tr", {}, h("td", {}, r.record), h("td", { class: "n" }, num(r.count))))));
    const right = [];
    if (sum.heap) {
      const total = sum.heap.tree_bytes;
      right.push(h("div", { class: "panel" }, h("h2", {}, "Biggest classes (retained)"),
        table("biggest-classes", ["class", { t: "instances", n: 1 }, { t: "retained", n: 1 }, { t: "%", n: 1 }],
          sum.heap.biggest_classes.map((c) => h("tr", {},
            h("td", { class: "name" }, h("a", { href: href("histo", { filter: c.class, open: c.class }) }, c.class)),
            h("td", { class: "n" }, num(c.instances)), h("td", { class: "n" }, bytes(c.retained_bytes)),
            h("td", { class: "n" }, pct(c.retained_bytes, total)))))));
      right.push(h("div", { class: "panel" }, h("h2", {}, "Biggest objects (retained)"),
        table("biggest-objects", ["object", { t: "retained", n: 1 }, { t: "%", n: 1 }],
          sum.heap.biggest_objects.map((o) => h("tr", {},
            h("td", { class: "name" }, objectLink(o)), h("td", { class: "n" }, bytes(o.retained_bytes)),
            h("td", { class: "n" }, pct(o.retained_bytes, total)))))));
    }
    return h("div", { id: "overview" }, h("h1", {}, sum.file), h("div", { class: "cols" }, left, h("div", {}, right)));
  }

  async function histo(sum, p) {
    const q = { filter: p.get("filter") || "", sort: p.get("sort") || "retained", group: p.get("group") || "class",
      offset: Number(p.get("offset") || 0), limit: 100 };
    const set = (changes) => go("histo", Object.assign({}, q, { offset: 0, open: null }, changes));
    const d = await api("histo", q);
    const filter = h("input", { type: "search", id: "histo-filter", placeholder: "class filter (java.util.*Map)", value: q.filter });
    filter.addEventListener("keydown", (e) => { if (e.key === "Enter") set({ filter: filter.value }); });
    const select = (id, cur, opts, key) => {
      const s = h("select", { id }, opts.map(([v, t]) => h("option", { value: v, selected: v === cur }, t)));
      s.addEventListener("change", () => set({ [key]: s.value }));
      return s;
    };
    const grouped = q.group !== "class";
    // A group's retained size counts each object once: an object under another of the group in the
    // dominator tree is in that one's retained size already.
    const head = [grouped ? (q.group === "package" ? "package" : "class loader") : "class", { t: "instances", n: 1 },
      { t: "shallow", n: 1 }, { t: "retained", n: 1 }, grouped ? { t: "classes", n: 1 } : null].filter((x) => x);
    const rows = d.classes.map((c) => {
      const name = grouped
        ? h("a", { onclick: () => set({ group: "class", filter: q.group === "package" ? c.class + ".*" : q.filter }) }, c.class)
        : h("a", { class: "class-link", onclick: () => showInstances(c.class) }, c.class);
      return h("tr", { dataset: { class: c.class } }, h("td", { class: "name" }, name), h("td", { class: "n" }, num(c.instances)),
        h("td", { class: "n" }, num(c.shallow_bytes)), h("td", { class: "n" }, num(c.retained_bytes)),
        grouped ? h("td", { class: "n" }, num(c.classes)) : null);
    });
    const instances = h("div", { id: "instances" });
    async function showInstances(cls, offset = 0) {
      instances.textContent = "";
      instances.appendChild(h("h2", {}, `Instances of ${cls}`));
      try {
        const o = await api("objects", { class: cls, offset, limit: 50 });
        instances.appendChild(pager(o.total, offset, 50, (off) => showInstances(cls, off)) || h("span"));
        instances.appendChild(table("instances-table", ["object", { t: "shallow", n: 1 }, { t: "retained", n: 1 }],
          o.objects.map((x) => h("tr", {}, h("td", { class: "name" }, objectLink(x)), h("td", { class: "n" }, num(x.shallow_bytes)),
            h("td", { class: "n" }, num(x.retained_bytes))))));
      } catch (e) { instances.appendChild(showError(e)); }
      instances.scrollIntoView();
    }
    if (p.get("open")) setTimeout(() => showInstances(p.get("open")), 0);
    return h("div", { id: "histo" },
      h("h1", {}, "Class histogram"),
      h("div", { class: "controls" }, filter, h("button", { id: "histo-apply", onclick: () => set({ filter: filter.value }) }, "Filter"),
        h("label", {}, "sort ", select("histo-sort", q.sort, [["retained", "retained"], ["shallow", "shallow"], ["instances", "instances"], ["name", "name"]], "sort")),
        h("label", {}, "group by ", select("histo-group", q.group, [["class", "class"], ["package", "package"], ["loader", "class loader"]], "group")),
        h("span", { class: "muted", id: "histo-count" }, `${num(d.total)} rows, ${num(d.instances)} objects, ${bytes(d.shallow_bytes)}`)),
      pager(d.total, q.offset, q.limit, (off) => set({ offset: off, filter: q.filter, sort: q.sort, group: q.group })),
      table("histo-table", head, rows), instances);
  }

  // The dominator tree: one row per object, children fetched when a row is opened.
  async function dominators(sum) {
    const root = await api("dominators", { limit: 50 });
    const total = root.tree_bytes;
    const body = h("tbody", {});
    function rowsFor(level, depth, after) {
      let anchor = after;
      const place = (tr) => { if (anchor) anchor.after(tr); else body.appendChild(tr); anchor = tr; };
      for (const o of level.children) {
        const toggle = h("span", { class: "toggle" }, o.children ? "▸" : "");
        const tr = h("tr", { class: "dom-row", dataset: { id: o.id, depth } },
          h("td", { class: "name", style: `padding-left:${0.5 + depth * 1.3}em` }, toggle, objectLink(o)),
          h("td", { class: "n" }, num(o.shallow_bytes)), h("td", { class: "n" }, num(o.retained_bytes)),
          h("td", { class: "n" }, h("span", { class: "share", style: `width:${Math.round(60 * o.retained_bytes / (total || 1))}px` }), pct(o.retained_bytes, total)));
        if (o.children) {
          toggle.addEventListener("click", () => expand(tr, toggle, o, depth));
        }
        place(tr);
      }
      if (level.total > level.offset + level.children.length) {
        const more = h("tr", { class: "dom-more", dataset: { depth } }, h("td", { colspan: 4, style: `padding-left:${1.8 + depth * 1.3}em` },
          h("a", {}, `${num(level.total - level.offset - level.children.length)} more…`)));
        more.querySelector("a").addEventListener("click", async () => {
          const next = await api("dominators", { id: level.object ? level.object.id : "", offset: level.offset + level.children.length, limit: 50 });
          const prev = more.previousSibling;
          more.remove();
          rowsFor(next, depth, prev);
        });
        place(more);
      }
      return anchor;
    }
    async function expand(tr, toggle, o, depth) {
      if (tr.dataset.open === "1") {
        // Close: drop the rows below it that are deeper than it.
        let n = tr.nextSibling;
        while (n && Number(n.dataset.depth) > depth) {
          const next = n.nextSibling;
          n.remove();
          n = next;
        }
        tr.dataset.open = "0";
        toggle.textContent = "▸";
        return;
      }
      toggle.textContent = "…";
      const level = await api("dominators", { id: o.id, limit: 50 });
      tr.dataset.open = "1";
      toggle.textContent = "▾";
      rowsFor(level, depth + 1, tr);
    }
    rowsFor(root, 0, null);
    return h("div", { id: "dominators" }, h("h1", {}, "Dominator tree"),
      h("p", { class: "muted" }, `${num(root.total)} objects directly under the GC roots; ${bytes(total)} retained in all. Open a row (▸) to see what it dominates.`),
      h("table", { class: "dom-table" }, h("thead", {}, h("tr", {}, h("th", {}, "object"), h("th", { class: "n" }, "shallow"),
        h("th", { class: "n" }, "retained"), h("th", { class: "n" }, "%"))), body));
  }

  function refTable(cls, list) {
    return table(cls, ["field", "object", { t: "shallow", n: 1 }, { t: "retained", n: 1 }], list.map((o) => h("tr", {},
      h("td", { class: "mono" }, o.field || ""), h("td", { class: "name" }, objectLink(o)),
      h("td", { class: "n" }, num(o.shallow_bytes)), h("td", { class: "n" }, num(o.retained_bytes)))));
  }

  function valueCell(f) {
    return f.ref ? h("a", { href: href("object", { id: f.ref.id }), class: "ref" }, f.ref.label) : h("span", { class: "mono" }, f.value);
  }

  async function object(sum, p) {
    const id = p.get("id");
    const offset = Number(p.get("offset") || 0);
    const o = await api("object", { id, offset, limit: 100 });
    const me = o.object;
    const out = h("div", { id: "object" }, h("h1", { id: "object-title" }, me.label));
    out.appendChild(table("kv object-sizes", ["", ""], [
      h("tr", {}, h("td", {}, "kind"), h("td", {}, o.kind)),
      h("tr", {}, h("td", {}, "shallow size"), h("td", { id: "shallow" }, num(me.shallow_bytes))),
      h("tr", {}, h("td", {}, "retained size"), h("td", { id: "retained" }, num(me.retained_bytes))),
      h("tr", {}, h("td", {}, "dominated by"), h("td", {}, me.dominator && me.dominator.startsWith("0x")
        ? h("a", { href: href("object", { id: me.dominator }) }, me.dominator) : String(me.dominator))),
      h("tr", {}, h("td", {}, "dominates"), h("td", {}, `${num(me.children)} objects`)),
      o.roots.length ? h("tr", {}, h("td", {}, "GC root"), h("td", {}, o.roots.map((r) => r.kind).join(", "))) : null,
      o.length !== undefined ? h("tr", {}, h("td", {}, "length"), h("td", {}, num(o.length))) : null,
      o.string !== undefined && o.string !== null ? h("tr", {}, h("td", {}, "text"), h("td", { class: "mono", id: "string" }, JSON.stringify(o.string))) : null,
    ]));
    // The path from a GC root.
    const weak = h("input", { type: "checkbox", id: "path-weak" });
    const pathBox = h("div", { id: "path" });
    async function showPath() {
      pathBox.textContent = "…";
      try {
        const r = await api("path", { id, weak: weak.checked ? 1 : "" });
        pathBox.textContent = "";
        if (!r.path) { pathBox.appendChild(h("p", {}, "Not reachable from a GC root" + (weak.checked ? "." : " through strong references."))); return; }
        pathBox.appendChild(h("ol", { class: "path" },
          h("li", { class: "root" }, `GC root (${r.path.root_kind}${r.path.thread_serial ? ", thread " + r.path.thread_serial : ""})`),
          r.path.steps.map((s) => h("li", { class: "step" }, s.field ? h("span", { class: "field" }, s.field + " → ") : null,
            h("a", { href: href("object", { id: s.id }), class: "step-link", dataset: { id: s.id } }, s.label || s.class),
            h("span", { class: "muted" }, ` retained ${num(s.retained_bytes)}`)))));
      } catch (e) { pathBox.textContent = ""; pathBox.appendChild(showError(e)); }
    }
    weak.addEventListener("change", showPath);
    out.appendChild(h("h2", {}, "Path from a GC root"));
    out.appendChild(h("label", {}, weak, " also through weak and soft references"));
    out.appendChild(pathBox);
    showPath();
    const list = o.fields || o.statics || o.elements;
    if (list) {
      out.appendChild(h("h2", {}, o.fields ? "Fields" : o.statics ? "Static fields" : "Elements"));
      if (o.elements) out.appendChild(pager(o.length, offset, 100, (off) => go("object", { id, offset: off })) || h("span"));
      out.appendChild(table("fields", ["name", "type", "value"], list.map((f) => h("tr", {},
        h("td", { class: "mono" }, f.name), h("td", { class: "muted" }, f.type), h("td", { class: "name" }, valueCell(f))))));
    }
    out.appendChild(h("h2", {}, `References out (${num(o.outgoing_total)})`));
    out.appendChild(refTable("outgoing", o.outgoing));
    const inBox = h("div", { id: "incoming" }, "…");
    out.appendChild(h("h2", {}, "References in"));
    out.appendChild(inBox);
    async function showIncoming(off) {
      try {
        const r = await api("incoming", { id, offset: off, limit: 50 });
        inBox.textContent = "";
        if (r.root && !r.total) inBox.appendChild(h("p", { class: "muted" }, "A GC root: references to GC roots are not kept."));
        inBox.appendChild(pager(r.total, off, 50, showIncoming) || h("span", { class: "muted" }, `${num(r.total)} objects`));
        inBox.appendChild(refTable("incoming-table", r.objects));
      } catch (e) { inBox.textContent = ""; inBox.appendChild(showError(e)); }
    }
    showIncoming(0);
    return out;
  }

  async function leaks(sum, p) {
    const threshold = p.get("threshold") || "10";
    const d = await api("leaks", { threshold });
    const input = h("input", { type: "text", id: "leak-threshold", value: threshold, size: 4 });
    input.addEventListener("change", () => go("leaks", { threshold: input.value }));
    const items = d.objects.map((s) => h("li", { class: "suspect" },
      objectLink(s.object), ` retains ${bytes(s.object.retained_bytes)} (${pct(s.object.retained_bytes, d.tree_bytes)})`,
      s.accumulation.id !== s.object.id ? h("div", {}, "accumulation point: ", objectLink(s.accumulation)) : null,
      h("ul", {}, s.content.map((c) => h("li", {}, `${num(c.objects)} × ${c.class} retaining ${bytes(c.retained_bytes)}`)))));
    const classes = d.classes.map((c) => h("li", { class: "suspect-class" },
      `${num(c.instances)} instances of `, h("a", { href: href("histo", { filter: c.class, open: c.class }) }, c.class),
      ` retain ${bytes(c.retained_bytes)} (${pct(c.retained_bytes, d.tree_bytes)})`));
    return h("div", { id: "leaks" }, h("h1", {}, "Leak suspects"),
      h("div", { class: "controls" }, h("label", {}, "objects and classes retaining at least ", input, "% of ", bytes(d.tree_bytes))),
      items.length + classes.length ? h("ol", { id: "suspects" }, items, classes) : h("p", {}, "No suspects above the threshold."));
  }

  // Kind and thread pickers shared by the profile views; `extra` are the view's own parameters, kept.
  function profileControls(sum, p, name, extra = {}) {
    const kind = p.get("kind") || sum.profiles[0].kind;
    const prof = sum.profiles.find((x) => x.kind === kind) || sum.profiles[0];
    const keep = Object.assign({ kind, thread: p.get("thread"), b: p.get("b"), from: p.get("from"), to: p.get("to") }, extra);
    const set = (changes) => go(name, Object.assign({}, keep, changes));
    const kindSel = h("select", { id: "profile-kind" }, sum.profiles.map((x) => h("option", { value: x.kind, selected: x.kind === kind }, x.title)));
    // Another type may have no sample times: the range is dropped with the type.
    kindSel.addEventListener("change", () => set({ kind: kindSel.value, thread: null, from: null, to: null }));
    const threads = prof.threads.filter((t) => t.serial !== 0);
    let threadSel = null;
    if (threads.length) {
      threadSel = h("select", { id: "profile-thread" }, h("option", { value: "" }, "all threads"),
        threads.map((t) => h("option", { value: t.serial, selected: String(t.serial) === p.get("thread") },
          `${t.name || "thread " + t.serial} (${num(t.weight)})`)));
      threadSel.addEventListener("change", () => set({ thread: threadSel.value }));
    }
    const range = { from: p.get("from") || "", to: p.get("to") || "" };
    const strip = prof.times ? timeline(kind, p.get("thread") || "", range, set) : null;
    return { kind, prof, range, strip, controls: [kindSel, threadSel] };
  }

  // The samples per time bucket (of the thread picked) with the range picked: drag across the strip or
  // type the bounds (ms since the session started); `set` moves the view to the new range.
  function timeline(kind, thread, range, set) {
    const HEIGHT = 60;
    const bars = h("div", { class: "tl-bars", id: "timeline-bars" });
    const sel = h("div", { class: "tl-sel", id: "timeline-sel", hidden: true });
    const strip = h("div", { class: "tl-strip", id: "timeline" }, bars, sel);
    const from = h("input", { type: "number", min: 0, id: "timeline-from", value: range.from, placeholder: "from ms", class: "tl-ms" });
    const to = h("input", { type: "number", min: 0, id: "timeline-to", value: range.to, placeholder: "to ms", class: "tl-ms" });
    const apply = () => set({ from: from.value, to: to.value });
    for (const i of [from, to]) i.addEventListener("keydown", (e) => { if (e.key === "Enter") apply(); });
    const info = h("span", { class: "muted", id: "timeline-info" });
    const box = h("div", { class: "timeline" }, strip,
      h("div", { class: "controls" }, "time range ", from, " – ", to, " ms ",
        h("button", { id: "timeline-apply", onclick: apply }, "apply"),
        h("button", { id: "timeline-clear", onclick: () => set({ from: null, to: null }) }, "whole profile"), info));
    api("timeline", { kind, thread, buckets: 300 }).then((t) => {
      const end = t.counts.length * t.bucket_ms;
      const max = Math.max(1, ...t.counts);
      strip.dataset.endMs = t.end_ms;
      strip.dataset.total = t.counts.reduce((a, b) => a + b, 0);
      const w = 100 / t.counts.length;
      t.counts.forEach((c, i) => {
        if (!c) return;
        bars.appendChild(h("div", { class: "tl-bar", style: `left:${i * w}%;width:${w}%;height:${Math.max(1, Math.round(HEIGHT * c / max))}px`,
          title: `${num(i * t.bucket_ms)}–${num((i + 1) * t.bucket_ms)} ms: ${num(c)} ${t.unit}` }));
      });
      const pctOf = (ms) => Math.min(100, Math.max(0, 100 * ms / end));
      const show = (a, b) => {
        sel.hidden = false;
        sel.style.left = pctOf(a) + "%";
        sel.style.width = Math.max(0.2, pctOf(b) - pctOf(a)) + "%";
      };
      if (range.from || range.to) show(Number(range.from || 0), Number(range.to || end));
      info.textContent = `${num(t.end_ms)} ms, ${num(t.bucket_ms)} ms a bar; drag across the bars to pick a range`;
      const msAt = (ev) => {
        const r = strip.getBoundingClientRect();
        return Math.round(Math.min(1, Math.max(0, (ev.clientX - r.left) / r.width)) * end);
      };
      let start = null;
      strip.addEventListener("mousedown", (ev) => { ev.preventDefault(); start = msAt(ev); show(start, start); });
      strip.addEventListener("mousemove", (ev) => {
        if (start === null) return;
        const at = msAt(ev);
        show(Math.min(start, at), Math.max(start, at));
      });
      const finish = (ev) => {
        if (start === null) return;
        const at = msAt(ev);
        const a = Math.min(start, at), b = Math.max(start, at);
        start = null;
        if (b > a) set({ from: a, to: b });
      };
      strip.addEventListener("mouseup", finish);
      strip.addEventListener("mouseleave", finish);
    }).catch((e) => box.appendChild(showError(e, "timeline")));
    return box;
  }

  const rangeText = (r) => (r.from || r.to ? ` from ${num(Number(r.from || 0))} ms${r.to ? ` to ${num(Number(r.to))} ms` : ""}` : "");

  // A flame graph with search, zoom and the icicle switch, under `title`.
  function flameBox(tree, opts, idp) {
    const box = h("div", { class: "flame", id: idp + "-graph" });
    const info = h("div", { id: idp + "-info", class: "muted" });
    const search = h("input", { type: "search", id: idp + "-search", placeholder: "search frames (text or /regex/)" });
    const icicle = h("input", { type: "checkbox", id: idp + "-icicle", checked: !!opts.icicle });
    const reset = h("button", { id: idp + "-reset" }, "reset zoom");
    opts.onInfo = (s) => {
      const parts = [];
      if (s.zoomed) parts.push(`zoomed to ${s.focus.n}: ${num(s.focus.v)} ${opts.unit} (${pct(s.focus.v, s.total)})`);
      if (s.matched !== null) parts.push(`matched: ${pct(s.matched, s.total)} (${num(s.matched)} ${opts.unit})`);
      info.textContent = parts.join(" · ") || `${num(s.total)} ${opts.unit}; click a frame to zoom`;
      info.dataset.matched = s.matched === null ? "" : String(s.matched);
      info.dataset.focus = s.focus.n;
    };
    const wrap = h("div", {}, h("div", { class: "controls" }, search, h("label", {}, icicle, " icicle"), reset), info, box);
    requestAnimationFrame(() => {
      const g = Flame.render(box, tree, opts);
      search.addEventListener("input", () => g.search(search.value));
      icicle.addEventListener("change", () => g.setIcicle(icicle.checked));
      reset.addEventListener("click", () => g.reset());
      window.addEventListener("resize", () => g.redraw());
    });
    return wrap;
  }

  async function flame(sum, p) {
    const { kind, controls, range, strip } = profileControls(sum, p, "flame");
    const d = await api("flame", { kind, thread: p.get("thread") || "", from: range.from, to: range.to });
    return h("div", { id: "flame" }, h("h1", {}, d.title),
      h("div", { class: "controls" }, controls, h("span", { class: "muted", id: "flame-total" }, `${num(d.total)} ${d.unit}`),
        h("span", { class: "muted" }, rangeText(range))),
      strip, flameBox(d.tree, { unit: d.unit, total: d.total }, "flame"));
  }

  async function callers(sum, p) {
    const frame = p.get("frame");
    const filter = p.get("filter") || "";
    const { kind, controls, range, strip } = profileControls(sum, p, "callers", { frame, filter });
    const thread = p.get("thread") || "";
    const { from, to } = range;
    const m = await api("methods", { kind, thread, filter, from, to, limit: 50 });
    const input = h("input", { type: "search", id: "methods-filter", placeholder: "method filter", value: filter });
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") go("callers", { kind, thread, from, to, filter: input.value }); });
    const out = h("div", { id: "callers" }, h("h1", {}, "Callers and callees"),
      h("div", { class: "controls" }, controls, input, h("span", { class: "muted", id: "methods-total" }, `${num(m.total)} ${m.unit}${rangeText(range)}`)),
      strip,
      table("methods", ["method", { t: "total", n: 1 }, { t: "self", n: 1 }], m.methods.map((x) => h("tr", {},
        h("td", { class: "name" }, h("a", { class: "method", href: href("callers", { kind, thread, filter, from, to, frame: x.frame }) }, x.frame)),
        h("td", { class: "n" }, `${num(x.total)} (${pct(x.total, m.total)})`), h("td", { class: "n" }, `${num(x.self)} (${pct(x.self, m.total)})`)))));
    if (frame) {
      const c = await api("callers", { kind, thread, frame, from, to });
      out.appendChild(h("h2", { id: "callers-title" }, `Callers of ${frame} (${num(c.value)} ${c.unit}, ${pct(c.value, c.total)})`));
      out.appendChild(flameBox(c.callers, { unit: c.unit, total: c.value, icicle: true }, "callers"));
      out.appendChild(h("h2", {}, `Callees of ${frame}`));
      out.appendChild(flameBox(c.callees, { unit: c.unit, total: c.value, icicle: true }, "callees"));
    }
    return out;
  }

  function otherFile(p) {
    const f = Number(currentFile());
    const b = p.get("b");
    if (b !== null && Number(b) !== f && files[Number(b)]) return Number(b);
    return files.findIndex((_, i) => i !== f);
  }

  function baseSelect(p, name, extra) {
    const f = Number(currentFile());
    const b = otherFile(p);
    const sel = h("select", { id: "diff-base" }, files.map((x, i) => i === f ? null : h("option", { value: i, selected: i === b }, x.file.split("/").pop())));
    sel.addEventListener("change", () => go(name, Object.assign({ b: sel.value }, extra)));
    return { b, sel };
  }

  // The thread filter is by name in the second file (its serials are its own); the time range applies to
  // both files when the second has sample times too.
  async function flamediff(sum, p) {
    const { kind, controls, range, strip } = profileControls(sum, p, "flamediff");
    const thread = p.get("thread") || "";
    const { b, sel } = baseSelect(p, "flamediff", { kind, thread, from: range.from, to: range.to });
    const d = await api("flamediff", { kind, b, thread, from: range.from, to: range.to });
    const scope = (range.from || range.to) ? (d.base_range ? rangeText(range) + " in both" : rangeText(range) + " (after only)") : "";
    return h("div", { id: "flamediff" }, h("h1", {}, "Differential flame graph"),
      h("div", { class: "controls" }, "before: ", sel, ` → after: ${files[Number(currentFile())].file.split("/").pop()}`, controls,
        h("span", { class: "legend" }, h("span", { style: "background:#ff9b9b" }, "share grew"), h("span", { style: "background:#9b9bff" }, "share shrank")),
        h("span", { class: "muted", id: "flamediff-totals" }, `${num(d.base_total)} → ${num(d.total)} ${d.unit}`),
        h("span", { class: "muted" }, scope)),
      strip, flameBox(d.tree, { unit: d.unit, total: d.total, baseTotal: d.base_total, diff: true }, "flamediff"));
  }

  // Object by object (`hprof diff --objects`): the objects of this dump the other lacks, grouped by the
  // nearest object of both that keeps them, biggest retained first.
  // While the server computes it (in the background, right after indexing), the view says so and asks again.
  async function diffObjects(b, sel, modeSel, by) {
    const mine = renderId;
    let d;
    for (;;) {
      d = await api("diffobjects", { b, match: by });
      if (d.state !== "computing" || mine !== renderId) break;
      view.textContent = "";
      view.appendChild(h("div", { id: "diff" }, h("h1", {}, "Dump diff: new objects"),
        h("p", { id: "diffobjects-computing", class: "muted" }, `Computing the object diff against ${d.base.split("/").pop()}…`)));
      await new Promise((r) => setTimeout(r, 500));
    }
    const matchSel = h("select", { id: "diffobjects-match" }, [["auto", "match: auto"], ["identity", "by identity"], ["path", "by path"]]
      .map(([v, t]) => h("option", { value: v, selected: v === by }, t)));
    matchSel.addEventListener("change", () => go("diff", { b, mode: "objects", match: matchSel.value }));
    const rows = d.groups.map((g) => h("tr", { class: "growth", dataset: { holder: g.holder } },
      h("td", { class: "name" }, g.holder_id ? h("a", { href: href("object", { id: g.holder_id }) }, g.holder) : g.holder,
        g.path ? h("details", {}, h("summary", { class: "muted" }, "path from a GC root"), rootPath(g.path)) : null),
      h("td", { class: "n" }, num(g.new_objects)), h("td", { class: "n" }, num(g.new_bytes)), h("td", { class: "n" }, num(g.retained_bytes)),
      h("td", { class: "name" }, g.classes.slice(0, 4).map((c) => `${num(c.objects)} × ${c.class}`).join(", ") + (g.classes.length > 4 ? ", …" : ""))));
    return h("div", { id: "diff" }, h("h1", {}, "Dump diff: new objects"),
      h("div", { class: "controls" }, "before: ", sel, ` → after: ${files[Number(currentFile())].file.split("/").pop()}`, modeSel, matchSel),
      h("p", { id: "diffobjects-summary", dataset: { newObjects: d.new_objects, newBytes: d.new_bytes } },
        `${num(d.new_objects)} new objects (${bytes(d.new_bytes)}) of ${num(d.objects)}, matched ${d.matched_by}; the earlier dump has ${num(d.base_objects)} objects.`),
      table("diffobjects-table", ["kept by", { t: "new objects", n: 1 }, { t: "new bytes", n: 1 }, { t: "retained", n: 1 }, "classes"], rows));
  }

  async function diff(sum, p) {
    const filter = p.get("filter") || "";
    const offset = Number(p.get("offset") || 0);
    const mode = p.get("mode") || "class";
    const { b, sel } = baseSelect(p, "diff", { filter, mode });
    const modeSel = h("select", { id: "diff-mode" }, [["class", "by class"], ["objects", "object by object"]]
      .map(([v, t]) => h("option", { value: v, selected: v === mode }, t)));
    modeSel.addEventListener("change", () => go("diff", { b, mode: modeSel.value }));
    if (mode === "objects") return diffObjects(b, sel, modeSel, p.get("match") || "auto");
    // Rows read as "from b= to this file": b is the earlier dump.
    const d = await api("diff", { b, filter, offset, limit: 100 });
    const input = h("input", { type: "search", id: "diff-filter", value: filter, placeholder: "class filter" });
    input.addEventListener("keydown", (e) => { if (e.key === "Enter") go("diff", { b, filter: input.value }); });
    const rows = d.classes.map((c) => h("tr", {}, h("td", { class: "name" }, c.class),
      h("td", { class: "n" }, num(c.b.instances)), h("td", { class: "n" }, num(c.a.instances)), h("td", { class: "n" }, signed(c.a.instances - c.b.instances)),
      h("td", { class: "n" }, num(c.b.shallow_bytes)), h("td", { class: "n" }, num(c.a.shallow_bytes)), h("td", { class: "n" }, signed(c.a.shallow_bytes - c.b.shallow_bytes)),
      h("td", { class: "n" }, num(c.b.retained_bytes)), h("td", { class: "n" }, num(c.a.retained_bytes)), h("td", { class: "n" }, signed(c.a.retained_bytes - c.b.retained_bytes))));
    return h("div", { id: "diff" }, h("h1", {}, "Dump diff"),
      h("div", { class: "controls" }, "before: ", sel, ` → after: ${files[Number(currentFile())].file.split("/").pop()}`, modeSel, input),
      h("p", { class: "muted" }, `objects ${num(d.b.objects)} → ${num(d.a.objects)}; reachable ${bytes(d.b.reachable_bytes)} → ${bytes(d.a.reachable_bytes)}; ${num(d.total)} classes changed`),
      pager(d.total, offset, 100, (off) => go("diff", { b, filter, offset: off })),
      table("diff-table", ["class", { t: "instances before", n: 1 }, { t: "after", n: 1 }, { t: "Δ", n: 1 },
        { t: "shallow before", n: 1 }, { t: "after", n: 1 }, { t: "Δ", n: 1 }, { t: "retained before", n: 1 }, { t: "after", n: 1 }, { t: "Δ", n: 1 }], rows));
  }

  // The heap insights of `hprof waste`, `loaders` and `threads`.
  async function waste(sum) {
    const w = await api("waste");
    const share = (x) => (100 * x).toFixed(2) + "%";
    const ds = w.duplicate_strings, da = w.duplicate_arrays;
    return h("div", { id: "waste" }, h("h1", {}, "Waste"),
      h("p", { id: "waste-total", dataset: { bytes: w.wasted_bytes } }, `${bytes(w.wasted_bytes)} of ${bytes(w.heap_bytes)} (${share(w.wasted_share)}) spent on nothing.`),
      h("h2", {}, `Duplicate strings: ${num(ds.strings)} copies, ${bytes(ds.wasted_bytes)} (${share(ds.share)})`),
      table("waste-strings", [{ t: "wasted", n: 1 }, { t: "strings", n: 1 }, { t: "length", n: 1 }, "value"], ds.top.map((d) => h("tr", {},
        h("td", { class: "n" }, num(d.wasted_bytes)), h("td", { class: "n" }, num(d.strings)), h("td", { class: "n" }, num(d.length)),
        h("td", { class: "mono name" }, d.value === null ? "<redacted>" : JSON.stringify(d.value))))),
      h("h2", {}, "Collections: empty, and unused slots"),
      table("waste-collections", ["class", { t: "instances", n: 1 }, { t: "empty", n: 1 }, { t: "underused", n: 1 }, { t: "wasted", n: 1 }, { t: "%", n: 1 }],
        w.collections.map((c) => h("tr", {}, h("td", { class: "name" }, h("a", { href: href("histo", { filter: c.class, open: c.class }) }, c.class)),
          h("td", { class: "n" }, num(c.instances)), h("td", { class: "n" }, num(c.empty)), h("td", { class: "n" }, num(c.underused)),
          h("td", { class: "n" }, num(c.wasted_bytes)), h("td", { class: "n" }, share(c.share))))),
      h("h2", {}, "Boxed primitives in collections"),
      table("waste-boxed", ["class", { t: "objects", n: 1 }, { t: "wasted", n: 1 }, "held by"], w.boxed_in_collections.map((b) => h("tr", {},
        h("td", {}, b.class), h("td", { class: "n" }, num(b.objects)), h("td", { class: "n" }, num(b.wasted_bytes)),
        h("td", { class: "name" }, b.holders.map((x) => `${x.class} (${num(x.objects)})`).join(", "))))),
      h("h2", {}, "Zero-filled arrays"),
      table("waste-zero", ["class", { t: "arrays", n: 1 }, { t: "bytes", n: 1 }, { t: "%", n: 1 }], w.zero_filled_arrays.map((z) => h("tr", {},
        h("td", {}, z.class), h("td", { class: "n" }, num(z.arrays)), h("td", { class: "n" }, num(z.bytes)), h("td", { class: "n" }, share(z.share))))),
      h("h2", {}, `Duplicate arrays: ${num(da.copies)} copies, ${bytes(da.wasted_bytes)} (${share(da.share)})`),
      table("waste-arrays", ["class", { t: "length", n: 1 }, { t: "copies", n: 1 }, { t: "wasted", n: 1 }], da.top.map((d) => h("tr", {},
        h("td", {}, d.class), h("td", { class: "n" }, num(d.length)), h("td", { class: "n" }, num(d.copies)), h("td", { class: "n" }, num(d.wasted_bytes))))));
  }

  function rootPath(p) {
    if (!p) return h("span", { class: "muted" }, "no path");
    return h("ol", { class: "path" }, h("li", {}, `GC root (${p.root_kind})`), p.steps.map((s) => h("li", {},
      s.field ? h("span", { class: "field" }, s.field + " → ") : null, h("a", { href: href("object", { id: s.id }) }, `${s.class}@${s.id}`))));
  }

  async function loaders(sum) {
    const r = await api("loaders");
    const link = (id, label) => (id && id !== "0x0" ? h("a", { href: href("object", { id }) }, label || id) : "<bootstrap>");
    return h("div", { id: "loaders" }, h("h1", {}, "Class loaders"),
      h("p", { class: "muted" }, `${num(r.loader_count)} loaders; ${num(r.duplicate_class_count)} classes defined by several loaders; ${r.held_after_close.length} closed loaders still held.`),
      table("loaders-table", ["loader", "name", "parent", { t: "classes", n: 1 }, { t: "instances", n: 1 }, { t: "retained", n: 1 }, ""],
        r.loaders.map((l) => h("tr", {}, h("td", { class: "name" }, link(l.id, `${l.class}@${l.id}`)), h("td", {}, l.name || ""),
          h("td", {}, l.parent === null ? "" : link(l.parent)), h("td", { class: "n" }, num(l.classes)), h("td", { class: "n" }, num(l.instances)),
          h("td", { class: "n" }, num(l.retained_bytes)), h("td", {}, l.closed ? "closed" : "")))),
      h("h2", {}, "Classes defined by several loaders"),
      r.duplicate_classes.length ? table("loaders-duplicates", ["class", "loaders"], r.duplicate_classes.map((d) => h("tr", {},
        h("td", { class: "name" }, d.class), h("td", {}, d.loaders.map((l, i) => [i ? ", " : "", link(l)]))))) : h("p", { class: "muted" }, "None."),
      h("h2", {}, "Closed loaders still held"),
      r.held_after_close.length ? h("ul", {}, r.held_after_close.map((x) => h("li", {}, link(x.loader), ` — ${x.why}`, rootPath(x.path))))
        : h("p", { class: "muted" }, "None."));
  }

  async function threads(sum) {
    const r = await api("threads");
    return h("div", { id: "threads" }, h("h1", {}, "Threads"),
      r.threads.map((t) => h("details", { class: "thread" },
        h("summary", {}, h("b", {}, t.name || `thread ${t.serial}`), ` — retains ${bytes(t.retained_bytes)}`,
          t.object ? [" ", h("a", { href: href("object", { id: t.object.id }) }, `${t.object.class}@${t.object.id}`)] : null),
        table("thread-frames", [{ t: "#", n: 1 }, "frame", { t: "retained", n: 1 }, "locals"], t.frames.map((f) => h("tr", {},
          h("td", { class: "n" }, f.depth), h("td", { class: "mono name" }, f.frame || "<no frame>"), h("td", { class: "n" }, f.object_count ? num(f.retained_bytes) : ""),
          h("td", { class: "name" }, f.objects.map((o, i) => [i ? ", " : "", h("a", { href: href("object", { id: o.id }) }, `${o.class}@${o.id}`)]),
            f.object_count > f.objects.length ? ` … ${num(f.object_count - f.objects.length)} more` : "")))))));
  }

  const routes = { overview, histo, dominators, object, leaks, waste, loaders, threads, flame, callers, flamediff, diff };

  // ---- the router --------------------------------------------------------------------------------

  async function route() {
    const mine = ++renderId;
    const { name, params } = parseHash();
    const f = currentFile();
    let sum;
    try {
      if (!files.length) await status();
      fillFiles();
      sum = await ready(f);
    } catch (e) {
      if (mine !== renderId) return;
      view.textContent = "";
      const s = e.fileError;
      view.appendChild(h("div", { id: "file-error" }, h("h1", {}, "Cannot read " + (s ? s.file : "the file")),
        h("p", { class: "error", id: "error" }, e.message)));
      nav.textContent = "";
      return;
    }
    if (mine !== renderId) return;
    const known = views(sum).some(([v]) => v === name) || name === "object";
    const viewName = known ? name : "overview";
    drawNav(sum, viewName);
    statusEl.textContent = "loading…";
    try {
      const el = await routes[viewName](sum, params);
      if (mine !== renderId) return;
      view.textContent = "";
      view.appendChild(el);
      document.title = `${viewName} - ${sum.file.split("/").pop()} - hprof`;
    } catch (e) {
      if (mine !== renderId) return;
      view.textContent = "";
      view.appendChild(showError(e, viewName));
    }
    statusEl.textContent = "";
    view.dataset.view = viewName;
    view.dataset.ready = String(mine);
  }

  fileSelect.addEventListener("change", () => go("overview", { f: fileSelect.value }));
  window.addEventListener("hashchange", route);
  route();
  return { route, api };
})();
