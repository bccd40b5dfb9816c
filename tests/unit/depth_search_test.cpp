// fio's latency-target search, step by step (runner/depth_search.hpp).
#include "runner/depth_search.hpp"

#include <gtest/gtest.h>

namespace ioacct {
namespace {

using Step = DepthSearch::Step;

TEST(DepthSearch, DoublesWhileEveryWindowMeetsTheTargetThenHoldsAndEnds) {
  DepthSearch s(8, 100.0);
  EXPECT_EQ(s.depth(), 1u);
  EXPECT_EQ(s.window_end(100, 0), Step::Up);
  EXPECT_EQ(s.depth(), 2u);
  EXPECT_EQ(s.window_end(100, 0), Step::Up);
  EXPECT_EQ(s.window_end(100, 0), Step::Up);
  EXPECT_EQ(s.depth(), 8u);
  EXPECT_EQ(s.window_end(100, 0), Step::Found) << "the most it may: one more window, counted afresh";
  EXPECT_TRUE(s.found());
  EXPECT_EQ(s.window_end(100, 0), Step::Done);
}

TEST(DepthSearch, AMissBisectsDownAndASuccessBisectsUpToTheLowestThatFailed) {
  DepthSearch s(32, 100.0);
  for (unsigned d : {2u, 4u, 8u, 16u}) {
    EXPECT_EQ(s.window_end(10, 0), Step::Up);
    EXPECT_EQ(s.depth(), d);
  }
  EXPECT_EQ(s.over_target(), Step::Down) << "percentile 100: one I/O over is a miss at once";
  EXPECT_EQ(s.depth(), 12u) << "halfway down to 8, the last that met it";
  EXPECT_EQ(s.window_end(10, 0), Step::Up);
  EXPECT_EQ(s.depth(), 14u) << "halfway up to 16, the lowest that failed";
  EXPECT_EQ(s.over_target(), Step::Down);
  EXPECT_EQ(s.depth(), 13u);
  EXPECT_EQ(s.window_end(10, 0), Step::Found) << "(13 + 14) / 2 is 13: it holds";
  EXPECT_EQ(s.depth(), 13u);
  EXPECT_EQ(s.window_end(10, 0), Step::Done);
}

TEST(DepthSearch, BelowOneHundredAWindowMissesWhenTooFewMetTheTarget) {
  DepthSearch s(4, 99.0);
  EXPECT_FALSE(s.miss_at_once());
  EXPECT_EQ(s.window_end(1000, 10), Step::Up) << "99.0% met";
  EXPECT_EQ(s.window_end(1000, 11), Step::Down) << "98.9% met";
  EXPECT_EQ(s.depth(), 1u);
  EXPECT_EQ(s.window_end(0, 0), Step::Same) << "a window with no I/O tells nothing";
}

TEST(DepthSearch, AMissAtDepthOneMeansNoDepthMeetsTheTarget) {
  DepthSearch s(8, 100.0);
  EXPECT_EQ(s.over_target(), Step::Failed);
  DepthSearch one(1, 100.0);
  EXPECT_EQ(one.window_end(5, 0), Step::Found) << "a depth of 1 at most holds at once";
}

// fio's latency_run=1: a depth that holds is held, window after window, and
// a later miss steps down again; the search never ends the job.
TEST(DepthSearch, KeptRunningItHoldsAndStepsDownButNeverEnds) {
  DepthSearch s(8, 100.0, true);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(s.window_end(100, 0), Step::Up);
  EXPECT_EQ(s.depth(), 8u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.window_end(100, 0), Step::Same);
  EXPECT_TRUE(s.found());
  EXPECT_EQ(s.over_target(), Step::Down) << "the device slowed: a miss at the held depth";
  EXPECT_EQ(s.depth(), 7u) << "halfway down to 7, one under the depth that held and now failed";
  // A failure at the job's own depth leaves the bound there, so a success
  // doubles back up to it, as fio's does (its latency_qd_high is iodepth).
  EXPECT_EQ(s.window_end(100, 0), Step::Up);
  EXPECT_EQ(s.depth(), 8u);
  EXPECT_EQ(s.window_end(100, 0), Step::Same);
}

}  // namespace
}  // namespace ioacct
