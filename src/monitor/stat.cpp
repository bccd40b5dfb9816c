#include "monitor/stat.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <sstream>

#include "acct/clock.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"

namespace ioacct {
namespace {

std::vector<DiskStats> all_diskstats(std::string_view text) {
  std::vector<DiskStats> out;
  std::istringstream in{std::string(text)};
  for (std::string line; std::getline(in, line);)
    if (auto d = parse_diskstats_line(line)) out.push_back(std::move(*d));
  return out;
}

bool any_io(const DiskStats& d) { return d.reads || d.writes || d.discards || d.flushes; }

double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * static_cast<double>(part) / static_cast<double>(whole) : 0;
}

}  // namespace

std::vector<StatDevice> select_stat_devices(std::string_view diskstats_text, const std::vector<std::string>& wanted,
                                            bool partitions) {
  const std::vector<DiskStats> all = all_diskstats(diskstats_text);
  // resolve_device says which whole disk each entry belongs to.
  std::map<std::string, std::string> disk_of;
  for (const DiskStats& d : all) {
    const DeviceChain c = resolve_device(d.major, d.minor);
    disk_of[d.name] = c.disk.empty() ? d.name : c.disk;
  }
  std::set<std::string> chosen_disks, chosen;
  for (const std::string& w : wanted) {
    std::string name = w;
    if (w.find('/') != std::string::npos) {  // a path: whatever it names, by its device number
      struct stat st {};
      if (::stat(w.c_str(), &st) != 0) throw UsageError(fmt::format("{}: {}", w, errno_text(errno)));
      if (!S_ISBLK(st.st_mode)) throw UsageError(fmt::format("{}: not a block device", w));
      name = resolve_device(major(st.st_rdev), minor(st.st_rdev)).device;
    }
    if (!disk_of.count(name))
      throw UsageError(fmt::format("{}: no such block device in /proc/diskstats (see lsblk)", w));
    chosen.insert(name);
    if (disk_of[name] == name) chosen_disks.insert(name);
  }
  if (wanted.empty())
    for (const DiskStats& d : all)
      if (disk_of[d.name] == d.name && any_io(d)) {
        chosen.insert(d.name);
        chosen_disks.insert(d.name);
      }
  if (partitions)
    for (const DiskStats& d : all)
      if (disk_of[d.name] != d.name && chosen_disks.count(disk_of[d.name])) chosen.insert(d.name);
  std::vector<StatDevice> out;
  for (const DiskStats& d : all)
    if (chosen.count(d.name)) out.push_back({d.name, d.major, d.minor, disk_of[d.name] != d.name});
  return out;
}

StatSample take_stat_sample(const std::vector<StatDevice>& devices, const BusyTracker* tracker, CgroupPaths* paths,
                            BusyBy by) {
  StatSample s;
  bool ok = false;
  const std::string up = read_first_line("/proc/uptime", &ok);
  const auto cs = parse_uptime_cs(up);
  if (!ok || !cs) throw RuntimeError(fmt::format("/proc/uptime: cannot read the uptime from '{}'", up));
  s.uptime_cs = *cs;
  s.wall_ns = wall_ns();
  std::istringstream cpu(read_first_line("/proc/stat"));
  std::string label;
  cpu >> label;
  for (uint64_t v; cpu >> v;) s.cpu_ticks.push_back(v);
  std::vector<std::string> names;
  names.reserve(devices.size());
  for (const StatDevice& d : devices) names.push_back(d.name);
  s.disks = sample_system(names, {}, false, false).disks;
  if (tracker) {
    try {
      s.busy = tracker->read();
      s.cost = tracker->cost();
      if (paths && by != BusyBy::None) {
        s.who_by = by;
        s.who_names = read_who_names(*s.busy, *paths);
      }
    } catch (const std::exception& e) {
      s.busy_error = e.what();
    }
  }
  return s;
}

double bucket_quantile(const std::vector<uint64_t>& le, const std::vector<uint64_t>& counts, double q,
                       uint64_t max_ns) {
  uint64_t n = 0;
  for (uint64_t c : counts) n += c;
  if (n == 0) return 0;
  const auto rank = static_cast<uint64_t>(std::max(1.0, std::ceil(q * static_cast<double>(n))));
  uint64_t seen = 0;
  for (size_t i = 0; i < counts.size() && i < le.size(); ++i) {
    seen += counts[i];
    if (seen < rank) continue;
    const double lo = i == 0 ? 0.0 : static_cast<double>(le[i - 1]) + 1;
    const double hi = le[i] == UINT64_MAX ? lo : static_cast<double>(le[i]);
    const double mid = (lo + hi) / 2;
    return max_ns ? std::min(mid, static_cast<double>(max_ns)) : mid;
  }
  return static_cast<double>(max_ns);
}

