#include <algorithm>
#include <array>
#include <initializer_list>
#include <utility>

#include <fmt/format.h>

#include "common/units.hpp"
#include "report/report.hpp"

namespace ioacct {
namespace {

std::string targets_of(const std::vector<TargetInfo>& targets) {
  std::string s;
  for (const auto& t : targets) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} [{}{}]", t.path, t.device.empty() ? "no block device" : t.device,
                     t.range ? fmt::format(", {} used", format_size(t.range)) : "");
  }
  return s;
}

void latency_lines(std::string& out, const Histogram& h, const char* indent) {
  auto d = [](uint64_t ns) { return format_duration_ns(static_cast<double>(ns)); };
  out += fmt::format("{}min {}  mean {}  stdev {}  max {}\n", indent, d(h.min()),
                     format_duration_ns(h.mean()), format_duration_ns(h.stdev()), d(h.max()));
  out += fmt::format("{}p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}\n", indent, d(h.quantile(0.5)),
                     d(h.quantile(0.9)), d(h.quantile(0.99)), d(h.quantile(0.999)), d(h.quantile(0.9999)));
}

// One line: "min 2.1 µs  mean 3.4 µs  stdev 1.2 µs  max 40 µs  p50 3.1 µs  p99 9.8 µs".
std::string latency_brief(const Histogram& h) {
  auto d = [](double ns) { return format_duration_ns(ns); };
  return fmt::format("min {}  mean {}  stdev {}  max {}  p50 {}  p99 {}", d(static_cast<double>(h.min())), d(h.mean()),
                     d(h.stdev()), d(static_cast<double>(h.max())), d(static_cast<double>(h.quantile(0.5))),
                     d(static_cast<double>(h.quantile(0.99))));
}

// A mixed job's reads and writes, each on a line of its own under the
// job's lat: its quantiles and max, as the line above them shows the job's.
void direction_lines(std::string& out, const ThreadResult& t) {
  if (!t.read_lat.lat || !t.write_lat.lat || !t.read_lat.lat->count() || !t.write_lat.lat->count()) return;
  auto d = [](uint64_t ns) { return format_duration_ns(static_cast<double>(ns)); };
  for (const auto& [name, h] : {std::pair{"reads ", t.read_lat.lat.get()}, std::pair{"writes", t.write_lat.lat.get()}})
    out += fmt::format("             {} p50 {}  p90 {}  p99 {}  p99.9 {}  max {}  ({})\n", name, d(h->quantile(0.5)),
                       d(h->quantile(0.9)), d(h->quantile(0.99)), d(h->quantile(0.999)), d(h->max()),
                       plural(h->count(), "I/O"));
}

// A split figure over few I/Os: below 100 a p99 is the largest, and a
// stdev of one is 0; then the count, the extremes and the median only.
std::string split_brief(const Histogram& h) {
  if (h.count() >= 100) return latency_brief(h);
  auto d = [](uint64_t ns) { return format_duration_ns(static_cast<double>(ns)); };
  return fmt::format("min {}  p50 {}  max {}  ({}: too few for a p99)", d(h.min()), d(h.quantile(0.5)), d(h.max()),
                     plural(h.count(), "I/O"));
}

