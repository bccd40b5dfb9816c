#pragma once
// Offset generators. Header-only: they run once per I/O on the hot path.
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

// Yields offsets of `bs`-sized blocks inside [base, base + range).
// Random: every block equally likely. Sequential: block after block from
// `start`, wrapping around to base at the end of the range.
// Precondition: range >= bs (open_targets refuses smaller ranges).
class OffsetGen {
 public:
  OffsetGen(uint64_t base, uint64_t range, uint64_t bs, bool random, uint64_t seed,
            uint64_t start_block = 0) noexcept
      : base_(base), bs_(bs), blocks_(range / bs), random_(random), next_(start_block % (blocks_ ? blocks_ : 1)), rng_(seed) {}

  uint64_t next() noexcept {
    if (random_) return base_ + rng_.below(blocks_) * bs_;
    const uint64_t off = base_ + next_ * bs_;
    if (++next_ == blocks_) next_ = 0;
    return off;
  }
  uint64_t blocks() const noexcept { return blocks_; }

 private:
  uint64_t base_, bs_, blocks_;
  bool random_;
  uint64_t next_;
  Rng rng_;
};

}  // namespace ioacct
