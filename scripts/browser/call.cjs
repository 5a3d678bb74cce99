// call.cjs drives Debian's chromium through one call on the brisvox page:
// it opens the page, presses Call, lets the fake microphone (a WAV file)
// ask its question, waits until the page shows the transcript, a latency
// and the answer's audio (getStats inbound-rtp audioLevel above zero on the
// <audio> element's stream), saves a screenshot and prints what the page
// knew as one JSON line. Run by TestBrowserCall (cmd/brisvox) inside
// `unshare -n`; puppeteer-core comes from .native/browser (NODE_PATH).
//
// Environment: BRISVOX_URL (the page), BRISVOX_WAV (the question),
// BRISVOX_SCREENSHOT (PNG path), BRISVOX_CHROMIUM (default /usr/bin/chromium),
// BRISVOX_TIMEOUT_MS (default 90000).
"use strict";

const puppeteer = require("puppeteer-core");
const fs = require("fs");
const os = require("os");
const path = require("path");

const url = process.env.BRISVOX_URL;
const wav = process.env.BRISVOX_WAV;
const shot = process.env.BRISVOX_SCREENSHOT;
const chromium = process.env.BRISVOX_CHROMIUM || "/usr/bin/chromium";
const timeout = Number(process.env.BRISVOX_TIMEOUT_MS || 90000);

function fail(msg) {
  console.error("call.cjs: " + msg);
  process.exit(1);
}

if (!url || !wav || !shot) fail("BRISVOX_URL, BRISVOX_WAV and BRISVOX_SCREENSHOT are required");

(async () => {
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
    const logs = [];
    page.on("console", (m) => logs.push(m.type() + ": " + m.text()));
    page.on("pageerror", (e) => logs.push("pageerror: " + e.message));
    await page.setViewport({ width: 1100, height: 720 });
    await page.goto(url, { waitUntil: "load", timeout: 20000 });
    await page.click("#call");
    const started = Date.now();
    let state = null;
    while (Date.now() - started < timeout) {
      state = await page.evaluate(() => {
        const b = window.brisvox;
        const bot = Object.values(b.bot).map((x) => x.words.join(" "));
        const answer = b.bot[b.lastTurnEpoch];
        return {
          answered: !!(answer && answer.done && !answer.cut && answer.words.length > 0),
          state: b.state, call: b.call, turns: b.turns, bot, latencies: b.latencies, audio: b.audio, error: b.error,
          transcriptText: document.getElementById("transcript").innerText,
          latencyText: document.getElementById("latencies").innerText,
          audioElementPlaying: !!document.getElementById("remote").srcObject,
        };
      });
      if (state.error) break;
      // Done when the question's answer played whole and was heard: the
      // highest audioLevel seen on the <audio> element's inbound stream
      // is a voice's, not the floor of comfort silence.
      if (state.turns.length >= 1 && state.latencies.length >= 1 && state.answered &&
          state.audio && state.audio.maxLevel > 0.01) {
        result = { ok: true };
        break;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    await page.screenshot({ path: shot, fullPage: true });
    Object.assign(result, state || {}, { elapsedMs: Date.now() - started, logs });
    await page.click("#hangup").catch(() => {});
    await new Promise((r) => setTimeout(r, 500));
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
})().catch((e) => fail(e && e.stack || String(e)));
