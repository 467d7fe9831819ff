// The report page: sortable tables, plots and a trial browser, from the JSON embedded in the page.
// Agent text is untrusted: every text goes into the page through textContent, never as HTML.
"use strict";

const DATA = JSON.parse(document.getElementById("mage-data").textContent);
const SHOWN_AT_ONCE = 500; // trial rows drawn at a time; "show more" draws the next ones

// Agent text may hold lone UTF-16 surrogates (an answer cut inside a character, stored as JSON
// escapes); no font shows one, and Chromium's DOM serialiser (--dump-dom) fails on a page that
// holds one. Every text enters the page as well-formed text: U+FFFD for each lone surrogate.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function wellFormed(text) {
  return String(text).replace(LONE_SURROGATE, "\uFFFD");
}

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs || {})) {
    if (value === null || value === undefined || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = wellFormed(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : wellFormed(value));
  }
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(wellFormed(child)));
  }
  return node;
}

function signed(value) {
  if (typeof value !== "number") return "-";
  const text = Number.isInteger(value) ? String(Math.abs(value)) : Math.abs(value).toFixed(3);
  return (value < 0 ? "-" : "+") + text;
}

// -- header, tables, images -------------------------------------------------------------------

function drawHeader() {
  const top = document.getElementById("top");
  top.append(el("h1", { text: DATA.title }));
  for (const line of DATA.notes || []) top.append(el("p", { text: line }));
  const links = DATA.links || [];
  if (links.length) {
    const files = el("p", { class: "files" }, "Files: ");
    links.forEach((link, i) => files.append(i ? " · " : "", el("a", { href: link.href, text: link.title })));
    top.append(files);
  }
}

function sortKey(text) {
  const match = /[-+]?\d[\d,]*(\.\d+)?/.exec(text);
  return match ? parseFloat(match[0].replace(/,/g, "")) : null;
}

function sortable(table, rows, textColumns) {
  const headers = table.querySelectorAll("th");
  headers.forEach((th, column) => {
    th.addEventListener("click", () => {
      const ascending = th.getAttribute("aria-sort") !== "ascending";
      headers.forEach((other) => other.removeAttribute("aria-sort"));
      th.setAttribute("aria-sort", ascending ? "ascending" : "descending");
      const keyed = rows.map((row, index) => ({ row, index, cell: row.cells[column].textContent }));
      const text = textColumns.has(column);
      keyed.sort((a, b) => {
        const x = text ? null : sortKey(a.cell);
        const y = text ? null : sortKey(b.cell);
        if (!text && (x === null) !== (y === null)) return x === null ? 1 : -1; // "-" last
        const order = x !== null ? x - y : a.cell.localeCompare(b.cell, undefined, { numeric: true });
        return (ascending ? order : -order) || a.index - b.index;
      });
      const body = table.tBodies[0];
      for (const item of keyed) body.append(item.row);
    });
  });
}

function drawTable(spec) {
  const textColumns = new Set(spec.text_columns || []);
  const head = el("tr", {}, ...spec.columns.map((name, i) =>
    el("th", { text: name, class: textColumns.has(i) ? "text" : null, title: "sort" })));
  const rows = spec.rows.map((cells) => el("tr", {}, ...cells.map((cell, i) =>
    el("td", { text: cell, class: textColumns.has(i) ? "text" : null }))));
  const table = el("table", { class: "summary" }, el("thead", {}, head), el("tbody", {}, ...rows));
  sortable(table, rows, textColumns);
  const card = el("div", { class: "card" }, table);
  if (spec.note) card.append(el("p", { class: "table-note", text: spec.note }));
  return [el("h2", { text: spec.title }), card];
}

function drawTables() {
  const section = document.getElementById("tables");
  for (const spec of DATA.tables || []) section.append(...drawTable(spec));
}

function drawImages() {
  const images = DATA.images || [];
  if (!images.length) return;
  const section = document.getElementById("images");
  const box = el("div", { class: "images" });
  for (const image of images) {
    box.append(el("figure", { class: image.wide ? "wide" : null }, el("img", { src: image.src, alt: image.title }),
      el("figcaption", { text: image.title })));
  }
  section.append(el("h2", { text: "Plots" }), box);
}

// -- the trial browser ------------------------------------------------------------------------

const browser = { rows: [], shown: SHOWN_AT_ONCE, selects: {}, search: null, open: null };

