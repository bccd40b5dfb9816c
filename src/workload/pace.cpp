#include "workload/pace.hpp"

#include <algorithm>
#include <cmath>

namespace ioacct {

PaceSchedule::PaceSchedule(double per_second, uint64_t start_ns, uint64_t deadline_ns, RateProcess process,
                           uint64_t seed)
    : period_(1e9 / per_second),
      interval_(std::max<uint64_t>(1, static_cast<uint64_t>(period_))),
      start_(start_ns),
      deadline_(deadline_ns),
      next_(start_ns),
      poisson_(process == RateProcess::Poisson),
      rng_(seed) {
  // A Poisson process's first arrival is a gap after its start, as every
  // other; a linear one's is at the start.
  if (poisson_) next_ = start_ + static_cast<uint64_t>(sum_ = gap());
}

// Inverse transform: -ln(U) for U uniform in (0, 1], 53 bits of it.
double PaceSchedule::gap() {
  const double u = static_cast<double>((rng_.next() >> 11) + 1) * 0x1p-53;
  return -std::log(u) * period_;
}

unsigned PaceSchedule::take(unsigned want, uint64_t now) {
  unsigned due = 0;
  while (due < want && next_ <= now && next_ < deadline_) {
    ++due;
    ++k_;
    next_ = start_ + static_cast<uint64_t>(poisson_ ? (sum_ += gap()) : static_cast<double>(k_) * period_);
  }
  // More than one mean period behind: drop the backlog. A Poisson
  // schedule's own bursts (gaps far below the mean) are its shape, kept:
  // only lateness past the due time drops, as for a linear one.
  if (next_ + interval_ < now) {
    start_ = next_ = now;
    k_ = 0;
    sum_ = 0;
  }
  return due;
}

DirPace::DirPace(std::array<double, 3> per_second, std::array<bool, 3> drawn, uint64_t start_ns,
                 uint64_t deadline_ns, RateProcess process, uint64_t seed)
    : drawn_(drawn) {
  for (int d = 0; d < 3; ++d)  // each direction's gaps its own stream
    if (per_second[d] > 0)
      s_[d].emplace(per_second[d], start_ns, deadline_ns, process, seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(d));
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

RateFloor::RateFloor(std::array<uint64_t, 3> min_bytes, std::array<uint64_t, 3> min_ios, uint64_t cycle_ns,
                     uint64_t window_start_ns)
    : min_bytes_(min_bytes), min_ios_(min_ios), cycle_(cycle_ns), next_(window_start_ns + kSettleNs) {}

std::optional<RateFloor::Shortfall> RateFloor::check(uint64_t now, const std::array<uint64_t, 3>& ios,
                                                     const std::array<uint64_t, 3>& bytes) {
  std::optional<Shortfall> out;
  if (last_) {
    const uint64_t spent = now - last_;
    const double secs = static_cast<double>(spent) / 1e9;
    for (int d = 0; d < 3 && !out; ++d) {
      if (!ios[d]) continue;  // nothing moved this way yet: not checked, as in fio
      const double got_bytes = static_cast<double>(bytes[d] - bytes0_[d]) / secs;
      const double got_ios = static_cast<double>(ios[d] - ios0_[d]) / secs;
      if (min_bytes_[d] && got_bytes < static_cast<double>(min_bytes_[d]))
        out = Shortfall{d, false, got_bytes, static_cast<double>(min_bytes_[d]), spent};
      else if (min_ios_[d] && got_ios < static_cast<double>(min_ios_[d]))
        out = Shortfall{d, true, got_ios, static_cast<double>(min_ios_[d]), spent};
    }
  }
  last_ = now;
  ios0_ = ios;
  bytes0_ = bytes;
  next_ = now + cycle_;
  return out;
}

}  // namespace ioacct
