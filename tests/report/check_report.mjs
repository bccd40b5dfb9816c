// Opens ioacct's HTML reports in Debian's headless Chromium (puppeteer-core,
// no browser download) with the network cut off, and checks that they work:
// no console errors or page errors, no request leaves the file, the header
// names date, kernel and device, every chart has a caption and pixels drawn,
// a screenshot of the page shows ink in every chart's area, and printing the
// page to PDF (chromium --print-to-pdf, rendered back with pdftoppm) keeps
// the charts. Screenshots and PDFs are kept as test artifacts.
//
//   node check_report.mjs IOACCT_BINARY ARTIFACT_DIR
import { execFileSync } from 'node:child_process';
import { mkdirSync, readFileSync, readdirSync } from 'node:fs';
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
  execFileSync(binary, args, { stdio: ['ignore', 'ignore', 'inherit'], timeout: 150000 });
}

// Real runs, kept short: the qd1 preset with enough repetitions for
// intervals (the verdict chart), the util preset (the %util chart), one
// bench run with its time series, and compare --anatomy (its stacked bars).
const pages = [
  { file: join(out, 'compare-qd1.html'), kind: 'compare', charts: 4,
    args: ['compare', '--preset', 'qd1', '--repeat', '4', '--runtime', '150ms', '--size', '16m'] },
  { file: join(out, 'compare-util.html'), kind: 'compare', charts: 5,
    args: ['compare', '--preset', 'util', '--repeat', '2', '--runtime', '300ms', '--size', '16m'] },
  { file: join(out, 'bench.html'), kind: 'bench', charts: 6,
    args: ['bench', '--runtime', '2s', '--log-interval', '200ms', '--iodepth', '4', '--size', '16m'] },
  { file: join(out, 'compare-anatomy.html'), kind: 'compare', charts: 5,
    args: ['compare', '--preset', 'qd1', '--anatomy', '--repeat', '2', '--runtime', '150ms', '--size', '16m'] },
  // ioacct merge of two hosts' runs, made at once with one --start-at:
  // per-host and total series.
  { file: join(out, 'merge.html'), kind: 'merge', charts: 3,
    args: ['merge', join(out, 'merge-a.json'), join(out, 'merge-b.json')] },
];
{
  const bench = (h) => `'${binary}' bench --runtime 1s --log-interval 200ms --iodepth 4 --size 16m --tag host=${h} ` +
    `--start-at "$T" --format json -o '${join(out, `merge-${h}.json`)}'`;
  console.log('$ ioacct bench ... --start-at T (two at once)');
  execFileSync('sh', ['-c', `T=@$(( $(date +%s) + 3 )); ${bench('a')} & ${bench('b')} & wait`],
               { stdio: ['ignore', 'ignore', 'inherit'], timeout: 150000 });
}
for (const p of pages) ioacct([...p.args, '--report', p.file]);

// P6 PPM (pdftoppm's own output): width, height, RGB bytes.
function readPpm(path) {
  const b = readFileSync(path);
  const fields = [];
  let i = 0;
  while (fields.length < 4) {
    while (/\s/.test(String.fromCharCode(b[i]))) i++;
    let s = '';
    while (!/\s/.test(String.fromCharCode(b[i]))) s += String.fromCharCode(b[i++]);
    fields.push(s);
  }
  if (fields[0] !== 'P6' || fields[3] !== '255') throw new Error(`${path}: not an 8-bit P6 PPM`);
  return { w: +fields[1], h: +fields[2], rgb: b.subarray(i + 1) };
}
// Chart ink: saturated colour (the palette), which text, rules and the page's
// greys never are.
const colourful = (r, g, b) => Math.max(r, g, b) - Math.min(r, g, b) > 60;

