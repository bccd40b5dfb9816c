#pragma once
// Turns the two window-edge samples into what bench reports: the CPU broken
// down by kind of thread, each SQ thread's CPU and useful work, the devices'
// iostat columns, and the system's iowait and idle. Pure: no I/O here.
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "acct/system.hpp"

namespace ioacct {

struct CpuBreakdown {
  double submitters_s = 0;  // ioacct's worker threads
  double sq_threads_s = 0;  // iou-sqp-*: SQPOLL threads
  double iowq_s = 0;        // iou-wrk-*: io-wq workers
  double other_s = 0;       // the rest that lived through the window (main thread)
  double total_s = 0;       // sum of the above (schedstat)
};

struct SqThreadStat {
  uint64_t tid = 0;
  unsigned rings = 0;                 // rings sharing it
  double cpu_s = 0;                   // CPU it used in the window
  std::optional<double> work_s;       // of which useful work (SqWorkTime); none if the kernel lacks it
  std::string source;                 // "fdinfo SqTotalTime" or "schedstat"
};

struct DeviceStat {
  IostatRow row;
  std::string role;  // "target", "underlying"
  // The exact busy time over the same window (--acct full, with BPF): none
  // when it was not measured. Filled by the runner, not by account().
  std::optional<double> busy_pct, dev_pct;
  // Completions the kernel ran no BPF program for (BusyCounters::lost) and
  // the share of the window then unsure: busy lies in [busy_pct, busy_pct + unsure_pct].
  std::optional<uint64_t> lost;
  std::optional<double> unsure_pct;
};

struct SystemStat {
  std::optional<double> iowait_pct, idle_pct;  // of all CPUs' time
  std::optional<std::map<std::string, double>> cpuidle_s;  // residency per state; none: no cpuidle
};

struct Accounting {
  double interval_s = 0;  // between the two samples, as measured
  CpuBreakdown cpu;
  std::vector<SqThreadStat> sq_threads;
  std::vector<DeviceStat> devices;
  SystemStat system;
  std::optional<std::string> exact_source;       // the BusyTracker's source() when it was attached
  std::optional<std::string> exact_unavailable;  // why it was not (no permission, no BTF)
};

// `workers` are the submitter threads' tids; `target_disks` the devices the
// targets sit on (others in the samples are "underlying").
Accounting account(const SystemSample& a, const SystemSample& b, const std::vector<int>& workers,
                   const std::vector<std::string>& target_disks);

}  // namespace ioacct
