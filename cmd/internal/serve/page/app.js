// Brisvox call page: plain JavaScript, no build step, nothing from outside.
// GET agent says what the agent can do ({name, description, examples,
// tools}; any field may be absent). Signaling: POST /webrtc/offer
// {sdp, type} -> {sdp, type, call}; then a websocket /webrtc/ws?call=ID
// carries trickle ICE both ways and the call's live events (see
// cmd/internal/serve/events.go).
"use strict";

const $ = (id) => document.getElementById(id);
const ui = {
  call: $("call"), hangup: $("hangup"), state: $("state"), callid: $("callid"),
  transcript: $("transcript"), latencies: $("latencies"), legend: $("legend"), connstats: $("connstats"),
  error: $("error"), remote: $("remote"), agent: $("agent"),
  guide: $("guide"), description: $("description"), examples: $("examples"), examplesBox: $("examples-box"),
  tools: $("tools"), toolsBox: $("tools-box"),
  micstate: $("micstate"), level: $("level"), leveltext: $("leveltext"),
};

// window.brisvox is what the page knows, for people and for tests.
const page = window.brisvox = {
  state: "idle", call: "", turns: [], bot: {}, latencies: [], audio: null, events: 0, error: "",
  // guide: what GET agent said; stages: each latency's stages (null when
  // the server sent none); tools: the tool lines as shown.
  guide: null, stages: [], tools: [],
  // mic: the permission state (granted, prompt, denied, unknown), the
  // getUserMedia outcome, and the input level in dBFS (now and highest).
  mic: { permission: "unknown", outcome: "", level: -Infinity, maxLevel: -Infinity, meterUpdates: 0 },
  // conn: the connection's getStats figures, updated every second.
  conn: null,
};

// The stages of a turn's latency (the latency event's stages, in order),
// with the legend's words and colours.
const stageInfo = {
  listen: { label: "listen", color: "#0969da" },
  end_of_turn: { label: "end of turn", color: "#8250df" },
  think: { label: "think", color: "#9a6700" },
  tools: { label: "tools", color: "#bc4c00" },
  voice: { label: "voice", color: "#1a7f37" },
  send: { label: "send", color: "#57606a" },
};
const spareColors = ["#bf3989", "#0550ae", "#116329", "#6e7781"];
const meterFloor = Number(ui.level.min);

let pc = null, ws = null, mic = null, statsTimer = null, meter = null, pendingCandidates = [];
let toolLines = {}, lastConnRender = 0;

// ---- what the agent can do ----

function text(v) {
  if (typeof v === "string") return v;
  if (v && typeof v === "object") return v.text || v.phrase || v.example || "";
  return "";
}

function renderGuide(a) {
  if (!a) return;
  if (a.name) ui.agent.textContent = a.name;
  const g = page.guide = {
    name: a.name || "",
    description: typeof a.description === "string" ? a.description.trim() : "",
    examples: Array.isArray(a.examples) ? a.examples.map(text).filter(Boolean) : [],
    tools: Array.isArray(a.tools) ? a.tools.map((t) => typeof t === "string" ? { name: t } : (t || {})).filter((t) => t.name) : [],
  };
  ui.description.textContent = g.description;
  ui.description.hidden = !g.description;
  ui.examples.replaceChildren(...g.examples.map((e) => {
    const li = document.createElement("li");
    li.textContent = "\u201c" + e + "\u201d";
    return li;
  }));
  ui.examplesBox.hidden = g.examples.length === 0;
  ui.tools.replaceChildren(...g.tools.map((t) => {
    const li = document.createElement("li");
    const n = document.createElement("code");
    n.textContent = t.name;
    li.append(n);
    const about = t.description || t.summary || "";
    if (about) li.append(" \u2014 " + about);
    if (t.confirm) li.append(" (asks you first)");
    return li;
  }));
  ui.toolsBox.hidden = g.tools.length === 0;
  ui.guide.hidden = !g.description && g.examples.length === 0 && g.tools.length === 0;
}

fetch("agent").then((r) => r.ok ? r.json() : null).then(renderGuide).catch(() => {});

// ---- the microphone ----

const micWords = {
  granted: "Microphone: allowed.",
  prompt: "Microphone: the browser asks for it when you press Call.",
  unknown: "Microphone: the browser asks for it when you press Call.",
  denied: "Microphone: blocked for this page. Allow it in the site settings (the icon left of the address) and press Call again.",
};

