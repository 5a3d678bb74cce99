// call.cjs drives Debian's chromium through one call on the brisvox page
// and prints what the page knew as one JSON line. It opens the page,
// checks it before the call (the guide from GET agent, the contrast of
// every text, the keyboard's way to the Call button and its focus ring),
// starts the call with the keyboard, lets the fake microphone (a WAV
// file) ask its question, and waits until the page shows the transcript,
// the answer played whole (getStats inbound-rtp audioLevel above zero on
// the <audio> element's stream), a latency bar, the microphone's level
// above its floor and the connection's figures; it then looks at the page
// in a narrow window, hangs up, and saves a screenshot at each step.
// Run by TestBrowserCall (cmd/brisvox) inside `unshare -n`; puppeteer-core
// comes from .native/browser (NODE_PATH).
//
// Last, a fresh page is given the events of BRISVOX_EVENTS (a JSON array,
// as the server encodes them) and says how it shows them: the tool lines'
// words and the latency bar's segments; then what it says when the
// microphone is refused or missing.
//
// Environment: BRISVOX_URL (the page), BRISVOX_WAV (the question),
// BRISVOX_EVENTS (a file), BRISVOX_SCREENSHOTS (a directory for
// 1-before.png, 2-during.png, 3-narrow.png, 4-after.png, 5-events.png,
// 6-refused.png),
// BRISVOX_CHROMIUM (default /usr/bin/chromium), BRISVOX_TIMEOUT_MS
// (default 90000).
"use strict";

const puppeteer = require("puppeteer-core");
const fs = require("fs");
const os = require("os");
const path = require("path");

const url = process.env.BRISVOX_URL;
const wav = process.env.BRISVOX_WAV;
const shots = process.env.BRISVOX_SCREENSHOTS;
const eventsFile = process.env.BRISVOX_EVENTS;
const chromium = process.env.BRISVOX_CHROMIUM || "/usr/bin/chromium";
const timeout = Number(process.env.BRISVOX_TIMEOUT_MS || 90000);

function fail(msg) {
  console.error("call.cjs: " + msg);
  process.exit(1);
}

if (!url || !wav || !shots || !eventsFile) fail("BRISVOX_URL, BRISVOX_WAV, BRISVOX_EVENTS and BRISVOX_SCREENSHOTS are required");

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// audit runs in the page: the lowest contrast of a visible text against
// what is behind it (WCAG's ratio; text inside anything with opacity
// below 1 counts as a failure), and whether the page is wider than the
// window (a narrow window must not scroll sideways).
function audit() {
  const rgba = (s) => {
    const m = s.match(/rgba?\(([^)]+)\)/);
    if (!m) return [0, 0, 0, 0];
    const p = m[1].split(/[ ,/]+/).filter(Boolean).map(Number);
    return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1];
  };
  const lum = ([r, g, b]) => {
    const f = (c) => { c /= 255; return c <= 0.03928 ? c / 12.92 : Math.pow((c + 0.055) / 1.055, 2.4); };
    return 0.2126 * f(r) + 0.7152 * f(g) + 0.0722 * f(b);
  };
  const over = (top, under) => {
    const a = top[3];
    return [0, 1, 2].map((i) => top[i] * a + under[i] * (1 - a)).concat([1]);
  };
  const behind = (el) => {
    const layers = [];
    for (let e = el; e; e = e.parentElement) {
      const c = rgba(getComputedStyle(e).backgroundColor);
      if (c[3] > 0) layers.push(c);
      if (c[3] >= 1) break;
    }
    let bg = [255, 255, 255, 1];
    for (let i = layers.length - 1; i >= 0; i--) bg = over(layers[i], bg);
    return bg;
  };
  const failures = [];
  let min = Infinity, checked = 0;
  const walker = document.createTreeWalker(document.body, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const el = n.parentElement;
    if (!n.textContent.trim() || !el || el.closest("script,style,[hidden],.visually-hidden")) continue;
    if (el.getClientRects().length === 0) continue;
    const st = getComputedStyle(el);
    if (st.visibility === "hidden") continue;
    let faded = false;
    for (let e = el; e; e = e.parentElement) if (Number(getComputedStyle(e).opacity) < 1) faded = true;
    const fg = over(rgba(st.color), behind(el));
    const bg = behind(el);
    const l1 = lum(fg), l2 = lum(bg);
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    checked++;
    if (ratio < min) min = ratio;
    if (ratio < 4.5 || faded) {
      failures.push((el.id ? "#" + el.id : el.tagName.toLowerCase() + "." + el.className) + " " +
        JSON.stringify(n.textContent.trim().slice(0, 30)) + " " + ratio.toFixed(2) + (faded ? " (opacity)" : ""));
    }
  }
  return {
    minContrast: Math.round(min * 100) / 100, textsChecked: checked, contrastFailures: failures,
    overflowX: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  };
}

