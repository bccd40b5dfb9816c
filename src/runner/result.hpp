#pragma once
// Plain results: what engines and accounting measured, flowing one way to the
// reporters. No behaviour here beyond merging; reporters only read.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acct/accounting.hpp"
#include "acct/cpu.hpp"
#include "acct/histogram.hpp"
#include "acct/inflight.hpp"
#include "acct/series.hpp"
#include "engine/engine.hpp"
#include "engine/fault_engine.hpp"
#include "monitor/anatomy.hpp"
#include "workload/target.hpp"
#include "workload/verify.hpp"

namespace ioacct {

// n per second over a window of window_ns (0 for an empty window): every
// rate ioacct prints is computed here, over the window as measured.
inline double per_s(uint64_t n, uint64_t window_ns) {
  return window_ns ? static_cast<double>(n) * 1e9 / static_cast<double>(window_ns) : 0.0;
}

// Key for a read that returned 0 bytes before the request was done.
inline constexpr int kErrEof = -1;
std::string error_key_name(int key);  // "EIO", "EOF"

struct ThreadResult {
  unsigned index = 0;
  int tid = 0;                  // the worker thread's id
  int cpu = -1;                 // pinned CPU, -1 if not pinned
  unsigned depth = 0;
  uint64_t ios = 0;             // completed in the measured window
  uint64_t reads = 0, writes = 0;
  uint64_t bytes_read = 0, bytes_written = 0;
  uint64_t window_ns = 0;       // this thread's measured window
  std::shared_ptr<Histogram> latency = std::make_shared<Histogram>();  // submission to reaping, ns
  EngineCounters engine;        // over the whole run, ramp and drain included
  std::map<int, uint64_t> errors;  // errno (positive) or kErrEof -> count, whole run
  uint64_t short_resubmits = 0; // short transfers finished by resubmitting the rest
  uint64_t eagain_retries = 0;
  FaultCounts faults;           // injected by --inject-faults (test-only), whole run
  std::vector<std::pair<uint64_t, uint64_t>> intervals;  // test-only --dump-intervals: (submitted, reaped) ns
};

// Why a run ended: its --runtime or --ios was reached, a signal, more I/O
// errors than --max-errors, or a failure that stops every thread.
enum class StopReason { Runtime, Ios, Interrupted, Errors, Fatal };

struct TargetInfo {
  std::string path, device;
  bool is_block = false, is_temp = false;
  uint64_t base = 0, range = 0;
  uint32_t dio_align = 0;
};
// What the reports say about each target of `targets`.
std::vector<TargetInfo> target_infos(const Targets& targets);

struct RunResult {
  // Context: what ran, where.
  std::string engine_desc;
  uint32_t setup_flags = 0;
  std::vector<TargetInfo> targets;
  // Measured.
  std::vector<ThreadResult> threads;
  ThreadResult total;           // merged over threads
  uint64_t window_ns = 0;       // from the window's start to the last thread's end
  std::optional<CpuUsage> cpu;  // none when the window never opened, or --acct off
  std::optional<Accounting> accounting;  // the kernel's view at the window's edges (--acct basic/full)
  std::optional<InflightResult> inflight;  // exact time with I/O in flight (--acct full)
  std::optional<Series> series;            // per --log-interval (--acct full)
  bool interrupted = false;
  StopReason stop_reason = StopReason::Runtime;
  std::string first_error;      // "EIO reading /dev/x at offset 4096", if any
  std::optional<VerifyResult> verify;  // with --verify
  bool verify_skipped = false;  // --verify, but the final pass was skipped (interrupted)
  std::optional<AnatomyResult> anatomy;  // --anatomy (its `unavailable` says why when not measured)

  uint64_t error_count() const;
  void merge_threads();         // fills `total` from `threads`
};

}  // namespace ioacct
