// fio's options, one row each: names, decoder, docs (fio_options.hpp).
#include "workload/fio_options.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "common/distribution.hpp"
#include "common/errors.hpp"
#include "common/units.hpp"

namespace ioacct {

// ------------------------------------------------------------- decoders

namespace {

bool has_percent(FioValues& v, const FioOption& o) {
  if (o.value.find('%') == std::string::npos) return false;
  v.bad(o, "a percentage of the file is not supported; give bytes");
  return true;
}

// An io_uring mode that is one ioacct flag: kept with where it was set, for
// fio_words() to refuse on another engine.
template <const char* Flag>
void uring_flag(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (v.boolean(*s.opt).value_or(false)) j.uring_flags.emplace_back(s.opt, Flag);
}
constexpr char kFlagSqpoll[] = "--sqpoll", kFlagIopoll[] = "--iopoll", kFlagFixedBufs[] = "--fixed-bufs",
               kFlagFixedFiles[] = "--fixed-files";

void decode_kb_base(FioValues& v, const FioSetting& s, FioSpec&) {
  const auto n = v.integer(*s.opt);
  if (n && (*n == 1000 || *n == 1024)) v.kb_base = static_cast<unsigned>(*n);
  else if (n) v.bad(*s.opt, fmt::format("'{}' is not 1000 or 1024", s.opt->value));
}

void decode_name(FioValues&, const FioSetting& s, FioSpec& j) {
  if (s.opt->has_value) j.name = s.opt->value;
}

void decode_rw(FioValues& v, const FioSetting& s, FioSpec& j) {
  const std::string& x = s.opt->value;
  static const std::set<std::string> kKnown = {"read", "write", "randread", "randwrite", "rw", "randrw", "trim",
                                               "randtrim"};
  if (x.find(':') != std::string::npos)
    v.bad(*s.opt, fmt::format("'{}': the offset modifier (':N') is not supported", x));
  else if (x == "readwrite") j.rw = "rw";
  else if (kKnown.count(x)) j.rw = x;
  else if (x == "trimwrite" || x == "randtrimwrite")
    v.bad(*s.opt, fmt::format("'{}' is not supported; rw=randrw with --rwmix-trim mixes trims with reads and writes", x));
  else
    v.bad(*s.opt, fmt::format("'{}' is not one of read, write, randread, randwrite, rw, randrw, trim, randtrim", x));
}

void decode_rwmix(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.integer(*s.opt, 0, 100)) j.rwmix_read = s.inverted ? 100 - *n : *n;
}

void decode_iodepth(FioValues& v, const FioSetting& s, FioSpec& j) { j.iodepth = v.integer(*s.opt, 1, 65536); }

void decode_batch_submit(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.batch_submit = v.integer(*s.opt, 0, 65536);
}

void decode_batch_complete_min(FioValues& v, const FioSetting& s, FioSpec& j) {
  const auto n = v.integer(*s.opt, 0, 65536);
  if (n && *n == 0) v.bad(*s.opt, "0 (reap without waiting) is not supported; give 1 or more");
  else j.batch_complete_min = n;
}

void decode_batch_complete_max(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.batch_complete_max = v.integer(*s.opt, 1, 65536);
}

void decode_numjobs(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.integer(*s.opt, 1, 1024)) j.numjobs = *n;
}

void decode_engine(FioValues& v, const FioSetting& s, FioSpec& j) {
  const std::string& x = s.opt->value;
  if (x == "io_uring") j.engine = "uring";
  else if (x == "psync" || x == "sync" || x == "pvsync" || x == "pvsync2") j.engine = x;  // the same names
  else if (x == "libaio") j.engine = "libaio";
  else v.bad(*s.opt, fmt::format("'{}' is not an engine ioacct has (io_uring, libaio, psync, sync, pvsync, pvsync2)", x));
}

void decode_direct(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto b = v.boolean(*s.opt)) j.direct = s.inverted ? !*b : *b;
}

void decode_size(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (!has_percent(v, *s.opt)) j.size = v.sized(*s.opt);
}

void decode_offset(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (has_percent(v, *s.opt)) return;
  if (const auto n = v.sized(*s.opt)) j.offset = *n;
}

