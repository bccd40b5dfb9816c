#include "compare/stats.hpp"

#include <algorithm>
#include <cmath>

namespace ioacct {

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  const size_t mid = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid), v.end());
  const double hi = v[mid];
  if (v.size() % 2) return hi;
  const double lo = *std::max_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(mid));
  return (lo + hi) / 2;
}

std::optional<double> mad(const std::vector<double>& v) {
  const auto m = median(v);
  if (!m) return std::nullopt;
  std::vector<double> dev;
  dev.reserve(v.size());
  for (double x : v) dev.push_back(std::fabs(x - *m));
  return median(std::move(dev));
}

std::optional<Spread> spread(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  Spread s;
  s.median = *median(v);
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  s.min = *lo;
  s.max = *hi;
  s.mad = mad(v);
  return s;
}

std::vector<size_t> outliers(const std::vector<double>& v) {
  std::vector<size_t> out;
  if (v.size() < 3) return out;  // with two values neither is "the odd one"
  const double m = *median(v);
  const double d = *mad(v);
  // 1.4826 * MAD estimates the standard deviation of normally distributed data.
  const double limit = std::max(kOutlierMads * 1.4826 * d, kNegligible * std::fabs(m));
  for (size_t i = 0; i < v.size(); ++i)
    if (std::fabs(v[i] - m) > limit) out.push_back(i);
  return out;
}

bool overlaps(const Spread& a, const Spread& b) { return a.min <= b.max && b.min <= a.max; }

bool clearly_different(const Spread& a, const Spread& b) {
  return !overlaps(a, b) && std::fabs(a.median - b.median) > kNegligible * std::max(std::fabs(a.median), std::fabs(b.median));
}

}  // namespace ioacct