std::optional<CpuRow> cpu_row(const std::vector<uint64_t>& a, const std::vector<uint64_t>& b) {
  if (b.size() < 8 || (!a.empty() && a.size() < 8)) return std::nullopt;
  enum { kUser, kNice, kSystem, kIdle, kIowait, kIrq, kSoftirq, kSteal, kGuest, kGuestNice };
  auto at = [](const std::vector<uint64_t>& v, size_t i) { return i < v.size() ? v[i] : 0; };
  // A counter that went back (a CPU going offline takes its ticks along)
  // reads as 0, as in sysstat.
  auto delta = [&](uint64_t before, uint64_t after) { return after > before ? static_cast<double>(after - before) : 0.0; };
  auto sum = [&](const std::vector<uint64_t>& v) {
    uint64_t t = 0;
    for (size_t i = kUser; i <= kSteal; ++i) t += at(v, i);
    return t;
  };
  const double total = delta(sum(a), sum(b));
  if (total <= 0) return std::nullopt;
  auto pct = [&](uint64_t before, uint64_t after) { return 100.0 * delta(before, after) / total; };
  CpuRow c;
  c.user = pct(at(a, kUser) - std::min(at(a, kUser), at(a, kGuest)), at(b, kUser) - std::min(at(b, kUser), at(b, kGuest)));
  c.nice = pct(at(a, kNice) - std::min(at(a, kNice), at(a, kGuestNice)),
               at(b, kNice) - std::min(at(b, kNice), at(b, kGuestNice)));
  c.system = pct(at(a, kSystem) + at(a, kIrq) + at(a, kSoftirq), at(b, kSystem) + at(b, kIrq) + at(b, kSoftirq));
  c.iowait = pct(at(a, kIowait), at(b, kIowait));
  c.steal = pct(at(a, kSteal), at(b, kSteal));
  c.idle = pct(at(a, kIdle), at(b, kIdle));
  return c;
}

