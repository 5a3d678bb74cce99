// Brisvox operator console: plain JavaScript, no build step, nothing from
// outside (the page's Content-Security-Policy allows this server only).
// It reads the operator API (cmd/internal/serve/operator*.go,
// docs/OPERATIONS.md) with the token the operator types in, kept in this
// tab's sessionStorage and sent as "Authorization: Bearer" only:
//
//   GET /operator/events              the live calls and nodes, as
//                                     server-sent events read with fetch()
//                                     (EventSource cannot send the header)
//   GET /operator/calls/{id}          a call's actor tree and turn timelines
//   POST /operator/calls/{id}/restart?stage=S, POST /operator/calls/{id}/hangup
//   POST, DELETE /operator/nodes/{node}/drain
//
// past.js adds the past calls (GET /operator/records...).
//
// Everything the server says is outside input: it is set with textContent
// (or an SVG text node), never parsed as HTML.
"use strict";

const $ = (id) => document.getElementById(id);
const ui = {
  login: $("login"), loginForm: $("login-form"), token: $("token"), loginError: $("login-error"),
  app: $("app"), conn: $("conn"), summary: $("summary"), signout: $("signout"), error: $("error"),
  filter: $("filter"), count: $("count"), callsBody: $("calls-body"), noCalls: $("no-calls"),
  detail: $("detail"), detailId: $("detail-id"), detailState: $("detail-state"), detailMeta: $("detail-meta"),
  detailNote: $("detail-note"), action: $("action"), hangup: $("hangup"), closeDetail: $("close-detail"),
  tree: $("tree"), waterfall: $("waterfall"), wfLegend: $("wf-legend"), nodes: $("nodes"),
  confirm: $("confirm"), confirmTitle: $("confirm-title"), confirmText: $("confirm-text"),
  confirmOK: $("confirm-ok"), confirmCancel: $("confirm-cancel"),
};

const tokenKey = "brisvox.operator.token";
// The stages an operator may restart (the API's list).
const restartable = ["transport", "vad", "stt", "turn", "llm", "tools", "tts", "pacer"];
// How long a stream may be silent before it is taken as dead (the server
// sends a keepalive every 15 s), the reconnect backoff's bounds, how often
// an open call's detail is read again, and the least time between reads.
const stallMS = 40000, backoffMinMS = 500, backoffMaxMS = 10000, detailRefreshMS = 2000, detailMinMS = 1000;
const maxTurnsShown = 12;

// window.brisvoxConsole is what the console knows, for people and tests.
const con = window.brisvoxConsole = {
  // stream: signed-out, connecting, live, reconnecting; streamNote says why.
  stream: "signed-out", streamNote: "", snapshots: 0, events: 0, reconnects: 0, badEvents: 0,
  // calls and nodes as last received; at: when (this page's clock), so
  // ages tick here between events.
  calls: {}, nodes: {}, self: "",
  selected: "", detail: null, detailGone: "", detailFetches: 0,
  // actions: each button's request and the API's answer.
  actions: [],
  waterfall: [],
};

// ---- small helpers ----

function el(tag, cls, text) {
  const e = document.createElement(tag);
  if (cls) e.className = cls;
  if (text !== undefined && text !== null) e.textContent = String(text);
  return e;
}

const svgNS = "http://www.w3.org/2000/svg";
function svg(tag, attrs, text) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  if (text !== undefined) e.textContent = String(text);
  return e;
}

const enc = encodeURIComponent;
const num = (v) => (typeof v === "number" && isFinite(v) ? v : 0);
const str = (v) => (typeof v === "string" ? v : v === undefined || v === null ? "" : String(v));

function fmtMS(v) {
  if (typeof v !== "number" || !isFinite(v)) return "\u2014";
  return v >= 10000 ? (v / 1000).toFixed(1) + " s" : Math.round(v) + " ms";
}

function fmtAge(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s < 60) return s + " s";
  const m = Math.floor(s / 60), h = Math.floor(m / 60);
  if (h === 0) return m + " m " + String(s % 60).padStart(2, "0") + " s";
  if (h < 48) return h + " h " + String(m % 60).padStart(2, "0") + " m";
  return Math.floor(h / 24) + " d " + (h % 24) + " h";
}

function fmtClock(iso) {
  const d = new Date(iso);
  return isNaN(d) ? "" : d.toLocaleTimeString([], { hour12: false });
}

const plural = (n, one, many) => n + " " + (n === 1 ? one : many);

// ---- the token ----

function token() {
  try { return sessionStorage.getItem(tokenKey) || ""; } catch (_) { return ""; }
}

function signOut(message) {
  try { sessionStorage.removeItem(tokenKey); } catch (_) { /* storage off: nothing kept */ }
  stopStream();
  closeDetail();
  if (window.brisvoxPast) window.brisvoxPast.clear();
  con.calls = {}; con.nodes = {}; con.self = "";
  rows.clear();
  ui.callsBody.replaceChildren();
  ui.nodes.replaceChildren();
  nodeCards.clear();
  setStream("signed-out", "");
  ui.app.hidden = true;
  ui.signout.hidden = true;
  ui.summary.textContent = "";
  ui.login.hidden = false;
  ui.loginError.textContent = message || "";
  ui.token.value = "";
  ui.token.focus();
}

