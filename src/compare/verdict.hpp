#pragma once
// The verdict on one variant against another, from the interval of their
// IOPS ratio (stats.hpp, ratio_interval): pure, and the one place where
// "faster", "slower", "no difference" and "not resolved" are decided and
// phrased.
#include <optional>
#include <string>
#include <vector>

#include "compare/stats.hpp"

namespace ioacct {

enum class VerdictKind { NotMeasured, Baseline, Faster, Slower, NoDifference, Unresolved };

// What the verdict asks of the interval.
struct VerdictRule {
  double level = 0.95;   // the interval covers the true ratio at least this often
  double margin = 0.05;  // "no difference": the whole interval within [1/(1+margin), 1+margin]
};

// The most repetitions a suggestion names (compare's --repeat limit).
inline constexpr unsigned kMaxRepeat = 1000;

struct Verdict {
  VerdictKind kind = VerdictKind::NotMeasured;
  std::optional<RatioInterval> ratio;  // the variant against the other
  // Unresolved: the repetitions per variant estimated to resolve it from the
  // observed spread (kMaxRepeat when it would take more, see capped).
  unsigned repeat_needed = 0;
  bool capped = false;
  std::optional<double> spread;        // pooled SD of log IOPS: the relative spread it was estimated from
  // NotMeasured although both were measured: a repetition completed no I/O
  // (a stalled device), and a zero has no ratio.
  bool no_io = false;
};

// x (a variant's IOPS per repetition) against base (the other's):
//  - no interval at this level (too few repetitions): Unresolved;
//  - the interval inside the margin: NoDifference (even if it excludes 1);
//  - above 1: Faster; below 1: Slower; else Unresolved.
// NotMeasured when either is empty or holds a value that is not positive
// (no_io when a repetition completed no I/O).
Verdict decide(const std::vector<double>& x, const std::vector<double>& base, const VerdictRule& rule);

// The repetitions of each variant estimated to resolve a verdict: the n at
// which the interval's predicted half-width in log terms,
// z * sqrt(pi/3) * sd * sqrt(2/n) (the Hodges-Lehmann interval is that much
// wider than a normal-theory one), falls below the larger of |log ratio| (to
// exclude 1) and log(1+margin) - |log ratio| (to fit the margin). At least
// the smallest count that gives an interval at all, and one more than `now`.
unsigned repeat_needed(double ratio, std::optional<double> sd, unsigned now, const VerdictRule& rule, bool* capped);

// "faster", "slower", "no difference", "not resolved", "baseline", "-".
std::string verdict_word(VerdictKind k);
// "1.12x", "0.70x", "12.3x", "125x".
std::string format_ratio(double r);
// "1.05-1.19x", or one ratio when both print alike.
std::string format_ratio_range(double lo, double hi);
// The verdict's interval as a range; "-" without one.
std::string format_interval(const Verdict& v);
// The verdict as a sentence fragment, e.g.
//   "faster (1.12x, 95% CI 1.05-1.19x)"
//   "no difference (1.01x, 95% CI 0.97-1.04x, within ±5%)"
//   "not resolved at this noise (0.92x, 95% CI 0.80-1.20x): run with --repeat 12"
//   "not resolved: 3 repetitions against 3 cannot give a 95% interval (0.92x): run with --repeat 5"
//   "no ratio: a repetition completed no I/O"
std::string verdict_text(const Verdict& v, const VerdictRule& rule);

}  // namespace ioacct
