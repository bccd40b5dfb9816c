#pragma once
// `ioacct export`: the devices' and rings' figures as Prometheus metrics
// (docs/metrics.md). Every scrape reads the counters afresh: /proc/diskstats
// and the busy tracker's maps (read, not drained) for devices, scan_rings()
// for SQ threads and rings (in a thread of its own, which a scrape waits for
// only so long). Only with a `max_age` (--min-interval) may a scrape get an
// earlier walk's device figures, and then none older than that.
#include <prometheus/metric_family.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <regex>
#include <set>
#include <string>
#include <vector>

#include "monitor/export_who.hpp"
#include "monitor/ring_walker.hpp"
#include "monitor/rings.hpp"
#include "monitor/stat.hpp"
#include "trace/bpf/busy_tracker.hpp"

namespace ioacct {

// Which devices export watches when none are named: node_exporter's rule,
// a regex on the name. `include` set: only names it matches; otherwise
// every name `exclude` does not match. Searched, not anchored (as Go's
// MatchString), so anchors belong in the pattern.
struct DeviceFilter {
  std::optional<std::regex> include, exclude;
};
// node_exporter's default exclusion minus what ioacct never picks anyway
// (partitions): RAM disks, zram, loop devices and floppies.
inline constexpr const char* kDefaultDeviceExclude = "^(z?ram|loop|fd)\\d+$";
// Compiles the patterns; throws UsageError naming the flag for one std::regex
// (ECMAScript) cannot read.
DeviceFilter make_device_filter(const std::optional<std::string>& include, const std::optional<std::string>& exclude);

// The devices to export: those named (by name or path, exactly those), or
// else every whole disk that has done I/O since boot and passes `filter`.
std::vector<StatDevice> select_export_devices(std::string_view diskstats_text, const std::vector<std::string>& named,
                                              const DeviceFilter& filter);

// Running totals of every SQ thread's CPU and useful work, so that the
// aggregate counters never go down when a thread exits: a thread that is
// gone keeps what it was last seen to have used.
struct SqTotals {
  struct Seen {
    uint64_t total_us = 0, work_us = 0;
  };
  std::map<uint64_t, Seen> threads;  // by tid, as last seen
  uint64_t retired_total_us = 0, retired_work_us = 0;  // threads gone, or a tid reused
  bool work_missing = false;  // a thread without SqWorkTime (before 6.9): the work total is not known
  uint64_t total_us() const;
  uint64_t work_us() const;
};
// Folds one scan into `t` (each SQ thread counted once however many rings
// share it). A thread missing from the scan stays as last seen while
// `alive(tid)` says it exists (its ring's lock was busy), and retires when
// not; a tid whose SqTotalTime went down is a new thread reusing the tid.
void accumulate_sq(SqTotals& t, const RingScan& scan, const std::function<bool(uint64_t tid)>& alive);
// Whether /proc/TID exists.
bool thread_alive(uint64_t tid);

struct ExportOptions {
  bool per_process = false;        // pid/tid/fd series for rings and SQ threads
  size_t per_process_limit = 100;  // at most this many rings get them (lowest pid, fd first)
  bool per_cgroup = false;         // ioacct_cgroup_* series (the tracker attributes by cgroup)
  size_t per_cgroup_top = 20;      // per device: the top K cgroups by busy time, the rest as cgroup="other"
};

// What one walk found. `busy` in device order; none without a tracker.
struct ExportSample {
  std::map<std::string, DiskStats> disks;
  // Devices that have left /proc/diskstats since start-up (unplugged, a loop
  // detached): none of their series is made again, even if a device of that
  // name comes back, whose counters would start from 0.
  std::set<std::string> gone;
  std::optional<std::vector<BusyCounters>> busy;
  std::optional<BusyCost> cost;  // the tracker's own cost, with `busy`
  std::optional<WhoTotals> who;  // --per-cgroup, with `busy`: the series after this walk's fold
  RingScan rings;
  SqTotals sq;               // after this walk's scan
  double walk_seconds = -1;  // how long the walk took; < 0 unknown
  // The rings walk behind `rings` (made apart from the rest, see
  // RingWalker): how long ago it began and how long it took. None with
  // `rings_known` false: no walk had completed, and no ring family is made.
  bool rings_known = true;
  std::optional<double> rings_walk_age_s, rings_walk_seconds;
};

// The metric families for one walk (names and meanings: docs/metrics.md).
// Pure. The exact device families are there only when `s.busy` is; the
// per-process ones only with `o.per_process`.
std::vector<prometheus::MetricFamily> export_families(const std::vector<StatDevice>& devices, const ExportSample& s,
                                                      const ExportOptions& o = {});

// How long a scrape waits for the rings walk it asked for before it serves
// the last complete one: a walk takes tens of milliseconds here, and one
// that takes longer (very many rings, many of them busy) must not hold the
// scrape up. Prometheus' default scrape timeout is 10 s.
inline constexpr std::chrono::milliseconds kRingsWalkWait{250};

// How old a complete rings walk may be (from its start to the scrape's) for
// a scrape to serve it without a walk of its own: under a Prometheus scrape
// interval (1 s at the least), so a scraper alone always gets a walk begun
// after its scrape, and many scrapers in one second share about two walks.
inline constexpr std::chrono::milliseconds kRingsWalkFresh{500};

// Walks on demand, from the HTTP server's threads: collect() is thread-safe
// (one walk at a time, under a mutex). `tracker` may be null and must
// outlive the collector; it is read only under the mutex. The rings are
// walked by a thread of the collector's own (RingWalker), which each
// scrape asks for a walk and waits for at most `rings_wait`.
class ExportCollector {
 public:
  // `max_age_ns` 0: every scrape walks. Otherwise a scrape less than that
  // after the last walk began gets that walk's families.
  ExportCollector(std::vector<StatDevice> devices, const BusyTracker* tracker, ExportOptions options,
                  uint64_t max_age_ns, std::chrono::nanoseconds rings_wait = kRingsWalkWait);
  // A walk that fails (a /proc file unreadable) serves the previous one.
  std::vector<prometheus::MetricFamily> collect();
  std::string exposition();  // collect() in the text format, for /metrics
  uint64_t walks() const;    // how many times /proc was walked
  // The devices found gone since the last call, each named once ever.
  std::vector<std::string> take_gone();

 private:
  std::vector<StatDevice> devices_;
  const BusyTracker* tracker_;
  ExportOptions options_;
  uint64_t max_age_ns_;
  mutable std::mutex mu_;
  std::vector<prometheus::MetricFamily> cached_;
  SqTotals sq_;
  WhoTotals who_;                     // --per-cgroup
  std::optional<CgroupPaths> paths_;  // --per-cgroup: cgroup ids to paths
  uint64_t sq_seq_ = 0;  // the rings walk sq_ has seen last
  uint64_t walked_ns_ = 0, walks_ = 0;
  std::set<std::string> gone_;
  std::vector<std::string> newly_gone_;
  RingWalker rings_;  // last: its thread stops before the rest goes
};

}  // namespace ioacct