function signIn(tok) {
  try {
    sessionStorage.setItem(tokenKey, tok);
  } catch (_) {
    ui.loginError.textContent = "This browser keeps no session storage for the page, so the console cannot hold the token: allow site data for this server and reload.";
    return;
  }
  ui.login.hidden = true;
  ui.loginError.textContent = "";
  ui.app.hidden = false;
  ui.signout.hidden = false;
  ui.error.textContent = "";
  startStream();
  if (window.brisvoxPast) window.brisvoxPast.load();
}

ui.loginForm.addEventListener("submit", (ev) => {
  ev.preventDefault();
  const tok = ui.token.value.trim();
  ui.token.value = "";
  if (tok.length < 16) {
    ui.loginError.textContent = "An operator token has at least 16 characters; this one has " + tok.length + ". Paste the whole token.";
    ui.token.focus();
    return;
  }
  signIn(tok);
});
ui.signout.addEventListener("click", () => signOut("Signed out: the token is forgotten in this tab."));

// ---- the operator API ----

class APIError extends Error {
  constructor(status, message, body) { super(message); this.status = status; this.body = body; }
}

const statusWords = {
  400: "bad request", 404: "not found (the call or node is gone)", 409: "refused", 410: "gone",
  501: "not kept on this node", 502: "the call did not answer in time", 503: "unavailable",
};

function describeError(status, body) {
  const detail = body && typeof body.error === "string" ? body.error : "";
  let s = "HTTP " + status + " " + (statusWords[status] || "failed") + (detail ? ": " + detail : "");
  if (body && Array.isArray(body.stages)) s += " (stages: " + body.stages.map(str).join(", ") + ")";
  return s;
}

const refusedToken = "The server refused the operator token (401). Enter the token the server was started with.";

async function api(method, path) {
  const tok = token();
  if (!tok) {
    signOut("Enter the operator token.");
    throw new APIError(401, "no operator token");
  }
  let r;
  try {
    r = await fetch(path, {
      method, cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer",
      headers: { Authorization: "Bearer " + tok, Accept: "application/json" },
    });
  } catch (e) {
    throw new APIError(0, "the server did not answer (" + (e && e.message || e) + "): is it still running?");
  }
  let body = null;
  try { body = await r.json(); } catch (_) { body = null; }
  if (r.status === 401) {
    signOut(refusedToken);
    throw new APIError(401, refusedToken, body);
  }
  if (!r.ok) throw new APIError(r.status, describeError(r.status, body), body);
  return { status: r.status, body: body || {} };
}

// ---- the event stream ----

let streamGen = 0, streamAbort = null, wake = null;

// setStream shows the stream's state in the header; when it is not live
// with data on show, why, and from when the figures are.
let liveSince = null;
function setStream(state, note, retryMS) {
  con.stream = state;
  con.streamNote = note || "";
  ui.conn.dataset.state = state;
  ui.conn.textContent = {
    "signed-out": "not connected", connecting: "connecting\u2026", live: "live",
    reconnecting: retryMS ? "reconnecting in " + (retryMS / 1000).toFixed(1) + " s" : "reconnecting\u2026",
  }[state];
  ui.conn.title = note || "";
  if (state === "live") {
    liveSince = null;
    ui.error.textContent = "";
  } else if (state === "reconnecting") {
    if (!liveSince) liveSince = new Date();
    if (note) {
      ui.error.textContent = "Not live: " + note + ". What is shown is as of " +
        liveSince.toLocaleTimeString([], { hour12: false }) + "; the console reconnects by itself.";
    }
  }
}

function stopStream() {
  streamGen++;
  if (streamAbort) streamAbort.abort();
  streamAbort = null;
  if (wake) wake();
}

function startStream() {
  stopStream();
  runStream(streamGen);
}

// pause waits ms, or until stopStream wakes it.
function pause(ms) {
  return new Promise((resolve) => {
    const t = setTimeout(() => { wake = null; resolve(); }, ms);
    wake = () => { clearTimeout(t); wake = null; resolve(); };
  });
}

async function runStream(gen) {
  let backoff = backoffMinMS;
  while (gen === streamGen && token()) {
    setStream(con.snapshots === 0 ? "connecting" : "reconnecting", con.streamNote);
    const ctl = new AbortController();
    streamAbort = ctl;
    let why;
    try {
      const r = await fetch("/operator/events", {
        cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer", signal: ctl.signal,
        headers: { Authorization: "Bearer " + token(), Accept: "text/event-stream" },
      });
      if (r.status === 401) {
        if (gen === streamGen) signOut(refusedToken);
        return;
      }
      if (!r.ok || !r.body) {
        let body = null;
        try { body = await r.json(); } catch (_) { body = null; }
        why = "the event stream was refused: " + describeError(r.status, body);
      } else {
        await readEvents(r.body, ctl, gen, () => { backoff = backoffMinMS; });
        why = ctl.signal.aborted ? "nothing heard for " + stallMS / 1000 + " s" : "the event stream ended (the server restarted or is shutting down)";
      }
    } catch (e) {
      why = ctl.signal.aborted ? "nothing heard for " + stallMS / 1000 + " s" : "the event stream broke (" + (e && e.message || e) + ")";
    }
    if (gen !== streamGen) return;
    con.reconnects++;
    const wait = Math.round(backoff * (0.8 + 0.4 * Math.random()));
    backoff = Math.min(backoff * 2, backoffMaxMS);
    setStream("reconnecting", why, wait);
    await pause(wait);
  }
}

