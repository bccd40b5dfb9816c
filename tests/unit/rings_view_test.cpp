// rings_view(): two snapshots in, SQ threads grouped with their rates, rings
// sorted; pure, so fixed inputs pin it down.
#include <gtest/gtest.h>

#include "monitor/rings.hpp"

namespace ioacct {
namespace {

RingSnapshot ring(int pid, int fd, std::optional<uint64_t> sq_tid, uint64_t total_us, uint64_t work_us,
                  uint64_t pending = 0) {
  RingSnapshot r;
  r.pid = pid;
  r.fd = fd;
  r.comm = "proc";
  r.locked = true;
  r.sq_pending = pending;
  r.cq_pending = 0;
  r.sq_thread = sq_tid;
  if (sq_tid) {
    r.sq_total_us = total_us;
    r.sq_work_us = work_us;
    r.sq_cpus_allowed = pid == 10 ? "1" : "0-1";
  }
  return r;
}

TEST(RingsView, GroupsRingsBySqThreadAndTakesRatesOverTheInterval) {
  RingScan a, b;
  a.stamp_ns = 1'000'000'000;
  b.stamp_ns = 3'000'000'000;  // 2 s later
  // pid 10: two rings sharing SQ thread 11; pid 20: its own SQ thread 21, mostly idle;
  // pid 30: no SQPOLL, most pending; pid 40: an SQ thread born between the scans.
  a.rings = {ring(10, 4, 11, 1'000'000, 500'000), ring(10, 5, 11, 1'000'000, 500'000),
             ring(20, 3, 21, 0, 0), ring(30, 3, std::nullopt, 0, 0)};
  b.rings = {ring(10, 4, 11, 2'000'000, 1'400'000), ring(10, 5, 11, 2'000'000, 1'400'000),
             ring(20, 3, 21, 1'800'000, 100'000), ring(30, 3, std::nullopt, 0, 0, 7),
             ring(40, 3, 41, 5'000'000, 0)};
  b.unreadable = 3;
  const RingsView v = rings_view(a, b);
  EXPECT_DOUBLE_EQ(v.interval_s, 2.0);
  EXPECT_EQ(v.processes, 4u);
  EXPECT_EQ(v.unreadable, 3u);
  ASSERT_EQ(v.sq_threads.size(), 3u);
  // Most CPU first: 21 (1.8 s), 11 (1.0 s), then 41 (no rate).
  const SqThreadView& idle = v.sq_threads[0];
  EXPECT_EQ(idle.tid, 21u);
  EXPECT_DOUBLE_EQ(*idle.cpu_s, 1.8);
  EXPECT_DOUBLE_EQ(*idle.cpu_share, 0.9);
  EXPECT_NEAR(*idle.work_ratio, 0.1 / 1.8, 1e-12);
  EXPECT_TRUE(idle.mostly_idle);
  EXPECT_FALSE(idle.pinned);
  const SqThreadView& shared = v.sq_threads[1];
  EXPECT_EQ(shared.tid, 11u);
  EXPECT_EQ(shared.fds, (std::vector<int>{4, 5}));
  EXPECT_DOUBLE_EQ(*shared.cpu_s, 1.0) << "a shared thread's time is counted once, not per ring";
  EXPECT_DOUBLE_EQ(*shared.work_s, 0.9);
  EXPECT_FALSE(shared.mostly_idle);
  EXPECT_TRUE(shared.pinned) << "Cpus_allowed_list is one CPU";
  const SqThreadView& fresh = v.sq_threads[2];
  EXPECT_EQ(fresh.tid, 41u);
  EXPECT_FALSE(fresh.cpu_s) << "not in the first scan: no rate, never a guess";
  EXPECT_FALSE(fresh.work_ratio);
  // Rings: by their SQ thread's CPU, then pending.
  ASSERT_EQ(v.rings.size(), 5u);
  EXPECT_EQ(v.rings[0].pid, 20);
  EXPECT_EQ(v.rings[1].pid, 10);
  EXPECT_EQ(v.rings[2].pid, 10);
  EXPECT_EQ(v.rings[3].pid, 40);
  EXPECT_EQ(v.rings[4].pid, 30);
}


// A kernel whose SqTotalTime is the process's getrusage: the fdinfo moved
// 1.6 s in 2 s while the thread ran 0.4 s (schedstat). CPU% is the thread's,
// and no work share is made from the process's figures.
TEST(RingsView, AnSqTotalTimeOverTheThreadsRunTimeIsReplacedByItAndNamed) {
  RingScan a, b;
  a.stamp_ns = 1'000'000'000;
  b.stamp_ns = 3'000'000'000;
  a.rings = {ring(10, 4, 11, 0, 0), ring(20, 3, 21, 0, 0)};
  b.rings = {ring(10, 4, 11, 1'600'000, 900'000), ring(20, 3, 21, 402'000, 300'000)};
  a.rings[0].sq_runtime_ns = a.rings[1].sq_runtime_ns = 0;
  b.rings[0].sq_runtime_ns = 400'000'000;
  b.rings[1].sq_runtime_ns = 400'000'000;  // 21: SqTotalTime within the reads' skew of it
  const RingsView v = rings_view(a, b);
  ASSERT_EQ(v.sq_threads.size(), 2u);
  const SqThreadView& wide = v.sq_threads[0].tid == 11 ? v.sq_threads[0] : v.sq_threads[1];
  const SqThreadView& own = v.sq_threads[0].tid == 11 ? v.sq_threads[1] : v.sq_threads[0];
  ASSERT_TRUE(wide.process_wide_s);
  EXPECT_DOUBLE_EQ(*wide.process_wide_s, 1.6);
  EXPECT_DOUBLE_EQ(*wide.cpu_s, 0.4);
  EXPECT_DOUBLE_EQ(*wide.cpu_share, 0.2);
  EXPECT_FALSE(wide.work_s);
  EXPECT_FALSE(wide.mostly_idle);
  EXPECT_FALSE(own.process_wide_s);
  EXPECT_DOUBLE_EQ(*own.cpu_s, 0.402);
  EXPECT_DOUBLE_EQ(*own.work_s, 0.3);
}
TEST(RingsView, OneSnapshotHasNoRates) {
  RingScan b;
  b.stamp_ns = 5;
  b.rings = {ring(10, 4, 11, 1'000'000, 500'000)};
  const RingsView v = rings_view({}, b);
  EXPECT_EQ(v.interval_s, 0);
  ASSERT_EQ(v.sq_threads.size(), 1u);
  EXPECT_FALSE(v.sq_threads[0].cpu_s);
  EXPECT_FALSE(v.sq_threads[0].mostly_idle);
}

}  // namespace
}  // namespace ioacct
