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

// Where more repetitions come from, for the advice of a verdict that is not
// resolved: set by the command, no part of the decision.
struct MoreRuns {
  // Saved files (`ioacct compare A.json ...`) take no --repeat: bench runs
  // join a variant as NAME=RUN1.json,..., a compare document is run again.
  bool saved_bench = false, saved_compare = false;
  std::optional<double> round_s;   // a measured round of every variant, the mean so far
  std::optional<double> budget_s;  // --budget
  bool saved() const { return saved_bench || saved_compare; }
};

// What the verdict asks of the interval, and where more repetitions come from.
struct VerdictRule {
  double level = 0.95;   // the interval covers the true ratio at least this often
  double margin = 0.05;  // "no difference": the whole interval within [1/(1+margin), 1+margin]
  MoreRuns more;
};

// The most repetitions a suggestion names (compare's --repeat limit).
inline constexpr unsigned kMaxRepeat = 1000;
// The longest comparison an advice to repeat proposes (--budget instead, when
// longer): past it, repeating is not a sensible way to resolve a verdict.
inline constexpr double kAdviceHorizonS = 3600;
// The most saved runs per variant an advice asks for (their time is unknown).
inline constexpr unsigned kSavedAdviceMax = 100;

struct Verdict {
  VerdictKind kind = VerdictKind::NotMeasured;
  std::optional<RatioInterval> ratio;  // the variant against the other
  // Unresolved: the repetitions per variant estimated to resolve it from the
  // observed spread (kMaxRepeat when it would take more, see capped).
  unsigned repeat_needed = 0;
  bool capped = false;
  std::optional<double> spread;        // robust_log_sd of the IOPS: the relative spread it was estimated from
  // NotMeasured although both were measured: a repetition completed no I/O
  // (a stalled device), and a zero has no ratio.
  bool no_io = false;
  // The ratio of the two medians, when it lies on the other side of 1 from
  // the estimate (the median of pairwise ratios, which the verdict uses),
  // and how the pairs of repetitions stand: uneven spreads make the two
  // disagree, and whatever prints both says why.
  struct Reversal {
    double medians = 0;
    PairCount pairs;
  };
  std::optional<Reversal> reversal;
};

// x (a variant's IOPS per repetition) against base (the other's):
//  - no interval at this level (too few repetitions): Unresolved;
//  - the interval inside the margin: NoDifference (even if it excludes 1);
//  - above 1: Faster; below 1: Slower; else Unresolved.
// NotMeasured when either is empty or holds a value that is not positive
// (no_io when a repetition completed no I/O).
Verdict decide(const std::vector<double>& x, const std::vector<double>& base, const VerdictRule& rule);

// The repetitions of each variant estimated to resolve a verdict (`sd` is
// robust_log_sd, so one outlier cannot inflate it): the n at
// which the interval's predicted half-width in log terms,
// z * sqrt(pi/3) * sd * sqrt(2/n) (the Hodges-Lehmann interval is that much
// wider than a normal-theory one), falls below the larger of |log ratio| (to
// exclude 1) and log(1+margin) - |log ratio| (to fit the margin). At least
// the smallest count that gives an interval at all, and one more than `now`.
unsigned repeat_needed(double ratio, std::optional<double> sd, unsigned now, const VerdictRule& rule, bool* capped);

// The repetitions per variant an advice may name: kMaxRepeat; with a round
// time, no more than fit in kAdviceHorizonS (or --budget, when longer); for
// saved files kSavedAdviceMax.
unsigned advice_reach(const VerdictRule& rule);
// An unresolved verdict needs more repetitions than advice_reach.
bool out_of_reach(const Verdict& v, const VerdictRule& rule);
// What to do about an unresolved verdict ("" for any other):
//   "run with --repeat 12 (about 4 min)"
//   "give 12 saved runs of each variant, as NAME=RUN1.json,...,RUN12.json"
//   "too noisy to resolve by repeating: at a run-to-run spread of 12% it takes
//    about 400 repetitions per variant (about 9 h); steadier runs (...) take fewer"
std::string repeat_advice(const Verdict& v, const VerdictRule& rule);
// The same for the verdict column: "--repeat 12", "12 runs", "too noisy"; "".
std::string repeat_advice_short(const Verdict& v, const VerdictRule& rule);
// "the ratio of the medians is 1.03x, but it ran slower in 16 of the 25
// pairs of repetitions"; "" without a reversal.
std::string reversal_text(const Verdict& v);

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
// with reversal_text inside the parentheses where there is a reversal, and
// repeat_advice after the colon.
std::string verdict_text(const Verdict& v, const VerdictRule& rule);

}  // namespace ioacct