// readEvents parses the server-sent events of body until it ends, is
// aborted, or a newer stream replaces it; a stream silent for stallMS is
// aborted (the server's keepalive comes every 15 s).
async function readEvents(body, ctl, gen, onSnapshot) {
  const reader = body.getReader();
  const dec = new TextDecoder();
  let buf = "", stall = null;
  const arm = () => { clearTimeout(stall); stall = setTimeout(() => ctl.abort(), stallMS); };
  arm();
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done || gen !== streamGen) return;
      arm();
      buf += dec.decode(value, { stream: true }).replace(/\r\n?/g, "\n");
      let end;
      while ((end = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, end);
        buf = buf.slice(end + 2);
        const ev = parseEvent(block);
        if (!ev) continue;
        if (ev.name === "snapshot") onSnapshot();
        onEvent(ev.name, ev.data);
      }
    }
  } finally {
    clearTimeout(stall);
    reader.cancel().catch(() => {});
  }
}

// parseEvent reads one event's lines; null for a comment (the keepalive)
// or an event whose data is not JSON.
function parseEvent(block) {
  let name = "message";
  const data = [];
  for (const line of block.split("\n")) {
    if (line === "" || line.startsWith(":")) continue;
    const i = line.indexOf(":");
    const field = i < 0 ? line : line.slice(0, i);
    let value = i < 0 ? "" : line.slice(i + 1);
    if (value.startsWith(" ")) value = value.slice(1);
    if (field === "event") name = value;
    else if (field === "data") data.push(value);
  }
  if (data.length === 0) return null;
  try {
    return { name, data: JSON.parse(data.join("\n")) };
  } catch (_) {
    con.badEvents++;
    return null;
  }
}

function putCall(c, now) {
  if (!c || typeof c.id !== "string") return;
  c.at = now;
  con.calls[c.id] = c;
}

function putNode(n) {
  if (!n || typeof n.node !== "string") return;
  n.at = performance.now();
  con.nodes[n.node] = n;
  if (n.self) con.self = n.node;
}

function onEvent(name, d) {
  con.events++;
  const now = performance.now();
  switch (name) {
    case "snapshot":
      con.snapshots++;
      con.calls = {};
      for (const c of Array.isArray(d.calls) ? d.calls : []) putCall(c, now);
      con.nodes = {};
      for (const n of Array.isArray(d.nodes) ? d.nodes : []) putNode(n);
      if (typeof d.node === "string") con.self = d.node;
      setStream("live", "");
      ui.error.textContent = "";
      if (con.selected && !con.calls[con.selected] && !con.detailGone) callGone(con.selected, "");
      break;
    case "call":
      putCall(d, now);
      if (d && d.id === con.selected) {
        showCallHead(d);
        refreshDetail();
      }
      break;
    case "ended":
      if (d && typeof d.id === "string") {
        delete con.calls[d.id];
        if (d.id === con.selected) callGone(d.id, str(d.reason));
      }
      break;
    case "node":
      putNode(d);
      break;
    case "node_left":
      if (d && typeof d.node === "string") delete con.nodes[d.node];
      break;
    default:
      return;
  }
  scheduleRender();
}

// ---- drawing: at most once a frame however many events came ----

let renderQueued = false;
function scheduleRender() {
  if (renderQueued) return;
  renderQueued = true;
  requestAnimationFrame(() => {
    renderQueued = false;
    renderCalls();
    renderNodes();
    renderSummary();
  });
}

function renderSummary() {
  if (con.stream === "signed-out") {
    ui.summary.textContent = "";
    return;
  }
  const calls = Object.keys(con.calls).length, nodes = Object.keys(con.nodes).length;
  ui.summary.textContent = (con.self ? "node " + con.self + " \u00b7 " : "") + plural(calls, "live call", "live calls") +
    " on " + plural(nodes, "node", "nodes");
}

// ---- the calls table ----

const rows = new Map(); // id -> tr

function callText(c) {
  return [c.id, c.node, c.transport, c.agent, c.state].map(str).join(" ").toLowerCase();
}

function makeRow(id) {
  const tr = el("tr");
  tr.dataset.call = id;
  const first = el("td", "id");
  const b = el("button", "link", id);
  b.type = "button";
  b.title = "show this call's actor tree and turns";
  b.addEventListener("click", () => select(id));
  first.append(b);
  tr.append(first);
  for (const cls of ["c-node", "c-transport", "c-agent", "c-state", "num age", "num turns", "num last", "num restarts"]) tr.append(el("td", cls));
  return tr;
}

