#include "report/merge_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "common/units.hpp"
#include "report/json_opt.hpp"
#include "report/report.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

json opt_ns(int64_t ns, bool valid) { return valid ? json(ns) : json(nullptr); }

json cpu_json(const std::optional<HostCpu>& c, uint64_t ios) {
  if (!c) return nullptr;
  const double s = c->user_s + c->sys_s;
  return {{"user_s", c->user_s},
          {"sys_s", c->sys_s},
          {"per_io_us", ios ? json(s * 1e6 / static_cast<double>(ios)) : json(nullptr)},
          {"voluntary_ctxsw", c->voluntary_ctxsw},
          {"involuntary_ctxsw", c->involuntary_ctxsw}};
}

json latency_of(const HostLatency& l) {
  Histogram h;
  if (l.buckets.empty() || !Histogram::restore(l.buckets, l.min, l.max, l.mean, l.stdev, h)) return nullptr;
  return latency_json(h);
}

json clock_json(const std::optional<ClockSync>& c) {
  if (!c) return nullptr;
  return {{"synchronised", c->synchronised}, {"maxerror_us", c->maxerror_us}, {"esterror_us", c->esterror_us},
          {"state", c->state}};
}

// One host's row of the per-host table, and its own series.
json host_json(const HostRun& h) {
  json series = json::array();
  for (const HostSample& s : h.series)
    series.push_back({{"end_unix_ns", s.end_unix_ns}, {"dur_s", s.dur_s}, {"iops", s.iops},
                      {"bytes_per_s", opt_json(s.bytes_per_s)}, {"p50_ns", opt_json(s.p50_ns)},
                      {"p99_ns", opt_json(s.p99_ns)}});
  return {{"name", h.name}, {"source", h.source}, {"host", h.hostname}, {"boot_id", h.boot_id},
          {"kernel", h.kernel}, {"ioacct_version", h.ioacct_version}, {"tags", h.tags}, {"clock", clock_json(h.clock)},
          {"window_start_unix_ns", h.window_start_ns}, {"window_end_unix_ns", h.window_end_ns},
          {"window_start_time", format_rfc3339_ns(h.window_start_ns)}, {"window_s", h.window_s},
          {"ios", h.ios}, {"iops", h.iops}, {"bytes_per_s", opt_json(h.bytes_per_s)},
          {"latency_ns", latency_of(h.latency)}, {"cpu", cpu_json(h.cpu, h.ios)}, {"devices", h.devices},
          {"targets", h.targets}, {"interrupted", h.interrupted}, {"stop_reason", h.stop_reason},
          {"series", series}};
}

json merge_block(const MergedRun& m) {
  json hosts = json::array();
  for (const HostRun& h : m.hosts) hosts.push_back(host_json(h));
  return {{"hosts", hosts},
          {"boots", m.boots},
          {"union_start_unix_ns", m.union_start_ns},
          {"union_end_unix_ns", m.union_end_ns},
          {"union_s", static_cast<double>(m.union_end_ns - m.union_start_ns) / 1e9},
          {"overlapped", m.overlapped},
          {"overlap_start_unix_ns", opt_ns(m.overlap_start_ns, m.overlapped)},
          {"overlap_end_unix_ns", opt_ns(m.overlap_end_ns, m.overlapped)},
          {"overlap_s", m.overlap_s()},
          {"start_skew_ns", m.start_skew_ns},
          {"end_skew_ns", m.end_skew_ns},
          {"clock_error_bound_us", opt_json(m.clock_error_bound_us)},
          {"warnings", m.warnings}};
}

json series_json(const MergedRun& m) {
  if (m.series.empty()) return nullptr;
  json samples = json::array();
  for (const MergedSample& s : m.series)
    samples.push_back({{"t_s", static_cast<double>(s.end_unix_ns - m.union_start_ns) / 1e9},
                       {"end_unix_ns", s.end_unix_ns}, {"dur_s", m.series_interval_s}, {"iops", s.iops},
                       {"bytes_per_s", opt_json(s.bytes_per_s)}, {"hosts", s.hosts}, {"p50_ns", nullptr},
                       {"p99_ns", nullptr}});
  return {{"interval_s", m.series_interval_s}, {"keep_every", 1}, {"max_samples", nullptr}, {"samples", samples}};
}

