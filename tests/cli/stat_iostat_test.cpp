// `ioacct stat` as an iostat replacement: the io_ticks columns equal
// sysstat's iostat -x, it runs without privileges, and bad input is refused.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using Columns = std::map<std::string, std::string>;

// The row for `device` under the last "Device ..." header in `text`.
Columns row_of(const std::string& text, const std::string& device) {
  std::istringstream in(text);
  std::vector<std::string> header;
  Columns row;
  for (std::string line; std::getline(in, line);) {
    std::istringstream f(line);
    std::vector<std::string> cells;
    for (std::string c; f >> c;) cells.push_back(c);
    if (cells.empty()) continue;
    if (cells[0] == "Device") header = cells;
    else if (cells[0] == device && !header.empty())
      for (size_t i = 1; i < cells.size() && i < header.size(); ++i) row[header[i]] = cells[i];
  }
  return row;
}

// The kernel's HZ (io_ticks advance in jiffies): from /proc/config.gz, or
// 100, the coarsest there is, when the config is not exported.
double kernel_hz() {
  const std::string v = sh("zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_HZ=//p'");
  return v.empty() ? 100.0 : std::stod(v);
}

// Every column iostat printed must be in ioacct's row with the same value
// within `abs` + `rel` * |value|; %util within `util_abs` (io_ticks move a
// whole jiffy at a time, so two readers a few ms apart differ by jiffies).
void expect_same_columns(const Columns& iostat, const Columns& ours, double abs, double rel, double util_abs) {
  ASSERT_GE(iostat.size(), 20u) << "iostat -x printed its extended columns";
  for (const auto& [name, v] : iostat) {
    SCOPED_TRACE(name);
    auto it = ours.find(name);
    ASSERT_NE(it, ours.end()) << "ioacct stat has iostat's column " << name;
    const double a = std::stod(v), b = std::stod(it->second);
    EXPECT_NEAR(b, a, name == "%util" ? util_abs : abs + rel * std::fabs(a)) << "iostat " << v << ", ioacct " << it->second;
  }
}

TEST(StatIostat, IoTicksColumnsEqualIostats) {
  sh("command -v iostat >/dev/null || ./scripts/setup 2>/dev/null || true");
  if (std::system("command -v iostat >/dev/null") != 0) GTEST_SKIP() << "iostat (sysstat) is not installed: run scripts/setup";
  TempDir dir;
  LoopDevice loop(dir.path());
  // Busy: a paced mix of reads and writes. Both tools start once bench has
  // begun (after its blkid probe of the device, a burst of reads that two
  // tools started a few ms apart would split differently), iostat as soon as
  // ioacct stat has taken its first sample, and watch the same 2 s.
  std::thread stat, iostat;
  std::string iostat_out;
  Outcome o;
  // When iostat is started, and when each tool is done: each one's 2 s
  // window begins after `started` and ends before its `done`.
  using Clock = std::chrono::steady_clock;
  Clock::time_point started, stat_done, iostat_done;
  RunOptions bench_opts;
  bench_opts.action_after = "ioacct bench:";
  bench_opts.action = [&] {
    stat = std::thread([&] {
      RunOptions stat_opts;
      stat_opts.action_after = "exact busy time from";
      stat_opts.action = [&] {
        started = Clock::now();
        iostat = std::thread([&] {
          iostat_out = sh("iostat -d -x -y 2 1 " + loop.name());
          iostat_done = Clock::now();
        });
      };
      o = run_ioacct({"stat", "-x", "-y", "2", "1", loop.name()}, stat_opts);
      stat_done = Clock::now();
    });
  };
  // 5 s: both 2 s windows lie inside the paced run even when the machine is
  // loaded and the tracker's attach and iostat's start take a while.
  const Outcome bench_out = run_ioacct({"bench", "--rw", "randrw", "--rate-iops", "500", "--iodepth", "1", "--runtime",
                                        "5s", "--destroy-data", loop.path()},
                                       bench_opts);
  if (stat.joinable()) stat.join();
  if (iostat.joinable()) iostat.join();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(bench_out.exit_code, 0) << bench_out.err;
  std::cout << "iostat:\n" << iostat_out << "\nioacct stat:\n" << o.out;
  // Two processes cannot read the counters at the same instant: a few ms
  // apart at 500 I/Os per second is a few I/Os in a thousand.
  const Columns a = row_of(iostat_out, loop.name()), b = row_of(o.out, loop.name());
  ASSERT_GT(std::stod(a.at("r/s")), 50.0) << "the device was busy";
  // %util: each of the two windows' ends may fall on either side of a jiffy
  // in which io_ticks advanced: 2 jiffies over the 2 s window (0.4 points at
  // HZ=250), plus the last printed digit. And the two windows are not the
  // same 2 s: each begins some time `lag` after `started` (stat's first
  // sample, iostat's start), so they are offset by at most the larger lag,
  // which is at most that tool's time from `started` to done, less its 2 s.
  // Windows [t, t+2] and [t+d, t+d+2] differ by the busy time of one d-long
  // slice at each end, so their busy time differs by at most d (a 0.6-point
  // gap once under ASan on a loaded machine, where d was not counted).
  const double lag_s = std::max(std::chrono::duration<double>(stat_done - started).count(),
                                std::chrono::duration<double>(iostat_done - started).count()) - 2.0;
  std::cout << "the windows' offset is at most " << lag_s * 1e3 << " ms\n";
  expect_same_columns(a, b, 0.05, 0.03,
                      2 * (1000.0 / kernel_hz()) / 2000.0 * 100.0 + std::max(lag_s, 0.0) / 2.0 * 100.0 + 0.011);

  // Since boot (no INTERVAL), with the device idle again: the very same
  // counters through the same formulas over the same uptime, so equal within
  // the last printed digit.
  const std::string since_boot = sh("iostat -d -x " + loop.name());
  const auto o2 = run_ioacct({"stat", "-x", loop.name()});
  ASSERT_EQ(o2.exit_code, 0) << o2.err;
  expect_same_columns(row_of(since_boot, loop.name()), row_of(o2.out, loop.name()), 0.011, 1e-4, 0.011);
  const Columns c = row_of(o2.out, loop.name());
  EXPECT_EQ(c.at("busy%"), "-") << "no exact figure since boot: the tracker was not there";
}

