#include "runner/runner.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <thread>

#include "acct/accounting.hpp"
#include "acct/clock.hpp"
#include "acct/cpu.hpp"
#include "acct/inflight.hpp"
#include "acct/system.hpp"
#include "runner/anatomy_slices.hpp"
#include "runner/control.hpp"
#include "runner/kick.hpp"
#include "runner/plan.hpp"
#include "runner/series_collector.hpp"
#include "runner/worker.hpp"
#include "trace/attach.hpp"

namespace ioacct {
namespace {

// The devices the run samples at the window's edges: every whole disk a
// target sits on and everything under it (`sampled`), and of those the disks
// the targets sit on (`targets`, in target order: the first is the one the
// time series and compare's %util read).
struct RunDevices {
  std::vector<std::string> sampled, targets;
};

RunDevices resolve_devices(const std::vector<const Targets*>& all) {
  RunDevices d;
  auto add = [](std::vector<std::string>& v, const std::string& name) {
    if (std::find(v.begin(), v.end(), name) == v.end()) v.push_back(name);
  };
  for (const Targets* targets : all)
    for (const auto& t : targets->list) {
      const DeviceChain c = resolve_device(t.dev_major, t.dev_minor);
      if (c.disk.empty()) continue;
      add(d.sampled, c.disk);
      add(d.targets, c.disk);
      for (const auto& u : c.underlying) add(d.sampled, u);
    }
  return d;
}

std::vector<ExactBusySample> exact_samples(const std::vector<BusyCounters>& counters) {
  std::vector<ExactBusySample> out;
  out.reserve(counters.size());
  for (const BusyCounters& c : counters)
    out.push_back({c.stamp_ns, c.busy_ns, c.dev_busy_ns, c.lost, c.unsure_ns, c.invisible, c.device_span,
                   std::vector<uint64_t>(std::begin(c.depth_ns), std::end(c.depth_ns))});
  return out;
}

// The progress line's figures over the interval since the last call, as
// measured (never assumed to be one second).
class ProgressMeter {
 public:
  // `ios`: the measured I/Os the run ends at (--ios of a single job), if any.
  ProgressMeter(std::optional<uint64_t> ios, const Control& ctl, const Published* pub, unsigned threads, Nanos t0)
      : ios_(ios), ctl_(ctl), pub_(pub), threads_(threads), t0_(t0), last_t_(t0) {}

  Progress take(Nanos now) {
    uint64_t ios = 0, bytes = 0, inflight = 0, measured = 0;
    for (unsigned i = 0; i < threads_; ++i) {
      ios += pub_[i].completed.load(std::memory_order_relaxed);
      bytes += pub_[i].bytes.load(std::memory_order_relaxed);
      inflight += pub_[i].inflight.load(std::memory_order_relaxed);
      measured += pub_[i].measured.load(std::memory_order_relaxed);
    }
    Progress p;
    const double dt = static_cast<double>(now - last_t_) / 1e9;  // the interval as measured
    p.elapsed_s = static_cast<double>(now - t0_) / 1e9;
    p.ramping = now < ctl_.measure_start;
    p.iops = static_cast<double>(ios - last_ios_) / dt;
    p.bytes_per_s = static_cast<double>(bytes - last_bytes_) / dt;
    p.inflight = inflight;
    if (ctl_.deadline != UINT64_MAX) p.eta_s = static_cast<double>(ctl_.deadline - std::min(ctl_.deadline, now)) / 1e9;
    if (ios_ && p.iops > 0) {
      const double left = static_cast<double>(*ios_ - std::min<uint64_t>(*ios_, measured)) / p.iops;
      p.eta_s = p.eta_s < 0 ? left : std::min(p.eta_s, left);
    }
    last_t_ = now;
    last_ios_ = ios;
    last_bytes_ = bytes;
    return p;
  }

