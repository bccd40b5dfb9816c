// ioacct compare's pure parts on fixed inputs: matrix expansion, the
// interleaved order, the statistics of one variant (median, MAD, outliers).
// Verdicts are in compare_verdict_test.cpp, saved runs in compare_saved_test.cpp.
#include <gtest/gtest.h>

#include <algorithm>

#include "common/errors.hpp"
#include "compare/matrix.hpp"
#include "compare/stats.hpp"
#include "compare/summary.hpp"

namespace ioacct {
namespace {

using Words = std::vector<std::string>;

OptionKinds kinds() {
  const std::vector<std::string> flags = {"--sqpoll", "--buffered", "--no-iowait"};
  const std::vector<std::string> values = {"--engine", "--iodepth", "--runtime", "--cpus", "--bs"};
  auto in = [](const std::vector<std::string>& v, const std::string& n) { return std::find(v.begin(), v.end(), n) != v.end(); };
  return {[=](const std::string& n) { return in(flags, n) || in(values, n); },
          [=](const std::string& n) { return in(flags, n); },
          [](const std::string& n) { return n == "--cpus"; }};
}

TEST(Matrix, CommaListsBecomeAxesAndTheRestIsCommon) {
  const Matrix m = parse_matrix({"--engine", "psync,uring", "--iodepth=1,32", "--runtime", "1s", "--sqpoll", "off,on",
                                 "--cpus", "0,1", "/dev/x"},
                                kinds());
  EXPECT_EQ(m.fixed, (Words{"--runtime", "1s", "--cpus", "0,1", "/dev/x"}));
  ASSERT_EQ(m.axes.size(), 3u);
  EXPECT_EQ(m.axes[0].option, "--engine");
  EXPECT_EQ(m.axes[0].values, (Words{"psync", "uring"}));
  EXPECT_EQ(m.axes[1].values, (Words{"1", "32"}));
  EXPECT_TRUE(m.axes[2].flag);
  EXPECT_EQ(m.axes[2].values, (Words{"off", "on"}));
}

TEST(Matrix, ExpandsToTheCartesianProductFirstAxisSlowest) {
  const auto v = expand(parse_matrix({"--engine", "psync,uring", "--sqpoll", "off,on", "--bs", "8k"}, kinds()), {});
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].name, "engine=psync sqpoll=off");
  EXPECT_EQ(v[0].args, (Words{"--bs", "8k", "--engine", "psync"}));
  EXPECT_EQ(v[1].name, "engine=psync sqpoll=on");
  EXPECT_EQ(v[1].args, (Words{"--bs", "8k", "--engine", "psync", "--sqpoll"}));
  EXPECT_EQ(v[2].name, "engine=uring sqpoll=off");
  EXPECT_EQ(v[3].args, (Words{"--bs", "8k", "--engine", "uring", "--sqpoll"}));
}

TEST(Matrix, AFlagWithASingleOnOrOffIsFixed) {
  EXPECT_EQ(parse_matrix({"--sqpoll", "on"}, kinds()).fixed, (Words{"--sqpoll"}));
  EXPECT_EQ(parse_matrix({"--sqpoll", "off"}, kinds()).fixed, (Words{}));
  EXPECT_EQ(parse_matrix({"--sqpoll", "/dev/x"}, kinds()).fixed, (Words{"--sqpoll", "/dev/x"}));
}

TEST(Matrix, ConfigsMultiplyWithAxesAndComeAfterTheCommonWords) {
  const auto v = expand(parse_matrix({"--runtime", "1s", "--iodepth", "1,32"}, kinds()),
                        {{"spin", split_words("--wait spin")}, {"sleep", {}}});
  ASSERT_EQ(v.size(), 4u);
  EXPECT_EQ(v[0].name, "spin iodepth=1");
  EXPECT_EQ(v[0].args, (Words{"--runtime", "1s", "--wait", "spin", "--iodepth", "1"}));
  EXPECT_EQ(v[3].name, "sleep iodepth=32");
  EXPECT_EQ(expand(parse_matrix({"--bs", "8k"}, kinds()), {}).front().name, "default");
}

TEST(Matrix, RefusesEmptyItemsRepeatsAndTwoListsForOneOption) {
  EXPECT_THROW(parse_matrix({"--iodepth", "1,,32"}, kinds()), UsageError);
  EXPECT_THROW(parse_matrix({"--iodepth", "1,1"}, kinds()), UsageError);
  EXPECT_THROW(parse_matrix({"--iodepth", "1,2", "--iodepth", "3,4"}, kinds()), UsageError);
  try {
    parse_matrix({"--engine", "uring,"}, kinds());
    FAIL();
  } catch (const UsageError& e) {
    EXPECT_STREQ(e.what(), "--engine: 'uring,' has an empty item in its comma list");
  }
}

