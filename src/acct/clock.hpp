#pragma once
// The one clock ioacct reads on the hot path: CLOCK_MONOTONIC through the vDSO
// (~30 ns here, no syscall). Raw rdtsc would be cheaper but the TSC is marked
// unstable on the VMs we run on, so its readings cannot be trusted across CPUs.
#include <errno.h>
#include <time.h>

#include <cstdint>

namespace ioacct {

using Nanos = uint64_t;  // CLOCK_MONOTONIC nanoseconds

inline Nanos now_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<Nanos>(ts.tv_sec) * 1'000'000'000ull + static_cast<Nanos>(ts.tv_nsec);
}

// The wall clock (CLOCK_REALTIME), nanoseconds since the Unix epoch: only to
// say when something happened, never to measure how long it took (it jumps).
inline int64_t wall_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Sleeps until the absolute monotonic time `t` (or returns at once if past).
inline void sleep_until_ns(Nanos t) noexcept {
  timespec ts{static_cast<time_t>(t / 1'000'000'000ull), static_cast<long>(t % 1'000'000'000ull)};
  while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
  }
}

}  // namespace ioacct
