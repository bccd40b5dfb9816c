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