function renderMic() {
  const m = page.mic;
  let s = micWords[m.permission] || micWords.unknown;
  if (m.outcome && m.outcome !== "ok") s = m.outcome;
  else if (m.outcome === "ok" && meter) s = "Microphone: on. Speak and watch the level move.";
  ui.micstate.textContent = s;
  ui.micstate.dataset.state = m.outcome && m.outcome !== "ok" ? "problem" : m.permission;
}

if (navigator.permissions && navigator.permissions.query) {
  navigator.permissions.query({ name: "microphone" }).then((status) => {
    page.mic.permission = status.state;
    renderMic();
    status.onchange = () => { page.mic.permission = status.state; renderMic(); };
  }).catch(() => { /* not a permission this browser names: the getUserMedia outcome says it */ });
}

// micProblem says in words why getUserMedia failed: a short state for
// the microphone's line and what to do, for the alert.
function micProblem(e) {
  switch (e && e.name) {
    case "NotAllowedError": case "PermissionDeniedError":
      return ["Microphone: refused.", "The microphone was refused. Allow it for this page (the icon left of the address) and press Call again."];
    case "NotFoundError": case "DevicesNotFoundError": case "OverconstrainedError":
      return ["Microphone: none found.", "No microphone was found. Plug one in (or choose one in the system settings) and press Call again."];
    case "NotReadableError": case "TrackStartError": case "AbortError":
      return ["Microphone: busy.", "The microphone could not be opened: another application may be using it."];
    case "SecurityError":
      return ["Microphone: not on this page.", "The microphone needs a secure page: open it on localhost or over https."];
    default:
      return ["Microphone: could not be opened.", "The microphone could not be opened: " + String(e && e.message || e)];
  }
}

async function openMic() {
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    page.mic.outcome = "Microphone: not on this page.";
    renderMic();
    throw new Error("This page cannot use a microphone here: open it on localhost or over https.");
  }
  try {
    const s = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    page.mic.outcome = "ok";
    page.mic.permission = "granted";
    return s;
  } catch (e) {
    const [short, long] = micProblem(e);
    page.mic.outcome = short;
    renderMic();
    throw new Error(long);
  }
}

// startMeter shows the microphone's level: the RMS of the analyser's
// last window, in dBFS, falling back slowly so a word can be read.
function startMeter(stream) {
  const Ctx = window.AudioContext || window.webkitAudioContext;
  if (!Ctx) return;
  const ctx = new Ctx();
  ctx.resume().catch(() => {});
  const analyser = ctx.createAnalyser();
  analyser.fftSize = 2048;
  ctx.createMediaStreamSource(stream).connect(analyser);
  const buf = new Float32Array(analyser.fftSize);
  let shown = meterFloor;
  const timer = setInterval(() => {
    analyser.getFloatTimeDomainData(buf);
    let sum = 0;
    for (let i = 0; i < buf.length; i++) sum += buf[i] * buf[i];
    const db = 20 * Math.log10(Math.sqrt(sum / buf.length));
    page.mic.level = db;
    page.mic.meterUpdates++;
    if (db > page.mic.maxLevel) page.mic.maxLevel = db;
    shown = Math.max(meterFloor, db >= shown ? db : Math.max(db, shown - 1.5));
    ui.level.value = shown;
    ui.leveltext.textContent = shown > meterFloor ? Math.round(shown) + " dBFS" : "below " + meterFloor + " dBFS";
  }, 100);
  meter = { ctx, timer };
  renderMic();
}

function stopMeter() {
  if (!meter) return;
  clearInterval(meter.timer);
  meter.ctx.close().catch(() => {});
  meter = null;
  ui.level.value = meterFloor;
  ui.leveltext.textContent = "\u2212\u221e dBFS";
}

// ---- the conversation ----

function setState(s) {
  page.state = s;
  ui.state.textContent = s;
  ui.state.dataset.state = s;
}

function fail(msg) {
  page.error = msg;
  ui.error.textContent = msg;
  setState("failed");
  hangup();
}

function line(cls, who) {
  const div = document.createElement("div");
  div.className = "line " + cls;
  const w = document.createElement("span");
  w.className = "who";
  w.textContent = who;
  const t = document.createElement("span");
  t.className = "text";
  div.append(w, t);
  ui.transcript.append(div);
  ui.transcript.scrollTop = ui.transcript.scrollHeight;
  return div;
}

