// One bench document read into the plain figures a merge needs (merge.hpp).
// Read with simdjson: a thousand hosts' files are a few hundred MB of JSON,
// and nlohmann's parser alone took over 1.5 s on them (its lexer runs at
// ~130 MB/s here); simdjson's DOM parser reads them at GB/s. The few
// subtrees the merged document prints as they are (devices, targets) are
// handed on as nlohmann values.
#include <fmt/format.h>
#include <simdjson.h>

#include <string>

#include "common/errors.hpp"
#include "compare/merge.hpp"

namespace ioacct {
namespace {

using simdjson::dom::element;
using simdjson::dom::element_type;

// The member `key` of `e`, or an element of type NULL_VALUE's absence: the
// caller asks for the type it wants and takes a mismatch as "not there".
simdjson::simdjson_result<element> at(const element& e, const char* key) {
  return e.is_object() ? e.get_object().at_key(key) : simdjson::simdjson_result<element>(simdjson::NO_SUCH_FIELD);
}

uint64_t u64(const element& e, const char* key) {
  element v;
  if (at(e, key).get(v)) return 0;
  if (v.type() == element_type::UINT64) return v.get_uint64().value_unsafe();
  if (v.type() == element_type::INT64 && v.get_int64().value_unsafe() >= 0)
    return static_cast<uint64_t>(v.get_int64().value_unsafe());
  return 0;
}

std::optional<double> num(const element& e, const char* key) {
  element v;
  if (at(e, key).get(v) || !v.is_number()) return std::nullopt;
  return v.get_double().value_unsafe();
}

double dbl(const element& e, const char* key) { return num(e, key).value_or(0.0); }

std::optional<int64_t> i64(const element& e, const char* key) {
  element v;
  if (at(e, key).get(v)) return std::nullopt;
  if (v.type() == element_type::INT64) return v.get_int64().value_unsafe();
  if (v.type() == element_type::UINT64 && v.get_uint64().value_unsafe() <= uint64_t{INT64_MAX})
    return static_cast<int64_t>(v.get_uint64().value_unsafe());
  return std::nullopt;
}

std::string str(const element& e, const char* key) {
  element v;
  if (at(e, key).get(v) || !v.is_string()) return {};
  return std::string(v.get_string().value_unsafe());
}

bool is_true(const element& e, const char* key) {
  element v;
  return !at(e, key).get(v) && v.is_bool() && v.get_bool().value_unsafe();
}

// A subtree the merged document prints as it is.
nlohmann::json as_json(const element& e, const char* key, nlohmann::json fallback) {
  element v;
  if (at(e, key).get(v)) return fallback;
  return nlohmann::json::parse(simdjson::to_string(v));
}

HostLatency latency_of(const std::string& source, const element& results) {
  HostLatency l;
  simdjson::dom::array b;
  if (at(results, "latency_histogram_ns").get(b)) return l;
  for (element t : b) {
    simdjson::dom::array a;
    uint64_t lo = 0, hi = 0, n = 0;
    if (t.get(a) || a.size() != 3 || a.at(0).get(lo) || a.at(1).get(hi) || a.at(2).get(n))
      throw UsageError(fmt::format("{}: results.latency_histogram_ns holds something other than [lo, hi, count] "
                                   "triples; give the file as bench wrote it", source));
    l.buckets.push_back({lo, hi, n});
  }
  element s;
  if (!at(results, "latency_ns").get(s)) {
    l.min = u64(s, "min");
    l.max = u64(s, "max");
    l.mean = dbl(s, "mean");
    l.stdev = dbl(s, "stdev");
  }
  return l;
}

void read_identity(HostRun& h, const element& ctx) {
  h.hostname = str(ctx, "host");
  h.boot_id = str(ctx, "boot_id");
  h.kernel = str(ctx, "kernel");
  h.ioacct_version = str(ctx, "ioacct_version");
  simdjson::dom::object tags;
  if (!at(ctx, "tags").get(tags))
    for (auto [k, v] : tags)
      h.tags[std::string(k)] = v.is_string() ? std::string(v.get_string().value_unsafe()) : simdjson::to_string(v);
  const auto tag = h.tags.find("host");
  h.name = tag != h.tags.end() ? tag->second : h.hostname;
  element c;
  if (!at(ctx, "clock").get(c) && c.is_object())
    h.clock = ClockSync{is_true(c, "synchronised"), i64(c, "maxerror_us").value_or(0), i64(c, "esterror_us").value_or(0),
                        static_cast<int>(i64(c, "state").value_or(0))};
  h.start_mono_ns = i64(ctx, "start_monotonic_ns").value_or(0);
  h.targets = as_json(ctx, "targets", nlohmann::json::array());
  // What a window measures: the seed, the ramp before it and the series'
  // interval do not change the workload.
  nlohmann::json options = as_json(ctx, "options", nlohmann::json::object());
  if (options.is_object())
    for (const char* k : {"seed", "ramp_s", "log_interval_s"}) options.erase(k);
  h.options_key = options.dump();
}

void read_series(HostRun& h, const element& results) {
  element s;
  simdjson::dom::array samples;
  if (at(results, "series").get(s) || at(s, "samples").get(samples)) return;
  h.series_interval_s = dbl(s, "interval_s") * std::max(1.0, dbl(s, "keep_every"));
  for (element x : samples) {
    const std::optional<int64_t> end = i64(x, "end_unix_ns");
    if (!end) continue;
    HostSample p;
    p.end_unix_ns = *end;
    p.dur_s = dbl(x, "dur_s");
    p.iops = dbl(x, "iops");
    p.bytes_per_s = num(x, "bytes_per_s");
    if (num(x, "p50_ns")) p.p50_ns = u64(x, "p50_ns");
    if (num(x, "p99_ns")) p.p99_ns = u64(x, "p99_ns");
    h.series.push_back(p);
  }
}

void read_counts(HostRun& h, const element& r) {
  h.window_s = dbl(r, "window_s");
  h.ios = u64(r, "ios");
  h.reads = u64(r, "reads");
  h.writes = u64(r, "writes");
  h.trims = u64(r, "trims");
  h.bytes_read = u64(r, "bytes_read");
  h.bytes_written = u64(r, "bytes_written");
  h.bytes_trimmed = u64(r, "bytes_trimmed");
  h.iops = dbl(r, "iops");
  h.bytes_per_s = num(r, "bytes_per_s");
  h.iodepth = u64(r, "iodepth");
  simdjson::dom::object errors;
  if (!at(r, "errors").get(errors))
    for (auto [k, v] : errors) {
      uint64_t n = 0;
      h.errors_by_kind[std::string(k)] = v.get(n) ? 0 : n;
    }
  element sc;
  if (!at(r, "syscalls").get(sc) && sc.is_object())
    for (const char* k : {"total", "submit", "reap", "submitted_ios", "reaped_ios"}) h.syscalls[k] = u64(sc, k);
  h.short_resubmits = u64(r, "short_resubmits");
  h.eagain_retries = u64(r, "eagain_retries");
  h.first_error = str(r, "first_error");
  element c;
  if (!at(r, "cpu").get(c) && c.is_object())
    h.cpu = HostCpu{dbl(c, "user_s"), dbl(c, "sys_s"), u64(c, "voluntary_ctxsw"), u64(c, "involuntary_ctxsw")};
  h.devices = as_json(r, "devices", nlohmann::json::array());
  if (!h.devices.is_array()) h.devices = nlohmann::json::array();
}

}  // namespace

HostRun host_run_of(const std::string& source, const std::string& text) {
  // One parser per thread, kept: its buffers grow to the largest document
  // once instead of being allocated for every file.
  thread_local simdjson::dom::parser parser;
  element doc;
  if (const auto err = parser.parse(text).get(doc))
    throw UsageError(fmt::format("{}: not valid JSON ({}); give files written by 'ioacct bench --format json'", source,
                                 simdjson::error_message(err)));
  element ctx, r;
  if (at(doc, "context").get(ctx) || str(ctx, "ioacct_version").empty() || !at(doc, "variants").error())
    throw UsageError(fmt::format("{}: not an ioacct bench JSON document; give files written by 'ioacct bench "
                                 "--format json'", source));
  if (at(doc, "results").get(r) || !r.is_object())
    throw UsageError(fmt::format("{}: the run holds no results (interrupted before it started); leave it out", source));
  element options;
  // A run of several jobs says how many in its options (which then hold the run's own only).
  if (!at(ctx, "options").get(options) && dbl(options, "jobs") > 1)
    throw UsageError(fmt::format("{}: a run of {} jobs; merge takes one job per host (run each job on its hosts "
                                 "and merge each job's results apart)", source, u64(options, "jobs")));
  const std::optional<int64_t> start = i64(r, "window_start_unix_ns"), end = i64(r, "window_end_unix_ns");
  if (!start || !end)
    throw UsageError(fmt::format("{}: no results.window_start_unix_ns (an ioacct that predates merge, or a window "
                                 "that never opened); run bench again with this ioacct", source));
  HostRun h;
  h.source = source;
  read_identity(h, ctx);
  h.window_start_ns = *start;
  h.window_end_ns = *end;
  read_counts(h, r);
  h.latency = latency_of(source, r);
  h.interrupted = is_true(doc, "interrupted");
  h.stop_reason = str(doc, "stop_reason");
  read_series(h, r);
  return h;
}

}  // namespace ioacct
