#include "cli/bench_pace.hpp"

#include <fmt/format.h>

#include <array>
#include <string>

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
std::array<uint64_t, 3> each(const std::string& flag, const std::string& text, Parse parse, const char* what = "pace") {
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

uint64_t count_of(const std::string& f, const std::string& t) { return parse_count(f, t); }
uint64_t bandwidth_of(const std::string& f, const std::string& t) { return parse_bandwidth(f, t); }

void parse_rates(const BenchArgs& a, JobSpec& j) {
  if (a.rate_iops.find(',') != std::string::npos) {
    j.rate_iops_dir = each("--rate-iops", a.rate_iops, count_of);
  } else if (!a.rate_iops.empty()) {
    j.rate_iops = parse_count("--rate-iops", a.rate_iops);
    if (!j.rate_iops) throw UsageError("--rate-iops: must be at least 1 (leave it out for no pacing)");
  }
  if (a.rate.find(',') != std::string::npos) {
    j.rate_bw_dir = each("--rate", a.rate, bandwidth_of);
  } else if (!a.rate.empty()) {
    j.rate_bw = parse_bandwidth("--rate", a.rate);
    if (!j.rate_bw) throw UsageError("--rate: must be more than 0 (leave it out for no pacing)");
  }
}

// --latency-target T [--latency-window W] [--latency-percentile P].
void parse_latency_target(const BenchArgs& a, JobSpec& j) {
  if (a.latency_target.empty()) {
    if (!a.latency_window.empty() || !a.latency_percentile.empty() || a.latency_run)
      throw UsageError(fmt::format("{}: only applies with --latency-target",
                                   !a.latency_window.empty()       ? "--latency-window"
                                   : !a.latency_percentile.empty() ? "--latency-percentile"
                                                                   : "--latency-run"));
    return;
  }
  j.latency_run = a.latency_run;
  j.latency_target = parse_duration("--latency-target", a.latency_target);
  if (j.latency_target.count() <= 0) throw UsageError("--latency-target: must be more than 0");
  if (!a.latency_window.empty()) j.latency_window = parse_duration("--latency-window", a.latency_window);
  if (!a.latency_percentile.empty()) {
    const auto p = percentile_of(a.latency_percentile);
    if (!p)
      throw UsageError(fmt::format("--latency-percentile: '{}' is not a percentage above 0, at most 100",
                                   a.latency_percentile));
    j.latency_percentile = *p;
  }
}

// --rate-process, and the floors: --rate-min / --rate-iops-min, each one
// value for every direction (fio's "a") or R,W[,T], over --rate-cycle.
void parse_process_and_floors(const BenchArgs& a, JobSpec& j) {
  if (!a.rate_process.empty()) {
    if (a.rate_process == "poisson") j.rate_process = RateProcess::Poisson;
    else if (a.rate_process != "linear")
      throw UsageError(fmt::format("--rate-process: '{}' is not linear or poisson", a.rate_process));
    if (j.rate_process == RateProcess::Poisson && !j.rate_iops && !j.rate_bw && !j.paced_by_direction())
      throw UsageError("--rate-process: poisson spaces a pace; give --rate-iops or --rate too");
  }
  const auto all_or_each = [](const std::string& flag, const std::string& text, auto parse) {
    if (text.find(',') != std::string::npos) return each(flag, text, parse, "floor");
    const uint64_t v = parse(flag, text);
    if (!v) throw UsageError(fmt::format("{}: must be more than 0 (leave it out for no floor)", flag));
    return std::array<uint64_t, 3>{v, v, v};
  };
  if (!a.rate_min.empty()) j.rate_min_bw = all_or_each("--rate-min", a.rate_min, bandwidth_of);
  if (!a.rate_iops_min.empty()) j.rate_min_iops = all_or_each("--rate-iops-min", a.rate_iops_min, count_of);
  if (!a.rate_cycle.empty()) {
    if (!j.has_rate_floor()) throw UsageError("--rate-cycle: only applies with --rate-min or --rate-iops-min");
    j.rate_cycle = parse_duration("--rate-cycle", a.rate_cycle);
    if (j.rate_cycle.count() <= 0) throw UsageError("--rate-cycle: must be more than 0");
  }
}

}  // namespace

// How fast: a pace, one or per direction, or a latency the depth must meet.
void add_pace_options(CLI::App* b, BenchArgs& a) {
  b->add_option("--rate-iops", a.rate_iops, "Pace each thread to N I/Os per second, on a schedule; R,W[,T] per direction (a mixed --rw)")->type_name("N");
  b->add_option("--rate", a.rate, "Pace each thread to this bandwidth, e.g. 50m (= 50 MiB/s); R,W[,T] per direction")->type_name("BW");
  b->add_option("--rate-process", a.rate_process, "How a pace spaces its I/Os: linear (even) or poisson (random, the same mean; fio's rate_process)")->type_name("linear|poisson");
  b->add_option("--rate-min", a.rate_min, "End a thread whose bandwidth over a --rate-cycle falls under this (fio's rate_min); R,W[,T] per direction")->type_name("BW");
  b->add_option("--rate-iops-min", a.rate_iops_min, "End a thread whose I/Os per second over a --rate-cycle fall under N (fio's rate_iops_min); R,W[,T] per direction")->type_name("N");
  b->add_option("--rate-cycle", a.rate_cycle, "What --rate-min and --rate-iops-min average over (default 1s; fio's rate_cycle)")->type_name("DURATION");
  b->add_option("--latency-target", a.latency_target, "Find the highest depth whose I/Os meet this latency (fio's latency_target)")->type_name("DURATION");
  b->add_option("--latency-window", a.latency_window, "With --latency-target: how long each depth is tried (default 1s)")->type_name("DURATION");
  b->add_flag("--latency-run", a.latency_run, "With --latency-target: keep adjusting the depth for the whole run (fio's latency_run=1)");
  b->add_option("--latency-percentile", a.latency_percentile, "With --latency-target: the share of I/Os that must meet it (default 100)")->type_name("PCT");
}

void parse_pace(const BenchArgs& a, JobSpec& j) {
  parse_rates(a, j);
  parse_process_and_floors(a, j);
  parse_latency_target(a, j);
}

}  // namespace ioacct
