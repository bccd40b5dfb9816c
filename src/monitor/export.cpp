#include "monitor/export.hpp"

#include <fmt/format.h>
#include <prometheus/text_serializer.h>
#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <utility>

#include "acct/clock.hpp"
#include "common/errors.hpp"

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

const char* ring_kind(const RingSnapshot& r) { return r.sq_thread ? "sqpoll" : "syscall"; }

// Rings and SQ threads. By default aggregates by ring kind, whose series
// stay the same whatever processes come and go; pid/tid/fd series only with
// --per-process, for at most per_process_limit rings.
void ring_families(const ExportSample& s, const ExportOptions& o, std::vector<MetricFamily>& out) {
  auto rings = family("ioacct_rings", "io_uring instances open on the machine, by kind: sqpoll (a kernel thread "
                      "polls the submission queue) or syscall (the application submits with io_uring_enter)",
                      MetricType::Gauge);
  auto sq_pending = family("ioacct_rings_sq_pending",
                           "SQEs submitted and not yet consumed by the kernel, summed over the rings of a kind",
                           MetricType::Gauge);
  auto cq_pending = family("ioacct_rings_cq_pending", "CQEs posted and not yet reaped, summed over the rings of a kind",
                           MetricType::Gauge);
  auto overflow = family("ioacct_rings_cq_overflow",
                         "Completions waiting on overflow lists (the CQ had no room), summed over the rings of a kind",
                         MetricType::Gauge);
  auto overflowing = family("ioacct_rings_overflowing", "Rings of a kind whose CQ overflow list is not empty",
                            MetricType::Gauge);
  struct Sums {
    uint64_t rings = 0, sq = 0, cq = 0, overflow = 0, overflowing = 0;
  };
  std::map<std::string, Sums> by_kind = {{"sqpoll", {}}, {"syscall", {}}};  // both always there
  std::set<int> processes;
  std::set<uint64_t> sq_threads;
  for (const RingSnapshot& r : s.rings.rings) {
    processes.insert(r.pid);
    if (!r.sq_known) continue;  // neither kind for sure: in ioacct_rings_unread
    Sums& k = by_kind[ring_kind(r)];
    ++k.rings;
    k.sq += r.sq_pending.value_or(0);
    k.cq += r.cq_pending.value_or(0);
    k.overflow += r.overflow.value_or(0);
    k.overflowing += r.overflow.value_or(0) > 0;
    if (r.sq_thread) sq_threads.insert(*r.sq_thread);
  }
  for (const auto& [kind, k] : by_kind) {
    add(rings, {{"kind", kind}}, static_cast<double>(k.rings));
    add(sq_pending, {{"kind", kind}}, static_cast<double>(k.sq));
    add(cq_pending, {{"kind", kind}}, static_cast<double>(k.cq));
    add(overflow, {{"kind", kind}}, static_cast<double>(k.overflow));
    add(overflowing, {{"kind", kind}}, static_cast<double>(k.overflowing));
  }
  auto procs = family("ioacct_ring_processes", "Processes holding at least one io_uring", MetricType::Gauge);
  add(procs, {}, static_cast<double>(processes.size()));
  auto threads = family("ioacct_sq_threads", "SQPOLL kernel threads (rings sharing one count it once)",
                        MetricType::Gauge);
  add(threads, {}, static_cast<double>(sq_threads.size()));
  auto cpu = family("ioacct_sq_threads_cpu_seconds_total",
                    "CPU time of every SQPOLL thread seen since export started, each from its own start (fdinfo "
                    "SqTotalTime); a thread that exits keeps its share", MetricType::Counter);
  add(cpu, {}, static_cast<double>(s.sq.total_us()) / 1e6);
  for (auto* f : {&rings, &sq_pending, &cq_pending, &overflow, &overflowing, &procs, &threads, &cpu})
    out.push_back(std::move(*f));
  if (!s.sq.work_missing) {
    auto work = family("ioacct_sq_threads_work_seconds_total",
                       "Part of ioacct_sq_threads_cpu_seconds_total in loops that had SQEs to submit (fdinfo "
                       "SqWorkTime, 6.9+)", MetricType::Counter);
    add(work, {}, static_cast<double>(s.sq.work_us()) / 1e6);
    out.push_back(std::move(work));
  }
  if (!o.per_process) return;

  auto sq_cpu = family("ioacct_sq_thread_cpu_seconds_total",
                       "CPU time of an SQPOLL thread (fdinfo SqTotalTime), counted once for rings sharing it",
                       MetricType::Counter);
  auto sq_work = family("ioacct_sq_thread_work_seconds_total",
                        "Part of the SQPOLL thread's CPU time in loops that had SQEs to submit (fdinfo SqWorkTime)",
                        MetricType::Counter);
  auto ring_sq = family("ioacct_ring_sq_pending", "SQEs submitted to the ring and not yet consumed by the kernel",
                        MetricType::Gauge);
  auto ring_cq = family("ioacct_ring_cq_pending", "CQEs posted and not yet reaped by the application",
                        MetricType::Gauge);
  auto ring_overflow = family("ioacct_ring_cq_overflow",
                              "Completions waiting on the overflow list: the CQ had no room for them", MetricType::Gauge);
  auto sq_size = family("ioacct_ring_sq_entries", "Size of the submission queue", MetricType::Gauge);
  auto cq_size = family("ioacct_ring_cq_entries", "Size of the completion queue", MetricType::Gauge);
  auto omitted = family("ioacct_rings_per_process_omitted",
                        "Rings left out of the per-process series by --per-process-limit (still in the aggregates)",
                        MetricType::Gauge);
  std::set<uint64_t> threads_seen;
  size_t taken = 0;
  for (const RingSnapshot& r : s.rings.rings) {  // by pid, then fd: the same rings scrape after scrape
    if (taken == o.per_process_limit) break;
    ++taken;
    const Labels ring = {{"pid", std::to_string(r.pid)}, {"comm", r.comm}, {"fd", std::to_string(r.fd)}};
    if (r.sq_pending) add(ring_sq, ring, static_cast<double>(*r.sq_pending));
    if (r.cq_pending) add(ring_cq, ring, static_cast<double>(*r.cq_pending));
    if (r.overflow) add(ring_overflow, ring, static_cast<double>(*r.overflow));
    if (r.sq_entries) add(sq_size, ring, static_cast<double>(*r.sq_entries));
    if (r.cq_entries) add(cq_size, ring, static_cast<double>(*r.cq_entries));
    if (!r.sq_thread || !r.sq_total_us || !threads_seen.insert(*r.sq_thread).second) continue;
    const Labels thread = {{"pid", std::to_string(r.pid)}, {"comm", r.comm}, {"tid", std::to_string(*r.sq_thread)}};
    add(sq_cpu, thread, static_cast<double>(*r.sq_total_us) / 1e6);
    if (r.sq_work_us) add(sq_work, thread, static_cast<double>(*r.sq_work_us) / 1e6);
  }
  add(omitted, {}, static_cast<double>(s.rings.rings.size() - taken));
  for (auto* f : {&sq_cpu, &sq_work, &ring_sq, &ring_cq, &ring_overflow, &sq_size, &cq_size, &omitted})
    out.push_back(std::move(*f));
}

}  // namespace

