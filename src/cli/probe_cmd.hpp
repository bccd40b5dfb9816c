#pragma once
#include <CLI/CLI.hpp>
#include <string>

namespace ioacct {

// The probe command line as typed; validated in run_probe_command so that
// the message names the flag the way bench's do.
struct ProbeArgs {
  std::string format = "console";
};

CLI::App* add_probe_command(CLI::App& app, ProbeArgs& a);
// Runs `ioacct probe`; returns the exit code. Throws UsageError. What the
// kernel refuses is the answer, printed with exit code 0, not an error.
int run_probe_command(const ProbeArgs& a);

}  // namespace ioacct
