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
  EXPECT_FALSE(r.system.no_ticks) << "unread is not a window without ticks";
  EXPECT_FALSE(r.system.cpuidle_s);
}

// /proc/stat counts in clock ticks: a window shorter than one (a short
// --ios run) reads the same line twice. That is no figure, and it is not
// /proc/stat being unreadable either.
TEST(Accounting, AWindowWithoutAClockTickHasNoIdleFigureAndSaysWhy) {
  SystemSample a, b;
  a.stamp_ns = 0;
  b.stamp_ns = 2'000'000;
  a.cpu_ticks = b.cpu_ticks = {10, 0, 20, 300, 4, 0, 1, 0};
  Accounting r = account(a, b, {}, {});
  EXPECT_FALSE(r.system.iowait_pct);
  EXPECT_FALSE(r.system.idle_pct);
  EXPECT_TRUE(r.system.no_ticks);
  b.cpu_ticks = {10, 0, 20, 301, 5, 0, 1, 0};
  r = account(a, b, {}, {});
  ASSERT_TRUE(r.system.iowait_pct);
  EXPECT_DOUBLE_EQ(*r.system.iowait_pct, 50.0);
  EXPECT_DOUBLE_EQ(*r.system.idle_pct, 50.0);
  EXPECT_FALSE(r.system.no_ticks);
}

