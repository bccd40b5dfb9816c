#include "workload/pace.hpp"

#include <algorithm>

namespace ioacct {

PaceSchedule::PaceSchedule(double per_second, uint64_t start_ns, uint64_t deadline_ns)
    : period_(1e9 / per_second),
      interval_(std::max<uint64_t>(1, static_cast<uint64_t>(period_))),
      start_(start_ns),
      deadline_(deadline_ns),
      next_(start_ns) {}

unsigned PaceSchedule::take(unsigned want, uint64_t now) {
  unsigned due = 0;
  while (due < want && next_ <= now && next_ < deadline_) {
    ++due;
    next_ = start_ + static_cast<uint64_t>(static_cast<double>(++k_) * period_);
  }
  if (next_ + interval_ < now) {  // more than one period behind: drop the backlog
    start_ = next_ = now;
    k_ = 0;
  }
  return due;
}

}  // namespace ioacct
