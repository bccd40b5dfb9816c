#pragma once
// `ioacct export`: the devices' and rings' figures as Prometheus metrics
// (docs/metrics.md). Values are read at scrape time, never kept between
// scrapes: /proc/diskstats and the busy tracker's maps (read, not drained)
// for devices, scan_rings() for SQ threads and rings. A scrape within
// `min_interval` of the last walk gets that walk's families again, so a
// scraper hammering the endpoint cannot make ioacct walk /proc faster.
#include <prometheus/collectable.h>
#include <prometheus/metric_family.h>

#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

#include "monitor/bpf/busy_tracker.hpp"
#include "monitor/rings.hpp"
#include "monitor/stat.hpp"

namespace ioacct {

// What one walk found. `busy` in device order; none without a tracker.
struct ExportSample {
  std::map<std::string, DiskStats> disks;
  std::optional<std::vector<BusyCounters>> busy;
  std::optional<BusyCost> cost;  // the tracker's own cost, with `busy`
  RingScan rings;
};

// The metric families for one walk (names and meanings: docs/metrics.md).
// Pure. The exact device families are there only when `s.busy` is.
std::vector<prometheus::MetricFamily> export_families(const std::vector<StatDevice>& devices,
                                                      const ExportSample& s);

// The Collectable the exposer calls, from its own HTTP threads: Collect() is
// thread-safe (one walk at a time, under a mutex). `tracker` may be null and
// must outlive the collector; it is read only under the mutex.
class ExportCollector : public prometheus::Collectable {
 public:
  ExportCollector(std::vector<StatDevice> devices, const BusyTracker* tracker, uint64_t min_interval_ns);
  // A walk that fails (a /proc file unreadable) serves the previous one.
  std::vector<prometheus::MetricFamily> Collect() const override;
  uint64_t walks() const;  // how many times /proc was walked

 private:
  std::vector<StatDevice> devices_;
  const BusyTracker* tracker_;
  uint64_t min_interval_ns_;
  mutable std::mutex mu_;
  mutable std::vector<prometheus::MetricFamily> cached_;
  mutable uint64_t walked_ns_ = 0, walks_ = 0;
};

}  // namespace ioacct
