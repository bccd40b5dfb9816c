#include "compare/stage_diff.hpp"

#include <algorithm>
#include <cmath>

#include "compare/stats.hpp"

namespace ioacct {
namespace {

// One side's values of a stage: the repetitions that measured it, or a 0 per
// repetition when none did.
std::vector<double> side(const std::vector<StageTimes>& runs, int s) {
  std::vector<double> v;
  for (const auto& r : runs)
    if (r[s]) v.push_back(*r[s]);
  if (v.empty()) v.assign(runs.size(), 0.0);
  return v;
}

bool measured(const std::vector<StageTimes>& runs, int s) {
  return std::any_of(runs.begin(), runs.end(), [s](const StageTimes& r) { return r[s].has_value(); });
}

}  // namespace

std::optional<StageDiff> stage_that_differs(const std::vector<StageTimes>& x, const std::vector<StageTimes>& y,
                                            double level) {
  std::optional<StageDiff> best_out, best_any;
  for (int s = 0; s < kAnatomyStages; ++s) {
    if (!measured(x, s) && !measured(y, s)) continue;
    const std::vector<double> a = side(x, s), b = side(y, s);
    if (a.empty() || b.empty()) continue;
    StageDiff d;
    d.stage = static_cast<AnatomyStage>(s);
    d.by_ns = *median(a) - *median(b);
    d.n = x.size();
    d.m = y.size();
    if (const auto shift = shift_interval(a, b, level); shift && shift->low) {
      d.low_ns = shift->low;
      d.high_ns = shift->high;
      d.stands_out = *d.low_ns > 0 || *d.high_ns < 0;
    }
    auto& best = d.stands_out ? best_out : best_any;
    if (!best || std::abs(d.by_ns) > std::abs(best->by_ns)) best = d;
  }
  return best_out ? best_out : best_any;
}

unsigned repetitions_for_interval(double level) {
  unsigned n = 1;
  while (n < 1000 && shift_rank(n, n, level).k == 0) ++n;
  return n;
}

}  // namespace ioacct
