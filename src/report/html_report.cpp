#include "report/html_report.hpp"

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/compare_report.hpp"
#include "report/html_page.hpp"
#include "report/merge_report.hpp"
#include "report/report.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

std::string tile(const std::string& value, const std::string& name, const std::string& note) {
  return fmt::format("<div class=\"tile\"><div class=\"value\">{}</div><div class=\"name\">{}</div><div class=\"note\">{}</div></div>\n",
                     escape_html(value), escape_html(name), escape_html(note));
}

const DeviceStat* target_device(const RunResult& r) {
  if (!r.accounting) return nullptr;
  for (const auto& d : r.accounting->devices)
    if (d.role == DeviceRole::Target) return &d;
  return nullptr;
}

std::string bench_tiles(const JobSpec& job, const RunResult& r) {
  const ThreadResult& t = r.total;
  std::string out = "<div class=\"tiles\">\n";
  out += tile(format_count(per_s(t.ios, r.window_ns)), "IOPS", fmt::format("{} I/Os completed in the window", t.ios));
  if (engine_traits(job.engine).moves_data)
    out += tile(format_bandwidth(per_s(t.bytes_read + t.bytes_written, r.window_ns)), "bandwidth",
                fmt::format("{} per I/O", format_size(job.bs)));
  if (t.latency->count()) {
    out += tile(format_duration_ns(static_cast<double>(t.latency->quantile(0.5))), "p50 latency", "submission to reaping");
    out += tile(format_duration_ns(static_cast<double>(t.latency->quantile(0.99))), "p99 latency", "submission to reaping");
  }
  if (r.cpu && t.ios) {
    const double cpu_s = r.accounting ? r.accounting->cpu.total_s : r.cpu->user_s + r.cpu->sys_s;
    out += tile(format_duration_ns(cpu_s * 1e9 / static_cast<double>(t.ios)), "CPU per I/O",
                r.accounting ? "every thread of ioacct (schedstat)" : "user + sys (getrusage)");
  }
  if (const DeviceStat* d = target_device(r)) {
    if (d->busy_pct)
      out += tile(fmt::format("{:.1f}%", *d->busy_pct), "device busy",
                  fmt::format("{}: exact time with I/O in flight (eBPF), every I/O on it", d->row.device));
    out += tile(fmt::format("{:.1f}%", d->row.util), "%util", fmt::format("{}: the kernel's io_ticks sample", d->row.device));
  }
  if (r.inflight && r.inflight->window_ns)
    out += tile(fmt::format("{:.1f}%", 100.0 * static_cast<double>(r.inflight->busy_ns) / static_cast<double>(r.inflight->window_ns)),
                "in flight (own I/O)", "this run's own I/Os: union of submission-to-reaping intervals");
  return out + "</div>\n";
}

std::string latency_table(const Histogram& h) {
  auto d = [](double ns) { return format_duration_ns(ns); };
  auto q = [&](double x) { return d(static_cast<double>(h.quantile(x))); };
  return html_table({{"min", "p50", "p90", "p99", "p99.9", "p99.99", "max", "mean", "I/Os"},
                     {d(static_cast<double>(h.min())), q(0.5), q(0.9), q(0.99), q(0.999), q(0.9999),
                      d(static_cast<double>(h.max())), d(h.mean()), std::to_string(h.count())}},
                    [](size_t) { return false; });
}

// compare --anatomy's stage table and verdicts, above the notes (without the
// blank line that parts them from the table in the console).
std::string anatomy_notes(const CompareResult& c) {
  std::string a = format_compare_anatomy(c);
  if (!a.empty() && a.front() == '\n') a.erase(0, 1);
  return a.empty() ? a : a + "\n";
}