TEST(StatIostat, WithoutPrivilegesTheIoTicksColumnsStillCome) {
  TempDir dir;
  LoopDevice loop(dir.path());
  const std::vector<std::string> nobody = {"/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"};
  const auto o = run_ioacct({"stat", "-y", "300ms", "2", loop.name()}, {.prefix = nobody});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // One line that says why and what to do, once for the whole run.
  std::istringstream err(o.err);
  int lines = 0;
  for (std::string l; std::getline(err, l);) {
    ++lines;
    EXPECT_NE(l.find("no busy%/dev%/in-flight columns: no permission to load BPF programs"), std::string::npos) << l;
    EXPECT_NE(l.find("run as root"), std::string::npos) << l;
  }
  EXPECT_EQ(lines, 1) << o.err;
  const Columns c = row_of(o.out, loop.name());
  EXPECT_EQ(c.at("%util"), "0.00");
  EXPECT_EQ(c.at("busy%"), "-") << "never a number that was not measured";
  EXPECT_EQ(c.at("dev%"), "-");

  const auto j = run_ioacct({"stat", "--format", "json", "-y", "300ms", "1", loop.name()}, {.prefix = nobody});
  ASSERT_EQ(j.exit_code, 0) << j.err;
  const auto doc = stdout_json(j);
  EXPECT_TRUE(doc["exact_source"].is_null());
  EXPECT_NE(doc["exact_unavailable"].get<std::string>().find("no permission"), std::string::npos);
  EXPECT_TRUE(doc["devices"][0]["busy_pct"].is_null());
  EXPECT_TRUE(doc["devices"][0]["inflight_pct"].is_null());
}

TEST(StatIostat, JsonLinesOneObjectPerReport) {
  TempDir dir;
  LoopDevice loop(dir.path());
  const auto o = run_ioacct({"stat", "--format", "json", "--latency", "200ms", "3", loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::istringstream in(o.out);
  std::vector<nlohmann::json> docs;
  for (std::string l; std::getline(in, l);) docs.push_back(nlohmann::json::parse(l));
  ASSERT_EQ(docs.size(), 3u) << "the since-boot report, then two intervals";
  EXPECT_TRUE(docs[0]["since_boot"].get<bool>());
  EXPECT_TRUE(docs[0]["devices"][0]["busy_pct"].is_null()) << "the tracker did not see the time since boot";
  for (size_t i = 1; i < docs.size(); ++i) {
    EXPECT_FALSE(docs[i]["since_boot"].get<bool>());
    EXPECT_EQ(docs[i]["devices"][0]["device"], loop.name()) << "named by path, reported by name";
    EXPECT_EQ(docs[i]["devices"][0]["busy_pct"], 0.0) << "an idle device is measured idle";
    EXPECT_EQ(docs[i]["devices"][0]["latency"]["count"], 0u);
    EXPECT_TRUE(docs[i]["devices"][0]["latency"]["p99_ns"].is_null()) << "no percentile of nothing";
  }
}

// Found by a hostile pass: a watched device that was removed dropped out of
// the table silently. Its row stops, and stderr says why, once.
TEST(StatIostat, ADeviceThatGoesAwayIsNamedOnce) {
  TempDir dir;
  LoopDevice loop(dir.path());
  LoopDevice other(dir.path());
  const auto o = run_ioacct({"stat", "--format", "json", "300ms", "6", loop.path(), other.path()},
                            {.action_after = "exact busy time", .action = [&] { loop.remove(); }});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string says = "ioacct stat: " + loop.name() + ": gone (no longer in /proc/diskstats";
  EXPECT_NE(o.err.find(says), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find(says), o.err.rfind(says)) << "once: " << o.err;
  std::istringstream in(o.out);
  std::vector<nlohmann::json> docs;
  for (std::string l; std::getline(in, l);) docs.push_back(nlohmann::json::parse(l));
  ASSERT_EQ(docs.size(), 6u);
  const nlohmann::json& last = docs.back()["devices"];
  ASSERT_EQ(last.size(), 1u) << last.dump();
  EXPECT_EQ(last[0]["device"], other.name()) << "the other device's row goes on";
}

TEST(StatIostat, BadInputIsRefusedWithOneLine) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"stat", "0"}, "error: INTERVAL: "},
      {{"stat", "1x"}, "error: INTERVAL: "},
      {{"stat", "1", "0"}, "error: COUNT: must be at least 1"},
      {{"stat", "-y"}, "error: -y: needs an INTERVAL"},
      {{"stat", "--format", "xml"}, "error: --format: 'xml' is not one of console, json"},
      {{"stat", "no-such-disk"}, "error: no-such-disk: no such block device"},
      {{"stat", "/etc/passwd"}, "error: /etc/passwd: not a block device"},
      {{"stat", "vda", "1"}, "error: 1: INTERVAL and COUNT come before the devices"},
  };
  for (const auto& [args, msg] : cases) {
    const auto o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 2) << args.back();
    EXPECT_TRUE(o.out.empty()) << o.out;
    EXPECT_EQ(o.err.rfind(msg, 0), 0u) << "want '" << msg << "', got: " << o.err;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
  }
}

}  // namespace
}  // namespace ioacct::test
