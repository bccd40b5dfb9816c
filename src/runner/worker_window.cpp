// The measured window's two edges (worker.cpp): each thread's part of the
// opening and closing samples (the busy counters, the disks settled after
// the last reap), and the refill policy chosen at the opening and accounted
// at the close. Once per window, never per I/O.
#include <algorithm>
#include <chrono>
#include <thread>

#include "runner/worker.hpp"

namespace ioacct {

// The two edges are taken by one thread each, one after the other; the
// series collector may read between them, hence the lock.
void Worker::read_busy(std::vector<BusyCounters>& into) noexcept {
  if (!ctl_.tracker) return;
  try {
    const std::lock_guard<std::mutex> lock(ctl_.tracker_mu);
    into = ctl_.tracker->read();
  } catch (const std::exception&) {
    into.clear();  // reported as not measured
  }
}

void Worker::open_window() {
  counting_ = true;
  window_start_ = measure_start_;
  out_.window_start_ns = measure_start_;
  if (job_.has_rate_floor()) floor_.emplace(job_.rate_min_bw, job_.rate_min_iops, job_.rate_cycle.count(), measure_start_);
  if (!ctl_.window_opened.exchange(true) && job_.acct != AcctLevel::Off) {
    if (ctl_.sample_system) ctl_.sys_a = sample_system(ctl_.disks, ctl_.ring_fds, ctl_.any_sqpoll);
    read_busy(ctl_.busy_a);
    ctl_.cpu_a = sample_cpu();
  }
}

// A request's end reaches the application (bio_endio wakes io_uring) before
// the block layer counts it in diskstats (blk_account_io_done, next on the
// completing CPU), and the woken thread may preempt the one completing it
// there: right after the last reap a device can still show the request in
// flight and its completion uncounted, for over a millisecond at times (CI
// once read 2,999 of a run's 3,000 reads on a loop device). With nothing of
// this run in flight the disks are read again, sleeping between so that the
// completing thread runs, until none shows a request in flight, for at most
// 5 ms: another process's I/O may keep a disk busy, and then its count is
// as good as it gets.
void Worker::settle_disks(SystemSample& s) const {
  const auto busy = [&] {
    return std::any_of(s.disks.begin(), s.disks.end(), [](const auto& d) { return d.second.in_flight != 0; });
  };
  for (const Nanos until = now_ns() + 5'000'000; busy() && now_ns() < until;) {
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    s.disks = sample_system(ctl_.disks, {}, false, false).disks;
  }
}

// How the fused path submits its refills, where it is taken: as given, or
// for O_DIRECT as measured (runner/refill_chooser.hpp). Nop and the page
// cache complete inside the enter, so there is no device queue to keep fed
// and auto is the cheaper pass.
void Worker::choose_refill() {
  if (!fused_) return;
  switch (job_.submit_policy) {
    case SubmitPolicy::Each:
    case SubmitPolicy::Pass:
      refill_ = job_.submit_policy == SubmitPolicy::Each ? Refill::Each : Refill::Pass;
      out_.refill.decided_by = "given";
      break;
    case SubmitPolicy::Auto:
      // At depth 1 a pass holds one refill, which its wait submits at once:
      // submitting it alone first would only add a syscall.
      choose_ = submit_early_ && plan_.depth > 1;
      out_.refill.decided_by = choose_ ? "measured" : submit_early_ ? "depth 1" : "no device queue";
      break;
  }
}

// The window's end: the time each way, and the chooser's probes.
void Worker::close_refill(Nanos now) {
  if (out_.refill.decided_by.empty()) return;
  if (!choose_) {
    (refill_ == Refill::Each ? out_.refill.each_ns : out_.refill.pass_ns) = out_.window_ns;
    return;
  }
  chooser_.finish(now);
  const RefillChooser::Stats& s = chooser_.stats();
  out_.refill.each_ns = s.each_ns;
  out_.refill.pass_ns = s.pass_ns;
  out_.refill.probes = s.probes;
  out_.refill.chose_each = s.chose_each;
  out_.refill.extended = s.extended;
  out_.refill.cut_short = s.cut_short;
  out_.refill.unconfirmed = s.unconfirmed;
  out_.refill.probe_ratios = s.ratios;
}

void Worker::close_window(Nanos now, bool drained) {
  if (window_closed_) return;
  window_closed_ = true;
  if (counting_) {
    counting_ = false;
    out_.window_ns = now - window_start_;
    close_refill(now);
    Nanos end = ctl_.window_end.load(std::memory_order_relaxed);
    while (end < now && !ctl_.window_end.compare_exchange_weak(end, now, std::memory_order_relaxed)) {}
  }
  if (ctl_.windows_open.fetch_sub(1) == 1) {
    if (job_.acct != AcctLevel::Off) {
      ctl_.cpu_b = sample_cpu();
      if (ctl_.sample_system) {
        ctl_.sys_b = sample_system(ctl_.disks, ctl_.ring_fds, ctl_.any_sqpoll);
        if (drained) settle_disks(ctl_.sys_b);
      }
      read_busy(ctl_.busy_b);
    }
    ctl_.edges_done.store(true, std::memory_order_release);  // now the others may exit
  }
}

}  // namespace ioacct