// slat and clat where they were timed apart (fio's names; docs/cli.md,
// "Latency"), then trims and syncs with their own latency. Where only some
// I/Os were timed apart (a paced job's enters mostly wait too) the slat
// line says how many first, so the figures are not read as the run's.
void split_lines(std::string& out, const JobSpec& job, const ThreadResult& t, uint64_t window_ns) {
  if (t.slat && t.clat && t.latency->count()) {
    const uint64_t n = t.latency->count();
    const uint64_t split = n - std::min(n, t.slat_unsplit);
    const bool aio = job.engine == EngineKind::Libaio;
    if (split && t.slat->count()) {
      const std::string share =
          t.slat_unsplit ? fmt::format("of {} of the {} I/Os ({:.1f}%; the rest not timed apart): ", split, n,
                                       100.0 * static_cast<double>(split) / static_cast<double>(n))
                         : "";
      out += fmt::format("  slat       {}{}  (to the return of the {} that submitted it)\n", share, split_brief(*t.slat),
                         aio ? "io_submit" : "io_uring_enter");
      if (t.clat->count())
        out += fmt::format("  clat       {}  (from then to reaping)\n", split_brief(*t.clat));
      if (t.clat_at_submit)
        out += fmt::format("             {} ({:.1f}%) complete by the return of the {} that submitted it: all slat, "
                           "left out of clat\n",
                           plural(t.clat_at_submit, "I/O"), 100.0 * static_cast<double>(t.clat_at_submit) / static_cast<double>(split),
                           aio ? "io_submit" : "io_uring_enter");
    } else {
      out += fmt::format("  slat/clat  not timed apart: every I/O was submitted by {} for completions{}{}\n",
                         aio ? "an io_submit followed at once by an io_getevents that waited"
                             : "an io_uring_enter that also waited",
                         aio ? "" : " (one syscall where fio makes two)",
                         job.split_submit ? "" : "; --split-submit times them apart, at one more syscall per batch");
    }
  } else if (job.engine == EngineKind::Psync && t.latency->count()) {
    out += "  slat       not applicable: psync does each I/O in one syscall (lat is clat)\n";
  }
  if (t.trims || t.trim_latency) {
    out += fmt::format("  trims      {}  ({} IOPS, {} trimmed)\n", t.trims, format_count(per_s(t.trims, window_ns)),
                       format_bandwidth(per_s(t.bytes_trimmed, window_ns)));
    if (t.trim_latency && t.trim_latency->count()) out += fmt::format("             {}\n", latency_brief(*t.trim_latency));
  }
  if (job.fsync_every || job.fdatasync_every) {
    out += fmt::format("  syncs      {} {}s, one after every {} writes\n", t.syncs, job.fsync_every ? "fsync" : "fdatasync",
                       job.fsync_every ? job.fsync_every : job.fdatasync_every);
    if (t.sync_latency && t.sync_latency->count()) out += fmt::format("             {}\n", latency_brief(*t.sync_latency));
  }
}

void accounting_lines(std::string& out, const Accounting& a, uint64_t ios) {
  const auto& c = a.cpu;
  out += fmt::format("             by thread (schedstat): submitters {:.2f} s, SQ threads {:.2f} s, io-wq {:.2f} s, "
                     "other {:.2f} s\n", c.submitters_s, c.sq_threads_s, c.iowq_s, c.other_s);
  for (const auto& sq : a.sq_threads) {
    out += fmt::format("  sq thread  tid {}{}: {:.2f} CPU-s = {:.0f}% of a core", sq.tid,
                       sq.rings > 1 ? fmt::format(" ({} rings)", sq.rings) : "", sq.cpu_s,
                       a.interval_s > 0 ? 100.0 * sq.cpu_s / a.interval_s : 0.0);
    if (sq.work_s)
      out += fmt::format(", SqWorkTime {:.2f} s ({:.0f}%: its loops with SQEs to submit)", *sq.work_s,
                         sq.cpu_s > 0 ? 100.0 * *sq.work_s / sq.cpu_s : 0.0);
    else
      out += ", SqWorkTime not available (this kernel's fdinfo has none)";
    if (ios) out += fmt::format(", {} CPU per I/O", format_duration_ns(sq.cpu_s * 1e9 / static_cast<double>(ios)));
    out += fmt::format("  [{}]\n", sq.source);
    if (sq.process_wide_s)
      out += fmt::format("             fdinfo SqTotalTime moved {:.2f} s, more than the thread ran (schedstat): this "
                         "kernel counts its whole process there, so neither it nor SqWorkTime is shown\n",
                         *sq.process_wide_s);
  }
  for (const auto& d : a.devices) {
    const auto& x = d.row;
    out += fmt::format("  device     {}{}: r/s {:.1f}  w/s {:.1f}  rkB/s {:.1f}  wkB/s {:.1f}  r_await {:.2f}  "
                       "w_await {:.2f}  aqu-sz {:.2f}  areq-sz {:.2f}  %util {:.1f}  (diskstats, iostat -x formulas)",
                       x.device, d.role == DeviceRole::Target ? "" : " (underlying)", x.r_s, x.w_s, x.rkB_s, x.wkB_s, x.r_await,
                       x.w_await, x.aqu_sz, x.areq_sz, x.util);
    if (d.busy_pct) {
      out += fmt::format("; busy% {:.1f}", *d.busy_pct);
      if (d.unsure_pct && *d.unsure_pct >= 0.05) out += fmt::format(" (up to {:.1f})", *d.busy_pct + *d.unsure_pct);
      if (d.dev_pct) out += fmt::format("  dev% {:.1f}", *d.dev_pct);
      out += fmt::format("  (exact, eBPF {})", a.exact_source ? *a.exact_source : "");
    }
    if (d.lost && *d.lost > 0)
      out += fmt::format("; the kernel ran no BPF program for the end of {} request{}, so their time is counted as "
                         "unsure", *d.lost, *d.lost == 1 ? "" : "s");
    out += "\n";
  }
  if (a.exact_unavailable && !a.devices.empty())
    out += fmt::format("  device     exact busy% not available: {}\n", *a.exact_unavailable);
  if (a.devices.empty()) out += "  device     not available: no target sits on a block device\n";
  out += "  system    ";
  if (a.system.iowait_pct)
    out += fmt::format(" iowait {:.1f}%, idle {:.1f}% of all CPUs;", *a.system.iowait_pct, *a.system.idle_pct);
  else if (a.system.no_ticks)
    out += " iowait and idle not available (no clock tick in the window: /proc/stat counts ticks; run longer);";
  else
    out += " iowait and idle not available (/proc/stat unreadable);";
  if (a.system.cpuidle_s) {
    out += " CPU idle states:";
    for (const auto& [state, s] : *a.system.cpuidle_s) out += fmt::format(" {} {:.2f} s", state, s);
    out += "\n";
  } else {
    out += " CPU idle states not available (no cpuidle in sysfs)\n";
  }
}