DeviceFilter make_device_filter(const std::optional<std::string>& include, const std::optional<std::string>& exclude) {
  if (include && exclude)
    throw UsageError("--device-include and --device-exclude: give one or the other (as node_exporter), not both");
  const auto compile = [](std::string_view flag, const std::string& pattern) {
    try {
      return std::regex(pattern, std::regex::ECMAScript | std::regex::optimize);
    } catch (const std::regex_error& e) {
      throw UsageError(fmt::format("{}: '{}' is not a regular expression ({})", flag, pattern, e.what()));
    }
  };
  DeviceFilter f;
  if (include) f.include = compile("--device-include", *include);
  else f.exclude = compile("--device-exclude", exclude.value_or(kDefaultDeviceExclude));
  return f;
}

std::vector<StatDevice> select_export_devices(std::string_view diskstats_text, const std::vector<std::string>& named,
                                              const DeviceFilter& filter) {
  std::vector<StatDevice> all = select_stat_devices(diskstats_text, named, false);
  if (!named.empty()) return all;
  std::erase_if(all, [&](const StatDevice& d) {
    if (filter.include) return !std::regex_search(d.name, *filter.include);
    return filter.exclude && std::regex_search(d.name, *filter.exclude);
  });
  return all;
}

uint64_t SqTotals::total_us() const {
  uint64_t sum = retired_total_us;
  for (const auto& [tid, seen] : threads) sum += seen.total_us;
  return sum;
}

