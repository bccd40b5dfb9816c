#pragma once
// Plain results: what engines and accounting measured, flowing one way to the
// reporters. No behaviour here beyond merging; reporters only read.
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "acct/accounting.hpp"
#include "acct/cpu.hpp"
#include "acct/device_identity.hpp"
#include "acct/histogram.hpp"
#include "acct/inflight.hpp"
#include "acct/series.hpp"
#include "engine/engine.hpp"
#include "engine/fault_engine.hpp"
#include "trace/anatomy.hpp"
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

// How a run refilled as reaped submitted its refills (--submit-policy;
// runner/refill_chooser.hpp), over the fused path's time in the window.
struct RefillResult {
  // What decided, on this thread: "measured" (auto, O_DIRECT: the chooser),
  // "given" (--submit-policy each or pass), "no device queue" (auto where
  // nop or the page cache completes inside the enter: pass), "depth 1"
  // (auto at one I/O per thread: its wait submits it at once, pass), or "" where
  // the fused path was not taken (lockstep, paced, mixed, verify ...).
  std::string decided_by;
  uint64_t each_ns = 0, pass_ns = 0;  // time spent submitting each way
  uint64_t probes = 0, chose_each = 0;
  uint64_t extended = 0;              // probes that ran a second set of pairs (unsure after the first)
  uint64_t cut_short = 0;             // probes that stopped after two pairs, Each far behind
  uint64_t unconfirmed = 0;           // probes whose Each the next probe did not confirm
  std::vector<double> probe_ratios;   // each probe's median Each/Pass IOPS ratio, in order (capped)
};

// One direction's latency (ns), kept apart only in a job that mixes reads
// and writes (--rw randrw/rw), as fio's JSON keeps one per direction: lat,
// and slat/clat where the job splits them (as ThreadResult's own). Null
// elsewhere: a job of one direction has its one in `latency`, and its hot
// path records nothing more.
struct DirLatency {
  std::shared_ptr<Histogram> lat, slat, clat;
};

struct ThreadResult {
  unsigned index = 0;           // within its job
  unsigned job = 0;             // index into RunResult::jobs
  int tid = 0;                  // the worker thread's id
  int cpu = -1;                 // pinned CPU, -1 if not pinned
  unsigned depth = 0;
  uint64_t ios = 0;             // completed in the measured window: reads, writes and trims
  uint64_t reads = 0, writes = 0, trims = 0;
  uint64_t bytes_read = 0, bytes_written = 0, bytes_trimmed = 0;
  uint64_t syncs = 0;           // fsyncs/fdatasyncs completed in the window (not I/Os: not in ios)
  uint64_t window_ns = 0;       // this thread's measured window
  uint64_t window_start_ns = 0; // when it opened (CLOCK_MONOTONIC); 0 if it never did
  // Latency of reads and writes (lat: submission to reaping), ns. slat and
  // clat split it where the submission could be timed on its own (docs/cli.md,
  // "Latency"): null with --acct below full. Trims and syncs have their own.
  std::shared_ptr<Histogram> latency = std::make_shared<Histogram>();
  std::shared_ptr<Histogram> slat, clat;
  uint64_t slat_unsplit = 0;    // reads and writes whose submission was not timed on its own
  uint64_t clat_at_submit = 0;  // of the split ones, found complete as their submitting enter returned (no clat)
  std::shared_ptr<Histogram> trim_latency, sync_latency;  // null unless the job trims / syncs
  // Reads' and writes' own (DirLatency): their lats add up to `latency`.
  // Merged over threads where any has them (merge_results).
  DirLatency read_lat, write_lat;
  EngineCounters engine;        // over the whole run, ramp and drain included
  std::map<int, uint64_t> errors;  // errno (positive) or kErrEof -> count, whole run
  uint64_t short_resubmits = 0; // short transfers finished by resubmitting the rest
  uint64_t eagain_retries = 0;
  FaultCounts faults;           // injected by --inject-faults (test-only), whole run
  RefillResult refill;
  // --latency-target: the depth the search reached (0 without a target), and
  // whether it settled there (the figures are then that depth's alone).
  unsigned latency_depth = 0;
  bool latency_found = false;
  // --rate-min / --rate-iops-min: why this thread ended early, worded for a
  // person ("reads ran at 812 I/Os per second ..."); empty when it did not.
  std::string floor_missed;
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
  std::optional<DeviceIdentity> identity;  // the device's model and firmware (sysfs); none without a device
};
// What the reports say about each target of `targets`.
std::vector<TargetInfo> target_infos(const Targets& targets);

// What one job measured: its threads merged, over its own window.
struct JobResult {
  std::string name;             // "" for the one job of a plain run
  unsigned first_thread = 0, threads = 0;  // its threads in RunResult::threads
  ThreadResult total;           // merged over its threads
  uint64_t window_ns = 0;       // from its window's opening to its last thread's close
  std::string engine_desc;      // its thread 0's engine
  uint32_t setup_flags = 0;
  std::vector<TargetInfo> targets;
  std::optional<JobCpu> cpu;    // its threads' CPU (schedstat, --acct basic/full)
};



struct RunResult {
  // Context: what ran, where.
  std::string engine_desc;
  uint32_t setup_flags = 0;
  std::vector<std::string> engine_fallbacks;  // asked for by default, refused (Engine::fallbacks), any thread
  std::vector<TargetInfo> targets;
  // When the run began (the window opens --ramp later): the wall clock and
  // CLOCK_MONOTONIC read together, so that monotonic stamps (the series, the
  // tracker's) can be placed in time. 0: the run never began.
  int64_t start_wall_ns = 0;
  uint64_t start_mono_ns = 0;
  // Measured.
  std::vector<ThreadResult> threads;  // every job's, job by job
  std::vector<JobResult> jobs;  // one per job, in the order given (one for a plain run)
  ThreadResult total;           // merged over threads
  uint64_t window_ns = 0;       // from the first window's opening to the last thread's close
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
  // Fills `total`, `window_ns` and each job's total and window from `threads`.
  void merge_threads();
};

// `threads` merged into one (counts summed, histograms merged, window the
// span from the earliest opening to the latest close). Where any thread
// kept its reads' and writes' latency apart, so does the merge, and a
// thread that did only reads (or only writes) adds its whole latency to
// that direction's: a run of a mixed job beside a reader gives every read's.
ThreadResult merge_results(std::span<const ThreadResult> threads);

}  // namespace ioacct