const failures = [];
const fail = (m) => failures.push(m);
const browser = await puppeteer.launch({
  executablePath: chromium,
  headless: true,
  args: ['--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage'],
});
try {
  for (const p of pages) {
    const name = p.file.split('/').pop();
    const page = await browser.newPage();
    await page.setViewport({ width: 1280, height: 900 });
    await page.setOfflineMode(true);
    await page.setRequestInterception(true);
    const url = 'file://' + p.file;
    page.on('request', (req) => {
      if (req.url() === url || req.url().startsWith('data:')) return req.continue();
      fail(`${name}: asked for ${req.url()} (a report must need nothing outside itself)`);
      return req.abort();
    });
    page.on('console', (m) => { if (m.type() === 'error') fail(`${name}: console error: ${m.text()}`); });
    page.on('pageerror', (e) => fail(`${name}: page error: ${e.message}`));
    await page.goto(url, { waitUntil: 'load' });
    try {
      await page.waitForFunction('window.ioacctReady === true', { timeout: 20000 });
    } catch {
      fail(`${name}: the charts never finished (window.ioacctReady not set)`);
    }

    // The header: when, where, on what.
    const header = await page.$eval('table.context', (t) => Object.fromEntries([...t.rows].map((r) => [r.cells[0].textContent, r.cells[1].textContent])));
    for (const key of ['date', 'host', 'kernel', 'device', 'CPU', 'ioacct', 'command'])
      if (!header[key]) fail(`${name}: the header has no ${key}`);
    if (!/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(header.date || '')) fail(`${name}: date '${header.date}' is not RFC 3339`);
    if (!/^Linux /.test(header.kernel || '')) fail(`${name}: kernel '${header.kernel}'`);
    if (!/firmware/.test(header.device || '')) fail(`${name}: device '${header.device}' says nothing of firmware`);

    if (p.kind === 'compare') {
      const q = await page.$eval('.question', (e) => e.textContent).catch(() => '');
      const h = await page.$eval('.headline', (e) => e.textContent).catch(() => '');
      if (!q.endsWith('?')) fail(`${name}: no question at the top ('${q}')`);
      if (h.length < 40) fail(`${name}: no headline answer at the top ('${h}')`);
      console.log(`${name}: ${q} => ${h}`);
      const heads = await page.$$eval('table.results th', (ths) => ths.map((t) => t.textContent));
      for (const c of ['pairwise ratio', '95% CI', 'verdict']) if (!heads.includes(c)) fail(`${name}: the table has no '${c}' column`);
    } else if (p.kind === 'merge') {
      const text = await page.$eval('main', (m) => m.textContent);
      for (const s of ['Hosts', 'total (2 hosts)', 'Latency percentiles, all hosts'])
        if (!text.includes(s)) fail(`${name}: no '${s}'`);
    } else {
      const tiles = await page.$$eval('.tile .name', (t) => t.map((x) => x.textContent));
      for (const t of ['IOPS', 'bandwidth', 'p50 latency', 'p99 latency', 'CPU per I/O', 'in flight (own I/O)'])
        if (!tiles.includes(t)) fail(`${name}: no '${t}' headline figure (have ${tiles.join(', ')})`);
      const text = await page.$eval('main', (m) => m.textContent);
      for (const s of ['Latency percentiles', 'Devices', 'r_await'])
        if (!text.includes(s)) fail(`${name}: no '${s}'`);
    }

    // Every chart: a caption, pixels on its canvas, an image for print.
    const figs = await page.$$eval('figure', (fs) => fs.map((f) => {
      const c = f.querySelector('canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      let n = 0;
      for (let i = 3; i < d.length; i += 4) if (d[i] !== 0) n++;
      const r = f.querySelector('.chart').getBoundingClientRect();
      return { title: f.querySelector('h3').textContent, caption: f.querySelector('figcaption').textContent, n,
               img: f.querySelector('img.print').src.startsWith('data:image/png;base64,'),
               rect: { x: r.left + window.scrollX, y: r.top + window.scrollY, w: r.width, h: r.height } };
    }));
    if (figs.length !== p.charts) fail(`${name}: ${figs.length} charts, expected ${p.charts}`);
    for (const f of figs) {
      if (!/^Figure \d+\. .{40,}/.test(f.caption)) fail(`${name}: chart '${f.title}' has no caption worth the name: '${f.caption}'`);
      if (f.n < 2000) fail(`${name}: chart '${f.title}' is empty (${f.n} pixels drawn)`);
      if (!f.img) fail(`${name}: chart '${f.title}' has no image for print`);
    }

    // What a person sees: the screenshot, decoded by the browser itself,
    // must have ink (anything not white) over a fair part of each chart area.
    const shot = p.file.replace(/\.html$/, '.png');
    const png = await page.screenshot({ path: shot, fullPage: true, encoding: 'base64' });
    console.log(`${name}: screenshot ${shot}`);
    const view = await browser.newPage();
    await view.setContent('<img id="s">');
    const inked = await view.evaluate(async (b64, rects) => {
      const img = document.getElementById('s');
      img.src = 'data:image/png;base64,' + b64;
      await img.decode();
      const c = document.createElement('canvas');
      c.width = img.naturalWidth;
      c.height = img.naturalHeight;
      const ctx = c.getContext('2d');
      ctx.drawImage(img, 0, 0);
      return rects.map((r) => {
        const d = ctx.getImageData(Math.round(r.x), Math.round(r.y), Math.round(r.w), Math.round(r.h)).data;
        let ink = 0;
        for (let i = 0; i < d.length; i += 4) if (d[i] < 235 || d[i + 1] < 235 || d[i + 2] < 235) ink++;
        return ink / (d.length / 4);
      });
    }, png, figs.map((f) => f.rect));
    await view.close();
    figs.forEach((f, i) => {
      console.log(`${name}: '${f.title}': ${f.n} canvas pixels, ${(100 * inked[i]).toFixed(1)}% of its screenshot area inked`);
      if (!(inked[i] > 0.02)) fail(`${name}: chart '${f.title}' looks blank in the screenshot (${(100 * inked[i]).toFixed(2)}% inked)`);
    });
    const text = readFileSync(p.file, 'utf8');
    if (/<script[^>]+src=|<link[^>]+href=/i.test(text)) fail(`${name}: loads a script or style from outside`);
    await page.close();

    // On paper: Chromium's own printing, then the PDF rendered back to pixels.
    const pdf = p.file.replace(/\.html$/, '.pdf');
    execFileSync(chromium, ['--headless', '--no-sandbox', '--disable-gpu', '--no-pdf-header-footer', '--print-to-pdf=' + pdf, url],
                 { stdio: 'ignore', timeout: 60000 });
    const images = execFileSync('pdfimages', ['-list', pdf]).toString().split('\n')
      .filter((l) => l.trim().split(/\s+/)[2] === 'image').length;
    if (images < p.charts) fail(`${name}: the PDF holds ${images} images, expected a chart image for each of ${p.charts}`);
    const prefix = pdf.replace(/\.pdf$/, '-page');
    execFileSync('pdftoppm', ['-r', '100', pdf, prefix]);
    let ink = 0, pagesSeen = 0;
    for (const f of readdirSync(out).filter((x) => x.startsWith(prefix.split('/').pop()) && x.endsWith('.ppm'))) {
      const { w, h, rgb } = readPpm(join(out, f));
      pagesSeen++;
      for (let i = 0; i < w * h * 3; i += 3) if (colourful(rgb[i], rgb[i + 1], rgb[i + 2])) ink++;
    }
    console.log(`${name}: PDF ${pdf}: ${pagesSeen} pages, ${images} images, ${ink} chart-coloured pixels at 100 dpi`);
    if (ink < 2000 * p.charts) fail(`${name}: the printed charts are (nearly) blank: ${ink} coloured pixels for ${p.charts} charts`);
  }
} finally {
  await browser.close();
}
if (failures.length) {
  for (const f of failures) console.error('FAIL ' + f);
  process.exit(1);
}
console.log('ok: every report rendered offline with its header, captions and charts (on screen and in print), no errors');
