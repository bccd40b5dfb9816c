#include "cli/bench_cmd.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "acct/run_context.hpp"
#include "cli/bench_fleet.hpp"
#include "cli/bench_jobs.hpp"
#include "cli/bench_pace.hpp"
#include "cli/cli.hpp"
#include "cli/signals.hpp"
#include "cli/sq_advice.hpp"
#include "common/distribution.hpp"
#include "common/errors.hpp"
#include "common/output.hpp"
#include "common/units.hpp"
#include "report/fio_logs.hpp"
#include "report/html_report.hpp"
#include "report/report.hpp"
#include "runner/runner.hpp"
#include "workload/run_targets.hpp"
#include "workload/target.hpp"

namespace ioacct {
namespace {

unsigned parse_small(std::string_view flag, const std::string& text, uint64_t min, uint64_t max) {
  const uint64_t v = parse_count(flag, text);
  if (v < min || v > max) throw UsageError(fmt::format("{}: {} is out of range ({} to {})", flag, text, min, max));
  return static_cast<unsigned>(v);
}

}  // namespace

namespace {

// io_uring's modes (docs/cli.md, "io_uring modes"), and RWF_NOWAIT.
void add_uring_options(CLI::App* b, BenchArgs& a) {
  b->add_flag("--sqpoll", a.sqpoll, "Kernel SQ polling thread submits (IORING_SETUP_SQPOLL)");
  b->add_option("--sq-cpu", a.sq_cpu, "Pin the SQ thread to this CPU (IORING_SETUP_SQ_AFF)")->type_name("N");
  b->add_option("--sq-idle", a.sq_idle, "SQ thread idle time before it sleeps (sq_thread_idle; default 1s)")->type_name("DURATION");
  b->add_flag("--sq-shared", a.sq_shared, "All threads' rings share one SQ thread (IORING_SETUP_ATTACH_WQ)");
  b->add_flag("--iopoll", a.iopoll, "Polled completions (IORING_SETUP_IOPOLL; O_DIRECT on a device with poll queues)");
  b->add_flag("--fixed-files", a.fixed_files, "Demand registered files (IOSQE_FIXED_FILE; default: used if the kernel and limits allow)");
  b->add_flag("--no-fixed-files", a.no_fixed_files, "Do not register the files");
  b->add_flag("--fixed-bufs", a.fixed_bufs, "Demand registered buffers (READ_FIXED/WRITE_FIXED; default: used if the kernel and RLIMIT_MEMLOCK allow)");
  b->add_flag("--no-fixed-bufs", a.no_fixed_bufs, "Do not register the buffers");
  b->add_flag("--register-ring", a.register_ring, "Demand a registered ring fd (IORING_ENTER_REGISTERED_RING; default: used on 5.18+)");
  b->add_flag("--no-register-ring", a.no_register_ring, "Do not register the ring fd");
  b->add_flag("--vectored", a.vectored, "READV/WRITEV instead of READ/WRITE");
  b->add_flag("--single-issuer", a.single_issuer, "Demand IORING_SETUP_SINGLE_ISSUER (default: used if the kernel has it)");
  b->add_flag("--no-single-issuer", a.no_single_issuer, "Do not use IORING_SETUP_SINGLE_ISSUER");
  b->add_flag("--defer-taskrun", a.defer_taskrun, "Demand IORING_SETUP_DEFER_TASKRUN (default: used without --sqpoll)");
  b->add_flag("--no-defer-taskrun", a.no_defer_taskrun, "Do not use IORING_SETUP_DEFER_TASKRUN");
  b->add_flag("--coop-taskrun", a.coop_taskrun, "Demand IORING_SETUP_COOP_TASKRUN (default: used if the kernel has it)");
  b->add_flag("--no-coop-taskrun", a.no_coop_taskrun, "Do not use IORING_SETUP_COOP_TASKRUN");
  b->add_flag("--no-sqarray", a.no_sqarray, "Demand IORING_SETUP_NO_SQARRAY (needs liburing 2.5+)");
  b->add_option("--wait", a.wait, "sleep (in io_uring_enter), spin (poll the CQ) or hybrid:DURATION (spin, then sleep)")->type_name("MODE");
  b->add_flag("--no-iowait", a.no_iowait, "Waiting is not iowait (IORING_ENTER_NO_IOWAIT, 6.15+)");
  b->add_flag("--nowait", a.nowait, "RWF_NOWAIT: fail instead of blocking inline (io_uring, libaio, pvsync2)");
  b->add_flag("--force-async", a.force_async, "IOSQE_ASYNC: always through the io-wq workers");
}

}  // namespace

CLI::App* add_bench_command(CLI::App& app, BenchArgs& a) {
  CLI::App* b = app.add_subcommand("bench", "Run a workload on files or block devices and account for it.");
  // An empty value ("--runtime ''") is a mistake, never "use the default".
  const CLI::Validator not_empty(
      [](const std::string& v) { return v.empty() ? std::string("needs a value, not an empty string") : std::string(); },
      "", "not_empty");
  b->footer(
      "Sizes are IEC (4k = 4096 bytes, 1m, 2g, 64KiB), counts and rates SI (10k = 10000), "
      "durations need a unit (10s, 500ms, 2m).\n"
      "With no TARGET, a temporary file (--size, default 1 GiB) is created in $TMPDIR or --dir "
      "and removed on exit.\nSee docs/cli.md for every option.");
  b->add_option("targets", a.targets, "Regular files or block devices (default: a temporary file)")
      ->type_name("TARGET");
  b->add_option("--rw", a.rw, "randread|randwrite|read|write|randrw|rw|trim|randtrim (default randread)")->type_name("MODE");
  b->add_option("--rwmix-read", a.rwmix_read, "Percent of reads with --rw randrw or rw (default 50)")->type_name("PCT");
  b->add_option("--rwmix-trim", a.rwmix_trim, "Percent of trims with --rw randrw or rw; the rest are writes (default 0)")->type_name("PCT");
  b->add_option("--random-distribution", a.random_distribution,
                "Which blocks random I/O picks: uniform (default), zipf:THETA, pareto:H, normal:SIGMA%, zoned:A/R:... or zoned_abs:A/SIZE:... (fio's meaning)")
      ->type_name("DIST");
  b->add_option("--fsync", a.fsync, "An fsync of the file after every N writes (IORING_OP_FSYNC; psync: fsync(2))")->type_name("N");
  b->add_option("--fdatasync", a.fdatasync, "An fdatasync of the file after every N writes")->type_name("N");
  b->add_option("--bs", a.bs, "Block size of each I/O (default 4k); R,W[,T] per direction (a mixed --rw)")->type_name("SIZE");
  b->add_option("--bssplit", a.bssplit, "Each I/O's size drawn from SIZE/WEIGHT shares, e.g. 4k/80:64k/20 "
                "(fio's bssplit; offsets on the smallest size's grid); R,W[,T] per direction")->type_name("SPLIT");
  b->add_option("--blockalign", a.blockalign, "Random offsets on this boundary instead of --bs's (fio's blockalign)")->type_name("SIZE");
  b->add_option("-d,--iodepth", a.iodepth, "I/Os in flight, total over all threads (default 32)")->type_name("N");
  b->add_option("--submit-batch", a.submit_batch, "I/Os submitted per syscall (default min(depth per thread, 32))")->type_name("N");
  b->add_option("--complete-batch", a.complete_batch, "Completions waited for per syscall (default min(depth per thread, 32))")->type_name("N");
  b->add_option("--submit-policy", a.submit_policy,
                "Refilled as reaped: submit each refill at once (each), a pass's refills with the next wait (pass), "
                "or for O_DIRECT whichever measures faster, a tie going to pass (auto, the default)")
      ->type_name("POLICY");
  b->add_flag("--direct", a.direct, "O_DIRECT: bypass the page cache (the default)");
  b->add_flag("--buffered", a.buffered, "Go through the page cache");
  b->add_flag("--dsync", a.dsync, "O_DSYNC: every write is durable before it completes (writes only)");
  b->add_option("--size", a.size, "Bytes of each target to use (temporary file: its size, default 1g)")->type_name("SIZE");
  b->add_option("--offset", a.offset, "First byte of each target to use (default 0)")->type_name("SIZE");
  b->add_option("--runtime", a.runtime, "Measured time (default 10s, unless --ios is given)")->type_name("DURATION");
  b->add_option("--ios", a.ios, "Stop after this many measured I/Os, over all threads")->type_name("N");
  b->add_option("--ramp", a.ramp, "Run this long first, excluded from the results (default 0s)")->type_name("DURATION");
  add_fleet_options(b, a);
  // Several jobs in one run (docs/cli.md, "Several jobs").
  b->add_option("--job", a.jobs, "A job of its own, side by side with the others: NAME:OPTIONS, e.g. "
                "'reader:--rw randread --iodepth 1' (repeat for more; options outside --job apply to every job)")
      ->type_name("NAME:OPTIONS")->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  b->add_option("--fio", a.fio, "Run the jobs of a fio job file (docs/fio.md: which options map, and how)")->type_name("FILE.fio");
  b->add_option("--startdelay", a.startdelay, "With several jobs: start this job this long after the run")->type_name("DURATION");
  b->add_flag("--stonewall", a.stonewall, "With several jobs: start this job when every job before it has ended");
  b->add_flag("--split-submit", a.split_submit, "Submit and wait in separate io_uring_enter calls, so every I/O's slat is timed (one more syscall per batch)");
  b->add_option("-n,--threads", a.threads, "Threads, each with its own ring (default 1)")->type_name("N");
  b->add_option("--cpus", a.cpus, "Pin thread i to the i-th CPU of this list, e.g. 0,2-3")->type_name("LIST");
  b->add_option("--engine", a.engine, "uring (io_uring), psync (pread/pwrite, depth 1 per thread; sync, pvsync, pvsync2 as fio's), nop (IORING_OP_NOP) or libaio (Linux AIO)")->type_name("ENGINE");
  b->add_flag("--hipri", a.hipri, "RWF_HIPRI with --engine pvsync2: poll for each completion (devices with poll queues)");
  b->add_option("--hipri-percentage", a.hipri_percentage, "With --hipri: the share of calls that carry RWF_HIPRI (default 100; fio's hipri_percentage)")->type_name("PCT");
  add_pace_options(b, a);
  b->add_option("--seed", a.seed, "Seed for offsets and data (default fixed: runs repeat)")->type_name("N");
  b->add_option("--max-errors", a.max_errors, "I/O errors tolerated before the run stops (default 0)")->type_name("N");
  add_uring_options(b, a);
  b->add_flag("--anatomy", a.anatomy, "Split each I/O's latency into stages at the kernel's tracepoints (eBPF)");
  b->add_option("--log-interval", a.log_interval, "Time series interval, in the JSON (default 1s; 0s: none)")->type_name("DURATION");
  b->add_option("--acct", a.acct, "off (completions only), basic (+ CPU, SQ threads, devices at the window's edges), latency (+ per-I/O latency, in flight, time series; default) or full (+ the devices' exact busy time and depth, eBPF)")->type_name("LEVEL");
  b->add_flag("--destroy-data", a.destroy_data, "Allow writes to block devices (destroys their contents)");
  b->add_flag("--verify", a.verify, "Write checkable blocks and re-read them all after the run");
  b->add_flag("--verify-during", a.verify_during, "--verify, and also check every read of a written block");
  b->add_option("--verify-delay", a.verify_delay, "Wait this long before the final --verify pass")->type_name("DURATION");
  b->add_option("--dir", a.dir, "Directory for the temporary file (default $TMPDIR or /tmp)")->type_name("DIR");
  b->add_option("--format", a.format, "console, json or fio-json (fio 3.x's JSON layout; default console)")->type_name("FORMAT");
  b->add_option("-o,--output", a.output, "Write the report to FILE instead of stdout")->type_name("FILE");
  b->add_option("--report", a.report, "Also write a self-contained HTML report (charts, time series) to FILE")->type_name("FILE.html");
  b->add_flag("--progress", a.progress, "Print progress every second even when stderr is not a terminal");
  // Test-only, so not in --help (docs/cli.md describes it).
  b->add_option("--inject-faults", a.inject_faults, "")->group("");
  b->add_option("--dump-intervals", a.dump_intervals, "")->group("");
  // How --fio maps a fio job without time_based or size: each thread N passes (fio's loops) over its targets.
  b->add_option("--passes", a.passes, "")->group("");
  for (CLI::Option* o : b->get_options())
    if (o->get_type_size() != 0) o->check(not_empty);  // every option that takes a value
  return b;
}

namespace {

// What the job does: the direction and its mix, the distribution, syncs,
// when it starts, and how its submissions are timed.
void parse_workload(const BenchArgs& a, JobSpec& j) {
  if (a.rw == "randread") j.rw = RwMode::RandRead;
  else if (a.rw == "randwrite") j.rw = RwMode::RandWrite;
  else if (a.rw == "read") j.rw = RwMode::Read;
  else if (a.rw == "write") j.rw = RwMode::Write;
  else if (a.rw == "randrw") j.rw = RwMode::RandRw;
  else if (a.rw == "rw" || a.rw == "readwrite") j.rw = RwMode::ReadWrite;
  else if (a.rw == "trim") j.rw = RwMode::Trim;
  else if (a.rw == "randtrim") j.rw = RwMode::RandTrim;
  else throw UsageError(fmt::format("--rw: '{}' is not one of randread, randwrite, read, write, randrw, rw, trim, randtrim", a.rw));
  if (a.dsync && !rw_writes(j.rw))
    throw UsageError(fmt::format("--dsync: --rw {} does not write; O_DSYNC only changes writes", a.rw));
  j.dsync = a.dsync;
  j.rwmix_read = parse_small("--rwmix-read", a.rwmix_read, 0, 100);
  if (!a.rwmix_trim.empty()) j.rwmix_trim = parse_small("--rwmix-trim", a.rwmix_trim, 0, 100);
  if (!a.random_distribution.empty()) j.distribution = parse_distribution("--random-distribution", a.random_distribution);
  if (!a.fsync.empty()) {
    j.fsync_every = parse_count("--fsync", a.fsync);
    if (!j.fsync_every) throw UsageError("--fsync: must be at least 1 (leave it out for no syncs)");
  }
  if (!a.fdatasync.empty()) {
    j.fdatasync_every = parse_count("--fdatasync", a.fdatasync);
    if (!j.fdatasync_every) throw UsageError("--fdatasync: must be at least 1 (leave it out for no syncs)");
  }
  if (!a.startdelay.empty()) j.startdelay = parse_duration("--startdelay", a.startdelay);
  j.stonewall = a.stonewall;
  if (!a.passes.empty()) j.passes = parse_small("--passes", a.passes, 1, 1'000'000);
  j.split_submit = a.split_submit;
}

// How much at once and where: the block size, the depth and its batches,
// direct or buffered, the size and offset, how long, the threads and CPUs.
void parse_shape(const BenchArgs& a, JobSpec& j) {
  if (a.bs.find(',') != std::string::npos) {
    // R,W[,T] as fio's bs=r,w,t: an empty field takes the default 4 KiB
    // (fio's), and a last field goes on to the directions after it.
    const auto fields = split_directions(a.bs);
    if (!fields) throw UsageError(fmt::format("--bs: '{}' has more than three fields (reads, writes, trims)", a.bs));
    for (size_t d = 0; d < 3; ++d)
      j.bs_dir[d] = (*fields)[d].empty() ? 4096 : parse_size("--bs", (*fields)[d]);
    j.bs = *std::max_element(j.bs_dir.begin(), j.bs_dir.end());
  } else {
    j.bs = parse_size("--bs", a.bs);
  }
  if (!a.bssplit.empty()) {
    if (std::find(a.given.begin(), a.given.end(), "--bs") != a.given.end())
      throw UsageError("--bssplit: cannot be combined with --bs (a size of one share is a --bs)");
    j.bs = 0;
    if (a.bssplit.find(',') != std::string::npos) {
      // R,W[,T] as fio's bssplit=r,w,t (the fields as --bs R,W's; an empty
      // one is fio's default 4k).
      const auto fields = split_directions(a.bssplit);
      if (!fields)
        throw UsageError(fmt::format("--bssplit: '{}' has more than three lists (reads, writes, trims)", a.bssplit));
      for (size_t d = 0; d < 3; ++d) {
        const std::string& f = (*fields)[d];
        j.bs_split_dir[d] = f.empty() ? std::vector<BsShare>{{4096, 100}} : parse_bssplit("--bssplit", f);
        for (const BsShare& s : j.bs_split_dir[d]) j.bs = std::max<uint64_t>(j.bs, s.size);
      }
    } else {
      j.bs_split = parse_bssplit("--bssplit", a.bssplit);
      for (const BsShare& s : j.bs_split) j.bs = std::max<uint64_t>(j.bs, s.size);
    }
  }
  if (!a.blockalign.empty()) {
    j.blockalign = parse_size("--blockalign", a.blockalign);
    if (!j.blockalign) throw UsageError("--blockalign: must be at least 1 byte (leave it out for --bs's boundary)");
  }
  j.iodepth = parse_small("--iodepth", a.iodepth, 1, kMaxDepth);
  if (!a.submit_batch.empty()) j.submit_batch = parse_small("--submit-batch", a.submit_batch, 1, kMaxDepth);
  if (!a.complete_batch.empty()) j.complete_batch = parse_small("--complete-batch", a.complete_batch, 1, kMaxDepth);
  if (!a.submit_policy.empty()) {
    j.submit_policy_given = true;
    if (a.submit_policy == "auto") j.submit_policy = SubmitPolicy::Auto;
    else if (a.submit_policy == "pass") j.submit_policy = SubmitPolicy::Pass;
    else if (a.submit_policy == "each") j.submit_policy = SubmitPolicy::Each;
    else throw UsageError(fmt::format("--submit-policy: '{}' is not one of auto, pass, each", a.submit_policy));
  }
  if (a.direct && a.buffered) throw UsageError("--buffered: cannot be combined with --direct");
  j.direct = !a.buffered;
  if (!a.size.empty()) j.size = parse_size("--size", a.size);
  if (!a.offset.empty()) j.offset = parse_size("--offset", a.offset);
  if (!a.runtime.empty()) j.runtime = parse_duration("--runtime", a.runtime);
  if (!a.ios.empty()) j.ios = parse_count("--ios", a.ios);
  if (!a.ramp.empty()) j.ramp = parse_duration("--ramp", a.ramp);
  j.threads = parse_small("--threads", a.threads, 1, 1024);
  if (!a.cpus.empty()) j.cpus = parse_cpu_list("--cpus", a.cpus);
}

// The engine, the pace, the seed, and what errors it may take.
void parse_engine_and_pace(const BenchArgs& a, JobSpec& j) {
  // The names are engine_name()'s: each engine, and each member of the psync family.
  constexpr std::pair<EngineKind, SyncCall> engines[] = {
      {EngineKind::Uring, SyncCall::Pread},  {EngineKind::Psync, SyncCall::Pread},   {EngineKind::Psync, SyncCall::Read},
      {EngineKind::Psync, SyncCall::Preadv}, {EngineKind::Psync, SyncCall::Preadv2}, {EngineKind::Nop, SyncCall::Pread},
      {EngineKind::Libaio, SyncCall::Pread}};
  const auto* e = std::find_if(std::begin(engines), std::end(engines),
                               [&](const auto& k) { return a.engine == engine_name(k.first, k.second); });
  if (e == std::end(engines))
    throw UsageError(fmt::format("--engine: '{}' is not one of uring, psync, sync, pvsync, pvsync2, nop, libaio",
                                 a.engine));
  j.engine = e->first;
  j.sync.call = e->second;
  j.sync.hipri = a.hipri;
  if (!a.hipri_percentage.empty()) {
    if (!a.hipri) throw UsageError("--hipri-percentage: only applies with --hipri");
    j.sync.hipri_pct = parse_small("--hipri-percentage", a.hipri_percentage, 0, 100);
  }
  parse_pace(a, j);
  if (!a.seed.empty()) {
    j.seed = parse_count("--seed", a.seed);
    j.seed_given = true;
  }
  j.max_errors = parse_count("--max-errors", a.max_errors);
  j.destroy_data = a.destroy_data;
}

// io_uring's modes: the SQ thread, polling, flags wished on or off, the wait.
void parse_uring(const BenchArgs& a, JobSpec& j) {
  UringOptions& u = j.uring;
  u.sqpoll = a.sqpoll;
  if (!a.sq_cpu.empty()) {
    const uint64_t cpu = parse_id("--sq-cpu", a.sq_cpu, "a CPU number");
    if (cpu > 65535) throw UsageError(fmt::format("--sq-cpu: {} is out of range (0 to 65535)", a.sq_cpu));
    u.sq_cpu = static_cast<int>(cpu);
  }
  if (!a.sq_idle.empty()) {
    const auto d = parse_duration("--sq-idle", a.sq_idle);
    if (d.count() % 1'000'000 || d.count() == 0)
      throw UsageError(fmt::format("--sq-idle: '{}' must be a whole number of milliseconds, at least 1ms "
                                   "(sq_thread_idle is in ms)", a.sq_idle));
    u.sq_idle_ms = static_cast<uint32_t>(d.count() / 1'000'000);
  }
  j.sq_shared = a.sq_shared;
  u.iopoll = a.iopoll;
  u.vectored = a.vectored;
  // RWF_NOWAIT is io_uring's mode, and a per-call flag of pvsync2's preadv2.
  if (j.engine == EngineKind::Psync && j.sync.call == SyncCall::Preadv2) j.sync.nowait = a.nowait;
  else u.nowait = a.nowait;
  u.force_async = a.force_async;
  u.no_iowait = a.no_iowait;
  auto wish = [](bool on, bool off, const char* flag) {
    if (on && off) throw UsageError(fmt::format("{}: given both on and off", flag));
    return on ? FlagWish::On : off ? FlagWish::Off : FlagWish::Default;
  };
  u.single_issuer = wish(a.single_issuer, a.no_single_issuer, "--single-issuer");
  u.defer_taskrun = wish(a.defer_taskrun, a.no_defer_taskrun, "--defer-taskrun");
  u.coop_taskrun = wish(a.coop_taskrun, a.no_coop_taskrun, "--coop-taskrun");
  u.no_sqarray = a.no_sqarray ? FlagWish::On : FlagWish::Default;
  u.fixed_files = wish(a.fixed_files, a.no_fixed_files, "--fixed-files");
  u.fixed_bufs = wish(a.fixed_bufs, a.no_fixed_bufs, "--fixed-bufs");
  u.register_ring = wish(a.register_ring, a.no_register_ring, "--register-ring");
  if (a.wait == "sleep") {
    u.wait = WaitMode::Sleep;
  } else if (a.wait == "spin") {
    u.wait = WaitMode::Spin;
  } else if (a.wait.rfind("hybrid", 0) == 0) {
    u.wait = WaitMode::Hybrid;
    if (a.wait.size() > 7 && a.wait[6] == ':')
      u.hybrid_spin_ns = static_cast<uint64_t>(parse_duration("--wait", a.wait.substr(7)).count());
    else if (a.wait != "hybrid")
      throw UsageError(fmt::format("--wait: '{}' is not sleep, spin or hybrid:DURATION", a.wait));
  } else {
    throw UsageError(fmt::format("--wait: '{}' is not sleep, spin or hybrid:DURATION", a.wait));
  }
}

// What is measured and checked: the anatomy, the time series, the
// accounting level, faults (tests), verify; and the targets.
void parse_accounting(const BenchArgs& a, JobSpec& j) {
  j.dump_intervals = a.dump_intervals;
  // The anatomy follows the submitting thread into the kernel; an SQ thread
  // submits in its place, and its requests are not linked.
  if (a.anatomy && (a.sqpoll || a.sq_shared))
    throw UsageError("--anatomy: cannot follow I/Os submitted by an SQ thread; leave out --sqpoll/--sq-shared");
  j.anatomy = a.anatomy;
  j.log_interval = parse_duration("--log-interval", a.log_interval);
  if (j.log_interval.count() && j.log_interval < std::chrono::milliseconds(10))
    throw UsageError(fmt::format("--log-interval: {} is too short; at least 10ms (or 0s for no time series)", a.log_interval));
  // Empty: JobSpec's default (workload/job.hpp), the one place it is chosen.
  if (a.acct.empty()) {}
  else if (a.acct == "off") j.acct = AcctLevel::Off;
  else if (a.acct == "basic") j.acct = AcctLevel::Basic;
  else if (a.acct == "latency") j.acct = AcctLevel::Latency;
  else if (a.acct == "full") j.acct = AcctLevel::Full;
  else throw UsageError(fmt::format("--acct: '{}' is not one of off, basic, latency, full", a.acct));
  if (!a.inject_faults.empty()) j.faults = parse_fault_spec("--inject-faults", a.inject_faults);
  j.verify = a.verify;
  j.verify_during = a.verify_during;
  if (!a.verify_delay.empty()) j.verify_delay = parse_duration("--verify-delay", a.verify_delay);
  j.targets = a.targets;
  j.dir = a.dir;
}

}  // namespace

JobSpec to_job(const BenchArgs& a) {
  // One job: to_jobs() takes --job and --fio apart before it comes here, so
  // they can only reach this from a compare variant.
  if (!a.jobs.empty() || !a.fio.empty())
    throw UsageError(fmt::format("{}: a variant is one job; several jobs are a bench run of their own",
                                 a.jobs.empty() ? "--fio" : "--job"));
  JobSpec j;
  parse_workload(a, j);
  parse_shape(a, j);
  parse_engine_and_pace(a, j);
  parse_uring(a, j);
  parse_accounting(a, j);
  parse_format("--format", a.format, formats_of(bench_sinks()));
  validate(j);
  return j;
}

namespace {

// --passes N (a fio job without time_based or size): each thread's --ios
// share is N passes over the job's targets, now that their ranges are known;
// a --ios given too (fio's number_ios) stops it sooner.
void resolve_passes(JobSpec& job, const Targets& targets) {
  if (!job.passes) return;
  uint64_t bytes = 0;
  for (const auto& t : targets.list) bytes += t.range;
  const auto blocks = static_cast<uint64_t>(static_cast<double>(bytes) / job.bs_mean());  // a pass ends at its bytes
  const uint64_t ios = std::max<uint64_t>(1, blocks) * job.passes * job.threads;
  job.ios = job.ios ? std::min(*job.ios, ios) : ios;
}

// The mean time between bursts of new SQEs on the rings an SQ thread serves
// (each bench thread has a ring): a paced ring's period, else its share of
// the window per I/O (per batch with --submit-batch); 0 when unknown. Several
// jobs: the run's total, unpaced.
double submit_gap_ns(const std::vector<JobSpec>& jobs, const RunResult& r, const SqThreadStat& sq) {
  unsigned threads = 0;
  for (const auto& j : jobs) threads += j.threads;
  if (!threads || !r.total.ios || !r.window_ns) return 0;
  double gap = static_cast<double>(r.window_ns) * threads / static_cast<double>(r.total.ios);
  if (jobs.size() == 1 && jobs[0].rate_per_thread() > 0) gap = 1e9 / jobs[0].rate_per_thread();
  else if (jobs.size() == 1 && jobs[0].submit_batch) gap *= jobs[0].submit_batch;
  return gap / std::max(1u, sq.rings);
}

// Before anything is opened: what the jobs as given cannot do or will do
// otherwise than asked (said on stderr), fio-json's own needs, and whether
// the outputs and the engine are there.
void check_before_run(const BenchArgs& a, std::vector<JobSpec>& jobs, const std::vector<FioLogs>& fio_logs,
                      Format format) {
  // fio's write_lat_log writes _slat and _clat logs beside _lat: the
  // series keeps each interval's slat and clat for them.
  for (size_t i = 0; i < fio_logs.size() && i < jobs.size(); ++i) jobs[i].interval_split = !fio_logs[i].lat.empty();
  for (const FioLogs& l : fio_logs)
    if (l.any() && !l.averaged)
      fmt::print(stderr, "ioacct: {}: fio logs every I/O without log_avg_msec; ioacct writes the average of each "
                 "{} (give log_avg_msec=N for another interval)\n", a.fio,
                 format_duration_ns(static_cast<double>(jobs.front().log_interval.count())));
  const JobSpec& first = jobs.front();
  // Its per-I/O slots are laid out for one job's threads and depth.
  if (jobs.size() > 1 && std::any_of(jobs.begin(), jobs.end(), [](const JobSpec& j) { return j.anatomy; }))
    throw UsageError("--anatomy: takes one job; run it without --job/--fio, or on one job alone");
  // The search counts afresh once it has found its depth, the run's device
  // and CPU samples too: they are one job's.
  if (jobs.size() > 1 &&
      std::any_of(jobs.begin(), jobs.end(), [](const JobSpec& j) { return j.latency_target.count() > 0; }))
    throw UsageError("--latency-target: takes one job; run it without --job/--fio, or on one job alone");
  // fio submits and reaps in separate calls, which is what gives each I/O
  // its slat and clat; fio-json's clat percentiles and fio's _slat and
  // _clat logs need the same.
  bool split = false;
  for (size_t i = 0; i < jobs.size(); ++i) {
    JobSpec& j = jobs[i];
    if (j.engine != EngineKind::Psync && !j.split_submit && (format == Format::FioJson || j.interval_split))
      split = j.split_submit = true;
  }
  if (split)
    fmt::print(stderr, "ioacct: {}: each batch is submitted in a call of its own (--split-submit), as fio submits, "
               "so that every I/O has fio's slat and clat\n",
               format == Format::FioJson ? "--format fio-json" : "write_lat_log");
  if (jobs.size() == 1 && first.engine == EngineKind::Psync && a.iodepth_given && first.iodepth > first.threads)
    fmt::print(stderr, "warning: --engine psync does one I/O at a time per thread, so --iodepth {} "
               "is not used; add --threads N for N I/Os in flight\n", first.iodepth);
  if (std::any_of(jobs.begin(), jobs.end(), [](const JobSpec& j) { return j.engine == EngineKind::Libaio && !j.direct; }))
    fmt::print(stderr, "warning: --engine libaio without O_DIRECT: the kernel runs buffered AIO inside io_submit, "
               "one I/O at a time per thread, whatever the --iodepth; leave out --buffered (fio: direct=1) or use "
               "--engine uring\n");
  if (!a.output.empty()) check_output_writable("--output", a.output);
  if (!a.report.empty()) check_output_writable("--report", a.report);

  // Fail fast, before a 1 GiB temporary file is written, if io_uring is off.
  for (const JobSpec& job : jobs) check_engine_available(job.engine, job.uring, job.depth_per_thread());
}

// What the run tells the user while it goes: the start-up line, progress
// (on a terminal, or with --progress), and the verify phase.
RunHooks progress_hooks(const BenchArgs& a, const std::vector<JobSpec>& jobs, StopSignals& signals) {
  const bool tty = isatty(STDERR_FILENO);
  const bool show_progress = a.progress || tty;
  RunHooks hooks;
  hooks.wait_stop_signal = [&signals](int ms) { return signals.wait(ms); };
  hooks.on_start = [&jobs](const RunResult& ctx) { fmt::print(stderr, "{}\n", format_start_line(jobs, ctx)); };
  if (show_progress) {
    hooks.on_progress = [tty](const Progress& p) {
      std::string line = fmt::format("[{:5.1f}s] {}{} IOPS  {}  in flight {}{}", p.elapsed_s,
                                     p.ramping ? "ramp  " : "", format_count(p.iops),
                                     format_bandwidth(p.bytes_per_s), p.inflight,
                                     p.eta_s >= 0 ? fmt::format("  ETA {:.0f}s", p.eta_s) : "");
      fmt::print(stderr, fmt::runtime(tty ? "\r{}\033[K" : "{}\n"), line);
    };
  }
  hooks.on_verify = [show_progress, tty](int64_t delay_ns) {
    if (show_progress && tty) fmt::print(stderr, "\r\033[K");
    fmt::print(stderr, "ioacct: verifying every block this run wrote{}\n",
               delay_ns ? fmt::format(", after waiting {} (--verify-delay)", format_duration_ns(static_cast<double>(delay_ns))) : "");
  };
  return hooks;
}

// The results, where they were asked for: stdout or --output, --report,
// fio's log files, --dump-intervals.
void write_results(const BenchArgs& a, const std::vector<JobSpec>& jobs, const std::vector<FioLogs>& fio_logs,
                   const RunResult& r, Format format, const std::vector<std::string>& argv) {
  const JobSpec& first = jobs.front();
  const RunContext ctx = fleet_context(a);
  write_output(render_bench(format, jobs, r, ctx, argv), a.output);
  if (!a.report.empty()) write_atomically(a.report, html_bench_report(jobs, r, to_json(jobs, &r, ctx, argv)), "--report");
  // fio writes its logs where it runs, named by their prefix.
  for (size_t i = 0; i < fio_logs.size() && i < jobs.size(); ++i)
    for (const FioLogFile& f : fio_log_files(fio_logs[i], static_cast<unsigned>(i + 1), jobs[i], r))
      write_atomically(f.path, f.text, "write_*_log");
  if (!first.dump_intervals.empty()) {
    std::string text;
    for (const auto& t : r.threads)
      for (const auto& [a0, b0] : t.intervals) text += fmt::format("{} {}\n", a0, b0);
    write_atomically(first.dump_intervals, text, "--dump-intervals");
  }
}

// After the run: what the user should know before trusting it (stderr), and
// the exit: the signal's, or an error for a run that stopped on errors, a
// fatal one or a block that did not verify.
int finish_run(const std::vector<JobSpec>& jobs, const RunResult& r, const StopSignals& signals) {
  const JobSpec& first = jobs.front();
  auto interrupted_exit = [&] { return 128 + signals.received(); };
  if (r.anatomy && r.anatomy->unavailable)
    fmt::print(stderr, "warning: --anatomy: {}; the anatomy is left out (null in the JSON)\n", *r.anatomy->unavailable);
  if (first.latency_target.count() && !first.latency_run && r.total.latency_depth && !r.total.latency_found &&
      !r.interrupted &&
      r.first_error.empty())
    fmt::print(stderr, "warning: --latency-target: the search had not settled when the run ended (depth {} then); "
               "the figures cover every depth it tried: give a longer --runtime or a shorter --latency-window\n",
               r.total.latency_depth);

  if (r.interrupted && r.verify && r.verify_skipped && r.verify->checked_after < r.verify->written)
    fmt::print(stderr, "warning: --verify: interrupted, so {} of the {} blocks this run wrote were re-read and the "
               "other {} never checked; run it again to the end to check every block\n", r.verify->checked_after,
               r.verify->written, r.verify->written - r.verify->checked_after);
  if (r.interrupted) {
    fmt::print(stderr, "ioacct: interrupted; the results above cover the time until the stop\n");
    return signals.received() ? interrupted_exit() : 130;
  }
  if (r.stop_reason == StopReason::Errors)
    throw RuntimeError(fmt::format("the run stopped after {} I/O error{} (first: {}); "
                                   "--max-errors {} allows more", r.error_count(),
                                   r.error_count() == 1 ? "" : "s", r.first_error, first.max_errors));
  if (r.stop_reason == StopReason::Fatal) throw RuntimeError(r.first_error);
  if (r.verify && r.verify->mismatches) {
    const auto& f = r.verify->findings.front();
    throw RuntimeError(fmt::format("--verify: {} block{} did not read back as written (first: offset {}, {})",
                                   r.verify->mismatches, r.verify->mismatches == 1 ? "" : "s", f.offset, f.kind));
  }
  for (const ThreadResult& t : r.threads)
    if (!t.floor_missed.empty())  // fio ends such a job with an error too
      throw RuntimeError(fmt::format("{}thread {}: {}; the thread stopped there (the results above end with it)",
                                     jobs.size() > 1 ? fmt::format("job {}: ", jobs[t.job].name) : "", t.index,
                                     t.floor_missed));
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobSpec& job = jobs[i];
    const uint64_t window = r.jobs[i].window_ns;
    if (job.runtime && r.stop_reason == StopReason::Runtime &&
        static_cast<double>(window) > 1.1 * static_cast<double>(job.runtime->count()))
      fmt::print(stderr, "warning: {}the measured window is {} for --runtime {}: the last batch took that much longer "
                 "to complete (a stalled device, or a busy machine); rates are over the window as measured, "
                 "but check the latency maximum before trusting them\n",
                 jobs.size() > 1 ? fmt::format("job {}: ", job.name) : "",
                 format_duration_ns(static_cast<double>(window)),
                 format_duration_ns(static_cast<double>(job.runtime->count())));
  }
  if (r.accounting)
    for (const auto& sq : r.accounting->sq_threads)
      fmt::print(stderr, "{}", sq_thread_warning(sq, submit_gap_ns(jobs, r, sq), first.uring.sq_idle_ms));
  if (r.error_count())
    fmt::print(stderr, "warning: {} {} tolerated (--max-errors {}); the results count "
               "only completed I/Os; check the device ('dmesg') before trusting them\n",
               plural(r.error_count(), "I/O error"), r.error_count() == 1 ? "was" : "were", first.max_errors);
  return kExitOk;
}

}  // namespace

