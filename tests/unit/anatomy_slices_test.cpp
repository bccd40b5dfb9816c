// bench --anatomy's in-run IOPS ratio (src/runner/anatomy_slices.cpp): the
// pairs of slices it is taken over, on made-up slices.
#include "runner/anatomy_slices.hpp"

#include <gtest/gtest.h>

namespace ioacct {
namespace {

constexpr uint64_t kS = 1'000'000'000;

TEST(AnatomySlices, EachOnSliceIsSetAgainstTheOffSliceAfterIt) {
  // IOPS on: 900, 800, 1000; off: 1000 each: ratios 0.9, 0.8, 1.0.
  const std::vector<AnatomySlice> s = {{true, 900, kS},  {false, 1000, kS}, {true, 800, kS},
                                       {false, 1000, kS}, {true, 500, kS / 2}, {false, 500, kS / 2}};
  const auto r = slice_ratio(s, 1.0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pairs, 3u);
  EXPECT_DOUBLE_EQ(r->median, 0.9);
  EXPECT_DOUBLE_EQ(r->min, 0.8);
  EXPECT_DOUBLE_EQ(r->max, 1.0);
  EXPECT_DOUBLE_EQ(r->on_share, 2200.0 / 4700.0);
}

TEST(AnatomySlices, ALoneOnSliceAtTheEndMakesNoPair) {
  const std::vector<AnatomySlice> s = {{true, 900, kS}, {false, 1000, kS}, {true, 450, kS}, {false, 500, kS},
                                       {true, 700, kS}};
  const auto r = slice_ratio(s, 1.0);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->pairs, 2u);
  EXPECT_DOUBLE_EQ(r->median, 0.9);
}

TEST(AnatomySlices, FewerThanTwoPairsOrAnIdleOffSliceGiveNoRatio) {
  EXPECT_FALSE(slice_ratio({{true, 900, kS}, {false, 1000, kS}}, 1.0));
  EXPECT_FALSE(slice_ratio({{true, 900, kS}, {false, 0, kS}, {true, 900, kS}, {false, 1000, kS}}, 1.0))
      << "an off slice with no completion says nothing of the programs";
  EXPECT_FALSE(slice_ratio({}, 1.0));
}

}  // namespace
}  // namespace ioacct
