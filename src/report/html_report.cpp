#include "report/html_report.hpp"

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/compare_report.hpp"

namespace ioacct {
namespace {

std::string escape_html(const std::string& s) {
  std::string out;
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += ch;
    }
  }
  return out;
}

// JSON inside <script>: "</" must not end the element early.
std::string script_safe(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    out += s[i];
    if (s[i] == '<' && i + 1 < s.size() && s[i + 1] == '/') out += "\\";
  }
  return out;
}

constexpr const char* kStyle = R"css(
body { font: 14px/1.4 system-ui, sans-serif; margin: 24px; color: #222; max-width: 1200px; }
h1 { font-size: 22px; margin: 0 0 8px; } h2 { font-size: 17px; margin: 28px 0 8px; }
table { border-collapse: collapse; font-variant-numeric: tabular-nums; }
td, th { padding: 3px 10px; border-bottom: 1px solid #ddd; text-align: right; white-space: nowrap; }
td:first-child, th:first-child, td.text { text-align: left; }
table.context td { text-align: left; white-space: normal; }
pre { background: #f5f5f5; padding: 8px; white-space: pre-wrap; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 24px; }
.chart { position: relative; height: 340px; }
.note { color: #555; font-size: 13px; }
)css";

// Builds every chart from the inlined data; sets window.ioacctReady when done
// (the headless-browser test waits for it).
constexpr const char* kScript = R"js(
(function () {
  const data = JSON.parse(document.getElementById('ioacct-data').textContent);
  Chart.defaults.animation = false;
  Chart.defaults.maintainAspectRatio = false;
  Chart.defaults.plugins.legend.labels.usePointStyle = true;
  const some = (sets) => sets.filter((d) => d.data.some((x) => x != null && (x.y === undefined || x.y != null)));
  const palette = ['#1f77b4', '#ff7f0e', '#2ca02c', '#d62728', '#9467bd', '#8c564b', '#e377c2', '#7f7f7f', '#bcbd22', '#17becf'];
  const color = (i) => palette[i % palette.length];
  const us = (ns) => ns == null ? null : ns / 1000;
  const charts = document.getElementById('charts');
  function add(title, note, config) {
    const div = document.createElement('div');
    div.innerHTML = '<h2></h2><div class="chart"><canvas></canvas></div><p class="note"></p>';
    div.querySelector('h2').textContent = title;
    div.querySelector('.note').textContent = note;
    charts.appendChild(div);
    new Chart(div.querySelector('canvas'), config);
  }
  const vs = data.variants.filter((v) => v.iops);
  const names = vs.map((v) => v.name);

  add('IOPS per variant', 'Bars: median of the measured repetitions; whiskers: min to max.', {
    type: 'bar',
    data: { labels: names, datasets: [
      { label: 'median IOPS', data: vs.map((v) => v.iops.median), backgroundColor: vs.map((v, i) => color(i) + '99'), order: 2 },
      { label: 'min-max', data: vs.map((v) => [v.iops.min, v.iops.max]), backgroundColor: '#222', barPercentage: 0.06,
        grouped: false, order: 1 } ] },
    options: { scales: { y: { beginAtZero: true, title: { display: true, text: 'I/Os per second' } } } }
  });

  const withLat = data.variants.filter((v) => v.latency_percentiles_ns.length);
  if (withLat.length) {
    const qs = withLat[0].latency_percentiles_ns.map((p) => 'p' + +(p.q * 100).toPrecision(6));
    add('Latency percentiles', 'Submission to reaping, every measured repetition merged; log scale.', {
      type: 'line',
      data: { labels: qs, datasets: withLat.map((v, i) => ({ label: v.name, data: v.latency_percentiles_ns.map((p) => us(p.ns)),
        borderColor: color(data.variants.indexOf(v)), backgroundColor: color(data.variants.indexOf(v)), tension: 0.2 })) },
      options: { scales: { y: { type: 'logarithmic', title: { display: true, text: 'latency (µs)' } },
                           x: { title: { display: true, text: 'percentile' } } } }
    });
  }

  const withCpu = vs.filter((v) => v.cpu_per_io_ns);
  if (withCpu.length) {
    const part = (key) => withCpu.map((v) => v.cpu_split_ns[key] ? us(v.cpu_split_ns[key].median) : 0);
    add('CPU per I/O', 'Every thread of ioacct from schedstat, per I/O (medians of the repetitions): submitter threads, ' +
        'SQPOLL threads, io-wq workers and the rest (the main thread).', {
      type: 'bar',
      data: { labels: withCpu.map((v) => v.name), datasets: [
        { label: 'submitters', data: part('submitters'), backgroundColor: color(0) },
        { label: 'SQ thread', data: part('sq_threads'), backgroundColor: color(1) },
        { label: 'io-wq workers', data: part('io_wq'), backgroundColor: color(2) },
        { label: 'other', data: part('other'), backgroundColor: color(7) } ] },
      options: { scales: { x: { stacked: true }, y: { stacked: true, beginAtZero: true, title: { display: true, text: 'CPU µs per I/O' } } } }
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
    add('Where the time goes (--anatomy)', 'Each stage\'s time per I/O (median of the repetitions) between the ' +
        'kernel\'s tracepoints; a bar adds up to the end-to-end mean.', {
      type: 'bar',
      data: { labels: withAnat.map((v) => v.name), datasets: present.map((k, i) => ({ label: label(k),
        data: withAnat.map((v) => { const s = v.anatomy.stages.find((x) => key(x.stage) === k); return s ? us(s.per_io_ns.median) : 0; }),
        backgroundColor: color(i) })) },
      options: { indexAxis: 'y', scales: { x: { stacked: true, beginAtZero: true, title: { display: true, text: 'µs per I/O' } },
                                           y: { stacked: true } } }
    });
  }

  const paced = vs.filter((v) => v.rate_iops != null && (v.util_pct || v.busy_pct));
  if (paced.length) {
    const groups = [...new Set(paced.map((v) => v.description.replace(/, paced at .*$/, '')))];
    const sets = [];
    groups.forEach((g, gi) => {
      const of = paced.filter((v) => v.description.replace(/, paced at .*$/, '') === g);
      sets.push({ label: '%util: ' + g, data: of.filter((v) => v.util_pct).map((v) => ({ x: v.rate_iops, y: v.util_pct.median })),
                  borderColor: color(2 * gi), backgroundColor: color(2 * gi), showLine: true, borderDash: [6, 4] });
      sets.push({ label: 'busy%: ' + g, data: of.filter((v) => v.busy_pct).map((v) => ({ x: v.rate_iops, y: v.busy_pct.median })),
                  borderColor: color(2 * gi + 1), backgroundColor: color(2 * gi + 1), showLine: true });
    });
    add('%util vs busy% per pacing rate', 'Dashed: the kernel\'s %util (io_ticks, every I/O on the device); solid: ' +
        data.context.busy_source + '.', {
      type: 'scatter', data: { datasets: some(sets) },
      options: { scales: { x: { type: 'linear', beginAtZero: true, title: { display: true, text: 'paced IOPS' } },
                           y: { beginAtZero: true, title: { display: true, text: '% of the window' } } } }
    });
  }

  const series = data.series && data.series.samples && data.series.samples.length ? data.series.samples : null;
  if (series) {
    const t = series.map((s) => s.t_s.toFixed(2));
    add('Time series: IOPS', 'One point per --log-interval, over the interval as measured.', {
      type: 'line', data: { labels: t, datasets: [{ label: 'IOPS', data: series.map((s) => s.iops), borderColor: color(0) }] },
      options: { scales: { y: { beginAtZero: true }, x: { title: { display: true, text: 's' } } } }
    });
    if (series.some((s) => s.p50_ns != null))
      add('Time series: latency', 'p50 and p99 per interval; log scale.', {
        type: 'line', data: { labels: t, datasets: [
          { label: 'p50', data: series.map((s) => us(s.p50_ns)), borderColor: color(0) },
          { label: 'p99', data: series.map((s) => us(s.p99_ns)), borderColor: color(3) } ] },
        options: { scales: { y: { type: 'logarithmic', title: { display: true, text: 'µs' } }, x: { title: { display: true, text: 's' } } } }
      });
    add('Time series: busy, %util and CPU', 'busy%: exact in-flight time; %util: the kernel\'s io_ticks; CPU: % of one core.', {
      type: 'line', data: { labels: t, datasets: some([
        { label: 'busy%', data: series.map((s) => s.busy_pct), borderColor: color(1) },
        { label: '%util', data: series.map((s) => s.util_pct), borderColor: color(2), borderDash: [6, 4] },
        { label: 'CPU %', data: series.map((s) => s.cpu_pct), borderColor: color(4) },
        { label: 'SQ thread CPU %', data: series.map((s) => s.sq_cpu_pct), borderColor: color(5) } ]) },
      options: { spanGaps: false, scales: { y: { beginAtZero: true }, x: { title: { display: true, text: 's' } } } }
    });
  }
  window.ioacctReady = true;
})();
)js";

}  // namespace

namespace {

// compare --anatomy's stage table and verdicts, above the notes (without the
// blank line that parts them from the table in the console).
std::string anatomy_notes(const CompareResult& c) {
  std::string a = format_compare_anatomy(c);
  if (!a.empty() && a.front() == '\n') a.erase(0, 1);
  return a.empty() ? a : a + "\n";
}

}  // namespace

std::string html_report(const CompareResult& c, const nlohmann::json& data) {
  const auto& ctx = data.at("context");
  std::string cmd;
  for (const auto& w : ctx.value("command_line", std::vector<std::string>{})) cmd += (cmd.empty() ? "" : " ") + w;
  auto row = [](const std::string& k, const std::string& v) {
    return fmt::format("<tr><th>{}</th><td>{}</td></tr>\n", escape_html(k), escape_html(v));
  };
  std::string targets;
  for (const auto& t : c.targets) targets += (targets.empty() ? "" : "; ") + t.path + (t.device.empty() ? "" : " [" + t.device + "]");
  std::string context = row("command", cmd) + row("ioacct", ctx.value("ioacct_version", "")) +
                        row("host", ctx.value("host", "")) + row("kernel", ctx.value("kernel", "")) +
                        row("CPU", fmt::format("{} ({} CPUs, {} allowed)", ctx.value("cpu_model", ""), ctx.value("cpus", 0),
                                               ctx.value("cpus_allowed", 0))) +
                        row("targets", targets) +
                        row("runs", data.value("kind", "") == "bench"
                                        ? fmt::format("one run, {:.2f} s measured", c.wall_s)
                                        : fmt::format("{} variants x {} repetitions, interleaved{}; {:.1f} s in all", c.variants.size(),
                                                      c.repeat, c.warmup ? fmt::format(", after {} warm-up round{}", c.warmup, c.warmup == 1 ? "" : "s") : "",
                                                      c.wall_s));
  std::string table = "<table>\n<tr>";
  const auto cells = compare_table(c);
  for (const auto& h : cells.front()) table += "<th>" + escape_html(h) + "</th>";
  table += "</tr>\n";
  for (size_t i = 1; i < cells.size(); ++i) {
    table += "<tr>";
    for (size_t j = 0; j < cells[i].size(); ++j)
      table += fmt::format("<td{}>{}</td>", j == 0 || j == 4 ? " class=\"text\"" : "", escape_html(cells[i][j]));
    table += "</tr>\n";
  }
  table += "</table>\n";
  const std::string kind = data.value("kind", "compare");
  return fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>ioacct {kind}: {title}</title>\n"
      "<style>{style}</style>\n</head>\n<body>\n<h1>ioacct {kind}</h1>\n{explanation}"
      "<table class=\"context\">\n{context}</table>\n<h2>Results</h2>\n{table}<pre class=\"note\">{notes}</pre>\n"
      "<div id=\"charts\" class=\"charts\"></div>\n"
      "<p class=\"note\">Charts by Chart.js {chartjs_version} (MIT licence), embedded.</p>\n"
      "<script type=\"application/json\" id=\"ioacct-data\">{data}</script>\n"
      "<script>{chartjs}</script>\n<script>{script}</script>\n</body>\n</html>\n",
      fmt::arg("kind", kind), fmt::arg("title", escape_html(c.preset.empty() ? cmd : "--preset " + c.preset)),
      fmt::arg("style", kStyle),
      fmt::arg("explanation", c.explanation.empty() ? "" : "<pre>" + escape_html(c.explanation) + "</pre>\n"),
      fmt::arg("context", context), fmt::arg("table", table), fmt::arg("notes", escape_html(anatomy_notes(c) + compare_notes(c))),
      fmt::arg("chartjs_version", kChartJsVersion), fmt::arg("data", script_safe(data.dump())),
      fmt::arg("chartjs", kChartJs), fmt::arg("script", kScript));
}

std::string html_bench_report(const JobSpec& job, const RunResult& r, const nlohmann::json& bench_json) {
  CompareResult c;
  c.repeat = 1;
  c.argv = bench_json["context"].value("command_line", std::vector<std::string>{});
  c.wall_s = static_cast<double>(r.window_ns) / 1e9;
  c.targets = r.targets;
  VariantSummary v;
  v.name = fmt::format("{} {}", engine_name(job.engine), rw_name(job.rw));
  v.description = fmt::format("{} {} {}, {}, depth {}", rw_name(job.rw), format_size(job.bs), job.direct ? "O_DIRECT" : "buffered",
                              engine_name(job.engine), job.depth_per_thread() * job.threads);
  v.engine_desc = r.engine_desc;
  if (job.rate_per_thread() > 0) v.rate_iops = job.rate_per_thread() * job.threads;
  v.runs.push_back(measure(r));
  c.variants.push_back(std::move(v));
  summarize(c);
  nlohmann::json data = compare_json(c, bench_json["context"]);
  data["kind"] = "bench";
  data["series"] = bench_json.contains("results") && bench_json["results"].is_object() ? bench_json["results"]["series"] : nullptr;
  return html_report(c, data);
}

}  // namespace ioacct