std::string device_table(const Accounting& a) {
  std::vector<std::vector<std::string>> rows = {
      {"device", "role", "r/s", "w/s", "rkB/s", "wkB/s", "r_await ms", "w_await ms", "aqu-sz", "areq-sz kB", "%util", "busy%", "dev%"}};
  auto opt = [](const std::optional<double>& x) { return x ? fmt::format("{:.1f}", *x) : std::string("-"); };
  for (const auto& d : a.devices) {
    const auto& x = d.row;
    rows.push_back({x.device, device_role_name(d.role), fmt::format("{:.1f}", x.r_s), fmt::format("{:.1f}", x.w_s), fmt::format("{:.1f}", x.rkB_s),
                    fmt::format("{:.1f}", x.wkB_s), fmt::format("{:.2f}", x.r_await), fmt::format("{:.2f}", x.w_await),
                    fmt::format("{:.2f}", x.aqu_sz), fmt::format("{:.2f}", x.areq_sz), fmt::format("{:.1f}", x.util),
                    opt(d.busy_pct), opt(d.dev_pct)});
  }
  return html_table(rows, [](size_t j) { return j < 2; });
}

std::string cpu_table(const RunResult& r) {
  if (!r.cpu) return "";
  std::vector<std::vector<std::string>> rows = {{"user", "sys", "% of one CPU", "voluntary switches", "involuntary"}};
  const double cpu_s = r.cpu->user_s + r.cpu->sys_s;
  rows.push_back({fmt::format("{:.2f} s", r.cpu->user_s), fmt::format("{:.2f} s", r.cpu->sys_s),
                  fmt::format("{:.0f}%", r.window_ns ? 100.0 * cpu_s * 1e9 / static_cast<double>(r.window_ns) : 0.0),
                  std::to_string(r.cpu->vol_ctxsw), std::to_string(r.cpu->invol_ctxsw)});
  if (r.accounting) {
    const auto& c = r.accounting->cpu;
    rows[0].insert(rows[0].end(), {"submitters", "SQ threads", "io-wq", "other"});
    rows[1].insert(rows[1].end(), {fmt::format("{:.2f} s", c.submitters_s), fmt::format("{:.2f} s", c.sq_threads_s),
                                   fmt::format("{:.2f} s", c.iowq_s), fmt::format("{:.2f} s", c.other_s)});
  }
  return html_table(rows, [](size_t) { return false; });
}

std::string describe(const JobSpec& job, const RunResult& r) {
  return fmt::format("{} {} {}, {}, depth {}, {} measured{}", rw_name(job.rw), format_size(job.bs),
                     job.direct ? "O_DIRECT" : "buffered", engine_name(job.engine, job.sync.call), r.total.depth,
                     format_duration_ns(static_cast<double>(r.window_ns)), r.interrupted ? " (interrupted: partial results)" : "");
}

// One row per job (over its own window) and one for the whole run: jobs run
// side by side, not as alternatives, so there is no ratio between them.
std::string jobs_table(const std::vector<JobSpec>& jobs, const RunResult& r) {
  std::vector<std::vector<std::string>> rows = {{"job", "workload", "IOPS", "p50", "p99", "CPU per I/O", "window"}};
  auto lat = [](const ThreadResult& t, double q) {
    return t.latency && t.latency->count() ? format_duration_ns(static_cast<double>(t.latency->quantile(q))) : std::string("-");
  };
  for (size_t i = 0; i < jobs.size() && i < r.jobs.size(); ++i) {
    const JobResult& j = r.jobs[i];
    const JobSpec& s = jobs[i];
    rows.push_back({"job " + j.name,
                    fmt::format("{} {} {}, {}, depth {}", rw_name(s.rw), format_size(s.bs), s.direct ? "O_DIRECT" : "buffered",
                                engine_name(s.engine, s.sync.call), s.depth_per_thread() * s.threads),
                    format_count(per_s(j.total.ios, j.window_ns)), lat(j.total, 0.5), lat(j.total, 0.99),
                    j.cpu && j.total.ios ? format_duration_ns(j.cpu->total_s * 1e9 / static_cast<double>(j.total.ios)) : "-",
                    format_duration_ns(static_cast<double>(j.window_ns))});
  }
  const double cpu_s = r.accounting ? r.accounting->cpu.total_s : (r.cpu ? r.cpu->user_s + r.cpu->sys_s : 0);
  rows.push_back({fmt::format("all {} jobs", jobs.size()), "the whole run", format_count(per_s(r.total.ios, r.window_ns)),
                  lat(r.total, 0.5), lat(r.total, 0.99),
                  r.cpu && r.total.ios ? format_duration_ns(cpu_s * 1e9 / static_cast<double>(r.total.ios)) : "-",
                  format_duration_ns(static_cast<double>(r.window_ns))});
  return html_table(rows, [](size_t j) { return j < 2; });
}

}  // namespace

