// bench --format fio-json: a run in the layout of fio 3.x's
// --output-format=json, for the tools that read fio's (fio-plot, pbench,
// CI dashboards). Same keys, same types, same units as fio 3.33's; a figure
// ioacct does not measure keeps fio's "none" form (0, and N or *_samples 0),
// and ioacct's own document goes whole under one extra key, "ioacct".
// docs/json-schema.md, "fio-json", says where each figure comes from.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <array>
#include <cmath>
#include <ctime>

#include "report/report.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

// fio's default percentile list, keyed as fio prints them ("%f").
constexpr std::array<double, 17> kPercentiles = {1,  5,  10, 20, 30, 40,   50,   60,    70,
                                                 80, 90, 95, 99, 99.5, 99.9, 99.95, 99.99};

// {min, max, mean, stddev, N}, and the percentiles where fio gives them (its
// clat, by default); all zero without a figure, as fio writes an empty one.
json stat_ns(const Histogram* h, bool percentiles) {
  if (!h || !h->count()) return {{"min", 0}, {"max", 0}, {"mean", 0.0}, {"stddev", 0.0}, {"N", 0}};
  json j = {{"min", h->min()}, {"max", h->max()}, {"mean", h->mean()}, {"stddev", h->stdev()}, {"N", h->count()}};
  if (percentiles) {
    json p = json::object();
    for (double q : kPercentiles) p[fmt::format("{:f}", q)] = h->quantile(q / 100.0);
    j["percentile"] = p;
  }
  return j;
}

// fio's latency_ns/us/ms bins: "2" holds the I/Os at or below 2 (ns, us or
// ms) and above the bound before it; latency_ms ends with ">=2000".
constexpr std::array<uint64_t, 10> kBinBounds = {2, 4, 10, 20, 50, 100, 250, 500, 750, 1000};

// The bin of a latency: 0-9 ns, 10-19 us, 20-29 ms, 30 "2000" ms, 31 above.
size_t fio_bin(uint64_t ns) {
  uint64_t unit = 1;
  for (size_t scale = 0; scale < 3; ++scale, unit *= 1000)
    for (size_t i = 0; i < kBinBounds.size(); ++i)
      if (ns <= kBinBounds[i] * unit) return scale * 10 + i;
  return ns <= 2000 * 1'000'000ull ? 30 : 31;
}

// The share of I/Os (percent) in each bin, from the lat histogram: a
// histogram bucket goes where its middle falls.
void latency_bins(json& job, const Histogram& h) {
  std::array<double, 32> share{};
  const double n = static_cast<double>(h.count());
  if (n > 0)
    for (const auto& b : h.buckets())
      share[fio_bin(b.lo + (b.hi - b.lo) / 2)] += 100.0 * static_cast<double>(b.count) / n;
  json ns = json::object(), us = json::object(), ms = json::object();
  for (size_t i = 0; i < kBinBounds.size(); ++i) {
    ns[std::to_string(kBinBounds[i])] = share[i];
    us[std::to_string(kBinBounds[i])] = share[10 + i];
    ms[std::to_string(kBinBounds[i])] = share[20 + i];
  }
  ms["2000"] = share[30];
  ms[">=2000"] = share[31];
  job["latency_ns"] = ns;
  job["latency_us"] = us;
  job["latency_ms"] = ms;
}

// min/max/mean/dev of a per-interval figure over the time series' samples.
struct SampleStats {
  double min = 0, max = 0, mean = 0, dev = 0;
  uint64_t n = 0;
};
template <typename F>
SampleStats sample_stats(const Series* s, F value) {
  SampleStats st;
  if (!s || s->samples().empty()) return st;
  double sum = 0, sum2 = 0;
  st.min = value(s->samples().front());
  for (const auto& x : s->samples()) {
    const double v = value(x);
    st.min = std::min(st.min, v);
    st.max = std::max(st.max, v);
    sum += v;
    sum2 += v * v;
    ++st.n;
  }
  st.mean = sum / static_cast<double>(st.n);
  st.dev = st.n > 1 ? std::sqrt(std::max(0.0, (sum2 - sum * st.mean) / static_cast<double>(st.n - 1))) : 0.0;
  return st;
}

