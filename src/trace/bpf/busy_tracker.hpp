#pragma once
// Exact device busy time from the block layer's tracepoints (eBPF, libbpf).
//
// A request's accounting span runs from block_io_start to block_io_done, the
// points where the block layer updates /proc/diskstats. One program, at the
// completion, logs each request's whole interval from the kernel's own start
// stamp; the reader merges the logs, with the kernel's own view of every
// request of the queue (a sweep), into exact unions and depth distributions,
// and says how unsure they are. See docs/design.md ("Exact busy time").
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "trace/bpf/busy_round.hpp"

namespace ioacct {

struct BusyDevice {  // what to watch, resolved by the caller
  std::string name;  // "vda", "vda1", "loop0"
  unsigned major = 0, minor = 0;
};

// Attribution: whose requests made the device busy (stat --by, export
// --per-cgroup). Cgroup costs one more program per I/O, at the completion;
// Process adds one where the request starts, in the submitting task (which
// costs it: docs/design.md, "Who is using the disk").
enum class BusyBy { None, Cgroup, Process };

struct BusyOptions {
  bool latency = false;      // a latency histogram per device (accounting span; costs the reader, not the I/O)
  bool device_span = false;  // dev%: also block_rq_issue (one more program, with a clock read, per I/O)
  bool bpf_stats = false;    // turn on the kernel's BPF run-time statistics while attached, for BusyCost::bpf_run_ns
  BusyBy by = BusyBy::None;  // attribution: BusyCounters::who
};

// One cgroup's or process's part of a device, cumulative like BusyCounters.
struct BusyWho {
  // The cgroup's id: the kernfs id of its directory in the hierarchy that
  // holds the block controller (its inode number there). 0: not known (a
  // request with no bio, such as a flush, or whose records were lost). By
  // process: the cgroup of its latest request.
  uint64_t cgroup = 0;
  // By process: the submitting process (tgid), 0 for a kernel thread
  // (writeback, the flush machinery); kUnknownPid when no record said.
  static constexpr uint32_t kUnknownPid = 0xffffffffu;
  uint32_t pid = kUnknownPid;
  // By process: its name (/proc/PID/comm) when the tracker first saw it, so
  // that a process gone by the report keeps it; empty: gone already.
  std::string comm;
  enum Dir { kRead, kWrite, kOther, kDirs };  // kOther: discards, flushes, zeroing
  uint64_t ios[kDirs] = {}, bytes[kDirs] = {};  // completed requests and their bytes
  // Completed requests whose op and bytes no record said (counted as ios of
  // kOther too).
  uint64_t unpaired = 0;
  uint64_t share_ns = 0;     // its share of busy_ns (busy_shares(): the shares of a device add up to busy_ns)
  uint64_t inflight_ns = 0;  // time with >= 1 of its requests certainly in flight
  std::vector<uint64_t> latency_count;  // completions per BusyCounters::who_latency_le_ns bucket
  uint64_t latency_sum_ns = 0;
};

// Cumulative since the tracker started counting (attach_ns), up to stamp_ns.
// Deltas of two reads are the figures of the window between them; the
// truth lies in [busy_ns, busy_ns + unsure_ns] for every window.
struct BusyCounters {
  uint64_t stamp_ns = 0;   // CLOCK_MONOTONIC of the read: every open span is counted up to it
  uint64_t attach_ns = 0;  // counting began: sum(depth_ns) == stamp_ns - attach_ns
  uint64_t busy_ns = 0;    // certainly >= 1 request between block_io_start and block_io_done
  // Maybe busy: a request whose end no program saw, completions no program
  // saw at all (bounded by diskstats), a record the logs had no room for
  // (docs/design.md, "What each figure bounds").
  uint64_t unsure_ns = 0;
  static constexpr int kDepthBuckets = kBusyDepthBuckets;  // 0, 1, 2-3, ..., 128-255, 256+
  uint64_t depth_ns[kDepthBuckets] = {};                   // time at each count of requests certainly in flight
  bool device_span = false;                                // dev% traced; dev_* are 0 otherwise
  uint64_t dev_busy_ns = 0, dev_unsure_ns = 0;             // block_rq_issue .. block_io_done, likewise
  uint64_t started = 0, done = 0, merged = 0;              // requests first known (sweep or end), completing, merged away
  uint64_t in_flight = 0;                                  // held in flight at stamp_ns (the sweep showed it, no end seen)
  uint64_t lost = 0;           // requests whose end no program saw (the kernel showed them gone)
  uint64_t unseen_starts = 0;  // requests first seen after a sweep should have found them (after the attach settled)
  // Time such requests may have covered before the previous read of this
  // tracker: the report that ended there may have been short of it.
  uint64_t late_ns = 0;
  uint64_t missed = 0;         // runs the kernel skipped for recursion (all devices, all programs)
  uint64_t dropped = 0;        // records the logs had no room for (all devices)
  // Completions diskstats counted between two reads that no program saw;
  // the idle time they may have covered is in unsure (bounded by
  // diskstats' latency sum; docs/design.md, "What each figure bounds").
  uint64_t invisible = 0;
  std::vector<uint64_t> latency_le_ns;  // latency bucket upper bounds (ns), with BusyOptions::latency
  std::vector<uint64_t> latency_count;  // completions per bucket (not cumulative over buckets)
  uint64_t latency_sum_ns = 0, latency_max_ns = 0;
  // With BusyOptions::by: per cgroup or process, by an index that stays the
  // same for the tracker's life (an entry once made is never moved), so
  // that two reads' entries at one index are one cgroup's or process's.
  std::vector<BusyWho> who;
  std::vector<uint64_t> who_latency_le_ns;  // latency bucket upper bounds (ns) of BusyWho::latency_count
};

// What the tracker itself costs, cumulative since attach, for all devices.
struct BusyCost {
  uint64_t completions = 0;   // requests completed on the watched devices (the I/Os to spread it over)
  uint64_t user_cpu_ns = 0;   // CPU time of the reader's rounds (draining logs, merging), in this process
  std::optional<uint64_t> bpf_run_ns;  // the programs' run time, when kernel.bpf_stats_enabled is on
  uint64_t bpf_runs = 0;               // their runs (with bpf_run_ns)
};

class BusyTracker {
 public:
  // Loads and attaches the programs for `devices` (any number: every map is
  // sized at load), then waits until every request in flight at attach has
  // left (at most ~0.3 s; see docs/design.md), so that the first read starts
  // a whole window. Throws NotAvailable with a one-line reason a person can
  // act on when BPF, BTF or the tracepoints are missing or not permitted.
  static std::unique_ptr<BusyTracker> attach(const std::vector<BusyDevice>& devices, const BusyOptions& options = {});
  ~BusyTracker();  // detaches; the kernel is left as it was (programs and maps freed)
  BusyTracker(const BusyTracker&) = delete;
  BusyTracker& operator=(const BusyTracker&) = delete;

  // Same order as `devices`. Safe from any thread (a mutex; a background
  // thread also drains the logs so that they never fill).
  std::vector<BusyCounters> read() const;
  BusyCost cost() const;
  // Which tracepoints bound the accounting span: "block_io_start/block_io_done".
  const std::string& source() const;

  struct Impl;

 private:
  explicit BusyTracker(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace ioacct