uint64_t SqTotals::work_us() const {
  uint64_t sum = retired_work_us;
  for (const auto& [tid, seen] : threads) sum += seen.work_us;
  return sum;
}

void accumulate_sq(SqTotals& t, const RingScan& scan, const std::function<bool(uint64_t tid)>& alive) {
  std::map<uint64_t, SqTotals::Seen> now;
  for (const RingSnapshot& r : scan.rings) {
    if (!r.sq_thread || !r.sq_total_us || now.count(*r.sq_thread)) continue;
    if (!r.sq_work_us) t.work_missing = true;
    now[*r.sq_thread] = {*r.sq_total_us, r.sq_work_us.value_or(0)};
  }
  for (const auto& [tid, seen] : t.threads) {
    const auto it = now.find(tid);
    if (it == now.end()) {
      // Not in this scan: its ring's lock was busy (fdinfo then leaves the
      // SQ lines out), or the thread is gone. Only a gone thread retires.
      if (alive(tid)) now[tid] = seen;
      else {
        t.retired_total_us += seen.total_us;
        t.retired_work_us += seen.work_us;
      }
    } else if (it->second.total_us < seen.total_us) {  // a new thread with a reused tid
      t.retired_total_us += seen.total_us;
      t.retired_work_us += seen.work_us;
    } else {
      it->second.work_us = std::max(it->second.work_us, seen.work_us);  // never down
    }
  }
  t.threads = std::move(now);
}

bool thread_alive(uint64_t tid) {
  struct stat st {};
  return ::stat(fmt::format("/proc/{}", tid).c_str(), &st) == 0;  // /proc/TID works for any thread
}