// A kernel whose SqTotalTime is getrusage(RUSAGE_SELF): the SQ thread ran
// 0.3 s (schedstat) while the fdinfo moved by the process's 1.2 s of system
// time. The thread's own figure is shown, and no work share made from the
// process's numbers.
TEST(Accounting, AnSqTotalTimeOverTheThreadsOwnRunTimeIsNamedAndSchedstatShown) {
  SystemSample a, b;
  a.stamp_ns = 0;
  b.stamp_ns = 2'000'000'000;
  a.tasks = {{7, {"iou-sqp-1", 0}}, {1, {"ioacct", 0}}};
  b.tasks = {{7, {"iou-sqp-1", 300'000'000}}, {1, {"ioacct", 900'000'000}}};
  a.rings = {{3, 7, 0, 0}};
  b.rings = {{3, 7, 1'200'000, 250'000}};
  const Accounting r = account(a, b, {1}, {});
  ASSERT_EQ(r.sq_threads.size(), 1u);
  EXPECT_DOUBLE_EQ(r.sq_threads[0].cpu_s, 0.3);
  EXPECT_EQ(r.sq_threads[0].source, "schedstat");
  ASSERT_TRUE(r.sq_threads[0].process_wide_s);
  EXPECT_DOUBLE_EQ(*r.sq_threads[0].process_wide_s, 1.2);
  EXPECT_FALSE(r.sq_threads[0].work_s) << "SqWorkTime of the same kernel is the process's too";
}

TEST(Accounting, SqTotalTimeWithinTheReadsSkewOfSchedstatIsTheThreads) {
  // The two are read microseconds apart and a running task's runtime is
  // brought up to date at a tick: a few ms either way is the same thread.
  EXPECT_FALSE(sq_total_is_process_wide(0.304, 0.300));
  EXPECT_FALSE(sq_total_is_process_wide(0.020, 0.0));  // 20 ms over nothing: five ticks of skew at most
  EXPECT_TRUE(sq_total_is_process_wide(0.021, 0.0));
  EXPECT_TRUE(sq_total_is_process_wide(1.2, 0.3));
  EXPECT_FALSE(sq_total_is_process_wide(1.2, std::nullopt)) << "nothing to check against";
}

TEST(Accounting, SqWorkRatioIsCappedAtOneAndNoneWithoutCpu) {
  EXPECT_DOUBLE_EQ(*sq_work_ratio(0.05, 0.2), 0.25);
  // The work read 0.9 ms over the total: up to a tick either way, never more than all of it.
  EXPECT_DOUBLE_EQ(*sq_work_ratio(0.199525, 0.198631), 1.0);
  EXPECT_FALSE(sq_work_ratio(0.0, 0.0));
  EXPECT_FALSE(sq_work_ratio(0.1, -1.0));
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

TEST(Accounting, DevicesAreTargetsOrUnderlying) {
  SystemSample a, b;
  a.stamp_ns = 0;
  b.stamp_ns = 1'000'000'000;
  a.disks["loop0"] = *parse_diskstats_line("7 0 loop0 0 0 0 0 0 0 0 0 0 0 0");
  b.disks["loop0"] = *parse_diskstats_line("7 0 loop0 10 0 80 0 0 0 0 0 0 5 0");
  a.disks["vda"] = *parse_diskstats_line("254 0 vda 0 0 0 0 0 0 0 0 0 0 0");
  b.disks["vda"] = *parse_diskstats_line("254 0 vda 10 0 80 0 0 0 0 0 0 5 0");
  const Accounting r = account(a, b, {}, {"loop0"});
  ASSERT_EQ(r.devices.size(), 2u);
  EXPECT_EQ(r.devices[0].row.device, "loop0");
  EXPECT_EQ(r.devices[0].role, DeviceRole::Target);
  EXPECT_EQ(r.devices[1].row.device, "vda");
  EXPECT_EQ(r.devices[1].role, DeviceRole::Underlying);
  EXPECT_FALSE(r.devices[0].busy_pct);  // exact figures come from add_exact_busy only
}

// Two devices measured over 2 s between the tracker's reads.
Accounting two_devices() {
  Accounting acc;
  acc.devices.resize(2);
  acc.devices[0].row.device = "vda";
  acc.devices[1].row.device = "loop0";
  return acc;
}

TEST(ExactBusy, PercentagesAreOverTheTimeBetweenTheTwoReads) {
  Accounting acc = two_devices();
  // In the samples' order: loop0, then vda (names need not follow acc.devices).
  const std::vector<std::string> names = {"loop0", "vda"};
  const std::vector<ExactBusySample> a = {{.stamp_ns = 10'000'000'000, .busy_ns = 100, .dev_busy_ns = 50, .lost = 1, .unsure_ns = 0},
                                          {.stamp_ns = 10'000'000'000, .busy_ns = 0, .dev_busy_ns = 0}};
  const std::vector<ExactBusySample> b = {{.stamp_ns = 12'000'000'000, .busy_ns = 1'000'000'100, .dev_busy_ns = 500'000'050,
                                           .lost = 4, .unsure_ns = 20'000'000, .invisible = 7, .device_span = true},
                                          {.stamp_ns = 12'000'000'000, .busy_ns = 2'000'000'000, .dev_busy_ns = 1'500'000'000,
                                           .device_span = true}};
  add_exact_busy(acc, names, a, b);
  const DeviceStat& vda = acc.devices[0];
  const DeviceStat& loop0 = acc.devices[1];
  ASSERT_TRUE(loop0.busy_pct && loop0.dev_pct && loop0.lost && loop0.unsure_pct);
  EXPECT_DOUBLE_EQ(*loop0.busy_pct, 50.0);  // 1 s of 2
  EXPECT_DOUBLE_EQ(*loop0.dev_pct, 25.0);
  EXPECT_EQ(*loop0.lost, 3u);
  ASSERT_TRUE(loop0.invisible);
  EXPECT_EQ(*loop0.invisible, 7u);
  EXPECT_DOUBLE_EQ(*loop0.unsure_pct, 1.0);  // 20 ms of 2 s
  ASSERT_TRUE(vda.busy_pct && vda.dev_pct);
  EXPECT_DOUBLE_EQ(*vda.busy_pct, 100.0);
  EXPECT_DOUBLE_EQ(*vda.dev_pct, 75.0);
  EXPECT_EQ(*vda.lost, 0u);
  EXPECT_DOUBLE_EQ(*vda.unsure_pct, 0.0);
}

TEST(ExactBusy, DevPctOnlyWhereTheDeviceSpanWasTraced) {
  Accounting acc = two_devices();
  const std::vector<std::string> names = {"vda"};
  add_exact_busy(acc, names, {{.stamp_ns = 0}}, {{.stamp_ns = 1'000'000'000, .busy_ns = 500'000'000}});
  ASSERT_TRUE(acc.devices[0].busy_pct);
  EXPECT_DOUBLE_EQ(*acc.devices[0].busy_pct, 50.0);
  EXPECT_FALSE(acc.devices[0].dev_pct) << "not traced: not a number, never 0";
}

TEST(ExactBusy, TheTimeAtEachDepthIsOverTheSameWindow) {
  Accounting acc = two_devices();
  const std::vector<std::string> names = {"vda"};
  const std::vector<ExactBusySample> a = {{.stamp_ns = 1'000'000'000, .depth_ns = {500, 0, 100}}};
  const std::vector<ExactBusySample> b = {{.stamp_ns = 3'000'000'000, .depth_ns = {1'000'000'500, 500'000'000, 500'000'100}}};
  add_exact_busy(acc, names, a, b);
  ASSERT_EQ(acc.devices[0].depth_pct.size(), 3u);
  EXPECT_DOUBLE_EQ(acc.devices[0].depth_pct[0], 50.0);
  EXPECT_DOUBLE_EQ(acc.devices[0].depth_pct[1], 25.0);
  EXPECT_DOUBLE_EQ(acc.devices[0].depth_pct[2], 25.0);
  EXPECT_TRUE(acc.devices[1].depth_pct.empty()) << "not among the names: not measured";
}

TEST(ExactBusy, AnEdgeNotReadWholeLeavesEveryDeviceUnmeasured) {
  const std::vector<std::string> names = {"vda", "loop0"};
  const std::vector<ExactBusySample> whole = {{.stamp_ns = 1}, {.stamp_ns = 1}};
  const std::vector<ExactBusySample> later = {{.stamp_ns = 2, .busy_ns = 1}, {.stamp_ns = 2, .busy_ns = 1}};
  for (const auto& [a, b] : {std::pair{std::vector<ExactBusySample>{}, later}, std::pair{whole, std::vector<ExactBusySample>{}},
                             std::pair{std::vector<ExactBusySample>{{.stamp_ns = 1}}, later}}) {
    Accounting acc = two_devices();
    add_exact_busy(acc, names, a, b);
    for (const DeviceStat& d : acc.devices) {
      EXPECT_FALSE(d.busy_pct) << d.row.device;
      EXPECT_FALSE(d.dev_pct) << d.row.device;
      EXPECT_FALSE(d.lost) << d.row.device;
      EXPECT_FALSE(d.unsure_pct) << d.row.device;
    }
  }
}

TEST(ExactBusy, TwoReadsWithOneStampMeasureNothingAndUnknownDevicesAreLeftAlone) {
  Accounting acc = two_devices();
  add_exact_busy(acc, {"vda", "sdz"}, {{.stamp_ns = 5}, {.stamp_ns = 5}}, {{.stamp_ns = 5, .busy_ns = 3}, {.stamp_ns = 9, .busy_ns = 2}});
  EXPECT_FALSE(acc.devices[0].busy_pct);  // vda: no time between the reads
  EXPECT_FALSE(acc.devices[1].busy_pct);  // loop0: not among the names
}

}  // namespace
}  // namespace ioacct
