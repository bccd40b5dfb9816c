#pragma once
// A paced thread's schedule (--rate-iops, --rate). Pure: times are passed in
// (CLOCK_MONOTONIC ns), so the schedule is unit-tested without a clock.
#include <array>
#include <cstdint>
#include <optional>

#include "common/rng.hpp"

namespace ioacct {

// How a paced thread's I/Os are spaced (--rate-process; fio's rate_process):
// evenly, or as a Poisson process of the same mean rate, whose gaps are
// independent and exponentially distributed (fio's lambda = 10^6 / IOPS µs),
// the arrivals of many independent clients.
enum class RateProcess { Linear, Poisson };

// Linear: the k-th I/O is due at start + k·period (k = 0, 1, ...), computed
// from k each time so that rounding never accumulates. Poisson: at start +
// the sum of k exponential gaps of mean `period`, kept in a double for the
// same reason, each gap drawn from the schedule's own seeded generator. Only I/Os due before the
// deadline are ever handed out, so a run of W seconds from `start` holds at
// most ceil(W·rate) of them: never one for the far end of the window as well
// as for the near one. A thread that falls more than one period behind (depth
// full, slow completions) drops the backlog and starts the schedule again
// from that moment: the rate may fall short of the pace, never burst above it.
class PaceSchedule {
 public:
  // `per_second` > 0. `deadline_ns`: the end of the measured window
  // (UINT64_MAX when the run ends by --ios or a signal).
  PaceSchedule(double per_second, uint64_t start_ns, uint64_t deadline_ns = UINT64_MAX,
               RateProcess process = RateProcess::Linear, uint64_t seed = 0);

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
  bool poisson_;
  double sum_ = 0;     // Poisson: the gaps drawn since start_, ns
  Rng rng_;

  double gap();  // the next gap, ns
};

// A mixed job paced by direction (--rate-iops R,W,T; fio's rate=r,w,t):
// reads, writes and trims each on a PaceSchedule of their own, an unpaced
// direction always due. The mix draws each I/O's direction; when the one
// drawn is ahead of its schedule and the other of read and write is due
// (and the mix gives it a share), the I/O goes that way instead, and when
// neither is due nothing is issued until the sooner of the two: fio's
// rate_ddir(). So a direction whose pace holds it back gives its turn to the
// other, and the mix's shares bend to the paces, as they do in fio.
// Directions: 0 read, 1 write, 2 trim.
class DirPace {
 public:
  // `per_second[d]`: 0 leaves d unpaced. `drawn[d]`: the mix gives d a share.
  DirPace(std::array<double, 3> per_second, std::array<bool, 3> drawn, uint64_t start_ns,
          uint64_t deadline_ns = UINT64_MAX, RateProcess process = RateProcess::Linear, uint64_t seed = 0);

  // The direction to issue for a draw of `wanted` at `now_ns`, its slot
  // taken; -1 when neither it nor its alternative is due.
  int take(int wanted, uint64_t now_ns);
  // When a draw of `wanted` can next go: 0 when it can now, UINT64_MAX when
  // neither it nor its alternative has an I/O left before the deadline.
  uint64_t next_due(int wanted) const;

 private:
  int other(int d) const { return d < 2 && drawn_[d ^ 1] ? d ^ 1 : -1; }
  uint64_t due(int d) const { return s_[d] ? s_[d]->next_due() : 0; }

  std::array<std::optional<PaceSchedule>, 3> s_;
  std::array<bool, 3> drawn_;
};

// A thread's floors (--rate-min, --rate-iops-min; fio's rate_min and
// rate_iops_min), checked as fio's check_min_rate() checks them: after a
// settling time of 2 s from the window's opening, the counts are taken as a
// baseline, and from then on each check at least one cycle after the last
// compares what each direction moved since with its floor. Only directions
// that have moved something are checked (fio's bytes_done), so a read job's
// floor given for all three directions holds its reads only.
class RateFloor {
 public:
  static constexpr uint64_t kSettleNs = 2'000'000'000;

  // Per direction (reads, writes, trims): bytes/s and I/Os per second; 0: none.
  RateFloor(std::array<uint64_t, 3> min_bytes, std::array<uint64_t, 3> min_ios, uint64_t cycle_ns,
            uint64_t window_start_ns);

  struct Shortfall {
    int dir;             // 0 read, 1 write, 2 trim
    bool ios;            // the I/O floor (else the bandwidth one)
    double got, floor;   // per second, over the cycle
    uint64_t spent_ns;   // the cycle as it ran
  };
  // Whether a check is due at `now_ns`: one compare, on the hot path.
  bool due(uint64_t now_ns) const { return now_ns >= next_; }
  // `ios` and `bytes`: each direction's totals in the window so far.
  std::optional<Shortfall> check(uint64_t now_ns, const std::array<uint64_t, 3>& ios,
                                 const std::array<uint64_t, 3>& bytes);

 private:
  std::array<uint64_t, 3> min_bytes_, min_ios_;
  uint64_t cycle_;
  uint64_t next_;        // when the next check is due
  uint64_t last_ = 0;    // when the baseline was taken; 0: not yet
  std::array<uint64_t, 3> ios0_{}, bytes0_{};
};

}  // namespace ioacct