// ':' separates files, '\:' is a colon.
void decode_filename(FioValues& v, const FioSetting& s, FioSpec& j) {
  std::string cur;
  const std::string& x = s.opt->value;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i] == '\\' && i + 1 < x.size() && x[i + 1] == ':') {
      cur += ':';
      ++i;
    } else if (x[i] == ':') {
      if (!cur.empty()) j.files.push_back(cur);
      cur.clear();
    } else {
      cur += x[i];
    }
  }
  if (!cur.empty()) j.files.push_back(cur);
  if (j.files.empty()) v.bad(*s.opt, "names no file");
}

void decode_directory(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.directory = s.opt->value;
  if (j.directory.find(':') != std::string::npos) v.bad(*s.opt, "several directories are not supported; give one");
}

void decode_runtime(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.time_of(*s.opt)) j.runtime_ns = *n;
}

void decode_time_based(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (v.boolean(*s.opt).value_or(false)) j.time_based_at = s.opt;
}

void decode_loops(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.integer(*s.opt, 1, 1'000'000)) j.loops = *n;
}

void decode_number_ios(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.integer(*s.opt); n && *n) j.number_ios = n;  // 0: fio's "no limit"
}

void decode_io_size(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (!has_percent(v, *s.opt)) j.io_size = v.sized(*s.opt);
}

// fio's check types: each is a checksum (or fio's own header) over what a
// job wrote; ioacct's header and XXH64 check the same blocks the same way.
void decode_verify(FioValues& v, const FioSetting& s, FioSpec& j) {
  static const std::set<std::string> kChecks = {
      "md5",    "crc64",  "crc32c",   "crc32c-intel", "crc32",    "crc16",    "crc7", "xxhash",
      "sha512", "sha256", "sha1",     "sha3-224",     "sha3-256", "sha3-384", "sha3-512", "meta"};
  const std::string& x = s.opt->value;
  if (x == "null" || x == "0") j.verify_at = nullptr;  // fio: pretend to verify
  else if (x == "pattern")
    v.bad(*s.opt, "'pattern' checks verify_pattern, which ioacct does not map; give a checksum (crc32c, md5, xxhash)");
  else if (kChecks.count(x)) j.verify_at = s.opt;
  else v.bad(*s.opt, fmt::format("'{}' is not one of fio's check types (md5, crc32c, xxhash, sha256, meta, ...)", x));
}

void decode_do_verify(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.do_verify = v.boolean(*s.opt).value_or(true);
}

// Accepted for what they mean here, once their values read: ioacct checks
// every block it wrote and lists every mismatch before it exits 1
// (verify_fatal), and checks them after the run (verify_backlog).
void decode_verify_fatal(FioValues& v, const FioSetting& s, FioSpec&) { (void)v.boolean(*s.opt); }
void decode_verify_backlog(FioValues& v, const FioSetting& s, FioSpec&) { (void)v.integer(*s.opt); }

// write_bw_log=PREFIX and its kin: the files the run writes in fio's log
// format. fio takes an empty value (or the job's name) as the job's name.
template <std::string FioLogs::*Which>
void decode_log(FioValues&, const FioSetting& s, FioSpec& j) {
  j.logs.*Which = s.opt->value.empty() ? j.name : s.opt->value;
  if (!j.log_at) j.log_at = s.opt;
}

void decode_log_avg(FioValues& v, const FioSetting& s, FioSpec& j) {
  const auto ms = v.integer(*s.opt, 0, 3'600'000);
  if (!ms || !*ms) return;  // 0: fio's per-I/O logs, as when unset
  if (*ms < 10) v.bad(*s.opt, fmt::format("{}: ioacct's interval is at least 10 ms", *ms));
  j.log_avg_ms = *ms;
  j.log_avg_at = s.opt;
}

void decode_ramp(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.ramp_ns = v.time_of(*s.opt);
  j.ramp_at = s.opt;
}

void decode_startdelay(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (s.opt->value.find_first_of("-:") != std::string::npos)
    v.bad(*s.opt, "a range of start delays is not supported; give one");
  else if (const auto n = v.time_of(*s.opt)) j.startdelay_ns = *n;
}

void decode_stonewall(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.stonewall = v.boolean(*s.opt).value_or(false);
}

void decode_distribution(FioValues& v, const FioSetting& s, FioSpec& j) {
  try {
    const Distribution d = parse_distribution("random_distribution", s.opt->value);
    j.distribution = d.kind == DistKind::Uniform ? "" : distribution_name(d);
  } catch (const UsageError& e) {
    const std::string msg = e.what();
    v.bad(*s.opt, msg.substr(std::string("random_distribution: ").size()));
  }
}