std::string html_report(const CompareResult& c, json data) {
  data["kind"] = "compare";
  data["report_time"] = rfc3339_now();
  std::string targets;
  for (const auto& t : c.targets) targets += (targets.empty() ? "" : "; ") + t.path + (t.device.empty() ? "" : " [" + t.device + "]");
  json rows = json::array();
  if (!targets.empty()) rows.push_back({"targets", targets});
  const bool saved = !c.variants.empty() && !c.variants[0].sources.empty();
  if (!saved)
    rows.push_back({"runs", fmt::format("{} variants x {} repetitions, interleaved{}; {:.1f} s in all{}{}", c.variants.size(), c.repeat,
                                        c.warmup ? fmt::format(", after {} warm-up round{}", c.warmup, c.warmup == 1 ? "" : "s") : "",
                                        c.wall_s, c.interrupted ? " (interrupted)" : "",
                                        c.rounds_note.empty() ? "" : "; --until-resolved: " + c.rounds_note)});
  else
    for (const auto& v : c.variants) {
      std::string files;
      for (const auto& f : v.sources) {
        if (!files.empty()) files += ", ";
        files += f;
      }
      rows.push_back({"saved: " + v.name, files});
    }
  for (const auto& w : c.warnings) rows.push_back({"warning", w});
  data["context_rows"] = rows;
  HtmlPage p;
  p.kind = "compare";
  p.title = c.preset.empty() ? fmt::format("ioacct compare: {} variants", c.variants.size())
                             : fmt::format("ioacct compare --preset {}", c.preset);
  p.question = c.question;
  p.headline = c.headline;
  if (!c.explanation.empty()) p.body += "<p class=\"explanation\">" + escape_html(c.explanation) + "</p>\n";
  p.body += "<h2>Results</h2>\n" + html_table(compare_table(c), is_text_column, "results") + "<pre class=\"note\">" +
            escape_html(anatomy_notes(c) + compare_notes(c)) + "</pre>\n<h2>Charts</h2>\n<div id=\"charts\" class=\"charts\"></div>\n";
  return render_html(p, data);
}

std::string html_bench_report(const std::vector<JobSpec>& jobs, const RunResult& r, json bench_json) {
  const JobSpec& job = jobs.front();
  const bool several = jobs.size() > 1 && r.jobs.size() == jobs.size();
  bench_json["kind"] = "bench";
  bench_json["report_time"] = rfc3339_now();
  std::string targets;
  for (const auto& t : r.targets) targets += (targets.empty() ? "" : "; ") + t.path + (t.device.empty() ? "" : " [" + t.device + "]");
  bench_json["context_rows"] = json::array({json::array({"targets", targets}),
                                            json::array({"engine", r.engine_desc})});
  HtmlPage p;
  p.kind = "bench";
  p.title = several ? fmt::format("ioacct bench: {} jobs side by side, {} measured", jobs.size(),
                                  format_duration_ns(static_cast<double>(r.window_ns)))
                    : "ioacct bench: " + describe(job, r);
  p.body = "<h2>Headline figures</h2>\n" + bench_tiles(job, r);
  if (several) p.body += "<h2>Jobs</h2>\n" + jobs_table(jobs, r);
  if (r.total.latency->count()) p.body += "<h2>Latency percentiles</h2>\n" + latency_table(*r.total.latency);
  if (r.cpu) p.body += "<h2>CPU</h2>\n" + cpu_table(r);
  if (r.accounting && !r.accounting->devices.empty()) {
    p.body += "<h2>Devices</h2>\n" + device_table(*r.accounting);
    p.body += "<p class=\"note\">iostat -x columns from /proc/diskstats over the window; busy%: the exact time the device "
              "had a request between block_io_start and block_io_done (eBPF), dev% the same from issue to completion; "
              "'-': not measured" +
              escape_html(r.accounting->exact_unavailable ? " (" + *r.accounting->exact_unavailable + ")" : "") + ".</p>\n";
  }
  p.body += "<h2>Charts</h2>\n<div id=\"charts\" class=\"charts\"></div>\n";
  if (!r.series || r.series->samples().empty())
    p.body += "<p class=\"note\">No time series: it needs --acct latency (the default) or full, --log-interval above 0 "
              "(default 1s) and a run longer than one interval.</p>\n";
  return render_html(p, bench_json);
}