// One direction: ios, bytes and latency. `series` is the run's time series
// when it is this direction's alone (one job doing only this), else null:
// fio's bw_*/iops_* samples are then 0, as fio writes them without samples.
json direction(uint64_t ios, uint64_t bytes, uint64_t window_ns, const Histogram* lat, const Histogram* slat,
               const Histogram* clat, const Series* series) {
  const double s = static_cast<double>(window_ns) / 1e9;
  const double bw_bytes = ios && s > 0 ? static_cast<double>(bytes) / s : 0.0;
  const SampleStats bw = sample_stats(series, [](const SeriesSample& x) { return x.bytes_per_s / 1024.0; });
  const SampleStats iops = sample_stats(series, [](const SeriesSample& x) { return x.iops; });
  auto whole = [](double v) { return static_cast<uint64_t>(std::llround(v)); };
  return {{"io_bytes", bytes},
          {"io_kbytes", bytes / 1024},
          {"bw_bytes", whole(bw_bytes)},
          {"bw", whole(bw_bytes / 1024.0)},
          {"iops", ios && s > 0 ? static_cast<double>(ios) / s : 0.0},
          {"runtime", ios ? whole(s * 1000.0) : 0},
          {"total_ios", ios},
          {"short_ios", 0},
          {"drop_ios", 0},
          {"slat_ns", stat_ns(ios ? slat : nullptr, false)},
          {"clat_ns", stat_ns(ios ? clat : nullptr, true)},
          {"lat_ns", stat_ns(ios ? lat : nullptr, false)},
          {"bw_min", whole(bw.min)},
          {"bw_max", whole(bw.max)},
          {"bw_agg", bw.n ? 100.0 : 0.0},
          {"bw_mean", bw.mean},
          {"bw_dev", bw.dev},
          {"bw_samples", bw.n},
          {"iops_min", whole(iops.min)},
          {"iops_max", whole(iops.max)},
          {"iops_mean", iops.mean},
          {"iops_stddev", iops.dev},
          {"iops_samples", iops.n}};
}

// fio's depth buckets ("1", "2", "4", ..., ">=64"): the share of the time
// with I/O in flight spent at each depth, from the exact in-flight log.
json iodepth_level(const InflightResult* f) {
  static constexpr std::array<const char*, 7> kKeys = {"1", "2", "4", "8", "16", "32", ">=64"};
  std::array<double, 7> share{};
  if (f && f->busy_ns) {
    for (int b = 1; b < InflightResult::kBuckets; ++b)  // bucket 0 is nothing in flight
      share[std::min<size_t>(static_cast<size_t>(b - 1), 6)] +=
          100.0 * static_cast<double>(f->by_depth_ns[b]) / static_cast<double>(f->busy_ns);
  }
  json j = json::object();
  for (size_t i = 0; i < kKeys.size(); ++i) j[kKeys[i]] = share[i];
  return j;
}

json zero_levels(std::initializer_list<const char*> keys) {
  json j = json::object();
  for (const char* k : keys) j[k] = 0.0;
  return j;
}

