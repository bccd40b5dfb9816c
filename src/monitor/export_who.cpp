#include "monitor/export_who.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace ioacct {
namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

MetricFamily counter(std::string name, std::string help) {
  MetricFamily f;
  f.name = std::move(name);
  f.help = std::move(help);
  f.type = MetricType::Counter;
  return f;
}

void add(MetricFamily& f, Labels labels, double value) {
  ClientMetric m;
  m.label = std::move(labels);
  m.counter.value = value;
  f.metric.push_back(std::move(m));
}

// What `y` did since `x` into `s`.
void add_delta(WhoSeries& s, const BusyWho& x, const BusyWho& y) {
  s.share_ns += y.share_ns - x.share_ns;
  s.latency_ns += y.latency_sum_ns - x.latency_sum_ns;
  for (int d = 0; d < BusyWho::kDirs; ++d) {
    s.ios[d] += y.ios[d] - x.ios[d];
    s.bytes[d] += y.bytes[d] - x.bytes[d];
  }
}

// The indexes of `who`'s top k by busy time since attach (ties: more I/Os).
std::vector<size_t> top(const std::vector<BusyWho>& who, size_t k) {
  std::vector<size_t> idx(who.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  auto ios = [&](size_t i) { return who[i].ios[0] + who[i].ios[1] + who[i].ios[2]; };
  std::stable_sort(idx.begin(), idx.end(), [&](size_t a, size_t b) {
    return who[a].share_ns != who[b].share_ns ? who[a].share_ns > who[b].share_ns : ios(a) > ios(b);
  });
  std::erase_if(idx, [&](size_t i) { return who[i].share_ns == 0 && ios(i) == 0; });
  if (idx.size() > k) idx.resize(k);
  return idx;
}

}  // namespace

std::string cgroup_label(uint64_t id, const WhoNames& names) {
  if (auto p = names.cgroups.find(id); p != names.cgroups.end()) return p->second;
  return id ? fmt::format("(removed cgroup {})", id) : std::string("(unknown)");
}

void accumulate_who(WhoTotals& t, const std::vector<BusyCounters>& busy, size_t top_k, const WhoNames& names) {
  t.last.resize(busy.size());
  t.series.resize(busy.size());
  t.shown.assign(busy.size(), {});
  const BusyWho zero;
  for (size_t d = 0; d < busy.size(); ++d) {
    const std::vector<BusyWho>& now = busy[d].who;
    const std::vector<size_t> best = top(now, top_k);
    std::vector<bool> in_top(now.size(), false);
    for (size_t i : best) in_top[i] = true;
    std::map<std::string, WhoSeries>& series = t.series[d];
    WhoSeries& other = series[kOtherCgroups];
    for (size_t i = 0; i < now.size(); ++i) {
      const BusyWho& before = i < t.last[d].size() ? t.last[d][i] : zero;
      if (!in_top[i]) {
        add_delta(other, before, now[i]);
        continue;
      }
      const std::string label = cgroup_label(now[i].cgroup, names);
      WhoSeries& s = series[label];
      if (auto p = names.cgroups.find(now[i].cgroup); p != names.cgroups.end()) s.names = parse_cgroup_path(p->second);
      add_delta(s, before, now[i]);
    }
    // Two ids may share a label (a cgroup removed and made again): shown once.
    for (size_t i : best) {
      const std::string label = cgroup_label(now[i].cgroup, names);
      if (std::find(t.shown[d].begin(), t.shown[d].end(), label) == t.shown[d].end()) t.shown[d].push_back(label);
    }
    t.shown[d].emplace_back(kOtherCgroups);
    t.last[d] = now;
  }
}

void who_families(const std::vector<StatDevice>& devices, const std::set<std::string>& gone, const WhoTotals& t,
                  std::vector<MetricFamily>& out) {
  auto busy = counter("ioacct_cgroup_busy_seconds_total",
                      "A cgroup's share of ioacct_device_busy_seconds_total: each busy instant split among the cgroups "
                      "with requests in flight, by their count of them (--per-cgroup; the top K by busy time, the "
                      "rest in cgroup=\"other\"; a device's series add up to its busy seconds since attach)");
  auto ios = counter("ioacct_cgroup_completed_ios_total",
                     "Requests of a cgroup completed, by direction (read, write, other: flushes, discards)");
  auto bytes = counter("ioacct_cgroup_completed_bytes_total", "Bytes of a cgroup's completed requests, by direction");
  auto latency = counter("ioacct_cgroup_request_latency_seconds_total",
                         "A cgroup's requests' latencies summed (accounting span): over the rate of "
                         "ioacct_cgroup_completed_ios_total, its mean latency");
  static constexpr const char* kDir[BusyWho::kDirs] = {"read", "write", "other"};
  for (size_t d = 0; d < devices.size() && d < t.shown.size(); ++d) {
    if (gone.count(devices[d].name)) continue;
    for (const std::string& label : t.shown[d]) {
      const auto f = t.series[d].find(label);
      if (f == t.series[d].end()) continue;
      const WhoSeries& s = f->second;
      Labels l = {{"device", devices[d].name}, {"cgroup", label}};
      if (!s.names.pod_uid.empty()) l.push_back({"pod_uid", s.names.pod_uid});
      if (!s.names.container_id.empty()) l.push_back({"container_id", s.names.container_id});
      add(busy, l, static_cast<double>(s.share_ns) / 1e9);
      add(latency, l, static_cast<double>(s.latency_ns) / 1e9);
      for (int k = 0; k < BusyWho::kDirs; ++k) {
        Labels ld = l;
        ld.push_back({"direction", kDir[k]});
        add(ios, ld, static_cast<double>(s.ios[k]));
        add(bytes, std::move(ld), static_cast<double>(s.bytes[k]));
      }
    }
  }
  for (auto* f : {&busy, &ios, &bytes, &latency}) out.push_back(std::move(*f));
}

}  // namespace ioacct