// botLine returns the transcript line of the bot's answer of an epoch.
function botLine(epoch) {
  let b = page.bot[epoch];
  if (!b) {
    b = page.bot[epoch] = { epoch: epoch, words: [], done: false, cut: false, el: line("bot speaking", "Agent") };
    // A screen reader reads the answer once it is settled, not word by word.
    b.el.setAttribute("aria-busy", "true");
  }
  return b;
}

// The words of a done call, by tool; any other says "done".
const doneWords = { book_table: "booked", end_call: "ending the call" };

// toolWords says what a tool event reports: "book_table — held for your
// confirmation". An event without an outcome (an older server) is the
// name alone.
function toolWords(ev) {
  const name = ev.subject || ev.text || "tool";
  const detail = ev.detail ? " (" + ev.detail + ")" : "";
  switch (ev.outcome) {
    case undefined: case "": return name;
    case "running": return name + " \u2014 running\u2026";
    case "held": return name + " \u2014 held for your confirmation" + detail;
    case "done": return name + " \u2014 " + (doneWords[name] || "done") + detail;
    case "refused": return name + " \u2014 not done" + detail;
    case "cancelled": return name + " \u2014 cancelled" + detail;
    case "failed": return name + " \u2014 failed" + (ev.detail ? ": " + ev.detail : "");
    default: return name + " \u2014 " + ev.outcome + detail;
  }
}

// toolLine shows a tool event: a call's later events update its line.
function toolLine(ev) {
  const words = toolWords(ev);
  let t = ev.call ? toolLines[ev.call] : null;
  if (!t) {
    t = { call: ev.call || "", el: line("tool", "tool") };
    if (ev.call) toolLines[ev.call] = t;
    page.tools.push(t.shown = { call: t.call, text: "", outcome: "" });
  }
  t.shown.text = words;
  t.shown.outcome = ev.outcome || "";
  t.el.dataset.outcome = ev.outcome || "";
  t.el.querySelector(".text").textContent = words;
}

// ---- the latency bars ----

function stageLook(name, i) {
  return stageInfo[name] || { label: name.replace(/_/g, " "), color: spareColors[i % spareColors.length] };
}

function renderLegend(stages) {
  const names = stages.map((s) => s.name);
  if (ui.legend.dataset.names === names.join(",")) return;
  ui.legend.dataset.names = names.join(",");
  const mark = document.createElement("li");
  const bar = document.createElement("span");
  bar.className = "legend-second";
  mark.append(bar, "1 s");
  ui.legend.replaceChildren(...stages.map((s, i) => {
    const look = stageLook(s.name, i);
    const li = document.createElement("li");
    const sw = document.createElement("span");
    sw.className = "swatch";
    sw.style.background = look.color;
    li.append(sw, look.label);
    return li;
  }), mark);
}

// rescale sets every bar's length against the longest turn (at least a
// second), so the turns can be compared; the one-second mark shows the goal.
function rescale() {
  const scale = Math.max(1000, ...page.latencies);
  ui.latencies.querySelectorAll(".turnbar").forEach((li) => {
    li.querySelector(".fill").style.width = (100 * Number(li.dataset.ms) / scale) + "%";
    li.querySelector(".second").style.left = (100 * 1000 / scale) + "%";
  });
}

function latencyBar(ev) {
  const total = ev.latency_ms;
  const stages = Array.isArray(ev.stages) && ev.stages.length > 0 ? ev.stages.filter((s) => s && s.name) : null;
  page.latencies.push(total);
  page.stages.push(stages);
  const li = document.createElement("li");
  li.className = "turnbar";
  li.dataset.ms = total;
  const head = document.createElement("div");
  head.className = "total";
  head.textContent = Math.round(total) + " ms";
  const track = document.createElement("div");
  track.className = "track";
  const fill = document.createElement("div");
  fill.className = "fill";
  const second = document.createElement("div");
  second.className = "second";
  second.title = "1 s";
  track.append(fill, second);
  const parts = stages || [{ name: "total", ms: total }];
  const sum = parts.reduce((a, s) => a + Math.max(0, s.ms || 0), 0) || 1;
  parts.forEach((s, i) => {
    const seg = document.createElement("span");
    seg.className = "seg";
    const look = stages ? stageLook(s.name, i) : { label: "total", color: "#57606a" };
    seg.style.background = look.color;
    seg.style.width = (100 * Math.max(0, s.ms || 0) / sum) + "%";
    seg.title = look.label + " " + Math.round(s.ms || 0) + " ms";
    seg.dataset.stage = s.name;
    fill.append(seg);
  });
  li.append(head, track);
  if (stages) {
    const words = stages.map((s, i) => stageLook(s.name, i).label + " " + Math.round(s.ms || 0)).join(" \u00b7 ");
    track.setAttribute("role", "img");
    track.setAttribute("aria-label", Math.round(total) + " ms: " + words + " ms");
    const detail = document.createElement("div");
    detail.className = "stages";
    detail.textContent = words + " ms";
    li.append(detail);
    renderLegend(stages);
  }
  ui.latencies.append(li);
  rescale();
}

