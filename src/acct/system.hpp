#pragma once
// What the kernel says about the run, sampled at the measured window's edges
// only: /proc/diskstats for the targets' devices, /proc/self/task/*/schedstat
// for every thread (ours, the SQ threads, io-wq workers), the rings' fdinfo
// (SQ thread CPU and work time), /proc/stat and cpuidle. Two samples per run,
// so nothing here is on the hot path.
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "acct/procfs.hpp"

namespace ioacct {

// The block devices under a path: the whole disk holding it and, for stacked
// devices (dm, md, loop), what is underneath. Names as in /sys/class/block.
struct DeviceChain {
  std::string device;                // "vda1", "loop0", "" if none (tmpfs)
  std::string disk;                  // the whole disk: "vda"
  std::vector<std::string> underlying;  // slaves / a loop device's backing disk, recursively
};
DeviceChain resolve_device(unsigned major, unsigned minor);

struct TaskTime {
  std::string comm;
  uint64_t runtime_ns = 0;  // schedstat: time on CPU
};

struct RingTime {
  int fd = -1;
  std::optional<uint64_t> sq_thread;       // tid of the SQ thread, when there is one
  std::optional<uint64_t> sq_total_us;     // SqTotalTime (6.x)
  std::optional<uint64_t> sq_work_us;      // SqWorkTime
};

struct SystemSample {
  uint64_t stamp_ns = 0;
  std::map<std::string, DiskStats> disks;   // by name, the devices asked for
  std::map<int, TaskTime> tasks;            // by tid, every thread of this process
  std::vector<RingTime> rings;
  std::vector<uint64_t> cpu_ticks;          // /proc/stat "cpu" line: user nice system idle iowait irq softirq steal
  std::optional<std::map<std::string, uint64_t>> cpuidle_us;  // state name -> residency, all CPUs; none if no cpuidle
};

// Time a walk of many rings may spend reading busy rings' fdinfo again,
// shared by all of them (CLOCK_MONOTONIC ns): one process holding many rings
// whose locks are busy, or whose SqThread reads -1, must not stall the walk.
struct FdinfoRetryBudget {
  uint64_t left_ns = 0;
  bool spent() const { return left_ns == 0; }
};

// A ring's /proc/PID/fdinfo/FD text, read again (up to `attempts` times,
// yielding between) while the ring's lock was busy: 6.x prints everything
// after "ino:" only when its trylock on the ring succeeds, and older kernels
// print "SqThread: -1" for a SQPOLL ring (`sqpoll`) in that case. "" if the
// file cannot be read (the process exited, the fd closed). The last text read
// is returned even if the lock was never had: then it has no "SqThread".
// With a `budget`, the looks after the first stop when it is spent, and the
// time they took is taken from it.
std::string read_ring_fdinfo(const std::string& path, bool sqpoll, int attempts,
                             FdinfoRetryBudget* budget = nullptr);

// Whether a complete fdinfo read that says "SqThread: -1" is final (the ring
// has no SQ thread): true on kernels that print nothing past "ino:" without
// the ring's lock (6.16+, or once a read without "SqThread" has been seen in
// this process); before, the line reads -1 also when the lock was busy.
bool fdinfo_sq_thread_final();

// `sqpoll`: the rings have SQ threads, whose fdinfo lines may need a retry.
// `tasks`: also every thread's schedstat, /proc/stat and cpuidle (the window's
// edges); without, only devices and rings (the time series, each interval).
SystemSample sample_system(const std::vector<std::string>& disks, const std::vector<int>& ring_fds, bool sqpoll,
                           bool tasks = true);

// iostat -x columns for one device over an interval, with the formulas of
// sysstat 12.6 (iostat.c write_ext_stat, common.c compute_ext_disk_stats).
// `interval_s` is iostat's: the /proc/uptime delta, in 1/100 s, divided by 100.
// Awaits in ms, sizes in kB (1024 bytes, as iostat), rates per second.
struct IostatRow {
  std::string device;
  double r_s = 0, w_s = 0, rkB_s = 0, wkB_s = 0, r_await = 0, w_await = 0, aqu_sz = 0, areq_sz = 0, util = 0;
  uint64_t reads = 0, writes = 0;  // completed in the interval
  // The rest of iostat -x's columns (discards and flushes are 0 on kernels
  // that do not count them: diskstats with 11 or 15 fields).
  double d_s = 0, f_s = 0, dkB_s = 0, rrqm_s = 0, wrqm_s = 0, drqm_s = 0;
  double rrqm_pct = 0, wrqm_pct = 0, drqm_pct = 0;      // merged / (merged + completed)
  double d_await = 0, f_await = 0;
  double rareq_sz = 0, wareq_sz = 0, dareq_sz = 0;       // kB per request
  double util_raw = 0;  // %util as iostat prints it: not capped (io_ticks can pass the interval by a tick); util is capped at 100
};
IostatRow iostat_row(const DiskStats& a, const DiskStats& b, double interval_s);

}  // namespace ioacct