int run_bench_command(const BenchArgs& a, const std::vector<std::string>& argv) {
  std::vector<FioLogs> fio_logs;
  std::vector<JobSpec> jobs = to_jobs(a, &fio_logs);
  const Format format = parse_format("--format", a.format, formats_of(bench_sinks()));
  check_before_run(a, jobs, fio_logs, format);
  fleet_context(a);  // a bad --tag is a usage error before the run, not after it
  apply_start_at(a, jobs);
  const JobSpec& first = jobs.front();

  StopSignals signals;  // before any thread exists
  auto emit = [&](const std::string& text) { write_output(text, a.output); };
  auto interrupted_exit = [&] { return 128 + signals.received(); };

  std::vector<Targets> targets;
  try {
    if (jobs.size() == 1) targets.push_back(open_targets(first, [&] { return signals.wait(0); }));
    else targets = open_run_targets(jobs, [&] { return signals.wait(0); });
  } catch (const RuntimeError&) {
    if (!signals.received()) throw;
    fmt::print(stderr, "ioacct: interrupted before the run started\n");
    // Only JSON has a form for a run that never started.
    if (format == Format::Json) emit(to_json(jobs, nullptr, fleet_context(a), argv).dump(2) + "\n");
    return interrupted_exit();
  }
  std::vector<const Targets*> target_ptrs;
  for (size_t i = 0; i < jobs.size(); ++i) {
    check_targets(jobs[i], targets[i]);
    resolve_passes(jobs[i], targets[i]);
    target_ptrs.push_back(&targets[i]);
  }

  RunResult r = run_jobs(jobs, target_ptrs, progress_hooks(a, jobs, signals));
  if (isatty(STDERR_FILENO)) fmt::print(stderr, "\r\033[K");  // the progress line
  if (r.verify_skipped && signals.received()) r.interrupted = true;
  warn_late_start(jobs, r);
  write_results(a, jobs, fio_logs, r, format, argv);
  return finish_run(jobs, r, signals);
}

}  // namespace ioacct
