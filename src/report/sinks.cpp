// bench's table of sinks: which renderer each --format names.
#include <stdexcept>
#include <string>

#include "report/report.hpp"

namespace ioacct {
namespace {

constexpr BenchSink kBenchSinks[] = {
    {Format::Console, [](const std::vector<JobSpec>& jobs, const RunResult& r, const RunContext&,
                         const std::vector<std::string>&) { return format_console(jobs, r); }},
    {Format::Json, [](const std::vector<JobSpec>& jobs, const RunResult& r, const RunContext& ctx,
                      const std::vector<std::string>& argv) { return to_json(jobs, &r, ctx, argv).dump(2) + "\n"; }},
    {Format::FioJson, [](const std::vector<JobSpec>& jobs, const RunResult& r, const RunContext& ctx,
                         const std::vector<std::string>& argv) { return to_fio_json(jobs, r, ctx, argv).dump(2) + "\n"; }},
};

}  // namespace

std::span<const BenchSink> bench_sinks() { return kBenchSinks; }

std::string render_bench(Format f, const std::vector<JobSpec>& jobs, const RunResult& r, const RunContext& ctx,
                         const std::vector<std::string>& argv) {
  for (const BenchSink& s : kBenchSinks)
    if (s.format == f) return s.render(jobs, r, ctx, argv);
  throw std::logic_error(std::string("bench has no sink for --format ") + format_name(f));
}

}  // namespace ioacct
