#include "cli/cli.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <optional>
#include <vector>

#include "cli/bench_cmd.hpp"
#include "cli/compare_cmd.hpp"
#include "cli/docgen.hpp"
#include "cli/export_cmd.hpp"
#include "cli/merge_cmd.hpp"
#include "cli/probe_cmd.hpp"
#include "cli/rings_cmd.hpp"
#include "cli/top_cmd.hpp"
#include "cli/stat_cmd.hpp"
#include "cli/usage_errors.hpp"
#include "common/errors.hpp"

namespace ioacct {

void require_one_of(std::string_view flag, const std::string& value, std::initializer_list<std::string_view> choices) {
  for (std::string_view c : choices)
    if (value == c) return;
  throw UsageError(fmt::format("{}: '{}' is not one of {}", flag, value, fmt::join(choices, ", ")));
}

Format parse_format(std::string_view flag, const std::string& value, const std::vector<Format>& choices) {
  const std::optional<Format> f = format_named(value);
  for (Format c : choices)
    if (f == c) return c;
  std::vector<std::string_view> names;
  names.reserve(choices.size());
  for (Format c : choices) names.emplace_back(format_name(c));
  throw UsageError(fmt::format("{}: '{}' is not one of {}", flag, value, fmt::join(names, ", ")));
}


namespace {

// The subcommand whose words were being parsed; none before one was seen.
const CLI::App* parsed_subcommand(const CLI::App& app) {
  const auto parsed = app.get_subcommands();
  return parsed.empty() ? nullptr : parsed.front();
}

}  // namespace

int run_cli(int argc, char** argv) {
  CLI::App app{"ioacct: an io_uring I/O benchmark and monitor that tells the truth about where time goes.",
               "ioacct"};
  app.set_version_flag("--version", std::string("ioacct ") + IOACCT_VERSION);
  app.require_subcommand(1, 1);
  BenchArgs bench;
  CLI::App* bench_cmd = add_bench_command(app, bench);
  CompareArgs compare;
  CLI::App* compare_cmd = add_compare_command(app, compare);
  MergeArgs merge;
  CLI::App* merge_cmd = add_merge_command(app, merge);
  ProbeArgs probe;
  CLI::App* probe_cmd = add_probe_command(app, probe);
  RingsArgs rings;
  CLI::App* rings_cmd = add_rings_command(app, rings);
  StatArgs stat;
  CLI::App* stat_cmd = add_stat_command(app, stat);
  ExportArgs export_args;
  CLI::App* export_cmd = add_export_command(app, export_args);
  TopArgs top;
  CLI::App* top_cmd = add_top_command(app, top);
  // For the build (cmake/manpages.cmake): man pages and completions from the
  // definitions above, written before any subcommand is required.
  app.add_option_function<std::vector<std::string>>(
         "--generate-docs",
         [&app](const std::vector<std::string>& v) {
           try {
             write_generated_docs(app, v.at(0), v.at(1));
           } catch (const RuntimeError& e) {
             throw CLI::RuntimeError(e.what(), kExitRuntime);
           }
           throw CLI::Success();
         },
         "")
      ->expected(2)
      ->group("");

  // Installed, --help names /usr/share/doc/ioacct/cli.md, not a path in a
  // source tree the user does not have.
  if (const std::string docs = installed_doc_dir(); !docs.empty()) point_help_at(app, docs);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);  // --help, --version
    const CLI::App* sub = parsed_subcommand(app);
    fmt::print(stderr, "error: {}\n", usage_error_message(e, app, sub, sub ? "ioacct " + sub->get_name() : "ioacct"));
    return kExitUsage;
  }
  bench.iodepth_given = bench_cmd->count("--iodepth") > 0;
  for (const CLI::Option* o : bench_cmd->get_options())
    if (o->count()) bench.given.push_back(o->get_lnames().empty() ? o->get_single_name() : "--" + o->get_lnames().front());
  compare.words = compare_cmd->remaining();
  stat.format_given = stat_cmd->count("--format") > 0;
  std::vector<std::string> args(argv, argv + argc);
  try {
    if (bench_cmd->parsed()) return run_bench_command(bench, args);
    if (compare_cmd->parsed()) return run_compare_command(compare, args);
    if (probe_cmd->parsed()) return run_probe_command(probe);
    if (rings_cmd->parsed()) return run_rings_command(rings);
    if (stat_cmd->parsed()) return run_stat_command(stat);
    if (export_cmd->parsed()) return run_export_command(export_args);
    if (top_cmd->parsed()) return run_top_command(top);
    if (merge_cmd->parsed()) return run_merge_command(merge, args);
  } catch (const UsageError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitUsage;
  } catch (const RuntimeError& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return kExitRuntime;
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: internal error: {} (please report it)\n", e.what());
    return kExitRuntime;
  }
  return kExitUsage;
}

}  // namespace ioacct
