#include "runner/runner.hpp"

#include <fmt/format.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <memory>
#include <optional>
#include <thread>
#include <tuple>
#include <utility>

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

// --start-at: how long before the instant the run wakes to take its opening
// samples (a few /proc files, the tracker's maps: well under a millisecond
// on an idle machine, a few on a loaded one, and 13 ms under ASan beside a
// fuzzer, which made a 5 ms lead open the window 8 ms late), so that they
// do not delay the window's opening.
constexpr int64_t kStartAtLeadNs = 30'000'000;

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

// The syscalls that move the data, for --anatomy's syscall flavour: the
// psync family's member (sync's lseek is not one).
std::pair<uint32_t, uint32_t> anatomy_syscalls(SyncCall call) {
  switch (call) {
    case SyncCall::Pread: break;
    case SyncCall::Read: return {SYS_read, SYS_write};
    case SyncCall::Preadv: return {SYS_preadv, SYS_pwritev};
    case SyncCall::Preadv2: return {SYS_preadv2, SYS_pwritev2};
  }
  return {SYS_pread64, SYS_pwrite64};
}

// One run, in the order it happens: plan the threads, start the workers
// (each sets up its ring), wait until every ring is ready, attach the
// instruments, open the window, supervise until every worker is done, then
// close and account. The members are declared in the order they are made,
// so they go in the reverse: the tracker and the anatomy's programs detach
// after the workers are joined, as they did when these were one function's
// locals.
class RunSession {
 public:
  RunSession(const std::vector<JobSpec>& jobs, const std::vector<const Targets*>& targets, const RunHooks& hooks,
             const RunTracker* shared)
      : jobs_(jobs), targets_(targets), hooks_(hooks), shared_(shared), run_(jobs.front()), J_(jobs.size()) {}
  RunSession(const RunSession&) = delete;
  RunSession& operator=(const RunSession&) = delete;

  RunResult run() {
    plan();
    start_workers();
    wait_until_ready();
    attach_instruments();
    open();
    supervise();
    close_and_account();
    return std::move(result_);
  }

 private:
  void plan();
  void start_workers();
  void wait_until_ready();
  void wait_for_start_at(int64_t lead_ns);
  void attach_instruments();
  void open();
  void supervise();
  void close_and_account();
  void account_window();
  void anatomy_result();
  void join_all() {
    for (auto& th : threads_)
      if (th.joinable()) th.join();
  }
  uint64_t completed_now() const {
    uint64_t n = 0;
    for (unsigned i = 0; i < T_; ++i) n += pub_[i].completed.load(std::memory_order_relaxed);
    return n;
  }

  const std::vector<JobSpec>& jobs_;
  const std::vector<const Targets*>& targets_;
  const RunHooks& hooks_;
  const RunTracker* shared_;
  const JobSpec& run_;  // the run's own options
  const size_t J_;
  std::vector<Plan> plans_;
  RunResult result_;
  unsigned T_ = 0;  // threads, over all jobs
  Control ctl_;
  std::unique_ptr<Published[]> pub_;
  std::unique_ptr<JobControl[]> jc_;  // each job's clock
  std::vector<unsigned> group_of_;    // each job's stonewall group
  unsigned G_ = 0;
  std::unique_ptr<GroupControl[]> groups_;
  std::vector<VerifyTable> tables_;
  std::vector<std::unique_ptr<InflightLog>> log_store_;
  std::vector<InflightLog*> logs_;
  std::optional<InflightMerger> merger_;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
  bool interrupted_ = false;
  AnatomyOptions anatomy_opt_;
  AnatomyAttach anatomy_;
  RunDevices devices_;
  RunTracker own_;
  const RunTracker* exact_ = nullptr;
  Nanos t0_ = 0;
  JobSpec series_view_;  // the run as the time series sees it (it keeps a reference): SQ threads if any job has them
  std::optional<SeriesCollector> series_;
  std::optional<AnatomySlicer> slicer_;
};

