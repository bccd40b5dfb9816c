// The kernel's view next to ioacct's: devices, CPU by thread, SQ threads.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/run_binary.hpp"
#include "common/files.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

const json* device(const json& j, const std::string& name) {
  for (const auto& d : j["results"]["devices"])
    if (d["device"] == name) return &d;
  return nullptr;
}

// The device's counters, read by the test itself: completed reads, reads
// merged into another before they were issued, and io_ticks (ms).
struct ReadCounters {
  uint64_t reads = 0, merges = 0, io_ticks_ms = 0;
};
ReadCounters read_counters(const std::string& name) {
  std::istringstream in(read_first_line("/sys/block/" + name + "/stat"));
  ReadCounters c;
  uint64_t skip = 0;
  in >> c.reads >> c.merges;
  for (int field = 3; field <= 9; ++field) in >> skip;
  in >> c.io_ticks_ms;
  return c;
}

TEST(BenchAcct, DiskstatsCountExactlyTheRunsReadsOnItsOwnLoopDevice) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  for (const char* depth : {"1", "8"}) {
    SCOPED_TRACE(std::string("depth ") + depth);
    const ReadCounters before = read_counters(loop.name());
    auto o = run_ioacct({"bench", "--format", "json", "--ios", "3000", "--iodepth", depth, loop.path()});
    const ReadCounters after = read_counters(loop.name());
    ASSERT_EQ(o.exit_code, 0) << o.err;
    json j = stdout_json(o);
    const json* d = device(j, loop.name());
    ASSERT_NE(d, nullptr) << j["results"]["devices"];
    EXPECT_EQ((*d)["role"], "target");
    // The run's last read counts too: it reaches the bench before diskstats
    // counts it (CI once read 2,999 reads of 4.0013 KiB; Worker::settle_disks).
    // Two random reads of neighbouring blocks submitted together may merge
    // into one request: the device then completes one read fewer, and the
    // kernel counts the merge.
    const uint64_t reads = (*d)["reads"].get<uint64_t>(), merged = after.merges - before.merges;
    EXPECT_EQ(reads, after.reads - before.reads) << "the device's own count of the run's reads";
    EXPECT_EQ(reads + merged, 3000u) << "every read, and only ours, is in /proc/diskstats";
    EXPECT_EQ((*d)["writes"], 0);
    EXPECT_NEAR((*d)["areq_sz_kB"].get<double>() * static_cast<double>(reads), 4.0 * 3000, 1e-6)
        << "4 KiB each, 12,000 KiB in all";
    // %util is io_ticks over the window, and io_ticks a per-jiffy sample that
    // counts only requests in flight across a tick: 3,000 reads (~13 ms at
    // depth 8 here) can fit inside one jiffy on a fast host and read 0 (CI
    // once read 0 ticks for 2,000). So it is bounded by the device's own
    // ticks over the whole run, not asserted to move.
    const double util = (*d)["util_pct"].get<double>(), window_s = j["results"]["window_s"].get<double>();
    EXPECT_GE(util, 0.0);
    EXPECT_LE(util, 100.0);
    EXPECT_LE(util / 100 * window_s, static_cast<double>(after.io_ticks_ms - before.io_ticks_ms) / 1000 + 1e-9);
  }
}

