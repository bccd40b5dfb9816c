#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ioacct {

// The merge command line as typed.
struct MergeArgs {
  std::vector<std::string> inputs;  // FILE, DIR or GLOB
  std::string format = "console", output, report;
};

CLI::App* add_merge_command(CLI::App& app, MergeArgs& a);
// Runs `ioacct merge`; returns the exit code. Throws UsageError for inputs
// that are not bench results, RuntimeError when an output cannot be written.
int run_merge_command(const MergeArgs& a, const std::vector<std::string>& argv);

}  // namespace ioacct
