#include "cli/bench_fleet.hpp"

#include <fmt/format.h>

#include <cstdio>
#include <span>

#include "acct/clock.hpp"
#include "cli/bench_options.hpp"
#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {

namespace {

// Read by apply_start_at and fleet_context, after the jobs: no decoder.
constexpr BenchOption kFleetRows[] = {
  {"--start-at", "TIME",
   "Open the measured window at this wall-clock instant (RFC 3339, e.g. 2026-12-01T15:40:00Z, or @SECONDS since "
   "the epoch): one window on every host",
   &BenchArgs::start_at},
  {"--tag", "KEY=VALUE", "Label the run KEY=VALUE in the JSON (repeatable; ioacct merge keeps them per host)",
   &BenchArgs::tags, nullptr, repeatable_option},
};

}  // namespace

std::span<const BenchOption> bench_fleet_rows() { return kFleetRows; }

void apply_start_at(const BenchArgs& a, std::vector<JobSpec>& jobs) {
  if (a.start_at.empty()) return;
  const int64_t at = parse_instant("--start-at", a.start_at);
  const int64_t now = wall_ns();
  // The window opens at the instant and the run starts --ramp before it.
  const int64_t begin = at - static_cast<int64_t>(jobs.front().ramp.count());
  if (begin <= now)
    throw UsageError(fmt::format("--start-at: {} is {} in the past{}; give a time in the future (e.g. "
                                 "--start-at @$(($(date +%s) + 30)))",
                                 a.start_at, format_duration_ns(static_cast<double>(now - begin)),
                                 jobs.front().ramp.count() ? " once --ramp is taken off it" : ""));
  jobs.front().start_at_unix_ns = at;
}

RunContext fleet_context(const BenchArgs& a) {
  RunContext c = gather_run_context();
  for (const std::string& t : a.tags) {
    const size_t eq = t.find('=');
    if (eq == std::string::npos || eq == 0)
      throw UsageError(fmt::format("--tag: '{}' is not KEY=VALUE (e.g. --tag rack=r12)", t));
    const std::string key = t.substr(0, eq);
    if (!c.tags.emplace(key, t.substr(eq + 1)).second)
      throw UsageError(fmt::format("--tag: {} is given twice; give each key once", key));
  }
  return c;
}

void warn_late_start(const std::vector<JobSpec>& jobs, const RunResult& r) {
  const int64_t at = jobs.front().start_at_unix_ns;
  if (!at || !r.start_wall_ns || !r.total.window_start_ns) return;
  const int64_t opened = r.start_wall_ns + static_cast<int64_t>(r.total.window_start_ns - r.start_mono_ns);
  if (opened - at > 5'000'000)
    fmt::print(stderr, "warning: --start-at: the window opened {} after {} (setting up took longer than the time "
               "left); give a later --start-at so that every host starts on time\n",
               format_duration_ns(static_cast<double>(opened - at)), format_rfc3339_ns(at));
}

}  // namespace ioacct
