// --latency-target in the batch loop (worker.cpp): fio's search for the
// highest depth that meets a latency target (runner/depth_search.hpp). The
// loop calls these only when a target is set; a run without one pays a
// branch per refill and per reap.
#include <fmt/format.h>

#include "acct/clock.hpp"
#include "common/units.hpp"
#include "runner/worker.hpp"

namespace ioacct {

// The completions of this reap that moved their data whole (what the reap
// counts as done), and those over the target: before reap() frees their slots.
void Worker::count_over_target(int got, Nanos now) noexcept {
  const uint64_t target = static_cast<uint64_t>(job_.latency_target.count());
  for (int i = 0; i < got; ++i) {
    const IoCompletion& c = comps_[static_cast<size_t>(i)];
    const Slot& s = slots_[c.tag];
    if (!io_moves_data(s.op) || c.res != static_cast<int32_t>(s.left)) continue;
    ++cycle_ios_;
    if (now - s.t_submit > target) ++cycle_over_;
  }
}

bool Worker::search_step(Nanos now, unsigned inflight) noexcept {
  DepthSearch& d = *search_;
  if (search_cap_ == 0) {  // draining after a step down, or before the counted window
    if (inflight) return false;
    search_cap_ = d.depth();
    if (restart_when_drained_) {
      restart_when_drained_ = false;
      restart_window(now);
    }
    cycle_start_ = now;
    cycle_ios_ = cycle_over_ = 0;
    return false;
  }
  DepthSearch::Step step;
  if (d.miss_at_once() && cycle_over_)
    step = d.over_target();
  else if (now - cycle_start_ >= static_cast<uint64_t>(job_.latency_window.count()))
    step = d.window_end(cycle_ios_, cycle_over_);
  else
    return false;
  out_.latency_depth = d.depth();
  if (job_.latency_run) out_.latency_found = d.found();  // the figures are the whole run's either way
  switch (step) {
    case DepthSearch::Step::Failed:
      fatal(fmt::format("--latency-target: I/Os at depth 1 took over {} ({} of {} in the window); no depth meets "
                        "the target: give a longer --latency-target, or a lower --latency-percentile",
                        format_duration_ns(static_cast<double>(job_.latency_target.count())), cycle_over_,
                        cycle_ios_));
      return false;
    case DepthSearch::Step::Done: return true;
    case DepthSearch::Step::Found: restart_when_drained_ = true; [[fallthrough]];
    case DepthSearch::Step::Down: search_cap_ = 0; break;  // what is in flight drains first
    case DepthSearch::Step::Up: search_cap_ = d.depth(); break;
    case DepthSearch::Step::Same: break;
  }
  cycle_start_ = now;
  cycle_ios_ = cycle_over_ = 0;
  return false;
}

// The search found its depth: IOPS, latency and the run's opening samples
// start again here, as fio's reset_all_stats() (one job per run with a
// target: the samples are the run's; errors and engine counts stay whole).
void Worker::restart_window(Nanos now) {
  out_.ios = out_.reads = out_.writes = out_.trims = out_.syncs = 0;
  out_.bytes_read = out_.bytes_written = out_.bytes_trimmed = 0;
  out_.slat_unsplit = out_.clat_at_submit = 0;
  for (std::shared_ptr<Histogram>* h :
       {&out_.latency, &out_.slat, &out_.clat, &out_.trim_latency, &out_.sync_latency, &out_.read_lat.lat,
        &out_.read_lat.slat, &out_.read_lat.clat, &out_.write_lat.lat, &out_.write_lat.slat, &out_.write_lat.clat})
    if (*h) *h = std::make_shared<Histogram>();
  out_.intervals.clear();
  out_.latency_found = true;
  if (!counting_) return;  // the window opens later, at the ramp's end, as usual
  window_start_ = now;
  out_.window_start_ns = now;
  if (job_.acct != AcctLevel::Off) {
    if (ctl_.sample_system) ctl_.sys_a = sample_system(ctl_.disks, ctl_.ring_fds, ctl_.any_sqpoll);
    read_busy(ctl_.busy_a);
    ctl_.cpu_a = sample_cpu();
  }
}

}  // namespace ioacct