// Whether ioacct keeps a map depends on the sizes (fio_words decides).
void decode_norandommap(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto b = v.boolean(*s.opt)) {
    j.norandommap_at = s.opt;
    j.norandommap = *b;
  }
}

void decode_randrepeat(FioValues& v, const FioSetting& s, FioSpec& j) {
  const auto b = v.boolean(*s.opt);
  j.fresh_seed = b && !*b;
}

void decode_randseed(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.seed_given = true;
  j.seed = v.integer(*s.opt);
}

void decode_fsync(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.integer(*s.opt)) j.fsync = *n;
}

void decode_fdatasync(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.integer(*s.opt)) j.fdatasync = *n;
}

void decode_sqpoll(FioValues& v, const FioSetting& s, FioSpec& j) {
  j.sqpoll = v.boolean(*s.opt).value_or(false);
  if (j.sqpoll) j.uring_flags.emplace_back(s.opt, kFlagSqpoll);
}

// Read in fio_words(): only with sqthread_poll=1 does its value matter.
void decode_sq_cpu(FioValues&, const FioSetting& s, FioSpec& j) { j.sq_cpu_at = s.opt; }

void decode_nonvectored(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (s.opt->value == "-1") return;
  const auto n = v.integer(*s.opt, 0, 1);
  j.vectored = n && *n == 0;
}

void decode_hipri(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (v.boolean(*s.opt).value_or(false)) j.hipri_at = s.opt;
}

// Read in fio_words(): pvsync2's option, meaningful with hipri=1.
void decode_hipri_percentage(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (const auto n = v.integer(*s.opt, 0, 100)) {
    j.hipri_pct = *n;
    j.hipri_pct_at = s.opt;
  }
}

void decode_nowait(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (v.boolean(*s.opt).value_or(false)) j.nowait_at = s.opt;
}

void decode_gtod_reduce(FioValues& v, const FioSetting& s, FioSpec& j) {
  if (v.boolean(*s.opt).value_or(false)) j.gtod_reduce_at = s.opt;
}

}  // namespace

// ---------------------------------------------------------------- table

