#include "monitor/bpf/busy_round.hpp"

#include <algorithm>
#include <bit>

namespace ioacct {

int busy_depth_bucket(uint64_t n) noexcept {
  if (n == 0) return 0;
  const auto b = static_cast<int>(std::bit_width(n));  // 1 -> 1, 2-3 -> 2, 4-7 -> 3, ...
  return std::min(b, kBusyDepthBuckets - 1);
}

uint64_t busy_depth_low(int bucket) noexcept { return bucket == 0 ? 0 : uint64_t{1} << (bucket - 1); }

namespace {

// Sorts times of one round. They arrive nearly sorted (completions in each
// CPU's log are in time order, and requests mostly start in the order they
// end), so a sorted run is found at once; otherwise an LSD radix sort on
// the offset into the round, four passes of 8 bits, when the round is
// shorter than 2^32 ns, which it always is (rounds are ~100 ms apart).
void sort_times(std::vector<uint64_t>& v, uint64_t base, std::vector<uint64_t>& tmp) {
  if (std::is_sorted(v.begin(), v.end())) return;
  if (v.size() < 64 || v.back() - base >= (uint64_t{1} << 32) || v.front() < base) {
    std::sort(v.begin(), v.end());
    return;
  }
  tmp.resize(v.size());
  for (int shift = 0; shift < 32; shift += 8) {
    size_t count[257] = {};
    for (uint64_t t : v) ++count[((t - base) >> shift & 0xff) + 1];
    for (int i = 0; i < 256; ++i) count[i + 1] += count[i];
    for (uint64_t t : v) tmp[count[(t - base) >> shift & 0xff]++] = t;
    v.swap(tmp);
  }
}

}  // namespace

BusyRoundOutput busy_round(const BusyRoundInput& in) {
  BusyRoundOutput out;
  if (in.to <= in.from) return out;
  // Each span's clipped edges, in four sorted lists: certain and unsure
  // starts and ends. Merged in time order, an end before a start at the same
  // instant, so touching spans leave no zero-length gap and count nothing twice.
  thread_local std::vector<uint64_t> cs, ce, us, ue, tmp;
  cs.clear();
  ce.clear();
  us.clear();
  ue.clear();
  auto add = [&](const std::vector<BusySpan>& spans, std::vector<uint64_t>& starts, std::vector<uint64_t>& ends) {
    for (const BusySpan& sp : spans) {
      const uint64_t a = std::max(sp.from, in.from), b = std::min(sp.to, in.to);
      if (b <= a) continue;
      starts.push_back(a);
      ends.push_back(b);
    }
  };
  add(in.certain, cs, ce);
  add(in.unsure, us, ue);
  for (auto* v : {&cs, &ce, &us, &ue}) sort_times(*v, in.from, tmp);
  uint64_t last = in.from, idle = 0;
  int64_t certain = 0, unsure = 0;
  auto span = [&](uint64_t until) {
    const uint64_t dt = until - last;
    if (dt == 0) return;
    out.depth_ns[busy_depth_bucket(static_cast<uint64_t>(certain))] += dt;
    if (certain > 0) out.busy_ns += dt;
    else if (unsure > 0 || in.unknown) out.unsure_ns += dt;
    else idle += dt;
    last = until;
  };
  size_t a = 0, b = 0, c = 0, d = 0;
  constexpr uint64_t kNever = UINT64_MAX;
  for (;;) {
    const uint64_t t_ce = b < ce.size() ? ce[b] : kNever, t_ue = d < ue.size() ? ue[d] : kNever;
    const uint64_t t_cs = a < cs.size() ? cs[a] : kNever, t_us = c < us.size() ? us[c] : kNever;
    const uint64_t end = std::min(t_ce, t_ue), start = std::min(t_cs, t_us);
    if (end == kNever && start == kNever) break;
    if (end <= start) {  // ends first at equal times
      span(end);
      if (t_ce == end) --certain, ++b;
      else --unsure, ++d;
    } else {
      span(start);
      if (t_cs == start) ++certain, ++a;
      else ++unsure, ++c;
    }
  }
  if (in.to > last) span(in.to);
  out.unsure_ns += std::min(in.unsure_extra_ns, idle);
  return out;
}

BusyInvisibleOutput busy_invisible(const BusyInvisibleInput& in) {
  BusyInvisibleOutput out;
  if (in.kernel_done <= in.seen + in.ambiguous) return out;
  const uint64_t bound = (in.kernel_ms + in.ms_fields) * 1'000'000;
  const uint64_t missing = bound > in.seen_latency_ns ? bound - in.seen_latency_ns : 0;
  if (missing == 0) return out;  // the count's excess is requests at the edges, which took no time unseen
  out.invisible = in.kernel_done - in.seen - in.ambiguous;
  out.unsure_ns = std::min(missing, in.idle_ns);
  return out;
}

}  // namespace ioacct
