// bench's pace options, one row each (cli/bench_options.hpp): how fast
// each thread goes (--rate-iops, --rate and how their I/Os are spaced), the
// floors it must hold (--rate-min, --rate-iops-min over --rate-cycle), and
// the latency a depth must meet (--latency-target and its window, run and
// percentile).
#include <fmt/format.h>

#include <array>
#include <span>
#include <string>

#include "cli/bench_options.hpp"
#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {
namespace {

// --rate-iops / --rate: one pace for the thread, or with commas one per
// direction (R,W,T as fio's rate=r,w,t: an empty field leaves that
// direction unpaced, and a last value given goes on to the directions after
// it, so "100,50" paces trims at 50 too).
// `what`: "pace" or "floor", for the messages.
template <typename Parse>
std::array<uint64_t, 3> each(const BenchGiven& g, Parse parse, const char* what = "pace") {
  const std::string_view flag = g.flag;
  const std::string& text = g.text;
  const auto fields = split_directions(text);
  if (!fields) throw UsageError(fmt::format("{}: '{}' has more than three fields (reads, writes, trims)", flag, text));
  std::array<uint64_t, 3> r{};
  for (size_t d = 0; d < 3; ++d) {
    const std::string& field = (*fields)[d];
    if (field.empty()) continue;
    r[d] = parse(flag, field);
    if (!r[d])
      throw UsageError(fmt::format("{}: '{}' must be more than 0 (leave a field empty for no {})", flag, field, what));
  }
  if (r == std::array<uint64_t, 3>{})
    throw UsageError(fmt::format("{}: '{}' {} no direction", flag, text, what[0] == 'p' ? "paces" : "holds"));
  return r;
}

// --rate-iops / --rate: one pace for every direction, or R,W[,T].
template <uint64_t (*Parse)(std::string_view, std::string_view), uint64_t JobSpec::*One,
          std::array<uint64_t, 3> JobSpec::*Each>
void decode_pace(const BenchGiven& g, JobSpec& j) {
  if (g.text.find(',') != std::string::npos) {
    j.*Each = each(g, Parse);
    return;
  }
  j.*One = Parse(g.flag, g.text);
  if (!(j.*One))
    throw UsageError(fmt::format("{}: must be {} (leave it out for no pacing)", g.flag,
                                 One == &JobSpec::rate_iops ? "at least 1" : "more than 0"));
}

void decode_rate_process(const BenchGiven& g, JobSpec& j) {
  if (g.text == "poisson") j.rate_process = RateProcess::Poisson;
  else if (g.text != "linear") throw UsageError(fmt::format("--rate-process: '{}' is not linear or poisson", g.text));
  if (j.rate_process == RateProcess::Poisson && !j.rate_iops && !j.rate_bw && !j.paced_by_direction())
    throw UsageError("--rate-process: poisson spaces a pace; give --rate-iops or --rate too");
}

// The floors: --rate-min / --rate-iops-min, each one value for every
// direction (fio's "a") or R,W[,T].
template <uint64_t (*Parse)(std::string_view, std::string_view), std::array<uint64_t, 3> JobSpec::*Floor>
void decode_floor(const BenchGiven& g, JobSpec& j) {
  if (g.text.find(',') != std::string::npos) {
    j.*Floor = each(g, Parse, "floor");
    return;
  }
  const uint64_t v = Parse(g.flag, g.text);
  if (!v) throw UsageError(fmt::format("{}: must be more than 0 (leave it out for no floor)", g.flag));
  j.*Floor = {v, v, v};
}

void decode_rate_cycle(const BenchGiven& g, JobSpec& j) {
  if (!j.has_rate_floor()) throw UsageError("--rate-cycle: only applies with --rate-min or --rate-iops-min");
  j.rate_cycle = parse_duration(g.flag, g.text);
  if (j.rate_cycle.count() <= 0) throw UsageError("--rate-cycle: must be more than 0");
}

void decode_latency_target(const BenchGiven& g, JobSpec& j) {
  j.latency_target = parse_duration(g.flag, g.text);
  if (j.latency_target.count() <= 0) throw UsageError("--latency-target: must be more than 0");
}

// --latency-window, --latency-run and --latency-percentile tune the search
// --latency-target starts.
void need_latency_target(const BenchGiven& g) {
  if (g.args.latency_target.empty()) throw UsageError(fmt::format("{}: only applies with --latency-target", g.flag));
}

void decode_latency_window(const BenchGiven& g, JobSpec& j) {
  need_latency_target(g);
  j.latency_window = parse_duration(g.flag, g.text);
}

void decode_latency_run(const BenchGiven& g, JobSpec& j) {
  need_latency_target(g);
  j.latency_run = true;
}

void decode_latency_percentile(const BenchGiven& g, JobSpec& j) {
  need_latency_target(g);
  const auto p = percentile_of(g.text);
  if (!p) throw UsageError(fmt::format("--latency-percentile: '{}' is not a percentage above 0, at most 100", g.text));
  j.latency_percentile = *p;
}

// How fast: a pace, one or per direction, or a latency the depth must meet.
constexpr BenchOption kPaceRows[] = {
  {"--rate-iops", "N",
   "Pace each thread to N I/Os per second, on a schedule; R,W[,T] per direction (a mixed --rw)", &BenchArgs::rate_iops,
   decode_pace<parse_count, &JobSpec::rate_iops, &JobSpec::rate_iops_dir>},
  {"--rate", "BW", "Pace each thread to this bandwidth, e.g. 50m (= 50 MiB/s); R,W[,T] per direction",
   &BenchArgs::rate, decode_pace<parse_bandwidth, &JobSpec::rate_bw, &JobSpec::rate_bw_dir>},
  {"--rate-process", "linear|poisson",
   "How a pace spaces its I/Os: linear (even) or poisson (random, the same mean; fio's rate_process)",
   &BenchArgs::rate_process, decode_rate_process},
  {"--rate-min", "BW",
   "End a thread whose bandwidth over a --rate-cycle falls under this (fio's rate_min); R,W[,T] per direction",
   &BenchArgs::rate_min, decode_floor<parse_bandwidth, &JobSpec::rate_min_bw>},
  {"--rate-iops-min", "N",
   "End a thread whose I/Os per second over a --rate-cycle fall under N (fio's rate_iops_min); R,W[,T] per direction",
   &BenchArgs::rate_iops_min, decode_floor<parse_count, &JobSpec::rate_min_iops>},
  {"--rate-cycle", "DURATION", "What --rate-min and --rate-iops-min average over (default 1s; fio's rate_cycle)",
   &BenchArgs::rate_cycle, decode_rate_cycle},
  {"--latency-target", "DURATION", "Find the highest depth whose I/Os meet this latency (fio's latency_target)",
   &BenchArgs::latency_target, decode_latency_target},
  {"--latency-window", "DURATION", "With --latency-target: how long each depth is tried (default 1s)",
   &BenchArgs::latency_window, decode_latency_window},
  {"--latency-run", "", "With --latency-target: keep adjusting the depth for the whole run (fio's latency_run=1)",
   &BenchArgs::latency_run, decode_latency_run},
  {"--latency-percentile", "PCT", "With --latency-target: the share of I/Os that must meet it (default 100)",
   &BenchArgs::latency_percentile, decode_latency_percentile},
};

}  // namespace

std::span<const BenchOption> bench_pace_rows() { return kPaceRows; }

}  // namespace ioacct
