// The pure parts of stat's iostat habits: the avg-cpu shares (-c) from two
// /proc/stat lines, and the console's -m, -h and -N.
#include <gtest/gtest.h>

#include "monitor/stat.hpp"
#include "report/stat_report.hpp"

namespace ioacct {
namespace {

// user nice system idle iowait irq softirq steal guest guest_nice
TEST(StatCpu, SharesAreSysstatsGuestOutOfUserIrqsInSystem) {
  const std::vector<uint64_t> a = {100, 50, 20, 800, 10, 5, 5, 10, 0, 0};
  const std::vector<uint64_t> b = {200, 70, 40, 1400, 30, 10, 10, 40, 40, 10};
  // Deltas: user 100 (40 of it guest), nice 20 (10 guest), system 20 + irq 5
  // + softirq 5, idle 600, iowait 20, steal 30: 800 ticks in all.
  const auto c = cpu_row(a, b);
  ASSERT_TRUE(c);
  EXPECT_DOUBLE_EQ(c->user, 100.0 * 60 / 800);
  EXPECT_DOUBLE_EQ(c->nice, 100.0 * 10 / 800);
  EXPECT_DOUBLE_EQ(c->system, 100.0 * 30 / 800);
  EXPECT_DOUBLE_EQ(c->idle, 100.0 * 600 / 800);
  EXPECT_DOUBLE_EQ(c->iowait, 100.0 * 20 / 800);
  EXPECT_DOUBLE_EQ(c->steal, 100.0 * 30 / 800);
  // Since boot: against zero.
  EXPECT_DOUBLE_EQ(cpu_row({}, b)->idle, 100.0 * 1400 / 1800);
  // No tick, or a line too short to read: no row.
  EXPECT_FALSE(cpu_row(b, b));
  EXPECT_FALSE(cpu_row({}, {1, 2, 3}));
  // A counter that went back (a CPU taken offline) reads 0, not a wrap.
  EXPECT_DOUBLE_EQ(cpu_row(b, std::vector<uint64_t>{210, 70, 40, 1490, 0, 10, 10, 40, 40, 10})->iowait, 0.0);
}

StatReport one_row() {
  StatReport r;
  StatRow row;
  row.device.name = "dm-0";
  row.io.r_s = 100;
  row.io.rkB_s = 2048;
  row.io.rareq_sz = 20.48;
  row.io.rrqm_pct = 0.42;
  row.io.util_raw = 9.25;
  r.rows.push_back(row);
  r.cpu = CpuRow{.user = 1, .nice = 2, .system = 3, .iowait = 4, .steal = 0, .idle = 90};
  return r;
}

TEST(StatConsole, MegabytesHumanAndDeviceMapperNames) {
  StatFormat f;
  f.megabytes = true;
  std::string out = format_stat_console(one_row(), f);
  EXPECT_NE(out.find("    rMB/s"), std::string::npos) << out;
  EXPECT_NE(out.find("     2.00    "), std::string::npos) << "2048 kB/s is 2.00 MB/s: " << out;
  EXPECT_NE(out.find("   20.48"), std::string::npos) << "sizes stay in kB: " << out;

  f = StatFormat{};
  f.human = true;
  f.names = {{"dm-0", "vg-root"}};
  out = format_stat_console(one_row(), f);
  EXPECT_EQ(out.rfind("     r/s     rkB/s", 0), 0u) << out;
  EXPECT_NE(out.find(" Device\n"), std::string::npos) << out;
  EXPECT_NE(out.find("      2.0M"), std::string::npos) << out;
  EXPECT_NE(out.find("    20.5k"), std::string::npos) << out;
  EXPECT_NE(out.find("   0.4%"), std::string::npos) << out;
  EXPECT_NE(out.find("   9.2%"), std::string::npos) << out;
  EXPECT_NE(out.find(" vg-root\n"), std::string::npos) << out;
  EXPECT_EQ(out.find("dm-0"), std::string::npos) << out;
  EXPECT_EQ(stat_to_json(one_row(), f)["devices"][0]["device"], "vg-root");

  f = StatFormat{};
  f.cpu = true;
  f.devices = false;
  out = format_stat_console(one_row(), f);
  EXPECT_EQ(out, "avg-cpu:  %user   %nice %system %iowait  %steal   %idle\n"
                 "           1.00    2.00    3.00    4.00    0.00   90.00\n\n");
}

}  // namespace
}  // namespace ioacct