TEST(BenchAcct, CpuByThreadAddsUpToTheProcessTotal) {
  TempDir dir;
  for (const std::vector<std::string>& extra :
       std::vector<std::vector<std::string>>{{}, {"--sqpoll", "--sq-idle", "10ms"}, {"--force-async"}, {"--threads", "2", "--iodepth", "16"}}) {
    std::vector<std::string> args = {"bench", "--format", "json", "--size", "32m", "--runtime", "1s", "--buffered"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto o = run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    json j = stdout_json(o);
    const json& cpu = j["results"]["cpu"];
    const double total = cpu["user_s"].get<double>() + cpu["sys_s"].get<double>();
    const double parts = cpu["breakdown"]["total_s"].get<double>();
    EXPECT_NEAR(parts, total, 0.05 * total + 0.01) << "breakdown " << cpu["breakdown"] << " vs getrusage " << total;
    if (extra.size() > 1 && extra[0] == "--sqpoll") {
      ASSERT_EQ(j["results"]["sq_threads"].size(), 1u);
      const json& sq = j["results"]["sq_threads"][0];
      EXPECT_GT(cpu["breakdown"]["sq_threads_s"].get<double>(), 0.1) << "the SQ thread's CPU is in the total";
      EXPECT_NEAR(sq["cpu_s"].get<double>(), cpu["breakdown"]["sq_threads_s"].get<double>(),
                  0.05 * sq["cpu_s"].get<double>() + 0.01) << "fdinfo SqTotalTime agrees with schedstat";
      EXPECT_LE(sq["work_s"].get<double>(), sq["cpu_s"].get<double>() + kSqWorkOverTotalS)
          << "SqWorkTime <= SqTotalTime, up to a tick";
    }
    if (extra.size() == 1) {
      EXPECT_GT(cpu["breakdown"]["iowq_s"].get<double>(), 0.0) << "IOSQE_ASYNC goes through io-wq";
    }
  }
}

TEST(BenchAcct, SqThreadCpuMatchesItsSchedstatReadByTheTest) {
  // The test reads the SQ thread's schedstat itself: at the start line (just
  // before the window opens) and when "verifying" is printed (after the
  // window closed; with --sq-idle 1ms the thread sleeps by then). The SQ
  // thread's CPU ioacct reports must match that difference within 5%. The
  // ring lives through --verify-delay after "verifying": 3 s, for a test
  // that comes to the line late (an ASan suite beside another build: once
  // the thread was gone, read as 0, and the difference wrapped to 2^64 ns).
  TempDir dir;
  int sq_tid = 0;
  std::optional<uint64_t> before, after;
  auto runtime_ns = [&](int pid) {
    const std::string base = "/proc/" + std::to_string(pid) + "/task/";
    if (!sq_tid) {
      std::istringstream in(sh("ls " + base));
      for (std::string tid; in >> tid;) {
        std::ifstream comm(base + tid + "/comm");
        std::string c;
        std::getline(comm, c);
        if (c.rfind("iou-sqp-", 0) == 0) sq_tid = std::stoi(tid);
      }
    }
    uint64_t ns = 0;
    std::ifstream st(base + std::to_string(sq_tid) + "/schedstat");
    return st >> ns ? std::optional<uint64_t>(ns) : std::nullopt;
  };
  auto o = run_ioacct({"bench", "--format", "json", "--size", "32m", "--runtime", "2s", "--sqpoll", "--sq-idle", "1ms",
                       "--rw", "randwrite", "--verify", "--verify-delay", "3s"},
                      {.env = {"TMPDIR=" + dir.path()},
                       .steps = {{"ioacct bench:", [&](int pid) { before = runtime_ns(pid); }},
                                 {"verifying", [&](int pid) { after = runtime_ns(pid); }}}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_GT(sq_tid, 0) << "found the SQ thread";
  json j = stdout_json(o);
  ASSERT_EQ(j["results"]["sq_threads"].size(), 1u);
  const json& sq = j["results"]["sq_threads"][0];
  EXPECT_EQ(sq["tid"], sq_tid);
  ASSERT_TRUE(before && after) << "the SQ thread's schedstat was read at both lines";
  const double seen_by_test = static_cast<double>(*after - *before) / 1e9;
  EXPECT_GT(seen_by_test, 0.1) << "the SQ thread did work";
  EXPECT_NEAR(sq["cpu_s"].get<double>(), seen_by_test, 0.05 * seen_by_test)
      << "ioacct's SQ-thread CPU against the thread's schedstat read by the test";
  EXPECT_LE(sq["work_s"].get<double>(), sq["cpu_s"].get<double>() + kSqWorkOverTotalS)
      << "SqWorkTime <= SqTotalTime, up to a tick";
}

TEST(BenchAcct, WhatCannotBeMeasuredIsSaidNotZeroed) {
  TempDir dir;
  // tmpfs has no block device under it.
  auto o = run_ioacct({"bench", "--format", "json", "--size", "8m", "--runtime", "300ms", "--dir", "/dev/shm"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  EXPECT_TRUE(j["results"]["devices"].empty()) << j["results"]["devices"];
  EXPECT_TRUE(j["results"]["sq_threads"].empty());
  auto c = run_ioacct({"bench", "--size", "8m", "--runtime", "300ms", "--dir", "/dev/shm"});
  EXPECT_NE(c.out.find("device     not available"), std::string::npos) << c.out;
  // cpuidle: reported when sysfs has it, "not available" when not; never zeros.
  const bool has_cpuidle = machine_has_cpuidle();
  EXPECT_EQ(j["results"]["system"]["cpuidle_s"].is_null(), !has_cpuidle);
  EXPECT_EQ(c.out.find("CPU idle states not available") != std::string::npos, !has_cpuidle) << c.out;
  // --acct off measures no CPU, and says so.
  auto off = run_ioacct({"bench", "--format", "json", "--size", "8m", "--runtime", "300ms", "--acct", "off"},
                        {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(off.exit_code, 0) << off.err;
  json k = stdout_json(off);
  EXPECT_TRUE(k["results"]["cpu"].is_null());
  EXPECT_TRUE(k["results"]["latency_ns"].is_null());
  EXPECT_TRUE(k["results"]["devices"].is_null());
  EXPECT_GT(k["results"]["ios"].get<uint64_t>(), 0u);
}

// BPF programs the process holds, by the kernel's own list of its files.
int bpf_programs_of(int pid) {
  int n = 0;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd/";
  std::istringstream names(sh("ls " + dir));
  for (std::string e; names >> e;) {
    char target[128] = {};
    if (readlink((dir + e).c_str(), target, sizeof(target) - 1) > 0 && std::string(target) == "anon_inode:bpf-prog") ++n;
  }
  return n;
}

TEST(BenchAcct, LatencyLevelLoadsNoBpfAndFullDoes) {
  // The eBPF tracker costs every I/O on the device and its load at start-up,
  // so only --acct full attaches it; --acct latency measures latency,
  // in-flight time and the series in user space. The default is one of them
  // (the one place that says which: JobSpec::acct).
  for (const std::string level : {"", "latency", "full"}) {
    SCOPED_TRACE(level);
    TempDir dir;
    int programs = -1;
    std::vector<std::string> args = {"bench", "--format", "json", "--size", "16m", "--runtime", "1s"};
    if (!level.empty()) args.insert(args.end(), {"--acct", level});
    auto o = run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}, .action_after = "ioacct bench:",
                               .action_pid = [&](int pid) { programs = bpf_programs_of(pid); }});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json j = stdout_json(o);
    if (level.empty()) {
      EXPECT_EQ(j["context"]["options"]["acct"], "latency") << "the default level";
      continue;
    }
    EXPECT_EQ(j["context"]["options"]["acct"], level);
    EXPECT_FALSE(j["results"]["latency_ns"].is_null());
    const json& f = j["results"]["inflight"];
    EXPECT_GT(f["mean"].get<double>(), 0.0);
    EXPECT_LE(f["mean"].get<double>(), 32.0) << "never more than the depth, the drain after the window left out";
    double by_depth = 0;
    for (const auto& b : f["by_depth"]) by_depth += b["s"].get<double>();
    EXPECT_NEAR(by_depth, f["window_s"].get<double>(), 1e-6) << "the time at each depth covers the window, no more";
    EXPECT_FALSE(j["results"]["series"].is_null());
    ASSERT_FALSE(j["results"]["devices"].empty());
    if (level == "latency") {
      EXPECT_EQ(programs, 0) << "the default attaches no BPF program";
      EXPECT_TRUE(j["results"]["exact_busy"]["source"].is_null());
      EXPECT_TRUE(j["results"]["exact_busy"]["unavailable"].is_null()) << "not asked for, so nothing to explain";
      for (const auto& d : j["results"]["devices"]) {
        EXPECT_TRUE(d["busy_pct"].is_null()) << d;
        EXPECT_TRUE(d["by_depth"].is_null()) << d;
      }
    } else {
      EXPECT_GT(programs, 0) << "the tracker is attached while the run goes";
      EXPECT_FALSE(j["results"]["exact_busy"]["source"].is_null());
      const json& d = j["results"]["devices"][0];
      EXPECT_FALSE(d["busy_pct"].is_null()) << d;
      double sum = 0;
      for (const auto& b : d["by_depth"]) sum += b["pct"].get<double>();
      EXPECT_NEAR(sum, 100.0, 1.0) << "the device's time at each depth covers the window";
    }
    // The console's in-flight lines: this run's side, then the device's.
    args[2] = "console";
    const auto c = run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}});
    ASSERT_EQ(c.exit_code, 0) << c.err;
    const std::string dev = j["results"]["devices"][0]["device"];
    const size_t run_line = c.out.find("\n             this run: mean ");
    const size_t dev_line = c.out.find("\n             device " + dev + ": mean ");
    ASSERT_NE(run_line, std::string::npos) << c.out;
    ASSERT_NE(dev_line, std::string::npos) << c.out;
    EXPECT_LT(run_line, dev_line);
    const std::string dev_text = c.out.substr(dev_line, c.out.find('\n', dev_line + 1) - dev_line);
    EXPECT_EQ(dev_text.find("time with N in flight:") != std::string::npos, level == "full") << dev_text;
  }
}

}  // namespace
}  // namespace ioacct::test

