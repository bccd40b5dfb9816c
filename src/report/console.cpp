#include <fmt/format.h>

#include "common/units.hpp"
#include "report/report.hpp"

namespace ioacct {
namespace {

std::string targets_line(const RunResult& r) {
  std::string s;
  for (const auto& t : r.targets) {
    if (!s.empty()) s += ", ";
    s += fmt::format("{} [{}{}]", t.path, t.device.empty() ? "no block device" : t.device,
                     t.range ? fmt::format(", {} used", format_size(t.range)) : "");
  }
  return s;
}

void latency_lines(std::string& out, const Histogram& h, const char* indent) {
  auto d = [](uint64_t ns) { return format_duration_ns(static_cast<double>(ns)); };
  out += fmt::format("{}min {}  mean {}  max {}\n", indent, d(h.min()),
                     format_duration_ns(h.mean()), d(h.max()));
  out += fmt::format("{}p50 {}  p90 {}  p99 {}  p99.9 {}  p99.99 {}\n", indent, d(h.quantile(0.5)),
                     d(h.quantile(0.9)), d(h.quantile(0.99)), d(h.quantile(0.999)), d(h.quantile(0.9999)));
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
      out += fmt::format(", useful work {:.2f} s ({:.0f}%)", *sq.work_s, sq.cpu_s > 0 ? 100.0 * *sq.work_s / sq.cpu_s : 0.0);
    else
      out += ", useful work not available (this kernel's fdinfo has no SqWorkTime)";
    if (ios) out += fmt::format(", {} CPU per I/O", format_duration_ns(sq.cpu_s * 1e9 / static_cast<double>(ios)));
    out += fmt::format("  [{}]\n", sq.source);
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

void inflight_lines(std::string& out, const InflightResult& f, const Accounting* a) {
  if (!f.window_ns) return;
  const double w = static_cast<double>(f.window_ns);
  out += fmt::format("  in flight  busy {:.3f} s = {:.2f}% of the window (exact: the union of every I/O's "
                     "submission-to-reaping interval)", static_cast<double>(f.busy_ns) / 1e9,
                     100.0 * static_cast<double>(f.busy_ns) / w);
  if (a)
    for (const auto& d : a->devices)
      if (d.role == DeviceRole::Target)
        out += fmt::format("; kernel %util on {} {:.1f}% ({:+.1f} points)", d.row.device, d.row.util,
                           d.row.util - 100.0 * static_cast<double>(f.busy_ns) / w);
  out += "\n             time with N in flight:";
  for (int b = 0; b < InflightResult::kBuckets; ++b) {
    if (!f.by_depth_ns[b]) continue;
    const uint64_t lo = InflightResult::bucket_low(b);
    const std::string label = b <= 1 ? std::to_string(lo) : fmt::format("{}-{}", lo, 2 * lo - 1);
    out += fmt::format("  {}: {:.1f}%", label, 100.0 * static_cast<double>(f.by_depth_ns[b]) / w);
  }
  out += "\n";
  if (f.log_waits)
    out += fmt::format("             (workers waited {} times for the in-flight log to drain)\n", f.log_waits);
}

}  // namespace

std::string format_start_line(const JobSpec& job, const RunResult& r) {
  std::string pace;
  if (job.rate_per_thread() > 0) pace = fmt::format(", paced at {} IOPS per thread", format_count(job.rate_per_thread()));
  std::string stop = job.runtime ? fmt::format("runtime {}", format_duration_ns(static_cast<double>(job.runtime->count()))) : "";
  if (job.ios) stop += fmt::format("{}{} I/O{}", stop.empty() ? "" : " or ", *job.ios, *job.ios == 1 ? "" : "s");
  return fmt::format(
      "ioacct bench: {} {} {}, engine {}, depth {} ({} per thread x {} thread{}), batches submit {} / "
      "complete {}{}; {}{}; targets: {}",
      job.rw == RwMode::RandRw ? fmt::format("randrw ({}% reads)", job.rwmix_read) : rw_name(job.rw),
      format_size(job.bs), job.direct ? "O_DIRECT" : "buffered", r.engine_desc,
      job.depth_per_thread() * job.threads, job.depth_per_thread(), job.threads, job.threads == 1 ? "" : "s",
      job.submit_batch_eff(), job.complete_batch_eff(), pace, stop,
      job.ramp.count() ? fmt::format(" after {} ramp", format_duration_ns(static_cast<double>(job.ramp.count()))) : "",
      targets_line(r));
}

std::string format_console(const JobSpec& job, const RunResult& r) {
  const ThreadResult& t = r.total;
  const bool moves_data = engine_traits(job.engine).moves_data;
  std::string out;
  out += fmt::format("{} {} {}, {}, {}, {} measured{}\n",
                     rw_name(job.rw), format_size(job.bs), job.direct ? "O_DIRECT" : "buffered",
                     engine_name(job.engine), fmt::format("depth {}", t.depth),
                     format_duration_ns(static_cast<double>(r.window_ns)),
                     r.interrupted ? " (INTERRUPTED: partial results)" : "");
  const double iops = per_s(t.ios, r.window_ns);
  out += fmt::format("  IOPS       {}  ({} I/Os completed in the window)\n", format_count(iops), t.ios);
  if (moves_data) {
    out += fmt::format("  bandwidth  {}", format_bandwidth(per_s(t.bytes_read + t.bytes_written, r.window_ns)));
    if (t.reads && t.writes)
      out += fmt::format("  (read {} at {} IOPS, write {} at {} IOPS)", format_bandwidth(per_s(t.bytes_read, r.window_ns)),
                         format_count(per_s(t.reads, r.window_ns)), format_bandwidth(per_s(t.bytes_written, r.window_ns)),
                         format_count(per_s(t.writes, r.window_ns)));
    out += "\n";
  } else {
    out += "  bandwidth  not applicable: the nop engine moves no data\n";
  }
  if (t.latency->count()) {
    out += "  latency    submission to reaping\n";
    latency_lines(out, *t.latency, "             ");
  }
  const auto& e = t.engine;
  auto each = [](uint64_t ios, uint64_t calls, const char* none) {
    return calls ? fmt::format("{:.1f} I/Os each", static_cast<double>(ios) / static_cast<double>(calls)) : std::string(none);
  };
  out += fmt::format("  syscalls   {} in all; {} submitting ({}), {} reaping ({})\n", e.syscalls, e.submit_syscalls,
                     each(e.submitted, e.submit_syscalls, job.uring.sqpoll ? "the SQ thread submits" : "none"),
                     e.reap_syscalls, each(e.reaped, e.reap_syscalls, "completions found without waiting"));
  if (r.cpu) {
    const double cpu_s = r.cpu->user_s + r.cpu->sys_s;
    out += fmt::format("  cpu        user {:.2f} s  sys {:.2f} s  ({:.0f}% of one CPU)  {} per I/O;  "
                       "context switches {} voluntary, {} involuntary\n",
                       r.cpu->user_s, r.cpu->sys_s, r.window_ns ? 100.0 * cpu_s * 1e9 / static_cast<double>(r.window_ns) : 0.0,
                       t.ios ? format_duration_ns(cpu_s * 1e9 / static_cast<double>(t.ios)) : "n/a (no I/O)",
                       r.cpu->vol_ctxsw, r.cpu->invol_ctxsw);
  } else if (job.acct == AcctLevel::Off) {
    out += "  cpu        not measured (--acct off)\n";
  } else {
    out += "  cpu        not measured: the run stopped before its measured window opened\n";
  }
  if (r.accounting) accounting_lines(out, *r.accounting, t.ios);
  if (r.inflight) inflight_lines(out, *r.inflight, r.accounting ? &*r.accounting : nullptr);
  if (t.errors.empty()) {
    out += "  errors     none\n";
  } else {
    out += "  errors    ";
    for (const auto& [k, v] : t.errors) out += fmt::format(" {} x{}", error_key_name(k), v);
    out += fmt::format("  (first: {})\n", r.first_error);
  }
  if (r.verify) {
    const auto& v = *r.verify;
    out += fmt::format("  verify     {} blocks re-read after the run, {} reads checked during it: ",
                       v.checked_after, v.checked_during);
    if (r.verify_skipped) out += "final pass SKIPPED (interrupted); ";
    if (!v.mismatches) {
      out += "all as written\n";
    } else {
      out += fmt::format("{} MISMATCH{}\n", v.mismatches, v.mismatches == 1 ? "" : "ES");
      for (const auto& f : v.findings)
        out += fmt::format("             offset {} ({}): expected {}; found {}\n", f.offset, f.kind, f.expected, f.found);
      if (v.findings.size() < v.mismatches)
        out += fmt::format("             ... and {} more not listed\n", v.mismatches - v.findings.size());
    }
  }
  if (t.short_resubmits || t.eagain_retries)
    out += fmt::format("  retries    {} short transfers finished by resubmitting, {} EAGAIN retried\n",
                       t.short_resubmits, t.eagain_retries);
  if (r.anatomy) out += format_anatomy(*r.anatomy);
  if (r.threads.size() > 1) {
    for (const auto& th : r.threads) {
      out += fmt::format("  thread {:<3} {}depth {}  IOPS {}  p50 {}  p99 {}  max {}{}\n", th.index,
                         th.cpu >= 0 ? fmt::format("cpu {}  ", th.cpu) : "", th.depth,
                         format_count(per_s(th.ios, th.window_ns)),
                         format_duration_ns(static_cast<double>(th.latency->quantile(0.5))),
                         format_duration_ns(static_cast<double>(th.latency->quantile(0.99))),
                         format_duration_ns(static_cast<double>(th.latency->max())),
                         th.errors.empty() ? "" : "  (errors)");
    }
  }
  return out;
}

}  // namespace ioacct
