// compare's figures agree with each other and its advice stays bounded: the
// ratio column is the median of pairwise ratios, and a row whose medians
// point the other way says why; the repetitions advised come from a spread
// that one outlier cannot inflate, within what an hour (or --budget) of
// rounds can do, and saved files are told to add files, not --repeat.
#include <gtest/gtest.h>

#include <cmath>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/headline.hpp"
#include "compare/stats.hpp"
#include "compare/summary.hpp"
#include "compare/verdict.hpp"
#include "report/compare_report.hpp"

namespace ioacct {
namespace advice_test {

VariantSummary planted(std::string name, const std::vector<double>& iops) {
  VariantSummary v;
  v.name = std::move(name);
  for (double x : iops) {
    RunMetrics m;
    m.iops = x;
    v.runs.push_back(m);
  }
  return v;
}

// The spread the advice used to come from: the pooled standard deviation of
// log IOPS, which one wild repetition inflates.
double pooled_sd(const std::vector<double>& x, const std::vector<double>& y) {
  double ss = 0;
  for (const auto* v : {&x, &y}) {
    double mean = 0;
    for (double a : *v) mean += std::log(a) / static_cast<double>(v->size());
    for (double a : *v) ss += (std::log(a) - mean) * (std::log(a) - mean);
  }
  return std::sqrt(ss / static_cast<double>(x.size() + y.size() - 2));
}

// The median IOPS is higher, yet 16 of the 25 pairs of repetitions are lower:
// the variant's two slow repetitions sit under every baseline repetition,
// the baseline's two fast ones over every repetition of the variant.
const std::vector<double> kRevBase = {99, 100, 101, 130, 131}, kRev = {80, 81, 102, 103, 104};
// One repetition at 30 among ~104: an outlier.
const std::vector<double> kOddBase = {100, 101, 99, 100, 100.5}, kOdd = {104, 105, 104.5, 30, 104.8};
// Wide and overlapping, around 1.
const std::vector<double> kNoisyBase = {100, 90, 115, 85, 105}, kNoisy = {80, 120, 100, 95, 110};

TEST(CompareAdvice, TheRobustSpreadIgnoresOneOutlier) {
  // Pairs within {1, e} and {1, e^2}: |log| differences 1 and 2, median 1.5.
  EXPECT_NEAR(*robust_log_sd({1, std::exp(1.0)}, {1, std::exp(2.0)}), kShamosScale * 1.5, 1e-12);
  EXPECT_FALSE(robust_log_sd({5}, {7}));  // no pair within either
  EXPECT_FALSE(robust_log_sd({5, 0}, {7, 8}));
  const double robust = *robust_log_sd(kOdd, kOddBase), pooled = pooled_sd(kOdd, kOddBase);
  EXPECT_LT(robust, 0.02) << "the 30 moves 4 of the 20 pairs: the median stays with the rest";
  EXPECT_GT(pooled, 0.3) << "the old spread, inflated by the one repetition";
  const PairCount p = pair_count(kRev, kRevBase);
  EXPECT_EQ(p.pairs, 25u);
  EXPECT_EQ(p.below, 16u);
  EXPECT_EQ(p.above, 9u);
  EXPECT_EQ(pair_count({1, 2}, {2}).below + pair_count({1, 2}, {2}).above, 1u) << "a tie counts in neither";
}

TEST(CompareAdvice, OneOutlierNoLongerAsksForHundredsOfRepetitions) {
  const VerdictRule rule;
  const Verdict v = decide(kOdd, kOddBase, rule);
  ASSERT_EQ(v.kind, VerdictKind::Unresolved);
  EXPECT_EQ(v.repeat_needed, 6u);  // the least above the 5 run, as the spread of the other repetitions allows
  EXPECT_FALSE(v.capped);
  // With the pooled spread, the same verdict asked for 816.
  EXPECT_GT(repeat_needed(v.ratio->estimate, pooled_sd(kOdd, kOddBase), 5, rule, nullptr), 800u);
  EXPECT_EQ(verdict_text(v, rule), "not resolved at this noise (1.04x, 95% CI 0.30-1.06x): run with --repeat 6");
}

TEST(CompareAdvice, RepetitionsAreAdvisedWithinAnHourOrTheBudget) {
  VerdictRule rule;
  Verdict v = decide(kNoisy, kNoisyBase, rule);
  ASSERT_EQ(v.kind, VerdictKind::Unresolved);
  ASSERT_EQ(v.repeat_needed, 123u);
  EXPECT_EQ(repeat_advice(v, rule), "run with --repeat 123") << "no round time: only the --repeat limit bounds it";
  rule.more.round_s = 12;  // 123 rounds of 12 s: 24.6 min
  EXPECT_EQ(repeat_advice(v, rule), "run with --repeat 123 (about 25 min)");
  EXPECT_EQ(repeat_advice_short(v, rule), "--repeat 123");
  rule.more.round_s = 60;  // 2 h: past the hour
  EXPECT_EQ(advice_reach(rule), 60u);
  EXPECT_TRUE(out_of_reach(v, rule));
  EXPECT_EQ(repeat_advice(v, rule),
            "too noisy to resolve by repeating: at a run-to-run spread of 18% it takes about 123 repetitions per variant "
            "(about 2.0 h); steadier runs (a longer --runtime, an idle machine) take fewer");
  EXPECT_EQ(repeat_advice_short(v, rule), "too noisy");
  EXPECT_EQ(verdict_text(v, rule).find("--repeat 123"), std::string::npos) << verdict_text(v, rule);
  rule.more.budget_s = 3 * 3600.0;  // a --budget of 3 h makes 2 h sensible
  EXPECT_EQ(advice_reach(rule), 180u);
  EXPECT_EQ(repeat_advice(v, rule), "run with --repeat 123 (about 2.0 h)");
  // Past the --repeat limit, never "1000 or more": said as noise.
  rule = VerdictRule{};
  v.capped = true;
  v.repeat_needed = kMaxRepeat;
  EXPECT_EQ(repeat_advice(v, rule).rfind("too noisy to resolve by repeating: at a run-to-run spread of 18% it takes more "
                                         "than 1000 repetitions per variant;", 0),
            0u)
      << repeat_advice(v, rule);
  // Resolved verdicts advise nothing.
  EXPECT_EQ(repeat_advice(decide({200, 201, 199, 200}, {100, 101, 99, 100}, rule), rule), "");
}

TEST(CompareAdvice, SavedFilesAreToldToAddFilesNotRepeat) {
  VerdictRule rule;
  rule.more.saved_bench = true;
  const Verdict v = decide(kOdd, kOddBase, rule);
  EXPECT_EQ(repeat_advice(v, rule), "give 6 saved runs of each variant, as NAME=RUN1.json,...,RUN6.json");
  EXPECT_EQ(repeat_advice_short(v, rule), "6 runs");
  EXPECT_EQ(verdict_text(v, rule).find("--repeat"), std::string::npos) << verdict_text(v, rule);
  rule.more = {};
  rule.more.saved_compare = true;
  EXPECT_EQ(repeat_advice(v, rule), "run the comparison again with --repeat 6 and compare its file");
  rule.more.saved_bench = true;
  EXPECT_EQ(repeat_advice(v, rule),
            "give 6 saved runs of each variant (bench runs as NAME=RUN1.json,...,RUN6.json; a comparison run again with "
            "--repeat 6)");
  // At most kSavedAdviceMax runs are asked for.
  const Verdict noisy = decide(kNoisy, kNoisyBase, rule);
  EXPECT_LE(advice_reach(rule), kSavedAdviceMax);
  rule.more = {};
  rule.more.saved_bench = true;
  Verdict many = noisy;
  many.repeat_needed = kSavedAdviceMax + 1;
  EXPECT_EQ(repeat_advice(many, rule).rfind("too noisy to resolve by repeating: ", 0), 0u) << repeat_advice(many, rule);
  EXPECT_NE(repeat_advice(many, rule).find("about 101 saved runs per variant;"), std::string::npos) << repeat_advice(many, rule);
}

TEST(CompareReversal, AMedianAboveWithARatioBelowOneSaysWhy) {
  const VerdictRule rule;
  const Verdict v = decide(kRev, kRevBase, rule);
  ASSERT_TRUE(v.reversal);
  EXPECT_NEAR(v.reversal->medians, 102.0 / 101, 1e-12);
  EXPECT_LT(v.ratio->estimate, 1);
  EXPECT_EQ(reversal_text(v), "the ratio of the medians is 1.01x, but it ran slower in 16 of the 25 pairs of repetitions");
  EXPECT_EQ(verdict_text(v, rule).rfind("not resolved at this noise (0.80x, 95% CI 0.62-1.04x; the ratio of the medians is "
                                        "1.01x, but it ran slower in 16 of the 25 pairs of repetitions): run with --repeat ",
                                        0),
            0u)
      << verdict_text(v, rule);
  // Both on one side of 1: nothing to explain.
  EXPECT_FALSE(decide(kOdd, kOddBase, rule).reversal);
  EXPECT_FALSE(decide(kNoisy, kNoisyBase, rule).reversal) << "medians alike (ratio 1): not the other way";
}

// The line of `out` that starts with `start`.
std::string line_of(const std::string& out, const std::string& start) {
  const size_t a = out.find("\n" + start);
  if (a == std::string::npos) return "";
  return out.substr(a + 1, out.find('\n', a + 1) - a - 1);
}

TEST(CompareReversal, TheTableLabelsItsRatioAndMarksTheRowThatDisagrees) {
  CompareResult c;
  c.variants = {planted("base", kRevBase), planted("rev", kRev)};
  summarize(c);
  const std::string out = format_compare_console(c);
  // Which figure is which: the medians and the verdict's ratio, named.
  const std::string head = line_of(out, "variant ");
  EXPECT_NE(head.find(" median IOPS "), std::string::npos) << out;
  EXPECT_LT(head.find(" median IOPS "), head.find(" pairwise ratio ")) << out;
  EXPECT_NE(out.find("pairwise ratio: IOPS against 'base' as the median of pairwise ratios (every repetition's IOPS over "
                     "every baseline repetition's; the Hodges-Lehmann estimate), the figure the verdict goes by"),
            std::string::npos)
      << out;
  // The row whose ratio points the other way from its medians is marked, and
  // the notes say why; the old line (a bare 0.80x beside 102 against 101) is gone.
  const std::string row = line_of(out, "rev ");
  EXPECT_NE(row.find("  102  "), std::string::npos) << row;
  EXPECT_NE(row.find("0.80x†"), std::string::npos) << row;
  EXPECT_EQ(row.find("0.80x "), std::string::npos) << "unmarked: " << row;
  EXPECT_NE(out.find("'rev'†: its median IOPS is above 'base''s (102 against 101: 1.01x), but it ran slower than 'base' in "
                     "16 of the 25 pairs of repetitions, so the median of pairwise ratios, which the verdict goes by, is "
                     "0.80x"),
            std::string::npos)
      << out;
  // The headline names the reversal too.
  EXPECT_NE(c.headline.find("'rev' against 'base' is not resolved at this noise (0.80x, 95% CI 0.62-1.04x; the ratio of the "
                            "medians is 1.01x, but it ran slower in 16 of the 25 pairs of repetitions)"),
            std::string::npos)
      << c.headline;
  // JSON: the same label, and the reversal's figures.
  const nlohmann::json j = compare_json(c, nlohmann::json::object());
  EXPECT_EQ(j["context"]["verdict_rule"]["ratio"], "median of pairwise ratios");
  const nlohmann::json& rev = j["variants"][1];
  EXPECT_NEAR(rev["ratio"].get<double>(), 0.80198, 1e-5);
  EXPECT_NEAR(rev["ratio_of_medians"].get<double>(), 102.0 / 101, 1e-12);
  ASSERT_TRUE(rev["reversal"].is_object()) << rev;
  EXPECT_EQ(rev["reversal"]["below"], 16);
  EXPECT_EQ(rev["reversal"]["pairs"], 25);
  EXPECT_TRUE(j["variants"][0]["reversal"].is_null());

  // An outlier: its ratio and medians agree, so no mark; its advice is
  // bounded, six repetitions where the pooled spread asked for 816.
  c.variants = {planted("base", kOddBase), planted("odd", kOdd)};
  summarize(c);
  const std::string odd = format_compare_console(c);
  EXPECT_EQ(odd.find("†:"), std::string::npos) << odd;
  EXPECT_EQ(line_of(odd, "odd ").find("†"), std::string::npos) << odd;
  EXPECT_NE(line_of(odd, "odd ").find("not resolved (--repeat 6)"), std::string::npos) << odd;
  const nlohmann::json k = compare_json(c, nlohmann::json::object());
  EXPECT_EQ(k["variants"][1]["repeat_needed"], 6);
  EXPECT_EQ(k["variants"][1]["repeat_out_of_reach"], false);
  EXPECT_TRUE(k["variants"][1]["reversal"].is_null());
}

}  // namespace advice_test
}  // namespace ioacct
