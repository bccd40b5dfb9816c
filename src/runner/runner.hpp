#pragma once
// The runner: one thread per --threads, each owning its ring (engine), its
// share of the targets and of the depth, and its own accounting. Nothing is
// shared on the hot path; results are merged once, at the end.
#include <functional>

#include "runner/result.hpp"
#include "workload/job.hpp"
#include "workload/target.hpp"

namespace ioacct {

// What the progress line shows; computed over the interval actually measured
// since the previous call (never assumed to be exactly one second).
struct Progress {
  double elapsed_s = 0;     // since the workers started
  bool ramping = false;
  double iops = 0, bytes_per_s = 0;
  uint64_t inflight = 0;
  double eta_s = -1;        // < 0: unknown
};

struct RunHooks {
  // Called once every ring is set up, before any I/O: the start-up line.
  std::function<void(const RunResult& context)> on_start;
  // Called about once a second while running (only if set).
  std::function<void(const Progress&)> on_progress;
  // Called before the --verify pass, with the --verify-delay about to be waited.
  std::function<void(int64_t delay_ns)> on_verify;
  // Waits up to `ms` for a request to stop (SIGINT/SIGTERM); true if one came.
  std::function<bool(int ms)> wait_stop_signal;
};

// Runs the job on the opened targets and returns what was measured. Throws
// NotAvailable/RuntimeError when a ring cannot be set up; per-I/O errors are
// counted in the result, and the run stops once they pass --max-errors.
RunResult run_bench(const JobSpec& job, const Targets& targets, const RunHooks& hooks);

}  // namespace ioacct