// "0", "1", "2-3" ... "16+" for buckets whose lowest depths are `low`.
std::string depth_label(const std::vector<uint64_t>& low, size_t k) {
  if (k + 1 == low.size()) return fmt::format("{}+", low[k]);
  return low[k] + 1 == low[k + 1] ? std::to_string(low[k]) : fmt::format("{}-{}", low[k], low[k + 1] - 1);
}

// Two views of depth side by side: what this run holds (from submission to
// reaping) and what the device has (diskstats' aqu-sz and, with the eBPF
// tracker, the time at each depth). A run that lets the device's queue
// drain shows it here: the first stays at the depth, the second does not.
// What would let the device hold more of a run's depth, for the line that
// says it held less: the policy that kept the rest away from it.
std::string shortfall_hint(const JobSpec* job) {
  if (!job) return "each job's own lines name its batching";
  if (job->lockstep())
    return "lockstep batches let its queue drain: without --submit-batch and --complete-batch each slot is refilled "
           "as reaped";
  if (job->submit_policy == SubmitPolicy::Pass || !job->direct)
    return "--submit-policy each submits each refill the moment its slot is free";
  return "the rest were completed and waiting for the worker to reap them: a CPU of its own (--cpus) or more "
         "--threads reap them sooner";
}

// The device held less than the run: its mean queue (aqu-sz) over the time
// the run had I/O in flight, against the run's own mean over that time.
// Below 0.9 of it (and a run that holds 2 or more) it is said, with what
// would hold more.
void shortfall_line(std::string& out, const InflightResult& f, const Accounting& a, const JobSpec* job) {
  // A nop's I/Os never reach a device: there is nothing it could hold.
  if (!f.busy_ns || (job && job->engine == EngineKind::Nop)) return;
  const double run = static_cast<double>(f.inflight_ns) / static_cast<double>(f.busy_ns);
  if (run < 2) return;
  for (const auto& d : a.devices) {
    if (d.role != DeviceRole::Target) continue;
    const double dev = d.row.aqu_sz * static_cast<double>(f.window_ns) / static_cast<double>(f.busy_ns);
    if (dev >= 0.9 * run) continue;
    out += fmt::format("             device {} held {:.1f} of the run's {:.1f} on average while the run had I/O in "
                       "flight (aqu-sz): {}\n", d.row.device, dev, run, shortfall_hint(job));
  }
}

