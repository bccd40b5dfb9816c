#pragma once
// The busy tracker's pure core: one round of one device, from spans to
// figures. The tracker (busy_tracker.cpp) turns the BPF programs' logs and
// the kernel's own view of the requests it believes in flight into spans;
// this turns spans into time. Plain data in, plain data out; unit-tested.
#include <array>
#include <cstdint>
#include <vector>

namespace ioacct {

// The in-flight depth buckets: 0, 1, 2-3, 4-7, ..., 128-255, 256+.
inline constexpr int kBusyDepthBuckets = 10;
// The bucket of `n` requests in flight, and each bucket's lowest count.
int busy_depth_bucket(uint64_t n) noexcept;
uint64_t busy_depth_low(int bucket) noexcept;

// A span of CLOCK_MONOTONIC time, (from, to], in ns.
struct BusySpan {
  uint64_t from = 0, to = 0;
};

struct BusyRoundInput {
  uint64_t from = 0, to = 0;  // the round: (from, to]; spans are clipped to it
  // A request certainly in the span over each of these: completed requests
  // (start stamp to completion) and requests the kernel still shows in flight
  // at the round's end.
  std::vector<BusySpan> certain;
  // A request may have been in the span: one whose end no program saw (the
  // kernel shows it gone), one whose start the kernel had not stamped yet.
  std::vector<BusySpan> unsure;
  // Some request in flight is unknown (not seen starting, a dropped record):
  // any time without a certain one is unsure.
  bool unknown = false;
  // Time the round's unknown requests covered, not placed in time (dropped
  // completions, whose lengths the programs summed): moved from idle to
  // unsure, up to the idle time there is.
  uint64_t unsure_extra_ns = 0;
};

struct BusyRoundOutput {
  uint64_t busy_ns = 0;    // at least one certain span
  uint64_t unsure_ns = 0;  // no certain span, but an unsure one (or unknown); busy lies in [busy, busy + unsure]
  std::array<uint64_t, kBusyDepthBuckets> depth_ns{};  // by the number of certain spans; adds up to to - from
};

// Pure. Spans may overlap, repeat and lie partly or wholly outside the round.
BusyRoundOutput busy_round(const BusyRoundInput& in);

// One batch of one struct request's records, the other half of the core.
// Starts carry no time (the start program reads no clock), so they are
// ordered against ends by each end's start stamp: a start is logged before
// the kernel stamps it, so an end stamped before the batch's floor (the
// previous batch's cut, less what a plug-cached stamp may lag) closes a
// request whose start came in an earlier batch: the one the reader knew, or
// one no program saw start. The other ends close, in order, the known
// request (when no earlier end did) and this batch's starts; any beyond
// those started unseen.
struct BusyStructBatch {
  bool known = false;  // the reader holds a request of this struct in flight from an earlier batch
  int starts = 0;
  int before = 0;  // ends stamped before the floor
  int others = 0;  // the other ends (and merges and unaccounted ends, which carry no stamp)
};

struct BusyStructPairing {
  bool known_closed_by_before = false;  // the earliest `before` end closes the known request
  bool known_closed_by_other = false;   // ... or the earliest other end does
  int paired = 0;                       // other ends that close this batch's starts
  int unseen_before = 0;                // `before` ends whose start no program saw
  int unseen_others = 0;                // other ends (the earliest, after the known's) likewise
  int open_after = 0;                   // requests of the struct in flight after the batch; 2+: ends went unseen
};

// Pure.
BusyStructPairing busy_pair(const BusyStructBatch& b);

}  // namespace ioacct
