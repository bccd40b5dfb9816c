#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ioacct {

// The top command line as typed; validated in run_top_command.
struct TopArgs {
  std::string interval = "1s";
  std::string batch;        // --batch N: N plain-text frames, no terminal
  std::string by = "cgroup";
  std::vector<std::string> devices;
};

CLI::App* add_top_command(CLI::App& app, TopArgs& a);
// Runs `ioacct top`; returns the exit code. Throws UsageError/RuntimeError.
int run_top_command(const TopArgs& a);

}  // namespace ioacct