function onEvent(ev) {
  page.events++;
  switch (ev.kind) {
    case "state":
      setState(ev.state);
      break;
    case "user_turn": {
      page.turns.push(ev.text);
      page.lastTurnEpoch = ev.epoch;
      const el = line("user", "You");
      el.querySelector(".text").textContent = ev.text;
      break;
    }
    case "bot_word": {
      const b = botLine(ev.epoch);
      b.words.push(ev.text);
      b.el.querySelector(".text").textContent = b.words.join(" ");
      break;
    }
    case "bot_done": {
      const b = botLine(ev.epoch);
      b.done = true;
      b.cut = !!ev.cut;
      b.el.classList.remove("speaking");
      b.el.removeAttribute("aria-busy");
      if (b.cut) b.el.classList.add("cut");
      if (b.words.length === 0 && !b.cut) b.el.remove();
      break;
    }
    case "latency":
      latencyBar(ev);
      break;
    case "tool":
      toolLine(ev);
      break;
  }
}

// ---- the connection ----

function renderConn(c, ended) {
  const rows = [
    ["state", ended ? "call ended" : "live, every second"],
    ["sent", c.packetsSent + " packets" + (c.remoteLossPercent === null ? "" : ", " + c.remoteLossPercent.toFixed(1) + " % lost")],
    ["received", c.packetsReceived + " packets, " + c.packetsLost + " lost (" + c.lossPercent.toFixed(1) + " %)"],
    ["jitter", c.jitterMs.toFixed(1) + " ms"],
    ["round trip", c.rttMs === null ? "not measured yet" : c.rttMs.toFixed(1) + " ms"],
  ];
  ui.connstats.replaceChildren(...rows.flatMap(([k, v]) => {
    const dt = document.createElement("dt");
    dt.textContent = k;
    const dd = document.createElement("dd");
    dd.textContent = v;
    return [dt, dd];
  }));
}

async function pollStats() {
  if (!pc) return;
  const stats = await pc.getStats();
  const c = {
    packetsSent: 0, packetsReceived: 0, packetsLost: 0, lossPercent: 0, jitterMs: 0, rttMs: null,
    remoteLossPercent: null, updates: page.conn ? page.conn.updates : 0,
  };
  let pairRTT = null;
  stats.forEach((s) => {
    if (s.type === "inbound-rtp" && s.kind === "audio") {
      const prev = page.audio || { maxLevel: 0 };
      page.audio = {
        packetsReceived: s.packetsReceived || 0,
        audioLevel: s.audioLevel || 0,
        maxLevel: Math.max(prev.maxLevel, s.audioLevel || 0),
        totalAudioEnergy: s.totalAudioEnergy || 0,
        jitter: s.jitter || 0,
      };
      c.packetsReceived = s.packetsReceived || 0;
      c.packetsLost = Math.max(0, s.packetsLost || 0);
      c.jitterMs = (s.jitter || 0) * 1000;
    } else if (s.type === "outbound-rtp" && s.kind === "audio") {
      c.packetsSent = s.packetsSent || 0;
    } else if (s.type === "remote-inbound-rtp" && s.kind === "audio") {
      if (typeof s.roundTripTime === "number") c.rttMs = s.roundTripTime * 1000;
      if (typeof s.fractionLost === "number") c.remoteLossPercent = s.fractionLost * 100;
    } else if (s.type === "candidate-pair" && s.nominated && s.state === "succeeded" && typeof s.currentRoundTripTime === "number") {
      pairRTT = s.currentRoundTripTime * 1000;
    }
  });
  if (c.rttMs === null) c.rttMs = pairRTT;
  const all = c.packetsReceived + c.packetsLost;
  c.lossPercent = all > 0 ? 100 * c.packetsLost / all : 0;
  const now = Date.now();
  if (now - lastConnRender >= 1000) {
    lastConnRender = now;
    c.updates++;
    page.conn = c;
    renderConn(c);
  }
}

