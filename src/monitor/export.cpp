#include "monitor/export.hpp"

#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <set>

#include "acct/clock.hpp"

namespace ioacct {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

constexpr double kSectorBytes = 512;  // diskstats counts 512-byte sectors whatever the device's block size

MetricFamily family(std::string name, std::string help, MetricType type) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = type;
  return f;
}

void add(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  if (f.type == MetricType::Counter) m.counter.value = value;
  else m.gauge.value = value;
  f.metric.push_back(std::move(m));
}

double seconds(uint64_t ns) { return static_cast<double>(ns) / 1e9; }

// "0", "1", "2-3", ..., "128-255", "256+".
std::string depth_label(int k) {
  const uint64_t lo = busy_depth_low(k);
  if (k == BusyCounters::kDepthBuckets - 1) return fmt::format("{}+", lo);
  const uint64_t hi = busy_depth_low(k + 1) - 1;
  return lo == hi ? fmt::format("{}", lo) : fmt::format("{}-{}", lo, hi);
}

// The tracker's fine log-linear buckets summed into powers of two of
// nanoseconds, 2^13 (8.2 µs) to 2^33 (8.6 s): each power of two is a fine
// bucket boundary, so the coarse counts are exact, and 22 series per device
// stay affordable where 210 would not.
ClientMetric::Histogram latency_histogram(const BusyCounters& c) {
  ClientMetric::Histogram h;
  std::vector<uint64_t> per(22, 0);  // 21 powers of two, then +Inf
  for (size_t i = 0; i < c.latency_le_ns.size() && i < c.latency_count.size(); ++i) {
    size_t k = 0;
    while (k < 21 && c.latency_le_ns[i] >= (uint64_t{1} << (13 + k))) ++k;  // le < 2^(13+k): fits bucket k
    per[k] += c.latency_count[i];
  }
  uint64_t cumulative = 0;
  for (size_t k = 0; k < per.size(); ++k) {
    cumulative += per[k];
    const double le = k < 21 ? std::ldexp(1.0, static_cast<int>(13 + k)) / 1e9 : std::numeric_limits<double>::infinity();
    h.bucket.push_back({cumulative, le});
  }
  h.sample_count = cumulative;
  h.sample_sum = seconds(c.latency_sum_ns);
  return h;
}

}  // namespace

