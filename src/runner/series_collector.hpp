#pragma once
// The time series (--log-interval, with --acct full), collected by the main
// thread: at each interval's end it snapshots the counters and the kernel's
// figures, bumps the epoch so that workers switch histograms, and emits the
// interval once every worker has switched (its old histogram is then the main
// thread's to read) and the in-flight merge has passed the interval's end.
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acct/clock.hpp"
#include "acct/cpu.hpp"
#include "acct/inflight.hpp"
#include "acct/series.hpp"
#include "acct/system.hpp"
#include "runner/control.hpp"
#include "runner/worker.hpp"
#include "workload/job.hpp"

namespace ioacct {

class SeriesCollector {
 public:
  // `pub` holds one Published per worker; `disk` is the first target device
  // ("" if none), whose %util the series shows, and `busy_index` its place
  // in ctl.tracker's reads (none: no exact busy time for it).
  SeriesCollector(const JobSpec& job, Control& ctl, Published* pub, std::vector<std::unique_ptr<Worker>>& workers,
                  InflightMerger& merger, std::string disk, std::optional<size_t> busy_index)
      : job_(job), ctl_(ctl), pub_(pub), workers_(workers), merger_(merger), disk_(std::move(disk)),
        busy_index_(busy_index), interval_(static_cast<Nanos>(job.log_interval.count())), next_(ctl.measure_start) {}

  // Ends an interval if one is due and every worker has switched epochs.
  void tick(Nanos now);
  Nanos next_due() const { return next_; }
  // Emits the intervals that can be: every worker past their epoch, and the
  // in-flight merge past their end (`final`: whatever the merge reached).
  void collect(bool final);

  Series series;

 private:
  struct Snap {
    Nanos t = 0;
    uint64_t ios = 0, bytes = 0, inflight = 0;
    CpuSample cpu;
    SystemSample sys;
    std::optional<BusyCounters> busy;  // the target device's, from ctl.tracker
  };
  struct Pending {
    Snap a, b;
    uint32_t epoch;   // the epoch whose histograms hold this interval
    size_t boundary;  // index into the merger's interval_busy()
  };

  bool all_acked(uint32_t e) const;
  Snap snap(Nanos now);
  void emit(const Pending& p, std::optional<uint64_t> busy_ns);

  const JobSpec& job_;
  Control& ctl_;
  Published* pub_;
  std::vector<std::unique_ptr<Worker>>& workers_;
  InflightMerger& merger_;
  std::string disk_;
  std::optional<size_t> busy_index_;
  Nanos interval_;
  Nanos next_;
  Snap prev_;
  bool have_prev_ = false;
  size_t boundaries_ = 0;
  std::deque<Pending> pending_;
};

}  // namespace ioacct
