#pragma once
// The one pseudo-random generator: offsets, fill data, fault rolls. Header-only:
// it runs once per I/O on the hot path.
#include <cstdint>

namespace ioacct {

// SplitMix64: tiny, fast, passes BigCrush; good enough for choosing offsets
// and for incompressible fill data. Deterministic for a given seed.
class Rng {
 public:
  explicit Rng(uint64_t seed) noexcept : s_(seed) {}
  uint64_t next() noexcept {
    uint64_t z = (s_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [0, n) without a division (Lemire's multiply-shift); the bias
  // is below n / 2^64, far under anything a benchmark can see.
  uint64_t below(uint64_t n) noexcept {
    return static_cast<uint64_t>((static_cast<unsigned __int128>(next()) * n) >> 64);
  }

 private:
  uint64_t s_;
};

}  // namespace ioacct