function fillRow(tr, c) {
  // Only a row whose call changed (or was selected) is written: at a
  // thousand calls a flush changes a few.
  const sel = c.id === con.selected;
  if (tr.filledAt === c.at && tr.filledSel === sel) return;
  tr.filledAt = c.at;
  tr.filledSel = sel;
  const cells = tr.children;
  cells[1].textContent = str(c.node);
  cells[2].textContent = str(c.transport);
  cells[3].textContent = str(c.agent);
  let badge = cells[4].firstChild;
  if (!badge) { badge = el("span", "badge"); cells[4].append(badge); }
  badge.textContent = str(c.state);
  badge.dataset.state = str(c.state);
  cells[5].textContent = fmtAge(num(c.age_ms) + (performance.now() - c.at));
  cells[6].textContent = String(num(c.turns));
  cells[7].textContent = fmtMS(c.last_turn_ms);
  cells[8].textContent = String(num(c.restarts));
  cells[8].classList.toggle("warn", num(c.restarts) > 0);
  tr.classList.toggle("selected", sel);
  cells[0].firstChild.setAttribute("aria-pressed", sel ? "true" : "false");
}

function renderCalls() {
  const f = ui.filter.value.trim().toLowerCase();
  const ids = Object.keys(con.calls).sort();
  const shown = f ? ids.filter((id) => callText(con.calls[id]).includes(f)) : ids;
  const keep = new Set(shown);
  for (const [id, tr] of rows) {
    if (!keep.has(id)) { tr.remove(); rows.delete(id); }
  }
  let prev = null;
  for (const id of shown) {
    let tr = rows.get(id);
    if (!tr) { tr = makeRow(id); rows.set(id, tr); }
    fillRow(tr, con.calls[id]);
    const want = prev ? prev.nextSibling : ui.callsBody.firstChild;
    if (tr !== want) ui.callsBody.insertBefore(tr, want);
    prev = tr;
  }
  ui.noCalls.hidden = ids.length > 0;
  ui.noCalls.textContent = con.stream === "live" ? "No live call." : "";
  ui.count.textContent = f ? "showing " + shown.length + " of " + ids.length : plural(ids.length, "call", "calls");
}

ui.filter.addEventListener("input", scheduleRender);

// Ages tick here: one pass a second over the rows on show, no request.
setInterval(() => {
  const now = performance.now();
  for (const [id, tr] of rows) {
    const c = con.calls[id];
    if (c) tr.children[5].textContent = fmtAge(num(c.age_ms) + (now - c.at));
  }
  for (const li of ui.nodes.children) {
    const n = con.nodes[li.dataset.node];
    const up = li.querySelector(".uptime");
    if (n && up) up.textContent = "up " + fmtAge(num(n.uptime_ms) + (now - n.at));
  }
}, 1000);

// ---- one call's detail ----

let detailTimer = null, detailBusy = false, detailLast = 0, detailAgain = false;
const openCounters = new Set(); // actors whose counters are open, kept across refreshes

function select(id) {
  if (con.selected !== id) {
    con.selected = id;
    con.detail = null;
    con.detailGone = "";
    con.waterfall = [];
    openCounters.clear();
    treeShape = "";
    treeParts = new Map();
    ui.tree.replaceChildren(el("p", "hint", "reading the call\u2026"));
    ui.waterfall.replaceChildren();
    ui.action.textContent = "";
    ui.action.className = "";
  }
  ui.detail.hidden = false;
  ui.detailId.textContent = id;
  ui.detailNote.textContent = "";
  ui.hangup.disabled = false;
  const c = con.calls[id];
  if (c) showCallHead(c);
  detailLast = 0;
  refreshDetail();
  scheduleRender();
}

function closeDetail() {
  con.selected = "";
  con.detail = null;
  clearTimeout(detailTimer);
  ui.detail.hidden = true;
  scheduleRender();
}
ui.closeDetail.addEventListener("click", closeDetail);

// refreshDetail reads the open call again: now if the last read is a
// second old, else when it is; a read in flight is followed by one more.
function refreshDetail() {
  if (!con.selected || con.detailGone) return;
  if (detailBusy) { detailAgain = true; return; }
  clearTimeout(detailTimer);
  detailTimer = setTimeout(readDetail, Math.max(0, detailLast + detailMinMS - performance.now()));
}

async function readDetail() {
  const id = con.selected;
  if (!id || con.detailGone) return;
  detailBusy = true;
  detailLast = performance.now();
  con.detailFetches++;
  try {
    const { body } = await api("GET", "/operator/calls/" + enc(id));
    if (id !== con.selected) return;
    con.detail = body;
    ui.detailNote.textContent = "";
    renderDetail(body);
  } catch (e) {
    if (id !== con.selected || e.status === 401) return;
    if (e.status === 404) callGone(id, "");
    else ui.detailNote.textContent = "Could not read the call: " + e.message + ". Trying again.";
  } finally {
    detailBusy = false;
    if (detailAgain) {
      // Asked again while this read was out (maybe for another call).
      detailAgain = false;
      refreshDetail();
    } else if (id === con.selected && !con.detailGone && token()) {
      clearTimeout(detailTimer);
      detailTimer = setTimeout(refreshDetail, detailRefreshMS);
    }
  }
}

