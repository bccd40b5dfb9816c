#pragma once
// What the runner's threads share: one Control for the run, one Published
// per worker. Nothing here is touched per I/O.
//
// The memory-ordering contract:
// - `go` (release by the main thread, acquire by the workers) publishes
//   everything set before it: measure_start, deadline, max_errors,
//   sample_system, disks, ring_fds, tracker, anatomy. They are read-only after it.
// - `ready` (release by each worker, acquire by the main thread) publishes a
//   worker's set-up: its engine, or its setup error.
// - `shared_wq_fd` (release by thread 0, acquire by the others): --sq-shared's
//   ring, kWqPending until thread 0 has one, kWqFailed if it could not.
// - The window's edges: the first worker to open its window (the exchange on
//   window_opened) takes the opening samples cpu_a, sys_a, busy_a; the last to
//   close it (windows_open reaching 0) takes cpu_b, sys_b, busy_b and then
//   releases `edges_done`. Workers stay alive until they acquire it (an exited
//   thread's schedstat would vanish from the closing sample), and the main
//   thread reads the samples only after joining every worker.
// - `stop`, `errors` and `epoch` publish nothing but themselves: a worker
//   looks at `stop` once per batch, and every wait is bounded by kMaxWaitNs,
//   so a stop is seen within 0.1 s; `epoch` is answered by epoch_ack.
// - Published: a worker's relaxed stores once per batch, which on x86 are
//   plain moves (no atomic read-modify-write per I/O); the main thread only
//   reads them for the progress line and the time series. epoch_ack and done
//   are release stores: the histogram of an acknowledged epoch, and the
//   worker's results once done, are then the main thread's to read.
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "acct/clock.hpp"
#include "acct/cpu.hpp"
#include "acct/system.hpp"
#include "monitor/anatomy.hpp"
#include "monitor/bpf/busy_tracker.hpp"

namespace ioacct {

inline constexpr Nanos kMaxWaitNs = 100'000'000;  // bound on any wait, so a stop is seen within 0.1 s

// Control::stop. The first reason to stop stays the reason (compare-and-swap
// from kRunning), except kFatal, which overrides.
enum Stop : int { kRunning = 0, kInterrupted = 1, kErrors = 2, kFatal = 3 };

inline constexpr int kWqPending = -2, kWqFailed = -1;

// Written by one worker, read by the main thread.
struct alignas(64) Published {
  std::atomic<uint64_t> completed{0};  // whole run, ramp included
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> inflight{0};
  std::atomic<uint64_t> measured{0};
  std::atomic<uint32_t> epoch_ack{0};  // --log-interval: the epoch whose histogram it now fills
  std::atomic<bool> done{false};
};

struct Control {
  std::atomic<int> stop{kRunning};
  std::atomic<int> shared_wq_fd{kWqPending};  // --sq-shared: thread 0's ring
  // The time series: the main thread bumps the epoch at each interval's end;
  // a worker then fills the other of its two interval histograms and says so.
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  // Set before `go` is released, read-only after.
  Nanos measure_start = 0, deadline = UINT64_MAX;
  uint64_t max_errors = 0;
  // The process CPU window: first worker to open its window samples A, the
  // last one to close it samples B.
  std::atomic<bool> window_opened{false};
  std::atomic<unsigned> windows_open{0};
  std::atomic<bool> edges_done{false};  // the closing sample is taken
  CpuSample cpu_a, cpu_b;
  // The kernel's view at the same edges (--acct basic/full).
  bool sample_system = false;
  std::vector<std::string> disks;
  std::vector<int> ring_fds;
  SystemSample sys_a, sys_b;
  // The exact device busy time (--acct full), read right after diskstats at
  // the same edges; empty if the tracker is not attached or a read failed.
  const BusyTracker* tracker = nullptr;
  std::vector<BusyCounters> busy_a, busy_b;
  // --anatomy: each worker records its I/Os in its own AnatomyThread.
  AnatomyTracer* anatomy = nullptr;
  std::mutex first_error_mu;
  std::string first_error;
};

}  // namespace ioacct
