#include "acct/histogram.hpp"

#include <algorithm>
#include <cmath>

namespace ioacct {

void Histogram::merge(const Histogram& o) noexcept {
  for (size_t i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
  count_ += o.count_;
  sum_ += o.sum_;
  sumsq_ += o.sumsq_;
  min_ = std::min(min_, o.min_);
  max_ = std::max(max_, o.max_);
}

double Histogram::mean() const noexcept {
  return count_ ? static_cast<double>(sum_) / static_cast<double>(count_) : 0.0;
}

double Histogram::stdev() const noexcept {
  if (count_ < 2) return 0.0;
  const long double n = static_cast<long double>(count_);
  const long double m = static_cast<long double>(sum_) / n;
  long double sq;
  if (max_ < (uint64_t{1} << 42)) {
    sq = static_cast<long double>(sumsq_) / n;
  } else {
    // The exact sum of squares may have wrapped: use the bucket midpoints.
    long double s = 0;
    for (size_t i = 0; i < kBuckets; ++i) {
      if (!counts_[i]) continue;
      const long double mid = static_cast<long double>(lower_bound(i)) +
                              static_cast<long double>(upper_bound(i) - lower_bound(i)) / 2;
      s += mid * mid * static_cast<long double>(counts_[i]);
    }
    sq = s / n;
  }
  const long double var = sq - m * m;
  return var > 0 ? static_cast<double>(std::sqrt(var)) : 0.0;
}

uint64_t Histogram::quantile(double q) const noexcept {
  if (count_ == 0) return 0;
  q = std::clamp(q, 0.0, 1.0);
  // Nearest rank, 1-based: at least 1 so that q=0 gives the minimum.
  // ceil(q * count) without floating-point noise pushing an exact product
  // up by one (0.07 * 100 is 7.000000000000001 in binary).
  const double x = q * static_cast<double>(count_);
  uint64_t rank = static_cast<uint64_t>(x);
  if (static_cast<double>(rank) < x * (1 - 1e-12)) ++rank;
  rank = std::clamp<uint64_t>(rank, 1, count_);
  if (rank == count_) return max_;  // the extremes are known exactly
  if (rank == 1) return min_;
  uint64_t seen = 0;
  for (size_t i = 0; i < kBuckets; ++i) {
    seen += counts_[i];
    if (seen >= rank) {
      const uint64_t lo = lower_bound(i), hi = upper_bound(i);
      const uint64_t mid = lo + (hi - lo) / 2;
      return std::clamp(mid, min_, max_);
    }
  }
  return max_;
}

std::vector<Histogram::Bucket> Histogram::buckets() const {
  std::vector<Bucket> out;
  for (size_t i = 0; i < kBuckets; ++i)
    if (counts_[i]) out.push_back({lower_bound(i), upper_bound(i), counts_[i]});
  return out;
}

bool Histogram::restore(const std::vector<Bucket>& buckets, uint64_t min, uint64_t max, double mean, double stdev,
                        Histogram& out) {
  Histogram h;
  size_t first = kBuckets, last = 0;
  for (const Bucket& b : buckets) {
    const size_t i = index(b.lo);
    if (lower_bound(i) != b.lo || upper_bound(i) != b.hi || b.count == 0) return false;
    h.counts_[i] += b.count;
    h.count_ += b.count;
    first = std::min(first, i);
    last = std::max(last, i);
  }
  // The exact extremes lie in the outermost buckets, or they are not these.
  if (h.count_ && (min > max || index(min) != first || index(max) != last)) return false;
  if (h.count_) {
    h.min_ = min;
    h.max_ = max;
    const long double n = static_cast<long double>(h.count_), m = mean, sd = stdev;
    h.sum_ = static_cast<unsigned __int128>(m * n + 0.5L);
    h.sumsq_ = static_cast<unsigned __int128>((sd * sd + m * m) * n + 0.5L);
  }
  out = h;
  return true;
}

}  // namespace ioacct