void inflight_lines(std::string& out, const InflightResult& f, const Accounting* a, const JobSpec* job) {
  if (!f.window_ns) return;
  const double w = static_cast<double>(f.window_ns);
  out += fmt::format("  in flight  (own I/O) {:.3f} s = {:.2f}% of the window (exact: the union of every I/O's "
                     "submission-to-reaping interval)", static_cast<double>(f.busy_ns) / 1e9,
                     100.0 * static_cast<double>(f.busy_ns) / w);
  if (a)
    for (const auto& d : a->devices)
      if (d.role == DeviceRole::Target)
        out += fmt::format("; kernel %util on {} {:.1f}% ({:+.1f} points)", d.row.device, d.row.util,
                           d.row.util - 100.0 * static_cast<double>(f.busy_ns) / w);
  out += fmt::format("\n             this run: mean {:.1f};  time with N in flight:", static_cast<double>(f.inflight_ns) / w);
  for (int b = 0; b < InflightResult::kBuckets; ++b) {
    const double pct = 100.0 * static_cast<double>(f.by_depth_ns[b]) / w;
    if (pct < 0.05) continue;  // a bucket that rounds to 0.0% says nothing
    const uint64_t lo = InflightResult::bucket_low(b);
    const std::string label = b <= 1 ? std::to_string(lo) : fmt::format("{}-{}", lo, 2 * lo - 1);
    out += fmt::format("  {}: {:.1f}%", label, pct);
  }
  out += "  (submission to reaping)\n";
  if (a)
    for (const auto& d : a->devices) {
      if (d.role != DeviceRole::Target) continue;
      out += fmt::format("             device {}: mean {:.1f} (aqu-sz", d.row.device, d.row.aqu_sz);
      if (!d.depth_pct.empty() && d.depth_pct.size() == a->exact_depth_low.size()) {
        out += ");  time with N in flight:";
        for (size_t k = 0; k < d.depth_pct.size(); ++k)
          if (d.depth_pct[k] >= 0.05) out += fmt::format("  {}: {:.1f}%", depth_label(a->exact_depth_low, k), d.depth_pct[k]);
        out += fmt::format("  (eBPF {}; every I/O on the device)\n", a->exact_source ? *a->exact_source : "");
      } else {
        out += ": every I/O on the device; --acct full adds the time at each depth)\n";
      }
    }
  if (a) shortfall_line(out, f, *a, job);
  if (f.log_waits)
    out += fmt::format("             (workers waited {} for the in-flight log to drain)\n", plural(f.log_waits, "time"));
}

}  // namespace

