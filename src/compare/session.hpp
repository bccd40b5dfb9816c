#pragma once
// One comparison, run: the variants' shared targets (the temporary file is
// created and filled once), the interleaved schedule, and what each run
// measured, folded into a CompareResult. The command line (which words make
// which JobSpec, what is printed) stays in cli/; nothing here prints but the
// warnings the targets' checks give.
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "compare/matrix.hpp"
#include "compare/rounds.hpp"
#include "compare/summary.hpp"
#include "runner/runner.hpp"
#include "workload/job.hpp"
#include "workload/target.hpp"

namespace ioacct {

// A variant with the job its words make (as `ioacct bench WORDS` would).
struct PreparedVariant {
  Variant variant;
  JobSpec job;
};

struct CompareHooks {
  // Waits up to `ms` for a request to stop (SIGINT/SIGTERM); true if one came.
  std::function<bool(int ms)> wait_stop_signal;
  // Whether a stop signal has come, without waiting or looking for a new one.
  std::function<bool()> stop_received;
  // Before run `k` of `runs` (0-based), with the ETA from the runs so far
  // (< 0 before the first has finished). Rounds added by --until-resolved
  // grow `runs` as they are added.
  std::function<void(size_t k, size_t runs, const RunSlot& slot, const PreparedVariant& v, double eta_s)> on_run;
  // Before a round added by --until-resolved: its number (1-based, among the
  // measured rounds) and how many verdicts are still open.
  std::function<void(unsigned round, size_t open)> on_round;
};

class CompareSession {
 public:
  // Checks that the variants can share their targets (the same targets, one
  // temporary file size, no --dump-intervals), picks the baseline (`baseline`
  // names a variant; "" is the first) and that every engine can run here.
  // Throws UsageError naming the flag, or NotAvailable.
  CompareSession(std::vector<PreparedVariant> variants, const std::string& baseline);

  const std::vector<PreparedVariant>& variants() const { return variants_; }
  size_t baseline() const { return baseline_; }

  // Opens the targets for every variant: the temporary file once, by a
  // variant that moves data, reopened with each variant's flags; named
  // targets checked for each variant here and opened again for each run.
  // `should_stop` is polled while the temporary file fills. With a variant
  // at --acct full, also attaches the eBPF tracker, once for the whole
  // session: every run reads it at its own window's edges. Throws
  // UsageError/RuntimeError as open_targets does.
  void open(const std::function<bool()>& should_stop);

  // Runs the schedule (`c.warmup` rounds, then `c.repeat`, interleaved) and
  // fills c's baseline, targets, variants (with every measured run), wall_s
  // and interrupted, then summarizes. With `rounds.until_resolved`, adds
  // interleaved rounds while next_round() allows (c.repeat becomes the
  // measured rounds run, c.rounds_note says why it stopped). Stops early on a
  // stop signal (c.interrupted). Throws RuntimeError when a run stops on I/O
  // errors or fails.
  void run(CompareResult& c, const CompareHooks& hooks, const RoundPolicy& rounds = {});

 private:
  std::vector<PreparedVariant> variants_;
  size_t baseline_ = 0;
  bool temp_ = false;
  Targets shared_;               // the temporary file, opened once
  std::vector<Targets> targets_; // per variant: reopened temporary file (empty for named targets)
  std::vector<TargetInfo> info_;
  std::optional<RunTracker> tracker_;  // --acct full: one for every run
};

// "randread 4 KiB O_DIRECT, uring, depth 1": a variant's line in the reports.
std::string describe_job(const JobSpec& j);

}  // namespace ioacct