function callGone(id, reason) {
  if (id !== con.selected) return;
  con.detailGone = reason || "ended";
  clearTimeout(detailTimer);
  ui.detailState.textContent = "ended";
  ui.detailState.dataset.state = "ended";
  ui.detailNote.textContent = "This call has ended" + (reason ? " (" + reason + ")" : "") + "; what is shown is its last reading.";
  ui.hangup.disabled = true;
  for (const b of ui.tree.querySelectorAll("button")) b.disabled = true;
}

function showCallHead(c) {
  ui.detailState.textContent = str(c.state);
  ui.detailState.dataset.state = str(c.state);
  ui.detailMeta.textContent = [
    "node " + str(c.node), str(c.transport), "agent " + str(c.agent),
    plural(num(c.turns), "turn", "turns"), plural(num(c.restarts), "restart", "restarts"),
  ].join(" \u00b7 ");
}

function renderDetail(d) {
  if (d.call) showCallHead(d.call);
  renderTree(d.tree);
  renderWaterfall(Array.isArray(d.turns) ? d.turns : []);
}

// ---- the actor tree ----

// A stage's state in one of four tones: ok (waiting, ready), busy (at
// work), warn (on its way or degraded), bad (not answering, ending).
function actorTone(state) {
  const s = str(state);
  if (["unresponsive", "failed", "stopped", "dead", "ending", "ended"].includes(s)) return "bad";
  if (["connecting", "restarting", "energy_fallback", "draining", "starting"].includes(s)) return "warn";
  if (["speaking", "answering", "speculating", "playing", "speech", "streaming", "collecting_digits", "bot_busy", "thinking"].includes(s)) return "busy";
  return "ok";
}

// The tree is kept, not drawn afresh, while its shape (the actors and
// their places) stays: a button under the pointer or the keyboard's focus
// is the same element from one reading to the next, and an open counters
// list stays open.
let treeShape = "", treeParts = new Map(); // actor path -> its elements

function shapeOf(n, path, out) {
  out.push(path);
  for (const k of Array.isArray(n.children) ? n.children : []) {
    if (k && typeof k === "object") shapeOf(k, path + "/" + str(k.name), out);
  }
  return out;
}

function renderTree(root) {
  if (!root || typeof root !== "object") {
    ui.tree.replaceChildren(el("p", "hint", "The call sent no tree."));
    treeShape = "";
    return;
  }
  const shape = shapeOf(root, "session", []).join("\n");
  if (shape !== treeShape) {
    treeShape = shape;
    treeParts = new Map();
    const ul = el("ul", "tree");
    ul.append(treeNode(root, "session", true));
    ui.tree.replaceChildren(ul);
  }
  fillTree(root, "session");
}

function fillTree(n, path) {
  const p = treeParts.get(path);
  if (p) fillActor(p, n);
  for (const k of Array.isArray(n.children) ? n.children : []) {
    if (k && typeof k === "object") fillTree(k, path + "/" + str(k.name));
  }
}

function treeNode(n, path, isRoot) {
  const name = str(n.name);
  const li = el("li");
  const box = el("div", "actor");
  box.dataset.actor = isRoot ? "session" : name;
  const head = el("div", "actor-head");
  const p = { box, name, state: el("span", "tone"), mailbox: el("span", "fig mailbox"), restarts: el("span", "fig restarts"), det: null, summary: null, dl: null, button: null };
  head.append(el("span", "actor-name", name), p.state, p.mailbox, p.restarts);
  if (!isRoot && restartable.includes(name)) {
    const b = p.button = el("button", "small", "Restart");
    b.type = "button";
    b.dataset.stage = name;
    b.setAttribute("aria-label", "restart the " + name + " stage");
    b.addEventListener("click", () => restartStage(con.selected, name));
    head.append(b);
  }
  box.append(head);
  const det = p.det = el("details", "counters");
  det.open = openCounters.has(path);
  det.addEventListener("toggle", () => { if (det.open) openCounters.add(path); else openCounters.delete(path); });
  p.summary = el("summary");
  p.dl = el("dl");
  det.append(p.summary, p.dl);
  box.append(det);
  li.append(box);
  treeParts.set(path, p);
  const kids = Array.isArray(n.children) ? n.children : [];
  if (kids.length > 0) {
    const ul = el("ul", "branches");
    for (const k of kids) if (k && typeof k === "object") ul.append(treeNode(k, path + "/" + str(k.name), false));
    li.append(ul);
  }
  return li;
}

function fillActor(p, n) {
  const tone = actorTone(n.state);
  p.box.dataset.tone = tone;
  p.state.textContent = str(n.state);
  p.state.dataset.tone = tone;
  p.mailbox.textContent = "mailbox " + num(n.mailbox);
  p.mailbox.classList.toggle("warn", num(n.mailbox) > 0);
  p.restarts.textContent = "restarts " + num(n.restarts);
  p.restarts.classList.toggle("warn", num(n.restarts) > 0);
  if (p.button) p.button.disabled = !!con.detailGone;
  const counters = n.counters && typeof n.counters === "object" ? Object.entries(n.counters) : [];
  const info = n.info && typeof n.info === "object" ? Object.entries(n.info) : [];
  counters.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  info.sort((a, b) => (a[0] < b[0] ? -1 : 1));
  const all = counters.concat(info);
  p.det.hidden = all.length === 0;
  p.box.title = all.map(([k, v]) => k + " " + str(v)).join("\n");
  p.summary.textContent = (counters.length ? plural(counters.length, "counter", "counters") : "") +
    (counters.length && info.length ? ", " : "") + (info.length ? plural(info.length, "fact", "facts") : "");
  const items = [];
  for (const [k, v] of all) items.push(el("dt", "", k), el("dd", "", str(v)));
  p.dl.replaceChildren(...items);
}

