// console.cjs drives Debian's chromium through the operator console
// (/operator/) of a server with live calls, and prints what the page knew
// at each step as JSON lines. Run by TestBrowserConsole (cmd/brisvox)
// inside `unshare -n`; puppeteer-core comes from .native/browser
// (NODE_PATH).
//
// The steps: a wrong token is refused (the prompt again, saying 401); the
// right one shows the calls; a call's detail draws its actor tree and turn
// waterfall; a Restart of the stt stage, confirmed; a Hang up of another
// call, confirmed, and the call leaves the table; a Restart confirmed
// after its call ended (the API's 404 shown); a Drain of the node,
// confirmed, then Undrain (between them, where the page has it, the
// hung-up call's record in the past calls); last, the server stops and the page says it is
// reconnecting. Where the test must act or look (make the caller speak
// again, hang a call up behind the page's back, try a call on the drained
// node, stop the server), the script
// prints {"step": NAME, ...} and waits for a line on its standard input:
// "ok" to go on, anything else to stop with that as the error.
//
// Environment: BRISVOX_URL (the console page), BRISVOX_OPERATOR_TOKEN (the
// token, from the environment, never an argument), BRISVOX_RESTART_CALL
// and BRISVOX_HANGUP_CALL (call ids), BRISVOX_CALLS (the live call ids,
// comma-separated), BRISVOX_SCREENSHOTS (a directory for console-*.png),
// BRISVOX_CHROMIUM (default /usr/bin/chromium), BRISVOX_TIMEOUT_MS (each
// wait; default 30000).
"use strict";

const puppeteer = require("puppeteer-core");
const fs = require("fs");
const os = require("os");
const path = require("path");
const readline = require("readline");

const env = process.env;
const url = env.BRISVOX_URL;
const token = env.BRISVOX_OPERATOR_TOKEN;
const restartCall = env.BRISVOX_RESTART_CALL;
const hangupCall = env.BRISVOX_HANGUP_CALL;
const calls = (env.BRISVOX_CALLS || "").split(",").filter(Boolean);
const shots = env.BRISVOX_SCREENSHOTS;
const chromium = env.BRISVOX_CHROMIUM || "/usr/bin/chromium";
const timeout = Number(env.BRISVOX_TIMEOUT_MS || 30000);

function fail(msg) {
  console.error("console.cjs: " + msg);
  process.exit(1);
}

if (!url || !token || !restartCall || !hangupCall || calls.length === 0 || !shots) {
  fail("BRISVOX_URL, BRISVOX_OPERATOR_TOKEN, BRISVOX_RESTART_CALL, BRISVOX_HANGUP_CALL, BRISVOX_CALLS and BRISVOX_SCREENSHOTS are required");
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// The test's answers, a line each.
const answers = [];
let answered = null;
readline.createInterface({ input: process.stdin }).on("line", (l) => {
  if (answered) { const f = answered; answered = null; f(l); } else answers.push(l);
});

// step tells the test where the page is and waits for its "ok".
function step(name, extra) {
  console.log(JSON.stringify(Object.assign({ step: name }, extra || {})));
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error("the test did not answer step " + name)), 4 * timeout);
    const got = (l) => {
      clearTimeout(t);
      if (l.trim() === "ok") resolve();
      else reject(new Error("step " + name + ": " + l));
    };
    if (answers.length > 0) got(answers.shift());
    else answered = got;
  });
}

