// export_families(): what one walk becomes in Prometheus terms. Pure, so
// fixed inputs pin down names, labels, the latency re-bucketing and what is
// left out when a figure cannot be measured.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "monitor/export.hpp"

namespace ioacct {
namespace {

const prometheus::MetricFamily* find(const std::vector<prometheus::MetricFamily>& fs, const std::string& name) {
  for (const auto& f : fs)
    if (f.name == name) return &f;
  return nullptr;
}

ExportSample sample_with_disk() {
  ExportSample s;
  DiskStats d;
  d.name = "loop7";
  d.reads = 10;
  d.sectors_read = 80;
  d.io_ms = 1500;
  d.fields = 17;
  s.disks["loop7"] = d;
  return s;
}

TEST(ExportFamilies, WithoutATrackerTheExactFamiliesAreLeftOutNotZero) {
  const std::vector<StatDevice> devs = {{"loop7", 7, 7, false}};
  const auto fs = export_families(devs, sample_with_disk());
  ASSERT_NE(find(fs, "ioacct_exact_busy_up"), nullptr);
  EXPECT_EQ(find(fs, "ioacct_exact_busy_up")->metric[0].gauge.value, 0);
  EXPECT_EQ(find(fs, "ioacct_device_busy_seconds_total"), nullptr);
  EXPECT_EQ(find(fs, "ioacct_device_request_latency_seconds"), nullptr);
  const auto* ticks = find(fs, "ioacct_device_io_ticks_seconds_total");
  ASSERT_NE(ticks, nullptr);
  EXPECT_DOUBLE_EQ(ticks->metric[0].counter.value, 1.5);
  const auto* bytes = find(fs, "ioacct_device_completed_bytes_total");
  ASSERT_NE(bytes, nullptr);
  EXPECT_DOUBLE_EQ(bytes->metric[0].counter.value, 80 * 512.0);
  EXPECT_EQ(bytes->metric[0].label[1].value, "read");
  EXPECT_EQ(find(fs, "ioacct_device_completed_ios_total")->metric.size(), 4u) << "read, write, discard, flush";
}

TEST(ExportFamilies, LatencyBucketsSumExactlyIntoPowersOfTwo) {
  const std::vector<StatDevice> devs = {{"loop7", 7, 7, false}};
  ExportSample s = sample_with_disk();
  BusyCounters c;
  c.busy_ns = 3'000'000'000;
  c.depth_ns[0] = 1'000'000'000;
  c.depth_ns[1] = 3'000'000'000;
  // Fine buckets (inclusive upper bounds, ns) as the tracker's: below 2^13, just below
  // 2^14, exactly 2^14 - 1, between 2^14 and 2^15, and the open last one.
  c.latency_le_ns = {1023, 9215, 16383, 18431, std::numeric_limits<uint64_t>::max()};
  c.latency_count = {1, 2, 3, 4, 5};
  c.latency_sum_ns = 2'000'000'000;
  s.busy = std::vector<BusyCounters>{c};
  const auto fs = export_families(devs, s);
  EXPECT_EQ(find(fs, "ioacct_exact_busy_up")->metric[0].gauge.value, 1);
  EXPECT_EQ(find(fs, "ioacct_device_driver_busy_seconds_total"), nullptr) << "dev% is opt-in (--dev)";
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_device_busy_seconds_total")->metric[0].counter.value, 3.0);
  const auto* depth = find(fs, "ioacct_device_inflight_seconds_total");
  ASSERT_EQ(depth->metric.size(), 10u);
  EXPECT_EQ(depth->metric[9].label[1].value, "256+");
  EXPECT_EQ(depth->metric[8].label[1].value, "128-255");
  EXPECT_EQ(depth->metric[1].label[1].value, "1");
  EXPECT_DOUBLE_EQ(depth->metric[1].counter.value, 3.0);
  const auto* lat = find(fs, "ioacct_device_request_latency_seconds");
  ASSERT_NE(lat, nullptr);
  const auto& h = lat->metric[0].histogram;
  EXPECT_EQ(h.sample_count, 15u);
  EXPECT_DOUBLE_EQ(h.sample_sum, 2.0);
  ASSERT_EQ(h.bucket.size(), 22u);
  EXPECT_DOUBLE_EQ(h.bucket[0].upper_bound, 8192e-9);
  EXPECT_EQ(h.bucket[0].cumulative_count, 1u) << "only the bucket wholly below 2^13 ns";
  EXPECT_EQ(h.bucket[1].cumulative_count, 6u) << "<= 2^14 ns: 1 + 2 + 3";
  EXPECT_EQ(h.bucket[2].cumulative_count, 10u) << "<= 2^15 ns";
  EXPECT_EQ(h.bucket[20].cumulative_count, 10u);
  EXPECT_TRUE(std::isinf(h.bucket[21].upper_bound));
  EXPECT_EQ(h.bucket[21].cumulative_count, 15u);
}

TEST(ExportFamilies, ASharedSqThreadIsOneSeriesAndEveryRingIsOne) {
  ExportSample s;
  for (int fd : {4, 5}) {
    RingSnapshot r;
    r.pid = 100;
    r.comm = "db";
    r.fd = fd;
    r.sq_thread = 101;
    r.sq_total_us = 2'500'000;
    r.sq_work_us = 500'000;
    r.sq_pending = 3;
    r.cq_pending = 1;
    r.overflow = 0;
    s.rings.rings.push_back(r);
  }
  const auto fs = export_families({}, s);
  const auto* cpu = find(fs, "ioacct_sq_thread_cpu_seconds_total");
  ASSERT_EQ(cpu->metric.size(), 1u);
  EXPECT_DOUBLE_EQ(cpu->metric[0].counter.value, 2.5);
  EXPECT_EQ(cpu->metric[0].label[2].name, "tid");
  EXPECT_EQ(cpu->metric[0].label[2].value, "101");
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_sq_thread_work_seconds_total")->metric[0].counter.value, 0.5);
  EXPECT_EQ(find(fs, "ioacct_ring_sq_pending")->metric.size(), 2u);
  EXPECT_EQ(find(fs, "ioacct_ring_cq_entries")->metric.size(), 0u) << "sizes not known: no sample";
}

}  // namespace
}  // namespace ioacct
