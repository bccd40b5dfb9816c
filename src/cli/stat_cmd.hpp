#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

namespace ioacct {

// The stat command line as typed, iostat's way: [INTERVAL [COUNT]] [DEVICE...].
struct StatArgs {
  bool extended = false;    // -x: accepted for iostat's habit; the report is always the extended one
  bool partitions = false;  // -p
  bool omit_first = false;  // -y
  bool latency = false;     // --latency
  bool no_bpf = false;      // --no-bpf: io_ticks columns only
  bool dev = false;         // --dev: also dev% (one more tracepoint per I/O)
  bool bpf_stats = false;   // --bpf-stats: the kernel's BPF run-time statistics on, for the tracker's cost
  std::string format = "console";
  std::vector<std::string> args;
};

CLI::App* add_stat_command(CLI::App& app, StatArgs& a);
// Runs `ioacct stat`; returns the exit code. Throws UsageError/RuntimeError.
int run_stat_command(const StatArgs& a);

}  // namespace ioacct
