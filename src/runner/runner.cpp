#include "runner/runner.hpp"

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
#include "monitor/attach.hpp"
#include "runner/control.hpp"
#include "runner/plan.hpp"
#include "runner/series_collector.hpp"
#include "runner/worker.hpp"

namespace ioacct {
namespace {

// The devices the run samples at the window's edges: every whole disk a
// target sits on and everything under it (`sampled`), and of those the disks
// the targets sit on (`targets`, in target order: the first is the one the
// time series and compare's %util read).
struct RunDevices {
  std::vector<std::string> sampled, targets;
};

RunDevices resolve_devices(const Targets& targets) {
  RunDevices d;
  auto add = [&](const std::string& name) {
    if (std::find(d.sampled.begin(), d.sampled.end(), name) == d.sampled.end()) d.sampled.push_back(name);
  };
  for (const auto& t : targets.list) {
    const DeviceChain c = resolve_device(t.dev_major, t.dev_minor);
    if (c.disk.empty()) continue;
    add(c.disk);
    d.targets.push_back(c.disk);
    for (const auto& u : c.underlying) add(u);
  }
  return d;
}

std::vector<ExactBusySample> exact_samples(const std::vector<BusyCounters>& counters) {
  std::vector<ExactBusySample> out;
  out.reserve(counters.size());
  for (const BusyCounters& c : counters)
    out.push_back({c.stamp_ns, c.busy_ns, c.dev_busy_ns, c.lost, c.unsure_ns, c.device_span});
  return out;
}

// The progress line's figures over the interval since the last call, as
// measured (never assumed to be one second).
class ProgressMeter {
 public:
  ProgressMeter(const JobSpec& job, const Control& ctl, const Published* pub, unsigned threads, Nanos t0)
      : job_(job), ctl_(ctl), pub_(pub), threads_(threads), t0_(t0), last_t_(t0) {}

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
    if (job_.runtime) p.eta_s = static_cast<double>(ctl_.deadline - std::min(ctl_.deadline, now)) / 1e9;
    if (job_.ios && p.iops > 0) {
      const double left = static_cast<double>(*job_.ios - std::min<uint64_t>(*job_.ios, measured)) / p.iops;
      p.eta_s = p.eta_s < 0 ? left : std::min(p.eta_s, left);
    }
    last_t_ = now;
    last_ios_ = ios;
    last_bytes_ = bytes;
    return p;
  }

 private:
  const JobSpec& job_;
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

StopReason stop_reason(int stop, const JobSpec& job, const RunResult& r) {
  if (stop == kErrors) return StopReason::Errors;
  if (stop == kFatal) return StopReason::Fatal;
  if (r.interrupted) return StopReason::Interrupted;
  if (job.ios && r.total.ios >= *job.ios) return StopReason::Ios;
  return StopReason::Runtime;
}

}  // namespace

RunResult run_bench(const JobSpec& job, const Targets& targets, const RunHooks& hooks) {
  const unsigned T = job.threads;
  std::vector<Plan> plans = make_plans(job, targets.list);
  Control ctl;
  ctl.max_errors = job.max_errors;
  ctl.windows_open = T;
  std::unique_ptr<Published[]> pub(new Published[T]);
  RunResult result;
  result.threads.resize(T);
  result.targets = target_infos(targets);

  std::vector<VerifyTable> tables;
  if (job.verify)
    for (const auto& t : targets.list) {
      const size_t blocks = static_cast<size_t>(t.range / job.bs);
      tables.push_back({std::vector<uint8_t>(blocks, 0), std::vector<uint8_t>(blocks, 0)});
    }
  // The exact in-flight tracker (--acct full): one log per worker, merged here.
  std::vector<std::unique_ptr<InflightLog>> log_store;
  std::vector<InflightLog*> logs;
  if (job.acct == AcctLevel::Full)
    for (unsigned i = 0; i < T; ++i) logs.push_back(log_store.emplace_back(std::make_unique<InflightLog>()).get());
  InflightMerger merger(T);
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < T; ++i)
    workers.push_back(std::make_unique<Worker>(job, targets, plans[i], ctl, pub[i], result.threads[i],
                                               job.verify ? &tables : nullptr, logs.empty() ? nullptr : logs[i]));
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
  // --anatomy: its programs follow the workers, whose tids are known now.
  const AnatomyOptions anatomy_opt{.tgid = static_cast<int>(getpid()),
                                    .threads = T,
                                    .stride = job.depth_per_thread(),
                                    .flavor = job.engine == EngineKind::Psync ? AnatomyFlavor::Syscall : AnatomyFlavor::Uring,
                                    .link_block = job.depth_per_thread() == 1};
  AnatomyAttach anatomy;
  if (job.anatomy) {
    std::vector<int> tids;
    for (const auto& t : result.threads) tids.push_back(t.tid);
    anatomy = attach_anatomy(anatomy_opt, tids);
    ctl.anatomy = anatomy.tracer.get();
  }
  RunDevices devices;
  if (job.acct != AcctLevel::Off) {
    ctl.sample_system = true;
    for (const auto& w : workers)
      if (w->engine()->ring_fd() >= 0) ctl.ring_fds.push_back(w->engine()->ring_fd());
    devices = resolve_devices(targets);
    ctl.disks = devices.sampled;
  }
  // The devices' exact busy time beside their %util (--acct full): one
  // tracker for the run, detached when this function returns.
  TrackerAttach exact;
  std::vector<std::string> busy_names;
  if (job.acct == AcctLevel::Full && !ctl.disks.empty()) {
    const std::vector<BusyDevice> watch = busy_devices(sample_system(ctl.disks, {}, false, false).disks);
    for (const auto& d : watch) busy_names.push_back(d.name);
    exact = attach_tracker(watch);
    ctl.tracker = exact.tracker.get();
  }
  result.setup_flags = workers[0]->engine()->setup_flags();
  if (hooks.on_start) hooks.on_start(result);

