#pragma once
// The busy tracker's pure core: one round of one device, from spans to
// figures, and the bound on completions no program saw. The tracker (busy_tracker.cpp) turns the BPF programs' logs and
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
  // kernel's sweep shows it gone), one the sweep could not look at.
  std::vector<BusySpan> unsure;
  // Some request in flight is unknown (the kernel counts more than the
  // sweep showed, a dropped record): any time without a certain one is unsure.
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

// Completions no program saw at either end (the kernel ran none) leave no
// trace but diskstats' counts, which are exact: a count above the
// completions seen surely inside diskstats' span, and above those seen as it
// was read (which it may or may not count), is that many invisible. Their
// time is at most what diskstats' latency sum grew by over the span, plus a
// millisecond per field summed (diskstats truncates each to ms), less the
// seen completions' latencies as diskstats has them. Those are shorter than
// ours: the kernel reads its clock before the tracepoint (from the plug's
// cache in a task with one), 50-580 ns per completion on average here, so
// each seen completion's latency counts kDiskstatsClockLeadNs less. A
// window whose seen latencies still exceed the sum gives no bound: all its
// idle time is unsure.
inline constexpr uint64_t kDiskstatsClockLeadNs = 1000;
struct BusyInvisibleInput {
  uint64_t kernel_done = 0;      // completions diskstats counted over the span
  uint64_t seen = 0;             // completions the programs saw, or found lost, surely inside the span
  uint64_t ambiguous = 0;        // completions seen as diskstats was read, which it may or may not count
  uint64_t kernel_ms = 0;        // diskstats' latency sums' growth over the span, ms
  uint64_t ms_fields = 0;        // how many ms fields moved (each truncated: < 1 ms short)
  uint64_t seen_latency_ns = 0;  // the seen completions' latencies summed
  uint64_t idle_ns = 0;          // the window's time neither busy nor unsure
};
struct BusyInvisibleOutput {
  uint64_t invisible = 0;  // completions no program saw
  uint64_t unsure_ns = 0;  // idle time that becomes unsure
};

// Pure.
BusyInvisibleOutput busy_invisible(const BusyInvisibleInput& in);

}  // namespace ioacct
