// merge_hosts(): several hosts' results made one, on plain data. The
// histograms add exactly (the percentiles of the merge are those of one
// histogram holding every sample); windows, skew and clocks are measured.
#include <gtest/gtest.h>

#include <random>

#include "acct/histogram.hpp"
#include "common/errors.hpp"
#include "compare/merge.hpp"

namespace ioacct {
namespace {

HostLatency printed(const Histogram& h) {
  return {h.buckets(), h.min(), h.max(), h.mean(), h.stdev()};
}

HostRun host(const std::string& name, int64_t start, int64_t end, const Histogram& h, const std::string& boot = "b1") {
  HostRun r;
  r.source = name + ".json";
  r.name = r.hostname = name;
  r.boot_id = boot;
  r.start_mono_ns = start;
  r.window_start_ns = start;
  r.window_end_ns = end;
  r.window_s = static_cast<double>(end - start) / 1e9;
  r.ios = h.count();
  r.reads = h.count();
  r.iops = static_cast<double>(h.count()) / r.window_s;
  r.latency = printed(h);
  return r;
}

constexpr int64_t kT0 = 1'796'139'600'000'000'000;

TEST(Merge, PercentilesEqualOneHistogramHoldingEverySample) {
  std::mt19937_64 rng(7);
  std::lognormal_distribution<double> lat(13.0, 0.8);  // ~0.5 ms, a long tail
  Histogram all, parts[3];
  for (int i = 0; i < 3; ++i)
    for (int n = 0; n < 20'000 * (i + 1); ++n) {
      const auto v = static_cast<uint64_t>(lat(rng) * (1 + i * 0.3));
      parts[i].record(v);
      all.record(v);
    }
  std::vector<HostRun> hosts;
  for (int i = 0; i < 3; ++i)
    hosts.push_back(host("h" + std::to_string(i), kT0 + i * 1'000'000, kT0 + 1'000'000'000 + i * 1'000'000, parts[i], "b" + std::to_string(i)));
  const MergedRun m = merge_hosts(hosts);
  ASSERT_TRUE(m.has_latency);
  EXPECT_EQ(m.latency.count(), all.count());
  EXPECT_EQ(m.latency.min(), all.min());
  EXPECT_EQ(m.latency.max(), all.max());
  for (double q : {0.0, 0.01, 0.1, 0.5, 0.9, 0.99, 0.999, 0.9999, 1.0}) EXPECT_EQ(m.latency.quantile(q), all.quantile(q)) << q;
  EXPECT_NEAR(m.latency.mean(), all.mean(), all.mean() * 1e-9);
  EXPECT_NEAR(m.latency.stdev(), all.stdev(), all.stdev() * 1e-6);
  EXPECT_EQ(m.ios, all.count());
  EXPECT_DOUBLE_EQ(m.iops, hosts[0].iops + hosts[1].iops + hosts[2].iops);
}

TEST(Merge, WindowsOverlapAndSkew) {
  Histogram h;
  h.record(1000);
  const MergedRun m = merge_hosts({host("a", kT0, kT0 + 1'000'000'000, h), host("b", kT0 + 3'000'000, kT0 + 1'002'000'000, h)});
  EXPECT_TRUE(m.overlapped);
  EXPECT_EQ(m.start_skew_ns, 3'000'000);
  EXPECT_EQ(m.end_skew_ns, 2'000'000);
  EXPECT_EQ(m.overlap_start_ns, kT0 + 3'000'000);
  EXPECT_EQ(m.overlap_end_ns, kT0 + 1'000'000'000);
  EXPECT_DOUBLE_EQ(m.overlap_s(), 0.997);
  EXPECT_TRUE(m.warnings.empty()) << m.warnings.front();
  EXPECT_EQ(m.clock_error_bound_us, 0) << "one boot: one clock";
}

TEST(Merge, WindowsThatDoNotOverlapAreWarnedAbout) {
  Histogram h;
  h.record(1000);
  const MergedRun m = merge_hosts({host("a", kT0, kT0 + 1'000'000'000, h), host("b", kT0 + 5'000'000'000, kT0 + 6'000'000'000, h)});
  EXPECT_FALSE(m.overlapped);
  EXPECT_EQ(m.overlap_s(), 0.0);
  ASSERT_FALSE(m.warnings.empty());
  EXPECT_NE(m.warnings.back().find("do not overlap"), std::string::npos) << m.warnings.back();
  EXPECT_NE(m.warnings.back().find("--start-at"), std::string::npos) << "says what to do";
}

TEST(Merge, ClocksOfDifferentBootsBoundTheSkew) {
  Histogram h;
  h.record(1000);
  std::vector<HostRun> hosts = {host("a", kT0, kT0 + 1'000'000'000, h, "x"), host("b", kT0, kT0 + 1'000'000'000, h, "y"),
                                host("c", kT0, kT0 + 1'000'000'000, h, "z")};
  hosts[0].clock = ClockSync{true, 100, 10, 0};
  hosts[1].clock = ClockSync{true, 50, 5, 0};
  hosts[2].clock = ClockSync{true, 10, 1, 0};
  EXPECT_EQ(merge_hosts(hosts).clock_error_bound_us, 150) << "the two largest maxerrors";
  hosts[2].clock->synchronised = false;
  const MergedRun m = merge_hosts(hosts);
  EXPECT_FALSE(m.clock_error_bound_us);
  ASSERT_FALSE(m.warnings.empty());
  EXPECT_NE(m.warnings.front().find("c"), std::string::npos);
  EXPECT_NE(m.warnings.front().find("chrony"), std::string::npos) << "says what to do";
}

TEST(Merge, DifferentIoacctVersionsAreWarnedAbout) {
  Histogram h;
  h.record(1000);
  HostRun a = host("a", kT0, kT0 + 1'000'000'000, h), b = host("b", kT0, kT0 + 1'000'000'000, h);
  a.ioacct_version = "0.1.0";
  b.ioacct_version = "0.2.0";
  const MergedRun m = merge_hosts({a, b});
  ASSERT_EQ(m.warnings.size(), 1u);
  EXPECT_NE(m.warnings[0].find("0.1.0 on 1 host, 0.2.0 on 1 host"), std::string::npos) << m.warnings[0];
  b.ioacct_version = "0.1.0";
  EXPECT_TRUE(merge_hosts({a, b}).warnings.empty());
}

TEST(Merge, OneRunGivenTwiceIsRefused) {
  Histogram h;
  h.record(1000);
  const HostRun a = host("a", kT0, kT0 + 1'000'000'000, h);
  EXPECT_THROW(merge_hosts({a, a}), UsageError);
  EXPECT_THROW(merge_hosts({}), UsageError);
}

TEST(Merge, SeriesAlignOnTheWallClock) {
  Histogram h;
  h.record(1000);
  HostRun a = host("a", kT0, kT0 + 2'000'000'000, h), b = host("b", kT0 + 700'000, kT0 + 2'000'700'000, h);
  for (HostRun* r : {&a, &b}) {
    r->series_interval_s = 1.0;
    for (int k = 1; k <= 2; ++k) r->series.push_back({r->window_start_ns + k * 1'000'000'000LL, 1.0, 100.0 * k, 4096.0 * k, {}, {}});
  }
  b.series.pop_back();  // b's last interval missing
  const MergedRun m = merge_hosts({a, b});
  ASSERT_EQ(m.series.size(), 2u);
  EXPECT_EQ(m.series[0].end_unix_ns, kT0 + 1'000'000'000);
  EXPECT_DOUBLE_EQ(m.series[0].iops, 200.0);
  EXPECT_EQ(m.series[0].hosts, 2u);
  EXPECT_DOUBLE_EQ(*m.series[0].bytes_per_s, 8192.0);
  EXPECT_DOUBLE_EQ(m.series[1].iops, 200.0);
  EXPECT_EQ(m.series[1].hosts, 1u);
}

// A collector that could not cut on time lengthens its interval: a sample
// of two intervals holds its host's rate in both slots, so no slot seems to
// lack a host that was running (a busy CI machine: slot 0.5 of four hosts
// read 3, one host's 0.25-0.75 sample having gone to slot 0.75 alone).
TEST(Merge, ASampleThatGrewCountsInEverySlotItSpans) {
  Histogram h;
  h.record(1000);
  HostRun a = host("a", kT0, kT0 + 3'000'000'000, h), b = host("b", kT0 + 2'000'000, kT0 + 3'002'000'000, h);
  for (HostRun* r : {&a, &b}) r->series_interval_s = 1.0;
  for (int k = 1; k <= 3; ++k) a.series.push_back({kT0 + k * 1'000'000'000LL, 1.0, 100.0, {}, {}, {}});
  b.series.push_back({kT0 + 1'003'000'000LL, 1.001, 50.0, {}, {}, {}});
  b.series.push_back({kT0 + 3'004'000'000LL, 2.001, 70.0, {}, {}, {}});  // 1 s to 3 s: slots 2 and 3
  const MergedRun m = merge_hosts({a, b});
  ASSERT_EQ(m.series.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_EQ(m.series[i].hosts, 2u) << "slot " << i + 1;
  EXPECT_DOUBLE_EQ(m.series[0].iops, 150.0);
  EXPECT_DOUBLE_EQ(m.series[1].iops, 170.0);
  EXPECT_DOUBLE_EQ(m.series[2].iops, 170.0);
}

TEST(Merge, ABucketOfAnotherLayoutIsRefused) {
  Histogram h;
  h.record(100'000);
  HostRun a = host("a", kT0, kT0 + 1'000'000'000, h);
  a.latency.buckets[0].hi += 1;
  EXPECT_THROW(merge_hosts({a}), UsageError);
  Histogram out;
  EXPECT_FALSE(Histogram::restore({{100'000, 100'000, 1}}, 100'000, 100'000, 1e5, 0, out)) << "not a bucket's bounds";
  EXPECT_FALSE(Histogram::restore(h.buckets(), 1, 100'000, 1e5, 0, out)) << "min outside the lowest bucket";
}

}  // namespace
}  // namespace ioacct

namespace ioacct {
namespace {

// host_run_of(): one bench document's text into the plain figures.
const char* kDoc = R"({
  "context": {"ioacct_version": "0.1.0", "host": "vm", "boot_id": "b-1", "kernel": "Linux 6.18",
              "tags": {"host": "client-7", "rack": "r2"},
              "clock": {"synchronised": true, "maxerror_us": 1500, "esterror_us": 20, "state": 0},
              "start_monotonic_ns": 12345, "options": {"rw": "randread", "seed": 1, "ramp_s": 0.5},
              "targets": [{"path": "/dev/loop0", "device": "loop0"}]},
  "interrupted": false, "stop_reason": "runtime",
  "results": {"window_s": 1.0, "window_start_unix_ns": 1796139600000000000, "window_end_unix_ns": 1796139601000000000,
              "ios": 3, "reads": 3, "writes": 0, "trims": 0, "bytes_read": 12288, "bytes_written": 0, "bytes_trimmed": 0,
              "iops": 3.0, "bytes_per_s": 12288.0, "iodepth": 1, "errors": {"EIO": 2},
              "syscalls": {"total": 9, "submit": 3, "reap": 6, "submitted_ios": 3, "reaped_ios": 3},
              "cpu": {"user_s": 0.5, "sys_s": 0.25, "voluntary_ctxsw": 7, "involuntary_ctxsw": 1},
              "devices": [{"device": "loop0", "role": "target", "util_pct": 50.0}],
              "latency_ns": {"count": 3, "min": 100, "max": 300, "mean": 200.0, "stdev": 81.6},
              "latency_histogram_ns": [[100, 100, 1], [200, 200, 1], [300, 301, 1]],
              "series": {"interval_s": 0.5, "keep_every": 2, "samples": [
                {"t_s": 1.0, "end_unix_ns": 1796139601000000000, "dur_s": 1.0, "iops": 3.0, "bytes_per_s": null,
                 "p50_ns": 200, "p99_ns": null}]}}
})";

TEST(MergeRead, ABenchDocumentsFigures) {
  const HostRun h = host_run_of("a.json", kDoc);
  EXPECT_EQ(h.name, "client-7") << "the host tag names it";
  EXPECT_EQ(h.hostname, "vm");
  EXPECT_EQ(h.boot_id, "b-1");
  EXPECT_EQ(h.tags.at("rack"), "r2");
  ASSERT_TRUE(h.clock);
  EXPECT_TRUE(h.clock->synchronised);
  EXPECT_EQ(h.clock->maxerror_us, 1500);
  EXPECT_EQ(h.start_mono_ns, 12345);
  EXPECT_EQ(h.window_start_ns, 1'796'139'600'000'000'000);
  EXPECT_EQ(h.window_end_ns, 1'796'139'601'000'000'000);
  EXPECT_EQ(h.ios, 3u);
  EXPECT_EQ(h.bytes_read, 12288u);
  EXPECT_EQ(h.errors_by_kind.at("EIO"), 2u);
  EXPECT_EQ(h.syscalls.at("reap"), 6u);
  ASSERT_TRUE(h.cpu);
  EXPECT_DOUBLE_EQ(h.cpu->user_s, 0.5);
  EXPECT_EQ(h.devices.size(), 1u);
  EXPECT_EQ(h.targets[0]["device"], "loop0");
  EXPECT_EQ(h.options_key, R"({"rw":"randread"})") << "seed and ramp do not make another workload";
  ASSERT_EQ(h.latency.buckets.size(), 3u);
  EXPECT_EQ(h.latency.min, 100u);
  EXPECT_EQ(h.latency.max, 300u);
  EXPECT_DOUBLE_EQ(h.series_interval_s, 1.0) << "interval_s x keep_every";
  ASSERT_EQ(h.series.size(), 1u);
  EXPECT_FALSE(h.series[0].bytes_per_s);
  EXPECT_EQ(h.series[0].p50_ns, 200u);
  EXPECT_FALSE(h.series[0].p99_ns);
}

TEST(MergeRead, WhatIsNotAMergeableResultIsAUsageErrorNamingTheFile) {
  auto refused = [](const std::string& text, const std::string& says) {
    try {
      host_run_of("x.json", text);
      ADD_FAILURE() << "accepted: " << text.substr(0, 80);
    } catch (const UsageError& e) {
      EXPECT_EQ(std::string(e.what()).rfind("x.json: ", 0), 0u) << e.what();
      EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    }
  };
  refused("{not json", "not valid JSON");
  refused(R"({"variants": [], "context": {"ioacct_version": "0.1.0"}})", "not an ioacct bench JSON document");
  refused(R"({"context": {"ioacct_version": "0.1.0"}, "results": null})", "no results");
  refused(R"({"context": {"ioacct_version": "0.1.0", "options": {"jobs": 2}}, "results": {}})", "2 jobs");
  refused(R"({"context": {"ioacct_version": "0.1.0"}, "results": {"ios": 1}})", "window_start_unix_ns");
  std::string bad = kDoc;
  bad.replace(bad.find("[100, 100, 1]"), 13, "[100, 100]");
  refused(bad, "[lo, hi, count]");
}

}  // namespace
}  // namespace ioacct
