#pragma once
// The jobs of a bench run: the command line's one job, or one per --job
// NAME:OPTIONS, or one per job section of --fio FILE. Every job's options go
// through bench's own parser (to_job), so a job means the same whichever way
// it was written.
#include <string>
#include <string_view>
#include <vector>

#include "cli/bench_cmd.hpp"
#include "workload/fio_file.hpp"
#include "workload/job.hpp"

namespace ioacct {

// `words` (bench options as typed after `ioacct bench`) parsed over `base`:
// what they set replaces base's value, and `given` lists them. Throws
// UsageError (`where` prefixes its message).
BenchArgs parse_bench_words(const BenchArgs& base, const std::vector<std::string>& words, const std::string& where);

// "--rw randread --bs '64 k'" -> words, with '...' and "..." quoting.
std::vector<std::string> split_words(std::string_view text);

// The options that belong to the whole run, not to one job: --ramp, --acct,
// --format, ... (docs/cli.md, "Several jobs").
bool is_run_option(const std::string& name);

// The run's jobs, validated, in order; with --fio, each job's write_*_log
// files into `logs` (one per job) when given. Throws UsageError.
std::vector<JobSpec> to_jobs(const BenchArgs& a, std::vector<FioLogs>* logs = nullptr);

}  // namespace ioacct