// audit runs in the page (as call.cjs's does): the lowest contrast of a
// visible text against what is behind it (WCAG's ratio; text inside
// anything with opacity below 1 fails), and how far the page is wider
// than the window. SVG text is checked against the page behind the chart.
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
    if (!n.textContent.trim() || !el || el.closest("script,style,title,[hidden],.visually-hidden,dialog:not([open])")) continue;
    if (el.getClientRects().length === 0) continue;
    const st = getComputedStyle(el);
    if (st.visibility === "hidden" || st.display === "none") continue;
    let faded = false;
    for (let e = el; e; e = e.parentElement) if (Number(getComputedStyle(e).opacity) < 1) faded = true;
    const isSVG = el instanceof SVGElement;
    const bg = behind(isSVG ? el.closest("svg").parentElement : el);
    const fg = over(isSVG ? rgba(st.fill) : rgba(st.color), bg);
    const l1 = lum(fg), l2 = lum(bg);
    const ratio = (Math.max(l1, l2) + 0.05) / (Math.min(l1, l2) + 0.05);
    checked++;
    if (ratio < min) min = ratio;
    if (ratio < 4.5 || faded) {
      failures.push((el.id ? "#" + el.id : el.tagName.toLowerCase() + "." + (el.className.baseVal !== undefined ? el.className.baseVal : el.className)) + " " +
        JSON.stringify(n.textContent.trim().slice(0, 30)) + " " + ratio.toFixed(2) + (faded ? " (opacity)" : ""));
    }
  }
  return {
    minContrast: Math.round(min * 100) / 100, textsChecked: checked, contrastFailures: failures,
    overflowX: document.documentElement.scrollWidth - document.documentElement.clientWidth,
  };
}

