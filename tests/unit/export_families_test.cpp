// export_families(): what one walk becomes in Prometheus terms. Pure, so
// fixed inputs pin down names, labels, the latency re-bucketing and what is
// left out when a figure cannot be measured.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include <set>

#include "common/errors.hpp"
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
  EXPECT_EQ(find(export_families({}, s), "ioacct_sq_thread_cpu_seconds_total"), nullptr) << "not by default";
  const auto fs = export_families({}, s, {.per_process = true});
  const auto* cpu = find(fs, "ioacct_sq_thread_cpu_seconds_total");
  ASSERT_EQ(cpu->metric.size(), 1u);
  EXPECT_DOUBLE_EQ(cpu->metric[0].counter.value, 2.5);
  EXPECT_EQ(cpu->metric[0].label[2].name, "tid");
  EXPECT_EQ(cpu->metric[0].label[2].value, "101");
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_sq_thread_work_seconds_total")->metric[0].counter.value, 0.5);
  EXPECT_EQ(find(fs, "ioacct_ring_sq_pending")->metric.size(), 2u);
  EXPECT_EQ(find(fs, "ioacct_ring_cq_entries")->metric.size(), 0u) << "sizes not known: no sample";
}

RingSnapshot ring(int pid, int fd, std::optional<uint64_t> sq_thread, uint64_t overflow = 0) {
  RingSnapshot r;
  r.pid = pid;
  r.comm = "p" + std::to_string(pid);
  r.fd = fd;
  r.locked = true;
  r.sq_known = true;
  r.sq_thread = sq_thread;
  if (sq_thread) {
    r.sq_total_us = 1'000'000;
    r.sq_work_us = 250'000;
  }
  r.sq_pending = 2;
  r.cq_pending = 1;
  r.overflow = overflow;
  return r;
}

double labelled(const prometheus::MetricFamily* f, const std::string& kind) {
  for (const auto& m : f->metric)
    if (m.label.size() == 1 && m.label[0].value == kind) return m.gauge.value;
  return -1;
}

TEST(ExportFamilies, RingsAggregateByKindWithNoPidLabels) {
  ExportSample s;
  s.rings.rings = {ring(10, 3, std::nullopt), ring(10, 4, 11, 5), ring(20, 3, 11), ring(30, 7, std::nullopt)};
  accumulate_sq(s.sq, s.rings, [](uint64_t) { return true; });
  const auto fs = export_families({}, s);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings"), "sqpoll"), 2);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings"), "syscall"), 2);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings_sq_pending"), "sqpoll"), 4);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings_cq_overflow"), "sqpoll"), 5);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings_overflowing"), "sqpoll"), 1);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings_overflowing"), "syscall"), 0) << "both kinds always there";
  EXPECT_EQ(find(fs, "ioacct_ring_processes")->metric[0].gauge.value, 3);
  EXPECT_EQ(find(fs, "ioacct_sq_threads")->metric[0].gauge.value, 1) << "two rings share thread 11";
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_sq_threads_cpu_seconds_total")->metric[0].counter.value, 1.0);
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_sq_threads_work_seconds_total")->metric[0].counter.value, 0.25);
  for (const auto& f : fs)
    for (const auto& m : f.metric)
      for (const auto& l : m.label) EXPECT_TRUE(l.name != "pid" && l.name != "tid" && l.name != "fd") << f.name;
}

TEST(ExportFamilies, RingsNotReadCountInNeitherKindButInUnread) {
  ExportSample s;
  RingSnapshot busy = ring(40, 5, std::nullopt);
  busy.sq_known = false;  // "not read: ring busy": it may be SQPOLL
  s.rings.rings = {ring(10, 3, std::nullopt), busy};
  s.rings.busy = 1;
  s.rings_walk_age_s = 0.3;
  s.rings_walk_seconds = 0.1;
  const auto fs = export_families({}, s);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings"), "syscall"), 1);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings"), "sqpoll"), 0);
  EXPECT_EQ(find(fs, "ioacct_rings_unread")->metric[0].gauge.value, 1);
  EXPECT_EQ(find(fs, "ioacct_ring_processes")->metric[0].gauge.value, 2) << "its process holds a ring all the same";
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_rings_walk_age_seconds")->metric[0].gauge.value, 0.3);
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_rings_walk_duration_seconds")->metric[0].gauge.value, 0.1);
}

TEST(ExportFamilies, NoRingFamiliesBeforeTheFirstRingsWalk) {
  ExportSample s;
  s.rings_known = false;
  const auto fs = export_families({}, s);
  for (const char* name : {"ioacct_rings", "ioacct_ring_processes", "ioacct_sq_threads", "ioacct_rings_unread",
                           "ioacct_rings_walk_age_seconds"})
    EXPECT_EQ(find(fs, name), nullptr) << name << ": not measured is not exported, never 0";
}

