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
// `start_block`, wrapping around to the first at the end of the range.
// With `stride` > 1 only blocks b with b % stride == phase are used: threads
// sharing a target with --verify each own such a slice.
// Precondition: range >= bs * (phase + 1) (open_targets refuses smaller ranges).
class OffsetGen {
 public:
  OffsetGen(uint64_t base, uint64_t range, uint64_t bs, bool random, uint64_t seed,
            uint64_t start_block = 0, uint64_t stride = 1, uint64_t phase = 0) noexcept
      : base_(base + phase * bs),
        step_(bs * stride),
        blocks_((range / bs - phase + stride - 1) / stride),
        random_(random),
        next_(blocks_ ? start_block % blocks_ : 0),
        rng_(seed) {}

  uint64_t next() noexcept {
    if (random_) return base_ + rng_.below(blocks_) * step_;
    const uint64_t off = base_ + next_ * step_;
    if (++next_ == blocks_) next_ = 0;
    return off;
  }
  uint64_t blocks() const noexcept { return blocks_; }

 private:
  uint64_t base_, step_, blocks_;
  bool random_;
  uint64_t next_;
  Rng rng_;
};

}  // namespace ioacct
