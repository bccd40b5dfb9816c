#pragma once
// Turns the two window-edge samples into what bench reports: the CPU broken
// down by kind of thread, each SQ thread's CPU and useful work, the devices'
// iostat columns, and the system's iowait and idle. Pure: no I/O here.
#include <cstdint>
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
  // The SqTotalTime delta where it was not this thread's (below): the kernel
  // counted the whole process there, so cpu_s is schedstat's and work_s none.
  std::optional<double> process_wide_s;
};

// Whether an SqTotalTime delta covers more than its thread. The first
// kernels with SqTotalTime read it with getrusage(RUSAGE_SELF) in the SQ
// thread: the system time of its whole process (the SQ thread is one of its
// threads), every submitter included, until a later fix counted the thread's
// own time. The thread's own schedstat runtime over
// the same window tells them apart: SqTotalTime is a part of the thread's run
// time (its loops), so it can exceed it only by the reads' skew, at most a
// tick or two on each edge; above 1.25x plus 20 ms (five ticks at HZ=250) it
// is someone else's time too. None from schedstat: nothing to check against.
inline bool sq_total_is_process_wide(double sq_total_s, std::optional<double> sched_s) {
  return sched_s && sq_total_s > 1.25 * *sched_s + 0.020;
}

// The share of an SQ thread's CPU that was work: SqWorkTime over SqTotalTime
// (or sums of them), none without CPU. Capped at 1: both come from the
// thread's runtime, which the kernel brings up to date for a running task
// only at a tick or a switch, and the fdinfo reads the total before the work
// the thread adds up itself, so the work can read up to a tick over the total
// (0.9 ms on 0.2 s seen at HZ=250).
inline std::optional<double> sq_work_ratio(double work_s, double cpu_s) {
  if (!(cpu_s > 0)) return std::nullopt;
  return work_s < cpu_s ? work_s / cpu_s : 1.0;
}

// A device a target sits on, or one under it (a loop device's backing disk,
// a dm device's slaves).
enum class DeviceRole { Target, Underlying };

struct DeviceStat {
  IostatRow row;
  DeviceRole role = DeviceRole::Target;
  // The exact busy time over the same window (--acct full, with BPF): none
  // when it was not measured. Filled by add_exact_busy(), not by account().
  std::optional<double> busy_pct, dev_pct;
  // Completions the kernel ran no BPF program for (BusyCounters::lost) and
  // the share of the window then unsure: busy lies in [busy_pct, busy_pct + unsure_pct].
  std::optional<uint64_t> lost;
  std::optional<double> unsure_pct;
  // Completions diskstats counted that no program saw at either end
  // (BusyCounters::invisible): their time, bounded by diskstats, is in unsure_pct.
  std::optional<uint64_t> invisible;
  // The time at each depth (requests between the same two points), % of the
  // same window, one per bucket of Accounting::exact_depth_low; empty when
  // not measured.
  std::vector<double> depth_pct;
};

struct SystemStat {
  std::optional<double> iowait_pct, idle_pct;  // of all CPUs' time
  // /proc/stat was read at both ends but moved no tick: a window shorter
  // than a clock tick (4 ms at HZ=250) has no figure, and is not unreadable.
  bool no_ticks = false;
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
  std::vector<uint64_t> exact_depth_low;  // the lowest depth of each of the tracker's depth buckets (0, 1, 2, 4, ...)
};

// One job's share of the CPU (several jobs in one run): its submitter
// threads, and the kernel threads that work for them, found by name: an SQ
// thread is "iou-sqp-TID" and an io-wq worker "iou-wrk-TID", TID the thread
// that made the ring.
struct JobCpu {
  double submitters_s = 0, sq_threads_s = 0, iowq_s = 0;
  double total_s = 0;                 // the three together
  std::vector<double> by_thread_s;    // each submitter, in the order given
};
JobCpu job_cpu(const SystemSample& a, const SystemSample& b, const std::vector<int>& workers);

// `workers` are the submitter threads' tids; `target_disks` the devices the
// targets sit on (others in the samples are "underlying").
Accounting account(const SystemSample& a, const SystemSample& b, const std::vector<int>& workers,
                   const std::vector<std::string>& target_disks);

// One device's exact busy counters as read at a window's edge: the fields of
// the busy tracker's BusyCounters (trace/bpf) that the window's figures
// need, cumulative, stamped with CLOCK_MONOTONIC.
struct ExactBusySample {
  uint64_t stamp_ns = 0, busy_ns = 0, dev_busy_ns = 0, lost = 0, unsure_ns = 0;
  uint64_t invisible = 0;  // BusyCounters::invisible
  bool device_span = false;  // dev_busy_ns measured (the tracker's dev% is opt-in)
  std::vector<uint64_t> depth_ns;  // time at each depth bucket
};

// Fills busy_pct, dev_pct (where measured), lost, invisible, unsure_pct and depth_pct of every device in `acc` named
// in `names`, from its counters at the window's two edges (a[i] and b[i] are
// names[i]'s), over the time between the two reads. Pure. When either edge
// was not read whole (its size is not names.size()) nothing is filled: the
// figures stay unmeasured, never 0; nor for two reads with the same stamp.
void add_exact_busy(Accounting& acc, const std::vector<std::string>& names, const std::vector<ExactBusySample>& a,
                    const std::vector<ExactBusySample>& b);

}  // namespace ioacct
