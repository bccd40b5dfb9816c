#include "report/fio_logs.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ioacct {
namespace {

// fio's data direction: 0 reads, 1 writes, 2 trims.
int direction(RwMode rw) {
  if (rw_trims_only(rw)) return 2;
  return rw_writes(rw) ? 1 : 0;
}

template <typename F>
std::string log_text(const JobSpec& job, const Series& s, F value) {
  std::string out;
  const double ramp_ms = static_cast<double>(job.ramp.count()) / 1e6;
  for (const SeriesSample& x : s.samples()) {
    const auto v = value(x);
    if (!v) continue;  // an interval without a completion has no latency: fio writes no line
    out += fmt::format("{}, {}, {}, 0, 0\n", std::llround(ramp_ms + x.t_s * 1000.0), std::llround(*v), direction(job.rw));
  }
  return out;
}

}  // namespace

std::vector<FioLogFile> fio_log_files(const FioLogs& logs, unsigned job_number, const JobSpec& job, const RunResult& r) {
  std::vector<FioLogFile> files;
  if (!r.series) return files;
  auto name = [&](const std::string& prefix, const char* kind) { return fmt::format("{}_{}.{}.log", prefix, kind, job_number); };
  if (!logs.bw.empty())
    files.push_back({name(logs.bw, "bw"), log_text(job, *r.series, [](const SeriesSample& x) {
                       return std::optional<double>(x.bytes_per_s / 1024.0);
                     })});
  if (!logs.iops.empty())
    files.push_back({name(logs.iops, "iops"),
                     log_text(job, *r.series, [](const SeriesSample& x) { return std::optional<double>(x.iops); })});
  if (!logs.lat.empty()) {
    // fio's write_lat_log writes clat and slat beside lat; a run whose
    // latency is not split (the psync family) has only lat, as fio's sync
    // engines log a clat but no slat worth the name.
    files.push_back({name(logs.lat, "lat"), log_text(job, *r.series, [](const SeriesSample& x) { return x.mean_ns; })});
    const auto& v = r.series->samples();
    if (std::any_of(v.begin(), v.end(), [](const SeriesSample& x) { return x.clat_mean_ns.has_value(); })) {
      files.push_back(
          {name(logs.lat, "clat"), log_text(job, *r.series, [](const SeriesSample& x) { return x.clat_mean_ns; })});
      files.push_back(
          {name(logs.lat, "slat"), log_text(job, *r.series, [](const SeriesSample& x) { return x.slat_mean_ns; })});
    }
  }
  return files;
}

}  // namespace ioacct
