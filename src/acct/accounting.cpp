#include "acct/accounting.hpp"

#include <algorithm>
#include <utility>

namespace ioacct {

Accounting account(const SystemSample& a, const SystemSample& b, const std::vector<int>& workers,
                   const std::vector<std::string>& target_disks) {
  Accounting r;
  r.interval_s = static_cast<double>(b.stamp_ns - a.stamp_ns) / 1e9;

  // CPU by kind of thread. A thread born inside the window counts whole; one
  // that died inside it is lost to schedstat (the process total still has it).
  for (const auto& [tid, t] : b.tasks) {
    auto it = a.tasks.find(tid);
    const uint64_t before = it == a.tasks.end() ? 0 : it->second.runtime_ns;
    const double s = static_cast<double>(t.runtime_ns - std::min(before, t.runtime_ns)) / 1e9;
    if (std::find(workers.begin(), workers.end(), tid) != workers.end()) r.cpu.submitters_s += s;
    else if (t.comm.rfind("iou-sqp-", 0) == 0) r.cpu.sq_threads_s += s;
    else if (t.comm.rfind("iou-wrk-", 0) == 0) r.cpu.iowq_s += s;
    else r.cpu.other_s += s;
    r.cpu.total_s += s;
  }

  // SQ threads: the kernel's own SqTotalTime/SqWorkTime (µs) where it has
  // them; else schedstat for the total and no work figure at all.
  for (const auto& rb : b.rings) {
    if (!rb.sq_thread) continue;
    auto same = std::find_if(r.sq_threads.begin(), r.sq_threads.end(),
                             [&](const SqThreadStat& s) { return s.tid == *rb.sq_thread; });
    if (same != r.sq_threads.end()) {  // a shared SQ thread: counted once
      ++same->rings;
      continue;
    }
    SqThreadStat s;
    s.tid = *rb.sq_thread;
    s.rings = 1;
    auto ra = std::find_if(a.rings.begin(), a.rings.end(), [&](const RingTime& x) { return x.fd == rb.fd; });
    auto tb = b.tasks.find(static_cast<int>(s.tid));
    auto ta = a.tasks.find(static_cast<int>(s.tid));
    std::optional<double> sched_s;
    if (tb != b.tasks.end())
      sched_s = static_cast<double>(tb->second.runtime_ns - (ta == a.tasks.end() ? 0 : std::min(ta->second.runtime_ns, tb->second.runtime_ns))) / 1e9;
    if (ra != a.rings.end() && rb.sq_total_us && ra->sq_total_us) {
      const double fdinfo_s = static_cast<double>(*rb.sq_total_us - std::min(*ra->sq_total_us, *rb.sq_total_us)) / 1e6;
      if (sq_total_is_process_wide(fdinfo_s, sched_s)) {
        s.cpu_s = *sched_s;
        s.process_wide_s = fdinfo_s;
        s.source = "schedstat";
      } else {
        s.cpu_s = fdinfo_s;
        s.source = "fdinfo SqTotalTime";
        if (rb.sq_work_us && ra->sq_work_us)
          s.work_s = static_cast<double>(*rb.sq_work_us - std::min(*ra->sq_work_us, *rb.sq_work_us)) / 1e6;
      }
    } else {
      s.cpu_s = sched_s.value_or(0);
      s.source = "schedstat";
    }
    r.sq_threads.push_back(s);
  }

  for (const auto& [name, db] : b.disks) {
    auto da = a.disks.find(name);
    if (da == a.disks.end()) continue;
    const bool target = std::find(target_disks.begin(), target_disks.end(), name) != target_disks.end();
    DeviceStat d;
    d.row = iostat_row(da->second, db, r.interval_s);
    d.role = target ? DeviceRole::Target : DeviceRole::Underlying;
    r.devices.push_back(std::move(d));
  }

  if (a.cpu_ticks.size() >= 5 && b.cpu_ticks.size() == a.cpu_ticks.size()) {
    uint64_t total = 0;
    // user nice system idle iowait irq softirq steal: guest time is already in user.
    for (size_t i = 0; i < std::min<size_t>(8, b.cpu_ticks.size()); ++i) total += b.cpu_ticks[i] - a.cpu_ticks[i];
    if (total) {
      r.system.idle_pct = 100.0 * static_cast<double>(b.cpu_ticks[3] - a.cpu_ticks[3]) / static_cast<double>(total);
      r.system.iowait_pct = 100.0 * static_cast<double>(b.cpu_ticks[4] - a.cpu_ticks[4]) / static_cast<double>(total);
    } else {
      r.system.no_ticks = true;
    }
  }
  if (a.cpuidle_us && b.cpuidle_us) {
    std::map<std::string, double> res;
    for (const auto& [state, us] : *b.cpuidle_us) {
      auto it = a.cpuidle_us->find(state);
      res[state] = static_cast<double>(us - (it == a.cpuidle_us->end() ? 0 : std::min(it->second, us))) / 1e6;
    }
    r.system.cpuidle_s = res;
  }
  return r;
}

JobCpu job_cpu(const SystemSample& a, const SystemSample& b, const std::vector<int>& workers) {
  JobCpu c;
  auto delta = [&](int tid, const TaskTime& t) {
    auto it = a.tasks.find(tid);
    const uint64_t before = it == a.tasks.end() ? 0 : it->second.runtime_ns;
    return static_cast<double>(t.runtime_ns - std::min(before, t.runtime_ns)) / 1e9;
  };
  for (int tid : workers) {
    auto it = b.tasks.find(tid);
    const double s = it == b.tasks.end() ? 0.0 : delta(tid, it->second);
    c.by_thread_s.push_back(s);
    c.submitters_s += s;
  }
  // The kernel names its helper threads after the thread that made them:
  // the SQ thread after the ring's creator, an io-wq worker after the thread
  // whose requests it runs (a submitter, or an SQ thread).
  std::vector<std::string> owners;
  owners.reserve(workers.size() + 4);
  for (int tid : workers) owners.push_back(std::to_string(tid));
  auto owned = [&](const std::string& comm, const char* prefix) {
    return comm.rfind(prefix, 0) == 0 && std::find(owners.begin(), owners.end(), comm.substr(8)) != owners.end();
  };
  for (const auto& [tid, t] : b.tasks)
    if (owned(t.comm, "iou-sqp-")) {
      c.sq_threads_s += delta(tid, t);
      owners.push_back(std::to_string(tid));
    }
  for (const auto& [tid, t] : b.tasks)
    if (owned(t.comm, "iou-wrk-")) c.iowq_s += delta(tid, t);
  c.total_s = c.submitters_s + c.sq_threads_s + c.iowq_s;
  return c;
}

void add_exact_busy(Accounting& acc, const std::vector<std::string>& names, const std::vector<ExactBusySample>& a,
                    const std::vector<ExactBusySample>& b) {
  if (a.size() != names.size() || b.size() != names.size()) return;
  for (auto& d : acc.devices)
    for (size_t i = 0; i < names.size(); ++i) {
      if (names[i] != d.row.device) continue;
      const ExactBusySample &x = a[i], &y = b[i];
      const double w = static_cast<double>(y.stamp_ns - x.stamp_ns);
      if (w <= 0) continue;
      d.busy_pct = 100.0 * static_cast<double>(y.busy_ns - x.busy_ns) / w;
      if (y.device_span) d.dev_pct = 100.0 * static_cast<double>(y.dev_busy_ns - x.dev_busy_ns) / w;
      d.lost = y.lost - x.lost;
      d.invisible = y.invisible - x.invisible;
      d.unsure_pct = 100.0 * static_cast<double>(y.unsure_ns - x.unsure_ns) / w;
      d.depth_pct.clear();
      if (x.depth_ns.size() == y.depth_ns.size())
        for (size_t k = 0; k < x.depth_ns.size(); ++k)
          d.depth_pct.push_back(100.0 * static_cast<double>(y.depth_ns[k] - x.depth_ns[k]) / w);
    }
}

}  // namespace ioacct
