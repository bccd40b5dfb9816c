#include "compare/merge.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>
#include <utility>

#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {
namespace {

// The windows side by side: union, overlap, skews.
void merge_windows(MergedRun& m) {
  const auto& h = m.hosts;
  m.union_start_ns = h.front().window_start_ns;
  m.union_end_ns = h.front().window_end_ns;
  int64_t latest_start = m.union_start_ns, earliest_end = m.union_end_ns;
  for (const HostRun& r : h) {
    m.union_start_ns = std::min(m.union_start_ns, r.window_start_ns);
    m.union_end_ns = std::max(m.union_end_ns, r.window_end_ns);
    latest_start = std::max(latest_start, r.window_start_ns);
    earliest_end = std::min(earliest_end, r.window_end_ns);
  }
  m.overlap_start_ns = latest_start;
  m.overlap_end_ns = earliest_end;
  m.overlapped = earliest_end > latest_start;
  m.start_skew_ns = latest_start - m.union_start_ns;
  m.end_skew_ns = m.union_end_ns - earliest_end;
}

// One clock per boot: the results of one boot (a random id the kernel draws
// at boot: one machine) share it, and two boots' clocks are within the sum
// of their maxerrors when both are synchronised. Without a boot id, the host
// name stands for it.
void bound_clocks(MergedRun& m) {
  std::map<std::string, const HostRun*> boots;
  for (const HostRun& r : m.hosts) boots.emplace(r.boot_id.empty() ? "host " + r.hostname : r.boot_id, &r);
  m.boots = static_cast<unsigned>(boots.size());
  if (boots.size() == 1) {
    m.clock_error_bound_us = 0;
    return;
  }
  std::vector<int64_t> errors;
  std::vector<std::string> unsynced;
  for (const auto& [key, r] : boots) {
    if (!r->clock || !r->clock->synchronised) unsynced.push_back(r->name);
    else errors.push_back(r->clock->maxerror_us);
  }
  if (!unsynced.empty()) {
    m.warnings.push_back(fmt::format(
        "merge: the clock of {} is not synchronised (adjtimex), so how far apart the hosts' windows really were is "
        "not bounded; keep every host's clock synchronised (chrony, ntpd or PTP) before a run with --start-at",
        unsynced.size() <= 3 ? fmt::format("{}", fmt::join(unsynced, ", ")) : plural(unsynced.size(), "host")));
    return;
  }
  std::sort(errors.rbegin(), errors.rend());
  m.clock_error_bound_us = errors[0] + (errors.size() > 1 ? errors[1] : 0);
}

void add_counts(MergedRun& m, const HostRun& r) {
  m.ios += r.ios;
  m.reads += r.reads;
  m.writes += r.writes;
  m.trims += r.trims;
  m.bytes_read += r.bytes_read;
  m.bytes_written += r.bytes_written;
  m.bytes_trimmed += r.bytes_trimmed;
  m.iops += r.iops;
  if (r.bytes_per_s) m.bytes_per_s = m.bytes_per_s.value_or(0) + *r.bytes_per_s;
  m.iodepth += r.iodepth;
  for (const auto& [k, n] : r.errors_by_kind) m.errors_by_kind[k] += n;
  for (const auto& [k, n] : r.syscalls) m.syscalls[k] += n;
  m.short_resubmits += r.short_resubmits;
  m.eagain_retries += r.eagain_retries;
  if (m.first_error.empty() && !r.first_error.empty()) m.first_error = r.name + ": " + r.first_error;
  m.interrupted |= r.interrupted;
  if (r.cpu) {
    HostCpu& c = m.cpu.emplace(m.cpu.value_or(HostCpu{}));
    c.user_s += r.cpu->user_s;
    c.sys_s += r.cpu->sys_s;
    c.voluntary_ctxsw += r.cpu->voluntary_ctxsw;
    c.involuntary_ctxsw += r.cpu->involuntary_ctxsw;
  }
}

// The hosts' series on one clock: slot k ends at the union's opening plus
// k intervals, and each host's sample goes to the slots whose midpoints it
// spans (one, unless its interval grew: a collector that cannot cut on time
// lengthens the interval, docs/design.md, and a sample of two intervals
// holds that host's rate in both). Hosts whose windows opened together put
// theirs in the same slots.
void merge_series(MergedRun& m) {
  double interval = 0;
  for (const HostRun& r : m.hosts)
    if (r.series_interval_s > 0 && !r.series.empty()) {
      if (interval == 0) interval = r.series_interval_s;
      else if (std::abs(r.series_interval_s - interval) > 1e-9) {
        m.warnings.push_back(fmt::format("merge: {} logged its time series every {} s, others every {} s; its series is "
                                         "left out of the total: give every host the same --log-interval",
                                         r.name, r.series_interval_s, interval));
      }
    }
  m.series_interval_s = interval;
  if (interval == 0) return;
  const auto step = static_cast<int64_t>(std::llround(interval * 1e9));
  std::map<int64_t, MergedSample> slots;
  for (const HostRun& r : m.hosts) {
    if (std::abs(r.series_interval_s - interval) > 1e-9) continue;
    for (const HostSample& s : r.series) {
      const double end = static_cast<double>(s.end_unix_ns - m.union_start_ns) / static_cast<double>(step);
      const double start = end - s.dur_s * 1e9 / static_cast<double>(step);
      // Slot k's midpoint is k - 1/2 intervals in; at least the slot nearest the end.
      const auto last = static_cast<int64_t>(std::llround(end));
      int64_t first = static_cast<int64_t>(std::ceil(start + 0.5));
      if (first > last) first = last;
      for (int64_t k = first; k <= last; ++k) {
        MergedSample& out = slots[k];
        out.end_unix_ns = m.union_start_ns + k * step;
        out.iops += s.iops;
        if (s.bytes_per_s) out.bytes_per_s = out.bytes_per_s.value_or(0) + *s.bytes_per_s;
        ++out.hosts;
      }
    }
  }
  for (auto& [k, s] : slots) m.series.push_back(s);
}

void check_overlap(MergedRun& m) {
  if (m.hosts.size() < 2) return;
  const double union_s = static_cast<double>(m.union_end_ns - m.union_start_ns) / 1e9;
  if (!m.overlapped) {
    m.warnings.push_back(fmt::format(
        "merge: the hosts' windows do not overlap (they opened {} apart): their IOPS never loaded the storage at "
        "once, so the total is not a load it saw; run every host with the same --start-at",
        format_duration_ns(static_cast<double>(m.start_skew_ns))));
  } else if (m.overlap_s() < 0.9 * union_s) {
    m.warnings.push_back(fmt::format(
        "merge: the hosts' windows share only {} of {} (they opened {} apart): the total mixes times when only some "
        "hosts ran; run every host with the same --start-at and --runtime",
        format_duration_ns(m.overlap_s() * 1e9), format_duration_ns(union_s * 1e9),
        format_duration_ns(static_cast<double>(m.start_skew_ns))));
  }
}

}  // namespace

