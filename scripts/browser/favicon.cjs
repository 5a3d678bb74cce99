// favicon.cjs makes the call page's favicon.ico from its favicon.svg:
// Debian's chromium draws the SVG at 16, 32 and 48 pixels, and the three
// PNGs go into one ICO file (served at /favicon.ico, where browsers look
// when a page names no icon). Run it after changing the SVG:
//
//   NODE_PATH=.native/browser/node_modules node scripts/browser/favicon.cjs \
//     cmd/internal/serve/page/favicon.svg cmd/internal/serve/page/favicon.ico
"use strict";

const puppeteer = require("puppeteer-core");
const fs = require("fs");
(async () => {
  const b = await puppeteer.launch({ executablePath: "/usr/bin/chromium", headless: true, args: ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"] });
  const p = await b.newPage();
  const svg = fs.readFileSync(process.argv[2], "utf8");
  const pngs = [];
  for (const n of [16, 32, 48]) {
    await p.setViewport({ width: n, height: n, deviceScaleFactor: 1 });
    await p.setContent(`<html><body style="margin:0;background:transparent">${svg.replace(/width="32" height="32"/, `width="${n}" height="${n}"`)}</body></html>`);
    pngs.push([n, await p.screenshot({ omitBackground: true, clip: { x: 0, y: 0, width: n, height: n } })]);
  }
  await b.close();
  const head = Buffer.alloc(6 + 16 * pngs.length);
  head.writeUInt16LE(0, 0); head.writeUInt16LE(1, 2); head.writeUInt16LE(pngs.length, 4);
  let off = head.length;
  pngs.forEach(([n, png], i) => {
    const e = 6 + 16 * i;
    head.writeUInt8(n, e); head.writeUInt8(n, e + 1); head.writeUInt8(0, e + 2); head.writeUInt8(0, e + 3);
    head.writeUInt16LE(1, e + 4); head.writeUInt16LE(32, e + 6);
    head.writeUInt32LE(png.length, e + 8); head.writeUInt32LE(off, e + 12);
    off += png.length;
  });
  fs.writeFileSync(process.argv[3], Buffer.concat([head, ...pngs.map((x) => Buffer.from(x[1]))]));
})().catch((e) => { console.error(e); process.exit(1); });
