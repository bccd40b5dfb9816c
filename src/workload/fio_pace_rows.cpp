// fio's pace options, one row each: rates and their floors, how a pace
// spaces its I/Os, and the latency target's search (fio_options.hpp).
#include <fmt/format.h>

#include <optional>
#include <string>
#include <vector>

#include "common/units.hpp"
#include "workload/fio_options.hpp"

namespace ioacct {
namespace {

void decode_rate_iops(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.rate_iops = v.integers_each(*s.opt, 0, 1'000'000'000);
}

void decode_rate(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.rate = v.sizes_each(*s.opt);
}

void decode_rate_iops_min(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.rate_iops_min = v.integers_each(*s.opt, 0, 1'000'000'000);
}

void decode_rate_min(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.rate_min = v.sizes_each(*s.opt);
}

// fio's rate_cycle is an integer of milliseconds.
void decode_rate_cycle(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.rate_cycle_ms = v.integer(*s.opt, 1, 86'400'000);
}

void decode_rate_process(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (s.opt->value == "poisson") j.poisson = true;
  else if (s.opt->value != "linear") v.bad(*s.opt, fmt::format("'{}' is not linear or poisson", s.opt->value));
}

// latency_target and latency_window: a time, in microseconds without a unit.
std::optional<uint64_t> micros_or_time(FioValues& v, const FioOption& o) {
  const bool bare = !o.value.empty() && o.value.find_first_not_of("0123456789") == std::string::npos;
  if (!bare) return v.time_of(o);
  const auto us = v.integer(o, 0, UINT64_MAX / 1000);
  return us ? std::optional<uint64_t>(*us * 1000) : std::nullopt;
}

void decode_latency_target(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.latency_target_ns = micros_or_time(v, *s.opt);
}

void decode_latency_window(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.latency_window_ns = micros_or_time(v, *s.opt);
}

void decode_latency_percentile(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.latency_percentile = percentile_of(s.opt->value);
  if (!j.latency_percentile) v.bad(*s.opt, fmt::format("'{}' is not a percentage above 0, at most 100", s.opt->value));
}

void decode_latency_run(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.latency_run = v.boolean(*s.opt).value_or(false);
}

}  // namespace

std::vector<FioOptionRow> fio_pace_rows() {
  return {
  {{{"rate_iops"}},
   "`--rate-iops`, per thread (as fio's is per clone)",
   "`r,w,t` as fio's: with a mixed `rw`, `--rate-iops R,W,T` (each direction on its own pace, as fio's "
   "`rate_ddir`); otherwise the job's direction's value",
   decode_rate_iops},
  {{{"rate"}}, "`--rate` (bytes per second, fio's units), per thread", "as `rate_iops`", decode_rate},
  {{{"rate_iops_min"}},
   "`--rate-iops-min`, per thread: a thread whose I/Os per second over a `rate_cycle` fall under it ends, and the "
   "run exits 1 (fio ends the job with an error)",
   "`r,w,t` as `rate_iops`; as in fio, checked from 2 s into the window, and only for the directions that have "
   "moved something",
   decode_rate_iops_min},
  {{{"rate_min"}}, "`--rate-min` (bytes per second), per thread, as `rate_iops_min`", "as `rate_iops_min`",
   decode_rate_min},
  {{{"rate_cycle"}},
   "`--rate-cycle` (milliseconds, as fio's): what `rate_min` and `rate_iops_min` average over",
   "accepted, no effect, without a floor",
   decode_rate_cycle},
  {{{"rate_process"}},
   "`--rate-process`: `linear` (fio's default, I/Os evenly spaced) or `poisson` (exponential gaps of the same mean: "
   "fio's lambda = 10^6 / IOPS µs)",
   "accepted, no effect, on a job without a pace (as in fio). ioacct draws the gaps from the job's seed; a run "
   "behind its schedule by more than one mean gap drops the backlog, as for a linear pace",
   decode_rate_process},
  {{{"latency_target"}},
   "`--latency-target` (microseconds without a unit, as fio's): fio's search for the highest depth that meets it",
   "one thread (`numjobs=1`), one job per file, time-based",
   decode_latency_target},
  {{{"latency_window"}}, "`--latency-window` (microseconds without a unit)", "", decode_latency_window},
  {{{"latency_percentile"}}, "`--latency-percentile`", "", decode_latency_percentile},
  {{{"latency_run"}},
   "`0`: the search ends the job at the depth found; `1`: `--latency-run`, it keeps adjusting the depth for the "
   "whole run",
   "",
   decode_latency_run},
  };
}

}  // namespace ioacct