StatReport make_stat_report(const std::vector<StatDevice>& devices, const StatSample* prev, const StatSample& cur) {
  StatReport r;
  r.cpu = cpu_row(prev ? prev->cpu_ticks : std::vector<uint64_t>{}, cur.cpu_ticks);
  r.since_boot = prev == nullptr;
  r.who_by = cur.who_by;
  r.busy_error = cur.busy_error;
  if (prev && prev->cost && cur.cost) {
    TrackerCost c;
    c.completions = cur.cost->completions - prev->cost->completions;
    c.user_cpu_ns = cur.cost->user_cpu_ns - prev->cost->user_cpu_ns;
    if (prev->cost->bpf_run_ns && cur.cost->bpf_run_ns) c.bpf_run_ns = *cur.cost->bpf_run_ns - *prev->cost->bpf_run_ns;
    if (c.completions)
      c.cpu_ns_per_io = static_cast<double>(c.user_cpu_ns + c.bpf_run_ns.value_or(0)) / static_cast<double>(c.completions);
    r.tracker = c;
  }
  const uint64_t itv_cs = prev ? cur.uptime_cs - prev->uptime_cs : cur.uptime_cs;
  r.interval_s = static_cast<double>(itv_cs) / 100;
  r.wall_ns = cur.wall_ns;
  for (size_t i = 0; i < devices.size(); ++i) {
    const StatDevice& dev = devices[i];
    auto b = cur.disks.find(dev.name);
    if (b == cur.disks.end()) continue;  // gone (unplugged, loop detached)
    DiskStats zero;
    const DiskStats* a = &zero;
    if (prev) {
      auto pa = prev->disks.find(dev.name);
      if (pa == prev->disks.end()) continue;  // appeared meanwhile: next time
      a = &pa->second;
    }
    StatRow row;
    row.device = dev;
    row.io = iostat_row(*a, b->second, r.interval_s);
    if (prev && prev->busy && cur.busy && i < prev->busy->size() && i < cur.busy->size()) {
      const BusyCounters& x = (*prev->busy)[i];
      const BusyCounters& y = (*cur.busy)[i];
      const uint64_t w = y.stamp_ns - x.stamp_ns;
      row.window_start_ns = x.stamp_ns;
      row.window_end_ns = y.stamp_ns;
      row.window_ns = w;
      row.started = y.started - x.started;
      row.done = y.done - x.done;
      row.merged = y.merged - x.merged;
      row.in_flight = y.in_flight;
      row.missed = y.missed - x.missed;
      row.lost = y.lost - x.lost;
      row.unseen_starts = y.unseen_starts - x.unseen_starts;
      row.late_ns = y.late_ns - x.late_ns;
      row.dropped = y.dropped - x.dropped;
      // Completions no program saw at either end: the tracker bounds their
      // time with diskstats' own latency sum (it is in unsure).
      row.invisible = y.invisible - x.invisible;
      row.busy_ns = y.busy_ns - x.busy_ns;
      row.busy_pct = pct(*row.busy_ns, w);
      row.unsure_ns = y.unsure_ns - x.unsure_ns;
      row.unsure_pct = pct(*row.unsure_ns, w);
      if (y.device_span) {
        row.dev_busy_ns = y.dev_busy_ns - x.dev_busy_ns;
        row.dev_pct = pct(*row.dev_busy_ns, w);
        row.dev_unsure_ns = y.dev_unsure_ns - x.dev_unsure_ns;
        row.dev_unsure_pct = pct(*row.dev_unsure_ns, w);
      }
      std::array<double, BusyCounters::kDepthBuckets> d{};
      for (int k = 0; k < BusyCounters::kDepthBuckets; ++k) d[k] = pct(y.depth_ns[k] - x.depth_ns[k], w);
      row.depth_pct = d;
      if (cur.who_by != BusyBy::None) row.who = who_rows(x, y, cur.who_by, cur.who_names);
      if (!y.latency_count.empty() && x.latency_count.size() == y.latency_count.size()) {
        std::vector<uint64_t> delta(y.latency_count.size());
        LatencySummary l;
        size_t top = 0;
        for (size_t k = 0; k < delta.size(); ++k) {
          delta[k] = y.latency_count[k] - x.latency_count[k];
          l.count += delta[k];
          if (delta[k]) top = k;
        }
        if (l.count) {
          // A new maximum is exact; otherwise the top bucket's upper edge,
          // which cannot pass the maximum since attach.
          l.max_ns = y.latency_max_ns > x.latency_max_ns
                         ? static_cast<double>(y.latency_max_ns)
                         : static_cast<double>(std::min(y.latency_le_ns[top], y.latency_max_ns));
          const auto m = static_cast<uint64_t>(l.max_ns);
          l.p50_ns = bucket_quantile(y.latency_le_ns, delta, 0.50, m);
          l.p99_ns = bucket_quantile(y.latency_le_ns, delta, 0.99, m);
        }
        row.latency = l;
      }
    }
    r.rows.push_back(std::move(row));
  }
  return r;
}

void run_stat_loop(const StatLoop& loop, const std::vector<StatDevice>& devices, const BusyTracker* tracker,
                   const std::function<bool(int ms)>& wait, const std::function<void(const StatReport&)>& emit) {
  std::optional<CgroupPaths> paths;
  if (loop.who_by != BusyBy::None && tracker) paths.emplace();
  CgroupPaths* p = paths ? &*paths : nullptr;
  StatSample prev = take_stat_sample(devices, tracker, p, loop.who_by);
  const uint64_t t0 = now_ns();
  uint64_t made = 0;
  if (!loop.omit_first || loop.interval_ns == 0) {
    emit(make_stat_report(devices, nullptr, prev));
    ++made;
  }
  if (loop.interval_ns == 0) return;
  for (uint64_t k = 1; loop.count == 0 || made < loop.count; ++k) {
    const uint64_t due = t0 + k * loop.interval_ns;
    for (uint64_t now = now_ns(); now < due; now = now_ns()) {
      const auto ms = static_cast<int>(std::min<uint64_t>((due - now + 999'999) / 1'000'000, 200));
      if (wait(ms)) return;
    }
    StatSample cur = take_stat_sample(devices, tracker, p, loop.who_by);
    emit(make_stat_report(devices, &prev, cur));
    ++made;
    prev = std::move(cur);
  }
}

std::vector<BusyDevice> busy_devices(const std::vector<StatDevice>& devices) {
  std::vector<BusyDevice> out;
  out.reserve(devices.size());
  for (const StatDevice& d : devices) out.push_back({d.name, d.major, d.minor});
  return out;
}

}  // namespace ioacct
