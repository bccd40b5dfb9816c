// Microbenchmarks of what runs once per I/O on the hot path. Run:
//   build/release/ioacct_microbench
#include <benchmark/benchmark.h>

#include "acct/clock.hpp"
#include "acct/histogram.hpp"
#include "common/offsets.hpp"

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

}  // namespace
}  // namespace ioacct

BENCHMARK_MAIN();
