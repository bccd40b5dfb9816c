#pragma once
// `ioacct merge`: several hosts' bench results made one, as if one run had
// held every host's I/Os. Pure: merge_hosts() works on plain data, and
// host_run_of() reads one bench document's text that the command has read
// from a file; nothing here opens a file.
//
// What is exact and what is bounded (docs/design.md, "Merging hosts"):
// counts add; latency histograms add bucket by bucket (one fixed layout), so
// the merged percentiles are those of one histogram holding every sample;
// IOPS and bandwidth are each host's own over its own window, added, which
// is the fleet's rate over the common window as far as each host ran evenly
// through its own; the windows' skew is measured from their wall-clock
// edges, and bounded by the hosts' clock errors (adjtimex).
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "acct/histogram.hpp"
#include "acct/run_context.hpp"

namespace ioacct {

// One point of a host's time series, on the wall clock.
struct HostSample {
  int64_t end_unix_ns = 0;
  double dur_s = 0, iops = 0;
  std::optional<double> bytes_per_s;
  std::optional<uint64_t> p50_ns, p99_ns;
};

struct HostCpu {
  double user_s = 0, sys_s = 0;
  uint64_t voluntary_ctxsw = 0, involuntary_ctxsw = 0;
};

// One latency histogram as a report prints it.
struct HostLatency {
  std::vector<Histogram::Bucket> buckets;
  uint64_t min = 0, max = 0;
  double mean = 0, stdev = 0;
};

// What a merge needs of one host's result: plain figures.
struct HostRun {
  std::string source;     // the file it came from
  std::string name;       // its "host" tag, else its host name
  std::string hostname, boot_id, kernel, ioacct_version;
  std::map<std::string, std::string> tags;
  std::optional<ClockSync> clock;
  int64_t start_mono_ns = 0;           // with boot_id: tells one run given twice
  int64_t window_start_ns = 0, window_end_ns = 0;  // the measured window, ns since the epoch
  double window_s = 0;
  uint64_t ios = 0, reads = 0, writes = 0, trims = 0;
  uint64_t bytes_read = 0, bytes_written = 0, bytes_trimmed = 0;
  double iops = 0;
  std::optional<double> bytes_per_s;   // none: the nop engine
  HostLatency latency;                 // empty buckets: no latency (--acct off, nothing completed)
  std::optional<HostCpu> cpu;
  uint64_t iodepth = 0, errors = 0;
  std::map<std::string, uint64_t> errors_by_kind;
  std::map<std::string, uint64_t> syscalls;  // total, submit, reap, submitted_ios, reaped_ios
  uint64_t short_resubmits = 0, eagain_retries = 0;
  std::string first_error;
  bool interrupted = false;
  std::string stop_reason;
  double series_interval_s = 0;        // 0: no series
  std::vector<HostSample> series;
  nlohmann::json devices = nlohmann::json::array();  // results.devices as printed: kept per host, never added
  nlohmann::json targets = nlohmann::json::array();  // context.targets
  std::string options_key;             // context.options but seed, ramp_s, log_interval_s, printed: tells workloads apart
};

// `text` is one bench document, as read from `source`. Throws
// UsageError("SOURCE: ...") for text that is not JSON or not a bench result,
// a run without results, one of several jobs (merge takes one job per host),
// or one from before the fields a merge needs (the window's wall-clock
// edges).
HostRun host_run_of(const std::string& source, const std::string& text);

// A point of the merged series: the hosts' samples that end in the same
// interval of the common clock, added.
struct MergedSample {
  int64_t end_unix_ns = 0;
  double iops = 0;
  std::optional<double> bytes_per_s;
  unsigned hosts = 0;  // how many hosts had a sample there
};

struct MergedRun {
  std::vector<HostRun> hosts;  // in the order given
  // The windows: their union, their common part (overlap), and how far
  // apart they opened and closed.
  int64_t union_start_ns = 0, union_end_ns = 0;
  int64_t overlap_start_ns = 0, overlap_end_ns = 0;  // overlap_end <= overlap_start: none
  bool overlapped = false;
  int64_t start_skew_ns = 0, end_skew_ns = 0;
  // How far two hosts' clocks may be apart: the sum of the two largest
  // maxerrors among different boots (0 for one boot: one clock). None when
  // a host of another boot has no synchronised clock.
  std::optional<int64_t> clock_error_bound_us;
  unsigned boots = 0;  // distinct boot ids (machines); a result without one counts by its host name
  uint64_t ios = 0, reads = 0, writes = 0, trims = 0;
  uint64_t bytes_read = 0, bytes_written = 0, bytes_trimmed = 0;
  double iops = 0;
  std::optional<double> bytes_per_s;
  Histogram latency;   // every host's, bucket by bucket
  bool has_latency = false;
  std::optional<HostCpu> cpu;  // added over the hosts that measured it
  uint64_t iodepth = 0;
  std::map<std::string, uint64_t> errors_by_kind, syscalls;
  uint64_t short_resubmits = 0, eagain_retries = 0;
  std::string first_error;
  bool interrupted = false;
  double series_interval_s = 0;
  std::vector<MergedSample> series;
  std::vector<std::string> warnings;  // one line each, saying what to do
  double overlap_s() const { return overlapped ? static_cast<double>(overlap_end_ns - overlap_start_ns) / 1e9 : 0.0; }
  // The merged result's window: the common one, or the union where there is
  // none (so that it stays a run of some length to its readers).
  int64_t window_start_ns() const { return overlapped ? overlap_start_ns : union_start_ns; }
  int64_t window_end_ns() const { return overlapped ? overlap_end_ns : union_end_ns; }
  double window_s() const { return static_cast<double>(window_end_ns() - window_start_ns()) / 1e9; }
};

// Throws UsageError when `hosts` is empty, or one run is given twice (same
// boot and start).
MergedRun merge_hosts(std::vector<HostRun> hosts);

}  // namespace ioacct
