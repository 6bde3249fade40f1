// hudi-shim UI: draws a table's schema history, timeline, files and query plan from /ui/api.
// Plain JavaScript, no build step. Everything read-only; errors are the API's JSON errors, shown.
"use strict";

(() => {
  const table = document.body.dataset.table;
  if (table === undefined) return; // the tables list is rendered on the server
  const base = `/ui/api/tables/${encodeURIComponent(table)}`;

  function el(tag, attrs, ...children) {
    const node = document.createElement(tag);
    for (const [key, value] of Object.entries(attrs || {})) {
      if (value === null || value === undefined || value === false) continue;
      if (key === "class") node.className = value;
      else if (key === "dataset") Object.assign(node.dataset, value);
      else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
      else node.setAttribute(key, value === true ? "" : value);
    }
    for (const child of children.flat(Infinity)) {
      if (child === null || child === undefined || child === false) continue;
      node.append(child instanceof Node ? child : document.createTextNode(String(child)));
    }
    return node;
  }

  function fill(node, ...children) {
    node.replaceChildren(...children.flat(Infinity).filter((c) => c !== null && c !== undefined && c !== false));
    return node;
  }

  async function api(path) {
    const response = await fetch(path, { credentials: "same-origin", headers: { Accept: "application/json" } });
    let body = null;
    try { body = await response.json(); } catch (_) { body = null; }
    if (!response.ok) {
      const error = (body && body.error) || { type: "HTTPError", message: response.statusText };
      throw Object.assign(new Error(error.message), { status: response.status, type: error.type, detail: error });
    }
    return body;
  }

  function errorBox(error) {
    const status = error.status || "";
    const type = error.type || error.name || "Error";
    const login = status === 401
      ? [" — ", el("a", { href: `/ui/login?next=${encodeURIComponent(location.pathname)}` }, "log in")] : null;
    return el("div", { class: "error", role: "alert", dataset: { status: String(status), type } },
      `${status} ${type}: ${error.message}`, login);
  }

  function instantText(t) {
    if (!t || !/^\d{14,}$/.test(t)) return t || "";
    const text = `${t.slice(0, 4)}-${t.slice(4, 6)}-${t.slice(6, 8)} ${t.slice(8, 10)}:${t.slice(10, 12)}:${t.slice(12, 14)}`;
    return t.length > 14 ? `${text}.${t.slice(14)}` : text;
  }

  function instantLink(t) {
    return el("a", { href: `#timeline:${t}`, class: "instant", title: t }, instantText(t));
  }

  // -- summary ------------------------------------------------------------------------------------

  async function loadSummary() {
    const box = document.getElementById("summary");
    try {
      const row = await api(base);
      if (row.error) { fill(box, errorBox({ status: row.error.code, ...row.error })); return; }
      const last = row.last_commit;
      fill(box,
        el("span", {}, row.table_type), " · version ", el("span", {}, row.version),
        " · ", el("span", { class: "path" }, row.location),
        " · last commit ", last ? [instantLink(last.time), ` ${last.action}${last.operation ? " " + last.operation : ""}`] : "none",
        " · ", el("span", { dataset: { rows: String(row.rows) } }, `≈ ${Number(row.rows).toLocaleString("en")} rows`),
        ` in ${row.file_slices} file slices · views `, row.views.map((v) => [el("code", {}, v), " "]));
    } catch (error) { fill(box, errorBox(error)); }
  }

  // -- schema history -----------------------------------------------------------------------------

  function cellContent(cell) {
    if (cell.change === "absent") return [];
    if (cell.change === "dropped") return [el("span", { class: "what" }, "dropped")];
    const parts = [el("span", { class: "name" }, cell.name)];
    if (cell.was_name) parts.push(el("span", { class: "was" }, ` (was ${cell.was_name})`));
    parts.push(el("br"));
    parts.push(el("span", { class: "type" }, cell.was_type ? `${cell.was_type} → ${cell.type}` : cell.type));
    if (cell.change === "added" || cell.change === "readded") {
      parts.push(el("span", { class: "what" }, cell.change === "readded" ? " re-added (new id)" : " added"));
    }
    return parts;
  }

  async function loadSchema() {
    const section = document.getElementById("tab-schema");
    fill(section, el("p", { class: "loading" }, "loading…"));
    const { grid, instants } = await api(`${base}/schemas`);
    const head = el("tr", {}, el("th", {}, grid.keyed_by === "id" ? "id" : "—"), el("th", {}, "column"),
      grid.versions.map((v) => {
        const made = instants[v];
        return el("th", { class: "version", dataset: { version: v } }, instantLink(v), el("br"),
          el("small", {}, made ? `${made.operation || made.action}${made.archived ? " (archived)" : ""}` : "not on the timeline"));
      }));
    const body = grid.rows.map((row) => el("tr", {
      dataset: { id: row.id === null ? "" : String(row.id), names: row.names.join("|") }, class: `depth-${row.depth}`,
    },
    el("th", { class: "id" }, row.id === null ? "" : String(row.id)),
    el("th", { class: "names" }, row.names.join(" → ")),
    row.cells.map((cell, i) => el("td", {
      class: `cell change-${cell.change.replace(" ", "-")}`,
      dataset: { version: grid.versions[i], change: cell.change },
    }, cellContent(cell)))));
    const note = grid.keyed_by === "id"
      ? "One row per column id. A rename keeps its row; a drop ends it; a name re-added later is a new id, a row of its own."
      : "This table records no column ids (schema-on-read is off): versions are its commits' Avro writer schemas, and columns are matched by name.";
    fill(section,
      el("p", { class: "note" }, note),
      grid.versions.length
        ? el("div", { class: "scroll" }, el("table", { class: "grid schema", id: "schema-grid" }, el("thead", {}, head), el("tbody", {}, body)))
        : el("p", {}, "No schema recorded."),
      el("p", { class: "legend" }, ["added", "readded", "renamed", "widened", "dropped"].map((c) =>
        el("span", { class: `cell change-${c}` }, c === "readded" ? "re-added (new id)" : c))));
  }

  // -- timeline -----------------------------------------------------------------------------------

  function fileList(title, items) {
    if (!items || !items.length) return null;
    return el("div", {}, el("strong", {}, title), el("ul", {}, items.map((i) => el("li", {}, i))));
  }

  async function loadTimeline() {
    const section = document.getElementById("tab-timeline");
    fill(section, el("p", { class: "loading" }, "loading…"));
    const entries = await api(`${base}/timeline`);
    const rows = entries.map((e) => {
      const wrote = (e.wrote || []).map((w) =>
        `${w.partition ? w.partition + "/" : ""}${w.file} (${w.kind}: ${w.inserts} inserted, ${w.updates} updated, ${w.deletes} deleted, ${w.bytes} bytes)`);
      const details = [fileList("wrote", wrote), fileList("replaced file groups", e.replaced),
        fileList("removed", e.removed), fileList("plan", e.planned)].filter(Boolean);
      return el("tr", { id: `instant-${e.time}`, class: `state-${e.state}${e.archived ? " archived" : ""}`, dataset: { instant: e.time, action: e.action, state: e.state } },
        el("td", { class: "instant" }, instantText(e.time)),
        el("td", {}, e.action, e.archived ? el("span", { class: "badge archived" }, "archived") : null),
        el("td", {}, e.states.map((s) => el("span", { class: `badge ${s}` }, s))),
        el("td", { class: "instant" }, instantText(e.completion_time)),
        el("td", {}, e.operation || ""),
        el("td", {}, e.schema_version ? instantLink(e.schema_version) : ""),
        el("td", {}, e.error ? el("span", { class: "error" }, e.error) : e.summary,
          details.length ? el("details", {}, el("summary", {}, "files"), details) : null));
    });
    fill(section,
      el("p", { class: "note" }, `${entries.length} instants, oldest first (archived ones included).`),
      el("table", { class: "grid timeline", id: "timeline" },
        el("thead", {}, el("tr", {}, ["requested", "action", "states", "completed", "operation", "schema", "what it did"].map((h) => el("th", {}, h)))),
        el("tbody", {}, rows)));
  }

  // -- files --------------------------------------------------------------------------------------

  const hovers = new Map();
  let hoverId = 0;

  function fileChip(kind, label, title, mapped, extra) {
    const key = String(++hoverId);
    hovers.set(key, { title, mapped });
    const misreads = mapped ? mapped.misreads.length : 0;
    return el("span", {
      class: `file ${kind}${misreads ? " misread" : ""}`, tabindex: "0",
      dataset: { hover: key, misreads: String(misreads), file: label },
    }, label, extra || null, misreads ? el("span", { class: "flag", title: "misread by by-name or by-position readers" }, ` ⚠ ${misreads}`) : null);
  }

  function slicePart(s) {
    const parts = [el("span", { class: `badge ${s.state}` }, s.state)];
    if (s.base) {
      const b = s.base;
      parts.push(fileChip("base", b.file,
        `base file ${b.file} · written by ${instantText(b.instant)}${b.committed ? "" : " (not committed)"} · schema version ${b.schema_version || "none (by name)"}`,
        b.mapped, el("small", {}, ` ${instantText(b.instant)} · v ${b.schema_version || "—"}`)));
    } else {
      parts.push(el("span", { class: "nobase" }, "no base file"));
    }
    for (const log of s.logs) {
      const blocks = log.blocks.map((bl) => fileChip("block", `@${bl.offset}`,
        `log block at byte ${bl.offset} of ${log.file} · written by ${instantText(bl.instant)} · schema version ${bl.schema_version || "none (by name)"}`,
        bl.mapped, el("small", {}, ` ${instantText(bl.instant)} · v ${bl.schema_version || "—"}`)));
      parts.push(el("span", { class: "log" }, el("span", { class: "logname", title: `${log.size} bytes` }, log.file), blocks));
    }
    return el("div", { class: `slice ${s.state}`, dataset: { baseInstant: s.base_instant, state: s.state } }, parts);
  }

  let filesAsked = 0;
  let planAsked = 0;

  async function loadFiles(params) {
    const asked = ++filesAsked; // only the latest answer is drawn
    const body = document.getElementById("files-body");
    fill(body, el("p", { class: "loading" }, "loading…"));
    hovers.clear();
    const query = new URLSearchParams();
    if (params.view) query.set("view", params.view);
    if (params.as_of) query.set("as_of", params.as_of);
    try {
      const page = await api(`${base}/files?${query}`);
      if (asked !== filesAsked) return;
      const parts = page.partitions.map((p) => el("div", { class: "partition", dataset: { partition: p.path } },
        el("h3", {}, p.path || "(not partitioned)"),
        el("table", { class: "grid files" }, el("tbody", {}, p.groups.map((g) =>
          el("tr", { dataset: { fileId: g.file_id } }, el("th", { class: "fileid" }, g.file_id),
            el("td", {}, g.slices.map(slicePart))))))));
      fill(body,
        el("p", { class: "note", id: "files-summary", dataset: { instant: page.instant || "", view: page.view } },
          `${page.view} read as of ${instantText(page.instant) || "(no commit)"}: ${page.slices_read} file slices; `,
          el("strong", { dataset: { misreadFiles: String(page.misread_files) } }, `${page.misread_files} files or log blocks`),
          " that a by-name or by-position reader reads wrong (⚠, hover for how)."),
        parts);
    } catch (error) { if (asked === filesAsked) fill(body, errorBox(error)); }
  }

  function mappingTable(mapped) {
    if (!mapped) return el("p", {}, "Not read by this view: no mapping.");
    const rows = mapped.columns.map((c) => el("tr", { class: `action-${c.action.replace("+", "-")}` },
      el("td", {}, c.file_column === null ? "—" : c.file_column), el("td", {}, c.file_type || ""),
      el("td", {}, "→"), el("td", {}, c.table_column), el("td", {}, c.column_id === null ? "" : String(c.column_id)),
      el("td", {}, c.table_type), el("td", { class: "action" }, c.action)));
    const table = el("table", { class: "mapping" }, el("thead", {}, el("tr", {},
      ["file column", "file type", "", "table column", "id", "table type", "read as"].map((h) => el("th", {}, h)))), el("tbody", {}, rows));
    const flags = mapped.misreads.map((m) => el("li", { class: `misread kind-${m.kind}` },
      el("strong", {}, `${m.reader}: `), `${m.column} reads ${m.reads}`));
    return [table, flags.length ? el("ul", { class: "misreads" }, flags) : el("p", { class: "ok" }, "By-name and by-position readers read this file right.")];
  }

  function showTooltip(target) {
    const data = hovers.get(target.dataset.hover);
    const tip = document.getElementById("tooltip");
    if (!data) return;
    fill(tip, el("div", { class: "tiptitle" }, data.title), mappingTable(data.mapped));
    tip.hidden = false;
    const box = target.getBoundingClientRect();
    const left = Math.max(8, Math.min(box.left + window.scrollX, window.scrollX + document.documentElement.clientWidth - tip.offsetWidth - 8));
    tip.style.left = `${left}px`;
    tip.style.top = `${box.bottom + window.scrollY + 6}px`;
  }

  function hideTooltip() { document.getElementById("tooltip").hidden = true; }

  document.addEventListener("mouseover", (event) => {
    const target = event.target.closest && event.target.closest(".file[data-hover]");
    if (target) showTooltip(target);
  });
  document.addEventListener("mouseout", (event) => {
    const target = event.target.closest && event.target.closest(".file[data-hover]");
    if (target && !target.contains(event.relatedTarget)) hideTooltip();
  });
  document.addEventListener("focusin", (event) => {
    const target = event.target.closest && event.target.closest(".file[data-hover]");
    if (target) showTooltip(target);
  });
  document.addEventListener("focusout", hideTooltip);

  // -- query plan ---------------------------------------------------------------------------------

  async function loadPlan(params) {
    const asked = ++planAsked;
    const body = document.getElementById("plan-body");
    fill(body, el("p", { class: "loading" }, "planning…"));
    const query = new URLSearchParams();
    for (const key of ["filter", "as_of", "mode"]) if (params[key]) query.set(key, params[key]);
    try {
      const { plan, columns, rows } = await api(`${base}/plan?${query}`);
      if (asked !== planAsked) return;
      const partitions = plan.partitions.map((p) => el("tr", { class: p.kept ? "kept" : "pruned", dataset: { partition: p.path, kept: String(p.kept) } },
        el("td", {}, p.path || "(not partitioned)"), el("td", {}, p.kept ? "read" : "pruned"), el("td", {}, p.reason)));
      const files = plan.files.map((f) => el("tr", { class: f.base.startsWith("skipped") ? "pruned" : "kept", dataset: { fileId: f.file_id, base: f.base } },
        el("td", {}, f.partition), el("td", {}, f.file_id), el("td", {}, f.base_file || "—"),
        el("td", { class: "status" }, f.base, f.reason ? el("div", { class: "reason" }, f.reason) : null),
        el("td", {}, f.row_groups ? `${f.row_groups_skipped.length} of ${f.row_groups} skipped` : "",
          f.row_groups_skipped.map((r) => el("div", { class: "reason" }, `#${r.index}: ${r.reason}`))),
        el("td", {}, f.not_pushed.map((n) => el("div", { class: "reason" }, n))),
        el("td", {}, f.merged.length ? el("ol", {}, f.merged.map((b) => el("li", {},
          `${b.log_file} @${b.offset} · ${instantText(b.instant)} · v ${b.schema_version || "—"}`))) : "")));
      const head = el("tr", {}, columns.map((c) => el("th", { title: c.type }, c.name)));
      const data = rows.map((r) => el("tr", {}, columns.map((c) => el("td", {}, r[c.name] === null ? el("span", { class: "null" }, "NULL")
        : typeof r[c.name] === "object" ? JSON.stringify(r[c.name]) : String(r[c.name])))));
      fill(body,
        el("p", { class: "note", id: "plan-summary" }, `${plan.mode} read as of ${instantText(plan.read_instant) || "(no commit)"}`,
          plan.filter ? [" · filter ", el("code", {}, plan.filter)] : " · no filter",
          plan.keys ? [" · record keys looked up in bloom filters: ", el("code", {}, plan.keys.join(", "))] : null),
        el("h3", {}, "Partitions"),
        el("table", { class: "grid plan-partitions", id: "plan-partitions" }, el("thead", {}, el("tr", {}, ["partition", "", "why"].map((h) => el("th", {}, h)))), el("tbody", {}, partitions)),
        el("h3", {}, "Files"),
        el("table", { class: "grid plan-files", id: "plan-files" }, el("thead", {}, el("tr", {},
          ["partition", "file group", "base file", "base file read", "row groups", "filter terms not pushed into the file", "log blocks merged, in order"].map((h) => el("th", {}, h)))),
        el("tbody", {}, files)),
        el("h3", {}, `Rows (first ${rows.length})`),
        el("div", { class: "scroll" }, el("table", { class: "grid rows", id: "plan-rows" }, el("thead", {}, head), el("tbody", {}, data))));
    } catch (error) { if (asked === planAsked) fill(body, errorBox(error)); }
  }

  // -- tabs -----------------------------------------------------------------------------------------

  const loaders = {
    schema: loadSchema,
    timeline: loadTimeline,
    files: () => loadFiles({}),
    plan: () => loadPlan({}),
  };
  const loaded = {};

  function showTab(name) {
    for (const section of document.querySelectorAll("section[data-tab]")) section.hidden = section.dataset.tab !== name;
    for (const link of document.querySelectorAll("nav.tabs a")) link.classList.toggle("active", link.dataset.tab === name);
    if (!loaded[name]) {
      loaded[name] = loaders[name]().catch((error) => {
        loaded[name] = null;
        fill(document.getElementById(`tab-${name}`), errorBox(error));
      });
    }
    return loaded[name];
  }

  async function route() {
    const [tab, arg] = (location.hash.slice(1) || "schema").split(":");
    const name = tab in loaders ? tab : "schema";
    await showTab(name);
    if (name === "timeline" && arg) {
      for (const old of document.querySelectorAll("tr.highlight")) old.classList.remove("highlight");
      const row = document.getElementById(`instant-${arg}`);
      if (row) { row.classList.add("highlight"); row.scrollIntoView({ block: "center" }); }
    }
    document.body.dataset.readyMs = String(Math.round(performance.now())); // since navigation began
    document.body.dataset.ready = name;
  }

  function formParams(form) {
    return Object.fromEntries(new FormData(form).entries());
  }

  document.getElementById("files-form").addEventListener("submit", (event) => {
    event.preventDefault();
    loaded.files = loadFiles(formParams(event.target));
  });
  document.getElementById("plan-form").addEventListener("submit", (event) => {
    event.preventDefault();
    delete document.body.dataset.planned;
    loaded.plan = loadPlan(formParams(event.target)).then(() => { document.body.dataset.planned = "1"; });
  });
  window.addEventListener("hashchange", route);
  loadSummary();
  route();
})();
