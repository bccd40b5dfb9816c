#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ioacct {

// `ioacct compare` as typed. Its own options are here; every other word is a
// bench option (a comma list makes an axis of the matrix) or a target.
struct CompareArgs {
  std::string preset, repeat = "3", warmup = "0", baseline, format = "console", output, report;
  std::vector<std::string> configs;  // NAME=OPTIONS
  bool progress = false;
  std::vector<std::string> words;    // set after parsing: what compare did not take itself
};

CLI::App* add_compare_command(CLI::App& app, CompareArgs& a);
// Runs `ioacct compare`; returns the exit code. Throws UsageError/RuntimeError.
int run_compare_command(const CompareArgs& a, const std::vector<std::string>& argv);

}  // namespace ioacct
