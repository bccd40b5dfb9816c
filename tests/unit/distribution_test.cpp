// Skewed access (src/common/distribution.hpp): each sampler's histogram held
// against its distribution's CDF, computed here from the formula (not from
// the sampler's code), with a Kolmogorov-Smirnov bound; the scatter is a
// bijection; the parser takes fio's words and refuses the rest.
#include "common/distribution.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "common/errors.hpp"
#include "common/offsets.hpp"

namespace ioacct {
namespace {

// The largest gap between the empirical CDF of `draws` values in [0, n) and
// `cdf` (P(X <= k)), checked at every k: the KS statistic for a discrete law.
double ks_distance(SkewSampler& s, uint64_t n, uint64_t draws, uint64_t seed,
                   const std::function<double(uint64_t)>& cdf) {
  std::vector<uint64_t> counts(n, 0);
  Rng rng(seed);
  for (uint64_t i = 0; i < draws; ++i) {
    const uint64_t v = s.unscattered(rng);
    EXPECT_LT(v, n);
    if (v < n) ++counts[v];
  }
  double d = 0;
  uint64_t cum = 0;
  for (uint64_t k = 0; k < n; ++k) {
    cum += counts[k];
    d = std::max(d, std::abs(static_cast<double>(cum) / static_cast<double>(draws) - cdf(k)));
  }
  return d;
}

// The KS critical value at the 0.1% level, c(α)/sqrt(N) with c = 1.95. For a
// discrete law the test is conservative: a correct sampler passes more often
// still. The seeds are fixed, so a pass is a pass on every run.
double ks_bound(uint64_t draws) { return 1.95 / std::sqrt(static_cast<double>(draws)); }

constexpr uint64_t kKsDraws = 400'000;

TEST(Distribution, ZipfMatchesItsCdf) {
  for (double theta : {0.5, 0.99, 1.0, 1.2, 2.0}) {
    for (uint64_t n : {uint64_t{1}, uint64_t{2}, uint64_t{10}, uint64_t{1000}, uint64_t{1} << 20}) {
      // P(rank <= k+1) = H(k+1, θ) / H(n, θ), by direct summation.
      std::vector<double> cum(n);
      double sum = 0;
      for (uint64_t i = 0; i < n; ++i) cum[i] = sum += std::pow(static_cast<double>(i + 1), -theta);
      SkewSampler s({DistKind::Zipf, theta}, n);
      const double d = ks_distance(s, n, kKsDraws, 7 + n, [&](uint64_t k) { return cum[k] / sum; });
      EXPECT_LT(d, ks_bound(kKsDraws)) << "zipf:" << theta << " over " << n << " blocks";
    }
  }
}

TEST(Distribution, ParetoMatchesFiosPowerLaw) {
  for (double h : {0.1, 0.2, 0.5, 0.8}) {
    for (uint64_t n : {uint64_t{3}, uint64_t{1000}, uint64_t{1} << 20}) {
      // rank = floor(n·u^p), p = log h / log(1-h): P(rank <= k) = ((k+1)/n)^(1/p).
      const double p = std::log(h) / std::log(1 - h);
      SkewSampler s({DistKind::Pareto, h}, n);
      const double d = ks_distance(s, n, kKsDraws, 11 + n, [&](uint64_t k) {
        return std::min(1.0, std::pow(static_cast<double>(k + 1) / static_cast<double>(n), 1 / p));
      });
      EXPECT_LT(d, ks_bound(kKsDraws)) << "pareto:" << h << " over " << n << " blocks";
    }
  }
}

TEST(Distribution, ParetoPointTwoIsEightyTwenty) {
  constexpr uint64_t n = 100'000;
  SkewSampler s({DistKind::Pareto, 0.2}, n);
  Rng rng(3);
  uint64_t hot = 0;
  for (uint64_t i = 0; i < kKsDraws; ++i) hot += s.unscattered(rng) < n / 5;
  EXPECT_NEAR(static_cast<double>(hot) / kKsDraws, 0.8, 0.005);
}

TEST(Distribution, NormalMatchesATruncatedNormal) {
  auto phi = [](double x) { return 0.5 * std::erfc(-x / std::sqrt(2.0)); };
  for (double sigma : {1.0, 5.0, 20.0, 100.0}) {
    for (uint64_t n : {uint64_t{7}, uint64_t{1000}, uint64_t{1} << 20}) {
      const double nd = static_cast<double>(n), mu = nd / 2, sd = sigma / 100 * nd;
      const double lo = phi(-mu / sd), hi = phi((nd - mu) / sd);
      SkewSampler s({DistKind::Normal, sigma}, n);
      // value = floor(x): P(value <= k) = P(x < k+1), x normal cut to [0, n).
      const double d = ks_distance(s, n, kKsDraws, 13 + n, [&](uint64_t k) {
        return (phi((static_cast<double>(k + 1) - mu) / sd) - lo) / (hi - lo);
      });
      EXPECT_LT(d, ks_bound(kKsDraws)) << "normal:" << sigma << "% over " << n << " blocks";
    }
  }
}

TEST(Distribution, UniformSamplerIsUniform) {
  constexpr uint64_t n = 1000;
  SkewSampler s({}, n);
  const double d = ks_distance(s, n, kKsDraws, 5, [&](uint64_t k) { return static_cast<double>(k + 1) / n; });
  EXPECT_LT(d, ks_bound(kKsDraws));
}

TEST(Distribution, AWrongSamplerFailsTheBound) {
  // The test can fail: zipf:1.2 held against zipf:1.1's CDF is far outside.
  constexpr uint64_t n = 1000;
  std::vector<double> cum(n);
  double sum = 0;
  for (uint64_t i = 0; i < n; ++i) cum[i] = sum += std::pow(static_cast<double>(i + 1), -1.1);
  SkewSampler s({DistKind::Zipf, 1.2}, n);
  EXPECT_GT(ks_distance(s, n, kKsDraws, 1, [&](uint64_t k) { return cum[k] / sum; }), 5 * ks_bound(kKsDraws));
}

TEST(Scatter, IsABijection) {
  for (uint64_t n : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{5}, uint64_t{64}, uint64_t{1000},
                     uint64_t{4097}, (uint64_t{1} << 20) + 1}) {
    const Scatter sc(n);
    std::vector<bool> seen(n, false);
    for (uint64_t x = 0; x < n; ++x) {
      const uint64_t y = sc(x);
      ASSERT_LT(y, n);
      ASSERT_FALSE(seen[y]) << "n=" << n << ": " << x << " lands where another did";
      seen[y] = true;
    }
  }
}

TEST(Scatter, SpreadsNeighbours) {
  // The hottest ranks land far apart, as with fio's hash.
  const uint64_t n = uint64_t{1} << 18;
  const Scatter sc(n);
  std::vector<uint64_t> first;
  for (uint64_t x = 0; x < 16; ++x) first.push_back(sc(x));
  std::sort(first.begin(), first.end());
  uint64_t close = 0;
  for (size_t i = 1; i < first.size(); ++i) close += first[i] - first[i - 1] < 64;
  EXPECT_LE(close, 1u);
}

TEST(Distribution, OffsetsStayAlignedInsideTheRange) {
  for (Distribution d : {Distribution{DistKind::Zipf, 1.2}, Distribution{DistKind::Pareto, 0.3},
                         Distribution{DistKind::Normal, 10}}) {
    OffsetGen g(8192, 1000 * 4096 + 100, 4096, true, 9, 0, 1, 0, d);
    ASSERT_EQ(g.blocks(), 1000u);
    for (int i = 0; i < 100'000; ++i) {
      const uint64_t off = g.next();
      ASSERT_GE(off, 8192u);
      ASSERT_LT(off, 8192u + 1000 * 4096);
      ASSERT_EQ((off - 8192) % 4096, 0u);
    }
  }
}

TEST(Distribution, SkewReachesTheBlocks) {
  // Through OffsetGen (scattered): zipf:1.2's hottest block takes its share.
  constexpr uint64_t n = 4096;
  OffsetGen g(0, n * 512, 512, true, 21, 0, 1, 0, {DistKind::Zipf, 1.2});
  std::vector<uint64_t> counts(n, 0);
  for (int i = 0; i < 400'000; ++i) ++counts[g.next() / 512];
  double h = 0;
  for (uint64_t i = 1; i <= n; ++i) h += std::pow(static_cast<double>(i), -1.2);
  const double top = static_cast<double>(*std::max_element(counts.begin(), counts.end())) / 400'000;
  EXPECT_NEAR(top, 1 / h, 0.005);
}

TEST(Distribution, ParsesFiosWords) {
  EXPECT_EQ(parse_distribution("--x", "uniform").kind, DistKind::Uniform);
  EXPECT_EQ(parse_distribution("--x", "random").kind, DistKind::Uniform);  // fio's name for it
  EXPECT_EQ(parse_distribution("--x", "zipf:1.2"), (Distribution{DistKind::Zipf, 1.2}));
  EXPECT_EQ(parse_distribution("--x", "pareto:0.2"), (Distribution{DistKind::Pareto, 0.2}));
  EXPECT_EQ(parse_distribution("--x", "normal:5"), (Distribution{DistKind::Normal, 5}));
  EXPECT_EQ(parse_distribution("--x", "normal:5%"), (Distribution{DistKind::Normal, 5}));
  EXPECT_EQ(parse_distribution("--x", "gauss:5"), (Distribution{DistKind::Normal, 5}));
  EXPECT_EQ(distribution_name({DistKind::Zipf, 1.2}), "zipf:1.2");
  EXPECT_EQ(distribution_name({DistKind::Normal, 5}), "normal:5%");
  for (const char* bad : {"", "zipf", "zipf:", "zipf:0", "zipf:-1", "zipf:x", "zipf:1.2:0.5", "pareto:1",
                          "pareto:0", "pareto:1.5", "normal:0", "normal:101", "zoned:50/50", "zoned:", "zoned:50/50:40/50",
                          "zoned:60/10:40/80", "zoned:60/10,40/90", "zoned:60/:40/90", "zoned:0/10:100/90",
                          "zoned:60/10:40/x", "zoned_abs:60/1g:40/0", "zoned_abs:60/1q:40/1g", "Zipf:1.2",
                          "zipf:1e3", "zipf: 1.2", "zipf:nan", "zipf:inf"}) {
    try {
      parse_distribution("--random-distribution", bad);
      ADD_FAILURE() << "'" << bad << "' was accepted";
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("--random-distribution: ", 0), 0u) << e.what();
    }
  }
}

// fio's zones: the shares of the I/O and of the range, in order.
TEST(Distribution, ZonedParsesFiosForms) {
  const Distribution z = parse_distribution("--x", "zoned:60/10:30/20:10/");
  EXPECT_EQ(z.kind, DistKind::Zoned);
  EXPECT_EQ(z.zones, (std::vector<Zone>{{60, 10}, {30, 20}, {10, 0}}));
  EXPECT_EQ(distribution_name(z), "zoned:60/10:30/20:10/");
  const Distribution a = parse_distribution("--x", "zoned_abs:60/1m:40/3m");
  EXPECT_EQ(a.kind, DistKind::ZonedAbs);
  EXPECT_EQ(a.zones, (std::vector<Zone>{{60, 1 << 20}, {40, 3 << 20}}));
  EXPECT_EQ(parse_distribution("--x", "zoned:50/5:30/15:20/80").zones.size(), 3u);
}

// Each zone gets its share of the draws, and only values inside it: 60% to
// the first tenth, 30% to the next fifth, 10% to the rest.
TEST(Distribution, ZonedSendsEachZoneItsShare) {
  const uint64_t n = 1000;
  SkewSampler s(parse_distribution("--x", "zoned:60/10:30/20:10/"), n);
  Rng rng(7);
  std::array<uint64_t, 3> in{};
  std::vector<uint64_t> hits(n, 0);
  for (uint64_t i = 0; i < kKsDraws; ++i) {
    const uint64_t v = s.next(rng);
    ASSERT_LT(v, n);
    ++hits[v];
    ++in[v < 100 ? 0 : v < 300 ? 1 : 2];
  }
  const double d = static_cast<double>(kKsDraws);
  // Binomial: 4 standard deviations of a share p over 400k draws is < 0.4%.
  EXPECT_NEAR(static_cast<double>(in[0]) / d, 0.6, 0.004);
  EXPECT_NEAR(static_cast<double>(in[1]) / d, 0.3, 0.004);
  EXPECT_NEAR(static_cast<double>(in[2]) / d, 0.1, 0.004);
  // Uniform inside a zone: each of the first zone's 100 values near 0.6%.
  for (uint64_t v = 0; v < 100; ++v) EXPECT_NEAR(static_cast<double>(hits[v]) / d, 0.006, 0.0015) << v;
  EXPECT_GT(hits[999], 0u) << "the empty last range runs to the end";
}

// zoned_abs: zones in bytes, turned into blocks by the generator's block
// size; offsets stay aligned and inside the range.
TEST(Distribution, ZonedAbsZonesAreBytes) {
  const uint64_t bs = 4096, range = 64 << 20;  // 16384 blocks
  OffsetGen g(0, range, bs, true, 11, 0, 1, 0, parse_distribution("--x", "zoned_abs:90/1m:10/63m"));
  uint64_t first_mib = 0;
  const uint64_t draws = 100'000;
  for (uint64_t i = 0; i < draws; ++i) {
    const uint64_t off = g.next();
    ASSERT_EQ(off % bs, 0u);
    ASSERT_LT(off, range);
    first_mib += off < (1 << 20);
  }
  EXPECT_NEAR(static_cast<double>(first_mib) / static_cast<double>(draws), 0.9, 0.006);
}

}  // namespace
}  // namespace ioacct
