#include "report/rings_report.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/json_opt.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

// A figure the kernel did not print is "-", never 0.
template <typename T>
std::string cell(const std::optional<T>& v) {
  return v ? fmt::format("{}", *v) : "-";
}

std::string pct(const std::optional<double>& v) { return v ? fmt::format("{:.1f}%", 100 * *v) : "-"; }

std::string fd_list(const std::vector<int>& fds) { return fmt::format("{}", fmt::join(fds, ",")); }

// "not read: ring busy": the kernel printed nothing under the ring's lock on
// any look the walk's budget allowed, or only an SqThread line that may mean
// either "no SQ thread" or "lock busy".
const char* busy_note(const RingSnapshot& r) {
  if (!r.locked) return "  (not read: ring busy; figures not printed by the kernel)";
  if (!r.sq_known) return "  (SQ thread not read: ring busy)";
  return "";
}

}  // namespace

std::string format_rings_console(const RingsView& v) {
  std::string out = fmt::format("{} ring{} in {} process{}, {} SQ thread{}", v.rings.size(),
                                v.rings.size() == 1 ? "" : "s", v.processes, v.processes == 1 ? "" : "es",
                                v.sq_threads.size(), v.sq_threads.size() == 1 ? "" : "s");
  out += v.interval_s > 0 ? fmt::format("; SQ-thread rates over {:.2f} s\n", v.interval_s) : "\n";
  if (!v.sq_threads.empty()) {
    out += "\nSQ threads (CPU: fdinfo SqTotalTime; WORK: SqWorkTime, its loops that had SQEs to submit)\n";
    out += fmt::format("  {:>8} {:>8} {:<16} {:>4} {:<10} {:>7} {:>7} {:>9}  {}\n", "TID", "PID", "COMM", "CPU",
                       "ALLOWED", "CPU%", "WORK%", "WORK/CPU", "RINGS (fd)");
    for (const auto& t : v.sq_threads) {
      out += fmt::format("  {:>8} {:>8} {:<16} {:>4} {:<10} {:>7} {:>7} {:>9}  {}{}\n", t.tid, t.pid, t.comm,
                         cell(t.cpu), t.cpus_allowed.empty() ? "-" : t.cpus_allowed, pct(t.cpu_share),
                         t.work_s && v.interval_s > 0 ? pct(*t.work_s / v.interval_s) : "-", pct(t.work_ratio),
                         fd_list(t.fds), t.mostly_idle ? "  <- mostly outside SqWorkTime" : "");
      if (t.process_wide_s)
        out += fmt::format("  {:>8} SqTotalTime moved {:.2f} s, more than the thread ran: this kernel counts its whole "
                           "process there; CPU% is the thread's schedstat time, and no WORK is shown\n", "",
                           *t.process_wide_s);
    }
  }
  if (!v.rings.empty()) {
    out += "\nrings\n";
    out += fmt::format("  {:>8} {:<16} {:>5} {:>6} {:>6} {:>7} {:>7} {:>8} {:>6} {:>6} {:>9}\n", "PID", "COMM", "FD",
                       "SQ", "CQ", "SQ_PEND", "CQ_PEND", "OVERFLOW", "FILES", "BUFS", "SQ_THREAD");
    for (const auto& r : v.rings) {
      out += fmt::format("  {:>8} {:<16} {:>5} {:>6} {:>6} {:>7} {:>7} {:>8} {:>6} {:>6} {:>9}{}\n", r.pid, r.comm,
                         r.fd, cell(r.sq_entries), cell(r.cq_entries), cell(r.sq_pending), cell(r.cq_pending),
                         cell(r.overflow), cell(r.user_files), cell(r.user_bufs),
                         r.sq_known ? cell(r.sq_thread) : "?", busy_note(r));
    }
  }
  if (v.interval_s <= 0 && !v.sq_threads.empty())
    out += "\nSQ-thread CPU needs two samples: use --sample or -i\n";
  return out;
}

json rings_to_json(const RingsView& v) {
  json threads = json::array();
  for (const auto& t : v.sq_threads)
    threads.push_back({{"tid", t.tid},
                       {"pid", t.pid},
                       {"comm", t.comm},
                       {"cpu", opt_json(t.cpu)},
                       {"cpus_allowed", t.cpus_allowed.empty() ? json(nullptr) : json(t.cpus_allowed)},
                       {"pinned", t.pinned},
                       {"ring_fds", t.fds},
                       {"cpu_s", opt_json(t.cpu_s)},
                       {"work_s", opt_json(t.work_s)},
                       {"cpu_share", opt_json(t.cpu_share)},
                       {"work_ratio", opt_json(t.work_ratio)},
                       {"mostly_idle", t.mostly_idle},
                       {"sq_total_time_process_wide_s", opt_json(t.process_wide_s)}});
  json rings = json::array();
  for (const auto& r : v.rings) {
    json fields = json::object();
    for (const auto& [k, val] : r.fields) fields[k] = val;
    rings.push_back({{"pid", r.pid},
                     {"comm", r.comm},
                     {"fd", r.fd},
                     {"locked", r.locked},
                     {"sq_entries", opt_json(r.sq_entries)},
                     {"cq_entries", opt_json(r.cq_entries)},
                     {"sq_pending", opt_json(r.sq_pending)},
                     {"cq_pending", opt_json(r.cq_pending)},
                     {"cq_overflow", opt_json(r.overflow)},
                     {"user_files", opt_json(r.user_files)},
                     {"user_bufs", opt_json(r.user_bufs)},
                     {"sq_thread", opt_json(r.sq_thread)},
                     {"sq_thread_known", r.sq_known},
                     {"fdinfo", fields}});
  }
  return {{"context", {{"ioacct_version", IOACCT_VERSION}, {"schema_version", kRingsSchemaVersion}}},
          {"interval_s", v.interval_s > 0 ? json(v.interval_s) : json(nullptr)},
          {"processes", v.processes},
          {"unreadable_processes", v.unreadable},
          {"sq_threads", threads},
          {"rings", rings}};
}

}  // namespace ioacct
