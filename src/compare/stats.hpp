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
// times the MAD scaled to a normal standard deviation (1.4826). Needs at
// least 3 values; with a MAD of 0 (most values equal) any value that differs
// from the median by more than 1% of it is an outlier.
inline constexpr double kOutlierMads = 3.0;
std::vector<size_t> outliers(const std::vector<double>& v);

// The rule for "no clear difference": the two [min, max] ranges overlap.
// Repetitions are few (3 by default), so no distributional assumption is
// made: a difference counts only when every repetition of one beats every
// repetition of the other.
bool overlaps(const Spread& a, const Spread& b);

}  // namespace ioacct
