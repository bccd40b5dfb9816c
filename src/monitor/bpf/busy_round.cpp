#include "monitor/bpf/busy_round.hpp"

#include <algorithm>
#include <bit>

namespace ioacct {

int busy_depth_bucket(uint64_t n) noexcept {
  if (n == 0) return 0;
  const int b = std::bit_width(n);  // 1 -> 1, 2-3 -> 2, 4-7 -> 3, ...
  return std::min(b, kBusyDepthBuckets - 1);
}

uint64_t busy_depth_low(int bucket) noexcept { return bucket == 0 ? 0 : uint64_t{1} << (bucket - 1); }

BusyRoundOutput busy_round(const BusyRoundInput& in) {
  BusyRoundOutput out;
  if (in.to <= in.from) return out;
  // Events at each span's clipped edges: +1/-1 on the certain or the unsure
  // count. At equal times an end sorts before a start, so touching spans
  // leave no zero-length gap and nothing is counted twice.
  struct Event {
    uint64_t t;
    int certain, unsure;
  };
  std::vector<Event> ev;
  ev.reserve(2 * (in.certain.size() + in.unsure.size()));
  auto add = [&](const std::vector<BusySpan>& spans, bool certain) {
    for (const BusySpan& s : spans) {
      const uint64_t a = std::max(s.from, in.from), b = std::min(s.to, in.to);
      if (b <= a) continue;
      ev.push_back({a, certain ? 1 : 0, certain ? 0 : 1});
      ev.push_back({b, certain ? -1 : 0, certain ? 0 : -1});
    }
  };
  add(in.certain, true);
  add(in.unsure, false);
  std::sort(ev.begin(), ev.end(), [](const Event& x, const Event& y) {
    return x.t != y.t ? x.t < y.t : (x.certain + x.unsure) < (y.certain + y.unsure);
  });
  uint64_t last = in.from, idle = 0;
  int64_t certain = 0, unsure = 0;
  auto span = [&](uint64_t until) {
    const uint64_t dt = until - last;
    out.depth_ns[busy_depth_bucket(static_cast<uint64_t>(certain))] += dt;
    if (certain > 0) out.busy_ns += dt;
    else if (unsure > 0 || in.unknown) out.unsure_ns += dt;
    else idle += dt;
    last = until;
  };
  for (const Event& e : ev) {
    if (e.t > last) span(e.t);
    certain += e.certain;
    unsure += e.unsure;
  }
  if (in.to > last) span(in.to);
  const uint64_t extra = std::min(in.unsure_extra_ns, idle);
  out.unsure_ns += extra;
  return out;
}

}  // namespace ioacct