TEST(ExportFamilies, PerProcessSeriesStopAtTheLimitAndSayHowManyWereLeftOut) {
  ExportSample s;
  s.rings.rings = {ring(10, 3, std::nullopt), ring(10, 4, 11), ring(20, 3, 21), ring(30, 7, std::nullopt)};
  const auto fs = export_families({}, s, {.per_process = true, .per_process_limit = 2});
  EXPECT_EQ(find(fs, "ioacct_ring_sq_pending")->metric.size(), 2u);
  EXPECT_EQ(find(fs, "ioacct_ring_sq_pending")->metric[1].label[2].value, "4") << "lowest pid, then fd";
  EXPECT_EQ(find(fs, "ioacct_sq_thread_cpu_seconds_total")->metric.size(), 1u) << "thread 21's ring is left out";
  EXPECT_EQ(find(fs, "ioacct_rings_per_process_omitted")->metric[0].gauge.value, 2);
  EXPECT_EQ(labelled(find(fs, "ioacct_rings"), "syscall"), 2) << "the aggregates count every ring";
}

TEST(AccumulateSq, TotalsNeverGoDownAsThreadsComeGoAndReuseTids) {
  SqTotals t;
  std::set<uint64_t> alive = {11, 12};
  const auto is_alive = [&](uint64_t tid) { return alive.count(tid) > 0; };
  RingScan scan;
  scan.rings = {ring(10, 3, 11), ring(20, 3, 12)};
  scan.rings[1].sq_total_us = 3'000'000;
  accumulate_sq(t, scan, is_alive);
  EXPECT_EQ(t.total_us(), 4'000'000u);
  // Thread 12's ring lock was busy (no SQ lines), but the thread lives: it keeps its share.
  scan.rings[1].sq_thread.reset();
  scan.rings[1].sq_total_us.reset();
  accumulate_sq(t, scan, is_alive);
  EXPECT_EQ(t.total_us(), 4'000'000u);
  // It comes back having used more: counted once, not twice.
  scan.rings[1] = ring(20, 3, 12);
  scan.rings[1].sq_total_us = 3'500'000;
  accumulate_sq(t, scan, is_alive);
  EXPECT_EQ(t.total_us(), 4'500'000u);
  // Thread 12 exits: its 3.5 s stay in the total.
  alive.erase(12);
  scan.rings.pop_back();
  accumulate_sq(t, scan, is_alive);
  EXPECT_EQ(t.total_us(), 4'500'000u);
  // A new thread reuses tid 11 with less CPU than the old one had: both count.
  scan.rings[0].sq_total_us = 200'000;
  accumulate_sq(t, scan, is_alive);
  EXPECT_EQ(t.total_us(), 4'700'000u);
  EXPECT_FALSE(t.work_missing);
  scan.rings[0].sq_work_us.reset();  // a kernel before 6.9
  accumulate_sq(t, scan, is_alive);
  EXPECT_TRUE(t.work_missing);
  EXPECT_EQ(find(export_families({}, ExportSample{.sq = t}), "ioacct_sq_threads_work_seconds_total"), nullptr)
      << "no number rather than a wrong one";
}

TEST(ExportFamilies, ReadAndWriteTimeAreNamedLikeNodeExporters) {
  const std::vector<StatDevice> devs = {{"loop7", 7, 7, false}};
  ExportSample s = sample_with_disk();
  s.disks["loop7"].read_ms = 2500;
  s.disks["loop7"].write_ms = 500;
  s.disks["loop7"].weighted_ms = 4000;
  s.disks["loop7"].flush_ms = 7;
  const auto fs = export_families(devs, s);
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_device_read_time_seconds_total")->metric[0].counter.value, 2.5);
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_device_write_time_seconds_total")->metric[0].counter.value, 0.5);
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_device_io_time_weighted_seconds_total")->metric[0].counter.value, 4.0);
  EXPECT_DOUBLE_EQ(find(fs, "ioacct_device_flush_requests_time_seconds_total")->metric[0].counter.value, 0.007);
  EXPECT_EQ(find(fs, "ioacct_device_read_time_seconds_total")->metric[0].label.size(), 1u) << "device only";
  s.disks["loop7"].fields = 11;  // before 4.18: no discard or flush fields
  const auto old = export_families(devs, s);
  EXPECT_EQ(find(old, "ioacct_device_discard_time_seconds_total"), nullptr);
  EXPECT_EQ(find(old, "ioacct_device_flush_requests_time_seconds_total"), nullptr);
}

TEST(DeviceFilter, DefaultLeavesOutLoopRamZramAndFloppiesLikeNodeExporter) {
  const DeviceFilter f = make_device_filter(std::nullopt, std::nullopt);
  for (const char* out : {"loop0", "loop12", "ram0", "zram3", "fd0"}) EXPECT_TRUE(std::regex_search(out, *f.exclude)) << out;
  for (const char* in : {"vda", "nvme0n1", "sda", "loopy", "dm-0", "md127"}) EXPECT_FALSE(std::regex_search(in, *f.exclude)) << in;
  EXPECT_THROW(make_device_filter("(", std::nullopt), UsageError);
  EXPECT_THROW(make_device_filter("a", "b"), UsageError);
  try {
    make_device_filter(std::nullopt, "[z");
  } catch (const UsageError& e) {
    EXPECT_EQ(std::string(e.what()).rfind("--device-exclude: '[z' is not a regular expression", 0), 0u) << e.what();
  }
}

}  // namespace
}  // namespace ioacct
