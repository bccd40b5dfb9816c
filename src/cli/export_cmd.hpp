#pragma once
#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ioacct {

// The export command line as typed; validated in run_export_command.
struct ExportArgs {
  std::string listen = "127.0.0.1:19464", min_interval = "0s", per_process_limit = "100", per_cgroup_top = "20";
  std::optional<std::string> web_config, device_include, device_exclude;
  bool no_bpf = false, no_latency = false, per_process = false, per_cgroup = false;
  bool dev = false;        // --dev: also the driver busy time (one more tracepoint per I/O)
  bool bpf_stats = false;  // --bpf-stats: the kernel's BPF run-time statistics on, for the tracker's cost metric
  std::vector<std::string> devices;
};

CLI::App* add_export_command(CLI::App& app, ExportArgs& a);
// Serves metrics until SIGINT/SIGTERM/SIGHUP, then returns 0. Throws
// UsageError/RuntimeError.
int run_export_command(const ExportArgs& a);

}  // namespace ioacct
