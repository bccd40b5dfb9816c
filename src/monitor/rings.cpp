#include "monitor/rings.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>
#include <map>
#include <sstream>

#include "acct/accounting.hpp"
#include "acct/clock.hpp"
#include "acct/system.hpp"
#include "common/files.hpp"

namespace ioacct {
namespace {

namespace fs = std::filesystem;

std::optional<int> to_int(std::string_view s) {
  int v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (s.empty() || ec != std::errc{} || p != s.data() + s.size()) return std::nullopt;
  return v;
}

// A value of the thread's status file ("Cpus_allowed_list:\t0-1").
std::string status_value(const std::string& path, std::string_view key) {
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) {
    if (line.size() > key.size() && line.compare(0, key.size(), key) == 0 && line[key.size()] == ':') {
      size_t i = key.size() + 1;
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      return line.substr(i);
    }
  }
  return "";
}

// Does any thread of `pid` look like an SQ thread (iou-sqp-*)? Only then,
// and only on a kernel where the line reads -1 also when the ring's lock is
// busy (before 6.16), may an "SqThread: -1" mean "lock busy" rather than
// "no SQPOLL".
bool has_sq_thread(int pid) {
  std::error_code ec;
  for (const auto& t : fs::directory_iterator(fmt::format("/proc/{}/task", pid), ec))
    if (read_first_line(t.path().string() + "/comm").rfind("iou-sqp-", 0) == 0) return true;
  return false;
}

RingSnapshot snapshot(int pid, int fd, const std::string& comm, bool maybe_sqpoll, FdinfoRetryBudget& budget) {
  RingSnapshot r;
  r.pid = pid;
  r.fd = fd;
  r.comm = comm;
  // A busy ring's lock is taken by its SQ thread or submitter most of the
  // time (a submitter on the fused path holds it for all but a few per cent:
  // 200 looks missed 1 time in 30 at depth 16); 2000 looks cost ~20 ms at
  // most, for that ring only, and all rings of a walk share `budget`.
  const std::string text =
      read_ring_fdinfo(fmt::format("/proc/{}/fdinfo/{}", pid, fd), maybe_sqpoll, 2000, &budget);
  r.fields = parse_fdinfo(text);
  r.locked = r.fields.contains("SqThread");
  if (auto m = fdinfo_hex(r.fields, "SqMask")) r.sq_entries = *m + 1;
  if (auto m = fdinfo_hex(r.fields, "CqMask")) r.cq_entries = *m + 1;
  r.sq_pending = fdinfo_number(r.fields, "SQEs");
  r.cq_pending = fdinfo_number(r.fields, "CQEs");
  if (r.fields.contains("CqOverflowList")) r.overflow = fdinfo_entries(text, "CqOverflowList");
  r.user_files = fdinfo_number(r.fields, "UserFiles");
  r.user_bufs = fdinfo_number(r.fields, "UserBufs");
  r.sq_thread = fdinfo_number(r.fields, "SqThread");  // "-1" (no SQPOLL) reads as none
  if (r.sq_thread == 0u) r.sq_thread.reset();
  // -1 on a kernel where it may mean "lock busy", and the looks ran out.
  r.sq_known = r.locked && (r.sq_thread || !maybe_sqpoll);
  if (auto it = r.fields.find("SqThreadCpu"); it != r.fields.end() && r.sq_thread) {
    int64_t cpu = 0;
    auto [p, ec] = std::from_chars(it->second.data(), it->second.data() + it->second.size(), cpu);
    if (ec == std::errc{} && p == it->second.data() + it->second.size() && cpu >= 0) r.sq_thread_cpu = cpu;
  }
  if (r.sq_thread) {
    r.sq_total_us = fdinfo_number(r.fields, "SqTotalTime");
    r.sq_work_us = fdinfo_number(r.fields, "SqWorkTime");
    r.sq_cpus_allowed = status_value(fmt::format("/proc/{}/task/{}/status", pid, *r.sq_thread), "Cpus_allowed_list");
    std::istringstream st(read_first_line(fmt::format("/proc/{}/task/{}/schedstat", pid, *r.sq_thread)));
    if (uint64_t ns = 0; st >> ns) r.sq_runtime_ns = ns;
  }
  return r;
}

void scan_process(int pid, RingScan& out, FdinfoRetryBudget& budget) {
  const std::string fd_dir = fmt::format("/proc/{}/fd", pid);
  std::error_code ec;
  fs::directory_iterator it(fd_dir, ec);
  if (ec) {
    // EACCES: not ours to read (counted); ENOENT: exited meanwhile (normal).
    if (ec.value() == EACCES || ec.value() == EPERM) ++out.unreadable;
    return;
  }
  std::vector<int> ring_fds;
  for (; it != fs::directory_iterator(); it.increment(ec)) {
    if (ec) break;  // the process exited mid-walk
    const auto fd = to_int(it->path().filename().string());
    if (!fd) continue;
    std::error_code lec;
    const fs::path target = fs::read_symlink(it->path(), lec);
    if (!lec && target == "anon_inode:[io_uring]") ring_fds.push_back(*fd);
  }
  if (ring_fds.empty()) return;
  std::sort(ring_fds.begin(), ring_fds.end());
  const std::string comm = read_first_line(fmt::format("/proc/{}/comm", pid));
  const bool maybe_sqpoll = !fdinfo_sq_thread_final() && has_sq_thread(pid);
  for (int fd : ring_fds) {
    RingSnapshot r = snapshot(pid, fd, comm, maybe_sqpoll, budget);
    if (r.fields.empty()) continue;  // the fd closed or the process exited
    out.busy += !r.sq_known;
    out.rings.push_back(std::move(r));
  }
}

uint64_t delta(uint64_t a, uint64_t b) { return b - std::min(a, b); }

}  // namespace

