// iostat arithmetic and the CPU/SQ-thread accounting, on fixed samples.
#include <gtest/gtest.h>

#include "acct/accounting.hpp"

namespace ioacct {
namespace {

TEST(Iostat, MatchesAHandComputationFromTwoDiskstatsLines) {
  // Two real-looking /proc/diskstats lines 2 s apart.
  auto a = *parse_diskstats_line("7 0 loop0 1000 10 8000 500 200 5 1600 300 0 700 800 0 0 0 0 0 0");
  auto b = *parse_diskstats_line("7 0 loop0 21000 30 168000 10500 1200 25 9600 1300 1 1900 12800 0 0 0 0 0 0");
  const IostatRow r = iostat_row(a, b, 2.0);
  EXPECT_EQ(r.reads, 20000u);
  EXPECT_EQ(r.writes, 1000u);
  EXPECT_DOUBLE_EQ(r.r_s, 10000.0);                      // 20000 / 2
  EXPECT_DOUBLE_EQ(r.w_s, 500.0);
  EXPECT_DOUBLE_EQ(r.rkB_s, 160000.0 / 2 / 2);           // sectors / 2 = kB, per second
  EXPECT_DOUBLE_EQ(r.wkB_s, 8000.0 / 2 / 2);
  EXPECT_DOUBLE_EQ(r.r_await, 10000.0 / 20000);          // read ms per read
  EXPECT_DOUBLE_EQ(r.w_await, 1000.0 / 1000);
  EXPECT_DOUBLE_EQ(r.aqu_sz, 12000.0 / 2000);            // weighted ms per ms
  EXPECT_DOUBLE_EQ(r.areq_sz, (160000.0 + 8000) / 2 / 21000);
  EXPECT_DOUBLE_EQ(r.util, 1200.0 / 2000 * 100);         // io_ms per ms
}

TEST(Iostat, UtilIsCappedAndEmptyIntervalsAreZero) {
  auto a = *parse_diskstats_line("8 0 sda 0 0 0 0 0 0 0 0 0 0 0");
  auto b = *parse_diskstats_line("8 0 sda 0 0 0 0 0 0 0 0 0 3000 0");
  EXPECT_DOUBLE_EQ(iostat_row(a, b, 1.0).util, 100.0);
  EXPECT_DOUBLE_EQ(iostat_row(a, b, 1.0).r_await, 0.0);
  EXPECT_DOUBLE_EQ(iostat_row(a, b, 1.0).areq_sz, 0.0);
}

TEST(Accounting, CpuByKindOfThreadAndSqThreadsFromFdinfo) {
  SystemSample a, b;
  a.stamp_ns = 1'000'000'000;
  b.stamp_ns = 3'000'000'000;
  a.tasks = {{100, {"ioacct", 5'000'000}}, {101, {"ioacct", 1'000'000}}, {102, {"iou-sqp-100", 0}}, {103, {"iou-wrk-101", 0}}};
  b.tasks = {{100, {"ioacct", 15'000'000}}, {101, {"ioacct", 501'000'000}}, {102, {"iou-sqp-100", 1'800'000'000}},
             {103, {"iou-wrk-101", 40'000'000}}, {104, {"iou-wrk-101", 10'000'000}}};  // 104 born in the window
  a.rings = {{5, 102, 1'000, 100}, {6, 102, 1'000, 100}};       // two rings share SQ thread 102
  b.rings = {{5, 102, 1'801'000, 450'100}, {6, 102, 1'801'000, 450'100}};
  const Accounting r = account(a, b, {101}, {});
  EXPECT_DOUBLE_EQ(r.interval_s, 2.0);
  EXPECT_DOUBLE_EQ(r.cpu.submitters_s, 0.5);
  EXPECT_DOUBLE_EQ(r.cpu.sq_threads_s, 1.8);
  EXPECT_DOUBLE_EQ(r.cpu.iowq_s, 0.05);
  EXPECT_DOUBLE_EQ(r.cpu.other_s, 0.01);
  EXPECT_DOUBLE_EQ(r.cpu.total_s, 0.5 + 1.8 + 0.05 + 0.01);
  ASSERT_EQ(r.sq_threads.size(), 1u) << "a shared SQ thread is one thread";
  EXPECT_EQ(r.sq_threads[0].rings, 2u);
  EXPECT_DOUBLE_EQ(r.sq_threads[0].cpu_s, 1.8);
  ASSERT_TRUE(r.sq_threads[0].work_s);
  EXPECT_DOUBLE_EQ(*r.sq_threads[0].work_s, 0.45);
  EXPECT_EQ(r.sq_threads[0].source, "fdinfo SqTotalTime");
}

TEST(Accounting, WithoutSqTimeFieldsUsesSchedstatAndSaysWorkIsUnknown) {
  SystemSample a, b;
  a.stamp_ns = 0;
  b.stamp_ns = 1'000'000'000;
  a.tasks = {{7, {"iou-sqp-1", 100}}};
  b.tasks = {{7, {"iou-sqp-1", 700'000'100}}};
  a.rings = {{3, 7, std::nullopt, std::nullopt}};
  b.rings = {{3, 7, std::nullopt, std::nullopt}};
  const Accounting r = account(a, b, {}, {});
  ASSERT_EQ(r.sq_threads.size(), 1u);
  EXPECT_DOUBLE_EQ(r.sq_threads[0].cpu_s, 0.7);
  EXPECT_FALSE(r.sq_threads[0].work_s) << "never a made-up work figure";
  EXPECT_EQ(r.sq_threads[0].source, "schedstat");
  EXPECT_FALSE(r.system.iowait_pct) << "no /proc/stat samples: not available, not zero";
  EXPECT_FALSE(r.system.cpuidle_s);
}

TEST(Accounting, SystemIowaitAndIdleFromProcStat) {
  SystemSample a, b;
  a.cpu_ticks = {100, 0, 50, 1000, 10, 0, 0, 0, 0, 0};
  b.cpu_ticks = {200, 0, 150, 1600, 210, 0, 0, 0, 0, 0};  // 1000 ticks: 100 user, 100 sys, 600 idle, 200 iowait
  b.stamp_ns = 1;
  const Accounting r = account(a, b, {}, {});
  ASSERT_TRUE(r.system.iowait_pct && r.system.idle_pct);
  EXPECT_DOUBLE_EQ(*r.system.iowait_pct, 20.0);
  EXPECT_DOUBLE_EQ(*r.system.idle_pct, 60.0);
}

}  // namespace
}  // namespace ioacct
