// bench's options in --help's order (cli/bench_options.hpp): what the job
// does, its shape, the engine, what is measured and where the results go.
// The pace, io_uring's modes and the fleet's options are rows of their own
// files, put in their places by bench_options().
#include "cli/bench_options.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <iterator>
#include <span>
#include <string>
#include <utility>
#include <variant>

#include "cli/cli.hpp"
#include "common/distribution.hpp"
#include "common/errors.hpp"
#include "common/units.hpp"
#include "engine/engine.hpp"
#include "report/report.hpp"

namespace ioacct {

unsigned count_in(std::string_view flag, std::string_view text, uint64_t min, uint64_t max) {
  const uint64_t v = parse_count(flag, text);
  if (v < min || v > max) throw UsageError(fmt::format("{}: {} is out of range ({} to {})", flag, text, min, max));
  return static_cast<unsigned>(v);
}

namespace {

unsigned thread_count(std::string_view f, std::string_view t) { return count_in(f, t, 1, 1024); }
unsigned pass_count(std::string_view f, std::string_view t) { return count_in(f, t, 1, 1'000'000); }
std::string text_of(std::string_view, std::string_view t) { return std::string(t); }

void decode_rw(const BenchGiven& g, JobSpec& j) {
  constexpr std::pair<std::string_view, RwMode> kModes[] = {
      {"randread", RwMode::RandRead}, {"randwrite", RwMode::RandWrite}, {"read", RwMode::Read},
      {"write", RwMode::Write},       {"randrw", RwMode::RandRw},       {"rw", RwMode::ReadWrite},
      {"readwrite", RwMode::ReadWrite}, {"trim", RwMode::Trim},         {"randtrim", RwMode::RandTrim}};
  const auto* m = std::find_if(std::begin(kModes), std::end(kModes), [&](const auto& k) { return k.first == g.text; });
  if (m == std::end(kModes))
    throw UsageError(fmt::format("--rw: '{}' is not one of randread, randwrite, read, write, randrw, rw, trim, randtrim",
                                 g.text));
  j.rw = m->second;
}

// --fsync / --fdatasync: after every N writes, N at least 1.
template <uint64_t JobSpec::*Every>
void sync_every(const BenchGiven& g, JobSpec& j) {
  j.*Every = parse_count(g.flag, g.text);
  if (!(j.*Every)) throw UsageError(fmt::format("{}: must be at least 1 (leave it out for no syncs)", g.flag));
}

void decode_bs(const BenchGiven& g, JobSpec& j) {
  if (g.text.find(',') == std::string::npos) {
    j.bs = parse_size("--bs", g.text);
    return;
  }
  // R,W[,T] as fio's bs=r,w,t: an empty field takes the default 4 KiB
  // (fio's), and a last field goes on to the directions after it.
  const auto fields = split_directions(g.text);
  if (!fields) throw UsageError(fmt::format("--bs: '{}' has more than three fields (reads, writes, trims)", g.text));
  for (size_t d = 0; d < 3; ++d) j.bs_dir[d] = (*fields)[d].empty() ? 4096 : parse_size("--bs", (*fields)[d]);
  j.bs = *std::max_element(j.bs_dir.begin(), j.bs_dir.end());
}

void decode_bssplit(const BenchGiven& g, JobSpec& j) {
  const BenchArgs& a = g.args;
  if (std::find(a.given.begin(), a.given.end(), "--bs") != a.given.end())
    throw UsageError("--bssplit: cannot be combined with --bs (a size of one share is a --bs)");
  j.bs = 0;
  if (a.bssplit.find(',') == std::string::npos) {
    j.bs_split = parse_bssplit("--bssplit", a.bssplit);
    for (const BsShare& s : j.bs_split) j.bs = std::max<uint64_t>(j.bs, s.size);
    return;
  }
  // R,W[,T] as fio's bssplit=r,w,t (the fields as --bs R,W's; an empty
  // one is fio's default 4k).
  const auto fields = split_directions(a.bssplit);
  if (!fields) throw UsageError(fmt::format("--bssplit: '{}' has more than three lists (reads, writes, trims)", a.bssplit));
  for (size_t d = 0; d < 3; ++d) {
    const std::string& f = (*fields)[d];
    j.bs_split_dir[d] = f.empty() ? std::vector<BsShare>{{4096, 100}} : parse_bssplit("--bssplit", f);
    for (const BsShare& s : j.bs_split_dir[d]) j.bs = std::max<uint64_t>(j.bs, s.size);
  }
}

void decode_blockalign(const BenchGiven& g, JobSpec& j) {
  j.blockalign = parse_size(g.flag, g.text);
  if (!j.blockalign) throw UsageError("--blockalign: must be at least 1 byte (leave it out for --bs's boundary)");
}

void decode_submit_policy(const BenchGiven& g, JobSpec& j) {
  j.submit_policy_given = true;
  if (g.text == "auto") j.submit_policy = SubmitPolicy::Auto;
  else if (g.text == "pass") j.submit_policy = SubmitPolicy::Pass;
  else if (g.text == "each") j.submit_policy = SubmitPolicy::Each;
  else throw UsageError(fmt::format("--submit-policy: '{}' is not one of auto, pass, each", g.text));
}

void decode_buffered(const BenchGiven& g, JobSpec& j) {
  if (g.args.direct) throw UsageError("--buffered: cannot be combined with --direct");
  j.direct = false;
}

void decode_dsync(const BenchGiven& g, JobSpec& j) {
  if (!rw_writes(j.rw))
    throw UsageError(fmt::format("--dsync: --rw {} does not write; O_DSYNC only changes writes", g.args.rw));
  j.dsync = true;
}

void decode_engine(const BenchGiven& g, JobSpec& j) {
  // The names are engine_name()'s: each engine, and each member of the psync family.
  constexpr std::pair<EngineKind, SyncCall> kEngines[] = {
      {EngineKind::Uring, SyncCall::Pread},  {EngineKind::Psync, SyncCall::Pread},   {EngineKind::Psync, SyncCall::Read},
      {EngineKind::Psync, SyncCall::Preadv}, {EngineKind::Psync, SyncCall::Preadv2}, {EngineKind::Nop, SyncCall::Pread},
      {EngineKind::Libaio, SyncCall::Pread}};
  const auto* e = std::find_if(std::begin(kEngines), std::end(kEngines),
                               [&](const auto& k) { return g.text == engine_name(k.first, k.second); });
  if (e == std::end(kEngines))
    throw UsageError(fmt::format("--engine: '{}' is not one of uring, psync, sync, pvsync, pvsync2, nop, libaio", g.text));
  j.engine = e->first;
  j.sync.call = e->second;
}

void decode_hipri_percentage(const BenchGiven& g, JobSpec& j) {
  if (!g.args.hipri) throw UsageError("--hipri-percentage: only applies with --hipri");
  j.sync.hipri_pct = percent_count(g.flag, g.text);
}

void decode_seed(const BenchGiven& g, JobSpec& j) {
  j.seed = parse_count(g.flag, g.text);
  j.seed_given = true;
}

// The anatomy follows the submitting thread into the kernel; an SQ thread
// submits in its place, and its requests are not linked.
void decode_anatomy(const BenchGiven& g, JobSpec& j) {
  if (g.args.sqpoll || g.args.sq_shared)
    throw UsageError("--anatomy: cannot follow I/Os submitted by an SQ thread; leave out --sqpoll/--sq-shared");
  j.anatomy = true;
}

void decode_log_interval(const BenchGiven& g, JobSpec& j) {
  j.log_interval = parse_duration(g.flag, g.text);
  if (j.log_interval.count() && j.log_interval < std::chrono::milliseconds(10))
    throw UsageError(fmt::format("--log-interval: {} is too short; at least 10ms (or 0s for no time series)", g.text));
}

// Not given: JobSpec's default (workload/job.hpp), the one place it is chosen.
void decode_acct(const BenchGiven& g, JobSpec& j) {
  constexpr AcctLevel kLevels[] = {AcctLevel::Off, AcctLevel::Basic, AcctLevel::Latency, AcctLevel::Full};
  const auto* l = std::find_if(std::begin(kLevels), std::end(kLevels), [&](AcctLevel k) { return g.text == acct_name(k); });
  if (l == std::end(kLevels))
    throw UsageError(fmt::format("--acct: '{}' is not one of off, basic, latency, full", g.text));
  j.acct = *l;
}

// --format names one of bench's sinks; the run reads it again to pick one.
void check_format(const BenchGiven& g, JobSpec&) { parse_format(g.flag, g.text, formats_of(bench_sinks())); }

// --job NAME:OPTIONS: one word each time, the options quoted in it.
void one_word_each(CLI::Option* o) {
  o->expected(1)->allow_extra_args(false)->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
}

// The rows before the fleet's (--start-at, --tag): the targets, what the
// job does and its shape.
constexpr BenchOption kRowsBeforeFleet[] = {
  {"targets", "TARGET", "Regular files or block devices (default: a temporary file)", &BenchArgs::targets,
   [](const BenchGiven& g, JobSpec& j) { j.targets = g.args.targets; }},
  {"--rw", "MODE", "randread|randwrite|read|write|randrw|rw|trim|randtrim (default randread)", &BenchArgs::rw,
   decode_rw},
  {"--rwmix-read", "PCT", "Percent of reads with --rw randrw or rw (default 50)", &BenchArgs::rwmix_read,
   into<percent_count, &JobSpec::rwmix_read>},
  {"--rwmix-trim", "PCT", "Percent of trims with --rw randrw or rw; the rest are writes (default 0)",
   &BenchArgs::rwmix_trim, into<percent_count, &JobSpec::rwmix_trim>},
  {"--random-distribution", "DIST",
   "Which blocks random I/O picks: uniform (default), zipf:THETA, pareto:H, normal:SIGMA%, zoned:A/R:... or "
   "zoned_abs:A/SIZE:... (fio's meaning)",
   &BenchArgs::random_distribution, into<parse_distribution, &JobSpec::distribution>},
  {"--fsync", "N", "An fsync of the file after every N writes (IORING_OP_FSYNC; psync: fsync(2))", &BenchArgs::fsync,
   sync_every<&JobSpec::fsync_every>},
  {"--fdatasync", "N", "An fdatasync of the file after every N writes", &BenchArgs::fdatasync,
   sync_every<&JobSpec::fdatasync_every>},
  {"--bs", "SIZE", "Block size of each I/O (default 4k); R,W[,T] per direction (a mixed --rw)", &BenchArgs::bs,
   decode_bs},
  {"--bssplit", "SPLIT",
   "Each I/O's size drawn from SIZE/WEIGHT shares, e.g. 4k/80:64k/20 (fio's bssplit; offsets on the smallest "
   "size's grid); R,W[,T] per direction",
   &BenchArgs::bssplit, decode_bssplit},
  {"--blockalign", "SIZE", "Random offsets on this boundary instead of --bs's (fio's blockalign)",
   &BenchArgs::blockalign, decode_blockalign},
  {"-d,--iodepth", "N", "I/Os in flight, total over all threads (default 32)", &BenchArgs::iodepth,
   into<depth_count, &JobSpec::iodepth>},
  {"--submit-batch", "N", "I/Os submitted per syscall (default min(depth per thread, 32))", &BenchArgs::submit_batch,
   into<depth_count, &JobSpec::submit_batch>},
  {"--complete-batch", "N", "Completions waited for per syscall (default min(depth per thread, 32))",
   &BenchArgs::complete_batch, into<depth_count, &JobSpec::complete_batch>},
  {"--complete-max", "N",
   "Completions taken per syscall at most, the rest left for the next (fio's iodepth_batch_complete_max; "
   "default: all there are)",
   &BenchArgs::complete_max, into<depth_count, &JobSpec::complete_max>},
  {"--submit-policy", "POLICY",
   "Refilled as reaped: submit each refill at once (each), a pass's refills with the next wait (pass), or for "
   "O_DIRECT whichever measures faster, a tie going to pass (auto, the default)",
   &BenchArgs::submit_policy, decode_submit_policy},
  {"--direct", "", "O_DIRECT: bypass the page cache (the default)", &BenchArgs::direct},
  {"--buffered", "", "Go through the page cache", &BenchArgs::buffered, decode_buffered},
  {"--dsync", "", "O_DSYNC: every write is durable before it completes (writes only)", &BenchArgs::dsync,
   decode_dsync},
  {"--size", "SIZE", "Bytes of each target to use (temporary file: its size, default 1g)", &BenchArgs::size,
   into<parse_size, &JobSpec::size>},
  {"--offset", "SIZE", "First byte of each target to use (default 0)", &BenchArgs::offset,
   into<parse_size, &JobSpec::offset>},
  {"--runtime", "DURATION", "Measured time (default 10s, unless --ios is given)", &BenchArgs::runtime,
   into<parse_duration, &JobSpec::runtime>},
  {"--ios", "N", "Stop after this many measured I/Os, over all threads", &BenchArgs::ios,
   into<parse_count, &JobSpec::ios>},
  {"--ramp", "DURATION", "Run this long first, excluded from the results (default 0s)", &BenchArgs::ramp,
   into<parse_duration, &JobSpec::ramp>},
};

// From several jobs in one run (docs/cli.md, "Several jobs") to the engine;
// the pace's rows follow.
constexpr BenchOption kRowsBeforePace[] = {
  {"--job", "NAME:OPTIONS",
   "A job of its own, side by side with the others: NAME:OPTIONS, e.g. 'reader:--rw randread --iodepth 1' (repeat "
   "for more; options outside --job apply to every job)",
   &BenchArgs::jobs, nullptr, one_word_each},
  {"--fio", "FILE.fio", "Run the jobs of a fio job file (docs/fio.md: which options map, and how)", &BenchArgs::fio},
  {"--startdelay", "DURATION", "With several jobs: start this job this long after the run", &BenchArgs::startdelay,
   into<parse_duration, &JobSpec::startdelay>},
  {"--stonewall", "", "With several jobs: start this job when every job before it has ended", &BenchArgs::stonewall,
   set_on<&JobSpec::stonewall>},
  {"--split-submit", "",
   "Submit and wait in separate io_uring_enter calls, so every I/O's slat is timed (one more syscall per batch)",
   &BenchArgs::split_submit, set_on<&JobSpec::split_submit>},
  {"-n,--threads", "N", "Threads, each with its own ring (default 1)", &BenchArgs::threads,
   into<thread_count, &JobSpec::threads>},
  {"--cpus", "LIST", "Pin thread i to the i-th CPU of this list, e.g. 0,2-3", &BenchArgs::cpus,
   into<parse_cpu_list, &JobSpec::cpus>},
  {"--engine", "ENGINE",
   "uring (io_uring), psync (pread/pwrite, depth 1 per thread; sync, pvsync, pvsync2 as fio's), nop "
   "(IORING_OP_NOP) or libaio (Linux AIO)",
   &BenchArgs::engine, decode_engine},
  {"--hipri", "", "RWF_HIPRI with --engine pvsync2: poll for each completion (devices with poll queues)",
   &BenchArgs::hipri, set_on<&JobSpec::sync, &SyncOptions::hipri>},
  {"--hipri-percentage", "PCT",
   "With --hipri: the share of calls that carry RWF_HIPRI (default 100; fio's hipri_percentage)",
   &BenchArgs::hipri_percentage, decode_hipri_percentage},
};

constexpr BenchOption kRowsBeforeUring[] = {
  {"--seed", "N", "Seed for offsets and data (default fixed: runs repeat)", &BenchArgs::seed, decode_seed},
  {"--max-errors", "N", "I/O errors tolerated before the run stops (default 0)", &BenchArgs::max_errors,
   into<parse_count, &JobSpec::max_errors>},
};

// What is measured and checked, and where the results go.
constexpr BenchOption kRowsAfterUring[] = {
  {"--anatomy", "", "Split each I/O's latency into stages at the kernel's tracepoints (eBPF)", &BenchArgs::anatomy,
   decode_anatomy},
  {"--log-interval", "DURATION", "Time series interval, in the JSON (default 1s; 0s: none)", &BenchArgs::log_interval,
   decode_log_interval},
  {"--acct", "LEVEL",
   "off (completions only), basic (+ CPU, SQ threads, devices at the window's edges), latency (+ per-I/O latency, "
   "in flight, time series; default) or full (+ the devices' exact busy time and depth, eBPF)",
   &BenchArgs::acct, decode_acct},
  {"--destroy-data", "", "Allow writes to block devices (destroys their contents)", &BenchArgs::destroy_data,
   set_on<&JobSpec::destroy_data>},
  {"--verify", "", "Write checkable blocks and re-read them all after the run", &BenchArgs::verify,
   set_on<&JobSpec::verify>},
  {"--verify-during", "", "--verify, and also check every read of a written block", &BenchArgs::verify_during,
   set_on<&JobSpec::verify_during>},
  {"--verify-delay", "DURATION", "Wait this long before the final --verify pass", &BenchArgs::verify_delay,
   into<parse_duration, &JobSpec::verify_delay>},
  {"--dir", "DIR", "Directory for the temporary file (default $TMPDIR or /tmp)", &BenchArgs::dir,
   into<text_of, &JobSpec::dir>},
  format_row<BenchArgs>("console, json or fio-json (fio 3.x's JSON layout; default console)", check_format),
  output_row<BenchArgs>("Write the report to FILE instead of stdout"),
  report_row<BenchArgs>("Also write a self-contained HTML report (charts, time series) to FILE"),
  progress_row<BenchArgs>("Print progress every second even when stderr is not a terminal"),
  // Test-only, so not in --help (docs/cli.md describes them).
  {"--inject-faults", "", "", &BenchArgs::inject_faults, into<parse_fault_spec, &JobSpec::faults>, hidden_option},
  {"--dump-intervals", "", "", &BenchArgs::dump_intervals, into<text_of, &JobSpec::dump_intervals>, hidden_option},
  // How --fio maps a fio job without time_based or size: each thread N
  // passes (fio's loops) over its targets.
  {"--passes", "", "", &BenchArgs::passes, into<pass_count, &JobSpec::passes>, hidden_option},
};

// A row's value as typed, and whether it is given (or has a default).
std::pair<const std::string*, bool> value_of(const BenchOption& r, const BenchArgs& a) {
  static const std::string kNone;
  if (const auto* flag = std::get_if<bool BenchArgs::*>(&r.field)) return {&kNone, a.**flag};
  if (const auto* one = std::get_if<std::string BenchArgs::*>(&r.field)) return {&(a.**one), !(a.**one).empty()};
  return {&kNone, !(a.*std::get<std::vector<std::string> BenchArgs::*>(r.field)).empty()};
}

}  // namespace

const std::vector<BenchOption>& bench_options() {
  static const std::vector<BenchOption> rows = [] {
    std::vector<BenchOption> all;
    for (std::span<const BenchOption> part :
         {std::span<const BenchOption>(kRowsBeforeFleet), bench_fleet_rows(), std::span<const BenchOption>(kRowsBeforePace),
          bench_pace_rows(), std::span<const BenchOption>(kRowsBeforeUring), bench_uring_rows(),
          std::span<const BenchOption>(kRowsAfterUring)})
      all.insert(all.end(), part.begin(), part.end());
    return all;
  }();
  return rows;
}

void decode_bench_options(const BenchArgs& a, JobSpec& j) {
  for (const BenchOption& r : bench_options()) {
    const auto [text, given] = value_of(r, a);
    if (r.decode && given) r.decode(BenchGiven{long_name(r.names), *text, a}, j);
  }
}

}  // namespace ioacct
