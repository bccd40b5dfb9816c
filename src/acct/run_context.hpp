#pragma once
// Where a run ran: the host, its kernel and CPUs, as a report's context block
// names them (a figure is only comparable with its machine named). Gathered
// here, below the reporters, which only print it (as Google Benchmark's
// reporters print the Context handed to them). The devices' identities
// travel with their targets (runner/result.hpp, TargetInfo::identity).
#include <cstdint>
#include <map>
#include <optional>
#include <string>

namespace ioacct {

// The wall clock's sync state as adjtimex(2) reports it (ntp_adjtime; NTP,
// chrony and PTP daemons keep it): how far two hosts' CLOCK_REALTIME may be
// apart, which bounds the skew between their windows.
struct ClockSync {
  bool synchronised = false;  // STA_UNSYNC clear and the state is not TIME_ERROR
  int64_t maxerror_us = 0;    // the kernel's maximum error bound (grows by 500 ppm while no daemon updates it)
  int64_t esterror_us = 0;    // the estimated error the daemon last set
  int state = 0;              // adjtimex's return: TIME_OK (0) ... TIME_ERROR (5)
};
struct RunContext {
  std::string host;       // gethostname(), "" if it failed
  std::string kernel;     // uname's sysname and release: "Linux 6.18.0"
  std::string cpu_model;  // /proc/cpuinfo's first "model name", "" where it has none (arm64)
  unsigned cpus = 0;      // CPUs online (std::thread::hardware_concurrency), 0 if unknown
  int cpus_allowed = 0;   // CPUs in the calling thread's affinity mask, 0 if unknown
  // /proc/sys/kernel/random/boot_id, "" if unreadable: two results with the
  // same host name and different boot ids are two boots (or two machines
  // that share a name), which a merge must not take for one host.
  std::string boot_id;
  std::optional<ClockSync> clock;  // read with the rest: at the report, just after the window closed
  std::map<std::string, std::string> tags;  // --tag KEY=VALUE, set by the command, not gathered
};

// adjtimex with modes 0 (a read; no privilege needed). None when the call fails.
std::optional<ClockSync> read_clock_sync();

// Reads the context now: uname, gethostname, /proc/cpuinfo, the affinity
// mask of the calling thread. Cheap (one small file); call it once, where
// the report is made.
RunContext gather_run_context();

}  // namespace ioacct
