#pragma once
// bench's options, one row each (cli/option_rows.hpp): the table registers
// them with CLI11 (add_bench_command), decodes them into a JobSpec in its
// order (to_job), and is what --help, docs/cli.md's check and the man pages
// read. A plain value is decoded by one small decoder per type of value
// (`into`), a check across options in the row of the option its message
// names.
#include <span>
#include <string_view>
#include <vector>

#include "cli/bench_cmd.hpp"
#include "cli/option_rows.hpp"
#include "workload/job.hpp"

namespace ioacct {

using BenchOption = OptionRow<BenchArgs>;
using BenchGiven = Given<BenchArgs>;

// Every bench option in --help's order: the rows of this file's parts and
// of bench_pace.cpp, bench_uring_rows.cpp and bench_fleet.cpp, put together
// once.
const std::vector<BenchOption>& bench_options();
// The parts kept with their decoders in files of their own.
std::span<const BenchOption> bench_pace_rows();
std::span<const BenchOption> bench_uring_rows();
std::span<const BenchOption> bench_fleet_rows();

// Decodes every row that is given or has a default into `j`, in the
// table's order. Throws UsageError naming the flag.
void decode_bench_options(const BenchArgs& a, JobSpec& j);

// The plain decoder: the value read by `Parse` (parse_size, parse_count,
// parse_duration, ...: each takes the flag and the text) into the job's
// member at `Path`, a path of members for a nested one
// (into<parse_duration, &JobSpec::ramp>).
template <auto Parse, auto... Path>
void into(const BenchGiven& g, JobSpec& j) {
  (j .* ... .* Path) = Parse(g.flag, g.text);
}
// A flag that sets the job's member at `Path` (a default of false).
template <auto... Path>
void set_on(const BenchGiven&, JobSpec& j) {
  (j .* ... .* Path) = true;
}

// Counts with a range, for `into`; each throws UsageError "FLAG: TEXT is
// out of range (MIN to MAX)".
unsigned count_in(std::string_view flag, std::string_view text, uint64_t min, uint64_t max);
inline unsigned percent_count(std::string_view f, std::string_view t) { return count_in(f, t, 0, 100); }
inline unsigned depth_count(std::string_view f, std::string_view t) { return count_in(f, t, 1, kMaxDepth); }

}  // namespace ioacct
