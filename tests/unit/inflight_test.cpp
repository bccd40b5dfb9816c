// The in-flight merge over plain logs: the union, the time at each depth, the
// mean, and where the window ends.
#include <gtest/gtest.h>

#include "acct/inflight.hpp"

namespace ioacct {
namespace {

TEST(InflightMerger, TwoThreadsUnionDepthsAndMean) {
  InflightLog a, b;
  const std::vector<InflightLog*> logs = {&a, &b};
  InflightMerger m(2);
  m.start_at(100);
  a.push(100, 2);  // thread a: 2 in flight over [100, 300)
  a.push(300, 0);
  b.push(200, 1);  // thread b: 1 in flight over [200, 400)
  b.push(400, 0);
  a.finish();
  b.finish();
  const InflightResult r = m.finish(logs, 500);
  EXPECT_EQ(r.window_ns, 400u);
  EXPECT_EQ(r.busy_ns, 300u);                                // [100, 400)
  EXPECT_EQ(r.by_depth_ns[InflightResult::bucket(0)], 100u);  // [400, 500)
  EXPECT_EQ(r.by_depth_ns[InflightResult::bucket(1)], 100u);  // [300, 400)
  EXPECT_EQ(r.by_depth_ns[InflightResult::bucket(2)], 200u);  // 2 over [100, 200), 3 over [200, 300): bucket 2-3
  EXPECT_EQ(r.inflight_ns, 2 * 100u + 3 * 100u + 1 * 100u);  // mean 600 / 400 = 1.5
}

TEST(InflightMerger, TheDrainAfterAKnownWindowEndIsNotMerged) {
  // The main thread polls while the worker drains past the window's end:
  // once the end is known, nothing after it counts, even in a poll before
  // finish().
  InflightLog a;
  const std::vector<InflightLog*> logs = {&a};
  InflightMerger m(1);
  m.start_at(0);
  a.push(0, 4);
  a.watermark(1000);  // the window closes at 1000 ...
  a.push(1500, 2);    // ... and the drain goes on
  a.watermark(2000);
  m.poll(logs, [] { return uint64_t{1000}; });
  a.push(2000, 0);
  a.finish();
  const InflightResult r = m.finish(logs, 1000);
  EXPECT_EQ(r.window_ns, 1000u);
  EXPECT_EQ(r.busy_ns, 1000u);
  EXPECT_EQ(r.by_depth_ns[InflightResult::bucket(4)], 1000u) << "nothing from the drain";
  EXPECT_EQ(r.inflight_ns, 4000u);
}

TEST(InflightMerger, BeforeTheEndIsKnownAnOpenWorkersWatermarkBoundsTheMerge) {
  InflightLog a, b;
  const std::vector<InflightLog*> logs = {&a, &b};
  InflightMerger m(2);
  m.start_at(0);
  a.push(0, 1);
  a.watermark(5000);  // a has logged up to 5000
  b.push(0, 1);
  b.watermark(300);   // b only to 300: nothing past it is merged yet
  m.poll(logs, [] { return UINT64_MAX; });
  b.push(400, 0);
  b.watermark(600);
  a.push(800, 0);
  a.finish();
  b.finish();
  const InflightResult r = m.finish(logs, 1000);
  EXPECT_EQ(r.by_depth_ns[InflightResult::bucket(2)], 400u);  // [0, 400)
  EXPECT_EQ(r.by_depth_ns[InflightResult::bucket(1)], 400u);  // [400, 800)
  EXPECT_EQ(r.by_depth_ns[InflightResult::bucket(0)], 200u);  // [800, 1000)
}

// A worker whose count does not change logs no event, only its watermark:
// the intervals it has passed are done at the next poll, not at its next
// event (the time series waits for them).
TEST(InflightMerger, AWatermarkWithoutEventsClosesTheIntervalsItPassed) {
  InflightLog a;
  const std::vector<InflightLog*> logs = {&a};
  InflightMerger m(1);
  m.start_at(0);
  m.add_boundary(1000);
  m.add_boundary(2000);
  a.push(0, 32);
  a.watermark(1500);
  m.poll(logs, [] { return UINT64_MAX; });
  ASSERT_EQ(m.interval_busy().size(), 1u) << "the interval up to 1000 is done, the one up to 2000 is not";
  EXPECT_EQ(m.interval_busy()[0], 1000u);
  a.watermark(2500);
  m.poll(logs, [] { return UINT64_MAX; });
  ASSERT_EQ(m.interval_busy().size(), 2u);
  EXPECT_EQ(m.interval_busy()[1], 1000u);
  a.finish();
  const InflightResult r = m.finish(logs, 3000);
  EXPECT_EQ(r.busy_ns, 3000u);
  EXPECT_EQ(r.by_depth_ns[InflightResult::bucket(32)], 3000u);
}

}  // namespace
}  // namespace ioacct