namespace {

// The rows are data at namespace scope, not a function's body: read only
// at run time (the mapper, the docs generator), after static initialisation.
// Building them allocates; that failing at start-up ends the process either way.
const std::vector<FioOptionRow> kRowsBeforePace = {  // NOLINT(cert-err58-cpp)
  {{{"kb_base"}},
   "how sizes read: `1024` (fio's default), `k` = 1024 and `ki` = 1000 (fio's \"compatibility mode\"); `1000`: "
   "the other way round",
   "any other value is an error",
   decode_kb_base},
  {{{"name"}}, "the job's name", "", decode_name},
  {{{"rw"}, {"readwrite"}},
   "`--rw`: `read`, `write`, `randread`, `randwrite`, `rw`/`readwrite`, `randrw`, `trim`, `randtrim`",
   "the offset modifier (`randread:8`) and `trimwrite`/`randtrimwrite` are errors (ioacct mixes trims with "
   "`--rwmix-trim`, which fio has no option for). Trims on a regular file punch holes (fio trims block devices "
   "only)",
   decode_rw},
  {{{"rwmixread"}, {"rwmixwrite", true}}, "`--rwmix-read` (`rwmixwrite=N` is `100-N` reads)", "", decode_rwmix},
};

// After the sizes' rows (fio_size_rows.cpp), in docs/fio.md's order.
const std::vector<FioOptionRow> kRowsAfterSizes = {  // NOLINT(cert-err58-cpp)
  {{{"iodepth"}},
   "the job's depth per thread: `--iodepth` = `iodepth` × `numjobs` (ioacct's depth is over all of a job's "
   "threads), for io_uring and libaio jobs",
   "not given to psync jobs (one I/O at a time, as in fio)",
   decode_iodepth},
  {{{"iodepth_batch_submit"}, {"iodepth_batch"}},
   "not given or 1 (fio's default: each I/O submitted as soon as fio has it): `--submit-policy each` for "
   "io_uring, `--submit-batch 1` for libaio (one `io_submit` per I/O, as fio's libaio); 0 (fio's \"the iodepth\"): `--submit-policy pass` (io_uring) or ioacct's "
   "default (libaio: every free slot in one `io_submit`); any other N: `--submit-batch N` (lockstep)",
   "a mapped job runs fio's batching, not ioacct's measured `auto` (docs/cli.md, \"Depth and batching\")",
   decode_batch_submit},
  {{{"iodepth_batch_complete_min"}, {"iodepth_batch_complete"}},
   "1 (fio's default): wake at the first completion; N > 1: `--complete-batch N` (lockstep)",
   "0 (reap without waiting) is an error",
   decode_batch_complete_min},
  {{{"iodepth_batch_complete_max"}},
   "not given: `iodepth_batch_complete_min`, as in fio (so 1 by default); under `iodepth`: `--complete-max N`, "
   "at most N completions taken per syscall (libaio: `io_getevents(min, N)`), which takes the batch path; at "
   "least `iodepth`: all there are. An io_uring job refilled as reaped (`--submit-policy each` or `pass`) "
   "keeps its policy unless a cap is given: submitting each refill as its CQE is taken is fio's one at a time",
   "fio raises a cap under `iodepth_batch_complete_min` to it; so does ioacct",
   decode_batch_complete_max},
  {{{"numjobs"}},
   "`--threads`: each of fio's clones is one of the job's threads, with its own ring",
   "fio reports clones as jobs unless `group_reporting`; ioacct reports the job, and each thread on its own line",
   decode_numjobs},
  {{{"ioengine"}},
   "`io_uring` → `uring`; `libaio` → `libaio` (Linux AIO: `io_submit`/`io_getevents`); `psync` (`pread`/`pwrite`), "
   "`sync` (`lseek`, then `read`/`write`), `pvsync` (`preadv`/`pwritev`), `pvsync2` (`preadv2`/`pwritev2`): the "
   "same names, the same syscalls",
   "With `libaio`, as in fio, only `direct=1` is asynchronous: the "
   "kernel runs buffered AIO inside `io_submit`, and ioacct warns. fio's libaio option `userspace_reap` is not "
   "mapped (an error). Every other engine: an error",
   decode_engine},
  {{{"direct"}, {"buffered", true}},
   "`--direct` / `--buffered`",
   "fio's default is buffered, and so is the mapped job's",
   decode_direct},
  {{{"size"}},
   "`--size` (the range of each target from `offset`; the temporary file's size). Without `time_based`, also "
   "`--ios` = `numjobs` × `size`/`bs`: one pass, as fio does",
   "fio without `filename` lays out one file per job (`name.N.M`); ioacct makes one **temporary file** (never "
   "named, removed on exit) shared by the jobs without a target, as large as the largest `size`. `size` is "
   "needed without `filename`",
   decode_size},
  {{{"offset"}}, "`--offset`", "percentages are an error", decode_offset},
  {{{"filename"}},
   "the job's targets (`:` separates files, `\\:` is a colon)",
   "the file must exist: ioacct does not lay out files (it refuses a missing target)",
   decode_filename},
  {{{"directory"}},
   "prefixed to relative `filename`s; without `filename`, `--dir` (where the temporary file goes)",
   "several directories (`a:b`) are an error",
   decode_directory},
  {{{"runtime"}, {"timeout"}}, "the job's `--runtime`", "", decode_runtime},
  {{{"time_based"}},
   "the job runs for `runtime`; without it, the job ends after one pass (`size`, or the whole target: "
   "`--passes 1`) or at `runtime`, whichever comes first",
   "`time_based` without `runtime` is an error (fio would run until stopped)",
   decode_time_based},
  {{{"loops"}},
   "the job's passes: without `time_based`, `--ios` is `loops` times one pass (`--passes` without `size`)",
   "",
   decode_loops},
  {{{"number_ios"}},
   "a cap on each clone's I/Os: `--ios` = `numjobs` × `number_ios` when that is fewer (also with `time_based`, "
   "whichever ends first)",
   "0 is fio's no cap",
   decode_number_ios},
  {{{"io_size"}, {"io_limit"}},
   "the bytes each clone moves in a pass, in place of `size`: `--ios` = `numjobs` × `io_size`/`bs` × `loops` "
   "(within the range that `size` sets, as in fio)",
   "percentages are an error",
   decode_io_size},
  {{{"ramp_time"}},
   "the run's `--ramp`",
   "one for the whole run: jobs that differ are an error (put it in `[global]`)",
   decode_ramp},
  {{{"write_bw_log"}},
   "after the run, `PREFIX_bw.1.log` in fio's log format: `msec, KiB/s, direction, 0, 0` per interval",
   "a file of one job only, doing reads or writes (not both: ioacct's time series is the run's); without "
   "`log_avg_msec` fio logs every I/O, ioacct the average per interval (1 s; stderr says so)",
   decode_log<&FioLogs::bw>},
  {{{"write_iops_log"}},
   "after the run, `PREFIX_iops.1.log`: `msec, IOPS, direction, 0, 0` per interval",
   "as `write_bw_log`",
   decode_log<&FioLogs::iops>},
  {{{"write_lat_log"}},
   "after the run, `PREFIX_lat.1.log`, `PREFIX_clat.1.log` and `PREFIX_slat.1.log`: `msec, mean (ns), direction, 0, "
   "0` per interval, as fio's; the job submits and reaps in separate calls (`--split-submit`), as fio does, so "
   "that every I/O has a slat and a clat",
   "as `write_bw_log`; the psync family (no slat) writes the `_lat` log only",
   decode_log<&FioLogs::lat>},
  {{{"log_avg_msec"}},
   "the run's `--log-interval` (the time series' interval, which the logs average over)",
   "one for the whole run; below 10 ms is an error",
   decode_log_avg},
  {{{"startdelay"}}, "the job's `--startdelay`", "a range (`1-5`) is an error", decode_startdelay},
  {{{"stonewall"}, {"wait_for_previous"}},
   "`--stonewall`: the job starts when every job before it has ended",
   "",
   decode_stonewall},
};

// After the pace's rows (fio_pace_rows.cpp), in docs/fio.md's order.
const std::vector<FioOptionRow> kRowsAfterPace = {  // NOLINT(cert-err58-cpp)
  {{{"random_distribution"}},
   "`--random-distribution`: `random`, `zipf:θ`, `pareto:h`, `normal:σ` (`gauss:σ`), `zoned:A/R:…`, "
   "`zoned_abs:A/SIZE:…`",
   "zones for each direction apart (`zoned:60/10:40/90,50/50:50/50`) and a centre (`zipf:1.2:0.5`) are errors; a "
   "zone's offsets are uniform inside it, as in fio. `normal`: ioacct draws a true normal of "
   "standard deviation σ% of the range around its middle; fio averages 12 uniform draws (σ ≈ 8.3% of the range "
   "whatever σ says) and adds a uniform spread of σ%. zipf and pareto mean what they mean in fio; ioacct's zipf "
   "is exact (fio's uses Gray's approximation)",
   decode_distribution},
  {{{"norandommap"}},
   "accepted (`1`) for one block size: ioacct keeps no random map, it draws every offset afresh; with "
   "`bssplit`/`bsrange` random I/O keeps fio's random map, as fio does without the option",
   "`norandommap=0` with one block size is an error, and `norandommap=1` with mixed sizes. Without the option fio "
   "visits every block once per pass; with one size ioacct does not, so a fio job that counts on that (a one-pass "
   "random fill) differs. With mixed sizes the map is what sets the sizes moved: fio cuts an I/O short where it "
   "would reach a visited block, and ioacct does the same",
   decode_norandommap},
  {{{"randrepeat"}},
   "`1` (fio's default): ioacct's fixed default seed. `0`: a fresh seed per run",
   "the sequences differ from fio's (different generators)",
   decode_randrepeat},
  {{{"randseed"}, {"seed"}}, "`--seed`", "", decode_randseed},
  {{{"fsync"}},
   "`--fsync N`",
   "a sync takes a slot of the depth; not a barrier, as in fio's io_uring engine",
   decode_fsync},
  {{{"fdatasync"}}, "`--fdatasync N`", "", decode_fdatasync},
  {{{"sqthread_poll"}}, "`--sqpoll`", "io_uring only", decode_sqpoll},
  {{{"sqthread_poll_cpu"}}, "`--sq-cpu`", "needs `sqthread_poll=1`", decode_sq_cpu},
  {{{"hipri"}},
   "`--iopoll` (io_uring); `--hipri` (pvsync2: `RWF_HIPRI` on each call)",
   "other engines: an error",
   decode_hipri},
  {{{"hipri_percentage"}},
   "`--hipri-percentage` (pvsync2 with `hipri=1`: the share of calls that carry `RWF_HIPRI`, drawn per call)",
   "other engines: an error (fio's option of pvsync2); without `hipri=1` accepted, no effect",
   decode_hipri_percentage},
  {{{"nowait"}}, "`--nowait` (`RWF_NOWAIT`: io_uring, libaio, pvsync2)", "other engines: an error", decode_nowait},
  {{{"fixedbufs"}}, "`--fixed-bufs`", "io_uring only", uring_flag<kFlagFixedBufs>},
  {{{"registerfiles"}}, "`--fixed-files`", "io_uring only", uring_flag<kFlagFixedFiles>},
  {{{"nonvectored"}}, "`0` → `--vectored`; `-1`, `1`: ioacct's default (non-vectored)", "", decode_nonvectored},
  {{{"gtod_reduce"}},
   "`1` → the run's `--acct basic` (no per-I/O latency)",
   "one for the whole run",
   decode_gtod_reduce},
  {{{"verify"}},
   "a check type (`md5`, `crc32c`, `xxhash`, `sha256`, `meta`, ...) on a job that writes: `--verify` (every "
   "block the job wrote is read back and checked after the run), `--verify-during` for `rw`/`randrw` (its "
   "reads of blocks it wrote are checked as they complete, too); `null`: no check",
   "ioacct writes its own header and XXH64 whatever the type (fio's on-disk layout is not reproduced, so a job "
   "cannot check blocks fio wrote). A job that only reads or trims is an error (fio would check blocks an "
   "earlier fio job wrote); `pattern` is an error (`verify_pattern` is not mapped); so is a check in a file of "
   "several jobs (ioacct checks one job's writes: run that job alone). With `loops`, fio checks after each pass "
   "and ioacct once, after the last (the blocks as they last were written)",
   decode_verify},
  {{{"do_verify"}}, "`0`: the blocks carry their check, and no check is run (fio's meaning)", "", decode_do_verify},
  {{{"verify_fatal"}},
   "accepted",
   "ioacct checks every block and lists every mismatch either way, then exits 1 (fio with `1` stops at the first)",
   decode_verify_fatal},
  {{{"verify_backlog"}},
   "accepted",
   "fio checks each N written blocks while it writes; ioacct checks the same blocks after the run",
   decode_verify_backlog},
  {{{"new_group"}},
   "accepted, no effect",
   "ioacct reports every job and the whole run; groups change nothing"},
  {{{"description"}}, "accepted, not shown", ""},
  {{{"thread"}}, "accepted: ioacct always runs jobs as threads", ""},
  {{{"group_reporting"}}, "accepted: ioacct always reports each job, and the whole run", ""},
};

}  // namespace

