#pragma once
// The runner: one thread per --threads, each owning its ring (engine), its
// share of the targets and of the depth, and its own accounting. Nothing is
// shared on the hot path; results are merged once, at the end.
#include <functional>
#include <string>
#include <vector>

#include "runner/result.hpp"
#include "trace/attach.hpp"
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
  // --anatomy over a time-based window: its programs off and on in slices,
  // for the IOPS they cost (anatomy_slices.hpp). compare turns it off, so
  // that a variant's IOPS are all with the programs, like its other runs.
  bool anatomy_slices = true;
};

// The eBPF busy tracker of --acct full, watching every device under the
// targets (the disks they sit on and what is under those).
struct RunTracker {
  TrackerAttach attach;            // the tracker, or why there is none
  std::vector<std::string> names;  // the devices it watches, in read() order
};
// Attaches it. Its load is most of a run's start-up, so a caller making
// several runs on the same targets (compare) attaches it once and hands it
// to each run; its counters are cumulative, and each run reads them at its
// own window's edges. An empty tracker when no target is on a block device.
RunTracker attach_run_tracker(const Targets& targets);

// Runs the job on the opened targets and returns what was measured. Throws
// NotAvailable/RuntimeError when a ring cannot be set up; per-I/O errors are
// counted in the result, and the run stops once they pass --max-errors.
// With --acct full it reads `tracker` (attached by the caller for these
// targets), or attaches one of its own for the run when that is null.
RunResult run_bench(const JobSpec& job, const Targets& targets, const RunHooks& hooks,
                    const RunTracker* tracker = nullptr);

// Several jobs side by side (`targets[i]` are jobs[i]'s, opened): each its
// own set of workers, started together (or after its --startdelay, or when
// the jobs before a stonewall have ended), each measured over its own window;
// the run's figures (CPU, devices, in flight, time series) span them all.
// The run's own options (--ramp, --acct, --log-interval, --max-errors) are
// jobs.front()'s. --verify takes one job. `tracker` as for run_bench.
RunResult run_jobs(const std::vector<JobSpec>& jobs, const std::vector<const Targets*>& targets,
                   const RunHooks& hooks, const RunTracker* tracker = nullptr);

}  // namespace ioacct
