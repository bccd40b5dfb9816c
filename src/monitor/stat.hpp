#pragma once
// `ioacct stat`: iostat -x from /proc/diskstats, with iostat's formulas and
// interval, and beside it the exact busy time from the BusyTracker (eBPF).
//
// measure (StatSample, twice) -> make_stat_report (pure) -> StatReport
// (plain data) -> reporters (report/stat_report.hpp). Nothing here prints.
#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "acct/procfs.hpp"
#include "acct/system.hpp"
#include "monitor/bpf/busy_tracker.hpp"

namespace ioacct {

struct StatDevice {
  std::string name;  // as in /proc/diskstats: "vda", "vda1", "loop0"
  unsigned major = 0, minor = 0;
  bool partition = false;
};

// The devices to report, in /proc/diskstats order. `wanted` empty: every
// whole disk that has done any I/O since boot (iostat's default). Otherwise
// the devices named, by name ("vda1") or path ("/dev/vda1"). `partitions`
// (-p) adds the partitions of every whole disk chosen. Throws UsageError
// ("PATH: ...") for a name that is not a block device.
std::vector<StatDevice> select_stat_devices(std::string_view diskstats_text, const std::vector<std::string>& wanted,
                                            bool partitions);

// What one look at the kernel found.
struct StatSample {
  uint64_t uptime_cs = 0;                   // /proc/uptime, 1/100 s: iostat's clock for the interval
  int64_t wall_ns = 0;                      // the wall clock when taken (only to say when)
  std::map<std::string, DiskStats> disks;   // by name
  std::optional<std::vector<BusyCounters>> busy;  // in device order; none without a tracker
};
// Reads /proc/uptime, then /proc/diskstats, then the tracker (iostat's order).
StatSample take_stat_sample(const std::vector<StatDevice>& devices, const BusyTracker* tracker);

struct LatencySummary {
  uint64_t count = 0;
  double p50_ns = 0, p99_ns = 0, max_ns = 0;  // from log-linear buckets: within 12.5% (max exact when it is a new maximum)
};

struct StatRow {
  StatDevice device;
  IostatRow io;
  // The exact figures: none in a since-boot report or without a tracker.
  std::optional<uint64_t> window_start_ns, window_end_ns;  // CLOCK_MONOTONIC: the tracker's two reads
  std::optional<uint64_t> window_ns, busy_ns, dev_busy_ns;
  std::optional<double> busy_pct, dev_pct;
  std::optional<std::array<double, BusyCounters::kDepthBuckets>> depth_pct;  // of the window, adds up to 100
  std::optional<LatencySummary> latency;   // with --latency
  std::optional<uint64_t> started, done, untracked;  // requests in the window
  std::optional<uint64_t> in_flight;                 // requests in flight (accounting span) at the window's end
  std::optional<uint64_t> missed;                    // tracepoint hits no program ran for, in the window (all devices)
  // Completions no program ran for, found later (BusyCounters::lost), and the
  // time left out of busy_ns because of them: busy lies in [busy, busy + unsure].
  std::optional<uint64_t> lost, unsure_ns;
  std::optional<uint64_t> contended;  // changes the tracker dropped (BusyCounters::contended): never seen
  std::optional<double> unsure_pct;
};

struct StatReport {
  bool since_boot = false;
  double interval_s = 0;  // iostat's interval: the uptime delta (since boot: the uptime)
  int64_t wall_ns = 0;    // when its (last) sample was taken: the wall clock, ns since the epoch
  std::vector<StatRow> rows;
};

// `prev` null: the since-boot report (counters against zero, interval = uptime).
StatReport make_stat_report(const std::vector<StatDevice>& devices, const StatSample* prev, const StatSample& cur);

// Quantile q of a bucketed latency distribution (upper bounds `le`, counts
// per bucket): the midpoint of the bucket holding rank ceil(q*n), clamped to
// `max_ns` when known. 0 when empty.
double bucket_quantile(const std::vector<uint64_t>& le, const std::vector<uint64_t>& counts, double q,
                       uint64_t max_ns);

// The loop: a report every `interval_ns` (deadlines from the first sample,
// so it does not drift), `count` of them (0: until stopped). `wait(ms)`
// sleeps up to ms and returns true once the user asked to stop.
struct StatLoop {
  uint64_t interval_ns = 0;  // 0: one since-boot report
  uint64_t count = 0;
  bool omit_first = false;   // -y: no since-boot report first
};
void run_stat_loop(const StatLoop& loop, const std::vector<StatDevice>& devices, const BusyTracker* tracker,
                   const std::function<bool(int ms)>& wait, const std::function<void(const StatReport&)>& emit);

}  // namespace ioacct