namespace {

// How a run refilled as reaped submits, and what chose it (--submit-policy).
std::string refill_how(const JobSpec& job) {
  if (!job.submit_policy_applies()) return "";
  switch (job.submit_policy) {
    case SubmitPolicy::Each: return ", each refill submitted at once (--submit-policy each)";
    case SubmitPolicy::Pass: return ", a pass's refills submitted with the next wait (--submit-policy pass)";
    case SubmitPolicy::Auto: break;
  }
  if (!job.direct || job.engine == EngineKind::Nop)
    return ", a pass's refills submitted with the next wait (auto: no device queue to keep fed)";
  if (job.depth_per_thread() == 1) return "";
  return ", each refill submitted at once or with the next wait, whichever measures faster (--submit-policy auto)";
}

// What one job does, as the start-up line says it: "randrw (70% reads) 4 KiB
// O_DIRECT, engine ..., depth 32 (32 per thread x 1 thread), batches ...".
std::string job_setup(const JobSpec& job, const std::string& engine_desc) {
  std::string pace;
  if (job.rate_per_thread() > 0) pace = fmt::format(", paced at {} IOPS per thread", format_count(job.rate_per_thread()));
  if (job.paced_by_direction()) {
    const std::array<double, 3> r = job.rate_by_direction();
    const auto one = [](double v) { return v > 0 ? format_count(v) + " IOPS" : std::string("unpaced"); };
    pace = fmt::format(", paced per thread: reads {}, writes {}", one(r[0]), one(r[1]));
    if (job.rwmix_trim) pace += fmt::format(", trims {}", one(r[2]));
  }
  if (!pace.empty() && job.rate_process == RateProcess::Poisson) pace += " (Poisson arrivals)";
  if (job.has_rate_floor()) {
    std::vector<std::string> floors;
    constexpr const char* kDirs[] = {"reads", "writes", "trims"};
    const bool mixed = rw_mixed(job.rw);
    const std::array<bool, 3> does = {
        mixed ? job.rwmix_read > 0 : job.rw == RwMode::RandRead || job.rw == RwMode::Read,
        mixed ? job.rwmix_read + job.rwmix_trim < 100 : job.rw == RwMode::RandWrite || job.rw == RwMode::Write,
        mixed ? job.rwmix_trim > 0 : job.rw == RwMode::Trim || job.rw == RwMode::RandTrim};
    for (int d = 0; d < 3; ++d) {
      if (!does[d]) continue;  // only what moves is held to its floor
      if (job.rate_min_iops[d]) floors.push_back(fmt::format("{} {} IOPS", kDirs[d], format_count(static_cast<double>(job.rate_min_iops[d]))));
      if (job.rate_min_bw[d]) floors.push_back(fmt::format("{} {}/s", kDirs[d], format_size(job.rate_min_bw[d])));
    }
    pace += fmt::format(", at least {} per thread over each {}", fmt::join(floors, ", "),
                        format_duration_ns(static_cast<double>(job.rate_cycle.count())));
  }
  std::string extra;
  if (job.distribution.kind != DistKind::Uniform) extra += ", " + distribution_name(job.distribution) + " access";
  if (job.fsync_every) extra += fmt::format(", fsync every {} writes", job.fsync_every);
  if (job.fdatasync_every) extra += fmt::format(", fdatasync every {} writes", job.fdatasync_every);
  std::string mix = rw_name(job.rw);
  if (rw_mixed(job.rw))
    mix += fmt::format(" ({}% reads{})", job.rwmix_read,
                       job.rwmix_trim ? fmt::format(", {}% trims", job.rwmix_trim) : std::string());
  std::string batches =
      job.lockstep() ? fmt::format("lockstep batches: submit {} / complete {}", job.submit_batch_eff(), job.complete_batch_eff())
                     : "refilled as reaped" + refill_how(job);
  if (job.complete_max) batches += fmt::format(", at most {} taken per syscall", job.complete_max);
  std::string sizes = job.bs_split.empty() ? format_size(job.bs) : "sizes " + bssplit_text(job.bs_split);
  if (job.blockalign && rw_random(job.rw)) sizes += fmt::format(" on {} boundaries", format_size(job.blockalign));
  if (job.sized_by_direction()) {
    const auto of = [&](int d) {
      const std::vector<BsShare> l = job.sizes_of(d);
      return l.size() == 1 ? format_size(l.front().size) : "sizes " + bssplit_text(l);
    };
    sizes = fmt::format("reads {}, writes {}{}", of(0), of(1), job.rwmix_trim ? ", trims " + of(2) : std::string());
  }
  return fmt::format("{} {} {}, engine {}, depth {} ({} per thread x {} thread{}), {}{}{}",
                     mix, sizes, job.direct ? "O_DIRECT" : "buffered", engine_desc,
                     job.depth_per_thread() * job.threads, job.depth_per_thread(), job.threads,
                     job.threads == 1 ? "" : "s", batches, pace, extra);
}

std::string stop_of(const JobSpec& job) {
  std::string stop = job.runtime ? fmt::format("runtime {}", format_duration_ns(static_cast<double>(job.runtime->count()))) : "";
  if (job.ios) stop += fmt::format("{}{}", stop.empty() ? "" : " or ", plural(*job.ios, "I/O"));
  return stop;
}

}  // namespace

std::string format_start_line(const JobSpec& job, const RunResult& r) {
  return format_start_line(std::vector<JobSpec>{job}, r);
}

std::string format_start_line(const std::vector<JobSpec>& jobs, const RunResult& r) {
  const JobSpec& run = jobs.front();
  const std::string ramp =
      run.ramp.count() ? fmt::format(" after {} ramp", format_duration_ns(static_cast<double>(run.ramp.count()))) : "";
  std::string fallbacks;
  for (const auto& f : r.engine_fallbacks) fallbacks += fmt::format("{}{}", fallbacks.empty() ? "; fell back: " : "; ", f);
  if (jobs.size() == 1)
    return fmt::format("ioacct bench: {}; {}{}; targets: {}{}", job_setup(run, r.engine_desc), stop_of(run), ramp,
                       targets_of(r.targets), fallbacks);
  std::string out = fmt::format("ioacct bench: {} jobs side by side{}", jobs.size(), ramp);
  for (size_t i = 0; i < jobs.size() && i < r.jobs.size(); ++i) {
    const JobSpec& j = jobs[i];
    std::string when;
    if (j.stonewall) when += "; starts when the jobs before it have ended";
    if (j.startdelay.count())
      when += fmt::format("; starts {} late", format_duration_ns(static_cast<double>(j.startdelay.count())));
    out += fmt::format("\n  job {}: {}; {}{}; targets: {}", r.jobs[i].name, job_setup(j, r.jobs[i].engine_desc),
                       stop_of(j), when, targets_of(r.jobs[i].targets));
  }
  return out;
}

