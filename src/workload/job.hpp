#pragma once
// The job: what the user asked for, parsed and validated, before anything is
// opened. Plain data; validate() is the only place that decides whether a
// combination of options makes sense.
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "engine/options.hpp"

namespace ioacct {

enum class RwMode { RandRead, RandWrite, Read, Write, RandRw };

// How much accounting a run does (--acct): off counts completions only; basic
// adds CPU, SQ threads, devices and system at the window's edges; full adds
// per-I/O latency.
enum class AcctLevel { Off, Basic, Full };

const char* rw_name(RwMode rw) noexcept;
inline bool rw_writes(RwMode rw) { return rw == RwMode::RandWrite || rw == RwMode::Write || rw == RwMode::RandRw; }
inline bool rw_reads(RwMode rw) { return rw == RwMode::RandRead || rw == RwMode::Read || rw == RwMode::RandRw; }
inline bool rw_random(RwMode rw) { return rw != RwMode::Read && rw != RwMode::Write; }

struct JobSpec {
  RwMode rw = RwMode::RandRead;
  unsigned rwmix_read = 50;  // percent of reads with randrw
  uint64_t bs = 4096;
  unsigned iodepth = 32;       // total across threads; each gets an equal share
  unsigned submit_batch = 0;   // 0: min(per-thread depth, 32)
  unsigned complete_batch = 0; // 0: min(per-thread depth, 32)
  bool direct = true;
  std::optional<uint64_t> size;  // bytes of each target used, from `offset`
  uint64_t offset = 0;
  std::optional<std::chrono::nanoseconds> runtime;  // none with --ios alone
  std::optional<uint64_t> ios;                      // measured I/Os, all threads
  std::chrono::nanoseconds ramp{0};
  unsigned threads = 1;
  std::vector<int> cpus;
  EngineKind engine = EngineKind::Uring;
  uint64_t rate_iops = 0;  // per thread; 0 = unpaced
  uint64_t rate_bw = 0;    // per thread, bytes/s; 0 = unpaced
  uint64_t seed = 0;
  bool seed_given = false;
  uint64_t max_errors = 0;
  bool destroy_data = false;
  bool dsync = false;                   // O_DSYNC: each write is durable before it completes
  bool verify = false;                  // check what was written, after the run
  bool verify_during = false;           // ... and every read of a written block
  std::chrono::nanoseconds verify_delay{0};  // wait before the final pass
  FaultSpec faults;                     // test-only: --inject-faults
  UringOptions uring;                   // io_uring modes (--sqpoll, --fixed-bufs, --wait ...)
  AcctLevel acct = AcctLevel::Full;
  std::chrono::nanoseconds log_interval{1'000'000'000};  // the time series' interval; 0: none
  std::string dump_intervals;           // test-only: write every counted I/O's (submit, reap) stamps here
  bool sq_shared = false;               // all threads' rings share one SQ thread
  bool anatomy = false;                 // --anatomy: each I/O split into stages at the kernel's tracepoints
  std::vector<std::string> targets;  // empty: a temporary file
  std::string dir;                   // where the temporary file goes
  uint64_t temp_size = 1ull << 30;   // temporary file size (--size, default 1 GiB)

  unsigned depth_per_thread() const { return engine == EngineKind::Psync ? 1 : iodepth / threads; }
  unsigned submit_batch_eff() const;
  unsigned complete_batch_eff() const;
  // I/Os per second per thread from --rate-iops / --rate, 0 if unpaced.
  double rate_per_thread() const;
};

inline constexpr unsigned kMaxDepth = 65536;      // --iodepth, over all threads
inline constexpr unsigned kMaxRingDepth = 32768;  // IORING_MAX_ENTRIES: one ring's most

// Checks what can be checked without opening anything. Throws UsageError
// naming the flag. Also fills defaults that depend on other options.
void validate(JobSpec& job);

}  // namespace ioacct
