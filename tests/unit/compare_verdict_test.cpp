// The verdict of one variant against another: the ratio's interval (checked
// against brute-force enumeration and test inversion computed here, not by
// the code under test), the verdict that follows it, the repetitions it asks
// for, and the headline sentences built from them.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "compare/headline.hpp"
#include "compare/rounds.hpp"
#include "compare/stats.hpp"
#include "compare/summary.hpp"
#include "compare/verdict.hpp"
#include "report/compare_report.hpp"
#include "unit/compare_fixtures.hpp"

namespace ioacct {
namespace {

// ---- The ratio's interval, checked against computations of the test's own ----

// Every ordering of n x's and m y's (as a bitmask of x positions), by brute
// force: the number with U = u, U = #{(x, y): x before y}.
std::vector<double> enumerate_u(size_t n, size_t m) {
  std::vector<double> counts(n * m + 1, 0);
  const size_t len = n + m;
  for (uint32_t mask = 0; mask < (1u << len); ++mask) {
    if (static_cast<size_t>(__builtin_popcount(mask)) != n) continue;
    size_t u = 0, ys_after = m;
    for (size_t pos = 0; pos < len; ++pos) {
      if (mask & (1u << pos)) u += ys_after;
      else --ys_after;
    }
    ++counts[u];
  }
  return counts;
}

TEST(Interval, MannWhitneyCountsMatchBruteForceEnumeration) {
  for (size_t n = 1; n <= 7; ++n)
    for (size_t m = 1; m <= 7; ++m) EXPECT_EQ(mann_whitney_counts(n, m), enumerate_u(n, m)) << n << " x " << m;
  // Large enough that a double must hold counts beyond 2^53 once summed: the
  // total is still C(n+m, n) to double precision.
  const auto c = mann_whitney_counts(40, 40);
  double total = 0;
  for (double x : c) total += x;
  EXPECT_NEAR(total, 1.0750720873e23, 1e13);  // C(80, 40)
  for (double x : c) EXPECT_GE(x, 0);
}

TEST(Interval, ShiftRankFromTheExactDistribution) {
  // Tables (Hollander & Wolfe): 4 vs 4 gives k = 1 (97.1%), 5 vs 5 k = 3
  // (96.8%), 3 vs 3 no 95% interval at all (its best is 90%).
  EXPECT_EQ(shift_rank(3, 3, 0.95).k, 0u);
  EXPECT_EQ(shift_rank(4, 4, 0.95).k, 1u);
  EXPECT_NEAR(shift_rank(4, 4, 0.95).coverage, 1 - 2.0 / 70, 1e-12);
  EXPECT_EQ(shift_rank(5, 5, 0.95).k, 3u);
  EXPECT_NEAR(shift_rank(5, 5, 0.95).coverage, 1 - 8.0 / 252, 1e-12);
  EXPECT_EQ(shift_rank(3, 3, 0.90).k, 1u);
  // Beyond the exact limit the normal approximation takes over; it must
  // still reach (and barely exceed) the level.
  const ShiftRank big = shift_rank(150, 150, 0.95);
  EXPECT_GE(big.coverage, 0.95);
  EXPECT_LT(big.coverage, 0.952);
  // At the exact limit, the exact rank and the normal approximation's
  // (computed here) agree to one.
  const double nm = 50 * 50, approx = std::floor(nm / 2 - 1.959964 * std::sqrt(nm * 101 / 12) + 0.5);
  EXPECT_NEAR(static_cast<double>(shift_rank(50, 50, 0.95).k), approx, 1.0);
}

// The interval by test inversion, computed independently: the set of
// log-shifts d for which the two-sided Mann-Whitney test of x/e^d against y
// (with the brute-force distribution) does not reject at 5%.
std::pair<double, double> inverted_interval(const std::vector<double>& x, const std::vector<double>& y) {
  std::vector<double> diffs;
  for (double a : x)
    for (double b : y) diffs.push_back(std::log(a) - std::log(b));
  std::sort(diffs.begin(), diffs.end());
  const auto counts = enumerate_u(x.size(), y.size());
  double total = 0;
  for (double c : counts) total += c;
  auto cdf = [&](size_t u) {  // P(U <= u)
    double s = 0;
    for (size_t i = 0; i <= u && i < counts.size(); ++i) s += counts[i];
    return s / total;
  };
  double lo = NAN, hi = NAN;
  // Between consecutive differences, U(d) = #{diffs > d} is constant.
  for (size_t i = 0; i + 1 < diffs.size(); ++i) {
    const size_t u = diffs.size() - 1 - i;
    const double below = cdf(u), above = 1 - (u ? cdf(u - 1) : 0);
    if (below > 0.025 && above > 0.025) {
      if (std::isnan(lo)) lo = diffs[i];
      hi = diffs[i + 1];
    }
  }
  return {std::exp(lo), std::exp(hi)};
}

TEST(Interval, RatioIntervalIsTheInvertedRankTest) {
  const std::vector<std::pair<std::vector<double>, std::vector<double>>> samples = {
      {{110, 112, 111, 113, 109}, {100, 101, 99, 102, 98}},
      {{3590, 3600, 3580, 3620, 3570}, {5140, 5200, 5100, 3000, 5180}},
      {{9.1, 8.7, 10.4, 9.9}, {10.2, 9.5, 11.1, 10.8, 9.9, 10.1}},
      {{1, 2, 3, 4, 5, 6}, {2, 3, 4, 5, 6, 7}},
  };
  for (const auto& [x, y] : samples) {
    const auto r = ratio_interval(x, y, 0.95);
    ASSERT_TRUE(r && r->low && r->high);
    const auto [lo, hi] = inverted_interval(x, y);
    EXPECT_NEAR(*r->low, lo, 1e-12 * lo);
    EXPECT_NEAR(*r->high, hi, 1e-12 * hi);
    // The estimate: the median of the pairwise ratios, by the test's own sort.
    std::vector<double> q;
    for (double a : x)
      for (double b : y) q.push_back(a / b);
    std::sort(q.begin(), q.end());
    const double med = q.size() % 2 ? q[q.size() / 2] : std::sqrt(q[q.size() / 2 - 1] * q[q.size() / 2]);
    EXPECT_NEAR(r->estimate, med, 1e-12 * med);
    EXPECT_LE(*r->low, r->estimate);
    EXPECT_GE(*r->high, r->estimate);
  }
  // Too few repetitions for 95%: an estimate, no interval.
  const auto few = ratio_interval({1, 2, 3}, {2, 3, 4}, 0.95);
  ASSERT_TRUE(few);
  EXPECT_FALSE(few->low);
  EXPECT_NEAR(few->estimate, 2.0 / 3, 1e-12);  // the 5th of the 9 ratios
  EXPECT_FALSE(ratio_interval({1, 0}, {1, 2}, 0.95));  // not a ratio
  EXPECT_FALSE(ratio_interval({}, {1, 2}, 0.95));
}

TEST(Verdict, FollowsTheInterval) {
  const VerdictRule rule;  // 95%, ±5%
  Verdict v = decide({110, 112, 111, 113, 109}, {100, 101, 99, 102, 98}, rule);
  EXPECT_EQ(v.kind, VerdictKind::Faster);
  EXPECT_GT(*v.ratio->low, 1.0);
  EXPECT_EQ(verdict_text(v, rule).rfind("faster (1.11x, 95% CI 1.", 0), 0u) << verdict_text(v, rule);
  v = decide({100, 101, 99, 102, 98}, {110, 112, 111, 113, 109}, rule);
  EXPECT_EQ(v.kind, VerdictKind::Slower);
  // One slow baseline repetition among five moves 5 of the 25 pairwise
  // ratios: more than the interval's 2 per side, so not resolved with it;
  // without it (4 against 5) clearly slower.
  v = decide({3590, 3600, 3580, 3620, 3570}, {5140, 5200, 5100, 3000, 5180}, rule);
  EXPECT_EQ(v.kind, VerdictKind::Unresolved) << verdict_text(v, rule);
  EXPECT_NEAR(v.ratio->estimate, 0.70, 0.01);
  v = decide({3590, 3600, 3580, 3620, 3570}, {5140, 5200, 5100, 5180}, rule);
  EXPECT_EQ(v.kind, VerdictKind::Slower) << verdict_text(v, rule);
  // Alike within the margin, interval around 1.
  v = decide({100, 100.5, 99.5, 100.2, 99.8}, {100.1, 99.9, 100.3, 99.7, 100}, rule);
  EXPECT_EQ(v.kind, VerdictKind::NoDifference);
  EXPECT_LE(*v.ratio->low, 1.0);
  EXPECT_GE(*v.ratio->high, 1.0);
  EXPECT_NE(verdict_text(v, rule).find("within ±5%"), std::string::npos) << verdict_text(v, rule);
  // Overlapping and wide: not resolved, with a number of repetitions to try.
  v = decide({80, 120, 100, 95, 110}, {100, 90, 115, 85, 105}, rule);
  EXPECT_EQ(v.kind, VerdictKind::Unresolved);
  EXPECT_GT(v.repeat_needed, 5u);
  EXPECT_EQ(verdict_text(v, rule).rfind("not resolved at this noise (", 0), 0u) << verdict_text(v, rule);
  EXPECT_NE(verdict_text(v, rule).find(": run with --repeat "), std::string::npos);
  // Three repetitions cannot give 95%: said so, and 4 is the least to ask for.
  v = decide({200, 210, 190}, {100, 105, 95}, rule);
  EXPECT_EQ(v.kind, VerdictKind::Unresolved);
  EXPECT_EQ(verdict_text(v, rule).rfind("not resolved: 3 repetitions against 3 cannot give a 95% interval (2.00x)", 0), 0u)
      << verdict_text(v, rule);
  EXPECT_GE(v.repeat_needed, 4u);
  EXPECT_EQ(decide({}, {1}, rule).kind, VerdictKind::NotMeasured);
  EXPECT_FALSE(decide({}, {1}, rule).no_io);
  // A repetition that completed nothing (a stalled device) is measured, but a
  // zero has no ratio: said so, never "not measured".
  v = decide({100, 0, 110, 105, 98}, {100, 101, 99, 102, 98}, rule);
  EXPECT_EQ(v.kind, VerdictKind::NotMeasured);
  EXPECT_TRUE(v.no_io);
  EXPECT_EQ(verdict_text(v, rule), "no ratio: a repetition completed no I/O");
  EXPECT_EQ(claim("qd32-sqpoll", "qd32", v, rule), "qd32-sqpoll against qd32 has no ratio: a repetition completed no I/O");
}

TEST(Verdict, RatiosPrintWithTheirSignificantDigits) {
  EXPECT_EQ(format_ratio(1.0), "1.00x");
  EXPECT_EQ(format_ratio(0.7049), "0.70x");
  EXPECT_EQ(format_ratio(0.07), "0.070x");
  EXPECT_EQ(format_ratio(0.00123), "0.0012x");
  EXPECT_EQ(format_ratio(12.34), "12.3x");
  EXPECT_EQ(format_ratio(1234), "1234x");
  EXPECT_EQ(format_ratio_range(0.95, 1.05), "0.95-1.05x");
  EXPECT_EQ(format_ratio_range(1.001, 1.002), "1.00x");
}

TEST(Verdict, RepeatNeededFromTheSpread) {
  const VerdictRule rule;
  // sd 0.1 of log IOPS, ratio 1: the interval must shrink inside ±5%:
  // n = 2 (1.959964 * sqrt(pi/3) * 0.1 / ln 1.05)^2 = 33.8 -> 34.
  const double z = 1.959963984540054, k = z * std::sqrt(std::acos(-1.0) / 3) * 0.1 / std::log(1.05);
  EXPECT_EQ(repeat_needed(1.0, 0.1, 5, rule, nullptr), static_cast<unsigned>(std::ceil(2 * k * k)));
  EXPECT_EQ(repeat_needed(1.0, 0.1, 5, rule, nullptr), 34u);
  // Far from 1, excluding 1 is the easier goal: fewer repetitions.
  EXPECT_LT(repeat_needed(1.3, 0.1, 5, rule, nullptr), 34u);
  // Never fewer than what gives an interval, or than now + 1.
  EXPECT_EQ(repeat_needed(3.0, 0.001, 2, rule, nullptr), 4u);
  EXPECT_EQ(repeat_needed(3.0, 0.001, 9, rule, nullptr), 10u);
  bool capped = false;
  EXPECT_EQ(repeat_needed(1.0, 2.0, 5, rule, &capped), kMaxRepeat);
  EXPECT_TRUE(capped);
}

using test::variant;

TEST(Summary, VerdictsAgainstTheBaselineWithAndWithoutOutliers) {
  CompareResult c;
  c.variants = {variant("a", {100, 110, 90, 105, 95}), variant("b", {200, 210, 190, 205, 195}),
                variant("c", {105, 95, 112, 98, 101}), variant("d", {100, 101, 99, 100, 140, 100})};
  summarize(c);
  EXPECT_EQ(c.variants[0].verdict.kind, VerdictKind::Baseline);
  EXPECT_EQ(c.variants[1].verdict.kind, VerdictKind::Faster);
  EXPECT_DOUBLE_EQ(*c.variants[1].ratio_of_medians, 2.0);
  EXPECT_EQ(c.variants[2].verdict.kind, VerdictKind::Unresolved);
  EXPECT_EQ(c.variants[3].outliers, (std::vector<size_t>{4}));
  ASSERT_TRUE(c.variants[3].without_outliers);
  EXPECT_FALSE(c.variants[0].cpu_per_io_ns.s.has_value());  // never measured: no figure, not 0
  EXPECT_EQ(c.headline.rfind("'b' completes 2.00x the I/Os of 'a' (95% CI ", 0), 0u) << c.headline;
  EXPECT_NE(c.headline.find("'c' against 'a' is not resolved at this noise"), std::string::npos) << c.headline;
  c.baseline = 1;
  summarize(c);
  EXPECT_EQ(c.variants[0].verdict.kind, VerdictKind::Slower);
  EXPECT_EQ(c.variants[1].verdict.kind, VerdictKind::Baseline);
}

TEST(Summary, AnOutlierThatDecidesTheVerdictIsReported) {
  // Four repetitions each: with the wild one, the ranges overlap; without it
  // (three against four) no 95% interval exists. The two verdicts differ in
  // what they can say, and the summary keeps both.
  CompareResult c;
  c.variants = {variant("base", {100, 101, 99, 100, 100.5}), variant("x", {104, 105, 104.5, 30, 104.8})};
  summarize(c);
  const auto& x = c.variants[1];
  ASSERT_EQ(x.outliers, (std::vector<size_t>{3}));
  ASSERT_TRUE(x.without_outliers);
  EXPECT_EQ(x.without_outliers->kind, VerdictKind::Faster);
  EXPECT_NE(x.verdict.kind, VerdictKind::Faster);
  const std::string notes = compare_notes(c);
  EXPECT_NE(notes.find("'x'*: without the outliers the verdict would be faster ("), std::string::npos) << notes;
  EXPECT_NE(notes.find("; with them it is 'not resolved'. The table keeps every repetition"), std::string::npos) << notes;

  // A repetition that completed no I/O: no verdict with it, one without it.
  c.variants = {variant("base", {100, 101, 99, 100, 100.5}), variant("stalled", {104, 105, 0, 104.5, 104.8})};
  summarize(c);
  EXPECT_TRUE(c.variants[1].verdict.no_io);
  const std::string stalled = compare_notes(c);
  EXPECT_NE(stalled.find("'stalled': no ratio: a repetition completed no I/O\n"), std::string::npos) << stalled;
  EXPECT_NE(stalled.find("; with them there is none."), std::string::npos) << stalled;
  EXPECT_NE(headline(c).find("'stalled' against 'base' has no ratio: a repetition completed no I/O"), std::string::npos)
      << headline(c);
}

TEST(Headline, Qd1AnswersItsQuestionOrSaysItCannot) {
  CompareResult c;
  c.preset = "qd1";
  c.variants = {variant("psync", {5140, 5200, 5100, 3000, 5180}), variant("uring-sleep", {3590, 3600, 3580, 3620, 3570}),
                variant("uring-spin", {7600, 7700, 7650, 7550, 7620})};
  for (auto& r : c.variants[1].runs) r.cpu_per_io_ns = 40000;
  for (auto& r : c.variants[2].runs) r.cpu_per_io_ns = 60000;
  summarize(c);
  // The slow psync repetition leaves it unresolved; without it, slower: both said.
  EXPECT_EQ(c.headline.rfind("On this machine, at depth 1, io_uring (sleep) against pread is not resolved at this noise "
                             "(0.70x, 95% CI 0.", 0), 0u) << c.headline;
  EXPECT_NE(c.headline.find(" (without the outlying repetitions: slower (0.70x, 95% CI 0.69-0.71x))"), std::string::npos)
      << c.headline;
  c.variants[0].runs[3].iops = 5150;
  summarize(c);
  EXPECT_EQ(c.headline.rfind("On this machine, at depth 1, io_uring (sleep) completes 0.70x the I/Os of pread (95% CI 0.", 0), 0u)
      << c.headline;
  EXPECT_NE(c.headline.find("; busy-polling (spin, 1.50x the CPU per I/O of sleeping) completes 1.48x the I/Os of pread (95% CI "),
            std::string::npos) << c.headline;
  // Three repetitions: no answer, and the headline says so.
  c.variants = {variant("psync", {5140, 5200, 5100}), variant("uring-sleep", {3590, 3600, 3580})};
  summarize(c);
  EXPECT_EQ(c.headline,
            "On this machine, at depth 1, io_uring (sleep) against pread is not resolved: 3 repetitions against 3 "
            "cannot give a 95% interval (0.70x): run with --repeat 4.");
}

TEST(Headline, LibaioSaysWhatIoUringCompletesAtEachDepthAndAtWhatCpu) {
  CompareResult c;
  c.preset = "libaio";
  c.variants = {variant("libaio-qd1", {9000, 9100, 8900, 9050, 8950}), variant("uring-qd1", {9020, 9080, 8950, 9040, 8960}),
                variant("libaio-qd32", {40000, 40500, 39500, 40200, 39800}),
                variant("uring-qd32", {48000, 48600, 47400, 48240, 47760})};
  for (auto& r : c.variants[2].runs) r.cpu_per_io_ns = 10000;
  for (auto& r : c.variants[3].runs) r.cpu_per_io_ns = 8000;
  summarize(c);
  EXPECT_EQ(c.headline.rfind("On this machine, at depth 1, io_uring completes as many I/Os as libaio (1.00x, 95% CI ", 0), 0u)
      << c.headline;
  EXPECT_NE(c.headline.find("; at depth 32, io_uring (0.80x the CPU per I/O of libaio) completes 1.20x the I/Os of libaio "
                            "(95% CI "), std::string::npos) << c.headline;
  EXPECT_EQ(c.headline.back(), '.');
  // Only one depth run (a user's --iodepth, or a variant that failed): that one is said.
  c.variants.resize(2);
  summarize(c);
  EXPECT_EQ(c.headline.find("depth 32"), std::string::npos) << c.headline;
  EXPECT_EQ(c.headline.rfind("On this machine, at depth 1, io_uring", 0), 0u) << c.headline;
}

}  // namespace
}  // namespace ioacct

