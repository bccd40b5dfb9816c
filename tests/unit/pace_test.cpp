// The pacing schedule: how many I/Os a window holds, and no bursts.
#include "workload/pace.hpp"

#include <gtest/gtest.h>

#include <cmath>
#include <vector>

namespace ioacct {
namespace {

constexpr uint64_t kS = 1'000'000'000;

// A thread that is never late: it asks at every due time, one I/O at a time,
// until the schedule is over. Returns how many I/Os it was given.
uint64_t run_on_time(double rate, uint64_t start, uint64_t deadline) {
  PaceSchedule p(rate, start, deadline);
  uint64_t n = 0;
  while (!p.done()) {
    const uint64_t t = p.next_due();
    EXPECT_GE(t, start);
    EXPECT_LT(t, deadline);
    n += p.take(1, t);
  }
  EXPECT_EQ(p.next_due(), UINT64_MAX);
  return n;
}

// Found by a test pass: --rate-iops 10 --runtime 1s counted 11 I/Os (both
// ends of the window), --rate-iops 1 --runtime 1500ms ran 2 s.
TEST(PaceSchedule, AWindowHoldsCeilOfRateTimesLength) {
  struct Case {
    double rate;
    uint64_t window_ns;
    uint64_t ios;
  };
  for (const Case& c : {Case{1, kS, 1}, Case{1, 3 * kS / 2, 2}, Case{10, kS, 10}, Case{1000, kS, 1000},
                        Case{3, kS, 3}, Case{7, kS / 2, 4}, Case{1e6, kS / 10, 100'000}}) {
    SCOPED_TRACE(testing::Message() << c.rate << "/s over " << c.window_ns << " ns");
    const uint64_t start = 123'456'789;
    const uint64_t n = run_on_time(c.rate, start, start + c.window_ns);
    EXPECT_EQ(n, c.ios);
    // Never above the pace by more than one I/O over the window.
    EXPECT_LE(static_cast<double>(n), c.rate * static_cast<double>(c.window_ns) / 1e9 + 1);
  }
}

TEST(PaceSchedule, DueTimesDoNotDriftWithRounding) {
  PaceSchedule p(3, 0);  // a period of 333333333.33 ns
  for (uint64_t k = 0; k < 3000; ++k) ASSERT_EQ(p.take(1, p.next_due()), 1u);
  EXPECT_EQ(p.next_due(), 1000 * kS) << "3000 I/Os at 3/s end exactly 1000 s later";
}

TEST(PaceSchedule, NothingIsDueEarly) {
  PaceSchedule p(10, kS);
  EXPECT_EQ(p.take(32, kS - 1), 0u);
  EXPECT_EQ(p.take(32, kS), 1u) << "the first I/O is due at the start";
  EXPECT_EQ(p.take(32, kS + 99'999'999), 0u);
  EXPECT_EQ(p.next_due(), kS + 100'000'000);
  EXPECT_EQ(p.take(32, kS + 250'000'000), 2u) << "two slots passed: both are taken (less than a period behind)";
}

TEST(PaceSchedule, ABacklogIsDroppedNotBurst) {
  PaceSchedule p(1000, 0);  // 1 ms period
  EXPECT_EQ(p.take(1, 0), 1u);
  // The thread comes back 50 ms late with room for 32: it may not send the
  // 50 missed slots at once; only what fits, and the rest is dropped.
  EXPECT_EQ(p.take(4, 50'000'000), 4u);
  EXPECT_EQ(p.next_due(), 50'000'000u) << "the schedule starts again from now";
  EXPECT_EQ(p.take(32, 50'000'000), 1u);
  EXPECT_EQ(p.take(32, 50'999'999), 0u);
  // Over any second from here on, the pace holds.
  uint64_t n = 0;
  for (uint64_t t = 51'000'000; t < 1'051'000'000; t += 100'000) n += p.take(32, t);
  EXPECT_EQ(n, 1000u);
}

TEST(PaceSchedule, NoneAtOrAfterTheDeadline) {
  PaceSchedule p(1, 0, kS / 10);  // a 100 ms window at 1/s
  EXPECT_EQ(p.take(32, 0), 1u);
  EXPECT_TRUE(p.done());
  EXPECT_EQ(p.take(32, 5 * kS), 0u);
  PaceSchedule q(10, 0, kS);
  EXPECT_EQ(q.take(32, kS - 1), 10u);
  EXPECT_EQ(q.take(32, kS), 0u) << "the slot at the deadline belongs to the next window";
}

// fio's rate_ddir(): the direction drawn when it is due, else the other of
// read and write when that one is due and drawn at all, else nothing until
// the sooner of the two.
TEST(DirPace, TheDrawnDirectionWhenDueElseTheOtherElseTheSoonerOfTheTwo) {
  const uint64_t t0 = 1000;
  DirPace p({10, 5, 0}, {true, true, false}, t0);  // reads every 100 ms, writes every 200 ms
  EXPECT_EQ(p.take(0, t0), 0);
  EXPECT_EQ(p.take(0, t0), 1) << "reads ahead, writes due: the write goes";
  EXPECT_EQ(p.take(0, t0), -1) << "both ahead";
  EXPECT_EQ(p.take(1, t0), -1);
  EXPECT_EQ(p.next_due(1), t0 + kS / 10) << "the sooner of the two: the next read";
  EXPECT_EQ(p.take(1, t0 + kS / 10), 0) << "a write drawn, the read due: the read goes";
  EXPECT_EQ(p.next_due(0), t0 + kS / 5);
  EXPECT_EQ(p.take(1, t0 + kS / 5), 1);
}

TEST(DirPace, AnUnpacedDirectionIsAlwaysDueAndTakesThePacedOnesTurns) {
  DirPace p({10, 0, 0}, {true, true, false}, 0);
  EXPECT_EQ(p.take(0, 0), 0);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(p.take(0, 1), 1) << "reads ahead: their turns go to the writes";
  EXPECT_EQ(p.next_due(1), 0u);
  EXPECT_EQ(p.next_due(0), 0u) << "a read drawn can go now (as a write)";
}

TEST(DirPace, ADirectionTheMixNeverDrawsTakesNoTurn) {
  DirPace p({10, 0, 0}, {true, false, false}, 0);  // --rwmix-read 100
  EXPECT_EQ(p.take(0, 0), 0);
  EXPECT_EQ(p.take(0, 1), -1) << "no write share: the read waits for its slot";
  EXPECT_EQ(p.next_due(0), kS / 10);
  DirPace trims({0, 0, 10}, {true, true, true}, 0);
  EXPECT_EQ(trims.take(2, 0), 2);
  EXPECT_EQ(trims.take(2, 1), -1) << "a trim ahead waits: only reads and writes give each other turns";
}

TEST(DirPace, NoneLeftBeforeTheDeadlineIsNever) {
  DirPace p({10, 10, 0}, {true, true, false}, 0, kS / 10);
  EXPECT_EQ(p.take(0, 0), 0);
  EXPECT_EQ(p.take(0, 0), 1);
  EXPECT_EQ(p.take(0, 0), -1);
  EXPECT_EQ(p.next_due(0), UINT64_MAX);
}

// --rate-process poisson: the same mean, exponential gaps (cv 1, 39% under
// half the mean), nothing early, the same seed the same schedule.
TEST(PaceSchedule, PoissonGapsAreExponentialWithThePacesMean) {
  const auto gaps = [](uint64_t seed) {
    PaceSchedule p(1000, kS, UINT64_MAX, RateProcess::Poisson, seed);
    std::vector<double> g;
    uint64_t last = kS;
    for (int i = 0; i < 20000; ++i) {
      const uint64_t t = p.next_due();
      EXPECT_GE(t, last);
      EXPECT_EQ(p.take(1, t - 1), 0u) << "nothing is due before its time";
      EXPECT_EQ(p.take(1, t), 1u);
      g.push_back(static_cast<double>(t - last));
      last = t;
    }
    return g;
  };
  const std::vector<double> g = gaps(7);
  double mean = 0, var = 0, under = 0;
  for (double x : g) mean += x / static_cast<double>(g.size());
  for (double x : g) var += (x - mean) * (x - mean) / static_cast<double>(g.size());
  for (double x : g) under += x < mean / 2;
  EXPECT_NEAR(mean, 1e6, 3e4);  // 1 ms, within 3 standard errors
  EXPECT_NEAR(std::sqrt(var) / mean, 1.0, 0.03);
  EXPECT_NEAR(under / static_cast<double>(g.size()), 1 - std::exp(-0.5), 0.015);
  EXPECT_EQ(gaps(7), g);
  EXPECT_NE(gaps(8), g);
}

TEST(PaceSchedule, PoissonHoldsTheDeadline) {
  PaceSchedule p(1000, 0, kS, RateProcess::Poisson, 1);
  uint64_t n = 0;
  while (!p.done()) n += p.take(1, p.next_due());
  EXPECT_NEAR(static_cast<double>(n), 1000, 100);  // Poisson: sd √1000 ≈ 32
  EXPECT_EQ(p.next_due(), UINT64_MAX);
}

// --rate-min / --rate-iops-min: fio's check_min_rate().
TEST(RateFloor, SettlesTakesABaselineThenHoldsEachCycle) {
  RateFloor f({0, 0, 0}, {100, 100, 0}, kS / 4, kS);
  const std::array<uint64_t, 3> none{};
  EXPECT_FALSE(f.due(kS + 2 * kS - 1));
  ASSERT_TRUE(f.due(3 * kS));
  EXPECT_FALSE(f.check(3 * kS, {500, 0, 0}, none)) << "the first check takes the baseline";
  EXPECT_FALSE(f.due(3 * kS + kS / 4 - 1));
  // 30 reads in 250 ms: 120 a second, over 100; writes never moved: not held.
  EXPECT_FALSE(f.check(3 * kS + kS / 4, {530, 0, 0}, none));
  // 20 in the next 250 ms: 80 a second.
  const auto miss = f.check(3 * kS + kS / 2, {550, 0, 0}, none);
  ASSERT_TRUE(miss);
  EXPECT_EQ(miss->dir, 0);
  EXPECT_TRUE(miss->ios);
  EXPECT_NEAR(miss->got, 80, 1e-9);
  EXPECT_EQ(miss->spent_ns, kS / 4);
}

TEST(RateFloor, BytesAndEachDirectionOnItsOwn) {
  RateFloor f({0, 1 << 20, 0}, {}, kS, 0);
  EXPECT_FALSE(f.check(2 * kS, {10, 10, 0}, {0, 0, 0}));
  EXPECT_FALSE(f.check(3 * kS, {11, 300, 0}, {4096, 2u << 20, 0})) << "reads have no floor; writes moved 2 MiB/s";
  const auto miss = f.check(4 * kS, {12, 310, 0}, {8192, (2u << 20) + 40960, 0});
  ASSERT_TRUE(miss);
  EXPECT_EQ(miss->dir, 1);
  EXPECT_FALSE(miss->ios);
  EXPECT_NEAR(miss->got, 40960, 1e-6);
}

}  // namespace
}  // namespace ioacct
