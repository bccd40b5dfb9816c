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
  std::string by;           // --by cgroup|process: who made each device busy
  // iostat's other habits (iostat(1)):
  bool time = false;         // -t: the time before each report
  bool megabytes = false;    // -m: MB/s columns
  bool kilobytes = false;    // -k: kB/s columns (the default)
  bool omit_idle = false;    // -z: no row for a device that completed nothing in the interval
  bool device_only = false;  // -d: the device report only (the default; with -c: both)
  bool cpu_only = false;     // -c: the CPU report (avg-cpu) only; with -d: both
  bool dm_names = false;     // -N: device-mapper names (dm-0 -> vg-root)
  bool human = false;        // -h: human-readable (iostat's --human --pretty, on one line)
  std::string output;        // -o JSON: --format json
  bool format_given = false; // --format was on the command line (against -o)
  std::string format = "console";
  std::vector<std::string> args;
};

CLI::App* add_stat_command(CLI::App& app, StatArgs& a);
// Runs `ioacct stat`; returns the exit code. Throws UsageError/RuntimeError.
int run_stat_command(const StatArgs& a);

}  // namespace ioacct
