#pragma once
// The HTML reports (`--report FILE.html`): one self-contained file each, the
// charting library (Chart.js, embedded in the binary at build time) and the
// data inlined, so it opens offline, prints to PDF with its charts, and can
// be mailed as it is. The frame is html_page.hpp; the charts html/report.js.
#include <nlohmann/json.hpp>
#include <string>

#include "compare/merge.hpp"
#include "compare/summary.hpp"
#include "runner/result.hpp"
#include "workload/job.hpp"

namespace ioacct {

// `ioacct compare --report`: the question and its answer, the table with
// verdicts, and charts of the ratios' intervals, every repetition, latency,
// CPU per I/O (and %util against busy% for paced variants). `data` is
// compare_json()'s object.
std::string html_report(const CompareResult& c, nlohmann::json data);

// `ioacct bench --report`: the run's headline figures, latency percentiles,
// time series (IOPS, bandwidth, p50/p99, CPU, device busy) and the device
// table; with several jobs, also a row per job (over its own window; `jobs[i]`
// is r.jobs[i]'s spec) and one for the whole run. `bench_json` is bench's own
// JSON report.
std::string html_bench_report(const std::vector<JobSpec>& jobs, const RunResult& r, nlohmann::json bench_json);

// `ioacct merge --report`: the per-host table beside the total, the merged
// latency percentiles, and each host's series with their total on one
// wall clock. `merged` is merge's JSON document (report/merge_report.hpp).
std::string html_merge_report(const MergedRun& m, nlohmann::json merged);

// Chart.js as Debian ships it (libjs-chart.js), from the generated source.
extern const char* const kChartJs;
extern const char* const kChartJsVersion;

}  // namespace ioacct
