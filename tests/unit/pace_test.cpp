// The pacing schedule: how many I/Os a window holds, and no bursts.
#include "workload/pace.hpp"

#include <gtest/gtest.h>

#include <cmath>

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

}  // namespace
}  // namespace ioacct
