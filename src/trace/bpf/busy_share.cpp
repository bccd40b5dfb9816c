#include "trace/bpf/busy_share.hpp"

#include <algorithm>

namespace ioacct {
namespace {

// An edge packed in one word, so that the sort compares integers: the time
// since the round's start (43 bits: 2.4 hours; rounds are 100 ms apart),
// the label (20 bits: a million cgroups or processes) and whether it starts
// a span.
constexpr int kLabelBits = 20;
constexpr uint64_t kLabelMask = (uint64_t{1} << kLabelBits) - 1;
uint64_t edge(uint64_t offset, uint32_t label, bool start) {
  return offset << (kLabelBits + 1) | uint64_t{label} << 1 | (start ? 1 : 0);
}

// The labels in flight, each with its count, and a dense list of them, so
// that a segment costs the labels in flight, not all labels.
class InFlight {
 public:
  explicit InFlight(size_t n) : count_(n, 0), pos_(n, 0) {}
  void add(uint32_t l) {
    if (count_[l]++ == 0) {
      pos_[l] = static_cast<uint32_t>(active_.size());
      active_.push_back(l);
    }
    ++total_;
  }
  void remove(uint32_t l) {
    if (count_[l] == 0) return;
    --total_;
    if (--count_[l] > 0) return;
    const uint32_t last = active_.back();
    active_[pos_[l]] = last;
    pos_[last] = pos_[l];
    active_.pop_back();
  }
  // `len` ns with the requests in flight now.
  void spend(uint64_t len, BusyShareOutput& out) const {
    if (total_ == 0 || len == 0) return;
    uint64_t given = 0;
    for (uint32_t l : active_) {
      // len * count / total without overflow: len < 2^36 in a round, counts
      // far below 2^28.
      const uint64_t s = len * count_[l] / total_;
      out.share_ns[l] += s;
      out.inflight_ns[l] += len;
      given += s;
    }
    // The floors' remainder (less than one ns per label in flight).
    for (size_t i = 0; given < len; ++i, ++given) ++out.share_ns[active_[i % active_.size()]];
  }

 private:
  std::vector<uint64_t> count_;
  std::vector<uint32_t> pos_;
  std::vector<uint32_t> active_;
  uint64_t total_ = 0;
};

}  // namespace

BusyShareOutput busy_shares(uint64_t from, uint64_t to, const std::vector<BusySpan>& spans,
                            const std::vector<uint32_t>& labels, size_t n_labels) {
  BusyShareOutput out;
  out.share_ns.assign(n_labels, 0);
  out.inflight_ns.assign(n_labels, 0);
  if (n_labels > kLabelMask + 1 || to - from >= (uint64_t{1} << (63 - kLabelBits))) return out;  // never: see edge()
  std::vector<uint64_t> edges;
  edges.reserve(2 * spans.size());
  for (size_t i = 0; i < spans.size() && i < labels.size(); ++i) {
    const uint64_t a = std::max(spans[i].from, from), b = std::min(spans[i].to, to);
    if (a >= b || labels[i] >= n_labels) continue;
    edges.push_back(edge(a - from, labels[i], true));
    edges.push_back(edge(b - from, labels[i], false));
  }
  std::sort(edges.begin(), edges.end());
  InFlight in(n_labels);
  uint64_t last = 0;
  for (const uint64_t e : edges) {
    const uint64_t t = e >> (kLabelBits + 1);
    const auto label = static_cast<uint32_t>(e >> 1 & kLabelMask);
    in.spend(t - last, out);
    last = t;
    if (e & 1) in.add(label);
    else in.remove(label);
  }
  return out;
}

}  // namespace ioacct
