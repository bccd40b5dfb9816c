#pragma once
// Waking a worker that sleeps in the kernel waiting for completions, so that
// it looks at what changed: a stop, its deadline, the time series' epoch.
//
// A worker's waits carry no timeout. A timeout arms and cancels an hrtimer
// in every wait, and at depth 1 there is one wait per I/O: on this VM that
// cost 0.2-0.7 µs of CPU per I/O (bench/history/2026-12.md, "Pair by
// pair, and waits without a timeout"). Instead the main thread kicks, with a signal whose handler does
// nothing, each worker whose published count has not moved for kMaxWaitNs:
// the signal ends a sleeping io_uring_enter with -EINTR, which the worker
// takes as an empty wait. A healthy run is never kicked.
#include <pthread.h>

#include <cstdint>
#include <vector>

#include "acct/clock.hpp"

namespace ioacct {

struct Published;

// Installs the kick's handler (once per process; SA_RESTART, so that every
// other call restarts as if nothing had happened) and unblocks the signal in
// the calling thread. Each worker calls it first.
void accept_kicks() noexcept;

class StallKicker {
 public:
  StallKicker(const Published* pub, std::vector<pthread_t> threads, Nanos now);

  // Kicks each worker not done whose count has not moved for `stall`, and
  // again every `stall` while it does not move: a kick that lands just
  // before the worker enters its wait is lost, the next one is not.
  void poll(Nanos now, Nanos stall) noexcept;
  uint64_t kicks() const noexcept { return kicks_; }

 private:
  const Published* pub_;
  std::vector<pthread_t> threads_;
  std::vector<uint64_t> seen_;
  std::vector<Nanos> since_;
  uint64_t kicks_ = 0;
};

}  // namespace ioacct
