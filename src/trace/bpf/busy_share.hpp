#pragma once
// Who made a device busy: the share rule, a pure function over the same
// certain spans busy_round() takes, each labelled with whose request it was
// (a cgroup or a process, as an index). docs/design.md, "Who is using the
// disk".
#include <cstddef>
#include <cstdint>
#include <vector>

#include "trace/bpf/busy_round.hpp"

namespace ioacct {

struct BusyShareOutput {
  // Per label: its share of the round's busy time. Each instant with
  // requests certainly in flight is split among the labels by their count
  // of those requests, so the shares add up to busy_round()'s busy_ns for
  // the same spans exactly (each split rounded down, its remainder given a
  // nanosecond at a time to the labels in flight, so nothing is lost).
  std::vector<uint64_t> share_ns;
  // Per label: the time with at least one of its requests in flight.
  std::vector<uint64_t> inflight_ns;
};

// Pure. `labels[i]` is span i's label, each < n_labels; spans are clipped to
// the round (from, to] and may overlap, repeat or lie outside it. Beyond
// 2^20 labels or a round of 2.4 hours (neither happens: rounds are 100 ms
// apart) every share is 0.
BusyShareOutput busy_shares(uint64_t from, uint64_t to, const std::vector<BusySpan>& spans,
                            const std::vector<uint32_t>& labels, size_t n_labels);

}  // namespace ioacct