std::vector<MetricFamily> export_families(const std::vector<StatDevice>& devices, const ExportSample& s) {
  std::vector<MetricFamily> out;
  auto up = family("ioacct_exact_busy_up", "1 when the eBPF busy tracker is attached and the exact device figures "
                   "are exported; 0 when not (stderr of ioacct export says why)", MetricType::Gauge);
  add(up, {}, s.busy ? 1 : 0);
  out.push_back(std::move(up));

  auto ticks = family("ioacct_device_io_ticks_seconds_total",
                      "Time the device had I/O in flight as /proc/diskstats io_ticks counts it (jiffy-sampled; "
                      "what node_exporter and iostat %util use)", MetricType::Counter);
  auto ios = family("ioacct_device_completed_ios_total", "I/Os completed, by direction (/proc/diskstats)",
                    MetricType::Counter);
  auto bytes = family("ioacct_device_completed_bytes_total", "Bytes completed, by direction (/proc/diskstats sectors x 512)",
                      MetricType::Counter);
  for (const StatDevice& d : devices) {
    auto it = s.disks.find(d.name);
    if (it == s.disks.end()) continue;  // gone since start-up
    const DiskStats& x = it->second;
    add(ticks, {{"device", d.name}}, static_cast<double>(x.io_ms) / 1e3);
    add(ios, {{"device", d.name}, {"direction", "read"}}, static_cast<double>(x.reads));
    add(ios, {{"device", d.name}, {"direction", "write"}}, static_cast<double>(x.writes));
    add(bytes, {{"device", d.name}, {"direction", "read"}}, static_cast<double>(x.sectors_read) * kSectorBytes);
    add(bytes, {{"device", d.name}, {"direction", "write"}}, static_cast<double>(x.sectors_written) * kSectorBytes);
    if (x.fields >= 15) {  // 4.18+
      add(ios, {{"device", d.name}, {"direction", "discard"}}, static_cast<double>(x.discards));
      add(bytes, {{"device", d.name}, {"direction", "discard"}}, static_cast<double>(x.sectors_discarded) * kSectorBytes);
    }
    if (x.fields >= 17) add(ios, {{"device", d.name}, {"direction", "flush"}}, static_cast<double>(x.flushes));  // 5.5+
  }
  out.push_back(std::move(ticks));
  out.push_back(std::move(ios));
  out.push_back(std::move(bytes));

  if (s.busy) {
    auto busy = family("ioacct_device_busy_seconds_total",
                       "Exact time with at least one request certainly between the block layer's accounting points "
                       "(block_io_start..block_io_done; eBPF)", MetricType::Counter);
    auto driver = family("ioacct_device_driver_busy_seconds_total",
                         "Exact time with at least one request between issue to the driver and the end of its "
                         "accounting (block_rq_issue..block_io_done; eBPF; only with --dev)", MetricType::Counter);
    auto depth = family("ioacct_device_inflight_seconds_total",
                        "Time spent with this many requests certainly in flight (accounting span; depth buckets 0, 1, "
                        "2-3, ..., 128-255, 256+); the buckets other than 0 add up to ioacct_device_busy_seconds_total",
                        MetricType::Counter);
    auto unseen = family("ioacct_device_unseen_starts_total",
                         "Requests in flight whose start no BPF program saw (the kernel skipped it)",
                         MetricType::Counter);
    auto lost = family("ioacct_device_lost_completions_total",
                       "Requests whose end no BPF program saw (the kernel skipped it); the kernel's own state showed "
                       "them gone", MetricType::Counter);
    auto seen = family("ioacct_device_seen_completions_total",
                       "Requests whose end the busy tracker saw or found lost (flushes aside): where the increase of "
                       "ioacct_device_completed_ios_total{direction!=\"flush\"} over a window is larger, some "
                       "completions were seen by no BPF program at either end and no busy bound holds for it",
                       MetricType::Counter);
    auto unsure = family("ioacct_device_busy_unsure_seconds_total",
                         "Time that may have been busy but is not counted in ioacct_device_busy_seconds_total (a "
                         "request whose end or start no program saw): the true busy time lies between that and the sum",
                         MetricType::Counter);
    auto latency = family("ioacct_device_request_latency_seconds",
                          "Request latency over the accounting span (block_io_start..block_io_done; eBPF)",
                          MetricType::Histogram);
    for (size_t i = 0; i < devices.size() && i < s.busy->size(); ++i) {
      const BusyCounters& c = (*s.busy)[i];
      const std::string& name = devices[i].name;
      add(busy, {{"device", name}}, seconds(c.busy_ns));
      if (c.device_span) add(driver, {{"device", name}}, seconds(c.dev_busy_ns));
      for (int b = 0; b < BusyCounters::kDepthBuckets; ++b)
        add(depth, {{"device", name}, {"depth", depth_label(b)}}, seconds(c.depth_ns[b]));
      add(unseen, {{"device", name}}, static_cast<double>(c.unseen_starts));
      add(lost, {{"device", name}}, static_cast<double>(c.lost));
      add(seen, {{"device", name}}, static_cast<double>(c.done + c.lost));
      add(unsure, {{"device", name}}, seconds(c.unsure_ns));
      if (!c.latency_count.empty()) {
        ClientMetric m;
        m.label = {{"device", name}};
        m.histogram = latency_histogram(c);
        latency.metric.push_back(std::move(m));
      }
    }
    out.push_back(std::move(busy));
    if (!driver.metric.empty()) out.push_back(std::move(driver));
    out.push_back(std::move(depth));
    out.push_back(std::move(unseen));
    out.push_back(std::move(lost));
    out.push_back(std::move(seen));
    out.push_back(std::move(unsure));
    if (!latency.metric.empty()) out.push_back(std::move(latency));
  }
  if (s.cost) {
    // What the exact figures cost the machine, so that a fleet can see it:
    // rate(cpu) / rate(completions) is the tracker's CPU per I/O.
    auto cpu = family("ioacct_tracker_cpu_seconds_total",
                      "CPU time of the busy tracker: part=\"user\" its reader in this process (merging the BPF "
                      "programs' logs), part=\"bpf\" the programs' own run time (only while kernel.bpf_stats_enabled "
                      "is 1, e.g. with --bpf-stats)", MetricType::Counter);
    add(cpu, {{"part", "user"}}, seconds(s.cost->user_cpu_ns));
    if (s.cost->bpf_run_ns) add(cpu, {{"part", "bpf"}}, seconds(*s.cost->bpf_run_ns));
    auto done = family("ioacct_tracker_completions_total",
                       "Requests the busy tracker saw complete on the watched devices: the I/Os its CPU time is spread "
                       "over", MetricType::Counter);
    add(done, {}, static_cast<double>(s.cost->completions));
    out.push_back(std::move(cpu));
    out.push_back(std::move(done));
  }

  auto sq_cpu = family("ioacct_sq_thread_cpu_seconds_total",
                       "CPU time of an SQPOLL thread (fdinfo SqTotalTime), counted once for rings sharing it",
                       MetricType::Counter);
  auto sq_work = family("ioacct_sq_thread_work_seconds_total",
                        "Part of the SQPOLL thread's CPU time spent doing work, not spinning idle (fdinfo SqWorkTime)",
                        MetricType::Counter);
  auto sq_pending = family("ioacct_ring_sq_pending", "SQEs submitted to the ring and not yet consumed by the kernel",
                           MetricType::Gauge);
  auto cq_pending = family("ioacct_ring_cq_pending", "CQEs posted and not yet reaped by the application",
                           MetricType::Gauge);
  auto overflow = family("ioacct_ring_cq_overflow",
                         "Completions waiting on the overflow list: the CQ had no room for them", MetricType::Gauge);
  auto sq_size = family("ioacct_ring_sq_entries", "Size of the submission queue", MetricType::Gauge);
  auto cq_size = family("ioacct_ring_cq_entries", "Size of the completion queue", MetricType::Gauge);
  std::set<uint64_t> threads_seen;
  for (const RingSnapshot& r : s.rings.rings) {
    const Labels ring = {{"pid", std::to_string(r.pid)}, {"comm", r.comm}, {"fd", std::to_string(r.fd)}};
    if (r.sq_pending) add(sq_pending, ring, static_cast<double>(*r.sq_pending));
    if (r.cq_pending) add(cq_pending, ring, static_cast<double>(*r.cq_pending));
    if (r.overflow) add(overflow, ring, static_cast<double>(*r.overflow));
    if (r.sq_entries) add(sq_size, ring, static_cast<double>(*r.sq_entries));
    if (r.cq_entries) add(cq_size, ring, static_cast<double>(*r.cq_entries));
    if (!r.sq_thread || !r.sq_total_us || !threads_seen.insert(*r.sq_thread).second) continue;
    const Labels thread = {{"pid", std::to_string(r.pid)}, {"comm", r.comm}, {"tid", std::to_string(*r.sq_thread)}};
    add(sq_cpu, thread, static_cast<double>(*r.sq_total_us) / 1e6);
    if (r.sq_work_us) add(sq_work, thread, static_cast<double>(*r.sq_work_us) / 1e6);
  }
  for (auto* f : {&sq_cpu, &sq_work, &sq_pending, &cq_pending, &overflow, &sq_size, &cq_size})
    out.push_back(std::move(*f));
  auto unreadable = family("ioacct_rings_unreadable_processes",
                           "Processes whose rings could not be looked at (no permission for /proc/PID/fd)",
                           MetricType::Gauge);
  add(unreadable, {}, static_cast<double>(s.rings.unreadable));
  out.push_back(std::move(unreadable));
  return out;
}

ExportCollector::ExportCollector(std::vector<StatDevice> devices, const BusyTracker* tracker, uint64_t min_interval_ns)
    : devices_(std::move(devices)), tracker_(tracker), min_interval_ns_(min_interval_ns) {}

std::vector<MetricFamily> ExportCollector::Collect() const {
  const std::lock_guard lock(mu_);
  const uint64_t now = now_ns();
  if (walks_ && now - walked_ns_ < min_interval_ns_) return cached_;
  ExportSample s;
  try {
    StatSample st = take_stat_sample(devices_, tracker_);
    s.disks = std::move(st.disks);
    s.busy = std::move(st.busy);
    s.cost = st.cost;
    s.rings = scan_rings();
  } catch (const std::exception&) {
    return cached_;  // an exception must not reach the HTTP server's thread
  }
  cached_ = export_families(devices_, s);
  walked_ns_ = now;
  ++walks_;
  return cached_;
}

uint64_t ExportCollector::walks() const {
  const std::lock_guard lock(mu_);
  return walks_;
}

}  // namespace ioacct
