#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ioacct {

// `ioacct compare` as typed. Its own options are here; every other word is a
// bench option (a comma list makes an axis of the matrix) or a target.
// Options left empty were not given (their defaults are applied where they
// apply: saved runs refuse the ones about running); `until_resolved` is "-"
// when not given, "" when given without MAX.
struct CompareArgs {
  std::string preset, repeat, warmup, baseline, format = "console", output, report;
  std::string until_resolved = "-", budget, margin;
  std::vector<std::string> configs;  // NAME=OPTIONS
  bool progress = false;
  std::vector<std::string> words;    // set after parsing: what compare did not take itself
};

CLI::App* add_compare_command(CLI::App& app, CompareArgs& a);
// Runs `ioacct compare`; returns the exit code. Throws UsageError/RuntimeError.
int run_compare_command(const CompareArgs& a, const std::vector<std::string>& argv);

}  // namespace ioacct
