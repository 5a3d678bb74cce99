// Brisvox operator console: the past calls. Loaded after console.js,
// whose helpers it uses (api, el, enc, str, num, fmtMS, fmtAge, plural,
// drawWaterfall) and whose token it sends, through api() or, for the
// recording, fetch() with the same header:
//
//   GET /operator/records?agent=&end_reason=&limit=&before=   the list, newest first
//   GET /operator/records/{id}                                 one call's record
//   GET /operator/records/{id}/recording                       its audio, played from a
//                                                              blob: URL (an <audio> src
//                                                              cannot carry the header)
//
// What a record holds is outside input (a transcript is what a caller
// said): it is set with textContent, never parsed as HTML.
"use strict";

(() => {
  const pui = {
    box: $("past"), form: $("past-form"), agent: $("past-agent"), reason: $("past-reason"), count: $("past-count"),
    note: $("past-note"), body: $("records-body"), more: $("past-more"),
    rec: $("record"), recID: $("record-id"), recReason: $("record-reason"), recMeta: $("record-meta"), recNote: $("record-note"),
    close: $("close-record"), play: $("record-play"), audio: $("record-audio"), audioNote: $("record-audio-note"),
    transcript: $("transcript"), waterfall: $("record-waterfall"),
  };
  const pageSize = 50;

  // con.past is what the view knows, for people and tests.
  const past = con.past = {
    state: "idle", // idle, loading, ready, off, failed
    records: [], next: "", filter: { agent: "", end_reason: "" },
    selected: "", record: null, transcript: [], waterfall: [],
    audio: "none", // none, loading, ready, failed, absent
    fetches: 0,
  };
  let gen = 0, audioURL = "";

  function fmtWhen(iso) {
    const d = new Date(iso);
    if (isNaN(d)) return "";
    return d.toLocaleString([], { hour12: false, year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", second: "2-digit" });
  }

  function duration(a, b) {
    const ms = new Date(b) - new Date(a);
    return isFinite(ms) && ms >= 0 ? fmtAge(ms) : "\u2014";
  }

  async function load(more) {
    const my = ++gen;
    if (!more) {
      past.filter = { agent: pui.agent.value.trim(), end_reason: pui.reason.value.trim() };
      past.records = [];
      past.next = "";
    }
    const q = new URLSearchParams({ limit: String(pageSize) });
    if (past.filter.agent) q.set("agent", past.filter.agent);
    if (past.filter.end_reason) q.set("end_reason", past.filter.end_reason);
    if (more && past.next) q.set("before", past.next);
    past.state = "loading";
    past.fetches++;
    pui.note.textContent = "";
    try {
      const { body } = await api("GET", "/operator/records?" + q.toString());
      if (my !== gen) return;
      const got = Array.isArray(body.records) ? body.records : [];
      past.records = past.records.concat(got);
      past.next = str(body.next);
      past.state = "ready";
    } catch (e) {
      if (my !== gen || e.status === 401) return;
      past.state = e.status === 501 ? "off" : "failed";
      pui.note.textContent = e.status === 501
        ? "This node keeps no call records (brisvox serve's records settings turn them on)."
        : "Could not read the past calls: " + e.message;
    }
    renderList();
  }

  function renderList() {
    const rows = past.records.map((r) => {
      const tr = el("tr");
      tr.dataset.record = str(r.call_id);
      const first = el("td", "id");
      const b = el("button", "link", str(r.call_id));
      b.type = "button";
      b.title = "show this call's transcript, turns and recording";
      b.addEventListener("click", () => open(str(r.call_id)));
      first.append(b);
      tr.append(first, el("td", "", fmtWhen(r.started)), el("td", "num", duration(r.started, r.ended)), el("td", "", str(r.transport)),
        el("td", "", str(r.agent)), el("td", "reason", str(r.end_reason)), el("td", "num", String(num(r.turns))), el("td", "num", String(num(r.tools))),
        el("td", "", r.recording ? "yes" : "\u2014"));
      tr.classList.toggle("selected", str(r.call_id) === past.selected);
      return tr;
    });
    pui.body.replaceChildren(...rows);
    pui.more.hidden = !past.next;
    const f = [past.filter.agent && "agent " + past.filter.agent, past.filter.end_reason && "ended " + past.filter.end_reason].filter(Boolean);
    pui.count.textContent = past.state === "ready"
      ? (past.records.length === 0 ? "no past call" : plural(past.records.length, "call", "calls") + (past.next ? " (more older)" : "")) + (f.length ? " \u00b7 " + f.join(", ") : "")
      : "";
  }

  // marksMS turns a record's turn marks (wall times) into the live view's
  // shape: ms from its vad_stop (its earliest mark without one).
  function marksMS(marks) {
    const times = {};
    for (const [k, v] of Object.entries(marks && typeof marks === "object" ? marks : {})) {
      const t = Date.parse(v);
      if (isFinite(t)) times[k] = t;
    }
    let zero = times.vad_stop;
    if (typeof zero !== "number") zero = Math.min(...Object.values(times));
    const out = {};
    for (const [k, t] of Object.entries(times)) out[k] = t - zero;
    return out;
  }

  function dropAudio() {
    if (audioURL) URL.revokeObjectURL(audioURL);
    audioURL = "";
    pui.audio.removeAttribute("src");
    pui.audio.hidden = true;
    pui.audioNote.textContent = "";
  }

  async function open(id) {
    past.selected = id;
    past.record = null;
    past.transcript = [];
    past.waterfall = [];
    dropAudio();
    past.audio = "none";
    pui.rec.hidden = false;
    pui.recID.textContent = id;
    pui.recReason.textContent = "";
    pui.recMeta.textContent = "";
    pui.recNote.textContent = "reading the record\u2026";
    pui.transcript.replaceChildren();
    pui.waterfall.replaceChildren();
    pui.play.hidden = true;
    renderList();
    try {
      const { body } = await api("GET", "/operator/records/" + enc(id));
      if (id !== past.selected) return;
      past.record = body.record || {};
      pui.recNote.textContent = "";
      renderRecord(past.record);
    } catch (e) {
      if (id !== past.selected || e.status === 401) return;
      pui.recNote.textContent = e.status === 404 ? "This record is gone (erased, or its retention passed)." : "Could not read the record: " + e.message;
    }
  }

  function renderRecord(r) {
    pui.recReason.textContent = str(r.end_reason);
    pui.recReason.dataset.state = "ended";
    const usage = Array.isArray(r.usage) ? r.usage : [];
    pui.recMeta.textContent = [
      fmtWhen(r.started), duration(r.started, r.ended), "node " + str(r.node), str(r.transport), "agent " + str(r.agent),
      plural(Array.isArray(r.turns) ? r.turns.length : 0, "turn", "turns"), plural(num(r.barge_ins), "barge-in", "barge-ins"),
      plural(Array.isArray(r.tools) ? r.tools.length : 0, "tool call", "tool calls"),
    ].concat(usage.map((u) => str(u.kind) + " " + str(u.vendor))).join(" \u00b7 ");

    const lines = Array.isArray(r.transcript) ? r.transcript : [];
    past.transcript = lines.map((l) => ({ speaker: str(l.speaker), text: str(l.text), cut: !!l.cut }));
    if (r.transcript_removed) {
      pui.transcript.replaceChildren(el("li", "hint", "The transcript was removed (by policy or retention)."));
    } else if (lines.length === 0) {
      pui.transcript.replaceChildren(el("li", "hint", "No transcript."));
    } else {
      pui.transcript.replaceChildren(...lines.map((l) => {
        const li = el("li");
        li.dataset.speaker = str(l.speaker) === "bot" ? "bot" : "caller";
        const words = el("span", "words", str(l.text));
        if (l.cut) words.append(el("span", "cut", "cut"));
        li.append(el("span", "at", fmtClock(l.at)), el("span", "who", li.dataset.speaker), words);
        return li;
      }));
    }
    const turns = (Array.isArray(r.turns) ? r.turns : []).map((t) => ({ epoch: num(t.epoch), marks_ms: marksMS(t.marks) }))
      .filter((t) => Object.keys(t.marks_ms).length > 0);
    past.waterfall = drawWaterfall(pui.waterfall, turns, 40);

    const rec = r.recording;
    if (!rec || rec.removed) {
      past.audio = "absent";
      pui.play.hidden = true;
      pui.audioNote.textContent = rec ? "The recording was removed (retention or erasure)." : "This call was not recorded.";
    } else {
      pui.play.hidden = false;
      pui.play.disabled = false;
      pui.audioNote.textContent = str(rec.format) + ", " + fmtAge(num(rec.duration_ms)) +
        (Array.isArray(rec.paused) && rec.paused.length ? ", " + plural(rec.paused.length, "pause", "pauses") + " (silence)" : "");
    }
  }

  // playRecording fetches the audio with the token and plays it from a
  // blob: URL, released when another call is opened or on sign-out.
  async function playRecording() {
    const id = past.selected;
    if (!id) return;
    pui.play.disabled = true;
    past.audio = "loading";
    pui.audioNote.textContent = "loading the recording\u2026";
    let r;
    try {
      r = await fetch("/operator/records/" + enc(id) + "/recording", {
        cache: "no-store", credentials: "omit", referrerPolicy: "no-referrer",
        headers: { Authorization: "Bearer " + token() },
      });
    } catch (e) {
      if (id !== past.selected) return;
      past.audio = "failed";
      pui.play.disabled = false;
      pui.audioNote.textContent = "The server did not answer (" + (e && e.message || e) + ").";
      return;
    }
    if (id !== past.selected) return;
    if (r.status === 401) {
      signOut(refusedToken);
      return;
    }
    if (!r.ok) {
      let body = null;
      try { body = await r.json(); } catch (_) { body = null; }
      past.audio = "failed";
      pui.play.disabled = false;
      pui.audioNote.textContent = "Could not load the recording: " + describeError(r.status, body);
      return;
    }
    const blob = await r.blob();
    if (id !== past.selected) return;
    dropAudio();
    audioURL = URL.createObjectURL(blob);
    pui.audio.src = audioURL;
    pui.audio.hidden = false;
    pui.play.hidden = true;
    past.audio = "ready";
    pui.audioNote.textContent = Math.round(blob.size / 1024) + " KiB";
  }

  function closeRecord() {
    past.selected = "";
    past.record = null;
    dropAudio();
    pui.rec.hidden = true;
    renderList();
  }

  function clear() {
    gen++;
    closeRecord();
    past.records = [];
    past.next = "";
    past.state = "idle";
    pui.body.replaceChildren();
    pui.count.textContent = "";
    pui.note.textContent = "";
  }

  pui.form.addEventListener("submit", (ev) => { ev.preventDefault(); load(false); });
  pui.more.addEventListener("click", () => load(true));
  pui.close.addEventListener("click", closeRecord);
  pui.play.addEventListener("click", playRecording);

  window.brisvoxPast = { load: () => load(false), clear, open };
  // console.js signed in before this file ran: load now.
  if (token() && !ui.app.hidden) load(false);
})();
