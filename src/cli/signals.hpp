#pragma once
// Ctrl-C and friends without async signal handlers: SIGINT, SIGTERM and
// SIGHUP are blocked in every thread (construct this before any thread
// starts) and the main thread collects them with sigtimedwait. Workers never
// see a signal; they see the stop flag the main thread sets.
#include <signal.h>

namespace ioacct {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // Waits up to `ms` (0: just looks) for a stop signal; true once one came.
  bool wait(int ms);
  int received() const { return received_; }  // signal number, 0 if none

 private:
  sigset_t set_{}, old_{};
  int received_ = 0;
};

}  // namespace ioacct