json results_json(const MergedRun& m) {
  json devices = json::array();
  for (const HostRun& h : m.hosts)
    for (json d : h.devices) {
      d["host"] = h.name;
      devices.push_back(std::move(d));
    }
  json errors = json::object();
  for (const auto& [k, n] : m.errors_by_kind) errors[k] = n;
  // merge.overlapped says which window this is.
  const int64_t open = m.window_start_ns(), close = m.window_end_ns();
  json r = {
      {"window_s", m.window_s()},
      {"window_start_unix_ns", open},
      {"window_end_unix_ns", close},
      {"window_start_time", format_rfc3339_ns(open)},
      {"window_end_time", format_rfc3339_ns(close)},
      {"ios", m.ios}, {"reads", m.reads}, {"writes", m.writes}, {"trims", m.trims}, {"syncs", 0},
      {"bytes", m.bytes_read + m.bytes_written}, {"bytes_read", m.bytes_read}, {"bytes_written", m.bytes_written},
      {"bytes_trimmed", m.bytes_trimmed}, {"iops", m.iops}, {"bytes_per_s", opt_json(m.bytes_per_s)},
      {"latency_ns", m.has_latency ? latency_json(m.latency) : json(nullptr)},
      {"latency_histogram_ns", json::array()},
      {"syscalls", m.syscalls}, {"errors", errors}, {"short_resubmits", m.short_resubmits},
      {"eagain_retries", m.eagain_retries}, {"iodepth", m.iodepth}, {"cpu", cpu_json(m.cpu, m.ios)},
      {"devices", devices}, {"series", series_json(m)},
      {"first_error", m.first_error.empty() ? json(nullptr) : json(m.first_error)}};
  for (const auto& b : m.latency.buckets()) r["latency_histogram_ns"].push_back({b.lo, b.hi, b.count});
  // What one host measures and a sum of hosts cannot say: null, as for a
  // figure not measured.
  for (const char* k : {"slat_ns", "clat_ns", "unsplit_ios", "complete_at_submit_ios", "read_latency_ns",
                        "write_latency_ns", "read_slat_ns", "read_clat_ns", "write_slat_ns", "write_clat_ns",
                        "trim_latency_ns", "sync_latency_ns", "latency_target_depth", "latency_target_found",
                        "submission", "verify", "sq_threads", "system", "inflight", "anatomy"})
    r[k] = nullptr;
  r["exact_busy"] = {{"source", nullptr}, {"unavailable", "merged: each host's devices are in merge.hosts[].devices"}};
  return r;
}

// The context: the first host's (its options, its layout), saying it is a
// merge: the hosts' common kernel and tags, the earliest start.
json context_json(const MergedRun& m, json ctx, const std::vector<std::string>& argv) {
  std::set<std::string> kernels;
  json targets = json::array();
  std::map<std::string, std::string> common = m.hosts.front().tags;
  for (const HostRun& h : m.hosts) {
    kernels.insert(h.kernel);
    for (json t : h.targets) {
      t["host"] = h.name;
      targets.push_back(std::move(t));
    }
    std::erase_if(common, [&](const auto& kv) {
      const auto it = h.tags.find(kv.first);
      return it == h.tags.end() || it->second != kv.second;
    });
  }
  ctx["command_line"] = argv;
  ctx["host"] = fmt::format("({} hosts merged)", m.hosts.size());
  ctx["kernel"] = kernels.size() == 1 ? *kernels.begin() : fmt::format("({} kernels)", kernels.size());
  ctx["boot_id"] = nullptr;
  ctx["tags"] = common;
  ctx["clock"] = nullptr;
  ctx["start_time"] = format_rfc3339(m.union_start_ns);
  ctx["start_monotonic_ns"] = nullptr;
  ctx["targets"] = targets;
  return ctx;
}

}  // namespace