// look is what the console knows and shows now.
function look() {
  const c = window.brisvoxConsole;
  const txt = (id) => document.getElementById(id).innerText;
  const actors = Array.from(document.querySelectorAll("#tree .actor")).map((a) => ({
    name: a.dataset.actor, tone: a.dataset.tone,
    state: a.querySelector(".tone") ? a.querySelector(".tone").textContent : "",
    mailbox: a.querySelector(".mailbox") ? a.querySelector(".mailbox").textContent : "",
    restarts: a.querySelector(".restarts") ? a.querySelector(".restarts").textContent : "",
    restartButton: !!a.querySelector("button[data-stage]"),
    hover: a.title,
  }));
  return {
    stream: c.stream, streamNote: c.streamNote, snapshots: c.snapshots, events: c.events, reconnects: c.reconnects,
    badEvents: c.badEvents, self: c.self,
    loginShown: !document.getElementById("login").hidden, appShown: !document.getElementById("app").hidden,
    loginError: txt("login-error"),
    rows: Array.from(document.querySelectorAll("#calls-body tr")).map((tr) => ({
      id: tr.dataset.call, cells: Array.from(tr.children).map((td) => td.textContent),
      stateBadge: tr.querySelector(".badge") ? tr.querySelector(".badge").dataset.state : "",
    })),
    calls: c.calls, nodes: c.nodes,
    selected: c.selected, detailShown: !document.getElementById("detail").hidden, detailGone: c.detailGone,
    detailNote: txt("detail-note"), detailFetches: c.detailFetches,
    actors, connectors: document.querySelectorAll("#tree ul.branches > li").length,
    waterfall: c.waterfall,
    waterfallRows: document.querySelectorAll("#waterfall svg g.turn").length,
    waterfallSegments: Array.from(document.querySelectorAll("#waterfall svg [data-seg]")).map((r) => ({
      seg: r.dataset.seg, width: Number(r.getAttribute("width")), title: r.querySelector("title") ? r.querySelector("title").textContent : "",
    })),
    axisTicks: Array.from(document.querySelectorAll("#waterfall svg text.axis")).map((t) => t.textContent),
    legend: txt("wf-legend"),
    action: txt("action"), actions: c.actions,
    nodeCards: Array.from(document.querySelectorAll("#nodes li.node")).map((li) => ({
      node: li.dataset.node, state: li.dataset.state, text: li.innerText,
      button: li.querySelector("button") ? li.querySelector("button").dataset.action : "",
    })),
    dialogOpen: document.getElementById("confirm").open,
    dialogText: document.getElementById("confirm").open ? txt("confirm-text") : "",
    summary: txt("summary"), conn: txt("conn"),
    href: location.href,
    stored: Object.keys(sessionStorage),
    local: Object.keys(localStorage),
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
      "--font-render-hinting=none",
    ],
  });
  const result = { ok: false, steps: {} };
  const logs = [], badResponses = [], requests = [];
  // Once the test stops the server, refused connections are the point.
  let stopping = false;
  try {
    const page = await browser.newPage();
    const origin = new URL(url).origin;
    // Answers the test asks for (a wrong token's 401, a late restart's
    // 404): "status path" each; their failed-load lines are marked.
    const expected = new Set();
    const isExpected = (status, u) => expected.has(status + " " + u.replace(origin, "").split("?")[0]);
    page.on("console", (m) => {
      const where = m.location() && m.location().url || "";
      const st = (m.text().match(/status of (\d{3})/) || [])[1];
      logs.push((st && where && isExpected(st, where) ? "expected " : "") + m.type() + ": " + m.text());
    });
    page.on("pageerror", (e) => logs.push("pageerror: " + e.message));
    page.on("request", (r) => {
      requests.push(r.method() + " " + r.url().replace(origin, ""));
      if (!r.url().startsWith(origin + "/") && !r.url().startsWith("data:")) badResponses.push("foreign " + r.url());
    });
    page.on("response", (r) => {
      if (r.status() >= 400 && !isExpected(r.status(), r.url())) badResponses.push(r.status() + " " + r.url());
    });
    page.on("requestfailed", (r) => {
      const why = r.failure() ? r.failure().errorText : "";
      // A stream cut by the page itself (reconnecting, signing out) is not a failure.
      if (why !== "net::ERR_ABORTED" && !stopping) badResponses.push("failed " + r.url() + " " + why);
    });
    await page.setViewport({ width: 1280, height: 800 });
    // wait polls fn in the page until it holds. Not waitForFunction: that
    // builds its predicate with new Function in the page, which the
    // console's policy (no 'unsafe-eval') refuses; evaluate comes over
    // the DevTools protocol, which it does not govern.
    const wait = async (fn, arg, what) => {
      const until = Date.now() + timeout;
      for (;;) {
        if (await page.evaluate(fn, arg)) return;
        if (Date.now() > until) throw new Error("waiting for " + what + ": not within " + timeout + " ms");
        await sleep(100);
      }
    };
    const confirm = async (name) => {
      await wait(() => document.getElementById("confirm").open, null, "the confirmation dialog");
      const seen = await page.evaluate(look);
      if (name) await page.screenshot({ path: shot(name) });
      await page.click("#confirm-ok");
      await wait(() => !document.getElementById("confirm").open, null, "the dialog to close");
      return seen.dialogText;
    };
    const actionsBefore = async () => page.evaluate(() => window.brisvoxConsole.actions.length);
    const nextAction = async (n, what) => {
      await wait((k) => window.brisvoxConsole.actions.length > k, n, what + "'s answer");
      return page.evaluate((k) => window.brisvoxConsole.actions[k], n);
    };

    // 1. The page loads with no token: the prompt, nothing else.
    const resp = await page.goto(url, { waitUntil: "load", timeout });
    result.csp = resp.headers()["content-security-policy"] || "";
    const first = await page.evaluate(look);
    result.steps.prompt = { look: first, audit: await page.evaluate(audit) };
    await page.screenshot({ path: shot("console-1-token.png") });

    // 2. A wrong token: back to the prompt, saying why.
    expected.add("401 /operator/events");
    // The past calls (past.js) ask for their list at sign-in too.
    expected.add("401 /operator/records");
    await page.type("#token", "wrong-token-0123456789abcdef");
    await page.click("#login-go");
    await wait(() => !document.getElementById("login").hidden && document.getElementById("login-error").textContent !== "", null, "the refusal of a wrong token");
    result.steps.wrongToken = { look: await page.evaluate(look) };

    // 3. The right token: the calls, live.
    expected.delete("401 /operator/events");
    await page.type("#token", token);
    await page.click("#login-go");
    await wait((ids) => window.brisvoxConsole.stream === "live" && ids.every((id) => document.querySelector('#calls-body tr[data-call="' + id + '"]')),
      calls, "the live calls in the table");
    // An age ticks between two looks a second and more apart.
    const ageOf = () => page.evaluate((id) => document.querySelector('#calls-body tr[data-call="' + id + '"] td.age').textContent, calls[0]);
    const age1 = await ageOf();
    await wait(([id, a]) => document.querySelector('#calls-body tr[data-call="' + id + '"] td.age').textContent !== a, [calls[0], age1], "an age to tick");
    const age2 = await ageOf();
    // The filter: the restart call's id alone shows one row.
    await page.type("#filter", restartCall);
    await wait(() => document.querySelectorAll("#calls-body tr").length === 1, null, "the filter");
    const filtered = await page.evaluate(look);
    await page.click("#filter", { clickCount: 3 });
    await page.keyboard.press("Backspace");
    await wait((n) => document.querySelectorAll("#calls-body tr").length === n, calls.length, "the filter cleared");
    result.steps.calls = { look: await page.evaluate(look), audit: await page.evaluate(audit), ages: [age1, age2], filtered: filtered.rows.map((r) => r.id) };
    await page.screenshot({ path: shot("console-2-calls.png") });

    // 4. The call's detail: its tree and its turns.
    await page.click('#calls-body tr[data-call="' + restartCall + '"] button.link');
    await wait(() => document.querySelectorAll("#tree .actor").length >= 9 && document.querySelectorAll("#waterfall svg g.turn").length >= 1, null, "the tree and the waterfall");
    // The counters open on click (and stay open across the refreshes).
    await page.click('#tree .actor[data-actor="stt"] details summary').catch(() => {});
    await wait(() => !!document.querySelector('#tree .actor[data-actor="stt"] details[open]'), null, "the stt counters to open");
    const fetches = await page.evaluate(() => window.brisvoxConsole.detailFetches);
    await wait((n) => window.brisvoxConsole.detailFetches > n, fetches, "the detail to be read again while open");
    result.steps.detail = { look: await page.evaluate(look), audit: await page.evaluate(audit) };
    await page.screenshot({ path: shot("console-3-detail.png") });

    // 5. Restart the stt stage from the page: asked first, then the API's answer.
    const turnsBefore = await page.evaluate(() => window.brisvoxConsole.waterfall.length);
    let n = await actionsBefore();
    await page.click('#tree button[data-stage="stt"]');
    const restartAsk = await confirm("console-4-confirm.png");
    const restarted = await nextAction(n, "the restart");
    // The test makes the caller speak again and checks the call through the API.
    await step("restarted", { call: restartCall, action: restarted });
    await wait(([id, before]) => {
      const c = window.brisvoxConsole.calls[id];
      const stt = document.querySelector('#tree .actor[data-actor="stt"] .restarts');
      return c && c.restarts >= 1 && c.turns >= 2 && stt && stt.textContent !== "restarts 0" &&
        document.querySelectorAll("#waterfall svg g.turn").length > before &&
        document.getElementById("detail-meta").textContent.includes("2 turns");
    }, [restartCall, turnsBefore], "the restart and the next turn on the page");
    result.steps.restart = { ask: restartAsk, action: restarted, turnsBefore, look: await page.evaluate(look) };
    await page.screenshot({ path: shot("console-5-restarted.png") });

    // 6. Hang up another call from the page: it leaves the table.
    await page.click('#calls-body tr[data-call="' + hangupCall + '"] button.link');
    await wait((id) => window.brisvoxConsole.selected === id && document.querySelectorAll("#tree .actor").length >= 9, hangupCall, "the second call's detail");
    n = await actionsBefore();
    await page.click("#hangup");
    const hangupAsk = await confirm("");
    const hungUp = await nextAction(n, "the hang-up");
    await wait((id) => !document.querySelector('#calls-body tr[data-call="' + id + '"]') && window.brisvoxConsole.detailGone !== "", hangupCall, "the hung-up call to leave the table");
    result.steps.hangup = { ask: hangupAsk, action: hungUp, look: await page.evaluate(look) };
    await page.click("#close-detail");

    // 6a. The past calls (past.js, issue 20): the hung-up call's record,
    // once its node has written it, is listed; opened, its transcript and
    // turns are shown. Only where the page has the view.
    if (await page.evaluate(() => !!document.getElementById("past"))) {
      const until = Date.now() + timeout;
      for (;;) {
        await page.click("#past-go");
        await wait(() => window.brisvoxConsole.past.state !== "loading", null, "the past calls");
        if (await page.evaluate((id) => window.brisvoxConsole.past.records.some((r) => r.call_id === id), hangupCall)) break;
        if (Date.now() > until) throw new Error("the hung-up call's record is not in the past calls within " + timeout + " ms");
        await sleep(250);
      }
      await page.click('#records-body tr[data-record="' + hangupCall + '"] button.link');
      await wait((id) => window.brisvoxConsole.past.selected === id && window.brisvoxConsole.past.record !== null, hangupCall, "the past call's record");
      result.steps.past = await page.evaluate(() => {
        const p = window.brisvoxConsole.past;
        return {
          state: p.state, listed: p.records.map((r) => r.call_id), call: p.record.call_id, endReason: p.record.end_reason,
          transcript: p.transcript, waterfallRows: p.waterfall.length, audio: p.audio,
          shown: document.querySelectorAll("#transcript li").length, audioNote: document.getElementById("record-audio-note").textContent,
        };
      });
      await page.screenshot({ path: shot("console-8-past.png") });
      await page.click("#close-record");
    }

    // 6b. A call that ends while its Restart is being confirmed: the API's
    // error (404) is what the page shows.
    const lateCall = calls.find((id) => id !== restartCall && id !== hangupCall);
    await page.click('#calls-body tr[data-call="' + lateCall + '"] button.link');
    await wait((id) => window.brisvoxConsole.selected === id && !!document.querySelector('#tree button[data-stage="tts"]'), lateCall, "the third call's detail");
    await page.click('#tree button[data-stage="tts"]');
    await wait(() => document.getElementById("confirm").open, null, "the confirmation dialog");
    await step("confirming", { call: lateCall });
    expected.add("404 /operator/calls/" + encodeURIComponent(lateCall) + "/restart");
    expected.add("404 /operator/calls/" + encodeURIComponent(lateCall));
    n = await actionsBefore();
    await page.click("#confirm-ok");
    const late = await nextAction(n, "the late restart");
    result.steps.late = { call: lateCall, action: late, look: await page.evaluate(look) };
    await page.click("#close-detail");

    // 7. Drain the node from the page; the test tries a call; undrain.
    const self = await page.evaluate(() => window.brisvoxConsole.self);
    n = await actionsBefore();
    await page.click('#nodes button[data-node="' + self + '"][data-action="drain"]');
    const drainAsk = await confirm("");
    const drained = await nextAction(n, "the drain");
    await wait((s) => { const li = document.querySelector('#nodes li[data-node="' + s + '"]'); return li && li.dataset.state === "draining"; }, self, "the node shown draining");
    result.steps.drain = { ask: drainAsk, action: drained, look: await page.evaluate(look), audit: await page.evaluate(audit) };
    await page.screenshot({ path: shot("console-6-drained.png") });
    await step("drained", { node: self });
    n = await actionsBefore();
    await page.click('#nodes button[data-node="' + self + '"][data-action="undrain"]');
    const undrainAsk = await confirm("");
    const undrained = await nextAction(n, "the undrain");
    await wait((s) => { const li = document.querySelector('#nodes li[data-node="' + s + '"]'); return li && li.dataset.state === "admitting"; }, self, "the node shown admitting");
    result.steps.undrain = { ask: undrainAsk, action: undrained, look: await page.evaluate(look) };
    await step("undrained", { node: self });

    // 8. A reload keeps the token for this tab, in no address.
    await page.reload({ waitUntil: "load", timeout });
    await wait(() => window.brisvoxConsole.stream === "live", null, "the stream after a reload");
    result.steps.reload = { look: await page.evaluate(look) };

    // 9. The server stops: the page says it is reconnecting.
    stopping = true;
    result.logsBeforeStop = logs.length;
    await step("stopping");
    await wait(() => window.brisvoxConsole.stream === "reconnecting" && window.brisvoxConsole.reconnects >= 1, null, "the page to say it is reconnecting");
    result.steps.reconnecting = { look: await page.evaluate(look) };
    await page.screenshot({ path: shot("console-7-reconnecting.png") });
    result.ok = true;
  } catch (e) {
    result.error = e && e.stack || String(e);
  } finally {
    await browser.close();
    fs.rmSync(profile, { recursive: true, force: true });
  }
  result.logs = logs;
  result.badResponses = badResponses;
  result.requests = requests;
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
})().catch((e) => fail(e && e.stack || String(e)));
