#pragma once
// A paced thread's schedule (--rate-iops, --rate). Pure: times are passed in
// (CLOCK_MONOTONIC ns), so the schedule is unit-tested without a clock.
#include <cstdint>

namespace ioacct {

// The k-th I/O is due at start + k·period (k = 0, 1, ...), computed from k
// each time so that rounding never accumulates. Only I/Os due before the
// deadline are ever handed out, so a run of W seconds from `start` holds at
// most ceil(W·rate) of them: never one for the far end of the window as well
// as for the near one. A thread that falls more than one period behind (depth
// full, slow completions) drops the backlog and starts the schedule again
// from that moment: the rate may fall short of the pace, never burst above it.
class PaceSchedule {
 public:
  // `per_second` > 0. `deadline_ns`: the end of the measured window
  // (UINT64_MAX when the run ends by --ios or a signal).
  PaceSchedule(double per_second, uint64_t start_ns, uint64_t deadline_ns = UINT64_MAX);

  // Takes up to `want` of the I/Os due at `now_ns`; returns how many.
  unsigned take(unsigned want, uint64_t now_ns);

  // When the next I/O is due; UINT64_MAX when none is left before the deadline.
  uint64_t next_due() const { return next_ < deadline_ ? next_ : UINT64_MAX; }
  // No I/O is left before the deadline: the schedule is over.
  bool done() const { return next_ >= deadline_; }
  uint64_t period_ns() const { return interval_; }

 private:
  double period_;      // ns, exact
  uint64_t interval_;  // ns, whole (at least 1)
  uint64_t start_, deadline_;
  uint64_t k_ = 0;     // I/Os handed out since start_
  uint64_t next_;      // due time of I/O k_
};

}  // namespace ioacct
