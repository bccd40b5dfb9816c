#include "report/top_report.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "report/who_report.hpp"

namespace ioacct {
namespace {

std::string fit(std::string s, int width) {
  if (width > 0 && s.size() > static_cast<size_t>(width)) s.resize(static_cast<size_t>(width));
  return s;
}

std::string pct_or_dash(const std::optional<double>& v) { return v ? fmt::format("{:6.2f}", *v) : "     -"; }

double top_rate(uint64_t n, double s) { return s > 0 ? static_cast<double>(n) / s : 0; }

// iostat's await over both directions: the mean time per request.
double await_ms(const IostatRow& x) {
  const double n = x.r_s + x.w_s;
  return n > 0 ? (x.r_await * x.r_s + x.w_await * x.w_s) / n : 0;
}

struct WhoLine {
  std::string device;
  const WhoRow* row;
  double window_s;
};

double sort_key(const WhoLine& w, TopView::Sort s) {
  const WhoRow& r = *w.row;
  if (s == TopView::Sort::Iops) return top_rate(r.reads + r.writes + r.others, w.window_s);
  if (s == TopView::Sort::Bandwidth) return top_rate(r.read_bytes + r.write_bytes, w.window_s);
  return static_cast<double>(r.busy_share_ns);
}

std::string who_name(const WhoRow& r, BusyBy by) {
  std::string n;
  if (by == BusyBy::Process) n = fmt::format("{:>7} {:<15} ", r.pid ? std::to_string(*r.pid) : "?", r.comm.value_or("?"));
  if (r.cgroup) n += *r.cgroup;
  else n += r.cgroup_id ? fmt::format("(removed cgroup {})", r.cgroup_id) : std::string("(unknown)");
  if (!r.names.pod_uid.empty()) n += " pod=" + r.names.pod_uid.substr(0, 8);
  if (!r.names.container_id.empty()) n += " ctr=" + r.names.container_id;
  return n;
}

bool shown(const StatRow& row, const TopView& v) { return !v.device || row.device.name == *v.device; }

void device_lines(const StatReport& r, const TopView& v, size_t most, std::vector<std::string>& out) {
  out.push_back("DEVICE           r/s      w/s     MB/s  busy%  util%  depth  await");
  size_t n = 0;
  for (const StatRow& row : r.rows) {
    if (!shown(row, v)) continue;
    if (++n > most) break;
    const IostatRow& x = row.io;
    out.push_back(fmt::format("{:<12} {:8.1f} {:8.1f} {:8.2f} {} {:6.2f} {:6.2f} {:6.2f}", row.device.name, x.r_s, x.w_s,
                              (x.rkB_s + x.wkB_s) / 1024, pct_or_dash(row.busy_pct), x.util_raw, x.aqu_sz, await_ms(x)));
  }
}

void who_lines(const StatReport& r, const TopView& v, size_t most, std::vector<std::string>& out) {
  std::vector<WhoLine> all;
  for (const StatRow& row : r.rows)
    if (shown(row, v) && row.window_ns)
      for (const WhoRow& w : row.who) all.push_back({row.device.name, &w, static_cast<double>(*row.window_ns) / 1e9});
  std::stable_sort(all.begin(), all.end(),
                   [&](const WhoLine& a, const WhoLine& b) { return sort_key(a, v.sort) > sort_key(b, v.sort); });
  out.push_back(fmt::format("{:<12} share%      r/s      w/s     MB/s  await  {}", "BY " + std::string(who_by_name(v.by)),
                            v.by == BusyBy::Process ? "    PID COMM            CGROUP" : "CGROUP"));
  if (v.no_exact) {
    out.push_back("  no exact figures: " + *v.no_exact);
    return;
  }
  for (size_t i = 0; i < all.size() && i < most; ++i) {
    const WhoRow& w = *all[i].row;
    const double s = all[i].window_s;
    out.push_back(fmt::format("{:<12} {:6.2f} {:8.1f} {:8.1f} {:8.2f} {:6.2f}  {}", all[i].device, w.busy_share_pct,
                              top_rate(w.reads, s), top_rate(w.writes, s), top_rate(w.read_bytes + w.write_bytes, s) / 1048576.0,
                              w.latency.mean_ns / 1e6, who_name(w, v.by)));
  }
}

void ring_lines(const RingsView& rings, size_t most, std::vector<std::string>& out) {
  out.push_back(fmt::format("RINGS {} in {} process{}; SQ threads by CPU:   cpu%  work%  rings", rings.rings.size(),
                            rings.processes, rings.processes == 1 ? "" : "es"));
  for (size_t i = 0; i < rings.sq_threads.size() && i < most; ++i) {
    const SqThreadView& t = rings.sq_threads[i];
    std::string fds;
    for (int fd : t.fds) fds += (fds.empty() ? "" : ",") + std::to_string(fd);
    out.push_back(fmt::format("  sqp {:>7} {:>7} {:<15}  {}  {}  fd {}", t.tid, t.pid, t.comm,
                              t.cpu_share ? fmt::format("{:5.1f}", 100 * *t.cpu_share) : "    -",
                              t.work_ratio ? fmt::format("{:5.1f}", 100 * *t.work_ratio) : "    -", fds));
  }
}

}  // namespace

const char* top_sort_name(TopView::Sort s) {
  return s == TopView::Sort::Iops ? "io/s" : s == TopView::Sort::Bandwidth ? "MB/s" : "share";
}

TopView::Sort next_sort(TopView::Sort s) {
  return s == TopView::Sort::Share ? TopView::Sort::Iops
         : s == TopView::Sort::Iops ? TopView::Sort::Bandwidth
                                    : TopView::Sort::Share;
}

std::vector<std::string> format_top_frame(const StatReport& r, const RingsView& rings, const TopView& v) {
  std::vector<std::string> out;
  out.push_back(fmt::format("ioacct top {}  every {:.1f}s  by {}  sort {}  device {}{}", v.clock, v.interval_s,
                            who_by_name(v.by), top_sort_name(v.sort), v.device.value_or("all"),
                            v.paused ? "  [paused]" : ""));
  // The rows each part may have: the help line last, rings at most 4 and
  // devices at most 6, the cgroups or processes the rest.
  const size_t height = static_cast<size_t>(std::max(v.height, 8));
  size_t devices = 0;
  for (const StatRow& row : r.rows) devices += shown(row, v) ? 1 : 0;
  const size_t dev_rows = std::min<size_t>(devices, 6);
  const size_t ring_rows = std::min<size_t>(rings.sq_threads.size(), 4);
  const size_t fixed = 1 + (1 + dev_rows) + 1 + (1 + ring_rows) + 1;
  const size_t who_rows = height > fixed ? height - fixed : 0;
  device_lines(r, v, dev_rows, out);
  who_lines(r, v, who_rows, out);
  ring_lines(rings, ring_rows, out);
  while (out.size() + 1 < height) out.emplace_back();
  out.emplace_back(kTopHelp);
  for (std::string& line : out) line = fit(std::move(line), v.width);
  return out;
}

}  // namespace ioacct
