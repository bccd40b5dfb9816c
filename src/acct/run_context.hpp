#pragma once
// Where a run ran: the host, its kernel and CPUs, as a report's context block
// names them (a figure is only comparable with its machine named). Gathered
// here, below the reporters, which only print it (as Google Benchmark's
// reporters print the Context handed to them). The devices' identities
// travel with their targets (runner/result.hpp, TargetInfo::identity).
#include <string>

namespace ioacct {

struct RunContext {
  std::string host;       // gethostname(), "" if it failed
  std::string kernel;     // uname's sysname and release: "Linux 6.18.0"
  std::string cpu_model;  // /proc/cpuinfo's first "model name", "" where it has none (arm64)
  unsigned cpus = 0;      // CPUs online (std::thread::hardware_concurrency), 0 if unknown
  int cpus_allowed = 0;   // CPUs in the calling thread's affinity mask, 0 if unknown
};

// Reads the context now: uname, gethostname, /proc/cpuinfo, the affinity
// mask of the calling thread. Cheap (one small file); call it once, where
// the report is made.
RunContext gather_run_context();

}  // namespace ioacct