 private:
  std::optional<uint64_t> ios_;
  const Control& ctl_;
  const Published* pub_;
  unsigned threads_;
  Nanos t0_, last_t_;
  uint64_t last_ios_ = 0, last_bytes_ = 0;
};

// --verify: what the workers found on the fly, then the final pass over
// every block written (after --verify-delay), unless a stop came first.
void verify_after(const JobSpec& job, const Targets& targets, const std::vector<VerifyTable>& tables,
                  const std::vector<std::unique_ptr<Worker>>& workers, const RunHooks& hooks, RunResult& result) {
  result.verify.emplace();
  for (const VerifyTable& t : tables)
    result.verify->written += static_cast<uint64_t>(std::count_if(t.tag.begin(), t.tag.end(), [](uint8_t g) { return g != 0; }));
  for (const auto& w : workers) {
    const VerifyResult& v = w->verify_result();
    result.verify->checked_during += v.checked_during;
    result.verify->mismatches += v.mismatches - v.findings.size();
    for (const auto& f : v.findings) result.verify->add(f);
  }
  auto stop_now = [&] { return hooks.wait_stop_signal && hooks.wait_stop_signal(0); };
  if (result.interrupted || stop_now()) {
    result.verify_skipped = true;
    return;
  }
  if (hooks.on_verify) hooks.on_verify(job.verify_delay.count());
  const Nanos until = now_ns() + static_cast<Nanos>(job.verify_delay.count());
  while (!result.verify_skipped && now_ns() < until)
    result.verify_skipped = hooks.wait_stop_signal && hooks.wait_stop_signal(50);
  if (!result.verify_skipped) verify_written(targets, tables, job.bs, job.seed, *result.verify, stop_now);
  result.verify_skipped |= stop_now();
}

StopReason stop_reason(int stop, const std::vector<JobSpec>& jobs, const RunResult& r) {
  if (stop == kErrors) return StopReason::Errors;
  if (stop == kFatal) return StopReason::Fatal;
  if (r.interrupted) return StopReason::Interrupted;
  // Every job ended by its --ios: the run did.
  for (size_t j = 0; j < jobs.size(); ++j)
    if (!jobs[j].ios || r.jobs[j].total.ios < *jobs[j].ios) return StopReason::Runtime;
  return StopReason::Ios;
}

// A job's stonewall group: a stonewall starts a new one.
std::vector<unsigned> stonewall_groups(const std::vector<JobSpec>& jobs) {
  std::vector<unsigned> g(jobs.size(), 0);
  for (size_t j = 1; j < jobs.size(); ++j) g[j] = g[j - 1] + (jobs[j].stonewall ? 1 : 0);
  return g;
}

RunTracker attach_tracker_for(const std::vector<const Targets*>& targets) {
  RunTracker t;
  const RunDevices devices = resolve_devices(targets);
  if (devices.sampled.empty()) return t;
  const std::vector<BusyDevice> watch = busy_devices(sample_system(devices.sampled, {}, false, false).disks);
  for (const auto& d : watch) t.names.push_back(d.name);
  t.attach = attach_tracker(watch);
  return t;
}

// How --anatomy ties block requests to I/Os (AnatomyBlockLink says why each
// is sound): by order at one I/O per thread, by submission deeper where
// only O_DIRECT on io_uring starts the requests.
AnatomyBlockLink anatomy_block_link(const JobSpec& run) {
  if (run.depth_per_thread() == 1) return AnatomyBlockLink::Order;
  if (run.engine == EngineKind::Uring && run.direct) return AnatomyBlockLink::Submission;
  return AnatomyBlockLink::None;
}

}  // namespace

RunTracker attach_run_tracker(const Targets& targets) { return attach_tracker_for({&targets}); }

RunResult run_bench(const JobSpec& job, const Targets& targets, const RunHooks& hooks, const RunTracker* shared) {
  return run_jobs({job}, {&targets}, hooks, shared);
}

RunResult run_jobs(const std::vector<JobSpec>& jobs, const std::vector<const Targets*>& targets,
                   const RunHooks& hooks, const RunTracker* shared) {
  const JobSpec& run = jobs.front();  // the run's own options
  const size_t J = jobs.size();
  std::vector<Plan> plans;
  RunResult result;
  result.jobs.resize(J);
  for (size_t j = 0; j < J; ++j) {
    JobResult& jr = result.jobs[j];
    jr.name = jobs[j].name;
    jr.first_thread = static_cast<unsigned>(plans.size());
    jr.targets = target_infos(*targets[j]);
    for (Plan& p : make_plans(jobs[j], targets[j]->list)) {
      p.job = static_cast<unsigned>(j);
      plans.push_back(std::move(p));
    }
    jr.threads = static_cast<unsigned>(plans.size()) - jr.first_thread;
    for (const TargetInfo& t : jr.targets)
      if (std::none_of(result.targets.begin(), result.targets.end(), [&](const TargetInfo& x) { return x.path == t.path; }))
        result.targets.push_back(t);
  }
  const unsigned T = static_cast<unsigned>(plans.size());
  Control ctl;
  ctl.max_errors = run.max_errors;
  ctl.windows_open = T;
  std::unique_ptr<Published[]> pub(new Published[T]);
  result.threads.resize(T);

  // Each job's clock, and the groups stonewalls make.
  std::unique_ptr<JobControl[]> jc(new JobControl[J]);
  const std::vector<unsigned> group_of = stonewall_groups(jobs);
  const unsigned G = group_of.back() + 1;
  std::unique_ptr<GroupControl[]> groups(new GroupControl[G]);
  for (size_t j = 0; j < J; ++j) {
    jc[j].delay = static_cast<Nanos>(jobs[j].startdelay.count());
    jc[j].ramp = static_cast<Nanos>(run.ramp.count());
    jc[j].timed = jobs[j].runtime.has_value();
    if (jobs[j].runtime) jc[j].runtime = static_cast<Nanos>(jobs[j].runtime->count());
    groups[group_of[j]].running += result.jobs[j].threads;
    if (group_of[j] > 0) groups[group_of[j] - 1].next.push_back(&jc[j]);
  }

  std::vector<VerifyTable> tables;
  if (run.verify)
    for (const auto& t : targets.front()->list) {
      const size_t blocks = static_cast<size_t>(t.range / run.bs);
      tables.push_back({std::vector<uint8_t>(blocks, 0), std::vector<uint8_t>(blocks, 0)});
    }
  // The exact in-flight tracker (--acct latency, the default, and full): one
  // log per worker, merged here; the time series reads it too.
  std::vector<std::unique_ptr<InflightLog>> log_store;
  std::vector<InflightLog*> logs;
  if (run.acct >= AcctLevel::Latency)
    for (unsigned i = 0; i < T; ++i) logs.push_back(log_store.emplace_back(std::make_unique<InflightLog>()).get());
  InflightMerger merger(T);
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < T; ++i) {
    const unsigned j = plans[i].job;
    workers.push_back(std::make_unique<Worker>(jobs[j], *targets[j], plans[i], ctl, jc[j], groups[group_of[j]], pub[i],
                                               result.threads[i], run.verify ? &tables : nullptr,
                                               logs.empty() ? nullptr : logs[i]));
  }
  auto join_all = [&] {
    for (auto& th : threads)
      if (th.joinable()) th.join();
  };
  for (unsigned i = 0; i < T; ++i) threads.emplace_back(std::ref(*workers[i]));