// snapshot is what the page knows and shows now.
function snapshot() {
  const b = window.brisvox;
  const bot = Object.values(b.bot).map((x) => x.words.join(" "));
  const answer = b.bot[b.lastTurnEpoch];
  const txt = (id) => document.getElementById(id).innerText;
  return {
    answered: !!(answer && answer.done && !answer.cut && answer.words.length > 0),
    state: b.state, call: b.call, turns: b.turns, bot, latencies: b.latencies, audio: b.audio, error: b.error,
    guide: b.guide, stages: b.stages, tools: b.tools, conn: b.conn,
    // -Infinity (no level yet) would be null in JSON: -1000 says it.
    mic: { permission: b.mic.permission, outcome: b.mic.outcome, maxLevel: Math.max(-1000, b.mic.maxLevel), meterUpdates: b.mic.meterUpdates },
    meterValue: Number(document.getElementById("level").value),
    meterFloor: Number(document.getElementById("level").min),
    micText: txt("micstate"),
    guideText: document.getElementById("guide").hidden ? "" : txt("guide"),
    transcriptText: txt("transcript"),
    latencyText: txt("latencies"),
    legendText: txt("legend"),
    bars: document.querySelectorAll("#latencies .turnbar").length,
    segments: Array.from(document.querySelectorAll("#latencies .turnbar:first-child .seg")).map((s) => ({
      stage: s.dataset.stage, width: s.getBoundingClientRect().width,
    })),
    connText: txt("connstats"),
    audioElementPlaying: !!document.getElementById("remote").srcObject,
  };
}