// The threads of every job, the run's control state, each job's clock and
// the groups stonewalls make, --verify's tables and the in-flight logs.
void RunSession::plan() {
  result_.jobs.resize(J_);
  for (size_t j = 0; j < J_; ++j) {
    JobResult& jr = result_.jobs[j];
    jr.name = jobs_[j].name;
    jr.first_thread = static_cast<unsigned>(plans_.size());
    jr.targets = target_infos(*targets_[j]);
    for (Plan& p : make_plans(jobs_[j], targets_[j]->list)) {
      p.job = static_cast<unsigned>(j);
      plans_.push_back(std::move(p));
    }
    jr.threads = static_cast<unsigned>(plans_.size()) - jr.first_thread;
    for (const TargetInfo& t : jr.targets)
      if (std::none_of(result_.targets.begin(), result_.targets.end(), [&](const TargetInfo& x) { return x.path == t.path; }))
        result_.targets.push_back(t);
  }
  T_ = static_cast<unsigned>(plans_.size());
  ctl_.max_errors = run_.max_errors;
  ctl_.windows_open = T_;
  pub_.reset(new Published[T_]);
  result_.threads.resize(T_);

  jc_.reset(new JobControl[J_]);
  group_of_ = stonewall_groups(jobs_);
  G_ = group_of_.back() + 1;
  groups_.reset(new GroupControl[G_]);
  for (size_t j = 0; j < J_; ++j) {
    jc_[j].delay = static_cast<Nanos>(jobs_[j].startdelay.count());
    jc_[j].ramp = static_cast<Nanos>(run_.ramp.count());
    jc_[j].timed = jobs_[j].runtime.has_value();
    if (jobs_[j].runtime) jc_[j].runtime = static_cast<Nanos>(jobs_[j].runtime->count());
    groups_[group_of_[j]].running += result_.jobs[j].threads;
    if (group_of_[j] > 0) groups_[group_of_[j] - 1].next.push_back(&jc_[j]);
  }

  if (run_.verify)
    for (const auto& t : targets_.front()->list) {
      const size_t blocks = static_cast<size_t>(t.range / run_.bs);
      tables_.push_back({std::vector<uint8_t>(blocks, 0), std::vector<uint8_t>(blocks, 0)});
    }
  // The exact in-flight tracker (--acct latency, the default, and full): one
  // log per worker, merged here; the time series reads it too.
  if (run_.acct >= AcctLevel::Latency)
    for (unsigned i = 0; i < T_; ++i) logs_.push_back(log_store_.emplace_back(std::make_unique<InflightLog>()).get());
  merger_.emplace(T_);
}

void RunSession::start_workers() {
  for (unsigned i = 0; i < T_; ++i) {
    const unsigned j = plans_[i].job;
    workers_.push_back(std::make_unique<Worker>(jobs_[j], *targets_[j], plans_[i], ctl_, jc_[j], groups_[group_of_[j]],
                                                pub_[i], result_.threads[i], run_.verify ? &tables_ : nullptr,
                                                logs_.empty() ? nullptr : logs_[i]));
  }
  for (unsigned i = 0; i < T_; ++i) threads_.emplace_back(std::ref(*workers_[i]));
}

// Every ring is set up (or failed) before any I/O starts.
void RunSession::wait_until_ready() {
  while (ctl_.ready.load(std::memory_order_acquire) < T_)
    if (hooks_.wait_stop_signal && hooks_.wait_stop_signal(1)) interrupted_ = true;
  for (auto& w : workers_) {
    if (w->setup_error()) {
      ctl_.stop = kFatal;
      ctl_.go.store(true, std::memory_order_release);
      join_all();
      std::rethrow_exception(w->setup_error());
    }
  }
  result_.engine_desc = workers_[0]->engine()->describe();
  result_.setup_flags = workers_[0]->engine()->setup_flags();
  for (const auto& w : workers_)
    for (auto& f : w->engine()->fallbacks())
      if (std::find(result_.engine_fallbacks.begin(), result_.engine_fallbacks.end(), f) == result_.engine_fallbacks.end())
        result_.engine_fallbacks.push_back(std::move(f));
  for (auto& jr : result_.jobs) {
    jr.engine_desc = workers_[jr.first_thread]->engine()->describe();
    jr.setup_flags = workers_[jr.first_thread]->engine()->setup_flags();
  }
}