namespace ioacct {
namespace {

TEST(Rounds, AnotherRoundUntilResolvedOrABoundIsReached) {
  CompareResult c;
  c.variants = {variant("a", {100, 110, 90, 105}), variant("b", {104, 96, 112, 99})};
  summarize(c);
  ASSERT_EQ(open_verdicts(c), 1u);
  const RoundPolicy p{true, 10, 60.0};
  EXPECT_FALSE(next_round(c, 4, 20, 20, p));                       // 5 s a round, 20 s in: go on
  EXPECT_EQ(next_round(c, 10, 50, 50, p), RoundStop::MaxRounds);
  EXPECT_EQ(next_round(c, 8, 56, 48, p), RoundStop::Budget);      // the next 6 s round would end at 62 s
  EXPECT_FALSE(next_round(c, 8, 53, 48, p));                       // ... at 59 s: go on
  EXPECT_EQ(round_stop_text(RoundStop::Budget, c, 8, "1m"), "--budget 1m reached after 8 rounds, with 1 verdict not resolved");
  c.variants = {variant("a", {100, 101, 99, 100}), variant("b", {200, 201, 199, 200})};
  summarize(c);
  EXPECT_EQ(next_round(c, 4, 20, 20, p), RoundStop::Resolved);
  EXPECT_EQ(round_stop_text(RoundStop::Resolved, c, 4, ""), "every verdict resolved after 4 rounds");
}

}  // namespace
}  // namespace ioacct
