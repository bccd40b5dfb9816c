#include "trace/bpf/busy_proc.hpp"

namespace ioacct::busy {

void add_proc(Procs& p, uint64_t s, uint32_t tgid, bool own) {
  if (p.n == Procs::kMax) {
    size_t low = 0;
    for (size_t i = 1; i < p.n; ++i)
      if (p.e[i].s < p.e[low].s) low = i;
    for (size_t i = low; i + 1 < p.n; ++i) p.e[i] = p.e[i + 1];
    --p.n;
  }
  p.e[p.n++] = {s, tgid, own};
}

std::optional<uint32_t> match_proc(Procs& p, uint64_t start, bool take) {
  size_t best = Procs::kMax;
  for (size_t i = 0; i < p.n; ++i) {
    const Procs::Entry& x = p.e[i];
    const bool fits = x.own ? x.s <= start : x.s < start;
    if (fits && (best == Procs::kMax || x.s >= p.e[best].s)) best = i;
  }
  if (best == Procs::kMax) return std::nullopt;
  const uint32_t tgid = p.e[best].tgid;
  if (take) {
    const uint64_t upto = p.e[best].s;
    size_t kept = 0;
    for (size_t i = 0; i < p.n; ++i)
      if (p.e[i].s > upto) p.e[kept++] = p.e[i];
    p.n = static_cast<uint8_t>(kept);
  }
  return tgid;
}

}  // namespace ioacct::busy