// ---- the call ----

function send(msg) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  else pendingCandidates.push(msg);
}

// reset clears the last call's conversation, bars and figures.
function reset() {
  Object.assign(page, { call: "", turns: [], bot: {}, latencies: [], stages: [], tools: [], audio: null, conn: null, events: 0, error: "" });
  toolLines = {};
  lastConnRender = 0;
  ui.transcript.replaceChildren();
  ui.latencies.replaceChildren();
  ui.legend.replaceChildren();
  delete ui.legend.dataset.names;
  ui.callid.textContent = "";
  ui.error.textContent = "";
  page.mic.maxLevel = -Infinity;
}

async function call() {
  ui.call.disabled = true;
  reset();
  setState("connecting");
  try {
    mic = await openMic();
    startMeter(mic);
    pc = new RTCPeerConnection({ iceServers: [] });
    mic.getTracks().forEach((t) => pc.addTrack(t, mic));
    pc.ontrack = (e) => { ui.remote.srcObject = e.streams[0] || new MediaStream([e.track]); };
    pc.onicecandidate = (e) => send({ type: "candidate", candidate: e.candidate ? e.candidate.toJSON() : null });
    pc.onconnectionstatechange = () => {
      if (pc && (pc.connectionState === "failed")) fail("The connection failed: the server could not be reached for audio (see docs/MEDIA.md on WebRTC candidates).");
    };
    const offer = await pc.createOffer();
    await pc.setLocalDescription(offer);
    // A guarded offer (serve: [transports.webrtc] token_env or
    // signing_secret_env): the page passes on a bearer token given in its
    // URL's fragment (#token=..., never sent to the server with the page)
    // or the exp and sig of a URL signed for POST /webrtc/offer.
    const headers = { "Content-Type": "application/json" };
    const token = new URLSearchParams(location.hash.slice(1)).get("token");
    if (token) headers["Authorization"] = "Bearer " + token;
    const signed = new URLSearchParams(location.search);
    const offerURL = signed.get("sig") ? "webrtc/offer?" + signed.toString() : "webrtc/offer";
    const r = await fetch(offerURL, {
      method: "POST", headers,
      body: JSON.stringify({ sdp: pc.localDescription.sdp, type: "offer" }),
    });
    const body = await r.json().catch(() => ({}));
    if (!r.ok) throw new Error(body.error || ("offer refused: HTTP " + r.status));
    page.call = body.call;
    ui.callid.textContent = body.call;
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const base = location.pathname.replace(/[^/]*$/, "");
    ws = new WebSocket(proto + "//" + location.host + base + "webrtc/ws?call=" + encodeURIComponent(body.call));
    ws.onopen = () => { pendingCandidates.splice(0).forEach((m) => ws.send(JSON.stringify(m))); };
    ws.onmessage = (m) => {
      let msg;
      try { msg = JSON.parse(m.data); } catch (e) { return; }
      if (msg.type === "candidate") {
        if (msg.candidate && pc) pc.addIceCandidate(msg.candidate).catch(() => {});
      } else if (msg.type === "event") {
        onEvent(msg);
      } else if (msg.type === "bye") {
        setState("ended");
        hangup();
      } else if (msg.type === "error") {
        ui.error.textContent = msg.error;
      }
    };
    await pc.setRemoteDescription({ type: "answer", sdp: body.sdp });
    ui.hangup.disabled = false;
    ui.hangup.focus();
    statsTimer = setInterval(pollStats, 250);
  } catch (e) {
    fail(String(e && e.message || e));
  }
}

function hangup() {
  if (statsTimer) clearInterval(statsTimer);
  statsTimer = null;
  if (ws) { try { ws.close(1000, "hangup"); } catch (e) { /* closed */ } }
  ws = null;
  if (pc) pc.close();
  pc = null;
  if (mic) mic.getTracks().forEach((t) => t.stop());
  mic = null;
  stopMeter();
  renderMic();
  if (page.conn) renderConn(page.conn, true);
  pendingCandidates = [];
  const hadFocus = document.activeElement === ui.hangup;
  ui.call.disabled = false;
  ui.hangup.disabled = true;
  if (hadFocus) ui.call.focus();
  if (page.state !== "failed") setState("ended");
}

ui.call.addEventListener("click", call);
ui.hangup.addEventListener("click", hangup);