// ---- the turn waterfall ----

// A turn's marks in their order, each segment ending at its mark and
// named as the call page names the stages (messages.TurnStages).
const chain = [
  { mark: "vad_stop" },
  { mark: "stt_final", seg: "listen", label: "listen: VAD stop to STT final", color: "#0969da" },
  { mark: "turn_end", seg: "end_of_turn", label: "end of turn", color: "#8250df" },
  { mark: "llm_first_token", seg: "think", label: "think: to LLM first token", color: "#9a6700" },
  { mark: "tools_done", seg: "tools", label: "tools", color: "#bc4c00" },
  { mark: "tts_first_audio", seg: "voice", label: "voice: to TTS first audio", color: "#1a7f37" },
  { mark: "first_audio_out", seg: "send", label: "send: to first audio out", color: "#57606a" },
];
// Marks drawn as ticks on the row, not as segments.
const ticks = [
  { mark: "llm_request", label: "LLM request", color: "#1b1f24" },
  { mark: "interrupt", label: "interrupted", color: "#cf222e" },
];

function renderLegend() {
  const items = [];
  for (const c of chain) {
    if (!c.seg) continue;
    const li = el("li");
    const sw = el("span", "swatch");
    sw.style.background = c.color;
    li.append(sw, c.label);
    items.push(li);
  }
  for (const t of ticks) {
    const li = el("li");
    const sw = el("span", "tickmark");
    sw.style.background = t.color;
    li.append(sw, t.label);
    items.push(li);
  }
  ui.wfLegend.replaceChildren(...items);
}
renderLegend();

// turnSegments: the segments of one turn, each from the previous mark the
// turn has to its own; a mark before the previous one (a speculative
// answer's first token before the turn's end) gives its segment no time.
function turnSegments(marks) {
  const out = [];
  let from = null, fromMark = "";
  for (const c of chain) {
    const v = marks[c.mark];
    if (typeof v !== "number" || !isFinite(v)) continue;
    if (from !== null && c.seg) {
      out.push({ name: c.seg, label: c.label, color: c.color, from, to: Math.max(from, v), ms: Math.max(0, v - from), fromMark, toMark: c.mark });
    }
    if (from === null || v >= from) { from = v; fromMark = c.mark; }
  }
  return out;
}

function niceStep(span) {
  const raw = span / 5;
  const p = Math.pow(10, Math.floor(Math.log10(Math.max(raw, 1))));
  for (const m of [1, 2, 2.5, 5, 10]) if (raw <= m * p) return m * p;
  return 10 * p;
}

let lastTurns = [];
function renderWaterfall(turns) {
  lastTurns = turns;
  con.waterfall = drawWaterfall(ui.waterfall, turns, maxTurnsShown);
}

