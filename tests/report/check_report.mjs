// Opens ioacct's HTML reports in Debian's headless Chromium (puppeteer-core,
// no browser download) with the network cut off, and checks that they work:
// no console errors or page errors, no request leaves the file, and every
// chart's canvas has pixels drawn. Screenshots are kept as test artifacts.
//
//   node check_report.mjs IOACCT_BINARY ARTIFACT_DIR
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import puppeteer from 'puppeteer-core';

const [binary, outDir] = process.argv.slice(2);
if (!binary || !outDir) {
  console.error('usage: node check_report.mjs IOACCT_BINARY ARTIFACT_DIR');
  process.exit(2);
}
mkdirSync(outDir, { recursive: true });
const out = resolve(outDir);
const chromium = process.env.CHROMIUM || '/usr/bin/chromium';

function ioacct(args) {
  console.log('$ ioacct ' + args.join(' '));
  execFileSync(binary, args, { stdio: ['ignore', 'ignore', 'inherit'], timeout: 120000 });
}

// Real runs, kept short: the util preset (every compare chart, the %util
// chart included) and one bench run with its time series.
const compareHtml = join(out, 'compare-util.html');
const benchHtml = join(out, 'bench.html');
const anatomyHtml = join(out, 'compare-anatomy.html');
ioacct(['compare', '--preset', 'util', '--repeat', '2', '--runtime', '300ms', '--size', '16m', '--report', compareHtml]);
ioacct(['bench', '--runtime', '1s', '--log-interval', '100ms', '--iodepth', '4', '--size', '16m', '--report', benchHtml]);
// --anatomy's stacked bars (IOPS, latency, CPU and the anatomy chart).
ioacct(['compare', '--engine', 'psync,uring', '--iodepth', '1', '--repeat', '1', '--runtime', '300ms', '--size', '16m',
        '--anatomy', '--report', anatomyHtml]);

const failures = [];
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  for (const [file, charts] of [[compareHtml, 4], [benchHtml, 6], [anatomyHtml, 4]]) {
    const name = file.split('/').pop();
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await page.setOfflineMode(true);
    await page.setRequestInterception(true);
    const url = 'file://' + file;
    page.on('request', (req) => {
      if (req.url() === url) return req.continue();
      failures.push(`${name}: asked for ${req.url()} (a report must need nothing outside itself)`);
      return req.abort();
    });
    page.on('console', (m) => { if (m.type() === 'error') failures.push(`${name}: console error: ${m.text()}`); });
    page.on('pageerror', (e) => failures.push(`${name}: page error: ${e.message}`));
    await page.goto(url, { waitUntil: 'load' });
    try {
      await page.waitForFunction('window.ioacctReady === true', { timeout: 20000 });
    } catch {
      failures.push(`${name}: the charts never finished (window.ioacctReady not set)`);
    }
    // Pixels actually drawn, not just a canvas present.
    const drawn = await page.$$eval('canvas', (cs) => cs.map((c) => {
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
      return { title: c.closest('div').parentElement.querySelector('h2').textContent, n, w: c.width, h: c.height };
    }));
    if (drawn.length !== charts) failures.push(`${name}: ${drawn.length} charts, expected ${charts}`);
    for (const c of drawn) {
      console.log(`${name}: '${c.title}' ${c.w}x${c.h}, ${c.n} pixels drawn`);
      if (c.n < 2000) failures.push(`${name}: chart '${c.title}' is empty (${c.n} pixels drawn)`);
    }
    const text = readFileSync(file, 'utf8');
    if (/<script[^>]+src=|<link[^>]+href=/i.test(text)) failures.push(`${name}: loads a script or style from outside`);
    const shot = file.replace(/\.html$/, '.png');
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`${name}: screenshot ${shot}`);
    await page.close();
  }
} finally {
  await browser.close();
}
if (failures.length) {
  for (const f of failures) console.error('FAIL ' + f);
  process.exit(1);
}
console.log('ok: every report rendered offline, every chart drawn, no errors');
