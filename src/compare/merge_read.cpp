// One bench document read into the plain figures a merge needs (merge.hpp).
#include <fmt/format.h>

#include "common/errors.hpp"
#include "compare/merge.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

const json& field(const json& j, const char* key) {
  static const json kNull;
  if (!j.is_object()) return kNull;
  const auto it = j.find(key);
  return it == j.end() ? kNull : *it;
}

uint64_t u64(const json& j, const char* key) {
  const json& v = field(j, key);
  return v.is_number_unsigned() ? v.get<uint64_t>() : v.is_number_integer() && v.get<int64_t>() >= 0 ? v.get<uint64_t>() : 0;
}

double dbl(const json& j, const char* key) {
  const json& v = field(j, key);
  return v.is_number() ? v.get<double>() : 0.0;
}

std::string str(const json& j, const char* key) {
  const json& v = field(j, key);
  return v.is_string() ? v.get<std::string>() : std::string();
}

HostLatency latency_of(const std::string& source, const json& results) {
  HostLatency l;
  const json& b = field(results, "latency_histogram_ns");
  if (!b.is_array() || b.empty()) return l;
  l.buckets.reserve(b.size());
  for (const json& t : b) {
    if (!t.is_array() || t.size() != 3 || !t[0].is_number_unsigned() || !t[1].is_number_unsigned() ||
        !t[2].is_number_unsigned())
      throw UsageError(fmt::format("{}: results.latency_histogram_ns holds something other than [lo, hi, count] "
                                   "triples; give the file as bench wrote it", source));
    l.buckets.push_back({t[0].get<uint64_t>(), t[1].get<uint64_t>(), t[2].get<uint64_t>()});
  }
  const json& s = field(results, "latency_ns");
  l.min = u64(s, "min");
  l.max = u64(s, "max");
  l.mean = dbl(s, "mean");
  l.stdev = dbl(s, "stdev");
  return l;
}

void read_identity(HostRun& h, const json& ctx) {
  h.hostname = str(ctx, "host");
  h.boot_id = str(ctx, "boot_id");
  h.kernel = str(ctx, "kernel");
  h.ioacct_version = str(ctx, "ioacct_version");
  if (field(ctx, "tags").is_object())
    for (const auto& [k, v] : ctx["tags"].items()) h.tags[k] = v.is_string() ? v.get<std::string>() : v.dump();
  const auto tag = h.tags.find("host");
  h.name = tag != h.tags.end() ? tag->second : h.hostname;
  if (const json& c = field(ctx, "clock"); c.is_object())
    h.clock = ClockSync{field(c, "synchronised") == true, static_cast<int64_t>(dbl(c, "maxerror_us")),
                        static_cast<int64_t>(dbl(c, "esterror_us")), static_cast<int>(dbl(c, "state"))};
  const json& mono = field(ctx, "start_monotonic_ns");
  h.start_mono_ns = mono.is_number() ? mono.get<int64_t>() : 0;
  h.targets = field(ctx, "targets").is_array() ? ctx["targets"] : json::array();
  json options = field(ctx, "options");
  if (options.is_object()) options.erase("seed");
  h.options_key = options.dump();
}

void read_series(HostRun& h, const json& results) {
  const json& s = field(results, "series");
  if (!s.is_object() || !field(s, "samples").is_array()) return;
  h.series_interval_s = dbl(s, "interval_s") * std::max<double>(1, dbl(s, "keep_every"));
  for (const json& x : s["samples"]) {
    const json& end = field(x, "end_unix_ns");
    if (!end.is_number_integer()) continue;
    HostSample p;
    p.end_unix_ns = end.get<int64_t>();
    p.dur_s = dbl(x, "dur_s");
    p.iops = dbl(x, "iops");
    if (field(x, "bytes_per_s").is_number()) p.bytes_per_s = x["bytes_per_s"].get<double>();
    if (field(x, "p50_ns").is_number()) p.p50_ns = u64(x, "p50_ns");
    if (field(x, "p99_ns").is_number()) p.p99_ns = u64(x, "p99_ns");
    h.series.push_back(p);
  }
}

void read_counts(HostRun& h, const json& r) {
  h.window_s = dbl(r, "window_s");
  h.ios = u64(r, "ios");
  h.reads = u64(r, "reads");
  h.writes = u64(r, "writes");
  h.trims = u64(r, "trims");
  h.bytes_read = u64(r, "bytes_read");
  h.bytes_written = u64(r, "bytes_written");
  h.bytes_trimmed = u64(r, "bytes_trimmed");
  h.iops = dbl(r, "iops");
  if (field(r, "bytes_per_s").is_number()) h.bytes_per_s = r["bytes_per_s"].get<double>();
  h.iodepth = u64(r, "iodepth");
  if (field(r, "errors").is_object())
    for (const auto& [k, v] : r["errors"].items()) h.errors_by_kind[k] = v.is_number_unsigned() ? v.get<uint64_t>() : 0;
  if (field(r, "syscalls").is_object())
    for (const char* k : {"total", "submit", "reap", "submitted_ios", "reaped_ios"}) h.syscalls[k] = u64(r["syscalls"], k);
  h.short_resubmits = u64(r, "short_resubmits");
  h.eagain_retries = u64(r, "eagain_retries");
  h.first_error = str(r, "first_error");
  if (const json& c = field(r, "cpu"); c.is_object())
    h.cpu = HostCpu{dbl(c, "user_s"), dbl(c, "sys_s"), u64(c, "voluntary_ctxsw"), u64(c, "involuntary_ctxsw")};
  h.devices = field(r, "devices").is_array() ? r["devices"] : json::array();
}

}  // namespace

HostRun host_run_of(const std::string& source, const json& doc) {
  const json& ctx = field(doc, "context");
  const json& r = field(doc, "results");
  if (!ctx.is_object() || !field(ctx, "ioacct_version").is_string() || field(doc, "variants").is_array())
    throw UsageError(fmt::format("{}: not an ioacct bench JSON document; give files written by 'ioacct bench "
                                 "--format json'", source));
  if (!r.is_object())
    throw UsageError(fmt::format("{}: the run holds no results (interrupted before it started); leave it out", source));
  if (field(doc, "jobs").is_array() && doc["jobs"].size() > 1)
    throw UsageError(fmt::format("{}: a run of {} jobs; merge takes one job per host (run each job on its hosts "
                                 "and merge each job's results apart)", source, doc["jobs"].size()));
  if (!field(r, "window_start_unix_ns").is_number_integer() || !field(r, "window_end_unix_ns").is_number_integer())
    throw UsageError(fmt::format("{}: no results.window_start_unix_ns (an ioacct that predates merge, or a window "
                                 "that never opened); run bench again with this ioacct", source));
  HostRun h;
  h.source = source;
  read_identity(h, ctx);
  h.window_start_ns = r["window_start_unix_ns"].get<int64_t>();
  h.window_end_ns = r["window_end_unix_ns"].get<int64_t>();
  read_counts(h, r);
  h.latency = latency_of(source, r);
  h.interrupted = field(doc, "interrupted") == true;
  h.stop_reason = str(doc, "stop_reason");
  read_series(h, r);
  return h;
}

}  // namespace ioacct
