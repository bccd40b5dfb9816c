#include "report/stat_report.hpp"

#include <fmt/format.h>

#include <ctime>

#include "common/units.hpp"
#include "report/json_opt.hpp"
#include "report/who_report.hpp"

namespace ioacct {
namespace {

// "0", "1", "2-3", ..., "128-255", "256+".
std::string depth_label(int k) {
  const uint64_t lo = busy_depth_low(k);
  if (k == BusyCounters::kDepthBuckets - 1) return fmt::format("{}+", lo);
  const uint64_t hi = busy_depth_low(k + 1) - 1;
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi);
}

std::string opt(const std::optional<double>& v, int width, int prec) {
  if (!v) return fmt::format(" {:>{}}", "-", width);
  return fmt::format(" {:{}.{}f}", *v, width, prec);
}

const std::string& display_name(const std::string& kernel_name, const StatFormat& f) {
  const auto it = f.names.find(kernel_name);
  return it == f.names.end() ? kernel_name : it->second;
}

// The local time as iostat -t prints it: strftime(3) in the C locale.
std::string local_time(int64_t wall_ns, const std::string& format) {
  const time_t secs = static_cast<time_t>(wall_ns / 1'000'000'000);
  struct tm tm {};
  localtime_r(&secs, &tm);
  char buf[128];
  const size_t n = std::strftime(buf, sizeof buf, format.c_str(), &tm);
  return std::string(buf, n);
}

// One column of iostat's, as `iostat -x` prints it, or `iostat -x -h`
// (sysstat's cprintf_f, cprintf_u64 with a unit, cprintf_pc).
struct Columns {
  const StatFormat& f;
  static std::string plain(double v, int width, int prec) { return fmt::format(" {:{}.{}f}", v, width, prec); }
  std::string num(double v, int width) const { return plain(v, width, 2); }
  // A size in kB: with -h, divided by 1024 while at least 1024, one decimal
  // and the unit's letter (k, M, G, T, P).
  std::string size(double kb, int width) const {
    if (!f.human) return plain(kb, width, 2);
    static constexpr char kUnits[] = "kMGTP";
    size_t unit = 0;
    while (kb >= 1024 && unit + 1 < sizeof kUnits - 1) kb /= 1024, ++unit;
    return fmt::format(" {:{}.1f}{}", kb, width - 1, kUnits[unit]);
  }
  std::string rate(double kb_s, int width) const {
    return f.megabytes && !f.human ? plain(kb_s / 1024, width, 2) : size(kb_s, width);
  }
  std::string pct(double v, int width) const {
    return f.human ? fmt::format(" {:{}.1f}%", v, width - 1) : plain(v, width, 2);
  }
  std::string opt_pct(const std::optional<double>& v, int width) const {
    return v ? pct(*v, width) : opt(v, width, 2);
  }
};

}  // namespace

std::string format_stat_console(const StatReport& r, const StatFormat& f) {
  // iostat 12.6 -x: "%-13s" then " %7.2f"-style columns (write_plain_ext_stat);
  // with -h, write_pretty's order: the columns, then the device.
  const char* const u = f.megabytes && !f.human ? "MB" : "kB";
  std::string out;
  if (f.time_format) out += local_time(r.wall_ns, *f.time_format) + "\n";
  const Columns c{f};
  if (f.cpu && r.cpu) {
    // iostat 12.6's write_cpu_stat: 7 spaces, then " %7.2f" per column.
    out += "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n       ";
    for (double v : {r.cpu->user, r.cpu->nice, r.cpu->system, r.cpu->iowait, r.cpu->steal, r.cpu->idle})
      out += c.pct(v, 7);
    out += "\n\n";
  }
  if (!f.devices) return out;
  out += f.human ? "     " : "Device            ";
  out += fmt::format("r/s     r{0}/s   rrqm/s  %rrqm r_await rareq-sz     w/s     w{0}/s   wrqm/s  %wrqm w_await "
                     "wareq-sz     d/s     d{0}/s   drqm/s  %drqm d_await dareq-sz     f/s f_await  aqu-sz  %util  busy%"
                     "   dev%", u);
  for (int k = 0; k < BusyCounters::kDepthBuckets; ++k) out += fmt::format(" {:>9}", fmt::format("qd{}%", depth_label(k)));
  if (f.latency) out += "   p50_ms   p99_ms   max_ms";
  out += f.human ? " Device\n" : "\n";
  for (const StatRow& row : r.rows) {
    const IostatRow& x = row.io;
    const std::string& name = display_name(row.device.name, f);
    if (!f.human) out += fmt::format("{:<13}", name);
    out += c.num(x.r_s, 7) + c.rate(x.rkB_s, 9) + c.num(x.rrqm_s, 8) + c.pct(x.rrqm_pct, 6) + c.num(x.r_await, 7) +
           c.size(x.rareq_sz, 8);
    out += c.num(x.w_s, 7) + c.rate(x.wkB_s, 9) + c.num(x.wrqm_s, 8) + c.pct(x.wrqm_pct, 6) + c.num(x.w_await, 7) +
           c.size(x.wareq_sz, 8);
    out += c.num(x.d_s, 7) + c.rate(x.dkB_s, 9) + c.num(x.drqm_s, 8) + c.pct(x.drqm_pct, 6) + c.num(x.d_await, 7) +
           c.size(x.dareq_sz, 8);
    out += c.num(x.f_s, 7) + c.num(x.f_await, 7) + c.num(x.aqu_sz, 7) + c.pct(x.util_raw, 6);
    out += c.opt_pct(row.busy_pct, 6) + c.opt_pct(row.dev_pct, 6);
    for (int k = 0; k < BusyCounters::kDepthBuckets; ++k)
      out += opt(row.depth_pct ? std::optional<double>((*row.depth_pct)[k]) : std::nullopt, 9, 1);
    if (f.latency) {
      const bool have = row.latency && row.latency->count > 0;
      out += opt(have ? std::optional<double>(row.latency->p50_ns / 1e6) : std::nullopt, 8, 3);
      out += opt(have ? std::optional<double>(row.latency->p99_ns / 1e6) : std::nullopt, 8, 3);
      out += opt(have ? std::optional<double>(row.latency->max_ns / 1e6) : std::nullopt, 8, 3);
    }
    if (f.human) out += " " + name;
    out += '\n';
  }
  out += '\n';
  out += format_who_console(r, r.interval_s);
  return out;
}

nlohmann::json stat_to_json(const StatReport& r, const StatFormat& f) {
  nlohmann::json devices = nlohmann::json::array();
  for (const StatRow& row : r.rows) {
    const IostatRow& x = row.io;
    nlohmann::json d = {
        {"device", display_name(row.device.name, f)},
        {"partition", row.device.partition},
        {"r_s", x.r_s},           {"w_s", x.w_s},           {"d_s", x.d_s},           {"f_s", x.f_s},
        {"rkB_s", x.rkB_s},       {"wkB_s", x.wkB_s},       {"dkB_s", x.dkB_s},
        {"rrqm_s", x.rrqm_s},     {"wrqm_s", x.wrqm_s},     {"drqm_s", x.drqm_s},
        {"rrqm_pct", x.rrqm_pct}, {"wrqm_pct", x.wrqm_pct}, {"drqm_pct", x.drqm_pct},
        {"r_await_ms", x.r_await}, {"w_await_ms", x.w_await}, {"d_await_ms", x.d_await}, {"f_await_ms", x.f_await},
        {"rareq_sz_kB", x.rareq_sz}, {"wareq_sz_kB", x.wareq_sz}, {"dareq_sz_kB", x.dareq_sz},
        {"aqu_sz", x.aqu_sz},     {"util_pct", x.util_raw},
        {"window_start_ns", opt_json(row.window_start_ns)},
        {"window_end_ns", opt_json(row.window_end_ns)},
        {"window_ns", opt_json(row.window_ns)},
        {"busy_ns", opt_json(row.busy_ns)},
        {"dev_busy_ns", opt_json(row.dev_busy_ns)},
        {"busy_pct", opt_json(row.busy_pct)},
        {"dev_pct", opt_json(row.dev_pct)},
        {"busy_unsure_ns", opt_json(row.unsure_ns)},
        {"busy_unsure_pct", opt_json(row.unsure_pct)},
        {"dev_unsure_ns", opt_json(row.dev_unsure_ns)},
        {"dev_unsure_pct", opt_json(row.dev_unsure_pct)},
        // Kept for scripts: every loss is bounded as unsure, so no window is
        // invalid (docs/json-schema.md).
        {"exact_invalid", nullptr},
        {"requests_started", opt_json(row.started)},
        {"requests_done", opt_json(row.done)},
        {"requests_merged", opt_json(row.merged)},
        {"requests_in_flight", opt_json(row.in_flight)},
        {"completions_lost", opt_json(row.lost)},
        {"starts_unseen", opt_json(row.unseen_starts)},
        {"late_ns", opt_json(row.late_ns)},
        {"completions_invisible", opt_json(row.invisible)},
        {"records_dropped", opt_json(row.dropped)},
        {"tracepoint_misses", opt_json(row.missed)},
    };
    if (row.depth_pct) {
      nlohmann::json q = nlohmann::json::object();
      for (int k = 0; k < BusyCounters::kDepthBuckets; ++k) q[depth_label(k)] = (*row.depth_pct)[k];
      d["inflight_pct"] = q;
    } else {
      d["inflight_pct"] = nullptr;
    }
    if (f.latency && row.latency)
      d["latency"] = {{"count", row.latency->count},
                      {"p50_ns", row.latency->count ? nlohmann::json(row.latency->p50_ns) : nlohmann::json()},
                      {"p99_ns", row.latency->count ? nlohmann::json(row.latency->p99_ns) : nlohmann::json()},
                      {"max_ns", row.latency->count ? nlohmann::json(row.latency->max_ns) : nlohmann::json()}};
    else if (f.latency)
      d["latency"] = nullptr;
    if (r.who_by != BusyBy::None)
      d["who"] = row.busy_ns ? who_to_json(row.who, r.who_by, static_cast<double>(row.window_ns.value_or(0)) / 1e9)
                             : nlohmann::json();
    devices.push_back(std::move(d));
  }
  nlohmann::json tracker = nullptr;
  if (r.tracker)
    tracker = {{"completions", r.tracker->completions},
               {"user_cpu_ns", r.tracker->user_cpu_ns},
               {"bpf_run_ns", r.tracker->bpf_run_ns ? nlohmann::json(*r.tracker->bpf_run_ns) : nlohmann::json()},
               {"cpu_ns_per_io", opt_json(r.tracker->cpu_ns_per_io)}};
  nlohmann::json out = {{"schema_version", kStatSchemaVersion},
          {"timestamp", r.wall_ns ? nlohmann::json(format_rfc3339(r.wall_ns)) : nlohmann::json()},
          {"since_boot", r.since_boot},
          {"interval_s", r.interval_s},
          {"exact_source", f.source ? nlohmann::json(*f.source) : nlohmann::json()},
          {"exact_unavailable", f.unavailable ? nlohmann::json(*f.unavailable) : nlohmann::json()},
          {"exact_error", r.busy_error ? nlohmann::json(*r.busy_error) : nlohmann::json()},
          {"tracker", tracker},
          {"devices", devices}};
  if (f.cpu)
    out["cpu"] = r.cpu ? nlohmann::json{{"user_pct", r.cpu->user},     {"nice_pct", r.cpu->nice},
                                        {"system_pct", r.cpu->system}, {"iowait_pct", r.cpu->iowait},
                                        {"steal_pct", r.cpu->steal},   {"idle_pct", r.cpu->idle}}
                       : nlohmann::json();
  if (r.who_by != BusyBy::None) out["who_by"] = who_by_name(r.who_by);
  if (!f.devices) out["devices"] = nlohmann::json::array();
  return out;
}

}  // namespace ioacct