// drawWaterfall draws the last `most` turns into box (the live call's
// and a past call's view) and returns their segments, for tests.
function drawWaterfall(box, turns, most) {
  const shown = turns.slice(-most);
  const drawn = shown.map((t) => ({ epoch: num(t.epoch), segments: turnSegments(t.marks_ms || {}).map((s) => ({ name: s.name, ms: s.ms })) }));
  if (shown.length === 0) {
    box.replaceChildren(el("p", "hint", "No turn yet: the timelines appear once the caller has spoken."));
    return drawn;
  }
  let max = 0;
  for (const t of shown) for (const v of Object.values(t.marks_ms || {})) if (typeof v === "number" && isFinite(v)) max = Math.max(max, v);
  const step = niceStep(max || 100);
  const axisMax = Math.max(step, Math.ceil((max || 1) / step) * step);
  const W = Math.max(320, Math.floor(box.clientWidth || 520));
  const left = 62, right = 80, top = 22, rowH = 24, barH = 14;
  const plotW = W - left - right;
  const H = top + rowH * shown.length + 6;
  const x = (v) => left + (Math.max(0, v) / axisMax) * plotW;
  const root = svg("svg", { width: W, height: H, viewBox: "0 0 " + W + " " + H, role: "img", class: "wf" });
  root.append(svg("title", {}, "turn latency waterfall: " + plural(shown.length, "turn", "turns") + ", ms from the end of speech"));
  // The ms axis and its grid.
  for (let v = 0; v <= axisMax + 1e-9; v += step) {
    const gx = x(v);
    root.append(svg("line", { x1: gx, x2: gx, y1: top - 4, y2: H - 4, class: "grid" }));
    root.append(svg("text", { x: gx, y: top - 8, class: "axis", "text-anchor": "middle" }, v >= 1000 && step >= 1000 ? v / 1000 + " s" : String(Math.round(v))));
  }
  root.append(svg("text", { x: 4, y: top - 8, class: "axis" }, "ms"));
  shown.forEach((t, i) => {
    const marks = t.marks_ms || {};
    const y = top + i * rowH + (rowH - barH) / 2;
    const row = svg("g", { class: "turn", "data-epoch": num(t.epoch) });
    row.append(svg("text", { x: 4, y: y + barH - 3, class: "label" }, "turn " + num(t.epoch)));
    row.append(svg("rect", { x: left, y, width: plotW, height: barH, class: "track" }));
    for (const s of turnSegments(marks)) {
      const r = svg("rect", { x: x(s.from), y, width: Math.max(s.ms > 0 ? 1.5 : 0, x(s.to) - x(s.from)), height: barH, fill: s.color, "data-seg": s.name });
      r.append(svg("title", {}, s.name.replace(/_/g, " ") + ": " + s.ms.toFixed(1) + " ms (" + s.fromMark + " " + num(marks[s.fromMark]).toFixed(1) + " \u2192 " + s.toMark + " " + num(marks[s.toMark]).toFixed(1) + ")"));
      row.append(r);
    }
    for (const k of ticks) {
      const v = marks[k.mark];
      if (typeof v !== "number" || !isFinite(v)) continue;
      const tk = svg("rect", { x: x(v) - 1, y: y - 3, width: 2, height: barH + 6, fill: k.color, "data-mark": k.mark });
      tk.append(svg("title", {}, k.label + " at " + v.toFixed(1) + " ms"));
      row.append(tk);
    }
    // A turn with no caller speech (the greeting) has no latency to show.
    const total = typeof marks.vad_stop === "number" ? marks.first_audio_out : undefined;
    row.append(svg("text", { x: W - right + 6, y: y + barH - 3, class: "total" },
      typeof total === "number" ? fmtMS(total) : typeof marks.vad_stop === "number" ? "no audio" : "no speech"));
    root.append(row);
  });
  const parts = [root];
  if (turns.length > shown.length) parts.push(el("p", "hint", "the last " + shown.length + " of " + turns.length + " turns"));
  box.replaceChildren(...parts);
  return drawn;
}

let resizeQueued = false;
window.addEventListener("resize", () => {
  if (resizeQueued || ui.detail.hidden) return;
  resizeQueued = true;
  requestAnimationFrame(() => { resizeQueued = false; if (!ui.detail.hidden) renderWaterfall(lastTurns); });
});

// ---- confirmations and actions ----

let confirmDone = null;

// confirmAction asks before a button acts; Cancel (or Escape) is the
// default.
function confirmAction(title, text, ok) {
  if (confirmDone) confirmDone(false);
  ui.confirmTitle.textContent = title;
  ui.confirmText.textContent = text;
  ui.confirmOK.textContent = ok;
  return new Promise((resolve) => {
    confirmDone = (yes) => {
      confirmDone = null;
      if (ui.confirm.open) ui.confirm.close();
      resolve(yes);
    };
    ui.confirm.showModal();
    ui.confirmCancel.focus();
  });
}
ui.confirmOK.addEventListener("click", () => confirmDone && confirmDone(true));
ui.confirmCancel.addEventListener("click", () => confirmDone && confirmDone(false));
ui.confirm.addEventListener("close", () => confirmDone && confirmDone(false));

function report(what, ok, text) {
  con.actions.push({ what, ok, text });
  if (con.actions.length > 50) con.actions.shift();
  ui.action.textContent = (ok ? "\u2714 " : "\u2718 ") + what + ": " + text;
  ui.action.className = ok ? "ok" : "bad";
}

async function restartStage(id, stage) {
  if (!id) return;
  const yes = await confirmAction("Restart the " + stage + " stage?",
    "Call " + id + ": the " + stage + " stage stops and starts afresh (what it was doing is dropped); the call goes on.",
    "Restart " + stage);
  if (!yes) return;
  const what = "restart " + stage + " of " + id;
  try {
    const { status, body } = await api("POST", "/operator/calls/" + enc(id) + "/restart?stage=" + enc(stage));
    report(what, true, "restarted " + str(body.restarted || stage) + " (HTTP " + status + "); the call goes on");
    detailLast = 0;
    refreshDetail();
  } catch (e) {
    if (e.status !== 401) report(what, false, e.message);
  }
}

ui.hangup.addEventListener("click", async () => {
  const id = con.selected;
  if (!id) return;
  const yes = await confirmAction("Hang up this call?", "Call " + id + " ends now: the caller is cut off.", "Hang up");
  if (!yes) return;
  const what = "hang up " + id;
  try {
    const { status } = await api("POST", "/operator/calls/" + enc(id) + "/hangup");
    report(what, true, "sent (HTTP " + status + "); the call leaves the list once it has ended");
  } catch (e) {
    if (e.status !== 401) report(what, false, e.message);
  }
});

// ---- the nodes ----

function nodeState(n) {
  if (!n.draining) return { key: "admitting", text: "admitting calls" };
  if (n.drain && n.drain.by === "shutdown") return { key: "shutdown", text: "shutting down" };
  return { key: "draining", text: "draining" };
}