namespace {

std::string job_line(const JobSpec& job, const ThreadResult& t, uint64_t window_ns) {
  std::string mix;
  if (rw_mixed(job.rw))
    mix = fmt::format(" ({}% reads{})", job.rwmix_read,
                      job.rwmix_trim ? fmt::format(", {}% trims", job.rwmix_trim) : std::string());
  return fmt::format("{}{}{} {} {}, {}, depth {}, {} measured", rw_name(job.rw), mix,
                     job.distribution.kind != DistKind::Uniform ? " " + distribution_name(job.distribution) : "",
                     format_size(job.bs), job.direct ? "O_DIRECT" : "buffered", engine_name(job.engine, job.sync.call), t.depth,
                     format_duration_ns(static_cast<double>(window_ns)));
}

// IOPS, bandwidth and latency of one job (or of the run), over `window_ns`.
void counts_lines(std::string& out, const JobSpec& job, const ThreadResult& t, uint64_t window_ns) {
  const bool moves_data = engine_traits(job.engine).moves_data;
  out += fmt::format("  IOPS       {}  ({} completed in the window)\n", format_count(per_s(t.ios, window_ns)),
                     plural(t.ios, "I/O"));
  if (moves_data && rw_trims_only(job.rw)) {
    out += "  bandwidth  none: trims move no data (what they trimmed is below)\n";
  } else if (moves_data) {
    out += fmt::format("  bandwidth  {}", format_bandwidth(per_s(t.bytes_read + t.bytes_written, window_ns)));
    if (t.reads && t.writes)
      out += fmt::format("  (read {} at {} IOPS, write {} at {} IOPS)", format_bandwidth(per_s(t.bytes_read, window_ns)),
                         format_count(per_s(t.reads, window_ns)), format_bandwidth(per_s(t.bytes_written, window_ns)),
                         format_count(per_s(t.writes, window_ns)));
    out += "\n";
  } else {
    out += "  bandwidth  not applicable: the nop engine moves no data\n";
  }
  if (t.latency->count()) {
    out += t.trims || t.syncs ? "  latency    of reads and writes, submission to reaping (lat)\n"
                              : "  latency    submission to reaping (lat)\n";
    latency_lines(out, *t.latency, "             ");
    direction_lines(out, t);
  }
  split_lines(out, job, t, window_ns);
}

void syscalls_line(std::string& out, const ThreadResult& t, bool sqpoll) {
  const auto& e = t.engine;
  auto each = [](uint64_t ios, uint64_t calls, const char* none) {
    return calls ? fmt::format("{:.1f} I/Os each", static_cast<double>(ios) / static_cast<double>(calls)) : std::string(none);
  };
  out += fmt::format("  syscalls   {} in all; {} submitting ({}), {} reaping ({})\n", e.syscalls, e.submit_syscalls,
                     each(e.submitted, e.submit_syscalls, sqpoll ? "the SQ thread submits" : "none"),
                     e.reap_syscalls, each(e.reaped, e.reap_syscalls, "completions found without waiting"));
}

void errors_line(std::string& out, const ThreadResult& t, const std::string& first_error) {
  if (t.errors.empty()) {
    out += "  errors     none\n";
    return;
  }
  out += "  errors    ";
  for (const auto& [k, v] : t.errors) out += fmt::format(" {} x{}", error_key_name(k), v);
  out += first_error.empty() ? "\n" : fmt::format("  (first in the run: {})\n", first_error);
}

void thread_lines(std::string& out, const RunResult& r, unsigned first, unsigned n) {
  if (n < 2) return;
  for (unsigned i = first; i < first + n; ++i) {
    const ThreadResult& th = r.threads[i];
    out += fmt::format("  thread {:<3} {}depth {}  IOPS {}  p50 {}  p99 {}  max {}{}\n", th.index,
                       th.cpu >= 0 ? fmt::format("cpu {}  ", th.cpu) : "", th.depth,
                       format_count(per_s(th.ios, th.window_ns)),
                       format_duration_ns(static_cast<double>(th.latency->quantile(0.5))),
                       format_duration_ns(static_cast<double>(th.latency->quantile(0.99))),
                       format_duration_ns(static_cast<double>(th.latency->max())),
                       th.errors.empty() ? "" : "  (errors)");
  }
}

void verify_lines(std::string& out, const RunResult& r) {
  if (!r.verify) return;
  const auto& v = *r.verify;
  if (!v.checked_after && !v.checked_during && !v.mismatches && !r.verify_skipped) {
    // Not "0 blocks re-read: all as written": nothing was checked at all.
    out += "  verify     nothing to check: no write of this run completed\n";
    return;
  }
  // An interrupted final pass checked only part of what the run wrote: say
  // how much, and never "all as written" for blocks nobody re-read.
  if (r.verify_skipped)
    out += fmt::format("  verify     {} of the {} written re-read after the run (final pass SKIPPED: interrupted), {} "
                       "checked during it: ", v.checked_after, plural(v.written, "block"),
                       plural(v.checked_during, "read"));
  else
    out += fmt::format("  verify     {} re-read after the run, {} checked during it: ",
                       plural(v.checked_after, "block"), plural(v.checked_during, "read"));
  if (!v.mismatches) {
    out += r.verify_skipped ? "no mismatch in what was checked\n" : "all as written\n";
  } else {
    out += fmt::format("{}\n", plural(v.mismatches, "MISMATCH", "MISMATCHES"));
    for (const auto& f : v.findings)
      out += fmt::format("             offset {} ({}): expected {}; found {}\n", f.offset, f.kind, f.expected, f.found);
    if (v.findings.size() < v.mismatches)
      out += fmt::format("             ... and {} more not listed\n", v.mismatches - v.findings.size());
  }
}

void process_cpu_line(std::string& out, const RunResult& r, AcctLevel acct) {
  const ThreadResult& t = r.total;
  if (r.cpu) {
    const double cpu_s = r.cpu->user_s + r.cpu->sys_s;
    out += fmt::format("  cpu        user {:.2f} s  sys {:.2f} s  ({:.0f}% of one CPU)  {} per I/O;  "
                       "context switches {} voluntary, {} involuntary\n",
                       r.cpu->user_s, r.cpu->sys_s, r.window_ns ? 100.0 * cpu_s * 1e9 / static_cast<double>(r.window_ns) : 0.0,
                       t.ios ? format_duration_ns(cpu_s * 1e9 / static_cast<double>(t.ios)) : "n/a (no I/O)",
                       r.cpu->vol_ctxsw, r.cpu->invol_ctxsw);
  } else if (acct == AcctLevel::Off) {
    out += "  cpu        not measured (--acct off)\n";
  } else {
    out += "  cpu        not measured: the run stopped before its measured window opened\n";
  }
}

// A job's own CPU (several jobs): its threads' schedstat and the kernel
// What the chooser decided (--submit-policy auto on O_DIRECT): the share
// of the time each refill went at once, and what its probes measured.
void submission_line(std::string& out, const RefillResult& r) {
  if (r.decided_by != "measured") return;
  const uint64_t all = r.each_ns + r.pass_ns;
  if (!all) return;
  std::string probes = "no probe finished (the window was too short to measure)";
  if (!r.probe_ratios.empty()) {
    auto sorted = r.probe_ratios;
    std::sort(sorted.begin(), sorted.end());
    probes = fmt::format("{}, {} found each faster{}{}{}; IOPS each/pass {:.2f}x-{:.2f}x", plural(r.probes, "probe"),
                         r.chose_each,
                         r.unconfirmed ? fmt::format(" ({} not confirmed by the next)", r.unconfirmed) : "",
                         r.extended ? fmt::format(", {} after a second set of pairs", r.extended) : "",
                         r.cut_short ? fmt::format(", {} cut short (each far behind)", r.cut_short) : "",
                         sorted.front(), sorted.back());
  }
  out += fmt::format("  submission each refill at once {:.0f}% of the time, with the next wait {:.0f}% ({}; "
                     "--submit-policy auto)\n", 100.0 * static_cast<double>(r.each_ns) / static_cast<double>(all),
                     100.0 * static_cast<double>(r.pass_ns) / static_cast<double>(all), probes);
}

// threads working for them, over the run's window.
void job_cpu_line(std::string& out, const JobResult& j) {
  if (!j.cpu) {
    out += "  cpu        not measured (--acct off, or the run stopped before its window opened)\n";
    return;
  }
  const JobCpu& c = *j.cpu;
  std::string by;
  if (c.by_thread_s.size() > 1)
    for (size_t i = 0; i < c.by_thread_s.size(); ++i) by += fmt::format("{}{:.2f}", i ? " " : " (by thread: ", c.by_thread_s[i]);
  if (!by.empty()) by += ")";
  out += fmt::format("  cpu        {:.2f} s: submitters {:.2f} s{}, SQ threads {:.2f} s, io-wq {:.2f} s; {} per I/O "
                     "(schedstat)\n", c.total_s, c.submitters_s, by, c.sq_threads_s, c.iowq_s,
                     j.total.ios ? format_duration_ns(c.total_s * 1e9 / static_cast<double>(j.total.ios)) : "n/a");
}

std::string single_job(const JobSpec& job, const RunResult& r) {
  const ThreadResult& t = r.total;
  std::string out = job_line(job, t, r.window_ns) + (r.interrupted ? " (INTERRUPTED: partial results)\n" : "\n");
  if (t.latency_depth)
    out += fmt::format("  target     {} for {:g}% of I/Os, over windows of {}: depth {}{}\n",
                       format_duration_ns(static_cast<double>(job.latency_target.count())), job.latency_percentile,
                       format_duration_ns(static_cast<double>(job.latency_window.count())), t.latency_depth,
                       t.latency_found ? " found; the figures below are its last window's"
                                       : " reached when the run ended, not settled; the figures cover every depth tried");
  counts_lines(out, job, t, r.window_ns);
  syscalls_line(out, t, job.uring.sqpoll);
  submission_line(out, t.refill);
  process_cpu_line(out, r, job.acct);
  if (r.accounting) accounting_lines(out, *r.accounting, t.ios);
  if (r.inflight) inflight_lines(out, *r.inflight, r.accounting ? &*r.accounting : nullptr, &job);
  errors_line(out, t, r.first_error);
  verify_lines(out, r);
  if (t.short_resubmits || t.eagain_retries)
    out += fmt::format("  retries    {} finished by resubmitting, {} retried\n",
                       plural(t.short_resubmits, "short transfer"), plural(t.eagain_retries, "EAGAIN", "EAGAINs"));
  if (r.anatomy) out += format_anatomy(*r.anatomy);
  thread_lines(out, r, 0, static_cast<unsigned>(r.threads.size()));
  return out;
}

}  // namespace

