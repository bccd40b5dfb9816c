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
#include "monitor/who.hpp"
#include "trace/bpf/busy_tracker.hpp"

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

// The busy tracker's view of the devices chosen (trace/attach.hpp attaches it).
std::vector<BusyDevice> busy_devices(const std::vector<StatDevice>& devices);

// What one look at the kernel found.
struct StatSample {
  uint64_t uptime_cs = 0;                   // /proc/uptime, 1/100 s: iostat's clock for the interval
  int64_t wall_ns = 0;                      // the wall clock when taken (only to say when)
  std::vector<uint64_t> cpu_ticks;          // /proc/stat's "cpu" line: user nice system idle iowait irq softirq steal
                                            // guest guest_nice (USER_HZ ticks, all CPUs)
  std::map<std::string, DiskStats> disks;   // by name
  std::optional<std::vector<BusyCounters>> busy;  // in device order; none without a tracker
  std::optional<BusyCost> cost;                   // the tracker's own cost so far
  std::optional<std::string> busy_error;          // the tracker could not be read (then `busy` is none)
  BusyBy who_by = BusyBy::None;                   // the tracker's attribution (BusyCounters::who)
  WhoNames who_names;                             // the names of its labels, read with it
};
// Reads /proc/uptime, then /proc/diskstats, then the tracker (iostat's order),
// then /proc/diskstats once more. With `paths` (the tracker attributes by
// `by`), also the names of the tracker's labels.
StatSample take_stat_sample(const std::vector<StatDevice>& devices, const BusyTracker* tracker,
                            CgroupPaths* paths = nullptr, BusyBy by = BusyBy::None);

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
  std::optional<uint64_t> started, done, merged;  // requests in the window
  std::optional<uint64_t> in_flight;              // requests started and not seen ending at the window's end
  std::optional<uint64_t> missed;                 // program runs the kernel skipped for recursion (all devices)
  // Requests whose end no program saw (BusyCounters::lost), and the time that
  // may have been busy: the truth lies in [busy, busy + unsure].
  std::optional<uint64_t> lost, unsure_ns, dev_unsure_ns;
  std::optional<double> unsure_pct, dev_unsure_pct;
  std::optional<uint64_t> unseen_starts;  // requests first seen after a sweep should have found them
  std::optional<uint64_t> late_ns;        // time they may have covered in the previous window (BusyCounters::late_ns)
  std::optional<uint64_t> dropped;        // records the tracker's logs had no room for (all devices)
  // Completions diskstats counted that no program saw at either end (beyond
  // what the two samples' few hundred µs apart explain).
  std::optional<uint64_t> invisible;
  // --by: the device's cgroups or processes over the window, by busy share.
  std::vector<WhoRow> who;
};

// The tracker's own cost over a report's window, all devices together.
struct TrackerCost {
  uint64_t completions = 0;
  uint64_t user_cpu_ns = 0;
  std::optional<uint64_t> bpf_run_ns;        // with kernel.bpf_stats_enabled
  std::optional<double> cpu_ns_per_io;       // (user + bpf, when known) / completions; none without completions
};

// iostat's avg-cpu line: shares of all CPUs' time over the interval, in %,
// with sysstat's formulas (iostat.c, write_cpu_stat): guest time is in user
// (and guest_nice in nice) in /proc/stat and is taken out, irq and softirq
// count as system.
struct CpuRow {
  double user = 0, nice = 0, system = 0, iowait = 0, steal = 0, idle = 0;
};
// From two /proc/stat "cpu" lines (`a` empty: since boot); none when either
// has fewer than the 8 fields every kernel since 2.6.11 gives, or no tick
// passed.
std::optional<CpuRow> cpu_row(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b);

struct StatReport {
  bool since_boot = false;
  double interval_s = 0;  // iostat's interval: the uptime delta (since boot: the uptime)
  int64_t wall_ns = 0;    // when its (last) sample was taken: the wall clock, ns since the epoch
  std::vector<StatRow> rows;
  std::optional<TrackerCost> tracker;  // none in a since-boot report or without a tracker
  std::optional<std::string> busy_error;  // the tracker could not be read for this report
  std::optional<CpuRow> cpu;              // from /proc/stat
  BusyBy who_by = BusyBy::None;           // --by: rows' `who` are by this
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
  BusyBy who_by = BusyBy::None;  // --by: the tracker attributes so; name its labels
};
void run_stat_loop(const StatLoop& loop, const std::vector<StatDevice>& devices, const BusyTracker* tracker,
                   const std::function<bool(int ms)>& wait, const std::function<void(const StatReport&)>& emit);

}  // namespace ioacct
