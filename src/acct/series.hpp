#pragma once
// The time series (--log-interval): one sample per interval of the measured
// window, in bounded memory. When it is full, every other sample is dropped
// and the spacing doubles ("decimated evenly"); the samples kept are still
// exact for their own interval.
#include <cstdint>
#include <optional>
#include <vector>

namespace ioacct {

struct SeriesSample {
  double t_s = 0;           // end of the interval, from the window's opening
  double dur_s = 0;         // the interval as measured
  double iops = 0, bytes_per_s = 0;
  std::optional<uint64_t> p50_ns, p99_ns;  // none: no completion in the interval
  std::optional<double> mean_ns;           // the same I/Os' mean latency (fio's averaged lat log)
  std::optional<double> slat_mean_ns, clat_mean_ns;  // their slat's and clat's (JobSpec::interval_split only)
  uint64_t inflight = 0;                   // in flight at the interval's end
  std::optional<double> own_inflight_pct;  // exact time this run's own I/Os were in flight, % of the interval
  std::optional<double> device_busy_pct;   // the first target device's exact busy time (eBPF), % of the interval
  std::optional<double> cpu_pct;           // process CPU, % of one core
  std::optional<double> sq_cpu_pct, sq_work_pct;  // all SQ threads, % of one core
  std::optional<double> util_pct;          // the first target device's %util (io_ticks)
};

class Series {
 public:
  static constexpr size_t kMaxSamples = 600;
  void add(SeriesSample s);
  const std::vector<SeriesSample>& samples() const { return samples_; }
  unsigned keep_every() const { return keep_every_; }  // 1: every interval kept

 private:
  std::vector<SeriesSample> samples_;
  unsigned keep_every_ = 1;
  uint64_t seen_ = 0;
};

}  // namespace ioacct
