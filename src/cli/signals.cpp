#include "cli/signals.hpp"

#include <pthread.h>

#include <cerrno>
#include <ctime>

namespace ioacct {

StopSignals::StopSignals() {
  sigemptyset(&set_);
  sigaddset(&set_, SIGINT);
  sigaddset(&set_, SIGTERM);
  sigaddset(&set_, SIGHUP);
  pthread_sigmask(SIG_BLOCK, &set_, &old_);
}

StopSignals::~StopSignals() { pthread_sigmask(SIG_SETMASK, &old_, nullptr); }

bool StopSignals::wait(int ms) {
  if (received_) return true;
  timespec ts{ms / 1000, static_cast<long>(ms % 1000) * 1'000'000};
  siginfo_t info;
  int sig;
  do sig = sigtimedwait(&set_, &info, &ts);
  while (sig < 0 && errno == EINTR);
  if (sig > 0) received_ = sig;
  return received_ != 0;
}

}  // namespace ioacct
