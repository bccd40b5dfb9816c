#pragma once
// What makes one bench run a part of a fleet's: --start-at (one window for
// every host) and --tag (labels a merge keeps per host). Apart from
// bench_cmd.cpp so that the command stays one room; their rows are
// bench_fleet_rows() (cli/bench_options.hpp).
#include <vector>

#include "acct/run_context.hpp"
#include "cli/bench_cmd.hpp"
#include "runner/result.hpp"
#include "workload/job.hpp"

namespace ioacct {

// --start-at into the run's own options (jobs.front()). Throws UsageError
// naming the flag for a malformed instant or one not in the future.
void apply_start_at(const BenchArgs& a, std::vector<JobSpec>& jobs);
// The run's context with --tag's labels. Throws UsageError for a tag that
// is not KEY=VALUE or a key given twice.
RunContext fleet_context(const BenchArgs& a);
// After a --start-at run: a warning when the window opened late (the set-up
// took longer than the time left), saying what to do.
void warn_late_start(const std::vector<JobSpec>& jobs, const RunResult& r);

}  // namespace ioacct
