#include "cli/merge_cmd.hpp"

#include <fmt/format.h>

#include <cstdio>

#include "cli/cli.hpp"
#include "cli/inputs.hpp"
#include "cli/option_rows.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/output.hpp"
#include "compare/merge.hpp"
#include "report/html_report.hpp"
#include "report/merge_report.hpp"

namespace ioacct {
namespace {

void required_option(CLI::Option* o) { o->required(); }

constexpr OptionRow<MergeArgs> kMergeRows[] = {
  {"inputs", "FILE|DIR|GLOB", "bench --format json results: files, directories (their *.json) or quoted globs",
   &MergeArgs::inputs, nullptr, required_option},
  format_row<MergeArgs>("console (per-host table and total) or json (one bench result; default console)"),
  output_row<MergeArgs>("Write the result to FILE instead of stdout"),
  report_row<MergeArgs>("Also write a self-contained HTML report (per-host and total series) to FILE"),
};

}  // namespace

CLI::App* add_merge_command(CLI::App& app, MergeArgs& a) {
  return add_command(
      app, "merge",
      "Merge bench results of several hosts (one --start-at) into one result, as if one run held them all.",
      "Counts and latency histograms add exactly; IOPS and bandwidth are each host's over its own window, added; "
      "CPU and devices stay per host.\nSee docs/cli.md.",
      a, kMergeRows);
}

int run_merge_command(const MergeArgs& a, const std::vector<std::string>& argv) {
  const Format format = parse_format("--format", a.format, {Format::Console, Format::Json});
  if (!a.output.empty()) check_output_writable("--output", a.output);
  if (!a.report.empty()) check_output_writable("--report", a.report);
  std::vector<HostRun> hosts;
  nlohmann::json first_context;
  for (const std::string& word : a.inputs)
    for (const std::string& path : expand_input(word, true)) {
      std::string error;
      const auto text = read_user_file(path, size_t{1} << 30, error);
      if (!text) throw UsageError(fmt::format("{}: cannot read: {}", path, error));
      hosts.push_back(host_run_of(path, *text));
      // The merged document keeps the first host's context (its options).
      if (first_context.is_null()) first_context = nlohmann::json::parse(*text).at("context");
    }
  const MergedRun m = merge_hosts(std::move(hosts));
  fmt::print(stderr, "{}\n", merged_summary_line(m));
  for (const std::string& w : m.warnings) fmt::print(stderr, "warning: {}\n", w);
  nlohmann::json doc = merged_json(m, first_context, argv);
  write_output(format == Format::Json ? doc.dump(2) + "\n" : merged_console(m), a.output);
  if (!a.report.empty()) write_atomically(a.report, html_merge_report(m, std::move(doc)), "--report");
  return kExitOk;
}

}  // namespace ioacct