MergedRun merge_hosts(std::vector<HostRun> hosts) {
  if (hosts.empty()) throw UsageError("merge: no results to merge; give bench JSON files, directories or globs");
  std::set<std::tuple<std::string, std::string, int64_t>> seen;
  for (const HostRun& r : hosts)
    if (!seen.emplace(r.hostname, r.boot_id, r.start_mono_ns).second)
      throw UsageError(fmt::format("{}: the same run as another file given (host {}, boot {}, same start); give each "
                                   "result once", r.source, r.hostname, r.boot_id));
  MergedRun m;
  m.hosts = std::move(hosts);
  merge_windows(m);
  bound_clocks(m);
  std::set<std::string> workloads;
  std::map<std::string, unsigned> versions;
  for (const HostRun& r : m.hosts) {
    add_counts(m, r);
    workloads.insert(r.options_key);
    ++versions[r.ioacct_version];
    if (r.latency.buckets.empty()) continue;
    Histogram h;
    if (!Histogram::restore(r.latency.buckets, r.latency.min, r.latency.max, r.latency.mean, r.latency.stdev, h))
      throw UsageError(fmt::format("{}: its latency histogram is not ioacct's bucket layout (or disagrees with its "
                                   "min and max); give the file as bench wrote it", r.source));
    m.latency.merge(h);
    m.has_latency = true;
  }
  if (workloads.size() > 1)
    m.warnings.push_back(fmt::format("merge: the hosts ran {} different workloads (context.options); the total "
                                     "adds them as they are: merge runs of one workload for a like-for-like figure",
                                     workloads.size()));
  // fio's client/server failed silently on a version mismatch (fio#620):
  // say it, since a figure may change its meaning between versions.
  if (versions.size() > 1) {
    std::string list;
    for (const auto& [v, n] : versions) list += fmt::format("{}{} on {}", list.empty() ? "" : ", ", v, plural(n, "host"));
    m.warnings.push_back(fmt::format("merge: the hosts ran different ioacct versions ({}); a figure may mean "
                                     "something else in another version: run one version on every host", list));
  }
  check_overlap(m);
  merge_series(m);
  return m;
}

}  // namespace ioacct