namespace ioacct::test {
namespace {

double by_depth_total(const json& f) {
  double s = 0;
  for (const auto& b : f["by_depth"]) s += b["s"].get<double>();
  return s;
}

TEST(BenchInflight, AtDepthOneBusyTimeIsTheSumOfLatencies) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "32m", "--ios", "3000", "--iodepth", "1"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json& f = j["results"]["inflight"];
  const json& lat = j["results"]["latency_ns"];
  const double sum_s = lat["mean"].get<double>() * lat["count"].get<double>() / 1e9;
  EXPECT_NEAR(f["own_inflight_s"].get<double>(), sum_s, 0.01 * sum_s) << "one I/O at a time: the union is the sum";
  EXPECT_EQ(f["busy_s"], f["own_inflight_s"]) << "the old name stays for schema 2";
  EXPECT_EQ(f["busy_pct"], f["own_inflight_pct"]);
  EXPECT_NEAR(by_depth_total(f), f["window_s"].get<double>(), 0.01 * f["window_s"].get<double>());
  EXPECT_EQ(f["by_depth"][2]["s"], 0.0) << "never 2 in flight at depth 1";
}

TEST(BenchInflight, TheMeanInFlightIsTheSumOfLatenciesOverTheWindow) {
  // Little's law, exactly: every counted I/O is in flight for its latency,
  // and with --ios nothing else is.
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "32m", "--ios", "20000", "--iodepth", "8"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json& f = j["results"]["inflight"];
  const json& lat = j["results"]["latency_ns"];
  const double sum_s = lat["mean"].get<double>() * lat["count"].get<double>() / 1e9;
  const double mean = f["mean"].get<double>();
  EXPECT_NEAR(mean, sum_s / f["window_s"].get<double>(), 0.01 * mean);
  EXPECT_LE(mean, 8.0);
}

TEST(BenchInflight, TwoThreadsMatchTheUnionOfEveryInterval) {
  TempDir dir;
  const std::string dump = dir.path() + "/intervals";
  auto o = run_ioacct({"bench", "--format", "json", "--size", "32m", "--ios", "20000", "--threads", "2",
                       "--iodepth", "16", "--dump-intervals", dump},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json& f = j["results"]["inflight"];
  // Offline: sort the logged intervals and take their union.
  std::vector<std::pair<uint64_t, uint64_t>> iv;
  std::ifstream in(dump);
  for (uint64_t a, b; in >> a >> b;) iv.emplace_back(a, b);
  ASSERT_EQ(iv.size(), 20000u) << "every counted I/O logged";
  std::sort(iv.begin(), iv.end());
  uint64_t union_ns = 0, cur_a = iv[0].first, cur_b = iv[0].second, longest = 0, sum = 0;
  for (const auto& [a, b] : iv) {
    longest = std::max(longest, b - a);
    sum += b - a;
    if (a > cur_b) {
      union_ns += cur_b - cur_a;
      cur_a = a;
      cur_b = b;
    } else {
      cur_b = std::max(cur_b, b);
    }
  }
  union_ns += cur_b - cur_a;
  const double busy = f["own_inflight_s"].get<double>() * 1e9;
  EXPECT_LE(busy, static_cast<double>(sum) * 1.0001);
  EXPECT_GE(busy, static_cast<double>(longest));
  EXPECT_NEAR(busy, static_cast<double>(union_ns), 1e-4 * static_cast<double>(union_ns) + 1000)
      << "the tracker is the exact union, to the clock's resolution";
  EXPECT_NEAR(by_depth_total(f), f["window_s"].get<double>(), 0.01 * f["window_s"].get<double>());
  EXPECT_EQ(f["log_waits"], 0);
}

}  // namespace
}  // namespace ioacct::test

