#include "cli/bench_cmd.hpp"

#include <algorithm>
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "acct/run_context.hpp"
#include "cli/bench_fleet.hpp"
#include "cli/bench_jobs.hpp"
#include "cli/bench_options.hpp"
#include "cli/cli.hpp"
#include "cli/signals.hpp"
#include "cli/sq_advice.hpp"
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

CLI::App* add_bench_command(CLI::App& app, BenchArgs& a) {
  CLI::App* b = add_command(
      app, "bench", "Run a workload on files or block devices and account for it.",
      "Sizes are IEC (4k = 4096 bytes, 1m, 2g, 64KiB), counts and rates SI (10k = 10000), "
      "durations need a unit (10s, 500ms, 2m).\n"
      "With no TARGET, a temporary file (--size, default 1 GiB) is created in $TMPDIR or --dir "
      "and removed on exit.\nSee docs/cli.md for every option.",
      a, bench_options());
  // An empty value ("--runtime ''") is a mistake, never "use the default".
  const CLI::Validator not_empty(
      [](const std::string& v) { return v.empty() ? std::string("needs a value, not an empty string") : std::string(); },
      "", "not_empty");
  for (CLI::Option* o : b->get_options())
    if (o->get_type_size() != 0) o->check(not_empty);  // every option that takes a value
  return b;
}

JobSpec to_job(const BenchArgs& a) {
  // One job: to_jobs() takes --job and --fio apart before it comes here, so
  // they can only reach this from a compare variant.
  if (!a.jobs.empty() || !a.fio.empty())
    throw UsageError(fmt::format("{}: a variant is one job; several jobs are a bench run of their own",
                                 a.jobs.empty() ? "--fio" : "--job"));
  JobSpec j;
  decode_bench_options(a, j);
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
