#pragma once
// --latency-target (fio's latency_target, latency_window,
// latency_percentile): the highest depth at which the I/Os meet a latency
// target. Pure: the worker tells it what each window saw; it answers with the
// depth to run at and what to do. Unit-tested without a device.
//
// fio's search, step by step (its io_u.c, lat_target_*): start at depth 1.
// A window that meets the target raises the depth: doubled while no depth
// has failed, else halfway up to the lowest that failed. A window that
// misses lowers it halfway down to the highest that met it. When a success
// leaves the depth where it was, the search has found it: one more window
// runs there with the figures counted afresh ("found"), and when that one
// meets the target too the job is done. At depth 1 a miss means no depth
// meets the target: the job fails. With a percentile of 100 one I/O over
// the target is a miss at once; below 100 a window misses when fewer than
// that percentage of its I/Os met the target.
#include <cstdint>

namespace ioacct {

class DepthSearch {
 public:
  enum class Step {
    Same,   // go on at depth()
    Up,     // depth() is higher: refill to it
    Down,   // depth() is lower: let what is in flight finish first (fio quiesces)
    Found,  // the depth holds: count afresh from here, one more window
    Done,   // the counted window met the target too: the job ends
    Failed  // a miss at depth 1: no depth meets the target
  };

  // `keep_running` (fio's latency_run=1): a depth found is not the end; the
  // search goes on adjusting it for the whole run, and never says Found or
  // Done (found() turns true the first time a depth holds).
  DepthSearch(unsigned max_depth, double percentile, bool keep_running = false)
      : max_(max_depth), high_(max_depth), pct_(percentile), run_(keep_running) {}

  unsigned depth() const { return depth_; }
  bool found() const { return found_; }
  // Percentile 100: one I/O over the target is a miss now.
  bool miss_at_once() const { return pct_ >= 100.0; }
  // An I/O over the target, at percentile 100.
  Step over_target() { return miss(); }
  // A window's end: `ios` completed in it, `over` of them over the target.
  // A window with no I/O tells nothing: Same.
  Step window_end(uint64_t ios, uint64_t over);

 private:
  Step hit();
  Step miss();

  unsigned max_;
  unsigned depth_ = 1, low_ = 1, high_;
  double pct_;
  bool run_;
  bool found_ = false;
};

}  // namespace ioacct
