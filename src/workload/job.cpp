#include "workload/job.hpp"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>

#include "common/errors.hpp"
#include "common/units.hpp"
#include "engine/engine.hpp"

namespace ioacct {

const char* rw_name(RwMode rw) noexcept {
  switch (rw) {
    case RwMode::RandRead: return "randread";
    case RwMode::RandWrite: return "randwrite";
    case RwMode::Read: return "read";
    case RwMode::Write: return "write";
    case RwMode::RandRw: return "randrw";
    case RwMode::ReadWrite: return "rw";
    case RwMode::Trim: return "trim";
    case RwMode::RandTrim: return "randtrim";
  }
  return "?";
}

const char* acct_name(AcctLevel a) noexcept {
  switch (a) {
    case AcctLevel::Off: return "off";
    case AcctLevel::Basic: return "basic";
    case AcctLevel::Latency: return "latency";
    case AcctLevel::Full: return "full";
  }
  return "?";
}

const char* submit_policy_name(SubmitPolicy p) noexcept {
  switch (p) {
    case SubmitPolicy::Auto: return "auto";
    case SubmitPolicy::Pass: return "pass";
    case SubmitPolicy::Each: return "each";
  }
  return "?";
}

unsigned JobSpec::submit_batch_eff() const {
  return submit_batch ? std::min(submit_batch, depth_per_thread()) : depth_per_thread();
}
unsigned JobSpec::complete_batch_eff() const {
  return complete_batch ? std::min(complete_batch, depth_per_thread()) : 1;
}

double JobSpec::rate_per_thread() const {
  if (rate_iops) return static_cast<double>(rate_iops);
  if (rate_bw) return static_cast<double>(rate_bw) / bs_mean();
  return 0;
}

bool JobSpec::paced_by_direction() const {
  for (int d = 0; d < 3; ++d)
    if (rate_iops_dir[d] || rate_bw_dir[d]) return true;
  return false;
}

std::array<double, 3> JobSpec::rate_by_direction() const {
  std::array<double, 3> r{};
  for (int d = 0; d < 3; ++d)
    r[d] = rate_iops_dir[d] ? static_cast<double>(rate_iops_dir[d])
                            : static_cast<double>(rate_bw_dir[d]) /
                                  (sized_by_direction() ? mean_bs(0, sizes_of(d)) : bs_mean());
  return r;
}

uint64_t JobSpec::bs_align() const {
  uint64_t a = bs;
  for (const BsShare& s : bs_split) a = std::min<uint64_t>(a, s.size);
  const std::array<bool, 3> dirs = directions();
  if (sized_by_direction())
    for (int d = 0; d < 3; ++d)
      if (dirs[d])
        for (const BsShare& b : sizes_of(d)) a = std::min<uint64_t>(a, b.size);
  return a;
}

std::vector<BsShare> JobSpec::sizes_of(int d) const {
  if (!bs_split_dir[0].empty()) return bs_split_dir[static_cast<size_t>(d)];
  return {{static_cast<uint32_t>(bs_dir[static_cast<size_t>(d)]), 1}};
}

double JobSpec::bs_mean() const {
  if (!sized_by_direction()) return mean_bs(bs, bs_split);
  const std::array<double, 3> share = {static_cast<double>(rwmix_read),
                                       static_cast<double>(100 - rwmix_read - rwmix_trim),
                                       static_cast<double>(rwmix_trim)};
  double sum = 0;
  for (int d = 0; d < 3; ++d) sum += share[d] * mean_bs(0, sizes_of(d));
  return sum / 100;
}

std::array<bool, 3> JobSpec::directions() const {
  switch (rw) {
    case RwMode::RandRead:
    case RwMode::Read: return {true, false, false};
    case RwMode::RandWrite:
    case RwMode::Write: return {false, true, false};
    case RwMode::Trim:
    case RwMode::RandTrim: return {false, false, true};
    case RwMode::RandRw:
    case RwMode::ReadWrite: break;
  }
  return {rwmix_read > 0, rwmix_read + rwmix_trim < 100, rwmix_trim > 0};
}


namespace {

// --bs R,W[,T] or --bssplit R,W[,T]: sizes per direction where reads and
// writes mix, each as one --bs is checked.
void validate_direction_sizes(const JobSpec& job) {
  if (!job.sized_by_direction()) return;
  const char* flag = job.bs_split_dir[0].empty() ? "--bs" : "--bssplit";
  if (!rw_mixed(job.rw))
    throw UsageError(fmt::format("{}: sizes per direction (R,W,T) are for the mixes (--rw randrw or rw), not --rw {}; "
                                 "give one {}", flag, rw_name(job.rw), job.bs_split_dir[0].empty() ? "size" : "list"));
  if (!job.bs_split.empty()) throw UsageError("--bssplit: cannot be combined with --bs (a size of one share is a --bs)");
  for (int d = 0; d < 3; ++d)
    for (const BsShare& share : job.sizes_of(d)) {
      const uint64_t b = share.size;
      if (b == 0) throw UsageError(fmt::format("{}: a size must be at least 1 byte (try 4k)", flag));
      if (b > (1ull << 30))
        throw UsageError(fmt::format("{}: {} bytes is more than the 1 GiB one I/O can carry", flag, b));
      if (job.direct && b % 512 != 0)
        throw UsageError(fmt::format("{}: {} bytes is not a multiple of 512, which O_DIRECT needs "
                                     "(use --buffered, or a multiple of the device's block size)", flag, b));
    }
}

// --blockalign: one size's random offsets on another boundary. fio turns
// its random map off for it; ioacct keeps one only for mixed sizes, so it
// goes with one size, and with --verify only as --bs's own boundary.
void validate_blockalign(const JobSpec& job) {
  if (!job.blockalign) return;
  if (!job.bs_split.empty() || job.sized_by_direction())
    throw UsageError("--blockalign: takes one size (--bs); mixed sizes keep fio's random map on their smallest size's "
                     "grid");
  if (job.direct && job.blockalign % 512 != 0)
    throw UsageError(fmt::format("--blockalign: {} bytes is not a multiple of 512, which O_DIRECT needs (use "
                                 "--buffered, or a multiple of the device's block size)", job.blockalign));
  if (job.verify && job.blockalign != job.bs)
    throw UsageError("--blockalign: --verify checks blocks of --bs on --bs's boundaries; leave --blockalign out");
}

// The block size, the threads and the depth they share, the batches.
void validate_sizes_and_depth(const JobSpec& job) {
  if (job.bs == 0) throw UsageError("--bs: must be at least 1 byte (try 4k)");
  if (job.bs > (1ull << 30))
    throw UsageError(fmt::format("--bs: {} bytes is more than the 1 GiB one I/O can carry", job.bs));
  if (job.direct && job.bs % 512 != 0)
    throw UsageError(fmt::format("--bs: {} bytes is not a multiple of 512, which O_DIRECT needs "
                                 "(use --buffered, or a multiple of the device's block size)",
                                 job.bs));
  for (const BsShare& s : job.bs_split)
    if (job.direct && s.size % 512 != 0)
      throw UsageError(fmt::format("--bssplit: {} bytes is not a multiple of 512, which O_DIRECT needs "
                                   "(use --buffered, or multiples of the device's block size)",
                                   s.size));
  validate_direction_sizes(job);
  validate_blockalign(job);
  if (job.threads == 0 || job.threads > 1024)
    throw UsageError(fmt::format("--threads: {} is out of range (1 to 1024)", job.threads));
  if (job.iodepth == 0 || job.iodepth > kMaxDepth)
    throw UsageError(fmt::format("--iodepth: {} is out of range (1 to {})", job.iodepth, kMaxDepth));
  if (job.engine != EngineKind::Psync && job.iodepth < job.threads)
    throw UsageError(fmt::format("--iodepth: {} is the total over all threads and cannot be split "
                                 "over {} threads; give at least {}",
                                 job.iodepth, job.threads, job.threads));
  if (job.engine != EngineKind::Psync && job.iodepth % job.threads != 0)
    throw UsageError(fmt::format("--iodepth: {} does not split evenly over {} threads; "
                                 "give a multiple of {}", job.iodepth, job.threads, job.threads));
  if (job.engine != EngineKind::Psync && job.iodepth / job.threads > kMaxRingDepth)
    throw UsageError(fmt::format("--iodepth: {} in one thread is more than {} ({}); add --threads to spread it",
                                 job.iodepth / job.threads,
                                 job.engine == EngineKind::Libaio ? "one thread's AIO context takes"
                                                                  : "an io_uring ring holds",
                                 kMaxRingDepth));
  if (job.submit_batch > kMaxDepth) throw UsageError(fmt::format("--submit-batch: {} is out of range (1 to {})", job.submit_batch, kMaxDepth));
  if (job.complete_batch > kMaxDepth) throw UsageError(fmt::format("--complete-batch: {} is out of range (1 to {})", job.complete_batch, kMaxDepth));
  if (job.complete_max > kMaxDepth) throw UsageError(fmt::format("--complete-max: {} is out of range (1 to {})", job.complete_max, kMaxDepth));
  if (job.complete_max && job.complete_max < job.complete_batch)
    throw UsageError(fmt::format("--complete-max: {} is under --complete-batch {}: a wait for {} completions takes at "
                                 "least that many", job.complete_max, job.complete_batch, job.complete_batch));
}

// What the run does: the mix of reads, writes and trims, the distribution,
// the syncs, and what the engine can do of them.
void validate_mix(const JobSpec& job) {
  if (job.rwmix_read > 100) throw UsageError(fmt::format("--rwmix-read: {} is not a percentage (0 to 100)", job.rwmix_read));
  if (job.rwmix_trim > 100) throw UsageError(fmt::format("--rwmix-trim: {} is not a percentage (0 to 100)", job.rwmix_trim));
  if (job.rwmix_trim && !rw_mixed(job.rw))
    throw UsageError(fmt::format("--rwmix-trim: only applies to the mixes (--rw randrw or rw), not --rw {}", rw_name(job.rw)));
  if (job.rwmix_read + job.rwmix_trim > 100)
    throw UsageError(fmt::format("--rwmix-trim: {}% trims and {}% reads (--rwmix-read) make more than 100%",
                                 job.rwmix_trim, job.rwmix_read));
  if (job.distribution.kind != DistKind::Uniform && !rw_random(job.rw))
    throw UsageError(fmt::format("--random-distribution: --rw {} is sequential; the distribution only picks "
                                 "random offsets (use randread, randwrite, randrw or randtrim)", rw_name(job.rw)));
  const bool syncs = job.fsync_every || job.fdatasync_every;
  if (job.fsync_every && job.fdatasync_every)
    throw UsageError("--fdatasync: give --fsync or --fdatasync, not both");
  const bool has_writes = job.rw == RwMode::Write || job.rw == RwMode::RandWrite ||
                          (rw_mixed(job.rw) && job.rwmix_read + job.rwmix_trim < 100);
  if (syncs && !has_writes)
    throw UsageError(fmt::format("{}: syncs follow writes, and --rw {}{} writes nothing",
                                 job.fsync_every ? "--fsync" : "--fdatasync", rw_name(job.rw),
                                 rw_mixed(job.rw) ? " with these --rwmix percentages" : ""));
  const bool trims = rw_trims_only(job.rw) || job.rwmix_trim;
  if (job.engine == EngineKind::Nop && (trims || syncs))
    throw UsageError(fmt::format("{}: the nop engine neither trims nor syncs (use --engine uring or psync)",
                                 trims ? "--rw" : job.fsync_every ? "--fsync" : "--fdatasync"));
  if (trims && job.verify)
    throw UsageError("--verify: cannot check blocks this run trims (a trimmed block's content is undefined); "
                     "leave out the trims or --verify");
}

// How refills are submitted: only where the engine has refills to batch.
void validate_submission(const JobSpec& job) {
  if (job.submit_policy_given && job.lockstep())
    throw UsageError(fmt::format("--submit-policy: applies to a run refilled as reaped; --{} sets lockstep batches instead "
                                 "(give one or the other)", job.submit_batch ? "submit-batch" : "complete-batch"));
  if (job.submit_policy_given && job.complete_max)
    throw UsageError("--submit-policy: applies to a run refilled as reaped in passes; --complete-max takes the completions "
                     "a few at a time instead (give one or the other)");
  if (job.submit_policy_given && job.engine == EngineKind::Psync)
    throw UsageError("--submit-policy: psync submits each I/O in a syscall of its own; it has no refills to batch");
  if (job.submit_policy_given && job.engine == EngineKind::Libaio)
    throw UsageError("--submit-policy: applies to io_uring's refills; with libaio, --submit-batch 1 submits each I/O "
                     "in an io_submit of its own");
  if (job.split_submit && job.engine == EngineKind::Psync)
    throw UsageError("--split-submit: psync has no submission to split (each I/O is one syscall)");
}

// --rate-iops R,W,T / --rate R,W,T: only where reads and writes mix, each
// direction at least one I/O per window, as for one pace.
void validate_direction_pace(const JobSpec& job) {
  const char* flag = job.rate_bw_dir != std::array<uint64_t, 3>{} ? "--rate" : "--rate-iops";
  if (job.rate_iops || job.rate_bw || (job.rate_bw_dir != std::array<uint64_t, 3>{} &&
                                       job.rate_iops_dir != std::array<uint64_t, 3>{}))
    throw UsageError("--rate: give --rate or --rate-iops, not both");
  if (!rw_mixed(job.rw))
    throw UsageError(fmt::format("{}: a pace per direction (R,W,T) is for the mixes (--rw randrw or rw), not --rw {}; "
                                 "give one rate",
                                 flag, rw_name(job.rw)));
  const std::array<double, 3> rates = job.rate_by_direction();
  for (int d = 0; d < 3; ++d) {
    if (rates[d] > 1e9)
      throw UsageError(fmt::format("{}: more than 10^9 I/Os per second per thread cannot be paced", flag));
    if (job.rate_bw_dir[d] && job.rate_bw_dir[d] < job.bs)
      throw UsageError(fmt::format("--rate: {} bytes/s is less than one --bs block per second", job.rate_bw_dir[d]));
    if (rates[d] > 0 && job.runtime && static_cast<double>(job.runtime->count()) < 1e9 / rates[d])
      throw UsageError(fmt::format("--runtime: {} is shorter than one period of the {} pace (one I/O every {}); "
                                   "give a --runtime of at least {}, or --ios",
                                   format_duration_ns(static_cast<double>(job.runtime->count())),
                                   d == 0 ? "read" : d == 1 ? "write" : "trim", format_duration_ns(1e9 / rates[d]),
                                   format_duration_ns(1e9 / rates[d])));
  }
}

// How long it runs (10 s unless counted), how big, and at what pace.
void validate_count_and_pace(JobSpec& job) {
  if (job.runtime && job.runtime->count() == 0) throw UsageError("--runtime: must be more than 0");
  if (job.ios && *job.ios == 0) throw UsageError("--ios: must be at least 1");
  if (!job.runtime && !job.ios && !job.passes) job.runtime = std::chrono::seconds(10);
  if (job.size && *job.size == 0) throw UsageError("--size: must be more than 0");
  if (job.paced_by_direction()) return validate_direction_pace(job);
  if (job.rate_iops && job.rate_bw) throw UsageError("--rate: give --rate or --rate-iops, not both");
  if (job.rate_bw && job.rate_bw < job.bs)
    throw UsageError(fmt::format("--rate: {} bytes/s is less than one --bs block per second", job.rate_bw));
  if (job.rate_per_thread() > 1e9)
    throw UsageError(fmt::format("{}: more than 10^9 I/Os per second per thread cannot be paced",
                                 job.rate_iops ? "--rate-iops" : "--rate"));
  if (const double rate = job.rate_per_thread(); rate > 0 && job.runtime &&
      static_cast<double>(job.runtime->count()) < 1e9 / rate)
    // The window could hold one I/O at most, at its very start: its IOPS
    // would say nothing about the pace (1 I/O in 100 ms reads as 10/s).
    throw UsageError(fmt::format("--runtime: {} is shorter than one period of the pace ({} per thread: one I/O "
                                 "every {}); give a --runtime of at least {}, or --ios",
                                 format_duration_ns(static_cast<double>(job.runtime->count())),
                                 job.rate_iops ? fmt::format("--rate-iops {}", job.rate_iops)
                                               : fmt::format("--rate {}/s", format_size(job.rate_bw)),
                                 format_duration_ns(1e9 / rate), format_duration_ns(1e9 / rate)));
}

// Where it runs: the temporary file or named targets, and on which CPUs.
void validate_targets(JobSpec& job) {
  if (job.targets.empty()) {
    if (job.size) job.temp_size = *job.size;
    if (job.offset) throw UsageError("--offset: only applies to targets you name; the temporary file starts at 0");
  } else if (!job.dir.empty()) {
    throw UsageError("--dir: only applies when no target is given (it is where the temporary file goes)");
  }
  if (job.offset % 512 != 0 && job.direct)
    throw UsageError(fmt::format("--offset: {} is not a multiple of 512, which O_DIRECT needs", job.offset));
  if (!job.cpus.empty()) {
    cpu_set_t set;
    CPU_ZERO(&set);
    if (sched_getaffinity(0, sizeof(set), &set) == 0) {
      for (int c : job.cpus)
        if (c >= CPU_SETSIZE || !CPU_ISSET(c, &set))
          throw UsageError(fmt::format("--cpus: CPU {} is not available to this process (see 'nproc', 'taskset -p $$')", c));
    }
  }
}

// io_uring's modes: only on a ring, and only in combinations the kernel takes.
void validate_engine_modes(const JobSpec& job) {
  const UringOptions& u = job.uring;
  if (job.engine == EngineKind::Psync || job.engine == EngineKind::Libaio) {
    const bool aio = job.engine == EngineKind::Libaio;
    // A wish given either way names the flag as it was written.
    auto wished = [](FlagWish w, const char* on, const char* off) -> std::pair<bool, const char*> {
      return {w != FlagWish::Default, w == FlagWish::Off ? off : on};
    };
    const std::pair<bool, const char*> ring_only[] = {
        {u.sqpoll, "--sqpoll"}, {u.iopoll, "--iopoll"},
        wished(u.fixed_files, "--fixed-files", "--no-fixed-files"),
        wished(u.fixed_bufs, "--fixed-bufs", "--no-fixed-bufs"),
        wished(u.register_ring, "--register-ring", "--no-register-ring"),
        {u.vectored && !aio, "--vectored"},  // libaio: PREADV/PWRITEV
        {u.nowait && !aio, "--nowait"}, {u.force_async, "--force-async"}, {u.no_iowait, "--no-iowait"},
        {u.wait != WaitMode::Sleep, "--wait"},
        wished(u.single_issuer, "--single-issuer", "--no-single-issuer"),
        wished(u.defer_taskrun, "--defer-taskrun", "--no-defer-taskrun"),
        wished(u.coop_taskrun, "--coop-taskrun", "--no-coop-taskrun"),
        {u.no_sqarray != FlagWish::Default, "--no-sqarray"}};
    for (const auto& [on, flag] : ring_only)
      if (on)
        throw UsageError(fmt::format("{}: is an io_uring mode; --engine {} has {} (use --engine uring{})", flag,
                                     engine_name(job.engine, job.sync.call),
                                     aio ? "none of io_uring's modes" : "no ring",
                                     std::string_view(flag) == "--nowait" && !aio ? ", libaio or pvsync2" : ""));
    // The anatomy's stamps are io_uring's tracepoints or one syscall per
    // I/O; AIO has no tracepoint of its own, and one io_submit carries many.
    if (aio && job.anatomy)
      throw UsageError("--anatomy: libaio I/Os pass no tracepoint that marks their submission or completion (AIO has "
                       "none, and one io_submit carries many I/Os); use --engine uring or psync");
  }
  if (job.sync.hipri && !(job.engine == EngineKind::Psync && job.sync.call == SyncCall::Preadv2))
    throw UsageError(fmt::format("--hipri: RWF_HIPRI is a flag of preadv2/pwritev2 (--engine pvsync2); --engine {} {}",
                                 engine_name(job.engine, job.sync.call),
                                 job.engine == EngineKind::Uring || job.engine == EngineKind::Nop
                                     ? "polls with --iopoll" : "has no such flag"));
  if (!u.sqpoll) {
    if (u.sq_cpu >= 0) throw UsageError("--sq-cpu: only applies with --sqpoll");
    if (u.sq_idle_ms) throw UsageError("--sq-idle: only applies with --sqpoll");
    if (job.sq_shared) throw UsageError("--sq-shared: only applies with --sqpoll");
  }
  if (u.sqpoll && u.defer_taskrun == FlagWish::On)
    throw UsageError("--defer-taskrun: cannot be combined with --sqpoll (the SQ thread, not the submitter, runs the task work)");
  if (u.iopoll && !job.direct)
    throw UsageError("--iopoll: polled completions need O_DIRECT; leave out --buffered");
  if (u.vectored && u.fixed_bufs == FlagWish::On)
    throw UsageError("--vectored: cannot be combined with --fixed-bufs (READV/WRITEV take no registered buffer)");
  if (u.wait == WaitMode::Hybrid && u.hybrid_spin_ns == 0)
    throw UsageError("--wait: hybrid needs how long to spin first, e.g. hybrid:50us");
}

// --verify: what it can check; and the fixed default seed.
void validate_verify(JobSpec& job) {
  if (job.verify_during) job.verify = true;
  if (job.verify_delay.count() && !job.verify) throw UsageError("--verify-delay: only applies with --verify");
  if (job.verify && !rw_writes(job.rw))
    throw UsageError(fmt::format("--verify: checks what this run writes; --rw {} writes nothing "
                                 "(use write, randwrite or randrw)", rw_name(job.rw)));
  if (job.verify && job.engine == EngineKind::Nop)
    throw UsageError("--verify: the nop engine writes nothing to check");
  if (job.verify && !job.bs_split.empty())
    throw UsageError("--verify: checks blocks of one size; it cannot be combined with --bssplit (give --bs)");
  if (job.verify && job.sized_by_direction())
    throw UsageError("--verify: checks blocks of one size; give one --bs, not sizes per direction");
  if (job.verify && (job.bs % 512 || job.bs > (64u << 20)))
    throw UsageError(fmt::format("--bs: {} bytes with --verify must be a multiple of 512 (a checked "
                                 "block is made of 512-byte sectors) and at most 64 MiB", job.bs));
  if (!job.seed_given) job.seed = 0x10acc7;  // fixed default: runs are reproducible unless asked otherwise
}

// --latency-target: one thread (each would search a depth of its own, and
// the figures restart when the depth is found), timed, no count or pace.
void validate_latency_target(const JobSpec& job) {
  if (job.latency_target.count() == 0) return;
  const char* with = job.threads > 1 ? "--threads" : job.ios ? "--ios" : job.passes ? "--passes"
                   : job.rate_per_thread() > 0 || job.paced_by_direction() ? "--rate-iops/--rate"
                   : job.verify ? "--verify" : job.anatomy ? "--anatomy" : nullptr;
  if (with)
    throw UsageError(fmt::format("--latency-target: not with {} (the search runs one thread at a depth of its "
                                 "own for a --runtime, and counts afresh once it has found it)", with));
}

}  // namespace

void validate(JobSpec& job) {
  validate_sizes_and_depth(job);
  validate_mix(job);
  validate_submission(job);
  validate_count_and_pace(job);
  validate_targets(job);
  validate_engine_modes(job);
  validate_verify(job);
  validate_latency_target(job);
}

}  // namespace ioacct
