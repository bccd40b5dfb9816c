#pragma once
// Process CPU usage, sampled at the measured window's edges only: two
// getrusage() calls per run, never one per I/O.
#include <sys/resource.h>

#include <cstdint>

namespace ioacct {

// What the process used between two samples.
struct CpuUsage {
  double user_s = 0, sys_s = 0;
  int64_t vol_ctxsw = 0, invol_ctxsw = 0;
};

struct CpuSample {
  rusage ru{};
  bool valid = false;
};

inline CpuSample sample_cpu() noexcept {
  CpuSample s;
  s.valid = getrusage(RUSAGE_SELF, &s.ru) == 0;
  return s;
}

inline CpuUsage cpu_delta(const CpuSample& a, const CpuSample& b) noexcept {
  auto secs = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  CpuUsage u;
  u.user_s = secs(b.ru.ru_utime) - secs(a.ru.ru_utime);
  u.sys_s = secs(b.ru.ru_stime) - secs(a.ru.ru_stime);
  u.vol_ctxsw = b.ru.ru_nvcsw - a.ru.ru_nvcsw;
  u.invol_ctxsw = b.ru.ru_nivcsw - a.ru.ru_nivcsw;
  return u;
}

}  // namespace ioacct
