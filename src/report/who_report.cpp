#include "report/who_report.hpp"

#include <fmt/format.h>

#include "report/json_opt.hpp"

namespace ioacct {
namespace {

std::string name_of(const WhoRow& w) {
  if (w.cgroup) return *w.cgroup;
  return w.cgroup_id ? fmt::format("(removed cgroup {})", w.cgroup_id) : std::string("(unknown)");
}

// What the path says beside it: the pod and container, or the unit.
std::string names_of(const WhoRow& w) {
  std::string s;
  if (!w.names.pod_uid.empty()) s += fmt::format(" pod={}", w.names.pod_uid);
  if (!w.names.container_id.empty()) s += fmt::format(" container={}", w.names.container_id);
  if (s.empty() && !w.names.unit.empty()) s += fmt::format(" unit={}", w.names.unit);
  return s;
}

double per_s(uint64_t n, double s) { return s > 0 ? static_cast<double>(n) / s : 0; }

}  // namespace

const char* who_by_name(BusyBy by) {
  return by == BusyBy::Process ? "process" : by == BusyBy::Cgroup ? "cgroup" : "none";
}

std::string format_who_console(const StatReport& r, double interval_s) {
  if (r.who_by == BusyBy::None || r.since_boot) return {};
  std::string out;
  const bool by_pid = r.who_by == BusyBy::Process;
  for (const StatRow& row : r.rows) {
    if (!row.busy_ns || !row.window_ns) continue;
    const double s = static_cast<double>(*row.window_ns) / 1e9;
    out += fmt::format("{} by {}: busy {:.2f}% of {:.2f} s; share% of the window, in the order of share\n",
                       row.device.name, who_by_name(r.who_by), row.busy_pct.value_or(0), s > 0 ? s : interval_s);
    // The header's cells as wide as the figures below them.
    out += fmt::format("{:>7} {:>8} {:>6} {:>7} {:>7} {:>7} {:>7} {:>8}  {}\n", "share%", "busy-of%", "infl%", "r/s",
                       "w/s", "rMB/s", "wMB/s", "await_ms", by_pid ? "pid     comm             cgroup" : "cgroup");
    for (const WhoRow& w : row.who) {
      out += fmt::format("{:7.2f} {:8.2f} {:6.2f} {:7.1f} {:7.1f} {:7.2f} {:7.2f} {:8.3f}  ", w.busy_share_pct,
                         w.share_of_busy_pct.value_or(0), w.inflight_pct, per_s(w.reads, s), per_s(w.writes, s),
                         per_s(w.read_bytes, s) / 1048576.0, per_s(w.write_bytes, s) / 1048576.0,
                         w.latency.mean_ns / 1e6);
      if (by_pid)
        out += fmt::format("{:<7} {:<16} ", w.pid ? std::to_string(*w.pid) : std::string("?"), w.comm.value_or("?"));
      out += name_of(w) + names_of(w) + "\n";
    }
    if (row.who.empty()) out += "  (no I/O)\n";
    out += "\n";
  }
  return out;
}

nlohmann::json who_to_json(const std::vector<WhoRow>& rows, BusyBy by, double window_s) {
  nlohmann::json a = nlohmann::json::array();
  for (const WhoRow& w : rows) {
    nlohmann::json j = {
        {"cgroup", opt_json(w.cgroup)},
        {"cgroup_id", w.cgroup_id},
        {"pod_uid", w.names.pod_uid.empty() ? nlohmann::json() : nlohmann::json(w.names.pod_uid)},
        {"qos", w.names.qos.empty() ? nlohmann::json() : nlohmann::json(w.names.qos)},
        {"container_id", w.names.container_id.empty() ? nlohmann::json() : nlohmann::json(w.names.container_id)},
        {"container_runtime", w.names.runtime.empty() ? nlohmann::json() : nlohmann::json(w.names.runtime)},
        {"unit", w.names.unit.empty() ? nlohmann::json() : nlohmann::json(w.names.unit)},
        {"reads", w.reads},
        {"writes", w.writes},
        {"others", w.others},
        {"read_bytes", w.read_bytes},
        {"write_bytes", w.write_bytes},
        {"other_bytes", w.other_bytes},
        {"unpaired", w.unpaired},
        {"r_s", per_s(w.reads, window_s)},
        {"w_s", per_s(w.writes, window_s)},
        {"busy_share_ns", w.busy_share_ns},
        {"busy_share_pct", w.busy_share_pct},
        {"share_of_busy_pct", opt_json(w.share_of_busy_pct)},
        {"inflight_ns", w.inflight_ns},
        {"inflight_pct", w.inflight_pct},
        {"latency",
         {{"count", w.latency.count},
          {"mean_ns", w.latency.count ? nlohmann::json(w.latency.mean_ns) : nlohmann::json()},
          {"p50_ns", w.latency.count ? nlohmann::json(w.latency.p50_ns) : nlohmann::json()},
          {"p99_ns", w.latency.count ? nlohmann::json(w.latency.p99_ns) : nlohmann::json()}}},
    };
    if (by == BusyBy::Process) {
      j["pid"] = opt_json(w.pid);
      j["comm"] = opt_json(w.comm);
    }
    a.push_back(std::move(j));
  }
  return a;
}

}  // namespace ioacct
