#pragma once
// The job: what the user asked for, parsed and validated, before anything is
// opened. Plain data; validate() is the only place that decides whether a
// combination of options makes sense.
#include <array>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/distribution.hpp"
#include "engine/options.hpp"
#include "workload/pace.hpp"

namespace ioacct {

// ReadWrite and RandRw mix reads, writes and (--rwmix-trim) trims;
// Trim and RandTrim only trim.
enum class RwMode { RandRead, RandWrite, Read, Write, RandRw, ReadWrite, Trim, RandTrim };

// How much accounting a run does (--acct), each level adding to the one
// before: off counts completions only; basic adds CPU, SQ threads, devices
// and the system at the window's edges; latency (the default) adds per-I/O
// latency, the exact in-flight time and the time series, all in user space
// at a few ns per batch; full adds the devices' exact busy time and depth
// from the eBPF tracker, which costs every I/O on those devices and the
// program load at start-up, so it is asked for by name.
enum class AcctLevel { Off, Basic, Latency, Full };
const char* acct_name(AcctLevel a) noexcept;

// How a run refilled as reaped submits its refills (--submit-policy): with
// the next wait, one enter per pass (pass); each as it is written, one enter
// per I/O as fio's defaults (each); or, for O_DIRECT, whichever the worker
// measures to be faster, a tie going to the cheaper pass (auto, the
// default; runner/refill_chooser.hpp).
enum class SubmitPolicy { Auto, Pass, Each };
const char* submit_policy_name(SubmitPolicy p) noexcept;

const char* rw_name(RwMode rw) noexcept;
inline bool rw_mixed(RwMode rw) { return rw == RwMode::RandRw || rw == RwMode::ReadWrite; }
inline bool rw_trims_only(RwMode rw) { return rw == RwMode::Trim || rw == RwMode::RandTrim; }
// Changes what the targets hold (writes or trims): the write-safety rules apply.
inline bool rw_writes(RwMode rw) {
  return rw == RwMode::RandWrite || rw == RwMode::Write || rw_mixed(rw) || rw_trims_only(rw);
}
inline bool rw_reads(RwMode rw) { return rw == RwMode::RandRead || rw == RwMode::Read || rw_mixed(rw); }
inline bool rw_random(RwMode rw) {
  return rw == RwMode::RandRead || rw == RwMode::RandWrite || rw == RwMode::RandRw || rw == RwMode::RandTrim;
}

// One size of a --bssplit job and its weight (fio's bssplit: the share of
// I/Os that are this size).
struct BsShare {
  uint32_t size = 0;
  uint32_t weight = 0;
  bool operator==(const BsShare&) const = default;
};

struct JobSpec {
  std::string name;          // --job NAME, a fio section; "" for the one job of a plain run
  RwMode rw = RwMode::RandRead;
  unsigned rwmix_read = 50;  // percent of reads with randrw / rw
  unsigned rwmix_trim = 0;   // percent of trims with randrw / rw (the rest are writes)
  Distribution distribution; // --random-distribution: which blocks random I/O picks
  uint64_t fsync_every = 0;      // an fsync after every N writes issued (0: none)
  uint64_t fdatasync_every = 0;  // an fdatasync after every N writes issued (0: none)
  bool split_submit = false;     // submit and wait in separate io_uring_enter calls: slat for every batch
  uint64_t bs = 4096;            // with bs_split: the largest size (each slot's buffer holds one)
  std::vector<BsShare> bs_split;  // --bssplit: each I/O's size drawn from these (empty: every I/O is bs)
  // --bs R,W[,T] (fio's bs=r,w,t), a mixed --rw: reads', writes' and trims'
  // sizes, each set (bs is then the largest); all 0: every I/O is bs.
  std::array<uint64_t, 3> bs_dir{};
  // --bssplit R,W[,T] (fio's bssplit=r,w,t), a mixed --rw: each direction's
  // own sizes by weight (bs is then the largest); all empty: none.
  std::array<std::vector<BsShare>, 3> bs_split_dir;
  // --blockalign (fio's blockalign): random offsets on this boundary instead
  // of bs's (a 4k read on 64k boundaries, a 64k one on 4k); 0: bs.
  uint64_t blockalign = 0;
  unsigned iodepth = 32;       // total across threads; each gets an equal share
  // Batching. Neither given: refill as reaped (every free slot refilled at
  // once, wait for one completion, reap all that are there), so depth N is
  // N in flight at the device. Either given: lockstep batches of that size.
  unsigned submit_batch = 0;   // 0: the per-thread depth (every free slot)
  unsigned complete_batch = 0; // 0: 1 (wake at the first completion)
  // --complete-max (fio's iodepth_batch_complete_max): at most this many
  // completions taken per enter, the rest left for the next; 0: all there
  // are. Set, the run takes the batch path.
  unsigned complete_max = 0;
  SubmitPolicy submit_policy = SubmitPolicy::Auto;  // refilled as reaped: how refills are submitted
  bool submit_policy_given = false;                 // --submit-policy was given (it then conflicts with lockstep)
  bool direct = true;
  std::optional<uint64_t> size;  // bytes of each target used, from `offset`
  uint64_t offset = 0;
  std::optional<std::chrono::nanoseconds> runtime;  // none with --ios alone
  std::optional<uint64_t> ios;                      // measured I/Os, all threads
  // --passes N (fio without time_based or size): --ios is set to N passes per
  // thread once the targets are open (the fewer, with a --ios given too).
  uint32_t passes = 0;
  std::chrono::nanoseconds ramp{0};
  // --start-at: the CLOCK_REALTIME instant (ns since the epoch) at which the
  // measured window opens, so that runs on several hosts share one window;
  // the run starts --ramp before it. 0: at once. A run's own option.
  int64_t start_at_unix_ns = 0;
  std::chrono::nanoseconds startdelay{0};  // this job starts this long after the run (several jobs)
  bool stonewall = false;                  // this job starts when every job before it has ended
  unsigned threads = 1;
  std::vector<int> cpus;
  EngineKind engine = EngineKind::Uring;
  uint64_t rate_iops = 0;  // per thread; 0 = unpaced
  uint64_t rate_bw = 0;    // per thread, bytes/s; 0 = unpaced
  // --rate-iops R,W[,T] / --rate R,W[,T] (fio's rate=r,w,t), a mixed --rw
  // only: reads, writes and trims each on a pace of their own, per thread;
  // 0 leaves that direction unpaced. Set, they replace rate_iops / rate_bw.
  std::array<uint64_t, 3> rate_iops_dir{}, rate_bw_dir{};
  RateProcess rate_process = RateProcess::Linear;  // --rate-process: how a pace spaces its I/Os
  // --rate-min / --rate-iops-min (fio's rate_min, rate_iops_min): each
  // direction's floor per thread (reads, writes, trims; 0: none), held over
  // each --rate-cycle (fio's rate_cycle) of the window; a thread that falls
  // under one ends, and the run with it exits 1 (workload/pace.hpp's RateFloor).
  std::array<uint64_t, 3> rate_min_bw{}, rate_min_iops{};
  std::chrono::nanoseconds rate_cycle{1'000'000'000};
  // --latency-target: find the highest depth (up to the thread's) whose I/Os
  // meet it, fio's latency_target search (runner/depth_search.hpp); 0: off.
  std::chrono::nanoseconds latency_target{0};
  std::chrono::nanoseconds latency_window{1'000'000'000};  // how long each depth is tried
  double latency_percentile = 100.0;  // the share of a window's I/Os that must meet the target
  bool latency_run = false;           // --latency-run: keep adjusting the depth for the whole run (fio's latency_run=1)
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
  SyncOptions sync;                     // the psync family: its syscall (--engine sync ...), --hipri, --nowait
  AcctLevel acct = AcctLevel::Latency;  // the default level: chosen here only
  std::chrono::nanoseconds log_interval{1'000'000'000};  // the time series' interval; 0: none
  bool interval_split = false;          // ... and each interval's slat and clat (fio's write_lat_log: _slat, _clat)
  std::string dump_intervals;           // test-only: write every counted I/O's (submit, reap) stamps here
  bool sq_shared = false;               // all threads' rings share one SQ thread
  bool anatomy = false;                 // --anatomy: each I/O split into stages at the kernel's tracepoints
  std::vector<std::string> targets;  // empty: a temporary file
  std::string dir;                   // where the temporary file goes
  uint64_t temp_size = 1ull << 30;   // temporary file size (--size, default 1 GiB)

  unsigned depth_per_thread() const { return engine == EngineKind::Psync ? 1 : iodepth / threads; }
  unsigned submit_batch_eff() const;
  unsigned complete_batch_eff() const;
  bool lockstep() const { return submit_batch || complete_batch; }
  // --submit-policy chooses how a pass's refills are submitted: only io_uring
  // runs refilled as reaped in passes (not lockstep, not --complete-max).
  bool submit_policy_applies() const {
    return !lockstep() && !complete_max && engine != EngineKind::Psync && engine != EngineKind::Libaio;
  }
  // I/Os per second per thread from --rate-iops / --rate, 0 if unpaced
  // (or paced by direction).
  double rate_per_thread() const;
  // Paced by direction: each one's I/Os per second per thread (reads,
  // writes, trims; 0 = unpaced), else all 0.
  bool paced_by_direction() const;
  std::array<double, 3> rate_by_direction() const;
  bool has_rate_floor() const { return rate_min_bw != std::array<uint64_t, 3>{} || rate_min_iops != std::array<uint64_t, 3>{}; }
  bool sized_by_direction() const { return bs_dir != std::array<uint64_t, 3>{} || !bs_split_dir[0].empty(); }
  // With sizes per direction, direction d's sizes by weight (--bs R,W's
  // one, or --bssplit R,W's list).
  std::vector<BsShare> sizes_of(int d) const;
  // The grid offsets are drawn on: the smallest size of a --bssplit (fio's
  // default blockalign) or of the directions the mix draws, else bs.
  uint64_t bs_align() const;
  double bs_mean() const;  // bytes per I/O on average (by the mix's shares, sized by direction)
  // The directions the job issues: reads, writes, trims.
  std::array<bool, 3> directions() const;
};

// Bytes per I/O on average: bs, or the split's sizes by their weights.
double mean_bs(uint64_t bs, const std::vector<BsShare>& split);

// --bssplit SIZE/WEIGHT[:SIZE/WEIGHT...] (fio's bssplit, one list for every
// direction): a size with no weight shares what the others leave of 100
// equally, as in fio. Throws UsageError naming `flag`.
std::vector<BsShare> parse_bssplit(std::string_view flag, std::string_view text);
// "4k/50:64k/50", as parse_bssplit reads it.
std::string bssplit_text(const std::vector<BsShare>& split);

inline constexpr unsigned kMaxDepth = 65536;      // --iodepth, over all threads
inline constexpr unsigned kMaxRingDepth = 32768;  // IORING_MAX_ENTRIES: one ring's most

// Checks what can be checked without opening anything. Throws UsageError
// naming the flag. Also fills defaults that depend on other options.
void validate(JobSpec& job);

}  // namespace ioacct
