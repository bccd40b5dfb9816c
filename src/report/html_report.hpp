#pragma once
// The HTML report (`--report FILE.html`): one self-contained file, the
// charting library (Chart.js, embedded in the binary at build time) and the
// data inlined, so it opens offline and can be mailed as it is.
#include <nlohmann/json.hpp>
#include <string>

#include "compare/summary.hpp"
#include "runner/result.hpp"
#include "workload/job.hpp"

namespace ioacct {

// `data` is compare_json()'s object plus "kind" ("compare" or "bench") and,
// for bench, "series" (the time series as in bench's JSON).
std::string html_report(const CompareResult& c, const nlohmann::json& data);

// `ioacct bench --report`: the single run as a one-variant comparison, with
// the run's time series. With several jobs, one row per job (over its own
// window; `jobs[i]` is r.jobs[i]'s spec) and a last row for the whole run.
// `bench_json` is bench's own JSON report.
std::string html_bench_report(const std::vector<JobSpec>& jobs, const RunResult& r, const nlohmann::json& bench_json);

// Chart.js as shipped (dist/chart.umd.js), from the generated source.
extern const char* const kChartJs;
extern const char* const kChartJsVersion;

}  // namespace ioacct
