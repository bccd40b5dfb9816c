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

DirPace::DirPace(std::array<double, 3> per_second, std::array<bool, 3> drawn, uint64_t start_ns,
                 uint64_t deadline_ns)
    : drawn_(drawn) {
  for (int d = 0; d < 3; ++d)
    if (per_second[d] > 0) s_[d].emplace(per_second[d], start_ns, deadline_ns);
}

int DirPace::take(int wanted, uint64_t now) {
  for (const int d : {wanted, other(wanted)}) {
    if (d < 0) continue;
    if (!s_[d]) return d;
    if (s_[d]->take(1, now)) return d;
  }
  return -1;
}

uint64_t DirPace::next_due(int wanted) const {
  const int o = other(wanted);
  return o < 0 ? due(wanted) : std::min(due(wanted), due(o));
}

}  // namespace ioacct
