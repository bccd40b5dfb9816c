#pragma once
// Exact device busy time from the block layer's tracepoints (eBPF, libbpf).
//
// Two spans per request: the accounting span (block_io_start .. block_io_done,
// the span /proc/diskstats accounts) and the device span (block_rq_issue ..
// block_rq_complete, the driver's). Per device the kernel keeps, under a
// bpf_spin_lock, the in-flight count and the time since its last change; no
// per-I/O event crosses to user space. See docs/design.md ("Exact busy time").
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

struct busy_bpf;

namespace ioacct {

struct BusyDevice {            // what to watch, resolved by the caller
  std::string name;            // "vda", "vda1", "loop0"
  unsigned major = 0, minor = 0;
};

struct BusyCounters {          // cumulative since attach, extended to stamp_ns
  uint64_t stamp_ns = 0;       // CLOCK_MONOTONIC (= bpf_ktime_get_ns) when read
  uint64_t busy_ns = 0;        // >= 1 request between the accounting points (block_io_start..block_io_done)
  uint64_t dev_busy_ns = 0;    // >= 1 request between block_rq_issue..block_rq_complete
  static constexpr int kDepthBuckets = 6;            // 0, 1, 2-3, 4-7, 8-15, 16+
  uint64_t depth_ns[kDepthBuckets] = {};             // time at each in-flight depth (accounting span)
  uint64_t started = 0, done = 0;                    // requests seen
  uint64_t untracked = 0;      // requests not counted (in flight at attach, table full): say so when > 0
  std::vector<uint64_t> latency_le_ns;               // latency bucket upper bounds (ns), when latency is on
  std::vector<uint64_t> latency_count;               // cumulative count per bucket (not per-le-cumulative)
  uint64_t latency_sum_ns = 0;
  // Added by the stat issue:
  uint64_t latency_max_ns = 0;  // the longest accounting span completed (ns), when latency is on
  uint64_t in_flight = 0;       // requests in flight (accounting span) at stamp_ns
  uint64_t attach_ns = 0;       // CLOCK_MONOTONIC when counting began: sum(depth_ns) == stamp_ns - attach_ns
  uint64_t missed = 0;          // tracepoint hits the kernel did not run a program for (all devices; see below)
  // Completions the kernel ran no program for although it counted them (it
  // skips BPF tracepoint programs now and then under load, without counting
  // a miss: docs/design.md, "Lost completions"), found afterwards from the
  // request's own state. The time one of them was the only request counted
  // in flight is unsure_ns, left out of busy_ns: the true busy time lies in
  // [busy_ns, busy_ns + unsure_ns].
  uint64_t lost = 0;
  uint64_t unsure_ns = 0;
  uint64_t contended = 0;       // changes dropped after losing the CAS race many times in a row (never seen)
  bool device_span = true;      // false: attached without it, dev_busy_ns is not measured
};

// The depth bucket of `n` requests in flight: 0, 1, 2-3, 4-7, 8-15, 16+.
int busy_depth_bucket(uint64_t n) noexcept;
// Lower bound of each depth bucket, for labels: 0, 1, 2, 4, 8, 16.
uint64_t busy_depth_low(int bucket) noexcept;

class BusyTracker {
 public:
  // Loads and attaches the BPF programs for `devices` (at most 64). Throws
  // NotAvailable with a one-line reason a person can act on when BPF, BTF or
  // the tracepoints are missing or not permitted. `latency`: also a latency
  // histogram of the accounting span per device. `device_span` false: no
  // block_rq_issue/complete programs (half the events per I/O, half the
  // cost; dev_busy_ns stays 0 and BusyCounters::device_span says so).
  static std::unique_ptr<BusyTracker> attach(const std::vector<BusyDevice>& devices, bool latency,
                                             bool device_span = true);
  ~BusyTracker();  // detaches; the kernel is left as it was (programs and maps freed)
  BusyTracker(const BusyTracker&) = delete;
  BusyTracker& operator=(const BusyTracker&) = delete;

  // Same order as `devices`; reads maps, drains nothing. Safe from one thread
  // at any time while attached (not concurrently from two).
  std::vector<BusyCounters> read() const;
  // `missed`: the kernel skips a BPF program that would run nested inside
  // itself on the same CPU (an interrupt arriving while it runs). Each
  // program is attached twice so that the second copy takes such a hit
  // (docs/design.md); what neither copy could run is counted here, and
  // figures over a window where it grew may be off.
  // Which tracepoints bound the accounting span: "block_io_start/block_io_done",
  // or "block_rq_issue/block_rq_complete" on kernels before 6.5.
  const std::string& source() const { return source_; }

 private:
  BusyTracker() = default;
  busy_bpf* skel_ = nullptr;
  std::vector<BusyDevice> devices_;
  bool latency_ = false;
  bool device_span_ = true;
  uint64_t attach_ns_ = 0;
  std::string source_;
};

}  // namespace ioacct