namespace {

// /proc/diskstats as node_exporter names it (so that await and %util are the
// same divisions), for every device still there.
void diskstats_families(const std::vector<StatDevice>& devices, const ExportSample& s,
                        std::vector<MetricFamily>& out) {
  auto ticks = family("ioacct_device_io_ticks_seconds_total",
                      "Time the device had I/O in flight as /proc/diskstats io_ticks counts it (jiffy-sampled; "
                      "what node_exporter and iostat %util use)", MetricType::Counter);
  auto ios = family("ioacct_device_completed_ios_total", "I/Os completed, by direction (/proc/diskstats)",
                    MetricType::Counter);
  auto bytes = family("ioacct_device_completed_bytes_total", "Bytes completed, by direction (/proc/diskstats sectors x 512)",
                      MetricType::Counter);
  // Named as node_exporter's node_disk_*_time_seconds_total, so that await
  // is the same division: rate(..._read_time...) / rate(reads completed).
  auto read_time = family("ioacct_device_read_time_seconds_total",
                          "Total time spent by all reads, from /proc/diskstats (node_disk_read_time_seconds_total)",
                          MetricType::Counter);
  auto write_time = family("ioacct_device_write_time_seconds_total",
                           "Total time spent by all writes, from /proc/diskstats (node_disk_write_time_seconds_total)",
                           MetricType::Counter);
  auto discard_time = family("ioacct_device_discard_time_seconds_total",
                             "Total time spent by all discards, from /proc/diskstats (node_disk_discard_time_seconds_total)",
                             MetricType::Counter);
  auto flush_time = family("ioacct_device_flush_requests_time_seconds_total",
                           "Total time spent by all flushes, from /proc/diskstats "
                           "(node_disk_flush_requests_time_seconds_total)", MetricType::Counter);
  auto weighted = family("ioacct_device_io_time_weighted_seconds_total",
                         "Time spent doing I/O weighted by the number in flight, from /proc/diskstats; its rate is "
                         "the average queue size (node_disk_io_time_weighted_seconds_total)", MetricType::Counter);
  for (const StatDevice& d : devices) {
    auto it = s.disks.find(d.name);
    if (it == s.disks.end() || s.gone.count(d.name)) continue;
    const DiskStats& x = it->second;
    add(ticks, {{"device", d.name}}, static_cast<double>(x.io_ms) / 1e3);
    add(ios, {{"device", d.name}, {"direction", "read"}}, static_cast<double>(x.reads));
    add(ios, {{"device", d.name}, {"direction", "write"}}, static_cast<double>(x.writes));
    add(bytes, {{"device", d.name}, {"direction", "read"}}, static_cast<double>(x.sectors_read) * kSectorBytes);
    add(bytes, {{"device", d.name}, {"direction", "write"}}, static_cast<double>(x.sectors_written) * kSectorBytes);
    add(read_time, {{"device", d.name}}, static_cast<double>(x.read_ms) / 1e3);
    add(write_time, {{"device", d.name}}, static_cast<double>(x.write_ms) / 1e3);
    add(weighted, {{"device", d.name}}, static_cast<double>(x.weighted_ms) / 1e3);
    if (x.fields >= 15) {  // 4.18+
      add(ios, {{"device", d.name}, {"direction", "discard"}}, static_cast<double>(x.discards));
      add(bytes, {{"device", d.name}, {"direction", "discard"}}, static_cast<double>(x.sectors_discarded) * kSectorBytes);
      add(discard_time, {{"device", d.name}}, static_cast<double>(x.discard_ms) / 1e3);
    }
    if (x.fields >= 17) {  // 5.5+
      add(ios, {{"device", d.name}, {"direction", "flush"}}, static_cast<double>(x.flushes));
      add(flush_time, {{"device", d.name}}, static_cast<double>(x.flush_ms) / 1e3);
    }
  }
  for (auto* f : {&ticks, &ios, &bytes, &read_time, &write_time, &discard_time, &flush_time, &weighted})
    if (!f->metric.empty() || f == &ticks) out.push_back(std::move(*f));
}

// The eBPF tracker's exact figures, where it is attached: busy time, time at
// each depth, what it could not see, request latency.
void busy_families(const std::vector<StatDevice>& devices, const ExportSample& s, std::vector<MetricFamily>& out) {
  if (!s.busy) return;
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
                       "Requests first seen in flight later than the busy tracker's sweep should have found them",
                       MetricType::Counter);
  auto lost = family("ioacct_device_lost_completions_total",
                     "Requests whose end no BPF program saw (the kernel skipped it); the kernel's own state showed "
                     "them gone", MetricType::Counter);
  auto seen = family("ioacct_device_seen_completions_total",
                     "Requests whose end the busy tracker saw or found lost", MetricType::Counter);
  auto invisible = family("ioacct_device_invisible_completions_total",
                          "Completions diskstats counted that no BPF program saw at either end; the time they may "
                          "have taken (bounded by diskstats' latency sum) is in ioacct_device_busy_unsure_seconds_total",
                          MetricType::Counter);
  auto unsure = family("ioacct_device_busy_unsure_seconds_total",
                       "Time that may have been busy but is not counted in ioacct_device_busy_seconds_total (a "
                       "request whose end no program saw, completions no program saw at all): the true busy time "
                       "lies between that and the sum",
                       MetricType::Counter);
  auto latency = family("ioacct_device_request_latency_seconds",
                        "Request latency over the accounting span (block_io_start..block_io_done; eBPF)",
                        MetricType::Histogram);
  for (size_t i = 0; i < devices.size() && i < s.busy->size(); ++i) {
    const BusyCounters& c = (*s.busy)[i];
    const std::string& name = devices[i].name;
    if (s.gone.count(name)) continue;
    add(busy, {{"device", name}}, seconds(c.busy_ns));
    if (c.device_span) add(driver, {{"device", name}}, seconds(c.dev_busy_ns));
    for (int b = 0; b < BusyCounters::kDepthBuckets; ++b)
      add(depth, {{"device", name}, {"depth", depth_label(b)}}, seconds(c.depth_ns[b]));
    add(unseen, {{"device", name}}, static_cast<double>(c.unseen_starts));
    add(lost, {{"device", name}}, static_cast<double>(c.lost));
    add(seen, {{"device", name}}, static_cast<double>(c.done + c.lost));
    add(invisible, {{"device", name}}, static_cast<double>(c.invisible));
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
  out.push_back(std::move(invisible));
  out.push_back(std::move(unsure));
  if (!latency.metric.empty()) out.push_back(std::move(latency));
}

// What the exact figures cost the machine, so that a fleet can see it:
// rate(cpu) / rate(completions) is the tracker's CPU per I/O.
void cost_families(const ExportSample& s, std::vector<MetricFamily>& out) {
  if (!s.cost) return;
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
  // Records the programs' logs had no room for (the reader fell behind):
  // their requests' time is in the unsure seconds, and nowhere else.
  if (s.busy && !s.busy->empty()) {
    auto dropped = family("ioacct_tracker_records_dropped_total",
                          "Records the BPF programs' logs had no room for (all watched devices; the reader fell "
                          "behind): a completion among them is in no other count, and its time is in "
                          "ioacct_device_busy_unsure_seconds_total", MetricType::Counter);
    add(dropped, {}, static_cast<double>(s.busy->front().dropped));
    out.push_back(std::move(dropped));
  }
}

// The rings walk (every ring and SQ thread) and how old and long the walks
// and this scrape were.
void walk_families(const ExportSample& s, const ExportOptions& o, std::vector<MetricFamily>& out) {
  if (s.rings_known) {
    ring_families(s, o, out);
    auto unreadable = family("ioacct_rings_unreadable_processes",
                             "Processes whose rings could not be looked at (no permission for /proc/PID/fd)",
                             MetricType::Gauge);
    add(unreadable, {}, static_cast<double>(s.rings.unreadable));
    out.push_back(std::move(unreadable));
    auto busy = family("ioacct_rings_unread",
                       "Rings not read whole in the walk (their lock stayed busy, or the walk's 50 ms for looking "
                       "again was spent): counted in ioacct_rings by neither kind", MetricType::Gauge);
    add(busy, {}, static_cast<double>(s.rings.busy));
    out.push_back(std::move(busy));
  }
  if (s.rings_walk_age_s) {
    auto age = family("ioacct_rings_walk_age_seconds",
                      "Time since the rings walk behind this scrape began (walked apart from the scrape; older "
                      "than the scrape when the walk took longer than the scrape waits for it)", MetricType::Gauge);
    add(age, {}, *s.rings_walk_age_s);
    out.push_back(std::move(age));
  }
  if (s.rings_walk_seconds) {
    auto took = family("ioacct_rings_walk_duration_seconds",
                       "Time the rings walk behind this scrape took (/proc/*/fd and the rings' fdinfo)",
                       MetricType::Gauge);
    add(took, {}, *s.rings_walk_seconds);
    out.push_back(std::move(took));
  }
  if (s.walk_seconds >= 0) {
    auto walk = family("ioacct_scrape_duration_seconds",
                       "Time this scrape took: /proc/diskstats, the tracker's maps, and waiting for the rings walk",
                       MetricType::Gauge);
    add(walk, {}, s.walk_seconds);
    out.push_back(std::move(walk));
  }
}

}  // namespace

