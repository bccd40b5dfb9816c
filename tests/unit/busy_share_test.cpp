// The share rule: each busy instant split among the labels in flight by
// their count, the shares adding up to busy_round()'s busy time exactly.
#include <gtest/gtest.h>

#include <numeric>
#include <random>

#include "trace/bpf/busy_round.hpp"
#include "trace/bpf/busy_share.hpp"

namespace ioacct {
namespace {

uint64_t sum(const std::vector<uint64_t>& v) { return std::accumulate(v.begin(), v.end(), uint64_t{0}); }

TEST(BusyShare, OneLabelAloneHasAllOfTheBusyTime) {
  const auto o = busy_shares(0, 100, {{10, 30}, {20, 50}}, {0, 0}, 1);
  EXPECT_EQ(o.share_ns[0], 40u);
  EXPECT_EQ(o.inflight_ns[0], 40u);
}

TEST(BusyShare, OverlapIsSplitByCountInFlight) {
  // 0..10: a alone; 10..20: a twice, b once (a 2/3, b 1/3); 20..30: b alone.
  const auto o = busy_shares(0, 100, {{0, 20}, {10, 20}, {10, 30}}, {0, 0, 1}, 2);
  EXPECT_EQ(o.share_ns[0] + o.share_ns[1], 30u);
  // 10 * 2/3 = 6.67 and 10 * 1/3 = 3.33: floored, the nanosecond left over
  // goes to one of them.
  EXPECT_GE(o.share_ns[0], 16u);
  EXPECT_LE(o.share_ns[0], 17u);
  EXPECT_GE(o.share_ns[1], 13u);
  EXPECT_LE(o.share_ns[1], 14u);
  EXPECT_EQ(o.inflight_ns[0], 20u);
  EXPECT_EQ(o.inflight_ns[1], 20u);
}

TEST(BusyShare, SpansAreClippedToTheRound) {
  const auto o = busy_shares(100, 200, {{50, 150}, {180, 400}, {10, 20}, {300, 400}}, {0, 1, 2, 3}, 4);
  EXPECT_EQ(o.share_ns[0], 50u);
  EXPECT_EQ(o.share_ns[1], 20u);
  EXPECT_EQ(o.share_ns[2], 0u);
  EXPECT_EQ(o.share_ns[3], 0u);
}

TEST(BusyShare, IdleTimeIsNobodys) {
  const auto o = busy_shares(0, 1000, {}, {}, 3);
  EXPECT_EQ(sum(o.share_ns), 0u);
  EXPECT_EQ(sum(o.inflight_ns), 0u);
}

// The property the report relies on: for any spans, the shares add up to
// the busy time busy_round() finds in the same spans, to the nanosecond.
TEST(BusyShare, SharesSumToTheUnionExactly) {
  std::mt19937_64 rng(34);
  for (int round = 0; round < 200; ++round) {
    const uint64_t from = 1000, to = 1000 + 1 + rng() % 100'000;
    const size_t n = rng() % 60, labels = 1 + rng() % 7;
    BusyRoundInput in{.from = from, .to = to};
    std::vector<uint32_t> l;
    for (size_t i = 0; i < n; ++i) {
      const uint64_t a = rng() % 120'000, b = a + rng() % 20'000;
      in.certain.push_back({a, b});
      l.push_back(static_cast<uint32_t>(rng() % labels));
    }
    const BusyRoundOutput r = busy_round(in);
    const BusyShareOutput s = busy_shares(from, to, in.certain, l, labels);
    ASSERT_EQ(sum(s.share_ns), r.busy_ns) << "round " << round;
    for (size_t k = 0; k < labels; ++k) {
      EXPECT_LE(s.share_ns[k], s.inflight_ns[k]);
      EXPECT_LE(s.inflight_ns[k], r.busy_ns);
    }
  }
}

}  // namespace
}  // namespace ioacct
