#pragma once
// `ioacct export --per-cgroup`: who made each device busy, as Prometheus
// counters with a bounded number of series (docs/metrics.md, "Who").
#include <prometheus/metric_family.h>

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "monitor/stat.hpp"
#include "monitor/who.hpp"

namespace ioacct {

inline constexpr const char* kOtherCgroups = "other";

// One series of a device: a cgroup, or every cgroup outside the top K.
struct WhoSeries {
  CgroupNames names;
  uint64_t share_ns = 0, latency_ns = 0;
  uint64_t ios[BusyWho::kDirs] = {}, bytes[BusyWho::kDirs] = {};
};

// Counters that never go down while the set of cgroups shown changes: each
// fold adds what every cgroup did since the last one to its own series when
// it is among the device's top K by busy time since the tracker attached,
// else to `other`. A cgroup's series therefore counts from when it entered
// the top K (its time before is in `other`), and one that leaves it is not
// shown until it is back, its counters then going on from where they were.
// Per device, the series shown add up to the device's totals since attach.
struct WhoTotals {
  std::vector<std::vector<BusyWho>> last;                // per device: the tracker's counters at the last fold
  std::vector<std::map<std::string, WhoSeries>> series;  // per device: every series so far, by its cgroup label
  std::vector<std::vector<std::string>> shown;           // per device: the labels shown now (top K, then other)
};

// The label of a cgroup: its path, "(unknown)" (id 0), or "(removed cgroup
// ID)" when no path is known.
std::string cgroup_label(uint64_t id, const WhoNames& names);

// Pure. Folds one read of the tracker (`busy`, in device order) into `t`.
void accumulate_who(WhoTotals& t, const std::vector<BusyCounters>& busy, size_t top_k, const WhoNames& names);

// The families of the series shown (docs/metrics.md): at most top K + 1 per
// device. Pure.
void who_families(const std::vector<StatDevice>& devices, const std::set<std::string>& gone, const WhoTotals& t,
                  std::vector<prometheus::MetricFamily>& out);

}  // namespace ioacct