// --anatomy's programs (they follow the workers, whose tids are known now),
// the devices sampled at the window's edges, and the exact busy tracker.
void RunSession::attach_instruments() {
  anatomy_opt_ = {.tgid = static_cast<int>(getpid()),
                  .threads = T_,
                  .stride = run_.depth_per_thread(),
                  .flavor = run_.engine == EngineKind::Psync ? AnatomyFlavor::Syscall : AnatomyFlavor::Uring,
                  .block_link = anatomy_block_link(run_)};
  std::tie(anatomy_opt_.sys_read, anatomy_opt_.sys_write) = anatomy_syscalls(run_.sync.call);
  if (run_.anatomy) {
    std::vector<int> tids;
    for (const auto& t : result_.threads) tids.push_back(t.tid);
    anatomy_ = attach_anatomy(anatomy_opt_, tids);
    ctl_.anatomy = anatomy_.tracer.get();
  }
  if (run_.acct != AcctLevel::Off) {
    ctl_.sample_system = true;
    for (const auto& w : workers_)
      if (w->engine()->ring_fd() >= 0) ctl_.ring_fds.push_back(w->engine()->ring_fd());
    for (const JobSpec& j : jobs_) ctl_.any_sqpoll |= j.uring.sqpoll;
    devices_ = resolve_devices(targets_);
    ctl_.disks = devices_.sampled;
  }
  // The devices' exact busy time beside their %util (--acct full): one
  // tracker for the run, detached when the session ends.
  if (run_.acct == AcctLevel::Full && !ctl_.disks.empty()) {
    if (!shared_) own_ = attach_tracker_for(targets_);
    exact_ = shared_ ? shared_ : &own_;
    ctl_.tracker = exact_->attach.tracker.get();
  }
  if (hooks_.on_start) hooks_.on_start(result_);
}

