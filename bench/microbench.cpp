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

void BM_ClockRead(benchmark::State& state) {
  for (auto _ : state) benchmark::DoNotOptimize(now_ns());
}
BENCHMARK(BM_ClockRead);

}  // namespace
}  // namespace ioacct

BENCHMARK_MAIN();
