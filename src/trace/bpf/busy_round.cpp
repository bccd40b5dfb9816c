#include "trace/bpf/busy_round.hpp"

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
// the offset into the round, in digits of 9 bits (a 4 KiB count table per
// digit stays in L1), as many as the round's length needs: 3 for the usual
// 100 ms round. All the digits' counts come from one pass. The round is
// always shorter than 2^36 ns (rounds are ~100 ms apart).
void sort_times(std::vector<uint64_t>& v, uint64_t base, std::vector<uint64_t>& tmp) {
  if (std::is_sorted(v.begin(), v.end())) return;
  constexpr int kBits = 9, kDigits = 4;
  constexpr uint64_t kMask = (uint64_t{1} << kBits) - 1;
  const auto [lo, hi] = std::minmax_element(v.begin(), v.end());
  if (v.size() < 64 || *lo < base || *hi - base >= (uint64_t{1} << (kBits * kDigits))) {
    std::sort(v.begin(), v.end());
    return;
  }
  const int digits = std::max(1, (static_cast<int>(std::bit_width(*hi - base)) + kBits - 1) / kBits);
  static thread_local uint32_t count[kDigits][kMask + 2];
  std::fill(&count[0][0], &count[0][0] + kDigits * (kMask + 2), 0u);
  for (uint64_t t : v) {  // every digit's count, unrolled: cheaper than a branch on how many
    const uint64_t x = t - base;
    ++count[0][(x & kMask) + 1];
    ++count[1][(x >> kBits & kMask) + 1];
    ++count[2][(x >> (2 * kBits) & kMask) + 1];
    ++count[3][(x >> (3 * kBits) & kMask) + 1];
  }
  tmp.resize(v.size());
  for (int d = 0; d < digits; ++d) {
    uint32_t* c = count[d];
    for (uint64_t i = 0; i <= kMask; ++i) c[i + 1] += c[i];
    const int shift = kBits * d;
    for (uint64_t t : v) tmp[c[(t - base) >> shift & kMask]++] = t;
    v.swap(tmp);
  }
}

// The common round: certain spans only, nothing unknown. A two-way merge of
// starts and ends with no branch on the data (which of the two comes next
// is a coin toss at depth, and a mispredicted branch per event cost more
// than the rest of the merge), over lists that end in a sentinel.
// Returns the last event's time.
uint64_t merge_certain(std::vector<uint64_t>& cs, std::vector<uint64_t>& ce, uint64_t from, BusyRoundOutput& out) {
  const size_t n = cs.size() + ce.size();
  cs.push_back(UINT64_MAX);
  ce.push_back(UINT64_MAX);
  const uint64_t* s = cs.data();
  const uint64_t* e = ce.data();
  uint64_t last = from, depth = 0, busy = 0;
  for (size_t i = 0; i < n; ++i) {
    const uint64_t ts = *s, te = *e;
    const bool end = te <= ts;  // ends first at equal times
    const uint64_t t = end ? te : ts;
    const uint64_t dt = t - last;
    out.depth_ns[static_cast<size_t>(busy_depth_bucket(depth))] += dt;
    busy += depth > 0 ? dt : 0;
    depth += end ? UINT64_MAX : 1;  // -1 or +1
    e += end;
    s += !end;
    last = t;
  }
  out.busy_ns += busy;
  return last;
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
  if (us.empty() && !in.unknown) {
    // After the last end, nothing is in flight up to the round's end.
    out.depth_ns[0] += in.to - merge_certain(cs, ce, in.from, out);
    out.unsure_ns = std::min(in.unsure_extra_ns, out.depth_ns[0]);  // idle is the time at depth 0
    return out;
  }
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
  out.invisible = in.kernel_done - in.seen - in.ambiguous;
  const uint64_t bound = (in.kernel_ms + in.ms_fields) * 1'000'000 + in.seen * kDiskstatsClockLeadNs;
  const uint64_t missing = bound > in.seen_latency_ns ? bound - in.seen_latency_ns : in.idle_ns;
  out.unsure_ns = std::min(missing, in.idle_ns);
  return out;
}

}  // namespace ioacct
