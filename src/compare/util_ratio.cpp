#include "compare/util_ratio.hpp"

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ioacct {
namespace {

// P(|T| < t) for t = sqrt(df) tan(theta), 0 <= theta < pi/2: the closed
// form for whole df (Abramowitz & Stegun 26.7.3 and 26.7.4).
double t_central(double theta, unsigned df) {
  const double s = std::sin(theta), c2 = std::cos(theta) * std::cos(theta);
  double sum = 1, term = 1;
  if (df % 2 == 1) {
    for (unsigned k = 1; 2 * k + 3 <= df; ++k) {  // up to cos^(df-3)
      term *= (2.0 * k) / (2.0 * k + 1) * c2;
      sum += term;
    }
    return 2 / std::numbers::pi * (theta + (df > 1 ? s * std::cos(theta) * sum : 0));
  }
  for (unsigned k = 1; 2 * k + 2 <= df; ++k) {  // up to cos^(df-2)
    term *= (2.0 * k - 1) / (2.0 * k) * c2;
    sum += term;
  }
  return s * sum;
}

}  // namespace

double student_quantile(double p, unsigned df) {
  if (p < 0.5) return -student_quantile(1 - p, df);
  const double want = 2 * p - 1;  // P(|T| < t)
  double lo = 0, hi = std::numbers::pi / 2;
  for (int i = 0; i < 200 && hi - lo > 1e-15; ++i) {
    const double mid = (lo + hi) / 2;
    (t_central(mid, df) < want ? lo : hi) = mid;
  }
  return std::sqrt(static_cast<double>(df)) * std::tan((lo + hi) / 2);
}

std::optional<UtilRatio> util_ratio(const std::vector<std::optional<double>>& util,
                                    const std::vector<std::optional<double>>& busy, double level) {
  std::vector<double> r;
  for (size_t i = 0; i < util.size() && i < busy.size(); ++i)
    if (util[i] && busy[i] && *busy[i] > 0) r.push_back(*util[i] / *busy[i]);
  if (r.empty()) return std::nullopt;
  UtilRatio u;
  u.n = r.size();
  double sum = 0;
  for (double x : r) sum += x;
  const double n = static_cast<double>(r.size());
  u.estimate = sum / n;
  if (r.size() < 2) return u;
  double ss = 0;
  for (double x : r) ss += (x - u.estimate) * (x - u.estimate);
  const double half =
      student_quantile(1 - (1 - level) / 2, static_cast<unsigned>(r.size() - 1)) * std::sqrt(ss / (n - 1) / n);
  u.low = std::max(0.0, u.estimate - half);
  u.high = u.estimate + half;
  return u;
}

}  // namespace ioacct
