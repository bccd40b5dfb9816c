// Offset generators (src/workload/offsets.hpp): alignment, range, determinism,
// uniformity of random offsets, and wrap-around of sequential ones.
#include "common/offsets.hpp"
#include "common/random_map.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <limits>
#include <vector>

namespace ioacct {
namespace {

constexpr uint64_t kMaxU64 = std::numeric_limits<uint64_t>::max();

// Pearson's chi-square statistic of observed counts against a uniform expectation.
double chi_square(const std::vector<uint64_t>& counts, uint64_t draws) {
  const double expected = static_cast<double>(draws) / static_cast<double>(counts.size());
  double chi2 = 0;
  for (uint64_t c : counts) {
    const double d = static_cast<double>(c) - expected;
    chi2 += d * d / expected;
  }
  return chi2;
}

// ------------------------------------------------------------------------ Rng

TEST(Rng, IsSplitMix64) {
  // Reference outputs of SplitMix64 (Steele, Lea, Flood 2014) seeded with 0.
  Rng r(0);
  EXPECT_EQ(r.next(), 0xe220a8397b1dcdafull);
  EXPECT_EQ(r.next(), 0x6e789e6aa1b965f4ull);
  EXPECT_EQ(r.next(), 0x06c45d188009454full);
}

TEST(Rng, SameSeedSameSequenceDifferentSeedDifferent) {
  Rng a(42), b(42), c(43);
  int differ = 0;
  for (int i = 0; i < 1000; ++i) {
    const uint64_t x = a.next();
    EXPECT_EQ(x, b.next());
    differ += x != c.next();
  }
  EXPECT_EQ(differ, 1000);
}

TEST(Rng, BelowIsAlwaysBelowN) {
  Rng r(7);
  for (uint64_t n : {uint64_t{1}, uint64_t{2}, uint64_t{3}, uint64_t{7}, uint64_t{1000}, uint64_t{4096},
                     (uint64_t{1} << 32) + 1, uint64_t{1} << 63, kMaxU64 - 1, kMaxU64}) {
    for (int i = 0; i < 20'000; ++i) ASSERT_LT(r.below(n), n) << "n=" << n;
  }
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(r.below(1), 0u);
}

TEST(Rng, BelowIsUniformForANonPowerOfTwo) {
  Rng r(11);
  constexpr uint64_t kN = 10, kDraws = 200'000;
  std::vector<uint64_t> counts(kN);
  for (uint64_t i = 0; i < kDraws; ++i) ++counts[r.below(kN)];
  // 9 degrees of freedom; p = 0.001 critical value is 27.88.
  EXPECT_LT(chi_square(counts, kDraws), 27.88);
}

TEST(Rng, BelowReachesTheWholeRangeOfALargeN) {
  // With n = 2^40 the top and bottom of the range must both be reached, and
  // the mean must sit in the middle (a truncation bug would skew it).
  Rng r(13);
  const uint64_t n = uint64_t{1} << 40;
  uint64_t lo = kMaxU64, hi = 0;
  long double sum = 0;
  constexpr int kDraws = 100'000;
  for (int i = 0; i < kDraws; ++i) {
    const uint64_t v = r.below(n);
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
  }
  EXPECT_LT(lo, n / 1000);
  EXPECT_GT(hi, n - n / 1000);
  EXPECT_NEAR(static_cast<double>(sum / kDraws) / static_cast<double>(n), 0.5, 0.01);
}

// ------------------------------------------------------------- OffsetGen: random

TEST(OffsetGenRandom, AlignedToBsFromBaseAndInsideTheRange) {
  struct Case { uint64_t base, range, bs; };
  const Case cases[] = {
      {0, 1 << 20, 4096},
      {12'345, 1000 * 4096 + 100, 4096},  // unaligned base, range with a partial last block
      {1 << 20, 512 * 7, 512},
      {uint64_t{1} << 40, uint64_t{1} << 36, 1 << 20},
      {7, 3 * 1000, 1000},
      {4096, 4096, 4096},  // one block
  };
  for (const auto& c : cases) {
    OffsetGen g(c.base, c.range, c.bs, /*random=*/true, /*seed=*/1);
    EXPECT_EQ(g.blocks(), c.range / c.bs);
    for (int i = 0; i < 20'000; ++i) {
      const uint64_t off = g.next();
      ASSERT_GE(off, c.base) << "base=" << c.base;
      ASSERT_LT(off, c.base + c.range) << "base=" << c.base;
      ASSERT_LE(off + c.bs, c.base + c.range) << "a whole block must fit, base=" << c.base;
      ASSERT_EQ((off - c.base) % c.bs, 0u) << "base=" << c.base << " off=" << off;
    }
  }
}

TEST(OffsetGenRandom, SingleBlockIsAlwaysBase) {
  OffsetGen g(8192, 4096 + 4095, 4096, true, 99);
  EXPECT_EQ(g.blocks(), 1u);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(g.next(), 8192u);
}

TEST(OffsetGenRandom, SameSeedSameSequenceDifferentSeedDifferent) {
  OffsetGen a(0, 1ull << 30, 4096, true, 1234), b(0, 1ull << 30, 4096, true, 1234),
      c(0, 1ull << 30, 4096, true, 1235);
  std::vector<uint64_t> sa, sb, sc;
  for (int i = 0; i < 1000; ++i) {
    sa.push_back(a.next());
    sb.push_back(b.next());
    sc.push_back(c.next());
  }
  EXPECT_EQ(sa, sb);
  EXPECT_NE(sa, sc);
  // Not merely shifted or mostly equal: 262144 blocks, so matches are rare.
  int same = 0;
  for (size_t i = 0; i < sa.size(); ++i) same += sa[i] == sc[i];
  EXPECT_LT(same, 10);
}

TEST(OffsetGenRandom, RandomIsNotSequential) {
  OffsetGen g(0, 1ull << 30, 4096, true, 5);
  int ascending_by_one_block = 0;
  uint64_t prev = g.next();
  for (int i = 0; i < 1000; ++i) {
    const uint64_t off = g.next();
    ascending_by_one_block += off == prev + 4096;
    prev = off;
  }
  EXPECT_LT(ascending_by_one_block, 10);
}

TEST(OffsetGenRandom, EveryBlockEquallyLikely) {
  constexpr uint64_t kBs = 4096, kBlocks = 64, kDraws = 640'000, kBase = 1 << 20;
  OffsetGen g(kBase, kBlocks * kBs, kBs, true, 20240601);
  std::vector<uint64_t> counts(kBlocks);
  for (uint64_t i = 0; i < kDraws; ++i) {
    const uint64_t off = g.next();
    ASSERT_EQ((off - kBase) % kBs, 0u);
    const uint64_t block = (off - kBase) / kBs;
    ASSERT_LT(block, kBlocks);
    ++counts[block];
  }
  for (uint64_t c : counts) EXPECT_GT(c, 0u);
  // 63 degrees of freedom; p = 0.001 critical value is about 103.4.
  EXPECT_LT(chi_square(counts, kDraws), 103.4);
}

TEST(OffsetGenRandom, UniformForANonPowerOfTwoBlockCount) {
  constexpr uint64_t kBs = 512, kBlocks = 100, kDraws = 500'000;
  OffsetGen g(0, kBlocks * kBs + 17, kBs, true, 31337);
  std::vector<uint64_t> counts(kBlocks);
  for (uint64_t i = 0; i < kDraws; ++i) ++counts[g.next() / kBs];
  // 99 degrees of freedom; p = 0.001 critical value is about 148.2.
  EXPECT_LT(chi_square(counts, kDraws), 148.2);
}

// --------------------------------------------------------- OffsetGen: sequential

TEST(OffsetGenSequential, BlockAfterBlockThenWrapsToBase) {
  constexpr uint64_t kBase = 12'288, kBs = 4096, kBlocks = 10;
  OffsetGen g(kBase, kBlocks * kBs, kBs, /*random=*/false, /*seed=*/1);
  EXPECT_EQ(g.blocks(), kBlocks);
  for (int lap = 0; lap < 3; ++lap)
    for (uint64_t k = 0; k < kBlocks; ++k) ASSERT_EQ(g.next(), kBase + k * kBs) << "lap " << lap;
}

TEST(OffsetGenSequential, PartialLastBlockIsNeverUsed) {
  // Range of 3.5 blocks: offsets 0, bs, 2bs, then back to 0.
  OffsetGen g(0, 3 * 4096 + 2048, 4096, false, 1);
  EXPECT_EQ(g.blocks(), 3u);
  const uint64_t want[] = {0, 4096, 8192, 0, 4096, 8192, 0};
  for (uint64_t w : want) EXPECT_EQ(g.next(), w);
}

TEST(OffsetGenSequential, SeedDoesNotMatter) {
  OffsetGen a(0, 64 * 512, 512, false, 1), b(0, 64 * 512, 512, false, 999);
  for (int i = 0; i < 200; ++i) EXPECT_EQ(a.next(), b.next());
}

TEST(OffsetGenSequential, StartBlockIsHonouredAndWraps) {
  constexpr uint64_t kBase = 1 << 20, kBs = 512, kBlocks = 8;
  OffsetGen g(kBase, kBlocks * kBs, kBs, false, 1, /*start_block=*/5);
  const uint64_t want_blocks[] = {5, 6, 7, 0, 1, 2, 3, 4, 5, 6, 7, 0};
  for (uint64_t b : want_blocks) EXPECT_EQ(g.next(), kBase + b * kBs);
}

TEST(OffsetGenSequential, StartBlockBeyondTheRangeWrapsModuloBlocks) {
  constexpr uint64_t kBs = 4096, kBlocks = 8;
  OffsetGen g(0, kBlocks * kBs, kBs, false, 1, /*start_block=*/kBlocks + 3);
  EXPECT_EQ(g.next(), 3 * kBs);
  EXPECT_EQ(g.next(), 4 * kBs);
  OffsetGen h(0, kBlocks * kBs, kBs, false, 1, /*start_block=*/kBlocks);
  EXPECT_EQ(h.next(), 0u);
  OffsetGen last(0, kBlocks * kBs, kBs, false, 1, /*start_block=*/kBlocks - 1);
  EXPECT_EQ(last.next(), (kBlocks - 1) * kBs);
  EXPECT_EQ(last.next(), 0u);
}

TEST(OffsetGenSequential, OneBlockAlwaysYieldsBase) {
  OffsetGen g(4096, 4096, 4096, false, 1, 7);
  for (int i = 0; i < 10; ++i) EXPECT_EQ(g.next(), 4096u);
}

// fio's random map (--bssplit's random I/O): each block once per pass, a
// visited block passed over to the next unvisited one, an I/O cut short at
// a visited block or the end, and a new pass once all are visited.
TEST(RandomMap, EachBlockOncePerPassAndIosCutShortAtVisitedBlocks) {
  using Taken = std::pair<uint64_t, uint64_t>;
  RandomMap m(130);  // three words, the last partly used
  EXPECT_EQ(m.take(10, 4), (Taken{10, 4}));
  EXPECT_EQ(m.take(8, 4), (Taken{8, 2})) << "cut short at block 10, visited";
  EXPECT_EQ(m.take(11, 1), (Taken{14, 1})) << "the next unvisited block";
  EXPECT_EQ(m.take(128, 16), (Taken{128, 2})) << "cut short at the end";
  EXPECT_EQ(m.take(129, 1), (Taken{0, 1})) << "wraps to the first unvisited block";
  EXPECT_EQ(m.used(), 10u);
  std::vector<int> seen(130, 0);
  for (uint64_t b : {10, 11, 12, 13, 8, 9, 14, 128, 129, 0}) seen[b] = 1;
  Rng rng(7);
  uint64_t total = 10;
  while (total < 130) {
    const auto [b, n] = m.take(rng.below(130), 1 + rng.below(8));
    ASSERT_GE(n, 1u);
    for (uint64_t i = b; i < b + n; ++i) EXPECT_EQ(seen[i]++, 0) << "block " << i << " twice in one pass";
    total += n;
  }
  EXPECT_EQ(m.take(5, 3), (Taken{5, 3})) << "a new pass";
  EXPECT_EQ(m.used(), 3u);
}

}  // namespace
}  // namespace ioacct