function drawBrowser() {
  const trials = DATA.trials;
  const section = document.getElementById("browser");
  if (!trials || !trials.rows.length) return;
  section.append(el("h2", { text: "Trials" }));
  if (DATA.transcripts_note) section.append(el("p", { class: "muted", text: DATA.transcripts_note }));
  const filters = el("div", { class: "filters" });
  for (const name of trials.filters) {
    const values = [...new Set(trials.rows.map((row) => row.filters[name]))];
    values.sort((a, b) => String(a).localeCompare(String(b), undefined, { numeric: true }));
    const select = el("select", { name, onchange: refreshList },
      el("option", { value: "", text: "any" }), ...values.map((v) => el("option", { value: v, text: v })));
    browser.selects[name] = select;
    filters.append(el("label", {}, name, select));
  }
  browser.search = el("input", { type: "search", placeholder: "part of a trial id", oninput: refreshList });
  filters.append(el("label", {}, "trial id", browser.search));
  browser.count = el("span", { class: "count" });
  filters.append(browser.count);
  browser.text = new Set(trials.text_columns || []);
  const head = el("tr", {}, ...trials.columns.map((name, i) =>
    el("th", { text: name, class: browser.text.has(i) ? "text" : null })));
  browser.body = el("tbody");
  const table = el("table", { id: "trial-list" }, el("thead", {}, head), browser.body);
  browser.more = el("button", { type: "button", text: "show more", onclick: () => {
    browser.shown += SHOWN_AT_ONCE;
    drawRows();
  } });
  section.append(filters, el("div", { class: "card" }, table, browser.more));
  refreshList();
}

function matching() {
  const query = browser.search.value.trim().toLowerCase();
  return DATA.trials.rows.filter((row) => {
    for (const [name, select] of Object.entries(browser.selects)) {
      if (select.value !== "" && String(row.filters[name]) !== select.value) return false;
    }
    return !query || row.id.toLowerCase().includes(query);
  });
}

function refreshList() {
  browser.rows = matching();
  browser.shown = SHOWN_AT_ONCE;
  drawRows();
}

function drawRows() {
  const rows = browser.rows.slice(0, browser.shown);
  browser.body.replaceChildren(...rows.map((row) => {
    const cells = row.cells.map((cell, i) => el("td", { text: cell, title: i === 0 ? row.id : null,
      class: i === 0 ? "id text" : browser.text.has(i) ? "text" : null }));
    return el("tr", { "data-trial-id": row.id, class: row.id === browser.open ? "open" : null,
      onclick: () => openTrial(row.id) }, ...cells);
  }));
  const total = DATA.trials.rows.length;
  browser.count.textContent = `${browser.rows.length} of ${total} trials` +
    (browser.rows.length > rows.length ? ` (first ${rows.length} shown)` : "");
  browser.more.hidden = browser.rows.length <= rows.length;
}

// -- one trial --------------------------------------------------------------------------------

async function inflate(base64) {
  const bytes = Uint8Array.from(atob(base64), (c) => c.charCodeAt(0));
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  return JSON.parse(await new Response(stream).text());
}

async function openTrial(trialId, scroll = true) {
  browser.open = trialId;
  for (const tr of browser.body.querySelectorAll("tr")) {
    tr.classList.toggle("open", tr.getAttribute("data-trial-id") === wellFormed(trialId));
  }
  const section = document.getElementById("trial");
  const packed = (DATA.transcripts || {})[trialId];
  if (packed === undefined) {
    const row = DATA.trials.rows.find((r) => r.id === trialId);
    const why = row ? (DATA.no_transcript_note || "No transcript was kept for this trial.")
      : "No trial of this report has this id.";
    section.replaceChildren(el("h2", { text: "Trial" }), el("p", { class: "warning", text: `${trialId}: ${why}` }));
    return;
  }
  if (typeof DecompressionStream === "undefined") {
    section.replaceChildren(el("p", { class: "warning",
      text: "This browser cannot decompress transcripts (no DecompressionStream); read transcripts.jsonl.gz instead." }));
    return;
  }
  let record;
  try {
    record = await inflate(packed);
  } catch (error) {
    section.replaceChildren(el("p", { class: "warning",
      text: `${trialId}: its transcript could not be read here (${error.name}); read it from transcripts.jsonl.gz.` }));
    return;
  }
  section.replaceChildren(...drawTrial(record));
  if (scroll) section.scrollIntoView();
  if (decodeURIComponent(location.hash.slice(7)) !== trialId) {
    history.replaceState(null, "", "#trial=" + encodeURIComponent(wellFormed(trialId)));
  }
}

function fact(name, value) {
  return el("span", {}, el("b", { text: name }), value);
}