// Every variant once per round, and each round starts one variant later: a
// CI machine once ran the first of two identical nop variants 1.31x slower
// in every round, and a fixed order turned that into a verdict.
TEST(Interleave, RunsEveryVariantOncePerRoundEachRoundStartingOneLater) {
  const auto s = interleave(3, 3, 1);
  ASSERT_EQ(s.size(), 12u);
  std::string order;
  for (const auto& r : s) order += static_cast<char>('A' + r.variant);
  EXPECT_EQ(order, "ABCBCACABABC");
  for (size_t i = 0; i < 3; ++i) EXPECT_TRUE(s[i].warmup);
  for (size_t i = 3; i < 12; ++i) EXPECT_FALSE(s[i].warmup);
  EXPECT_EQ(s[0].repetition, 0u);
  EXPECT_EQ(s[3].repetition, 0u);
  EXPECT_EQ(s[7].repetition, 1u);
  EXPECT_EQ(s[7].variant, 0u);
  // The round --until-resolved adds goes on from there.
  const auto next = round_slots(3, 1 + 3, 3, false);
  ASSERT_EQ(next.size(), 3u);
  EXPECT_EQ(next[0].variant, 1u);
  EXPECT_EQ(next[0].repetition, 3u);
  // Over n rounds every variant holds every place once.
  for (size_t place = 0; place < 3; ++place) {
    std::string at;
    for (unsigned k = 0; k < 3; ++k) at += static_cast<char>('A' + round_slots(3, k, k, false)[place].variant);
    std::sort(at.begin(), at.end());
    EXPECT_EQ(at, "ABC");
  }
}

TEST(Stats, MedianOddEvenAndEmpty) {
  EXPECT_EQ(median({3, 1, 2}), 2.0);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({7}), 7.0);
  EXPECT_FALSE(median({}).has_value());
}

TEST(Stats, MadIsTheMedianOfAbsoluteDeviations) {
  // median 3; |deviations| 2 1 0 1 97 -> median 1
  EXPECT_EQ(mad({1, 2, 3, 4, 100}), 1.0);
  EXPECT_EQ(mad({5, 5, 5}), 0.0);
  EXPECT_FALSE(mad({}).has_value());
  const auto s = *spread({10, 30, 20});
  EXPECT_EQ(s.median, 20);
  EXPECT_EQ(s.min, 10);
  EXPECT_EQ(s.max, 30);
  EXPECT_EQ(s.mad, 10.0);
}

TEST(Stats, OutliersByScaledMad) {
  // median 100, |deviations| 1 0 0 1 10, MAD 1: the limit is 3 * 1.4826 = 4.45.
  EXPECT_EQ(outliers({99, 100, 100, 101, 110}), (std::vector<size_t>{4}));
  EXPECT_TRUE(outliers({99, 100, 100, 101, 104}).empty());  // 4 from the median: inside
  EXPECT_EQ(outliers({99, 100, 101, 100, 60}), (std::vector<size_t>{4}));
  EXPECT_TRUE(outliers({99, 100, 101}).empty());
  EXPECT_TRUE(outliers({1, 1000}).empty());  // two values: neither is the odd one
  // MAD 0: anything more than 1% from the median.
  EXPECT_EQ(outliers({50, 50, 50, 50.4, 52}), (std::vector<size_t>{4}));
  // A tiny MAD (paced runs): within 1% of the median is never an outlier.
  EXPECT_TRUE(outliers({99.98, 100.0, 100.01, 99.99, 99.5}).empty());
  EXPECT_EQ(outliers({99.98, 100.0, 100.01, 99.99, 98.9}), (std::vector<size_t>{4}));
}

// One job of a run with several: over its own window, with its own CPU, and
// no device figures (those are the whole run's).
TEST(Summary, AJobIsMeasuredOverItsOwnWindowWithItsOwnCpu) {
  JobResult j;
  j.window_ns = 2'000'000'000;
  j.total.ios = 1000;
  j.total.bytes_read = 1000 * 4096;
  for (int i = 0; i < 1000; ++i) j.total.latency->record(i < 990 ? 100'000 : 5'000'000);
  const RunMetrics no_cpu = measure(j);
  EXPECT_DOUBLE_EQ(no_cpu.iops, 500.0);
  EXPECT_DOUBLE_EQ(no_cpu.bytes_per_s, 500.0 * 4096);
  EXPECT_FALSE(no_cpu.cpu_per_io_ns.has_value()) << "--acct off: not measured, not 0";
  EXPECT_NEAR(*no_cpu.p50_ns, 100'000, 400);
  EXPECT_NEAR(*no_cpu.p99_ns, 100'000, 400);
  j.cpu = JobCpu{.submitters_s = 0.002, .sq_threads_s = 0.001, .iowq_s = 0.0005, .total_s = 0.0035, .by_thread_s = {0.002}};
  const RunMetrics m = measure(j);
  EXPECT_DOUBLE_EQ(*m.cpu_per_io_ns, 3500.0);
  EXPECT_DOUBLE_EQ(*m.cpu_submit_ns, 2000.0);
  EXPECT_DOUBLE_EQ(*m.cpu_sq_ns, 1000.0);
  EXPECT_DOUBLE_EQ(*m.cpu_iowq_ns, 500.0);
  EXPECT_FALSE(m.cpu_other_ns.has_value());
  EXPECT_FALSE(m.util_pct.has_value());
  EXPECT_FALSE(m.busy_pct.has_value());
}

}  // namespace
}  // namespace ioacct