// The options that made the job, in fio's words where fio has them.
json job_options(const JobSpec& job) {
  json o = {{"name", job.name.empty() ? "bench" : job.name},
            {"rw", rw_name(job.rw)},
            {"iodepth", std::to_string(job.depth_per_thread())},
            {"ioengine", job.engine == EngineKind::Uring ? "io_uring" : engine_name(job.engine, job.sync.call)},
            {"direct", job.direct ? "1" : "0"},
            {"numjobs", std::to_string(job.threads)}};
  if (job.bs_dir[0])
    o["bs"] = fmt::format("{},{},{}", job.bs_dir[0], job.bs_dir[1], job.bs_dir[2]);
  else if (!job.bs_split_dir[0].empty())
    o["bssplit"] = fmt::format("{},{},{}", bssplit_text(job.bs_split_dir[0]), bssplit_text(job.bs_split_dir[1]),
                               bssplit_text(job.bs_split_dir[2]));
  else if (job.bs_split.empty()) o["bs"] = std::to_string(job.bs);
  else o["bssplit"] = bssplit_text(job.bs_split);  // as fio's job options show what was given
  if (!job.targets.empty()) {
    std::string files;
    for (const auto& t : job.targets) files += (files.empty() ? "" : ":") + t;
    o["filename"] = files;
  }
  if (job.runtime) o["runtime"] = fmt::format("{}ms", std::chrono::duration_cast<std::chrono::milliseconds>(*job.runtime).count());
  return o;
}

// One direction's lat, slat and clat as fio gives them: a mixed job's own
// for that direction (DirLatency), else the job's, which are that one
// direction's. psync does each I/O in one syscall: fio's clat is its lat
// there, and it has no slat. Where some I/Os were not timed apart (an
// enter that also waited), neither is given: fio's split every one.
struct FioHists {
  const Histogram *lat, *slat, *clat;
};
FioHists fio_hists(const JobSpec& spec, const ThreadResult& t, const DirLatency& dir) {
  const bool own = dir.lat != nullptr;
  const Histogram* lat = own ? dir.lat.get() : t.latency.get();
  if (spec.engine == EngineKind::Psync) return {lat, nullptr, lat};
  if (t.slat_unsplit) return {lat, nullptr, nullptr};
  return {lat, own ? dir.slat.get() : t.slat.get(), own ? dir.clat.get() : t.clat.get()};
}

json fio_job(const JobSpec& spec, const JobResult& jr, const RunResult& r, unsigned group, bool alone) {
  const ThreadResult& t = jr.total;
  // A job that only reads or only writes owns the run's series; the series
  // of a mixed job counts both directions, and fio's per-direction samples
  // are then left at 0.
  const Series* series = alone && r.series && !rw_mixed(spec.rw) ? &*r.series : nullptr;
  const FioHists rd = fio_hists(spec, t, t.read_lat), wr = fio_hists(spec, t, t.write_lat);
  json j;
  j["jobname"] = spec.name.empty() ? "bench" : spec.name;
  j["groupid"] = group;
  // fio's error is the first error's errno; ioacct's end-of-file (a short
  // read past the end) has none, and fio's own word for it is EIO.
  j["error"] = t.errors.empty() ? 0 : (t.errors.begin()->first > 0 ? t.errors.begin()->first : EIO);
  j["eta"] = 0;
  j["elapsed"] = static_cast<uint64_t>(std::llround(static_cast<double>(jr.window_ns + spec.ramp.count()) / 1e9));
  j["job options"] = job_options(spec);
  j["read"] = direction(t.reads, t.bytes_read, jr.window_ns, rd.lat, rd.slat, rd.clat, t.reads ? series : nullptr);
  j["write"] = direction(t.writes, t.bytes_written, jr.window_ns, wr.lat, wr.slat, wr.clat, t.writes ? series : nullptr);
  j["trim"] = direction(t.trims, t.bytes_trimmed, jr.window_ns, t.trim_latency.get(), nullptr, t.trim_latency.get(), nullptr);
  j["sync"] = {{"total_ios", t.syncs}, {"lat_ns", stat_ns(t.sync_latency.get(), false)}};
  j["job_runtime"] = static_cast<uint64_t>(std::llround(static_cast<double>(jr.window_ns) / 1e6));
  // fio's CPU is the job's user and system time over its runtime. ioacct
  // reads user and system apart for the process; a job of several shares
  // its schedstat total in the process's proportion.
  double usr = 0, sys = 0;
  if (r.cpu) {
    usr = r.cpu->user_s;
    sys = r.cpu->sys_s;
    if (!alone && jr.cpu && usr + sys > 0) {
      const double k = jr.cpu->total_s / (usr + sys);
      usr *= k;
      sys *= k;
    }
  }
  const double run_s = static_cast<double>(jr.window_ns) / 1e9;
  j["usr_cpu"] = run_s > 0 ? 100.0 * usr / run_s : 0.0;
  j["sys_cpu"] = run_s > 0 ? 100.0 * sys / run_s : 0.0;
  j["ctx"] = alone && r.cpu ? r.cpu->vol_ctxsw + r.cpu->invol_ctxsw : 0;
  j["majf"] = 0;
  j["minf"] = 0;
  j["iodepth_level"] = iodepth_level(alone && r.inflight ? &*r.inflight : nullptr);
  j["iodepth_submit"] = zero_levels({"0", "4", "8", "16", "32", "64", ">=64"});
  j["iodepth_complete"] = zero_levels({"0", "4", "8", "16", "32", "64", ">=64"});
  latency_bins(j, *t.latency);
  // fio's latency_target search: the depth it reached, the target in ns,
  // the window in µs, as fio writes them.
  j["latency_depth"] = t.latency_depth ? t.latency_depth : spec.depth_per_thread();
  j["latency_target"] = spec.latency_target.count();
  j["latency_percentile"] = spec.latency_percentile;
  j["latency_window"] = spec.latency_target.count() ? spec.latency_window.count() / 1000 : 0;
  return j;
}

