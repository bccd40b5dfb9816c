#include "runner/kick.hpp"

#include <signal.h>

#include <mutex>

#include "runner/control.hpp"

namespace ioacct {
namespace {

// SIGURG: ignored by default, so one that reaches the process from outside
// does nothing either way, and nothing here uses sockets' urgent data.
constexpr int kKickSignal = SIGURG;

void on_kick(int /*sig*/) {}

}  // namespace

void accept_kicks() noexcept {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_handler = on_kick;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESTART;
    sigaction(kKickSignal, &sa, nullptr);
  });
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, kKickSignal);
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

StallKicker::StallKicker(const Published* pub, std::vector<pthread_t> threads, Nanos now)
    : pub_(pub), threads_(std::move(threads)), seen_(threads_.size(), 0), since_(threads_.size(), now) {}

void StallKicker::poll(Nanos now, Nanos stall) noexcept {
  for (size_t i = 0; i < threads_.size(); ++i) {
    if (pub_[i].done.load(std::memory_order_acquire)) continue;
    const uint64_t c = pub_[i].completed.load(std::memory_order_relaxed);
    if (c != seen_[i]) {
      seen_[i] = c;
      since_[i] = now;
    } else if (now - since_[i] >= stall) {
      pthread_kill(threads_[i], kKickSignal);
      since_[i] = now;
      ++kicks_;
    }
  }
}

}  // namespace ioacct