function drawTrial(record) {
  const result = record.result || {};
  const head = el("div", { class: "trial-head card" },
    el("code", { text: record.trial_id }),
    el("div", { class: "facts" },
      ...["agent", "env_id", "opponent", "task_seed", "repeat", "seed", "step"].filter((k) => k in record)
        .map((k) => fact(k, record[k] === null ? "default" : String(record[k]))),
      fact("returns", (result.returns || []).map(signed).join(", ")),
      fact("pass@k", (result.pass_at_k || []).join(", ")),
      fact("solved at", result.solved_at === null || result.solved_at === undefined ? "not solved" : `attempt ${result.solved_at + 1}`),
      record.step_limit ? fact("stopped", "step limit") : null));
  const parts = [el("h2", { text: "Trial" }), head];
  const truth = (record.ground_truth || []).filter((t) => Object.keys(t).length);
  if (truth.length) {
    const box = el("div", { class: "truth" }, el("h3", { text: "Hidden from the agent (ground truth, for analysis only)" }));
    record.ground_truth.forEach((t, k) => {
      if (Object.keys(t).length) box.append(el("div", { text: `attempt ${k + 1}: ` + describe(t) }));
    });
    parts.push(box);
  }
  parts.push(drawAttempts(record));
  if (record.final_page) {
    parts.push(el("details", { class: "card" }, el("summary", { text: "what the agent was shown at the end" }),
      el("pre", { text: record.final_page })));
  }
  return parts;
}

function describe(value) {
  return Object.entries(value).map(([k, v]) => `${k}: ${typeof v === "string" ? v : JSON.stringify(v)}`).join("; ");
}

function drawAttempts(record) {
  const result = record.result || {};
  const count = Math.max(1, (result.returns || []).length, ...record.turns.map((t) => t.episode + 1));
  const columns = [];
  for (let k = 0; k < count; k++) {
    const solved = (result.successes || [])[k];
    const title = el("h3", {}, `Attempt ${k + 1} `,
      el("span", { class: solved ? "solved" : "unsolved", text: solved ? "solved" : "not solved" }),
      ` · return ${signed((result.returns || [])[k])}`);
    const who = [(result.seats || [])[k] && `seat ${result.seats[k]}`, (result.opponents || [])[k] && `vs ${result.opponents[k]}`];
    columns.push(el("div", { class: "attempt", "data-attempt": k + 1 }, title,
      el("div", { class: "muted", text: who.filter(Boolean).join(" · ") })));
  }
  const shown = [];
  record.turns.forEach((turn, index) => {
    const page = "page" in turn ? turn.page : shown[turn.page_same_as];
    shown.push(page);
    columns[Math.min(turn.episode, count - 1)].append(drawTurn(record, turn, index, page));
  });
  const grid = el("div", { class: "attempts" }, ...columns);
  grid.style.setProperty("--attempts", String(count));
  return grid;
}

function where(turn) {
  const attempt = `attempt ${turn.episode + 1}`;
  return turn.phase === "reflect" ? `the reflection after ${attempt}` : `${attempt}, step ${turn.step + 1}`;
}

function drawTurn(record, turn, index, page) {
  const reflect = turn.phase === "reflect";
  const head = el("div", { class: "head" });
  if (reflect) head.append(el("span", { class: "move", text: "Reflection" }));
  else {
    head.append(el("span", { text: `step ${turn.step + 1}` }),
      el("span", {}, "move ", el("span", { class: "move", text: turn.move })),
      el("span", { text: `reward ${signed(turn.reward)}` }));
    if (turn.opponent_moves && turn.opponent_moves.length) {
      head.append(el("span", { text: `opponent: ${turn.opponent_moves.join(", ")}` }));
    }
  }
  if (turn.completion_tokens) head.append(el("span", { text: `${turn.prompt_tokens} + ${turn.completion_tokens} tokens` }));
  const samePage = "page_same_as" in turn ? ` (the same as ${where(record.turns[turn.page_same_as])})` : "";
  const node = el("div", { class: `turn ${reflect ? "reflect" : "play"}${turn.invalid ? " invalid" : ""}`, "data-turn": index },
    head,
    el("details", {}, el("summary", { text: `page${samePage}` }), el("pre", { text: page })),
    el("pre", { class: "answer", text: turn.answer === "" ? "(empty answer)" : turn.answer }));
  if (turn.answer_chars) node.append(el("div", { class: "muted", text: `answer cut: ${turn.answer_chars} characters in all` }));
  if ("action" in turn) node.append(el("div", { class: "muted", text: `sent to the env: ${turn.action}` }));
  if (turn.invalid) node.append(el("div", { class: "reason", text: turn.invalid_reason || "invalid answer" }));
  if (turn.error) node.append(el("div", { class: "error", text: `error: ${turn.error}` }));
  if (reflect) {
    node.append(el("div", { class: "kept" }, el("b", { text: "Kept in memory: " }),
      turn.kept_in_memory === null ? "(nothing)" : turn.kept_in_memory));
  }
  return node;
}

// -- start ------------------------------------------------------------------------------------

function openFromHash(event) {
  // at load the page stays at its top (the trial is below the list); a link followed scrolls
  if (location.hash.startsWith("#trial=")) {
    openTrial(decodeURIComponent(location.hash.slice(7)), event !== undefined);
  }
}

drawHeader();
drawTables();
drawImages();
drawBrowser();
openFromHash();
window.addEventListener("hashchange", openFromHash);