std::string format_console(const JobSpec& job, const RunResult& r) { return format_console(std::vector<JobSpec>{job}, r); }

std::string format_console(const std::vector<JobSpec>& jobs, const RunResult& r) {
  if (jobs.size() == 1) return single_job(jobs.front(), r);
  std::string out;
  bool sqpoll = false;
  for (size_t i = 0; i < jobs.size() && i < r.jobs.size(); ++i) {
    const JobSpec& job = jobs[i];
    const JobResult& j = r.jobs[i];
    sqpoll |= job.uring.sqpoll;
    std::string when;
    if (job.stonewall) when += ", started when the jobs before it had ended";
    if (job.startdelay.count())
      when += fmt::format(", started {} late", format_duration_ns(static_cast<double>(job.startdelay.count())));
    out += fmt::format("job {}: {}{}\n", j.name, job_line(job, j.total, j.window_ns), when);
    counts_lines(out, job, j.total, j.window_ns);
    syscalls_line(out, j.total, job.uring.sqpoll);
    job_cpu_line(out, j);
    errors_line(out, j.total, "");
    if (j.total.short_resubmits || j.total.eagain_retries)
      out += fmt::format("  retries    {} finished by resubmitting, {} retried\n",
                         plural(j.total.short_resubmits, "short transfer"),
                         plural(j.total.eagain_retries, "EAGAIN", "EAGAINs"));
    thread_lines(out, r, j.first_thread, j.threads);
  }
  const ThreadResult& t = r.total;
  out += fmt::format("all {} jobs: {} threads, {} measured (from the first window's opening to the last one's close){}\n",
                     jobs.size(), r.threads.size(), format_duration_ns(static_cast<double>(r.window_ns)),
                     r.interrupted ? " (INTERRUPTED: partial results)" : "");
  out += fmt::format("  IOPS       {}  ({} I/Os completed in the jobs' windows)\n", format_count(per_s(t.ios, r.window_ns)), t.ios);
  out += fmt::format("  bandwidth  {}\n", format_bandwidth(per_s(t.bytes_read + t.bytes_written, r.window_ns)));
  syscalls_line(out, t, sqpoll);
  process_cpu_line(out, r, jobs.front().acct);
  if (r.accounting) accounting_lines(out, *r.accounting, t.ios);
  if (r.inflight) inflight_lines(out, *r.inflight, r.accounting ? &*r.accounting : nullptr, nullptr);
  errors_line(out, t, r.first_error);
  return out;
}

}  // namespace ioacct