  // Every ring is set up (or failed) before any I/O starts.
  bool interrupted = false;
  while (ctl.ready.load(std::memory_order_acquire) < T)
    if (hooks.wait_stop_signal && hooks.wait_stop_signal(1)) interrupted = true;
  for (auto& w : workers) {
    if (w->setup_error()) {
      ctl.stop = kFatal;
      ctl.go.store(true, std::memory_order_release);
      join_all();
      std::rethrow_exception(w->setup_error());
    }
  }
  result.engine_desc = workers[0]->engine()->describe();
  result.setup_flags = workers[0]->engine()->setup_flags();
  for (const auto& w : workers)
    for (auto& f : w->engine()->fallbacks())
      if (std::find(result.engine_fallbacks.begin(), result.engine_fallbacks.end(), f) == result.engine_fallbacks.end())
        result.engine_fallbacks.push_back(std::move(f));
  for (auto& jr : result.jobs) {
    jr.engine_desc = workers[jr.first_thread]->engine()->describe();
    jr.setup_flags = workers[jr.first_thread]->engine()->setup_flags();
  }
  // --anatomy: its programs follow the workers, whose tids are known now.
  const AnatomyOptions anatomy_opt{.tgid = static_cast<int>(getpid()),
                                    .threads = T,
                                    .stride = run.depth_per_thread(),
                                    .flavor = run.engine == EngineKind::Psync ? AnatomyFlavor::Syscall : AnatomyFlavor::Uring,
                                    .block_link = anatomy_block_link(run)};
  AnatomyAttach anatomy;
  if (run.anatomy) {
    std::vector<int> tids;
    for (const auto& t : result.threads) tids.push_back(t.tid);
    anatomy = attach_anatomy(anatomy_opt, tids);
    ctl.anatomy = anatomy.tracer.get();
  }
  RunDevices devices;
  if (run.acct != AcctLevel::Off) {
    ctl.sample_system = true;
    for (const auto& w : workers)
      if (w->engine()->ring_fd() >= 0) ctl.ring_fds.push_back(w->engine()->ring_fd());
    for (const JobSpec& j : jobs) ctl.any_sqpoll |= j.uring.sqpoll;
    devices = resolve_devices(targets);
    ctl.disks = devices.sampled;
  }
  // The devices' exact busy time beside their %util (--acct full): one
  // tracker for the run, detached when this function returns.
  RunTracker own;
  const RunTracker* exact = nullptr;
  if (run.acct == AcctLevel::Full && !ctl.disks.empty()) {
    if (!shared) own = attach_tracker_for(targets);
    exact = shared ? shared : &own;
    ctl.tracker = exact->attach.tracker.get();
  }
  if (hooks.on_start) hooks.on_start(result);

