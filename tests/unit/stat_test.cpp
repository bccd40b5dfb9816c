// The pure pieces of `ioacct stat`: iostat's extra columns on fixed diskstats
// lines, the uptime clock, and the exact columns' arithmetic on fixed counters.
#include <gtest/gtest.h>

#include "acct/procfs.hpp"
#include "acct/system.hpp"
#include "monitor/stat.hpp"

namespace ioacct {
namespace {

TEST(StatIostatColumns, DiscardsFlushesMergesAndSizesAsIostatComputesThem) {
  // 17 fields (5.5+): ... discards merged sectors ms, flushes flush_ms.
  auto a = *parse_diskstats_line("254 0 vda 100 10 800 50 200 40 1600 100 0 300 400 10 2 80 5 4 8");
  auto b = *parse_diskstats_line("254 0 vda 300 30 2400 250 400 140 4800 300 1 1300 1400 30 6 480 25 14 28");
  const IostatRow r = iostat_row(a, b, 2.0);
  EXPECT_DOUBLE_EQ(r.rrqm_s, 20.0 / 2);
  EXPECT_DOUBLE_EQ(r.wrqm_s, 100.0 / 2);
  EXPECT_DOUBLE_EQ(r.rrqm_pct, 20.0 / (20 + 200) * 100);  // merged of all that was asked
  EXPECT_DOUBLE_EQ(r.wrqm_pct, 100.0 / (100 + 200) * 100);
  EXPECT_DOUBLE_EQ(r.rareq_sz, 1600.0 / 200 / 2);  // kB per read
  EXPECT_DOUBLE_EQ(r.wareq_sz, 3200.0 / 200 / 2);
  EXPECT_DOUBLE_EQ(r.d_s, 20.0 / 2);
  EXPECT_DOUBLE_EQ(r.dkB_s, 400.0 / 2 / 2);
  EXPECT_DOUBLE_EQ(r.drqm_s, 4.0 / 2);
  EXPECT_DOUBLE_EQ(r.drqm_pct, 4.0 / (4 + 20) * 100);
  EXPECT_DOUBLE_EQ(r.d_await, 20.0 / 20);
  EXPECT_DOUBLE_EQ(r.dareq_sz, 400.0 / 20 / 2);
  EXPECT_DOUBLE_EQ(r.f_s, 10.0 / 2);
  EXPECT_DOUBLE_EQ(r.f_await, 20.0 / 10);
  EXPECT_DOUBLE_EQ(r.util_raw, 1000.0 / 2000 * 100);
}

TEST(StatIostatColumns, UtilRawIsNotCappedButUtilIs) {
  auto a = *parse_diskstats_line("8 0 sda 0 0 0 0 0 0 0 0 0 0 0");
  auto b = *parse_diskstats_line("8 0 sda 0 0 0 0 0 0 0 0 0 1004 0");
  const IostatRow r = iostat_row(a, b, 1.0);
  EXPECT_DOUBLE_EQ(r.util_raw, 100.4) << "iostat prints what io_ticks says, even past 100";
  EXPECT_DOUBLE_EQ(r.util, 100.0);
  EXPECT_DOUBLE_EQ(r.rareq_sz, 0.0);
  EXPECT_DOUBLE_EQ(r.f_await, 0.0);
}

TEST(StatUptime, HundredthsAsSysstatReadsThem) {
  EXPECT_EQ(parse_uptime_cs("12345.67 23456.78\n"), 1234567u);
  EXPECT_EQ(parse_uptime_cs("0.05 0.00"), 5u);
  EXPECT_FALSE(parse_uptime_cs(""));
  EXPECT_FALSE(parse_uptime_cs("12345 1"));
  EXPECT_FALSE(parse_uptime_cs("12.3 1"));
  EXPECT_FALSE(parse_uptime_cs("-1.00 1"));
  EXPECT_FALSE(parse_uptime_cs("1.2x 1"));
}

BusyCounters counters(uint64_t stamp, uint64_t busy, uint64_t dev, std::array<uint64_t, 6> depth) {
  BusyCounters c;
  c.stamp_ns = stamp;
  c.busy_ns = busy;
  c.dev_busy_ns = dev;
  c.device_span = true;
  for (int i = 0; i < 6; ++i) c.depth_ns[i] = depth[i];
  return c;
}

TEST(StatReport, ExactColumnsAreDeltasOverTheTrackersOwnWindow) {
  const std::vector<StatDevice> devs = {{"loop7", 7, 7, false}};
  StatSample a, b;
  a.uptime_cs = 1000;
  b.uptime_cs = 1201;  // iostat's interval: 2.01 s
  a.disks["loop7"] = *parse_diskstats_line("7 7 loop7 0 0 0 0 0 0 0 0 0 0 0");
  b.disks["loop7"] = *parse_diskstats_line("7 7 loop7 1000 0 8000 40 0 0 0 0 0 150 40");
  // The tracker's window is 2.0 s exactly; 0.3 s busy, 0.2 s at the device.
  a.busy = {counters(5'000'000'000, 100'000'000, 50'000'000, {900'000'000, 100'000'000, 0, 0, 0, 0})};
  b.busy = {counters(7'000'000'000, 400'000'000, 250'000'000,
                     {2'600'000'000, 300'000'000, 100'000'000, 0, 0, 0})};
  b.busy->at(0).done = 1000;  // every read diskstats counted
  const StatReport r = make_stat_report(devs, &a, b);
  ASSERT_EQ(r.rows.size(), 1u);
  const StatRow& row = r.rows[0];
  EXPECT_FALSE(r.since_boot);
  EXPECT_DOUBLE_EQ(r.interval_s, 2.01);
  EXPECT_DOUBLE_EQ(row.io.r_s, 1000 / 2.01) << "io_ticks columns over iostat's interval";
  EXPECT_DOUBLE_EQ(row.io.util_raw, 150 / 2010.0 * 100);
  EXPECT_EQ(*row.window_ns, 2'000'000'000u);
  EXPECT_EQ(*row.busy_ns, 300'000'000u);
  EXPECT_DOUBLE_EQ(*row.busy_pct, 15.0) << "exact columns over the tracker's window";
  EXPECT_DOUBLE_EQ(*row.dev_pct, 10.0);
  const auto& d = *row.depth_pct;
  EXPECT_DOUBLE_EQ(d[0], 85.0);
  EXPECT_DOUBLE_EQ(d[1], 10.0);
  EXPECT_DOUBLE_EQ(d[2], 5.0);
  double sum = 0;
  for (double v : d) sum += v;
  EXPECT_DOUBLE_EQ(sum, 100.0);
  EXPECT_DOUBLE_EQ(*row.unsure_pct, 0.0);
}

TEST(StatReport, DevPctOnlyWhereTheDeviceSpanWasTraced) {
  const std::vector<StatDevice> devs = {{"loop7", 7, 7, false}};
  StatSample a, b;
  a.disks["loop7"] = b.disks["loop7"] = *parse_diskstats_line("7 7 loop7 0 0 0 0 0 0 0 0 0 0 0");
  b.uptime_cs = 100;
  BusyCounters x = counters(0, 0, 0, {}), y = counters(1'000'000'000, 500'000'000, 400'000'000, {500'000'000, 500'000'000});
  x.device_span = y.device_span = false;
  y.unsure_ns = 100'000'000;
  a.busy = {x};
  b.busy = {y};
  const StatRow row = make_stat_report(devs, &a, b).rows.at(0);
  EXPECT_FALSE(row.dev_pct) << "not traced: not a number";
  EXPECT_DOUBLE_EQ(*row.busy_pct, 50.0);
  EXPECT_DOUBLE_EQ(*row.unsure_pct, 10.0) << "the truth lies in [busy, busy + unsure]";
}

// Completions diskstats counted that the tracker neither saw end nor found
// lost: no bound holds for their time, so the window's exact figures are
// null and say why. A few are the two samples' skew, not a fault.
// The tracker bounds completions no program saw (busy_invisible(), with
// diskstats' latency sum) and puts their time in unsure: the report shows
// the count and keeps its figures.
TEST(StatReport, CompletionsNoProgramSawAreCountedAndTheirTimeIsUnsure) {
  const std::vector<StatDevice> devs = {{"loop7", 7, 7, false}};
  StatSample a, b;
  a.disks["loop7"] = *parse_diskstats_line("7 7 loop7 0 0 0 0 0 0 0 0 0 0 0");
  b.disks["loop7"] = *parse_diskstats_line("7 7 loop7 1000 0 8000 40 0 0 0 0 0 150 40");
  b.uptime_cs = 100;
  BusyCounters x = counters(0, 0, 0, {}), y = counters(1'000'000'000, 500'000'000, 0, {500'000'000, 500'000'000});
  x.invisible = 3;
  y.done = 900;
  y.invisible = 97;
  y.unsure_ns = 40'000'000;
  a.busy = {x};
  b.busy = {y};
  const StatRow row = make_stat_report(devs, &a, b).rows.at(0);
  EXPECT_EQ(*row.invisible, 94u);
  EXPECT_DOUBLE_EQ(*row.busy_pct, 50.0);
  EXPECT_DOUBLE_EQ(*row.unsure_pct, 4.0);
  EXPECT_EQ(*row.done, 900u);
}

TEST(StatReport, SinceBootHasNoExactColumns) {
  const std::vector<StatDevice> devs = {{"vda", 254, 0, false}};
  StatSample b;
  b.uptime_cs = 360000;  // one hour
  b.disks["vda"] = *parse_diskstats_line("254 0 vda 3600 0 28800 3600 0 0 0 0 0 36000 3600");
  b.busy = {counters(1, 1, 1, {1, 0, 0, 0, 0, 0})};
  const StatReport r = make_stat_report(devs, nullptr, b);
  ASSERT_EQ(r.rows.size(), 1u);
  EXPECT_TRUE(r.since_boot);
  EXPECT_DOUBLE_EQ(r.rows[0].io.r_s, 1.0);
  EXPECT_DOUBLE_EQ(r.rows[0].io.util_raw, 1.0);
  EXPECT_FALSE(r.rows[0].busy_pct) << "the tracker did not see the time since boot";
  EXPECT_FALSE(r.rows[0].depth_pct);
}

TEST(StatReport, ADeviceThatWentAwayIsLeftOut) {
  const std::vector<StatDevice> devs = {{"loop9", 7, 9, false}};
  StatSample a, b;
  a.disks["loop9"] = *parse_diskstats_line("7 9 loop9 0 0 0 0 0 0 0 0 0 0 0");
  b.uptime_cs = 100;
  EXPECT_TRUE(make_stat_report(devs, &a, b).rows.empty());
}

TEST(StatLatency, QuantilesFromBucketsAreMidpointsClampedToTheMaximum) {
  const std::vector<uint64_t> le = {999, 1999, 3999, UINT64_MAX};
  EXPECT_DOUBLE_EQ(bucket_quantile(le, {0, 0, 0, 0}, 0.5, 0), 0.0);
  // 90 in [1000, 1999], 10 in [2000, 3999].
  EXPECT_DOUBLE_EQ(bucket_quantile(le, {0, 90, 10, 0}, 0.50, 3500), 1499.5);
  EXPECT_DOUBLE_EQ(bucket_quantile(le, {0, 90, 10, 0}, 0.90, 3500), 1499.5);
  EXPECT_DOUBLE_EQ(bucket_quantile(le, {0, 90, 10, 0}, 0.91, 3500), 2999.5);
  EXPECT_DOUBLE_EQ(bucket_quantile(le, {0, 90, 10, 0}, 0.99, 2500), 2500.0) << "never past the maximum seen";
}

TEST(StatLatency, AnIntervalsMaximumIsExactWhenItIsANewOne) {
  const std::vector<StatDevice> devs = {{"loop7", 7, 7, false}};
  StatSample a, b;
  a.disks["loop7"] = b.disks["loop7"] = *parse_diskstats_line("7 7 loop7 0 0 0 0 0 0 0 0 0 0 0");
  b.uptime_cs = 100;
  BusyCounters x = counters(0, 0, 0, {}), y = counters(1'000'000'000, 0, 0, {1'000'000'000, 0, 0, 0, 0, 0});
  x.latency_le_ns = y.latency_le_ns = {999, 1999, 3999, UINT64_MAX};
  x.latency_count = {0, 5, 0, 0};
  y.latency_count = {0, 9, 1, 0};
  x.latency_max_ns = 1500;
  y.latency_max_ns = 3210;
  a.busy = {x};
  b.busy = {y};
  auto r = make_stat_report(devs, &a, b);
  ASSERT_TRUE(r.rows.at(0).latency);
  EXPECT_EQ(r.rows[0].latency->count, 5u);
  EXPECT_DOUBLE_EQ(r.rows[0].latency->max_ns, 3210.0);
  EXPECT_DOUBLE_EQ(r.rows[0].latency->p50_ns, 1499.5);
  // No new maximum: the top bucket's upper edge, no more than the maximum since attach.
  y.latency_max_ns = x.latency_max_ns = 5000;
  a.busy = {x};
  b.busy = {y};
  r = make_stat_report(devs, &a, b);
  EXPECT_DOUBLE_EQ(r.rows[0].latency->max_ns, 3999.0);
}

TEST(StatDepth, BucketsAreTheDocumentedRanges) {
  const int want[] = {0, 1, 2, 2, 3, 3, 3, 3, 4};
  for (uint64_t n = 0; n < 9; ++n) EXPECT_EQ(busy_depth_bucket(n), want[n]) << n;
  EXPECT_EQ(busy_depth_bucket(15), 4);
  EXPECT_EQ(busy_depth_bucket(16), 5);
  EXPECT_EQ(busy_depth_bucket(31), 5);
  EXPECT_EQ(busy_depth_bucket(32), 6);
  EXPECT_EQ(busy_depth_bucket(255), 8);
  EXPECT_EQ(busy_depth_bucket(256), 9);
  EXPECT_EQ(busy_depth_bucket(100000), 9);
  EXPECT_EQ(busy_depth_low(5), 16u);
  EXPECT_EQ(busy_depth_low(9), 256u);
}

}  // namespace
}  // namespace ioacct