namespace ioacct::test {
namespace {

TEST(BenchSeries, IntervalsAddUpToTheRun) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "32m", "--runtime", "3200ms", "--log-interval", "500ms",
                       "--buffered"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json& s = j["results"]["series"];
  EXPECT_EQ(s["keep_every"], 1);
  ASSERT_GE(s["samples"].size(), 5u);
  ASSERT_LE(s["samples"].size(), 7u);
  double ios = 0, prev_t = 0;
  for (const auto& x : s["samples"]) {
    EXPECT_NEAR(x["dur_s"].get<double>(), 0.5, 0.2) << x;  // measured, not assumed
    EXPECT_GT(x["t_s"].get<double>(), prev_t);
    prev_t = x["t_s"].get<double>();
    ios += x["iops"].get<double>() * x["dur_s"].get<double>();
    ASSERT_FALSE(x["p50_ns"].is_null());
    EXPECT_LE(x["p50_ns"].get<uint64_t>(), x["p99_ns"].get<uint64_t>());
    EXPECT_GE(x["own_inflight_pct"].get<double>(), 0.0);
    EXPECT_LE(x["own_inflight_pct"].get<double>(), 100.0);
    EXPECT_EQ(x["busy_pct"], x["own_inflight_pct"]) << "the old name stays for schema 2";
    EXPECT_FALSE(x["cpu_pct"].is_null());
  }
  // The samples cover the window but its last partial interval.
  const double total = j["results"]["ios"].get<double>();
  EXPECT_GT(ios, 0.75 * total);
  EXPECT_LE(ios, 1.01 * total);
}

// The device's exact busy time per interval is the same counter as the
// window's devices[].busy_pct, read at every interval's edge: over the
// intervals it must add up to the window's, but for the uncovered tail.
TEST(BenchSeries, DeviceBusyPerIntervalAddsUpToTheWindows) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "32m", "--runtime", "3s", "--log-interval", "500ms",
                       "--iodepth", "4", "--acct", "full"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json* target = nullptr;
  for (const auto& d : j["results"]["devices"])
    if (d["role"] == "target") target = &d;
  ASSERT_NE(target, nullptr) << "the temporary file sits on a block device here";
  if ((*target)["busy_pct"].is_null()) {
    // Only a kernel without the tracker's needs (BTF, tracepoints) is a reason.
    ASSERT_FALSE(j["results"]["exact_busy"]["unavailable"].is_null()) << "busy_pct null without a reason";
    GTEST_SKIP() << "no exact busy time: " << j["results"]["exact_busy"]["unavailable"];
  }
  double covered = 0, busy_s = 0;
  for (const auto& x : j["results"]["series"]["samples"]) {
    ASSERT_FALSE(x["device_busy_pct"].is_null()) << x;
    EXPECT_GE(x["device_busy_pct"].get<double>(), 0.0);
    EXPECT_LE(x["device_busy_pct"].get<double>(), 100.0 + 1e-6);
    covered += x["dur_s"].get<double>();
    busy_s += x["device_busy_pct"].get<double>() / 100 * x["dur_s"].get<double>();
  }
  const double window = j["results"]["window_s"].get<double>(), window_busy = (*target)["busy_pct"].get<double>() / 100 * window;
  ASSERT_GT(covered, 0.75 * window);
  EXPECT_LE(busy_s, window_busy + 0.01 * window) << "the intervals are inside the window";
  EXPECT_GE(busy_s, window_busy - (window - covered) - 0.01 * window) << "only the uncovered tail may hold the rest";
}

TEST(BenchSeries, ALongSeriesIsDecimatedNotUnbounded) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "16m", "--runtime", "8s", "--log-interval", "10ms",
                       "--buffered", "--rate-iops", "2000"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json& s = j["results"]["series"];
  EXPECT_GE(s["keep_every"].get<unsigned>(), 2u) << "over 600 intervals: every other one kept";
  EXPECT_LE(s["samples"].size(), s["max_samples"].get<size_t>());
  EXPECT_GT(s["samples"].size(), 150u);
}

}  // namespace
}  // namespace ioacct::test
