#pragma once
// Statistics over the repetitions of one variant: pure functions over plain
// numbers, unit-tested on fixed values (Google Benchmark's statistics.cc is
// the model). Nothing here knows what a run is.
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

// The rule for "no clear difference": the two [min, max] ranges overlap.
// Repetitions are few (3 by default), so no distributional assumption is
// made: a difference counts only when every repetition of one beats every
// repetition of the other (a clear difference also needs medians more than
// kNegligible apart: see clearly_different).
bool overlaps(const Spread& a, const Spread& b);
// Ranges apart and medians more than kNegligible (relative) apart.
bool clearly_different(const Spread& a, const Spread& b);

}  // namespace ioacct
