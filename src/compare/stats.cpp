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


double normal_cdf(double z) { return 0.5 * std::erfc(-z / std::sqrt(2.0)); }

// By bisection: a few dozen steps, exact to double precision, nothing to get wrong.
double normal_quantile(double p) {
  double lo = -40, hi = 40;
  for (int i = 0; i < 200 && hi - lo > 1e-12; ++i) {
    const double mid = (lo + hi) / 2;
    (normal_cdf(mid) < p ? lo : hi) = mid;
  }
  return (lo + hi) / 2;
}

std::vector<double> mann_whitney_counts(size_t n, size_t m) {
  // The Gaussian binomial [n+m choose n]_q by its Pascal rule,
  // [N choose k]_q = [N-1 choose k-1]_q + q^k [N-1 choose k]_q: only sums of
  // non-negative counts, so every coefficient keeps a double's relative
  // precision, tails included. O((n+m) n^2 m): meant for n + m <= kExactLimit.
  if (n > m) std::swap(n, m);  // then every [N choose k]_q needed fits degree n*m
  const size_t deg = n * m;
  std::vector<std::vector<double>> row(n + 1, std::vector<double>(deg + 1, 0.0));
  row[0][0] = 1;  // [0 choose 0]
  for (size_t N = 1; N <= n + m; ++N)
    for (size_t k = std::min(N, n); k >= 1; --k) {
      std::vector<double>& p = row[k];
      for (size_t u = deg; u >= k; --u) p[u] = p[u - k] + row[k - 1][u];
      for (size_t u = std::min(k, deg + 1); u-- > 0;) p[u] = row[k - 1][u];
    }
  return row[n];
}

ShiftRank shift_rank(size_t n, size_t m, double level) {
  const double tail = (1 - level) / 2;
  if (n == 0 || m == 0) return {};
  const double nm = static_cast<double>(n) * static_cast<double>(m);
  if (n + m <= kExactLimit) {
    const auto counts = mann_whitney_counts(n, m);
    double total = 0;
    for (double c : counts) total += c;
    ShiftRank r;
    double below = 0;  // P(U < k) for the k under test, times total
    for (size_t k = 1; k <= counts.size() / 2; ++k) {
      below += counts[k - 1];
      if (below / total > tail * (1 + 1e-9)) break;  // 3 vs 3 at 90%: 1/20 is exactly the tail
      r = {k, 1 - 2 * below / total};
    }
    return r;
  }
  const double mean = nm / 2, sd = std::sqrt(nm * static_cast<double>(n + m + 1) / 12);
  const double k = std::floor(mean + normal_quantile(tail) * sd + 0.5);  // P(U <= k-1) ~ Phi((k-1+0.5-mean)/sd)
  if (k < 1) return {};
  return {static_cast<size_t>(k), 1 - 2 * normal_cdf((k - 0.5 - mean) / sd)};
}

std::optional<ShiftInterval> shift_interval(const std::vector<double>& x, const std::vector<double>& y, double level) {
  if (x.empty() || y.empty()) return std::nullopt;
  std::vector<double> d;
  d.reserve(x.size() * y.size());
  for (double a : x)
    for (double b : y) d.push_back(a - b);
  std::sort(d.begin(), d.end());
  ShiftInterval r;
  r.n = x.size();
  r.m = y.size();
  const size_t N = d.size();
  r.estimate = N % 2 ? d[N / 2] : (d[N / 2 - 1] + d[N / 2]) / 2;
  const ShiftRank k = shift_rank(x.size(), y.size(), level);
  if (k.k) {
    r.low = d[k.k - 1];
    r.high = d[N - k.k];
    r.coverage = k.coverage;
  }
  return r;
}

std::optional<RatioInterval> ratio_interval(const std::vector<double>& x, const std::vector<double>& y, double level) {
  if (x.empty() || y.empty()) return std::nullopt;
  const auto logs = [](const std::vector<double>& v, std::vector<double>& out) {
    for (double a : v) {
      if (!(a > 0) || !std::isfinite(a)) return false;
      out.push_back(std::log(a));
    }
    return true;
  };
  std::vector<double> lx, ly;
  if (!logs(x, lx) || !logs(y, ly)) return std::nullopt;
  const std::optional<ShiftInterval> s = shift_interval(lx, ly, level);
  RatioInterval r;
  r.n = s->n;
  r.m = s->m;
  r.estimate = std::exp(s->estimate);
  if (s->low) {
    r.low = std::exp(*s->low);
    r.high = std::exp(*s->high);
    r.coverage = s->coverage;
  }
  return r;
}

std::optional<double> robust_log_sd(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> d;
  for (const auto* v : {&x, &y}) {
    for (double a : *v)
      if (!(a > 0) || !std::isfinite(a)) return std::nullopt;
    for (size_t i = 0; i < v->size(); ++i)
      for (size_t j = i + 1; j < v->size(); ++j) d.push_back(std::fabs(std::log((*v)[i]) - std::log((*v)[j])));
  }
  const auto m = median(std::move(d));
  if (!m) return std::nullopt;
  return kShamosScale * *m;
}

PairCount pair_count(const std::vector<double>& x, const std::vector<double>& y) {
  PairCount p;
  p.pairs = x.size() * y.size();
  for (double a : x)
    for (double b : y) {
      p.below += a < b;
      p.above += a > b;
    }
  return p;
}

}  // namespace ioacct
