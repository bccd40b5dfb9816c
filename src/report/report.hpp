#pragma once
// Reporters: sinks that only read a RunResult. Console for people, JSON for
// scripts (schema in docs/json-schema.md).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "runner/result.hpp"
#include "workload/job.hpp"

namespace ioacct {

inline constexpr int kSchemaVersion = 1;

std::string format_console(const JobSpec& job, const RunResult& r);
// `argv` is recorded in the context block. `r` may be null: interrupted
// before the run started.
nlohmann::json to_json(const JobSpec& job, const RunResult* r, const std::vector<std::string>& argv);
// bench --anatomy (report/anatomy_report.cpp): its console block, and the
// results' "anatomy" object.
std::string format_anatomy(const AnatomyResult& a);
nlohmann::json anatomy_json(const AnatomyResult& a);
// A histogram's summary (count, min, mean, percentiles, max), null if empty.
nlohmann::json latency_json(const Histogram& h);
// The start-up line (stderr): effective configuration and obtained ring flags.
std::string format_start_line(const JobSpec& job, const RunResult& context);

// The words the JSON uses: "runtime", "ios", "interrupted", "errors", "fatal";
// "target", "underlying".
const char* stop_reason_name(StopReason r) noexcept;
const char* device_role_name(DeviceRole r) noexcept;

}  // namespace ioacct
