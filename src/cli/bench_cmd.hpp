#pragma once
#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "workload/job.hpp"
#include "workload/target.hpp"

namespace ioacct {

// The bench command line as typed: strings, so that every value goes through
// the one strict unit parser and every message names its flag.
struct BenchArgs {
  std::string rw = "randread", rwmix_read = "50", bs = "4k", iodepth = "32";
  std::string submit_batch, complete_batch, complete_max, submit_policy, size, offset, runtime, ios, ramp, passes;
  std::string threads = "1", cpus, engine = "uring", rate_iops, rate, seed, max_errors = "0";
  std::string dir, format = "console", output, report, verify_delay, inject_faults;
  std::string sq_cpu, sq_idle, wait = "sleep", acct, dump_intervals, log_interval = "1s";
  std::string rwmix_trim, random_distribution, fsync, fdatasync, startdelay, fio, bssplit;
  std::string latency_target, latency_window, latency_percentile;
  std::string rate_process, rate_min, rate_iops_min, rate_cycle, blockalign, hipri_percentage;
  std::string start_at;           // --start-at TIME (cli/bench_fleet.hpp)
  std::vector<std::string> tags;  // --tag KEY=VALUE, in order
  std::vector<std::string> jobs;  // --job NAME:OPTIONS, in order
  bool direct = false, buffered = false, progress = false, destroy_data = false, dsync = false;
  bool verify = false, verify_during = false, stonewall = false, split_submit = false, anatomy = false;
  bool sqpoll = false, sq_shared = false, iopoll = false, fixed_files = false, fixed_bufs = false;
  bool register_ring = false, vectored = false, nowait = false, force_async = false, no_iowait = false;
  bool hipri = false;  // pvsync2: RWF_HIPRI
  bool latency_run = false;
  bool single_issuer = false, no_single_issuer = false, defer_taskrun = false, no_defer_taskrun = false;
  bool coop_taskrun = false, no_coop_taskrun = false, no_sqarray = false;
  bool no_fixed_files = false, no_fixed_bufs = false, no_register_ring = false;
  bool iodepth_given = false;  // set after parsing, from the option's count
  std::vector<std::string> given;  // set after parsing: the options given, by long name ("--bs")
  std::vector<std::string> targets;
};

CLI::App* add_bench_command(CLI::App& app, BenchArgs& a);
// Throws UsageError naming the flag.
JobSpec to_job(const BenchArgs& a);
// Runs `ioacct bench`; returns the exit code. Throws UsageError/RuntimeError.
int run_bench_command(const BenchArgs& a, const std::vector<std::string>& argv);

}  // namespace ioacct