  const Nanos t0 = now_ns();
  ctl.measure_start = t0 + static_cast<Nanos>(job.ramp.count());
  if (job.runtime) ctl.deadline = ctl.measure_start + static_cast<Nanos>(job.runtime->count());
  if (interrupted) ctl.stop = kInterrupted;  // a signal while the rings were set up
  merger.start_at(ctl.measure_start);
  std::optional<SeriesCollector> series;
  if (!logs.empty() && job.log_interval.count())
    series.emplace(job, ctl, pub.get(), workers, merger, devices.targets.empty() ? std::string() : devices.targets[0]);
  ctl.go.store(true, std::memory_order_release);

  // Supervise: progress once a second, stop on a signal.
  ProgressMeter meter(job, ctl, pub.get(), T, t0);
  Nanos next_tick = t0 + 1'000'000'000ull;
  for (;;) {
    bool all_done = true;
    for (unsigned i = 0; i < T; ++i) all_done &= pub[i].done.load(std::memory_order_acquire);
    if (all_done) break;
    Nanos t = now_ns();
    // Wake often enough to drain the in-flight logs long before they fill
    // (16k events each: 80 ms at 200k batches/s), and no more: this thread's
    // CPU is part of the process's.
    const Nanos wake_at = series ? std::min(next_tick, series->next_due()) : next_tick;
    const int wait_ms = static_cast<int>(std::clamp<int64_t>((static_cast<int64_t>(wake_at) - static_cast<int64_t>(t)) / 1'000'000, 1,
                                                             logs.empty() ? 50 : 20));
    if (!logs.empty()) merger.poll(logs);
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
    if (now >= next_tick) {
      if (hooks.on_progress) hooks.on_progress(meter.take(now));  // else just sleep on
      next_tick = now + 1'000'000'000ull;
    }
  }
  join_all();

  result.merge_threads();
  result.window_ns = result.total.window_ns;
  if (!logs.empty() && ctl.window_opened) result.inflight = merger.finish(logs, ctl.measure_start + result.window_ns);
  if (series) {
    series->collect(true);
    result.series = std::move(series->series);
  }
  if (ctl.window_opened && ctl.cpu_a.valid && ctl.cpu_b.valid) {
    result.cpu = cpu_delta(ctl.cpu_a, ctl.cpu_b);
    if (ctl.sample_system) {
      std::vector<int> tids;
      for (const auto& t : result.threads) tids.push_back(t.tid);
      result.accounting = account(ctl.sys_a, ctl.sys_b, tids, devices.targets);
      result.accounting->exact_unavailable = exact.unavailable;
      if (exact.tracker) result.accounting->exact_source = exact.tracker->source();
      add_exact_busy(*result.accounting, busy_names, exact_samples(ctl.busy_a), exact_samples(ctl.busy_b));
    }
  }
  if (job.anatomy) {
    result.anatomy = anatomy.tracer ? anatomy.tracer->result() : AnatomyResult{};
    result.anatomy->flavor = anatomy_opt.flavor;
    result.anatomy->link_block = anatomy_opt.link_block;
    result.anatomy->unavailable = anatomy.unavailable;
  }
  result.first_error = ctl.first_error;
  const int stop = ctl.stop.load();
  result.interrupted = stop == kInterrupted;
  if (job.verify) verify_after(job, targets, tables, workers, hooks, result);
  result.stop_reason = stop_reason(stop, job, result);
  return result;
}

}  // namespace ioacct
