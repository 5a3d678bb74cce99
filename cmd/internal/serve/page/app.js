// Brisvox call page: plain JavaScript, no build step.
// Signaling: POST /webrtc/offer {sdp, type} -> {sdp, type, call};
// then a websocket /webrtc/ws?call=ID carries trickle ICE both ways and the
// call's live events (see cmd/internal/serve/events.go).
"use strict";

const $ = (id) => document.getElementById(id);
const ui = {
  call: $("call"), hangup: $("hangup"), state: $("state"), callid: $("callid"),
  transcript: $("transcript"), latencies: $("latencies"), audiostats: $("audiostats"),
  error: $("error"), remote: $("remote"), agent: $("agent"),
};

// window.brisvox is what the page knows, for people and for tests.
const page = window.brisvox = {
  state: "idle", call: "", turns: [], bot: {}, latencies: [], audio: null, events: 0, error: "",
};

let pc = null, ws = null, statsTimer = null, pendingCandidates = [];

fetch("agent").then((r) => r.ok ? r.json() : null).then((a) => { if (a && a.name) ui.agent.textContent = a.name; }).catch(() => {});

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
    b = page.bot[epoch] = { epoch: epoch, words: [], done: false, cut: false, el: line("bot speaking", "Bot") };
  }
  return b;
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
      if (b.cut) b.el.classList.add("cut");
      if (b.words.length === 0 && !b.cut) b.el.remove();
      break;
    }
    case "latency": {
      page.latencies.push(ev.latency_ms);
      const li = document.createElement("li");
      li.textContent = Math.round(ev.latency_ms) + " ms";
      ui.latencies.append(li);
      break;
    }
    case "tool": {
      const el = line("tool", "tool");
      el.querySelector(".text").textContent = ev.text;
      break;
    }
  }
}

async function pollStats() {
  if (!pc) return;
  const stats = await pc.getStats();
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
      ui.audiostats.textContent = "packets " + page.audio.packetsReceived + ", level " + page.audio.audioLevel.toFixed(3) +
        ", jitter " + (page.audio.jitter * 1000).toFixed(1) + " ms";
    }
  });
}

function send(msg) {
  if (ws && ws.readyState === WebSocket.OPEN) ws.send(JSON.stringify(msg));
  else pendingCandidates.push(msg);
}

async function call() {
  ui.call.disabled = true;
  ui.error.textContent = "";
  page.error = "";
  setState("connecting");
  try {
    const mic = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: true, noiseSuppression: true } });
    pc = new RTCPeerConnection({ iceServers: [] });
    mic.getTracks().forEach((t) => pc.addTrack(t, mic));
    pc.ontrack = (e) => { ui.remote.srcObject = e.streams[0] || new MediaStream([e.track]); };
    pc.onicecandidate = (e) => send({ type: "candidate", candidate: e.candidate ? e.candidate.toJSON() : null });
    pc.onconnectionstatechange = () => {
      if (pc && (pc.connectionState === "failed")) fail("connection failed");
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
  if (pc) {
    pc.getSenders().forEach((s) => s.track && s.track.stop());
    pc.close();
  }
  pc = null;
  pendingCandidates = [];
  ui.call.disabled = false;
  ui.hangup.disabled = true;
  if (page.state !== "failed") setState("ended");
}

ui.call.addEventListener("click", call);
ui.hangup.addEventListener("click", hangup);
