// The mix table (registered and answered by drafter_dashboard/mix_editor.py): one row per component, its
// include, rows, % and selection edited in place. A change is sent the moment it is committed (Enter,
// Tab, leaving the cell, a click on the box or a pick in the list), as a trigger value
// {seq, edits: [{id, column, value, seq}]} that carries every edit the server has not acknowledged yet
// (data.ack), so two quick edits are never lost; the server skips an edit it has acknowledged.
// Every text is put in with textContent: a component's name or provenance is never parsed as HTML.
export default function (component) {
  const { data, parentElement, setTriggerValue } = component;
  const host = parentElement;
  let t = host.__mixTable;
  if (!t) {
    t = host.__mixTable = { seq: 0, pending: new Map(), dirty: new Set(), rows: new Map(),
                            sort: null };
    const wrap = document.createElement("div");
    wrap.className = "mix-wrap";
    const table = document.createElement("table");
    table.className = "mix";
    table.setAttribute("aria-label", "Mix: one row per component");
    table.createTHead().insertRow();
    table.createTBody();
    wrap.appendChild(table);
    host.appendChild(wrap);
    t.table = table;
  }
  // the handlers made by an earlier call (a header's click, an input's keys) read the newest data here
  const d = t.d = data;
  const ack = Number.isSafeInteger(d.ack) ? d.ack : 0;

  // edits: [[id, column, value], ...], sent as one message with every edit not yet acknowledged
  const sendAll = (edits) => {
    t.seq += 1;
    for (const [id, column, value] of edits) {
      const k = id + "\u0000" + column;
      t.pending.delete(k);               // the newest edit last: the server applies them in order
      t.pending.set(k, { id, column, value, seq: t.seq });
    }
    setTriggerValue("edit", { seq: t.seq, edits: [...t.pending.values()] });
  };
  const send = (id, column, value) => sendAll([[id, column, value]]);
  // edits the server has acknowledged are dropped; those it has not are kept (and shown) until it has
  for (const [k, e] of t.pending) if (e.seq <= ack) t.pending.delete(k);
  if (t.seq < ack) t.seq = ack;

  // the header, rebuilt only when the columns change (the unit renames the rows column)
  const headKey = JSON.stringify(d.columns);
  if (t.headKey !== headKey) {
    t.headKey = headKey;
    t.rows.clear();                      // rows are built for their columns: a new header, new rows
    t.dirty.clear();
    t.table.tBodies[0].replaceChildren();
    const tr = t.table.tHead.rows[0];
    tr.replaceChildren();
    d.columns.forEach((c, i) => {
      const th = document.createElement("th");
      th.scope = "col";
      const b = document.createElement("button");
      b.type = "button";
      b.className = "sort";
      b.textContent = c.label;
      if (c.help) b.title = c.help + " (click to sort)";
      else b.title = "click to sort";
      b.addEventListener("click", () => {
        t.sort = t.sort && t.sort.col === i ? { col: i, dir: -t.sort.dir } : { col: i, dir: 1 };
        order();
      });
      th.appendChild(b);
      if (c.numeric) th.className = "num";
      tr.appendChild(th);
    });
  }

  const body = t.table.tBodies[0];
  const seen = new Set();
  d.rows.forEach((r) => {
    seen.add(r.id);
    let row = t.rows.get(r.id);
    if (!row) row = makeRow(r.id);
    row.data = r;
    fill(row, r);
  });
  for (const [id, row] of t.rows) if (!seen.has(id)) { row.tr.remove(); t.rows.delete(id); }
  order();

  // a number as the cell shows it: rows grouped by thousands, a % as it is (text that is not a number,
  // an edit on its way to being refused, as typed)
  function shown(key, v) {
    const n = typeof v === "number" ? v : Number(v);
    return key === "rows" && String(v).trim() !== "" && Number.isFinite(n) ? n.toLocaleString("en-US") : String(v);
  }

  // what is sent: a number as the server reads one (d.number: mix_editor.NUMBER_PATTERN, ASCII digits
  // grouped by thousands or not) without its commas; anything else as typed, for the server to refuse
  // by name (a stray comma is not read as a separator)
  function plain(v) {
    const s = v.trim();
    return new RegExp("^(?:" + t.d.number + ")$").test(s) ? s.replace(/,/g, "") : s;
  }

  // what a number cell shows: the edit sent and not yet acknowledged, else the server's value
  function current(r, key) {
    const pend = pendingValue(r.id, key);
    return shown(key, pend !== undefined ? pend : r[key]);
  }

  // the row shown `step` rows from the row of `tr` (the table's order, sorted or not), or null
  function neighbour(tr, step) {
    const rows = tr.parentNode ? tr.parentNode.rows : [];
    const at = [...rows].indexOf(tr) + step;
    return at >= 0 && at < rows.length ? t.rows.get(rows[at].dataset.id) : null;
  }

  function pendingValue(id, column) {
    const e = t.pending.get(id + "\u0000" + column);
    return e ? e.value : undefined;
  }

  function makeRow(id) {
    const tr = document.createElement("tr");
    tr.dataset.id = id;
    const row = { tr, cells: {} };
    d.columns.forEach((c) => {
      const td = document.createElement("td");
      if (c.numeric) td.className = "num";
      let input = null;
      if (c.key === "include") {
        input = document.createElement("input");
        input.type = "checkbox";
        input.addEventListener("change", () => send(id, "include", input.checked));
      } else if (c.key === "rows" || c.key === "pct") {
        // text, not type=number: the rows are shown grouped (250,430) as everywhere on the page
        input = document.createElement("input");
        input.type = "text";
        input.inputMode = c.key === "rows" ? "numeric" : "decimal";
        input.autocomplete = "off";
        input.spellcheck = false;
        // typed and not yet committed: the runs that arrive meanwhile leave it alone. Leaving the cell
        // ends that (a change fires first when the text changed; a text typed back to what it was fires
        // none, and must not keep the cell from showing later runs)
        input.addEventListener("input", () => t.dirty.add(input));
        input.addEventListener("change", () => { t.dirty.delete(input); send(id, c.key, plain(input.value)); });
        input.addEventListener("blur", () => {
          if (t.dirty.delete(input)) input.value = current(row.data, c.key);
        });
        input.addEventListener("keydown", (ev) => {
          if (ev.key === "Escape") { t.dirty.delete(input); input.value = current(row.data, c.key); }
          // up and down: the same column of the row above or below, as shown (leaving commits the cell)
          else if (ev.key === "ArrowDown" || ev.key === "ArrowUp") {
            const next = neighbour(row.tr, ev.key === "ArrowDown" ? 1 : -1);
            if (next) { ev.preventDefault(); next.cells[c.key].input.focus(); next.cells[c.key].input.select(); }
          }
        });
        // a column pasted from a spreadsheet (several lines): this cell and the ones below it, as shown,
        // one line each (a line's first tab-separated cell), sent as one message; lines past the last
        // row are not used. A single value is pasted as usual.
        input.addEventListener("paste", (ev) => {
          const text = ev.clipboardData ? ev.clipboardData.getData("text/plain") : "";
          const lines = text.replace(/\r\n?/g, "\n").replace(/\n+$/, "").split("\n");
          if (lines.length < 2) return;
          ev.preventDefault();
          const edits = [];
          let target = row;
          for (const line of lines) {
            if (!target) break;
            const v = plain(line.split("\t")[0]);
            target.cells[c.key].input.value = v;
            t.dirty.delete(target.cells[c.key].input);
            edits.push([target.tr.dataset.id, c.key, v]);
            target = neighbour(target.tr, 1);
          }
          sendAll(edits);
        });
      } else if (c.key === "selection") {
        input = document.createElement("select");
        for (const s of d.selections) {
          const o = document.createElement("option");
          o.value = s; o.textContent = s;
          input.appendChild(o);
        }
        input.addEventListener("change", () => send(id, "selection", input.value));
      }
      if (input) {
        input.setAttribute("aria-label", `${c.label} of ${id}`);
        input.dataset.column = c.key;
        td.appendChild(input);
      }
      row.cells[c.key] = { td, input };
      tr.appendChild(td);
    });
    t.rows.set(id, row);
    return row;
  }

  function fill(row, r) {
    d.columns.forEach((c, i) => {
      const { td, input } = row.cells[c.key];
      if (!input) { if (td.textContent !== r.cells[i]) td.textContent = r.cells[i]; return; }
      const pend = pendingValue(r.id, c.key);
      if (c.key === "include") input.checked = pend !== undefined ? pend : r.include;
      else if (c.key === "selection") input.value = pend !== undefined ? pend : r.selection;
      else if (!t.dirty.has(input)) {
        const v = current(r, c.key);
        if (input.value !== v) input.value = v;
      }
    });
    row.tr.classList.toggle("dropped", !r.include);
  }

  function sortValue(row, i) {
    const c = t.d.columns[i];
    const r = row.data;
    if (c.key === "include") return r.include ? 1 : 0;
    if (c.key === "rows" || c.key === "pct") return r[c.key];
    if (c.key === "selection") return r.selection;
    return c.numeric ? r.values[i] : r.cells[i];
  }

  function order() {
    let rows = t.d.rows.map((r) => t.rows.get(r.id));
    if (t.sort) {
      const { col, dir } = t.sort;
      rows = rows.map((row, k) => [row, k]).sort((a, b) => {
        const x = sortValue(a[0], col), y = sortValue(b[0], col);
        return (x < y ? -dir : x > y ? dir : 0) || a[1] - b[1];
      }).map(([row]) => row);
    }
    const ths = t.table.tHead.rows[0].cells;
    for (let i = 0; i < ths.length; i++)
      ths[i].setAttribute("aria-sort", t.sort && t.sort.col === i ? (t.sort.dir > 0 ? "ascending" : "descending")
                                                                 : "none");
    // move rows only when the order changed, and never the row holding the focus: moving an element
    // takes the focus from what it holds. The rows above it go before it, those below after it.
    if (rows.every((row, k) => body.rows[k] === row.tr)) return;
    const active = host instanceof ShadowRoot ? host.activeElement : document.activeElement;
    const focused = rows.find((row) => row.tr.contains(active || null));
    if (!focused) {
      rows.forEach((row) => body.appendChild(row.tr));
      return;
    }
    const at = rows.indexOf(focused);
    rows.slice(0, at).forEach((row) => body.insertBefore(row.tr, focused.tr));
    rows.slice(at + 1).forEach((row) => body.appendChild(row.tr));
  }
}