  // Without a ramp, every window of the first group opens at the start:
  // take the opening sample now, before any I/O, rather than in the first
  // worker while the others may already be issuing theirs.
  bool opens_at_start = run.ramp.count() == 0 && run.acct != AcctLevel::Off;
  for (size_t j = 0; j < J; ++j)
    if (group_of[j] == 0 && jobs[j].startdelay.count()) opens_at_start = false;
  if (opens_at_start) {
    ctl.window_opened = true;
    if (ctl.sample_system) ctl.sys_a = sample_system(ctl.disks, ctl.ring_fds, ctl.any_sqpoll);
    if (ctl.tracker) {
      try {
        ctl.busy_a = ctl.tracker->read();
      } catch (const std::exception&) {
        ctl.busy_a.clear();  // reported as not measured
      }
    }
    ctl.cpu_a = sample_cpu();
  }
  const Nanos t0 = now_ns();
  result.start_mono_ns = t0;
  result.start_wall_ns = wall_ns();
  ctl.measure_start = UINT64_MAX;
  ctl.deadline = 0;
  for (size_t j = 0; j < J; ++j) {
    if (group_of[j] != 0) continue;
    jc[j].open_at(t0);
    ctl.measure_start = std::min(ctl.measure_start, jc[j].measure_start);
    ctl.deadline = std::max(ctl.deadline, jc[j].deadline);
  }
  if (G > 1) ctl.deadline = UINT64_MAX;  // a later group's end is not known yet
  if (interrupted) ctl.stop = kInterrupted;  // a signal while the rings were set up
  merger.start_at(ctl.measure_start);
  std::optional<SeriesCollector> series;
  JobSpec series_view = run;  // the run as the time series sees it: SQ threads if any job has them
  series_view.uring.sqpoll = ctl.any_sqpoll;
  if (!logs.empty() && run.log_interval.count()) {
    const std::string disk = devices.targets.empty() ? std::string() : devices.targets[0];
    std::optional<size_t> busy_index;  // the disk's place in the tracker's reads, when traced
    if (ctl.tracker && exact)
      for (size_t i = 0; i < exact->names.size(); ++i)
        if (exact->names[i] == disk) busy_index = i;
    series.emplace(series_view, ctl, pub.get(), workers, merger, disk, busy_index);
  }
  // --anatomy over a time-based window: its programs come off and back on in
  // slices, for the IOPS they cost in this run (anatomy_slices.hpp). A run
  // counted by --ios keeps them on: its end, and so its pairs, are unknown.
  std::optional<AnatomySlicer> slicer;
  if (ctl.anatomy && hooks.anatomy_slices && J == 1 && run.runtime && !run.ios && ctl.deadline != UINT64_MAX)
    slicer.emplace(ctl.measure_start, ctl.deadline, kAnatomySliceNs);
  auto completed_now = [&] {
    uint64_t n = 0;
    for (unsigned i = 0; i < T; ++i) n += pub[i].completed.load(std::memory_order_relaxed);
    return n;
  };
  ctl.go.store(true, std::memory_order_release);

