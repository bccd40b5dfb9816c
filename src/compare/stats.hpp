#pragma once
// Statistics over the repetitions of one variant, and of one variant against
// another: pure functions over plain numbers, unit-tested on fixed values
// (Google Benchmark's statistics.cc is the model). Nothing here knows what a
// run is.
#include <cstddef>
#include <optional>
#include <vector>

namespace ioacct {

// The middle value (mean of the two middle ones for an even count); none for
// an empty list.
std::optional<double> median(std::vector<double> v);

// Median absolute deviation from the median, unscaled; none for an empty list.
std::optional<double> mad(const std::vector<double>& v);

struct Spread {
  double median = 0, min = 0, max = 0;
  std::optional<double> mad;
};
// None for an empty list.
std::optional<Spread> spread(const std::vector<double>& v);

// Indices of outliers: values further from the median than kOutlierMads
// times the MAD scaled to a normal standard deviation (1.4826), and by more
// than kNegligible of the median (so that paced runs at 99.9 and 100 IOPS,
// whose MAD is tiny, are not outliers). Needs at least 3 values.
inline constexpr double kOutlierMads = 3.0;
inline constexpr double kNegligible = 0.01;
std::vector<size_t> outliers(const std::vector<double>& v);

// The standard normal distribution: P(Z <= z), and the z with P(Z <= z) = p
// (0 < p < 1).
double normal_cdf(double z);
double normal_quantile(double p);

// The null distribution of the Mann-Whitney statistic U (the number of pairs
// (x_i, y_j) with x_i < y_j) for samples of n and m values without ties:
// element u is the number of the C(n+m, n) orderings with U = u, u = 0..n*m.
// Exact, from the generating function (the Gaussian binomial coefficient
// [n+m choose n]_q), as doubles; meant for n + m <= kExactLimit.
std::vector<double> mann_whitney_counts(size_t n, size_t m);
inline constexpr size_t kExactLimit = 100;

// The rank k of the pairwise differences that bounds a two-sided interval of
// at least `level` (0.95) for a shift between samples of n and m values: the
// largest k with P(U < k) <= (1 - level) / 2, and the coverage it gives,
// 1 - 2 P(U < k). k = 0: no interval reaches `level` (n = m = 3 gives at most
// 90%). Exact up to n + m <= kExactLimit, the normal approximation to U (with
// a continuity correction) beyond.
struct ShiftRank {
  size_t k = 0;
  double coverage = 0;
};
ShiftRank shift_rank(size_t n, size_t m, double level);

// x against y as a shift: the Hodges-Lehmann estimate (the median of the n*m
// pairwise differences x_i - y_j) and its distribution-free interval (the
// k-th smallest and largest difference, k from shift_rank). None when either
// sample is empty; `low`/`high` are none when the samples are too small for
// `level`.
struct ShiftInterval {
  double estimate = 0;                 // x - y
  std::optional<double> low, high;     // the interval
  double coverage = 0;                 // what the interval achieves (>= level)
  size_t n = 0, m = 0;                 // the sample sizes
};
std::optional<ShiftInterval> shift_interval(const std::vector<double>& x, const std::vector<double>& y, double level);

// x against y as a ratio: the Hodges-Lehmann estimate of the shift between
// log(x) and log(y) (the median of the n*m pairwise log ratios) and its
// distribution-free interval (the k-th smallest and largest pairwise ratio,
// k from shift_rank), both turned back into ratios. Valid when the two differ
// by a factor (the same spread in relative terms). None when a value is not
// positive or either sample is empty; `low`/`high` are none when the samples
// are too small for `level`.
struct RatioInterval {
  double estimate = 0;                 // x / y
  std::optional<double> low, high;     // the interval, as ratios
  double coverage = 0;                 // what the interval achieves (>= level)
  size_t n = 0, m = 0;                 // the sample sizes
};
std::optional<RatioInterval> ratio_interval(const std::vector<double>& x, const std::vector<double>& y, double level);

// The relative spread between repetitions (the standard deviation of log
// values), estimated so that one wild value cannot inflate it: the median of
// |log a - log b| over every pair of values within x and every pair within y
// (pooled), times 1.0483, which makes it the standard deviation for normal
// data (Shamos's estimator; the median of |Z1 - Z2| is 0.9539 sigma). One
// outlier among n values moves only its own n - 1 pairs, fewer than half of
// the pooled ones from 3 values each on. None without a pair (a sample of
// one value each) or with a value that is not positive.
inline constexpr double kShamosScale = 1.0483;
std::optional<double> robust_log_sd(const std::vector<double>& x, const std::vector<double>& y);

// How x's values stand against y's, pair by pair: of the n*m pairs, how many
// have x's value below y's and how many above (ties count in neither).
struct PairCount {
  size_t pairs = 0, below = 0, above = 0;
};
PairCount pair_count(const std::vector<double>& x, const std::vector<double>& y);

}  // namespace ioacct