std::string html_merge_report(const MergedRun& m, json merged) {
  merged["kind"] = "merge";
  merged["report_time"] = rfc3339_now();
  json rows = json::array();
  rows.push_back({"windows", merged_summary_line(m).substr(std::string("ioacct merge: ").size())});
  for (const auto& w : m.warnings) rows.push_back({"warning", w});
  merged["context_rows"] = rows;
  std::vector<std::vector<std::string>> table = {
      {"host", "tags", "IOPS", "bandwidth", "p50", "p99", "CPU per I/O", "window", "opened after the first"}};
  for (const HostRun& h : m.hosts) {
    std::string tags;
    for (const auto& [k, v] : h.tags) tags += fmt::format("{}{}={}", tags.empty() ? "" : " ", k, v);
    const json& lat = merged.at("merge").at("hosts").at(table.size() - 1).at("latency_ns");
    auto q = [&](const char* k) { return lat.is_object() ? format_duration_ns(lat[k].get<double>()) : std::string("-"); };
    table.push_back({h.name, tags, format_count(h.iops), h.bytes_per_s ? format_bandwidth(*h.bytes_per_s) : "-", q("p50"), q("p99"),
                     h.cpu && h.ios ? format_duration_ns((h.cpu->user_s + h.cpu->sys_s) * 1e9 / static_cast<double>(h.ios)) : "-",
                     format_duration_ns(h.window_s * 1e9), format_duration_ns(static_cast<double>(h.window_start_ns - m.union_start_ns))});
  }
  const bool lat = m.has_latency;
  table.push_back({fmt::format("total ({} hosts)", m.hosts.size()), "", format_count(m.iops),
                   m.bytes_per_s ? format_bandwidth(*m.bytes_per_s) : "-",
                   lat ? format_duration_ns(static_cast<double>(m.latency.quantile(0.5))) : "-",
                   lat ? format_duration_ns(static_cast<double>(m.latency.quantile(0.99))) : "-",
                   m.cpu && m.ios ? format_duration_ns((m.cpu->user_s + m.cpu->sys_s) * 1e9 / static_cast<double>(m.ios)) : "-",
                   format_duration_ns(m.window_s() * 1e9), m.overlapped ? "(common window)" : "(no common window: their union)"});
  HtmlPage p;
  p.kind = "merge";
  p.title = fmt::format("ioacct merge: {} hosts", m.hosts.size());
  p.headline = fmt::format("{} IOPS over {} hosts; p99 {}", format_count(m.iops), m.hosts.size(),
                           lat ? format_duration_ns(static_cast<double>(m.latency.quantile(0.99))) : "-");
  p.body = "<h2>Hosts</h2>\n" + html_table(table, [](size_t j) { return j < 2; }) +
           "<p class=\"note\">IOPS and bandwidth: each host's over its own window; the total adds them. Latency: "
           "every host's histogram merged bucket by bucket, so the total's percentiles are those of all the I/Os "
           "together. CPU: each host's process, added.</p>\n";
  if (lat) p.body += "<h2>Latency percentiles, all hosts</h2>\n" + latency_table(m.latency);
  p.body += "<h2>Charts</h2>\n<div id=\"charts\" class=\"charts\"></div>\n";
  return render_html(p, merged);
}

}  // namespace ioacct
