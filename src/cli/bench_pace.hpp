#pragma once
// bench's pace flags: how fast each thread goes (--rate-iops, --rate and
// how their I/Os are spaced), the floors it must hold (--rate-min,
// --rate-iops-min over --rate-cycle), and the latency a depth must meet
// (--latency-target and its window and percentile).
#include <CLI/CLI.hpp>

#include "cli/bench_cmd.hpp"
#include "workload/job.hpp"

namespace ioacct {

void add_pace_options(CLI::App* b, BenchArgs& a);
// Throws UsageError naming the flag.
void parse_pace(const BenchArgs& a, JobSpec& j);

}  // namespace ioacct