// fio's disk_util: the diskstats of each device over the window.
json disk_util(const RunResult& r) {
  json out = json::array();
  if (!r.accounting) return out;
  const double ms = r.accounting->interval_s * 1000.0;
  for (const auto& d : r.accounting->devices) {
    const IostatRow& x = d.row;
    out.push_back({{"name", x.device},
                   {"read_ios", x.reads},
                   {"write_ios", x.writes},
                   {"read_merges", static_cast<uint64_t>(std::llround(x.rrqm_s * r.accounting->interval_s))},
                   {"write_merges", static_cast<uint64_t>(std::llround(x.wrqm_s * r.accounting->interval_s))},
                   {"read_ticks", static_cast<uint64_t>(std::llround(x.r_await * static_cast<double>(x.reads)))},
                   {"write_ticks", static_cast<uint64_t>(std::llround(x.w_await * static_cast<double>(x.writes)))},
                   {"in_queue", static_cast<uint64_t>(std::llround(x.aqu_sz * ms))},
                   {"util", x.util}});
  }
  return out;
}

}  // namespace

json to_fio_json(const std::vector<JobSpec>& jobs, const RunResult& r, const RunContext& ctx,
                 const std::vector<std::string>& argv) {
  json out;
  out["fio version"] = fmt::format("ioacct-{} (fio-3.33 JSON layout)", IOACCT_VERSION);
  const int64_t wall_ms = r.start_wall_ns / 1'000'000;
  out["timestamp"] = wall_ms / 1000;
  out["timestamp_ms"] = wall_ms;
  const std::time_t t = static_cast<std::time_t>(wall_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  std::array<char, 64> buf{};
  out["time"] = std::strftime(buf.data(), buf.size(), "%a %b %e %H:%M:%S %Y", &tm) ? std::string(buf.data()) : "";
  json fio_jobs = json::array();
  unsigned group = 0;
  for (size_t i = 0; i < jobs.size() && i < r.jobs.size(); ++i) {
    if (i > 0 && jobs[i].stonewall) ++group;
    fio_jobs.push_back(fio_job(jobs[i], r.jobs[i], r, group, jobs.size() == 1));
  }
  // fio lists a [global] section's options here; ioacct keeps each job's
  // options whole, under its "job options".
  out["global options"] = json::object();
  out["jobs"] = fio_jobs;
  out["disk_util"] = disk_util(r);
  out["ioacct"] = to_json(jobs, &r, ctx, argv);
  return out;
}

}  // namespace ioacct
