// The busy tracker's pure core: spans of one round to busy, unsure and depth.
#include <gtest/gtest.h>

#include <numeric>

#include "monitor/bpf/busy_round.hpp"

namespace ioacct {
namespace {

uint64_t total(const BusyRoundOutput& o) { return std::accumulate(o.depth_ns.begin(), o.depth_ns.end(), uint64_t{0}); }

TEST(BusyRound, TheUnionOfOverlappingSpansAndTheTimeAtEachDepth) {
  BusyRoundInput in{.from = 1000, .to = 2000};
  in.certain = {{1100, 1300}, {1200, 1400}, {1250, 1260}, {1600, 1700}};
  const BusyRoundOutput o = busy_round(in);
  EXPECT_EQ(o.busy_ns, 400u) << "1100..1400 and 1600..1700";
  EXPECT_EQ(o.unsure_ns, 0u);
  EXPECT_EQ(o.depth_ns[0], 600u);
  EXPECT_EQ(o.depth_ns[1], 100u + 100u + 100u) << "1100..1200, 1300..1400, 1600..1700";
  EXPECT_EQ(o.depth_ns[2], 90u + 10u) << "two at once 1200..1300 but three at 1250..1260 (bucket 2-3 both)";
  EXPECT_EQ(total(o), 1000u) << "the depths add up to the round";
}

TEST(BusyRound, SpansAreClippedToTheRound) {
  BusyRoundInput in{.from = 1000, .to = 2000};
  in.certain = {{0, 1100}, {1900, 5000}, {0, 500}, {2500, 3000}};
  const BusyRoundOutput o = busy_round(in);
  EXPECT_EQ(o.busy_ns, 200u) << "a request in flight at either edge counts only inside";
  EXPECT_EQ(total(o), 1000u);
}

TEST(BusyRound, TouchingSpansLeaveNoGapAndCountNothingTwice) {
  BusyRoundInput in{.from = 0, .to = 100};
  in.certain = {{10, 20}, {20, 30}};
  const BusyRoundOutput o = busy_round(in);
  EXPECT_EQ(o.busy_ns, 20u);
  EXPECT_EQ(o.depth_ns[1], 20u);
  EXPECT_EQ(o.depth_ns[2], 0u) << "the end sorts before the start at the same instant";
}

TEST(BusyRound, UnsureOnlyWhereNothingIsCertain) {
  BusyRoundInput in{.from = 0, .to = 1000};
  in.certain = {{100, 200}};
  in.unsure = {{150, 400}, {350, 450}};
  const BusyRoundOutput o = busy_round(in);
  EXPECT_EQ(o.busy_ns, 100u);
  EXPECT_EQ(o.unsure_ns, 250u) << "200..450";
  EXPECT_EQ(o.depth_ns[0], 900u) << "unsure spans add no depth";
  EXPECT_EQ(total(o), 1000u);
}

TEST(BusyRound, AnUnknownRequestMakesAllIdleTimeUnsure) {
  BusyRoundInput in{.from = 0, .to = 1000, .unknown = true};
  in.certain = {{100, 200}};
  const BusyRoundOutput o = busy_round(in);
  EXPECT_EQ(o.busy_ns, 100u);
  EXPECT_EQ(o.unsure_ns, 900u) << "the truth lies anywhere in [10%, 100%]";
}

TEST(BusyRound, UnplacedUnsureTimeIsTakenFromIdleTimeOnly) {
  BusyRoundInput in{.from = 0, .to = 1000, .unsure_extra_ns = 50};
  in.certain = {{0, 900}};
  EXPECT_EQ(busy_round(in).unsure_ns, 50u);
  in.unsure_extra_ns = 5000;
  EXPECT_EQ(busy_round(in).unsure_ns, 100u) << "never more than the idle time there is";
}

TEST(BusyRound, DeepQueuesLandInTheOpenBucket) {
  BusyRoundInput in{.from = 0, .to = 10};
  for (int i = 0; i < 300; ++i) in.certain.push_back({0, 10});
  const BusyRoundOutput o = busy_round(in);
  EXPECT_EQ(o.depth_ns[kBusyDepthBuckets - 1], 10u);
  EXPECT_EQ(busy_depth_low(kBusyDepthBuckets - 1), 256u);
}

// Many spans out of order take the radix path; the answer is the same as
// counting every nanosecond.
TEST(BusyRound, ManySpansInAnyOrderGiveWhatCountingEachNanosecondGives) {
  BusyRoundInput in{.from = 1'000'000, .to = 1'002'000};
  uint64_t x = 12345;
  auto rnd = [&] { return x = x * 6364136223846793005ull + 1442695040888963407ull, x >> 33; };
  for (int i = 0; i < 500; ++i) {
    const uint64_t a = in.from - 100 + rnd() % 2100, len = rnd() % 40;
    (i % 5 ? in.certain : in.unsure).push_back({a, a + len});
  }
  std::array<uint64_t, kBusyDepthBuckets> depth{};
  uint64_t busy = 0, unsure = 0;
  for (uint64_t t = in.from; t < in.to; ++t) {  // the nanosecond (t, t + 1]
    uint64_t c = 0, u = 0;
    for (const auto& s : in.certain) c += s.from <= t && t + 1 <= s.to;
    for (const auto& s : in.unsure) u += s.from <= t && t + 1 <= s.to;
    ++depth[static_cast<size_t>(busy_depth_bucket(c))];
    busy += c > 0;
    unsure += c == 0 && u > 0;
  }
  const BusyRoundOutput o = busy_round(in);
  EXPECT_EQ(o.busy_ns, busy);
  EXPECT_EQ(o.unsure_ns, unsure);
  EXPECT_EQ(o.depth_ns, depth);
}

TEST(BusyRound, AnEmptyOrBackwardRoundIsNothing) {
  EXPECT_EQ(total(busy_round({.from = 5, .to = 5})), 0u);
  EXPECT_EQ(total(busy_round({.from = 6, .to = 5})), 0u);
}

// The case a clean-clone ASan run found (23-28 "unseen starts" in a window
// whose starts the trace all saw): a request from before the attach ends and
// its struct starts the next one, both in one batch. They do not close each
// other: the end started unseen, and the new request is in flight.
TEST(BusyPair, AnEndFromBeforeTheFloorDoesNotCloseThisBatchsStart) {
  const BusyStructPairing p = busy_pair({.known = false, .starts = 1, .before = 1, .others = 0});
  EXPECT_EQ(p.unseen_before, 1);
  EXPECT_EQ(p.paired, 0);
  EXPECT_EQ(p.open_after, 1) << "the new request stays known";
  // The same struct's next batch then closes it like any other.
  const BusyStructPairing q = busy_pair({.known = true, .starts = 1, .before = 0, .others = 1});
  EXPECT_TRUE(q.known_closed_by_other);
  EXPECT_EQ(q.unseen_others, 0);
  EXPECT_EQ(q.open_after, 1);
}

TEST(BusyPair, TheKnownRequestIsClosedFirstThenThisBatchsStartsInOrder) {
  // known end, start, end, start: one left open, nothing unseen.
  const BusyStructPairing p = busy_pair({.known = true, .starts = 2, .before = 1, .others = 1});
  EXPECT_TRUE(p.known_closed_by_before);
  EXPECT_FALSE(p.known_closed_by_other);
  EXPECT_EQ(p.paired, 1);
  EXPECT_EQ(p.unseen_before + p.unseen_others, 0);
  EXPECT_EQ(p.open_after, 1);
  // The known request's end stamped after the floor (it started just as the
  // previous batch was cut) closes it all the same.
  const BusyStructPairing q = busy_pair({.known = true, .starts = 0, .before = 0, .others = 1});
  EXPECT_TRUE(q.known_closed_by_other);
  EXPECT_EQ(q.open_after, 0);
}

TEST(BusyPair, EndsBeyondTheStartsStartedUnseenAndStartsBeyondTheEndsWereLost) {
  const BusyStructPairing p = busy_pair({.known = false, .starts = 1, .before = 2, .others = 3});
  EXPECT_EQ(p.unseen_before, 2) << "nothing known for them to close";
  EXPECT_EQ(p.paired, 1);
  EXPECT_EQ(p.unseen_others, 2);
  EXPECT_EQ(p.open_after, 0);
  const BusyStructPairing q = busy_pair({.known = true, .starts = 2, .before = 0, .others = 0});
  EXPECT_EQ(q.open_after, 3) << "two of the three ended with no program seeing it: the caller counts them lost";
}

TEST(BusyPair, EveryRequestIsOpenClosedOrUnseenAndNothingGoesNegative) {
  for (int known = 0; known < 2; ++known)
    for (int starts = 0; starts < 5; ++starts)
      for (int before = 0; before < 5; ++before)
        for (int others = 0; others < 5; ++others) {
          const BusyStructPairing p = busy_pair({.known = known != 0, .starts = starts, .before = before, .others = others});
          const int closed_known = p.known_closed_by_before || p.known_closed_by_other ? 1 : 0;
          EXPECT_LE(closed_known, known);
          EXPECT_GE(p.unseen_before, 0);
          EXPECT_GE(p.unseen_others, 0);
          EXPECT_GE(p.open_after, 0);
          EXPECT_EQ(closed_known + p.paired + p.unseen_before + p.unseen_others, before + others) << "each end is one";
          EXPECT_EQ(known + starts, closed_known + p.paired + p.open_after) << "each request is closed or open";
        }
}

}  // namespace
}  // namespace ioacct