  // Supervise: progress once a second, stop on a signal, kick a worker
  // whose wait has gone on for kMaxWaitNs (kick.hpp).
  ProgressMeter meter(J == 1 ? run.ios : std::nullopt, ctl, pub.get(), T, t0);
  std::vector<pthread_t> handles(threads.size());
  std::transform(threads.begin(), threads.end(), handles.begin(), [](std::thread& th) { return th.native_handle(); });
  StallKicker kicker(pub.get(), std::move(handles), t0);
  Nanos next_tick = t0 + 1'000'000'000ull;
  for (;;) {
    bool all_done = true;
    for (unsigned i = 0; i < T; ++i) all_done &= pub[i].done.load(std::memory_order_acquire);
    if (all_done) break;
    Nanos t = now_ns();
    // Wake often enough to drain the in-flight logs long before they fill
    // (16k events each: 80 ms at 200k batches/s), and no more: this thread's
    // CPU is part of the process's.
    Nanos wake_at = series ? std::min(next_tick, series->next_due()) : next_tick;
    if (slicer) wake_at = std::min(wake_at, slicer->next_due());
    // Near the end, wake at the deadline and then every millisecond for a
    // while (the drain), so a short run is not kept waiting for the next
    // wake-up after its last I/O.
    if (ctl.deadline != UINT64_MAX && t < ctl.deadline + kMaxWaitNs)
      wake_at = std::min(wake_at, std::max(ctl.deadline, t + 1'000'000));
    const int wait_ms = static_cast<int>(std::clamp<int64_t>((static_cast<int64_t>(wake_at) - static_cast<int64_t>(t)) / 1'000'000, 1,
                                                             logs.empty() ? 50 : 20));
    // Once every window is closed its end is known, and the drain after it
    // is not merged into the window's figures.
    if (!logs.empty())
      merger.poll(logs, [&] {
        return ctl.windows_open.load(std::memory_order_acquire) == 0 ? ctl.window_end.load() : UINT64_MAX;
      });
    if (series) {
      series->tick(now_ns());
      series->collect(false);
    }
    if (hooks.wait_stop_signal && hooks.wait_stop_signal(wait_ms) && !interrupted) {
      interrupted = true;
      int expected = kRunning;  // a stop for errors came first and stays the reason
      ctl.stop.compare_exchange_strong(expected, kInterrupted);
    }
    const Nanos now = now_ns();
    if (slicer) slicer->step(now, completed_now(), *ctl.anatomy);
    kicker.poll(now, kMaxWaitNs);
    if (now >= next_tick) {
      if (hooks.on_progress) hooks.on_progress(meter.take(now));  // else just sleep on
      next_tick = now + 1'000'000'000ull;
    }
  }
  join_all();
  if (slicer) slicer->finish(*ctl.anatomy);

  result.merge_threads();
  if (!logs.empty() && ctl.window_opened && result.total.window_start_ns)
    result.inflight = merger.finish(logs, result.total.window_start_ns + result.window_ns);
  if (series) {
    series->collect(true);
    result.series = std::move(series->series);
  }
  if (ctl.window_opened && result.total.window_start_ns && ctl.cpu_a.valid && ctl.cpu_b.valid) {
    result.cpu = cpu_delta(ctl.cpu_a, ctl.cpu_b);
    if (ctl.sample_system) {
      std::vector<int> tids;
      for (const auto& t : result.threads) tids.push_back(t.tid);
      result.accounting = account(ctl.sys_a, ctl.sys_b, tids, devices.targets);
      if (exact) {
        result.accounting->exact_unavailable = exact->attach.unavailable;
        add_exact_busy(*result.accounting, exact->names, exact_samples(ctl.busy_a), exact_samples(ctl.busy_b));
      }
      if (ctl.tracker) {
        result.accounting->exact_source = ctl.tracker->source();
        for (int k = 0; k < BusyCounters::kDepthBuckets; ++k) result.accounting->exact_depth_low.push_back(busy_depth_low(k));
      }
      for (auto& jr : result.jobs) {
        std::vector<int> job_tids;
        for (unsigned i = 0; i < jr.threads; ++i) job_tids.push_back(result.threads[jr.first_thread + i].tid);
        jr.cpu = job_cpu(ctl.sys_a, ctl.sys_b, job_tids);
      }
    }
  }
  if (run.anatomy) {
    result.anatomy = anatomy.tracer ? anatomy.tracer->result() : AnatomyResult{};
    result.anatomy->flavor = anatomy_opt.flavor;
    result.anatomy->block_link = anatomy_opt.block_link;
    result.anatomy->unavailable = anatomy.unavailable;
    if (slicer) result.anatomy->iops_ratio = slice_ratio(slicer->slices(), slicer->slice_s());
    using Unmeasured = AnatomyResult::Unmeasured;
    if (!result.anatomy->iops_ratio) {
      result.anatomy->iops_ratio_unmeasured = !hooks.anatomy_slices ? Unmeasured::Compare
                                              : slicer              ? Unmeasured::FewPairs
                                                                    : Unmeasured::CountedByIos;
      if (slicer) result.anatomy->unmeasured_slice_s = slicer->slice_s();
    }
  }
  result.first_error = ctl.first_error;
  const int stop = ctl.stop.load();
  result.interrupted = stop == kInterrupted;
  if (run.verify) verify_after(run, *targets.front(), tables, workers, hooks, result);
  result.stop_reason = stop_reason(stop, jobs, result);
  return result;
}

}  // namespace ioacct