// --start-at: sleep on the wall clock until `lead_ns` before the run's
// start (--ramp before the instant), so that the window opens at it. Slices
// of up to 100 ms let a signal end the wait; the last stretch is one
// absolute CLOCK_REALTIME sleep, which the kernel ends on time even if the
// clock is stepped meanwhile. open() wakes a few ms early for the opening
// samples, then sleeps again to the instant itself: a process woken late by
// a busy machine loses no more of its window than the wake-up.
void RunSession::wait_for_start_at(int64_t lead_ns) {
  if (!run_.start_at_unix_ns || interrupted_) return;
  const int64_t at = run_.start_at_unix_ns - static_cast<int64_t>(run_.ramp.count()) - lead_ns;
  for (int64_t left = at - wall_ns(); left > 2'000'000 && !interrupted_; left = at - wall_ns())
    if (hooks_.wait_stop_signal && hooks_.wait_stop_signal(static_cast<int>(std::min<int64_t>(100, left / 1'000'000 - 1))))
      interrupted_ = true;
  if (interrupted_) return;
  const timespec ts{static_cast<time_t>(at / 1'000'000'000), static_cast<long>(at % 1'000'000'000)};
  while (clock_nanosleep(CLOCK_REALTIME, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

void RunSession::open() {
  wait_for_start_at(kStartAtLeadNs);
  // Without a ramp, every window of the first group opens at the start:
  // take the opening sample now, before any I/O, rather than in the first
  // worker while the others may already be issuing theirs.
  bool opens_at_start = run_.ramp.count() == 0 && run_.acct != AcctLevel::Off;
  for (size_t j = 0; j < J_; ++j)
    if (group_of_[j] == 0 && jobs_[j].startdelay.count()) opens_at_start = false;
  if (opens_at_start) {
    ctl_.window_opened = true;
    if (ctl_.sample_system) ctl_.sys_a = sample_system(ctl_.disks, ctl_.ring_fds, ctl_.any_sqpoll);
    if (ctl_.tracker) {
      try {
        ctl_.busy_a = ctl_.tracker->read();
      } catch (const std::exception&) {
        ctl_.busy_a.clear();  // reported as not measured
      }
    }
    ctl_.cpu_a = sample_cpu();
  }
  wait_for_start_at(0);
  t0_ = now_ns();
  result_.start_mono_ns = t0_;
  result_.start_wall_ns = wall_ns();
  ctl_.measure_start = UINT64_MAX;
  ctl_.deadline = 0;
  for (size_t j = 0; j < J_; ++j) {
    if (group_of_[j] != 0) continue;
    jc_[j].open_at(t0_);
    ctl_.measure_start = std::min(ctl_.measure_start, jc_[j].measure_start);
    ctl_.deadline = std::max(ctl_.deadline, jc_[j].deadline);
  }
  if (G_ > 1) ctl_.deadline = UINT64_MAX;      // a later group's end is not known yet
  if (interrupted_) ctl_.stop = kInterrupted;  // a signal while the rings were set up
  merger_->start_at(ctl_.measure_start);
  series_view_ = run_;
  series_view_.uring.sqpoll = ctl_.any_sqpoll;
  if (!logs_.empty() && run_.log_interval.count()) {
    const std::string disk = devices_.targets.empty() ? std::string() : devices_.targets[0];
    std::optional<size_t> busy_index;  // the disk's place in the tracker's reads, when traced
    if (ctl_.tracker && exact_)
      for (size_t i = 0; i < exact_->names.size(); ++i)
        if (exact_->names[i] == disk) busy_index = i;
    series_.emplace(series_view_, ctl_, pub_.get(), workers_, *merger_, disk, busy_index);
  }
  // --anatomy over a time-based window: its programs come off and back on in
  // slices, for the IOPS they cost in this run (anatomy_slices.hpp). A run
  // counted by --ios keeps them on: its end, and so its pairs, are unknown.
  if (ctl_.anatomy && hooks_.anatomy_slices && J_ == 1 && run_.runtime && !run_.ios && ctl_.deadline != UINT64_MAX)
    slicer_.emplace(ctl_.measure_start, ctl_.deadline, kAnatomySliceNs);
  ctl_.go.store(true, std::memory_order_release);
}

// Progress once a second, stop on a signal, kick a worker whose wait has
// gone on for kMaxWaitNs (kick.hpp), until every worker is done.
void RunSession::supervise() {
  ProgressMeter meter(J_ == 1 ? run_.ios : std::nullopt, ctl_, pub_.get(), T_, t0_);
  std::vector<pthread_t> handles(threads_.size());
  std::transform(threads_.begin(), threads_.end(), handles.begin(), [](std::thread& th) { return th.native_handle(); });
  StallKicker kicker(pub_.get(), std::move(handles), t0_);
  Nanos next_tick = t0_ + 1'000'000'000ull;
  for (;;) {
    bool all_done = true;
    for (unsigned i = 0; i < T_; ++i) all_done &= pub_[i].done.load(std::memory_order_acquire);
    if (all_done) break;
    Nanos t = now_ns();
    // Wake often enough to drain the in-flight logs long before they fill
    // (16k events each: 80 ms at 200k batches/s), and no more: this thread's
    // CPU is part of the process's.
    Nanos wake_at = series_ ? std::min(next_tick, series_->next_due()) : next_tick;
    if (slicer_) wake_at = std::min(wake_at, slicer_->next_due());
    // Near the end, wake at the deadline and then every millisecond for a
    // while (the drain), so a short run is not kept waiting for the next
    // wake-up after its last I/O.
    if (ctl_.deadline != UINT64_MAX && t < ctl_.deadline + kMaxWaitNs)
      wake_at = std::min(wake_at, std::max(ctl_.deadline, t + 1'000'000));
    const int wait_ms = static_cast<int>(std::clamp<int64_t>((static_cast<int64_t>(wake_at) - static_cast<int64_t>(t)) / 1'000'000, 1,
                                                             logs_.empty() ? 50 : 20));
    // Once every window is closed its end is known, and the drain after it
    // is not merged into the window's figures.
    if (!logs_.empty())
      merger_->poll(logs_, [&] {
        return ctl_.windows_open.load(std::memory_order_acquire) == 0 ? ctl_.window_end.load() : UINT64_MAX;
      });
    if (series_) {
      series_->tick(now_ns());
      series_->collect(false);
    }
    if (hooks_.wait_stop_signal && hooks_.wait_stop_signal(wait_ms) && !interrupted_) {
      interrupted_ = true;
      int expected = kRunning;  // a stop for errors came first and stays the reason
      ctl_.stop.compare_exchange_strong(expected, kInterrupted);
    }
    const Nanos now = now_ns();
    if (slicer_) slicer_->step(now, completed_now(), *ctl_.anatomy);
    kicker.poll(now, kMaxWaitNs);
    if (now >= next_tick) {
      if (hooks_.on_progress) hooks_.on_progress(meter.take(now));  // else just sleep on
      next_tick = now + 1'000'000'000ull;
    }
  }
  join_all();
  if (slicer_) slicer_->finish(*ctl_.anatomy);
}

void RunSession::close_and_account() {
  result_.merge_threads();
  if (!logs_.empty() && ctl_.window_opened && result_.total.window_start_ns)
    result_.inflight = merger_->finish(logs_, result_.total.window_start_ns + result_.window_ns);
  if (series_) {
    series_->collect(true);
    result_.series = std::move(series_->series);
  }
  if (ctl_.window_opened && result_.total.window_start_ns && ctl_.cpu_a.valid && ctl_.cpu_b.valid) account_window();
  if (run_.anatomy) anatomy_result();
  result_.first_error = ctl_.first_error;
  const int stop = ctl_.stop.load();
  result_.interrupted = stop == kInterrupted;
  if (run_.verify) verify_after(run_, *targets_.front(), tables_, workers_, hooks_, result_);
  result_.stop_reason = stop_reason(stop, jobs_, result_);
}

// The window's CPU, and with the system sampled at its edges, the accounting:
// the devices' figures (and their exact busy time, where traced) and each
// job's CPU.
void RunSession::account_window() {
  result_.cpu = cpu_delta(ctl_.cpu_a, ctl_.cpu_b);
  if (!ctl_.sample_system) return;
  std::vector<int> tids;
  for (const auto& t : result_.threads) tids.push_back(t.tid);
  result_.accounting = account(ctl_.sys_a, ctl_.sys_b, tids, devices_.targets);
  if (exact_) {
    result_.accounting->exact_unavailable = exact_->attach.unavailable;
    add_exact_busy(*result_.accounting, exact_->names, exact_samples(ctl_.busy_a), exact_samples(ctl_.busy_b));
  }
  if (ctl_.tracker) {
    result_.accounting->exact_source = ctl_.tracker->source();
    for (int k = 0; k < BusyCounters::kDepthBuckets; ++k) result_.accounting->exact_depth_low.push_back(busy_depth_low(k));
  }
  for (auto& jr : result_.jobs) {
    std::vector<int> job_tids;
    for (unsigned i = 0; i < jr.threads; ++i) job_tids.push_back(result_.threads[jr.first_thread + i].tid);
    jr.cpu = job_cpu(ctl_.sys_a, ctl_.sys_b, job_tids);
  }
}

void RunSession::anatomy_result() {
  result_.anatomy = anatomy_.tracer ? anatomy_.tracer->result() : AnatomyResult{};
  result_.anatomy->flavor = anatomy_opt_.flavor;
  result_.anatomy->block_link = anatomy_opt_.block_link;
  result_.anatomy->unavailable = anatomy_.unavailable;
  if (slicer_) result_.anatomy->iops_ratio = slice_ratio(slicer_->slices(), slicer_->slice_s());
  using Unmeasured = AnatomyResult::Unmeasured;
  if (!result_.anatomy->iops_ratio) {
    result_.anatomy->iops_ratio_unmeasured = !hooks_.anatomy_slices ? Unmeasured::Compare
                                             : slicer_              ? Unmeasured::FewPairs
                                                                    : Unmeasured::CountedByIos;
    if (slicer_) result_.anatomy->unmeasured_slice_s = slicer_->slice_s();
  }
}

}  // namespace

RunTracker attach_run_tracker(const Targets& targets) { return attach_tracker_for({&targets}); }

RunResult run_bench(const JobSpec& job, const Targets& targets, const RunHooks& hooks, const RunTracker* shared) {
  return run_jobs({job}, {&targets}, hooks, shared);
}

RunResult run_jobs(const std::vector<JobSpec>& jobs, const std::vector<const Targets*>& targets,
                   const RunHooks& hooks, const RunTracker* shared) {
  RunSession session(jobs, targets, hooks, shared);
  return session.run();
}

}  // namespace ioacct