const std::vector<FioOptionRow>& fio_options() {
  static const std::vector<FioOptionRow> rows = [] {
    std::vector<FioOptionRow> all = kRowsBeforePace;
    const std::vector<FioOptionRow> sizes = fio_size_rows();
    all.insert(all.end(), sizes.begin(), sizes.end());
    all.insert(all.end(), kRowsAfterSizes.begin(), kRowsAfterSizes.end());
    const std::vector<FioOptionRow> pace = fio_pace_rows();
    all.insert(all.end(), pace.begin(), pace.end());
    all.insert(all.end(), kRowsAfterPace.begin(), kRowsAfterPace.end());
    return all;
  }();
  return rows;
}

const FioOptionRow* fio_option(std::string_view name, bool& inverted) {
  for (const FioOptionRow& r : fio_options())
    for (const FioName& n : r.names)
      if (n.name == name) {
        inverted = n.inverted;
        return &r;
      }
  return nullptr;
}

std::string fio_options_markdown() {
  std::string out = "| option | meaning in ioacct | differences |\n|---|---|---|\n";
  for (const FioOptionRow& r : fio_options()) {
    std::vector<std::string> names;
    for (const FioName& n : r.names) names.push_back(fmt::format("`{}`", n.name));
    out += fmt::format("| {} | {} |{}|\n", fmt::join(names, ", "), r.meaning,
                       r.differences.empty() ? " " : fmt::format(" {} ", r.differences));
  }
  return out;
}

}  // namespace ioacct