// The node cards are kept from one drawing to the next (a Drain button
// under the pointer stays the same element); their texts are set anew.
const nodeCards = new Map(); // name -> its elements

function nodeCard(name) {
  const li = el("li", "node");
  li.dataset.node = name;
  const head = el("div", "node-head");
  const c = { li, tag: el("span", "tag", "this node"), badge: el("span", "badge"), body: el("div"), button: el("button") };
  head.append(el("span", "node-name", name), c.tag, c.badge);
  c.button.type = "button";
  c.button.dataset.node = name;
  // What the button does is read when it is pressed: the node's state then.
  c.button.addEventListener("click", () => {
    const n = con.nodes[name];
    if (n && n.draining) undrain(name); else drain(name);
  });
  li.append(head, c.body, c.button);
  return c;
}

function renderNodes() {
  const names = Object.keys(con.nodes).sort((a, b) => (a === con.self ? -1 : b === con.self ? 1 : a < b ? -1 : 1));
  for (const [name, c] of nodeCards) {
    if (!con.nodes[name]) { c.li.remove(); nodeCards.delete(name); }
  }
  ui.nodes.querySelectorAll("li.hint").forEach((e) => e.remove());
  let prev = null;
  for (const name of names) {
    const n = con.nodes[name];
    let c = nodeCards.get(name);
    if (!c) { c = nodeCard(name); nodeCards.set(name, c); }
    const st = nodeState(n);
    c.li.dataset.state = st.key;
    c.tag.hidden = name !== con.self;
    c.badge.textContent = st.text;
    c.badge.dataset.state = st.key;
    const live = num(n.live_calls), maxc = num(n.max_calls);
    const body = [gauge("calls", live + " / " + maxc + " live", maxc > 0 ? live / maxc : 0, 1)];
    if (n.admission && typeof n.admission === "object") {
      const a = n.admission, ceil = num(a.ceiling) || 1;
      body.push(gauge("CPU", Math.round(num(a.load) * 100) + " % of " + num(a.cores) + " cores, ceiling " + Math.round(ceil * 100) + " %", num(a.load), ceil));
      body.push(el("p", "fine", "measured admission: " + (num(a.per_call_cores) * 100).toFixed(2) + " % of a core per call"));
    }
    if (n.draining && n.drain) {
      body.push(el("p", "fine", (n.drain.by === "shutdown" ? "shutting down" : "drained by an operator") + " at " + fmtClock(n.drain.started) +
        ", " + plural(num(n.drain.live_at_start), "call", "calls") + " live then, " + live + " now"));
    }
    body.push(el("p", "fine uptime", "up " + fmtAge(num(n.uptime_ms) + (performance.now() - n.at))));
    c.body.replaceChildren(...body);
    c.button.textContent = n.draining ? "Undrain" : "Drain";
    c.button.className = n.draining ? "" : "danger";
    c.button.dataset.action = n.draining ? "undrain" : "drain";
    c.button.disabled = st.key === "shutdown";
    const want = prev ? prev.nextSibling : ui.nodes.firstChild;
    if (c.li !== want) ui.nodes.insertBefore(c.li, want);
    prev = c.li;
  }
  if (names.length === 0) ui.nodes.append(el("li", "hint", con.stream === "live" ? "No node." : "Waiting for the event stream\u2026"));
}

function gauge(what, text, share, limit) {
  const box = el("div", "gauge");
  const label = el("div", "gauge-label");
  label.append(el("span", "", what), el("span", "gauge-text", text));
  const track = el("div", "track");
  const fill = el("div", "fill");
  fill.style.width = Math.min(100, Math.max(0, share * 100)) + "%";
  fill.dataset.level = share >= limit ? "full" : share >= 0.8 * limit ? "high" : "ok";
  track.append(fill);
  box.append(label, track);
  return box;
}

async function drain(name) {
  const n = con.nodes[name];
  const live = n ? num(n.live_calls) : 0;
  const yes = await confirmAction("Drain node " + name + "?",
    "Node " + name + " stops admitting calls: new ones are refused (503) and go to other nodes; its " +
    plural(live, "live call goes", "live calls go") + " on to the end. Undrain to admit again.", "Drain " + name);
  if (!yes) return;
  await nodeAction("drain " + name, "POST", name);
}

async function undrain(name) {
  const yes = await confirmAction("Undrain node " + name + "?", "Node " + name + " admits new calls again.", "Undrain " + name);
  if (!yes) return;
  await nodeAction("undrain " + name, "DELETE", name);
}

async function nodeAction(what, method, name) {
  try {
    const { status, body } = await api(method, "/operator/nodes/" + enc(name) + "/drain");
    if (body && body.node === name) {
      body.self = name === con.self;
      putNode(body);
    }
    report(what, true, (body.draining ? "draining: no new call is admitted" : "admitting calls") + " (HTTP " + status + ")");
    scheduleRender();
  } catch (e) {
    if (e.status !== 401) report(what, false, e.message);
  }
}

// ---- start ----

if (token()) signIn(token());
else signOut("");