std::vector<MetricFamily> export_families(const std::vector<StatDevice>& devices, const ExportSample& s,
                                          const ExportOptions& o) {
  std::vector<MetricFamily> out;
  auto up = family("ioacct_exact_busy_up", "1 when the eBPF busy tracker is attached and the exact device figures "
                   "are exported; 0 when not (stderr of ioacct export says why)", MetricType::Gauge);
  add(up, {}, s.busy ? 1 : 0);
  out.push_back(std::move(up));
  diskstats_families(devices, s, out);
  busy_families(devices, s, out);
  if (s.who) who_families(devices, s.gone, *s.who, out);
  cost_families(s, out);
  walk_families(s, o, out);
  return out;
}

ExportCollector::ExportCollector(std::vector<StatDevice> devices, const BusyTracker* tracker, ExportOptions options,
                                 uint64_t max_age_ns, std::chrono::nanoseconds rings_wait)
    : devices_(std::move(devices)), tracker_(tracker), options_(options), max_age_ns_(max_age_ns),
      rings_(rings_wait, kRingsWalkFresh) {
  if (options_.per_cgroup && tracker_) paths_.emplace();
}

std::vector<MetricFamily> ExportCollector::collect() {
  const uint64_t start = now_ns();
  ExportSample s;
  {
    const std::lock_guard lock(mu_);
    if (walks_ && max_age_ns_ && start - walked_ns_ < max_age_ns_) return cached_;
    try {
      // The device counters first, so that they are read as close as possible
      // to the moment the scraper stamps the sample with (its request's start).
      StatSample st = take_stat_sample(devices_, tracker_);
      s.disks = std::move(st.disks);
      s.busy = std::move(st.busy);
      s.cost = st.cost;
      if (paths_ && s.busy) {
        accumulate_who(who_, *s.busy, options_.per_cgroup_top, read_who_names(*s.busy, *paths_));
        s.who = who_;
      }
    } catch (const std::exception&) {
      return cached_;  // an exception must not reach the HTTP server's thread
    }
    for (const StatDevice& d : devices_)
      if (!s.disks.count(d.name) && gone_.insert(d.name).second) newly_gone_.push_back(d.name);
    s.gone = gone_;
  }
  // Outside the mutex: scrapes that come together wait for one rings walk
  // side by side, not one after the other.
  const std::shared_ptr<const RingWalk> walk = rings_.latest(start);
  const std::lock_guard lock(mu_);
  if (walk) {
    if (walk->seq > sq_seq_) {  // each walk counted once, in order, however many scrapes serve it
      accumulate_sq(sq_, walk->scan, thread_alive);
      sq_seq_ = walk->seq;
    }
    s.rings = walk->scan;
    s.rings_walk_age_s = static_cast<double>(now_ns() - walk->began_ns) / 1e9;
    s.rings_walk_seconds = static_cast<double>(walk->ended_ns - walk->began_ns) / 1e9;
  } else {
    s.rings_known = false;
  }
  s.sq = sq_;
  s.walk_seconds = static_cast<double>(now_ns() - start) / 1e9;
  cached_ = export_families(devices_, s, options_);
  walked_ns_ = start;
  ++walks_;
  return cached_;
}

std::string ExportCollector::exposition() {
  return prometheus::TextSerializer().Serialize(collect());
}

std::vector<std::string> ExportCollector::take_gone() {
  const std::lock_guard lock(mu_);
  return std::exchange(newly_gone_, {});
}

uint64_t ExportCollector::walks() const {
  const std::lock_guard lock(mu_);
  return walks_;
}

}  // namespace ioacct
