#pragma once
// Every io_uring on the machine, from /proc: each process's fds that link to
// "anon_inode:[io_uring]" and their fdinfo. scan_rings() does the I/O (one
// snapshot); rings_view() is pure and turns two snapshots into what
// `ioacct rings` and `ioacct export` show: per ring sizes and queues, per SQ
// thread (rings sharing one grouped) CPU and useful work over the interval.
// Processes and fds that vanish during a scan are skipped: that is normal.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "acct/procfs.hpp"

namespace ioacct {

// One ring at one instant, as its fdinfo printed it. Every figure is missing
// (nullopt) when the kernel did not print it: an older kernel, or the ring's
// lock stayed busy every time we looked (`locked` false) or the walk's retry
// budget was spent: "not read: ring busy".
struct RingSnapshot {
  int pid = 0;
  std::string comm;  // the process's (/proc/PID/comm)
  int fd = -1;
  bool locked = false;  // fdinfo's lock-protected part was printed
  // Whether the ring has an SQ thread is known: `locked`, and its SqThread
  // line is final (see fdinfo_sq_thread_final). When false the SQ figures
  // are missing, not zero: the ring may be SQPOLL.
  bool sq_known = false;
  std::optional<uint64_t> sq_entries, cq_entries;   // SqMask+1, CqMask+1
  std::optional<uint64_t> sq_pending, cq_pending;   // SQEs (tail-head), CQEs
  std::optional<uint64_t> overflow;                 // CQEs on CqOverflowList
  std::optional<uint64_t> user_files, user_bufs;    // registered
  std::optional<uint64_t> sq_thread;                // tid; none without SQPOLL
  std::optional<int64_t> sq_thread_cpu;             // SqThreadCpu: where it runs (or is pinned)
  std::optional<uint64_t> sq_total_us, sq_work_us;  // SqTotalTime, SqWorkTime: cumulative µs
  std::string sq_cpus_allowed;                      // the SQ thread's Cpus_allowed_list, "" if unknown
  std::optional<uint64_t> sq_runtime_ns;            // the SQ thread's own run time (schedstat), to check SqTotalTime by
  FdInfo fields;                                    // every line, unknown ones included
};

struct RingScan {
  uint64_t stamp_ns = 0;  // CLOCK_MONOTONIC, taken after the walk
  std::vector<RingSnapshot> rings;  // by pid, then fd
  size_t unreadable = 0;            // processes whose fds we may not list (EACCES)
  size_t busy = 0;                  // rings in `rings` with !sq_known: not read, ring busy
};

// What one walk may spend, over all its rings, reading busy rings' fdinfo
// again. The first look at every ring is not counted. A walk then costs
// one read per ring plus this, however many rings a process holds busy.
inline constexpr std::chrono::milliseconds kRingRetryBudget{50};

// Walks /proc (or only /proc/PID). Never throws for a process or fd that
// went away; a process we may not read is counted in `unreadable`.
RingScan scan_rings(std::optional<int> pid = std::nullopt);

struct SqThreadView {
  uint64_t tid = 0;
  int pid = 0;       // the process that owns it
  std::string comm;  // that process's comm (the thread itself is iou-sqp-PID)
  std::optional<int64_t> cpu;  // SqThreadCpu
  std::string cpus_allowed;    // "" if unknown
  bool pinned = false;         // allowed on exactly one CPU
  std::vector<int> fds;        // the rings it serves
  // Over the interval, from SqTotalTime/SqWorkTime deltas; none when the
  // thread was not in both snapshots or the kernel lacks the lines.
  std::optional<double> cpu_s, work_s;
  std::optional<double> cpu_share;   // cpu_s / interval: 1.0 = one whole CPU
  std::optional<double> work_ratio;  // work_s / cpu_s
  bool mostly_idle = false;          // uses > 5% of a CPU and under half of it is work
  // The SqTotalTime delta where it exceeded the thread's own run time
  // (sq_total_is_process_wide): the kernel counts the whole process there,
  // so cpu_s is the thread's schedstat time and there is no work figure.
  std::optional<double> process_wide_s;
};

struct RingsView {
  double interval_s = 0;
  std::vector<RingSnapshot> rings;         // busiest SQ thread first, then most pending
  std::vector<SqThreadView> sq_threads;    // most CPU first
  size_t processes = 0;                    // with at least one ring
  size_t unreadable = 0;
};

// `before` may be empty (one snapshot: no rates). Pure.
RingsView rings_view(const RingScan& before, const RingScan& after);

}  // namespace ioacct
