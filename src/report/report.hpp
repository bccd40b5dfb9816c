#pragma once
// Reporters: sinks that only read a RunResult and the RunContext gathered
// below them (acct/run_context.hpp). Console for people, JSON for scripts
// (schema in docs/json-schema.md).
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "acct/run_context.hpp"
#include "report/format.hpp"
#include "runner/result.hpp"
#include "workload/job.hpp"

namespace ioacct {

// 2: jobs[] (several jobs), per-job results and CPU, slat/clat, stdev, trims
// and syncs; every field of 1 is kept, with the same meaning for one job.
// 2: ioacct's own in-flight time is own_inflight_s/own_inflight_pct (results.inflight,
// series samples); the old busy_s/busy_pct there remain for this version only.
// context.targets[].device_identity.
inline constexpr int kSchemaVersion = 2;

// One job: the run's figures. Several (`jobs[i]` is r.jobs[i]'s): each
// job's own, then the whole run's.
std::string format_console(const JobSpec& job, const RunResult& r);
std::string format_console(const std::vector<JobSpec>& jobs, const RunResult& r);
// `ctx` and `argv` are printed in the context block. `r` may be null:
// interrupted before the run started. With several jobs, "jobs" holds each
// one's options and results; "results" and "threads" are the whole run's.
nlohmann::json to_json(const JobSpec& job, const RunResult* r, const RunContext& ctx, const std::vector<std::string>& argv);
nlohmann::json to_json(const std::vector<JobSpec>& jobs, const RunResult* r, const RunContext& ctx,
                       const std::vector<std::string>& argv);
// A job's options as bench's JSON states them (context.options, and each
// compare variant's "options").
nlohmann::json job_options_json(const JobSpec& job);
// bench's --format sinks: console and json, each with its renderer of a
// finished run (report/sinks.cpp).
struct BenchSink {
  Format format;
  std::string (*render)(const std::vector<JobSpec>& jobs, const RunResult& r, const RunContext& ctx,
                        const std::vector<std::string>& argv);
};
std::span<const BenchSink> bench_sinks();
// The text of `f`'s sink; throws std::logic_error for a Format bench has no sink for.
std::string render_bench(Format f, const std::vector<JobSpec>& jobs, const RunResult& r, const RunContext& ctx,
                         const std::vector<std::string>& argv);
// The context block without a run: version, schema, command line, host,
// kernel, CPUs; start_time and start_monotonic_ns null.
nlohmann::json run_context_json(const RunContext& ctx, const std::vector<std::string>& argv);
// A target's device model and firmware for a JSON context: {disk, model,
// firmware}, null without a block device.
nlohmann::json device_identity_json(const TargetInfo& t);
// bench --format fio-json (report/fio_json.cpp): the run in fio 3.x's JSON
// layout, ioacct's own document under "ioacct"; a job that mixes reads and
// writes has each direction's figures under its own key, as fio's.
nlohmann::json to_fio_json(const std::vector<JobSpec>& jobs, const RunResult& r, const RunContext& ctx,
                           const std::vector<std::string>& argv);
// bench --anatomy (report/anatomy_report.cpp): its console block, and the
// results' "anatomy" object.
std::string format_anatomy(const AnatomyResult& a);
nlohmann::json anatomy_json(const AnatomyResult& a);
// A histogram's summary (count, min, mean, percentiles, max), null if empty.
nlohmann::json latency_json(const Histogram& h);
// The start-up line (stderr): effective configuration and obtained ring flags.
std::string format_start_line(const JobSpec& job, const RunResult& context);
std::string format_start_line(const std::vector<JobSpec>& jobs, const RunResult& context);

// The words the JSON uses: "runtime", "ios", "interrupted", "errors", "fatal";
// "target", "underlying".
const char* stop_reason_name(StopReason r) noexcept;
const char* device_role_name(DeviceRole r) noexcept;

}  // namespace ioacct
