#pragma once
// What the runner's threads share: one Control for the run, one Published
// per worker. Nothing here is touched per I/O.
//
// The memory-ordering contract:
// - `go` (release by the main thread, acquire by the workers) publishes
//   everything set before it: measure_start, deadline, max_errors,
//   sample_system, disks, ring_fds, tracker, anatomy, and the times of every
//   job that starts with the run. They are read-only after it.
// - A JobControl's `open` (release by whoever sets its times, acquire by its
//   workers) publishes start, measure_start and deadline: the main thread
//   before `go` for the first group of jobs; for a stonewalled group, the
//   last worker of the group before it to finish its I/O.
// - `ready` (release by each worker, acquire by the main thread) publishes a
//   worker's set-up: its engine, or its setup error.
// - A job's `shared_wq_fd` (release by its thread 0, acquire by its others):
//   --sq-shared's ring, kWqPending until thread 0 has one, kWqFailed if not.
// - The window's edges: the first worker to open its window (the exchange on
//   window_opened) takes the opening samples cpu_a, sys_a, busy_a, unless the
//   main thread took them before `go` (no ramp: the windows open at the
//   start, and a worker's sample would race the others' first I/O); the last to
//   close it (windows_open reaching 0) takes cpu_b, sys_b, busy_b and then
//   releases `edges_done`. Workers stay alive until they acquire it (an exited
//   thread's schedstat would vanish from the closing sample), and the main
//   thread reads the samples only after joining every worker.
// - `stop`, `errors` and `epoch` publish nothing but themselves: a worker
//   looks at `stop` once per batch, and a worker whose count has not moved
//   for kMaxWaitNs is woken from its wait (kick.hpp; --wait spin bounds its
//   spin by kMaxWaitNs instead), so a stop is seen within about 0.1 s;
//   `epoch` is answered by epoch_ack.
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
#include "trace/anatomy.hpp"
#include "trace/bpf/busy_tracker.hpp"

namespace ioacct {

inline constexpr Nanos kMaxWaitNs = 100'000'000;  // how long a worker waits before it looks up (above)

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

// One per job: when it starts and measures (CLOCK_MONOTONIC ns), and its
// --sq-shared ring. Several jobs run side by side, each a set of workers.
struct JobControl {
  // Fixed when the run is made: the job's --startdelay, the run's --ramp,
  // the job's --runtime (none: it ends by --ios or a stop).
  Nanos delay = 0, ramp = 0;
  bool timed = false;
  Nanos runtime = 0;
  // Set when the job may start (see `open` above).
  Nanos start = 0, measure_start = 0, deadline = UINT64_MAX;
  std::atomic<bool> open{false};
  std::atomic<int> shared_wq_fd{kWqPending};

  // Sets the times for a start at `t` (plus the job's delay) and opens it.
  void open_at(Nanos t) noexcept {
    start = t + delay;
    measure_start = start + ramp;
    deadline = timed ? measure_start + runtime : UINT64_MAX;
    open.store(true, std::memory_order_release);
  }
};

// The jobs between two stonewalls: when the last of its workers has finished
// its I/O, the next group's jobs open.
struct GroupControl {
  std::atomic<unsigned> running{0};  // its workers that have not finished
  std::vector<JobControl*> next;     // the next group's jobs; empty for the last group
};

struct Control {
  std::atomic<int> stop{kRunning};
  // The time series: the main thread bumps the epoch at each interval's end;
  // a worker then fills the other of its two interval histograms and says so.
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  // Set before `go` is released, read-only after. The first window to
  // open (for the time series and progress) and the last deadline known then.
  Nanos measure_start = 0, deadline = UINT64_MAX;
  uint64_t max_errors = 0;
  // The process CPU window: first worker to open its window samples A, the
  // last one to close it samples B.
  std::atomic<bool> window_opened{false};
  std::atomic<unsigned> windows_open{0};
  // The latest close of a counting thread's window: the measured window's
  // end, final once windows_open is 0 (each closer raises it first).
  std::atomic<Nanos> window_end{0};
  std::atomic<bool> edges_done{false};  // the closing sample is taken
  CpuSample cpu_a, cpu_b;
  // The kernel's view at the same edges (--acct basic/full).
  bool sample_system = false;
  bool any_sqpoll = false;  // some job's rings have SQ threads (their fdinfo may need a retry)
  std::vector<std::string> disks;
  std::vector<int> ring_fds;
  SystemSample sys_a, sys_b;
  // The exact device busy time (--acct full), read right after diskstats at
  // the same edges; empty if the tracker is not attached or a read failed.
  // The series collector reads it each interval too: tracker_mu keeps the
  // reads one at a time, as BusyTracker::read() asks (a few per run, never
  // on the hot path).
  const BusyTracker* tracker = nullptr;
  std::mutex tracker_mu;
  std::vector<BusyCounters> busy_a, busy_b;
  // --anatomy: each worker records its I/Os in its own AnatomyThread.
  AnatomyTracer* anatomy = nullptr;
  std::mutex first_error_mu;
  std::string first_error;
};

}  // namespace ioacct
