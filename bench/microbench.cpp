// Microbenchmarks of what runs once per I/O on the hot path. Run:
//   build/release/ioacct_microbench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <vector>

#include "acct/clock.hpp"
#include "acct/histogram.hpp"
#include "common/offsets.hpp"
#include "trace/bpf/busy_round.hpp"

namespace ioacct {
namespace {

void BM_HistogramRecord(benchmark::State& state) {
  Histogram h;
  Rng rng(1);
  uint64_t v[1024];
  for (auto& x : v) x = 20'000 + rng.below(2'000'000);
  size_t i = 0;
  for (auto _ : state) {
    h.record(v[i++ & 1023]);
  }
  benchmark::DoNotOptimize(h.count());
}
BENCHMARK(BM_HistogramRecord);

void BM_RandomOffset(benchmark::State& state) {
  OffsetGen g(0, 1ull << 30, 4096, true, 42);
  for (auto _ : state) benchmark::DoNotOptimize(g.next());
}
BENCHMARK(BM_RandomOffset);

// --random-distribution: what a skewed draw costs per I/O, beside the
// uniform one above (1 GiB of 4 KiB blocks).
void BM_SkewedOffset(benchmark::State& state, Distribution d) {
  OffsetGen g(0, 1ull << 30, 4096, true, 42, 0, 1, 0, d);
  for (auto _ : state) benchmark::DoNotOptimize(g.next());
}
BENCHMARK_CAPTURE(BM_SkewedOffset, zipf_1_2, Distribution{DistKind::Zipf, 1.2});
BENCHMARK_CAPTURE(BM_SkewedOffset, zipf_0_8, Distribution{DistKind::Zipf, 0.8});
BENCHMARK_CAPTURE(BM_SkewedOffset, pareto_0_2, Distribution{DistKind::Pareto, 0.2});
BENCHMARK_CAPTURE(BM_SkewedOffset, normal_5, Distribution{DistKind::Normal, 5});

void BM_ClockRead(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(now_ns());
}
BENCHMARK(BM_ClockRead);

// `ioacct stat`'s reader, per completion: one 100 ms round of the busy
// union and the depth distribution at 200k completions a second from two
// CPUs at depth 32 (each CPU's completions in time order, the two logs one
// after the other, as the reader appends them).
void BM_BusyRoundPerSpan(benchmark::State& state) {
  constexpr uint64_t kFrom = 1'000'000'000, kRound = 100'000'000;
  BusyRoundInput in;
  in.from = kFrom;
  in.to = kFrom + kRound;
  Rng rng(7);
  for (int cpu = 0; cpu < 2; ++cpu) {
    uint64_t t = kFrom;
    for (int i = 0; i < 10'000; ++i) {
      t += 5'000 + rng.below(10'000);  // 100k a second per CPU
      const uint64_t lat = 100'000 + rng.below(120'000);  // ~32 in flight at 200k a second
      in.certain.push_back({t > lat ? t - lat : 0, t});
    }
  }
  for (auto _ : state) benchmark::DoNotOptimize(busy_round(in).busy_ns);
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * in.certain.size()));
}
BENCHMARK(BM_BusyRoundPerSpan);

}  // namespace
}  // namespace ioacct

BENCHMARK_MAIN();
