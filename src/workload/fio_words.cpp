// A mapped fio job as ioacct's own flags (fio_words, fio_options.hpp): the
// words a user could have typed for the same workload, with fio's defaults
// spelled out, and the refusals that need the whole job to tell.
#include <fmt/format.h>

#include <algorithm>

#include "workload/fio_options.hpp"

namespace ioacct {

namespace {

// The words, as a user would type them.
struct Words {
  std::vector<std::string> w;
  void operator()(std::string flag, std::string value = {}) {
    w.push_back(std::move(flag));
    if (!value.empty()) w.push_back(std::move(value));
  }
};

bool mixed(const FioSpec& s) { return s.rw == "rw" || s.rw == "randrw"; }

// A job of one direction: 0 reads, 1 writes, 2 trims.
size_t direction(const FioSpec& s) {
  return s.rw.find("read") != std::string::npos ? 0 : s.rw.find("write") != std::string::npos ? 1 : 2;
}

// Bytes per I/O on average: with sizes per direction, by the mix.
double mean_size(const FioSpec& s) {
  const auto of = [&](size_t d) {
    return s.bs_split_dir[0].empty() ? static_cast<double>(s.bs_dir[d]) : mean_bs(0, s.bs_split_dir[d]);
  };
  if ((!s.bs_dir[0] && s.bs_split_dir[0].empty()) || !s.bs_split.empty()) return mean_bs(s.bs, s.bs_split);
  if (!mixed(s)) return of(direction(s));
  const double reads = static_cast<double>(s.rwmix_read.value_or(50)) / 100;
  return reads * of(0) + (1 - reads) * of(1);
}

// What it does: the direction, the block size, the threads, the engine and
// its depth.
void put_what(Words& put, const FioSpec& s, FioValues& v) {
  put("--rw", s.rw);
  if (s.rwmix_read) put("--rwmix-read", std::to_string(*s.rwmix_read));
  if (!s.bs_split_dir[0].empty() && mixed(s))
    put("--bssplit", fmt::format("{},{},{}", bssplit_text(s.bs_split_dir[0]), bssplit_text(s.bs_split_dir[1]),
                                 bssplit_text(s.bs_split_dir[2])));
  else if (const auto& own = s.bs_split_dir[direction(s)]; !s.bs_split_dir[0].empty())
    own.size() == 1 ? put("--bs", std::to_string(own.front().size)) : put("--bssplit", bssplit_text(own));
  else if (!s.bs_split.empty()) put("--bssplit", bssplit_text(s.bs_split));  // fio's bssplit overrides bs
  else if (s.bs_dir[0] && mixed(s)) put("--bs", fmt::format("{},{},{}", s.bs_dir[0], s.bs_dir[1], s.bs_dir[2]));
  else if (s.bs_dir[0]) put("--bs", std::to_string(s.bs_dir[direction(s)]));
  else put("--bs", std::to_string(s.bs));
  // ioacct's random I/O keeps fio's random map with mixed sizes, and only then.
  const bool sizes = !s.bs_split.empty() || ((s.bs_dir[0] || !s.bs_split_dir[0].empty()) && mixed(s));  // mixed sizes
  if (s.blockalign_at) {
    if (sizes) v.bad(*s.blockalign_at, "with mixed sizes: ioacct keeps fio's random map for them, which fio turns off "
                                       "for blockalign; give one bs");
    else put("--blockalign", std::to_string(s.blockalign));
  }
  if (s.norandommap_at && !sizes && !s.norandommap)
    v.bad(*s.norandommap_at, "0: ioacct keeps no random map for one block size (it draws every offset afresh, as "
                             "fio does with norandommap=1)");
  if (s.norandommap_at && sizes && s.norandommap && s.rw.starts_with("rand"))
    v.bad(*s.norandommap_at, "1 with mixed sizes: ioacct's random I/O of several sizes keeps fio's random map (each "
                             "block once per pass, an I/O cut short at a visited block); leave norandommap out");
  put("--threads", std::to_string(s.numjobs));
  put("--engine", s.engine);
  // fio's iodepth (default 1) is per job; ioacct's over all its threads.
  // The psync family runs one I/O at a time per thread, in fio as here.
  if (s.engine == "uring" || s.engine == "libaio") put("--iodepth", std::to_string(s.iodepth.value_or(1) * s.numjobs));
}

// fio submits each I/O as soon as it has it (iodepth_batch_submit=1, its
// default) and takes completions one at a time (iodepth_batch_complete_min
// and _max both 1: io_getevents(1, 1) with libaio; with io_uring one CQE
// off the ring per turn of its loop): ioacct's refill as reaped with
// --submit-policy each, where each CQE's refill is submitted before the
// next is taken; with libaio, lockstep batches of 1 taking at most
// --complete-max completions per io_getevents. 0 (fio: "the iodepth")
// submits what a pass has refilled together: --submit-policy pass. Other
// batch sizes are lockstep batches. _max defaults to _min, and under the
// depth it caps each reap (--complete-max), which takes the batch path.
void put_batching(Words& put, const FioSpec& s) {
  bool lockstep = false;
  const char* policy = "each";
  if (s.batch_submit && *s.batch_submit == 0) {
    policy = "pass";
  } else if (s.batch_submit && *s.batch_submit != 1) {
    lockstep = true;
    put("--submit-batch", std::to_string(*s.batch_submit));
  }
  const uint64_t cmin = s.batch_complete_min.value_or(1);
  if (cmin != 1) {
    lockstep = true;
    put("--complete-batch", std::to_string(cmin));
  }
  // fio raises a _max under _min to it.
  const uint64_t depth = s.iodepth.value_or(1);
  const uint64_t cmax = std::max(cmin, s.batch_complete_max.value_or(cmin));
  const bool capped = cmax < depth;
  const bool each = std::string_view(policy) == "each";
  if (s.engine == "uring") {
    // Each refill submitted as its CQE is taken is fio's default loop: a
    // cap of 1 changes nothing there, nor does the default one to a pass.
    // A cap given takes the batch path, each I/O in an enter of its own as
    // fio's commit does.
    if (!lockstep && (!capped || !s.batch_complete_max || (cmax == 1 && each))) {
      put("--submit-policy", policy);
      return;
    }
    if (!lockstep && each) put("--submit-batch", "1");
  } else if (s.engine == "libaio") {
    // libaio has no fused path: fio's one io_submit per I/O is lockstep
    // batches of 1.
    if (!lockstep && each) put("--submit-batch", "1");
  } else {
    return;  // the psync family: one I/O at a time, nothing to batch
  }
  if (capped) put("--complete-max", std::to_string(cmax));
}

// Where: direct or buffered, the files (under directory=) or the temporary
// file's size, the offset. Returns the files, which go last.
std::vector<std::string> put_where(Words& put, const FioSpec& s, FioValues& v) {
  put(s.direct ? "--direct" : "--buffered");
  std::vector<std::string> files = s.files;
  for (auto& f : files)
    if (!s.directory.empty() && f[0] != '/') f = fmt::format("{}/{}", s.directory, f);
  if (files.empty() && !s.directory.empty()) put("--dir", s.directory);
  if (s.size) put("--size", std::to_string(*s.size));
  else if (files.empty())
    v.bad(FioOption{"size", "", false, s.file, s.line},
          "needed for a job without filename (fio lays out a file of that size; ioacct makes a temporary one)");
  if (s.offset) put("--offset", std::to_string(s.offset));
  return files;
}

// When: time_based runs for runtime; otherwise one pass of `size` per job
// (numjobs passes), cut short by runtime if given.
void put_when(Words& put, const FioSpec& s, FioValues& v, const std::vector<std::string>& files) {
  if (s.time_based_at && !s.runtime_ns) v.bad(*s.time_based_at, "needs runtime= (fio would run until stopped)");
  if (s.runtime_ns) put("--runtime", fmt::format("{}ns", s.runtime_ns));
  // A pass is io_size, or size, or the whole target (counted once it is
  // open); number_ios caps each clone's I/Os, time_based or not.
  if (!s.time_based_at) {
    const std::optional<uint64_t> pass = s.io_size ? s.io_size : s.size;
    if (pass) {
      // A pass ends when its bytes are done: with mixed sizes, at the mean size.
      const double per_io = mean_size(s);
      const uint64_t ios = std::max<uint64_t>(1, static_cast<uint64_t>(static_cast<double>(*pass) / per_io)) * s.loops;
      put("--ios", std::to_string(s.numjobs * std::min(ios, s.number_ios.value_or(ios))));
    } else if (!files.empty()) {
      put("--passes", std::to_string(s.loops));
      if (s.number_ios) put("--ios", std::to_string(s.numjobs * *s.number_ios));
    }
  } else if (s.number_ios) {
    put("--ios", std::to_string(s.numjobs * *s.number_ios));
  }
  if (s.startdelay_ns) put("--startdelay", fmt::format("{}ns", s.startdelay_ns));
  if (s.stonewall) put("--stonewall");
}

// fio paces each direction on its own. A mixed job gets ioacct's pace per
// direction (an empty field: unpaced); a job of one direction takes that
// direction's value, so fio's "rate=,500k" leaves a read job unpaced.
void put_rate(Words& put, const FioSpec& s, const char* flag, const std::array<uint64_t, 3>& r) {
  if (mixed(s)) {
    if (r == std::array<uint64_t, 3>{}) return;
    const auto field = [](uint64_t x) { return x ? std::to_string(x) : std::string(); };
    put(flag, fmt::format("{},{},{}", field(r[0]), field(r[1]), field(r[2])));
    return;
  }
  if (const uint64_t x = r[direction(s)]) put(flag, std::to_string(x));
}

// How fast, where on the target: the pace, the distribution, the seed, the syncs.
void put_pace(Words& put, const FioSpec& s, uint64_t fresh_seed) {
  const size_t before = put.w.size();
  if (s.rate_iops) put_rate(put, s, "--rate-iops", *s.rate_iops);
  if (s.rate) put_rate(put, s, "--rate", *s.rate);
  // fio ignores rate_process on a job its rates leave unpaced; ioacct
  // would refuse it, so it goes only with a pace.
  if (s.poisson && put.w.size() > before) put("--rate-process", "poisson");
  const size_t floors = put.w.size();
  if (s.rate_iops_min) put_rate(put, s, "--rate-iops-min", *s.rate_iops_min);
  if (s.rate_min) put_rate(put, s, "--rate-min", *s.rate_min);
  if (s.rate_cycle_ms && put.w.size() > floors) put("--rate-cycle", fmt::format("{}ms", *s.rate_cycle_ms));
  if (s.latency_target_ns && *s.latency_target_ns) {
    put("--latency-target", fmt::format("{}ns", *s.latency_target_ns));
    // fio's latency_window defaults to 0: the depth is judged at every check.
    put("--latency-window", fmt::format("{}ns", s.latency_window_ns.value_or(0)));
    if (s.latency_percentile) put("--latency-percentile", fmt::format("{}", *s.latency_percentile));
    if (s.latency_run) put("--latency-run");
  }
  if (!s.distribution.empty()) put("--random-distribution", s.distribution);
  if (s.fresh_seed && !s.seed_given) put("--seed", std::to_string(fresh_seed));
  if (s.seed) put("--seed", std::to_string(*s.seed));
  if (s.fsync) put("--fsync", std::to_string(s.fsync));
  if (s.fdatasync) put("--fdatasync", std::to_string(s.fdatasync));
}

// io_uring's modes, and verify.
void put_modes(Words& put, const FioSpec& s, FioValues& v) {
  for (const auto& [opt, flag] : s.uring_flags) {
    if (s.engine != "uring") v.bad(*opt, "is an io_uring option; this job's ioengine is not io_uring");
    else put(flag);
  }
  if (s.sq_cpu_at) {
    if (!s.sqpoll) v.bad(*s.sq_cpu_at, "only applies with sqthread_poll=1");
    else if (const auto cpu = v.integer(*s.sq_cpu_at, 0, 65535)) put("--sq-cpu", std::to_string(*cpu));
  }
  if (s.vectored && s.engine == "uring") put("--vectored");
  if (s.hipri_at) {
    if (s.engine == "uring") put("--iopoll");
    else if (s.engine == "pvsync2") put("--hipri");
    else v.bad(*s.hipri_at, "is an io_uring and pvsync2 option; this job's ioengine is neither");
  }
  if (s.hipri_pct_at) {
    if (s.engine != "pvsync2") v.bad(*s.hipri_pct_at, "is a pvsync2 option; this job's ioengine is not pvsync2");
    else if (s.hipri_at && s.hipri_pct != 100) put("--hipri-percentage", std::to_string(s.hipri_pct));
  }
  if (s.nowait_at) {
    if (s.engine == "uring" || s.engine == "libaio" || s.engine == "pvsync2") put("--nowait");
    else v.bad(*s.nowait_at, "is mapped for io_uring, libaio and pvsync2 only; this job's ioengine is none of them");
  }
  if (s.verify_at && s.do_verify) {
    if (s.rw == "read" || s.rw == "randread")
      v.bad(*s.verify_at, "a job that only reads would check blocks an earlier fio job wrote, in fio's layout; ioacct "
                          "checks what its own run writes: verify a job that writes (rw=write, randwrite, rw, randrw)");
    else if (s.rw == "trim" || s.rw == "randtrim")
      v.bad(*s.verify_at, "a trimmed block's content is undefined: there is nothing to check");
    else put(mixed(s) ? "--verify-during" : "--verify");
  }
}

}  // namespace

std::vector<std::string> fio_words(const FioSpec& s, FioValues& v, uint64_t fresh_seed) {
  Words put;
  put_what(put, s, v);
  put_batching(put, s);
  std::vector<std::string> files = put_where(put, s, v);
  put_when(put, s, v, files);
  put_pace(put, s, fresh_seed);
  put_modes(put, s, v);
  for (auto& f : files) put.w.push_back(std::move(f));
  return put.w;
}

}  // namespace ioacct