json merged_json(const MergedRun& m, const json& first_context, const std::vector<std::string>& argv) {
  json out;
  out["context"] = context_json(m, first_context, argv);
  out["interrupted"] = m.interrupted;
  out["stop_reason"] = m.interrupted ? "interrupted" : "runtime";
  out["results"] = results_json(m);
  out["threads"] = json::array();
  json job_results = out["results"];
  job_results["start_s"] = 0.0;
  job_results["cpu"] = nullptr;
  out["jobs"] = json::array({{{"name", ""},
                              {"options", first_context.value("options", json::object())},
                              {"engine_description", first_context.value("engine_description", "")},
                              {"setup_flags", first_context.value("setup_flags", json::array())},
                              {"targets", json::array()},
                              {"first_thread", 0},
                              {"threads", 0},
                              {"results", job_results}}});
  out["merge"] = merge_block(m);
  return out;
}

std::string merged_summary_line(const MergedRun& m) {
  const double union_s = static_cast<double>(m.union_end_ns - m.union_start_ns) / 1e9;
  return fmt::format("ioacct merge: {} ({} {}): windows {} of {}; opened {} apart, closed {} apart; {}",
                     plural(m.hosts.size(), "result"), m.boots, m.boots == 1 ? "boot" : "boots",
                     m.overlapped ? "overlap " + format_duration_ns(m.overlap_s() * 1e9) : std::string("do NOT overlap"),
                     format_duration_ns(union_s * 1e9), format_duration_ns(static_cast<double>(m.start_skew_ns)),
                     format_duration_ns(static_cast<double>(m.end_skew_ns)),
                     m.boots == 1 ? std::string("one clock")
                     : m.clock_error_bound_us ? "clocks within " + format_duration_ns(static_cast<double>(*m.clock_error_bound_us) * 1e3)
                                              : std::string("clocks not synchronised: skew unbounded"));
}

std::string merged_console(const MergedRun& m) {
  auto lat = [](const Histogram& h, double q) { return h.count() ? format_duration_ns(static_cast<double>(h.quantile(q))) : std::string("-"); };
  std::string out = fmt::format("{:<20} {:>10} {:>11} {:>10} {:>10} {:>10} {:>9}  {}\n", "host", "IOPS", "bandwidth", "p50",
                                "p99", "CPU/IO", "window", "opened");
  for (const HostRun& h : m.hosts) {
    Histogram hist;
    if (!h.latency.buckets.empty())
      Histogram::restore(h.latency.buckets, h.latency.min, h.latency.max, h.latency.mean, h.latency.stdev, hist);
    const double cpu = h.cpu ? h.cpu->user_s + h.cpu->sys_s : 0;
    out += fmt::format("{:<20} {:>10} {:>11} {:>10} {:>10} {:>10} {:>9}  +{}\n", h.name, format_count(h.iops),
                       h.bytes_per_s ? format_bandwidth(*h.bytes_per_s) : "-", lat(hist, 0.5), lat(hist, 0.99),
                       h.cpu && h.ios ? format_duration_ns(cpu * 1e9 / static_cast<double>(h.ios)) : "-",
                       format_duration_ns(h.window_s * 1e9),
                       format_duration_ns(static_cast<double>(h.window_start_ns - m.union_start_ns)));
  }
  const double cpu = m.cpu ? m.cpu->user_s + m.cpu->sys_s : 0;
  out += fmt::format("{:<20} {:>10} {:>11} {:>10} {:>10} {:>10} {:>9}\n", fmt::format("total ({})", m.hosts.size()),
                     format_count(m.iops), m.bytes_per_s ? format_bandwidth(*m.bytes_per_s) : "-", lat(m.latency, 0.5),
                     lat(m.latency, 0.99), m.cpu && m.ios ? format_duration_ns(cpu * 1e9 / static_cast<double>(m.ios)) : "-",
                     format_duration_ns(m.window_s() * 1e9));
  out += fmt::format("  {} I/Os; latency from every host's histogram merged: p99.9 {}, max {}\n", m.ios,
                     lat(m.latency, 0.999), lat(m.latency, 1.0));
  out += "  " + merged_summary_line(m).substr(std::string("ioacct merge: ").size()) + "\n";
  return out;
}

}  // namespace ioacct
