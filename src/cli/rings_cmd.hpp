#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace ioacct {

// The rings command line as typed; validated in run_rings_command so that
// every message names its flag and every value goes through workload/units.
struct RingsArgs {
  std::string interval, pid, format = "console", sample = "1s", count;
};

CLI::App* add_rings_command(CLI::App& app, RingsArgs& a);
// Runs `ioacct rings`; returns the exit code. Throws UsageError/RuntimeError.
int run_rings_command(const RingsArgs& a);

}  // namespace ioacct
