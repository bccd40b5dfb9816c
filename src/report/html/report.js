// ioacct's HTML report: draws every chart from the JSON inlined in
// script#ioacct-data (compare's or bench's --format json document, plus
// "kind"). Embedded in the binary at build time with Chart.js (Debian's
// libjs-chart.js, 3.9); the page needs nothing outside itself.
//
// Conventions: every chart is a <figure> with a numbered caption saying what
// was measured and how; an axis carries one unit chosen from its largest
// value (ns, µs, ms, s; B/s to GiB/s; k and M for counts) so ticks read as
// round numbers; a log axis labels only 1, 2 and 5 times a power of ten.
// Once drawn, each chart is also kept as an image that replaces the canvas
// on paper (report.css, @media print). window.ioacctReady tells a test (and
// a printer) that everything is drawn.
(function () {
  'use strict';
  const data = JSON.parse(document.getElementById('ioacct-data').textContent);
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.devicePixelRatio = Math.max(2, window.devicePixelRatio || 1);
  Chart.defaults.font.family = 'system-ui, sans-serif';
  Chart.defaults.plugins.legend.labels.usePointStyle = true;

  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  const color = (i) => palette[i % palette.length];
  const verdictColor = { faster: '#2ca02c', slower: '#d62728', 'no difference': '#1f77b4', 'not resolved': '#7f7f7f' };

  // ---- Units and ticks ----
  const TIME_NS = [[1, 'ns'], [1e3, 'µs'], [1e6, 'ms'], [1e9, 's']];
  const RATE_B = [[1, 'B/s'], [1024, 'KiB/s'], [1048576, 'MiB/s'], [1073741824, 'GiB/s']];
  const TIME_S = [[1, 's'], [60, 'min'], [3600, 'h']];
  function unitFor(units, max) {
    let u = units[0];
    for (const x of units) if (max >= x[0]) u = x;
    return { div: u[0], name: u[1] };
  }
  const finite = (xs) => xs.filter((x) => x != null && isFinite(x));
  const maxOf = (xs) => Math.max(0, ...finite(xs));
  const trim = (x) => String(+Number(x).toPrecision(4));
  function si(v) {
    const a = Math.abs(v);
    if (a >= 1e9) return trim(v / 1e9) + 'G';
    if (a >= 1e6) return trim(v / 1e6) + 'M';
    if (a >= 1e3) return trim(v / 1e3) + 'k';
    return trim(v);
  }
  function linear(title, extra) {
    return Object.assign({ type: 'linear', beginAtZero: true, title: { display: true, text: title }, ticks: { callback: (v) => trim(v) } }, extra || {});
  }
  function countAxis(title) {
    return linear(title, { ticks: { callback: (v) => si(v) } });
  }
  // Log axes label 1, 2 and 5 times a power of ten, and nothing in between.
  function log(title, suffix) {
    return {
      type: 'logarithmic',
      title: { display: true, text: title },
      afterBuildTicks: (scale) => {
        const keep = scale.ticks.filter((t) => {
          const m = t.value / Math.pow(10, Math.floor(Math.log10(t.value) + 1e-9));
          return [1, 2, 5].some((x) => Math.abs(m - x) < 1e-6);
        });
        if (keep.length >= 2) scale.ticks = keep;
      },
      ticks: { autoSkip: false, callback: (v) => trim(v) + (suffix || '') },
    };
  }
  // The time axis of a series: seconds, minutes or hours from the window's start.
  function timeAxis(maxS) {
    const u = unitFor(TIME_S, maxS / 2);
    return { unit: u, axis: linear('time since the window opened (' + u.name + ')') };
  }

  // ---- Figures ----
  const charts = document.getElementById('charts');
  const made = [];
  function figure(title, caption, config) {
    const fig = document.createElement('figure');
    fig.innerHTML = '<h3></h3><div class="chart"><canvas></canvas><img class="print" alt=""></div><figcaption></figcaption>';
    fig.querySelector('h3').textContent = title;
    fig.querySelector('figcaption').textContent = 'Figure ' + (made.length + 1) + '. ' + caption;
    fig.querySelector('img').alt = title;
    charts.appendChild(fig);
    made.push({ chart: new Chart(fig.querySelector('canvas'), config), img: fig.querySelector('img') });
  }

  // Shades the "no difference" band and marks ratio 1 on a ratio chart.
  const referenceLines = {
    id: 'referenceLines',
    beforeDatasetsDraw(chart, args, opts) {
      if (!opts || opts.one == null) return;
      const x = chart.scales.x, area = chart.chartArea, ctx = chart.ctx;
      ctx.save();
      ctx.fillStyle = 'rgba(31, 119, 180, 0.08)';
      const a = Math.max(area.left, x.getPixelForValue(opts.band[0])), b = Math.min(area.right, x.getPixelForValue(opts.band[1]));
      ctx.fillRect(a, area.top, b - a, area.bottom - area.top);
      ctx.strokeStyle = '#444';
      ctx.setLineDash([5, 4]);
      ctx.beginPath();
      ctx.moveTo(x.getPixelForValue(opts.one), area.top);
      ctx.lineTo(x.getPixelForValue(opts.one), area.bottom);
      ctx.stroke();
      ctx.restore();
    },
  };

  // ---- compare ----
  function comparePage() {
    const ctx = data.context, rule = ctx.verdict_rule || { level: 0.95, margin: 0.05 };
    const level = Math.round(rule.level * 100) + '%';
    const vs = data.variants.filter((v) => v.iops);
    const base = ctx.baseline;

    const others = vs.filter((v) => !v.baseline && v.ratio != null);
    if (others.length) {
      const band = [1 / (1 + rule.margin), 1 + rule.margin];
      const values = finite(others.flatMap((v) => [v.ratio, v.ratio_ci && v.ratio_ci.low, v.ratio_ci && v.ratio_ci.high]).concat([1, ...band]));
      const lo = Math.min(...values), hi = Math.max(...values);
      const isLog = hi / lo > 4;
      const xAxis = isLog ? log('IOPS ratio against \'' + base + '\' (log scale)', 'x')
                          : linear('IOPS ratio against \'' + base + '\'', { beginAtZero: false, min: lo - (hi - lo) * 0.1, max: hi + (hi - lo) * 0.1,
                                                                             ticks: { callback: (v) => trim(v) + 'x' } });
      if (isLog) { xAxis.min = lo / 1.25; xAxis.max = hi * 1.25; }
      figure('Verdicts: IOPS ratios with their ' + level + ' intervals',
        'Each variant\'s IOPS against \'' + base + '\': the diamond is the ' + (rule.ratio || 'median of pairwise ratios') +
        ' (every repetition\'s IOPS over every baseline repetition\'s; the Hodges-Lehmann estimate, the table\'s ' +
        '"pairwise ratio", not the ratio of the median IOPS), the bar its distribution-free ' + level + ' interval (exact ' +
        'Mann-Whitney); a variant without a bar had too few repetitions for one. Green: faster (interval above 1); red: ' +
        'slower; blue: no difference (interval inside the shaded ±' + trim(rule.margin * 100) + '% band); grey: not resolved.', {
        type: 'bar',
        data: {
          labels: others.map((v) => v.name),
          datasets: [
            { label: level + ' interval', data: others.map((v) => (v.ratio_ci ? [v.ratio_ci.low, v.ratio_ci.high] : null)),
              backgroundColor: others.map((v) => (verdictColor[v.verdict] || '#7f7f7f') + '88'),
              borderColor: others.map((v) => verdictColor[v.verdict] || '#7f7f7f'), borderWidth: 1, barPercentage: 0.45 },
            { type: 'line', label: rule.ratio || 'median of pairwise ratios', data: others.map((v) => v.ratio), showLine: false, pointStyle: 'rectRot',
              pointRadius: 7, backgroundColor: '#222', borderColor: '#222' },
          ],
        },
        options: { indexAxis: 'y', scales: { x: xAxis }, plugins: { referenceLines: { one: 1, band: band } } },
        plugins: [referenceLines],
      });
    }

    const names = vs.map((v) => v.name);
    const points = [], outliers = [];
    vs.forEach((v) => v.runs.forEach((r) => (r.outlier ? outliers : points).push({ x: v.name, y: r.iops })));
    figure('IOPS, every repetition',
      'Bars: the median IOPS of each variant\'s measured repetitions (warm-ups excluded); dots: each repetition, counted at ' +
      'completion over its measured window; red crosses: outliers (further from the median than 3 scaled MADs and 1%).', {
      type: 'bar',
      data: {
        labels: names,
        datasets: [
          { label: 'median', data: vs.map((v) => v.iops.median), backgroundColor: vs.map((v, i) => color(i) + '66'), order: 2 },
          { type: 'line', label: 'repetition', data: points, showLine: false, pointRadius: 4, backgroundColor: '#222', borderColor: '#222', order: 1 },
          { type: 'line', label: 'outlier', data: outliers, showLine: false, pointRadius: 7, pointStyle: 'crossRot', borderWidth: 2,
            borderColor: '#d62728', backgroundColor: '#d62728', order: 0 },
        ].filter((d) => d.data.length),
      },
      options: { scales: { y: countAxis('I/Os per second') } },
    });

    const withLat = vs.filter((v) => v.latency_percentiles_ns && v.latency_percentiles_ns.length);
    if (withLat.length) {
      const u = unitFor(TIME_NS, maxOf(withLat.flatMap((v) => v.latency_percentiles_ns.map((p) => p.ns))) / 2);
      figure('Latency percentiles',
        'Submission to reaping, every I/O of every measured repetition merged into one histogram per variant ' +
        '(log-linear, within 1%); log scale.', {
        type: 'line',
        data: {
          labels: withLat[0].latency_percentiles_ns.map((p) => 'p' + trim(p.q * 100)),
          datasets: withLat.map((v) => ({ label: v.name, data: v.latency_percentiles_ns.map((p) => p.ns / u.div),
            borderColor: color(vs.indexOf(v)), backgroundColor: color(vs.indexOf(v)), tension: 0.2 })),
        },
        options: { scales: { y: log('latency (' + u.name + ')'), x: { title: { display: true, text: 'percentile' } } } },
      });
    }

    const withCpu = vs.filter((v) => v.cpu_per_io_ns);
    if (withCpu.length) {
      const u = unitFor(TIME_NS, maxOf(withCpu.map((v) => v.cpu_per_io_ns.median)) / 2);
      const part = (key) => withCpu.map((v) => (v.cpu_split_ns[key] ? v.cpu_split_ns[key].median / u.div : 0));
      figure('CPU per I/O',
        'Every thread of ioacct per completed I/O, from schedstat over each measured window (medians of the repetitions): ' +
        'submitter threads, SQPOLL threads, io-wq workers and the rest (the main thread).', {
        type: 'bar',
        data: {
          labels: withCpu.map((v) => v.name),
          datasets: [
            { label: 'submitters', data: part('submitters'), backgroundColor: color(0) },
            { label: 'SQ thread', data: part('sq_threads'), backgroundColor: color(1) },
            { label: 'io-wq workers', data: part('io_wq'), backgroundColor: color(2) },
            { label: 'other', data: part('other'), backgroundColor: color(7) },
          ],
        },
        options: { scales: { x: { stacked: true }, y: linear('CPU per I/O (' + u.name + ')', { stacked: true }) } },
      });
    }

    // --anatomy: one stacked bar per variant; psync's and io_uring's stages
    // bound the same points and share a colour (matched by position).
    const withAnat = vs.filter((v) => v.anatomy && v.anatomy.stages);
    if (withAnat.length) {
      const order = ['submit', 'issue', 'queue', 'device', 'completion', 'in kernel', 'reaping'];
      const alias = { 'syscall entry': 'submit', 'return': 'reaping' };
      const key = (s) => alias[s] || s;
      const present = order.filter((k) => withAnat.some((v) => v.anatomy.stages.some((s) => key(s.stage) === k)));
      const label = (k) => {
        const names = [...new Set(withAnat.flatMap((v) => v.anatomy.stages.filter((s) => key(s.stage) === k).map((s) => s.stage)))];
        return names.join(' / ');
      };
      const total = (v) => v.anatomy.stages.reduce((a, s) => a + (s.per_io_ns ? s.per_io_ns.median : 0), 0);
      const u = unitFor(TIME_NS, maxOf(withAnat.map(total)) / 2);
      figure('Where the time goes (--anatomy)',
        'Each stage\'s time per I/O (median of the repetitions) between the kernel\'s tracepoints (eBPF); a bar adds ' +
        'up to the end-to-end mean.', {
        type: 'bar',
        data: {
          labels: withAnat.map((v) => v.name),
          datasets: present.map((k, i) => ({
            label: label(k),
            data: withAnat.map((v) => {
              const s = v.anatomy.stages.find((x) => key(x.stage) === k);
              return s && s.per_io_ns ? s.per_io_ns.median / u.div : 0;
            }),
            backgroundColor: color(i),
          })),
        },
        options: { indexAxis: 'y', scales: { x: linear('time per I/O (' + u.name + ')', { stacked: true }), y: { stacked: true } } },
      });
    }

    const paced = vs.filter((v) => v.rate_iops != null && (v.util_pct || v.busy_pct));
    if (paced.length) {
      const group = (v) => v.description.replace(/, paced at .*$/, '');
      const groups = [...new Set(paced.map(group))];
      const sets = [];
      groups.forEach((g, gi) => {
        const of = paced.filter((v) => group(v) === g);
        sets.push({ label: '%util: ' + g, data: of.filter((v) => v.util_pct).map((v) => ({ x: v.rate_iops, y: v.util_pct.median })),
                    borderColor: color(2 * gi), backgroundColor: color(2 * gi), showLine: true, borderDash: [6, 4] });
        sets.push({ label: 'busy%: ' + g, data: of.filter((v) => v.busy_pct).map((v) => ({ x: v.rate_iops, y: v.busy_pct.median })),
                    borderColor: color(2 * gi + 1), backgroundColor: color(2 * gi + 1), showLine: true });
      });
      figure('%util against the exact busy time',
        'Per pacing rate (medians of the repetitions). Dashed: the kernel\'s %util (io_ticks, sampled once a jiffy); solid: ' +
        'busy%, ' + ctx.busy_source + '. Both count every I/O on the device.', {
        type: 'scatter',
        data: { datasets: sets.filter((d) => d.data.length) },
        options: { scales: { x: countAxis('paced IOPS'), y: linear('% of the window', { max: 100 }) } },
      });
    }
  }

  // ---- bench ----
  function benchPage() {
    const res = data.results;
    if (!res) return;
    const lat = res.latency_ns;
    const latencyOnly = benchPage.latencyOnly;
    if (lat) {
      const keys = [['min', 'min'], ['p50', 'p50'], ['p90', 'p90'], ['p99', 'p99'], ['p99.9', 'p99.9'], ['p99.99', 'p99.99'], ['max', 'max']];
      const u = unitFor(TIME_NS, lat.max / 2);
      figure('Latency percentiles',
        'Submission to reaping of every I/O completed in the measured window (' + lat.count + ' I/Os), from the log-linear ' +
        'histogram (within 1%); min and max are exact; log scale.', {
        type: 'line',
        data: { labels: keys.map((k) => k[1]), datasets: [{ label: 'latency', data: keys.map((k) => lat[k[0]] / u.div),
          borderColor: color(0), backgroundColor: color(0), tension: 0.2 }] },
        options: { plugins: { legend: { display: false } }, scales: { y: log('latency (' + u.name + ')'), x: { title: { display: true, text: 'percentile' } } } },
      });
    }
    const samples = res.series && res.series.samples && res.series.samples.length ? res.series.samples : null;
    if (!samples || latencyOnly) return;
    const every = res.series.interval_s * (res.series.keep_every || 1);
    const per = 'One point per ' + trim(every) + ' s interval of the measured window, at its end, over the interval as measured';
    const t = timeAxis(Math.max(res.window_s || 0, ...samples.map((s) => s.t_s)));
    const xy = (get, div) => samples.map((s) => ({ x: s.t_s / t.unit.div, y: get(s) == null ? null : get(s) / (div || 1) }));
    const line = (label, get, c, div, extra) => Object.assign({ label: label, data: xy(get, div), borderColor: color(c), backgroundColor: color(c),
      pointRadius: samples.length > 60 ? 0 : 2, spanGaps: false }, extra || {});
    const some = (sets) => sets.filter((d) => d.data.some((p) => p.y != null));

    figure('IOPS over time', per + ': I/Os completed in the interval divided by its length.', {
      type: 'line', data: { datasets: [line('IOPS', (s) => s.iops, 0)] },
      options: { plugins: { legend: { display: false } }, scales: { x: t.axis, y: countAxis('I/Os per second') } },
    });
    if (samples.some((s) => s.bytes_per_s != null)) {
      const u = unitFor(RATE_B, maxOf(samples.map((s) => s.bytes_per_s)) / 2);
      figure('Bandwidth over time', per + ': bytes moved by the I/Os completed in it (GiB = 2^30 bytes).', {
        type: 'line', data: { datasets: [line('bandwidth', (s) => s.bytes_per_s, 2, u.div)] },
        options: { plugins: { legend: { display: false } }, scales: { x: t.axis, y: linear('bandwidth (' + u.name + ')') } },
      });
    }
    if (samples.some((s) => s.p50_ns != null)) {
      const u = unitFor(TIME_NS, maxOf(samples.map((s) => s.p99_ns)) / 2);
      figure('Latency over time', per + ': p50 and p99 of the I/Os completed in it, submission to reaping; log scale; ' +
        'a gap is an interval in which nothing completed.', {
        type: 'line',
        data: { datasets: [line('p50', (s) => s.p50_ns, 0, u.div), line('p99', (s) => s.p99_ns, 3, u.div)] },
        options: { scales: { x: t.axis, y: log('latency (' + u.name + ')') } },
      });
    }
    if (samples.some((s) => s.cpu_pct != null)) {
      figure('CPU over time', per + ': CPU used by the whole process (getrusage) and by its SQ threads (fdinfo ' +
        'SqTotalTime), in % of one core.', {
        type: 'line',
        data: { datasets: some([line('process', (s) => s.cpu_pct, 4), line('SQ threads', (s) => s.sq_cpu_pct, 5)]) },
        options: { scales: { x: t.axis, y: linear('% of one core') } },
      });
    }
    const dev = (data.context.targets || []).map((x) => x.device).find((d) => d) || 'the device';
    figure('Device busy over time', per + '. busy%: the exact time ' + dev + ' had a request in flight (eBPF, every I/O ' +
      'on it); %util: the kernel\'s io_ticks for it, sampled once a jiffy; in flight (own I/O): the time this run\'s own ' +
      'I/Os were in flight (the union of their submission-to-reaping intervals).', {
      type: 'line',
      data: { datasets: some([
        line('busy% (device, exact)', (s) => s.device_busy_pct, 1),
        line('%util (device, io_ticks)', (s) => s.util_pct, 2, 1, { borderDash: [6, 4] }),
        line('in flight (own I/O)', (s) => (s.own_inflight_pct != null ? s.own_inflight_pct : s.busy_pct), 0),
      ]) },
      options: { scales: { x: t.axis, y: linear('% of the interval', { max: 100 }) } },
    });
  }

  // ---- merge ----
  // Each host's series and their total on one clock: seconds from the
  // earliest window's opening (the hosts' samples carry wall-clock ends).
  function mergePage() {
    benchPage.latencyOnly = true;
    benchPage();
    const m = data.merge, res = data.results;
    if (!m || !res.series || !res.series.samples.length) return;
    const t0 = m.union_start_unix_ns;
    const hosts = m.hosts.filter((h) => h.series && h.series.length);
    const maxS = (m.union_end_unix_ns - t0) / 1e9;
    const t = timeAxis(maxS);
    const per = 'One point per ' + trim(res.series.interval_s) + ' s interval, at its end on the wall clock, from the ' +
      'earliest window\'s opening; the total adds the hosts\' points that end in the same interval, where every host has one';
    const pts = (list, get, div) => list.map((s) => ({ x: (s.end_unix_ns - t0) / 1e9 / t.unit.div, y: get(s) == null ? null : get(s) / (div || 1) }));
    const sets = (get, div) => hosts.map((h, i) => ({ label: h.name, data: pts(h.series, get, div), borderColor: color(i + 1),
      backgroundColor: color(i + 1), pointRadius: 0, borderWidth: 2 }))
      .concat([{ label: 'total', data: pts(res.series.samples.filter((s) => s.hosts === hosts.length), get, div), borderColor: color(0), backgroundColor: color(0),
        pointRadius: 2, borderWidth: 3 }]);
    figure('IOPS over time, per host and total', per + '.', {
      type: 'line', data: { datasets: sets((s) => s.iops) },
      options: { plugins: { legend: { display: hosts.length <= 20 } }, scales: { x: t.axis, y: countAxis('I/Os per second') } },
    });
    if (res.series.samples.some((s) => s.bytes_per_s != null)) {
      const u = unitFor(RATE_B, maxOf(res.series.samples.map((s) => s.bytes_per_s)) / 2);
      figure('Bandwidth over time, per host and total', per + ' (GiB = 2^30 bytes).', {
        type: 'line', data: { datasets: sets((s) => s.bytes_per_s, u.div) },
        options: { plugins: { legend: { display: hosts.length <= 20 } }, scales: { x: t.axis, y: linear('bandwidth (' + u.name + ')') } },
      });
    }
  }

  if (data.kind === 'bench') benchPage();
  else if (data.kind === 'merge') mergePage();
  else comparePage();
  for (const m of made) m.img.src = m.chart.toBase64Image();
  window.ioacctCharts = made.length;
  window.ioacctReady = true;
})();