(async () => {
  fs.mkdirSync(shots, { recursive: true });
  const shot = (name) => path.join(shots, name);
  const profile = fs.mkdtempSync(path.join(os.tmpdir(), "brisvox-chromium-"));
  const browser = await puppeteer.launch({
    executablePath: chromium,
    headless: true,
    userDataDir: profile,
    args: [
      "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
      "--disable-background-networking", "--disable-component-update", "--disable-sync",
      "--allow-loopback-in-peer-connection",
      "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
      "--use-file-for-fake-audio-capture=" + wav,
      "--autoplay-policy=no-user-gesture-required",
    ],
  });
  let result = { ok: false };
  try {
    const page = await browser.newPage();
    const logs = [], badResponses = [];
    page.on("console", (m) => logs.push(m.type() + ": " + m.text()));
    page.on("pageerror", (e) => logs.push("pageerror: " + e.message));
    page.on("response", (r) => { if (r.status() >= 400) badResponses.push(r.status() + " " + r.url()); });
    // Nothing from outside: every request goes to the page's own server.
    const origin = new URL(url).origin;
    page.on("request", (r) => { if (!r.url().startsWith(origin + "/") && !r.url().startsWith("data:")) badResponses.push("foreign " + r.url()); });
    page.on("requestfailed", (r) => badResponses.push("failed " + r.url() + " " + (r.failure() ? r.failure().errorText : "")));
    await page.setViewport({ width: 1100, height: 760 });
    await page.goto(url, { waitUntil: "load", timeout: 20000 });
    await page.waitForFunction(() => window.brisvox.guide !== null, { timeout: 10000 }).catch(() => {});
    const before = Object.assign(await page.evaluate(audit), { guide: await page.evaluate(() => window.brisvox.guide) });
    await page.screenshot({ path: shot("1-before.png"), fullPage: true });

    // The icons: the one the page names and the one browsers ask for.
    const icons = await page.evaluate(async () => {
      const out = {};
      for (const href of [document.querySelector("link[rel=icon]").href, new URL("favicon.ico", location.href).href]) {
        const r = await fetch(href);
        const body = await r.arrayBuffer();
        out[new URL(href).pathname] = { status: r.status, type: r.headers.get("content-type"), bytes: body.byteLength };
      }
      return out;
    });

    // The keyboard: Tab from the top of the page to Call, then Enter.
    let tabs = 0, focus = null;
    await page.evaluate(() => document.activeElement && document.activeElement.blur());
    while (tabs < 20) {
      await page.keyboard.press("Tab");
      tabs++;
      focus = await page.evaluate(() => {
        const e = document.activeElement;
        const st = getComputedStyle(e);
        return { id: e.id, outline: st.outlineStyle, outlineWidth: st.outlineWidth };
      });
      if (focus.id === "call") break;
    }
    const keyboard = { tabsToCall: focus && focus.id === "call" ? tabs : -1, focusOutline: focus ? focus.outline + " " + focus.outlineWidth : "" };
    if (keyboard.tabsToCall > 0) await page.keyboard.press("Enter");
    else await page.click("#call");

    const started = Date.now();
    let state = null, maxMeter = -Infinity;
    while (Date.now() - started < timeout) {
      state = await page.evaluate(snapshot);
      if (state.meterValue > maxMeter) maxMeter = state.meterValue;
      if (state.error) break;
      // Done when the question's answer played whole and was heard (the
      // highest audioLevel seen on the <audio> element's inbound stream
      // is a voice's, not the floor of comfort silence), its latency bar
      // is drawn and the connection's figures have been shown twice.
      if (state.turns.length >= 1 && state.latencies.length >= 1 && state.answered &&
          state.audio && state.audio.maxLevel > 0.01 && state.bars >= 1 && state.conn && state.conn.updates >= 2) {
        result = { ok: true };
        break;
      }
      await sleep(250);
    }
    await page.screenshot({ path: shot("2-during.png"), fullPage: true });
    const during = await page.evaluate(audit);

    // A phone-sized window, during the call.
    await page.setViewport({ width: 390, height: 844 });
    await sleep(300);
    const narrow = await page.evaluate(audit);
    await page.screenshot({ path: shot("3-narrow.png"), fullPage: true });
    await page.setViewport({ width: 1100, height: 760 });

    await page.click("#hangup").catch(() => {});
    await page.waitForFunction(() => window.brisvox.state === "ended", { timeout: 5000 }).catch(() => {});
    await sleep(300);
    const after = await page.evaluate(snapshot);
    await page.screenshot({ path: shot("4-after.png"), fullPage: true });

    // The events as the page shows them, on a page of their own.
    const shown = await browser.newPage();
    shown.on("pageerror", (e) => logs.push("pageerror: " + e.message));
    await shown.setViewport({ width: 1100, height: 760 });
    await shown.goto(url, { waitUntil: "load", timeout: 20000 });
    const events = await shown.evaluate((evs) => {
      evs.forEach(onEvent); // the page's own handler: a global of app.js
      const bar = document.querySelector("#latencies .turnbar");
      return {
        tools: window.brisvox.tools.map((t) => t.text),
        toolLines: Array.from(document.querySelectorAll("#transcript .tool .text")).map((e) => e.textContent),
        legend: document.getElementById("legend").innerText,
        fill: bar ? bar.querySelector(".fill").getBoundingClientRect().width : 0,
        segments: bar ? Array.from(bar.querySelectorAll(".seg")).map((e) => ({ stage: e.dataset.stage, width: e.getBoundingClientRect().width })) : [],
        stagesText: bar && bar.querySelector(".stages") ? bar.querySelector(".stages").textContent : "",
      };
    }, JSON.parse(fs.readFileSync(eventsFile, "utf8")));
    await shown.screenshot({ path: shot("5-events.png"), fullPage: true });

    // A microphone refused, then missing: getUserMedia fails as a
    // browser's does, and the page says what to do.
    const refusals = {};
    for (const name of ["NotAllowedError", "NotFoundError"]) {
      await shown.evaluate((n) => {
        navigator.mediaDevices.getUserMedia = () => Promise.reject(new DOMException("refused by the test", n));
      }, name);
      await shown.click("#call");
      await shown.waitForFunction(() => window.brisvox.state === "failed", { timeout: 5000 }).catch(() => {});
      refusals[name] = await shown.evaluate(() => ({
        state: window.brisvox.state, mic: document.getElementById("micstate").innerText,
        micState: document.getElementById("micstate").dataset.state, error: document.getElementById("error").innerText,
        callEnabled: !document.getElementById("call").disabled,
      }));
      if (name === "NotAllowedError") await shown.screenshot({ path: shot("6-refused.png"), fullPage: true });
    }
    events.refusals = refusals;

    Object.assign(result, state || {}, { events }, {
      elapsedMs: Date.now() - started, logs, badResponses, icons, keyboard, maxMeterValue: Math.max(-1000, maxMeter),
      before, during, narrow,
      after: { state: after.state, micText: after.micText, meterValue: after.meterValue, connText: after.connText, bars: after.bars },
    });
    await sleep(300);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
})().catch((e) => fail(e && e.stack || String(e)));
