#pragma once
// The util preset's figure: %util over the exact busy time, per repetition,
// and the interval of its mean over the repetitions. Pure, over plain numbers.
//
// Why Student's t and not compare's rank intervals (stats.hpp): one
// repetition measures both figures, so the ratio is taken per repetition and
// its interval is one sample's; a distribution-free interval for one sample
// needs 6 repetitions for 95%, and compare's default is 5. Each repetition's
// ratio is itself an average over the jiffies its I/Os spanned (io_ticks adds
// a jiffy when a tick falls inside an I/O), so it is near normal once a run
// spans tens of them, which is what the t interval assumes; with fewer it is
// approximate.
#include <cstddef>
#include <optional>
#include <vector>

namespace ioacct {

struct UtilRatio {
  double estimate = 0;              // mean of the repetitions' %util / busy%
  std::optional<double> low, high;  // its interval at the level asked (low at least 0); none from one repetition
  size_t n = 0;                     // repetitions that measured both, busy% above 0
};

// util[i] and busy[i] come from repetition i (empty where it did not measure
// that figure); the two lists are the same length. None when no repetition
// measured both with busy% above 0 (an idle device has no ratio).
std::optional<UtilRatio> util_ratio(const std::vector<std::optional<double>>& util,
                                    const std::vector<std::optional<double>>& busy, double level);

// Student's t distribution with `df` (at least 1) degrees of freedom: the t
// with P(T <= t) = p, 0 < p < 1. Exact (the closed form of the distribution
// for whole df, inverted by bisection), not a series.
double student_quantile(double p, unsigned df);

}  // namespace ioacct