RingScan scan_rings(std::optional<int> pid) {
  RingScan out;
  FdinfoRetryBudget budget{static_cast<uint64_t>(std::chrono::nanoseconds(kRingRetryBudget).count())};
  if (pid) {
    scan_process(*pid, out, budget);
  } else {
    std::vector<int> pids;
    std::error_code ec;
    for (const auto& e : fs::directory_iterator("/proc", ec))
      if (auto p = to_int(e.path().filename().string())) pids.push_back(*p);
    std::sort(pids.begin(), pids.end());
    for (int p : pids) scan_process(p, out, budget);
  }
  out.stamp_ns = now_ns();
  return out;
}

RingsView rings_view(const RingScan& before, const RingScan& after) {
  RingsView v;
  v.interval_s = before.stamp_ns && after.stamp_ns > before.stamp_ns
                     ? static_cast<double>(after.stamp_ns - before.stamp_ns) / 1e9
                     : 0;
  v.unreadable = after.unreadable;
  v.rings = after.rings;
  // The figures of each SQ thread in a snapshot: from any of its rings (a
  // shared thread prints the same SqTotalTime/SqWorkTime on each).
  auto by_tid = [](const RingScan& s) {
    std::map<uint64_t, const RingSnapshot*> m;
    for (const auto& r : s.rings)
      if (r.sq_thread && r.sq_total_us && !m.contains(*r.sq_thread)) m[*r.sq_thread] = &r;
    return m;
  };
  const auto was = by_tid(before);
  std::map<uint64_t, size_t> index;
  for (const auto& r : v.rings) {
    if (!r.sq_thread) continue;
    auto [it, fresh] = index.try_emplace(*r.sq_thread, v.sq_threads.size());
    if (!fresh) {
      v.sq_threads[it->second].fds.push_back(r.fd);
      continue;
    }
    SqThreadView t;
    t.tid = *r.sq_thread;
    t.pid = r.pid;
    t.comm = r.comm;
    t.cpu = r.sq_thread_cpu;
    t.cpus_allowed = r.sq_cpus_allowed;
    t.pinned = !t.cpus_allowed.empty() && to_int(t.cpus_allowed).has_value();
    t.fds.push_back(r.fd);
    v.sq_threads.push_back(t);
  }
  for (auto& t : v.sq_threads) {
    // Any ring of this thread that has the figures now.
    const RingSnapshot* now = nullptr;
    for (const auto& r : v.rings)
      if (r.sq_thread == t.tid && r.sq_total_us) now = &r;
    auto then = was.find(t.tid);
    if (!now || then == was.end() || v.interval_s <= 0) continue;
    t.cpu_s = static_cast<double>(delta(*then->second->sq_total_us, *now->sq_total_us)) / 1e6;
    std::optional<double> sched_s;
    if (now->sq_runtime_ns && then->second->sq_runtime_ns)
      sched_s = static_cast<double>(delta(*then->second->sq_runtime_ns, *now->sq_runtime_ns)) / 1e9;
    if (sq_total_is_process_wide(*t.cpu_s, sched_s)) {
      t.process_wide_s = t.cpu_s;
      t.cpu_s = sched_s;
    }
    t.cpu_share = *t.cpu_s / v.interval_s;
    if (!t.process_wide_s && now->sq_work_us && then->second->sq_work_us) {
      t.work_s = static_cast<double>(delta(*then->second->sq_work_us, *now->sq_work_us)) / 1e6;
      t.work_ratio = sq_work_ratio(*t.work_s, *t.cpu_s);
      t.mostly_idle = *t.cpu_share > 0.05 && *t.work_s < 0.5 * *t.cpu_s;
    }
  }
  std::stable_sort(v.sq_threads.begin(), v.sq_threads.end(),
                   [](const SqThreadView& a, const SqThreadView& b) { return a.cpu_s.value_or(-1) > b.cpu_s.value_or(-1); });
  std::map<uint64_t, double> cpu_of;
  for (const auto& t : v.sq_threads) cpu_of[t.tid] = t.cpu_s.value_or(0);
  auto key = [&](const RingSnapshot& r) {
    const double cpu = r.sq_thread ? cpu_of[*r.sq_thread] : -1.0;
    return std::pair(cpu, r.sq_pending.value_or(0) + r.cq_pending.value_or(0));
  };
  std::stable_sort(v.rings.begin(), v.rings.end(),
                   [&](const RingSnapshot& a, const RingSnapshot& b) { return key(a) > key(b); });
  std::vector<int> pids;
  for (const auto& r : v.rings) pids.push_back(r.pid);
  std::sort(pids.begin(), pids.end());
  v.processes = static_cast<size_t>(std::unique(pids.begin(), pids.end()) - pids.begin());
  return v;
}

}  // namespace ioacct
