#pragma once
// Offset generators. Header-only: they run once per I/O on the hot path.
#include <cstdint>

#include "common/distribution.hpp"
#include "common/rng.hpp"

namespace ioacct {

// Yields offsets of `bs`-sized blocks inside [base, base + range).
// Random: every block equally likely, or drawn from a skewed distribution
// (--random-distribution; the uniform path stays one multiply-shift and one
// predicted branch). Sequential: block after block from
// `start_block`, wrapping around to the first at the end of the range.
// With `stride` > 1 only blocks b with b % stride == phase are used: threads
// sharing a target with --verify each own such a slice.
// Precondition: range >= bs * (phase + 1) (open_targets refuses smaller ranges).
class OffsetGen {
 public:
  OffsetGen(uint64_t base, uint64_t range, uint64_t bs, bool random, uint64_t seed,
            uint64_t start_block = 0, uint64_t stride = 1, uint64_t phase = 0, const Distribution& dist = {})
      : base_(base + phase * bs),
        step_(bs * stride),
        blocks_((range / bs - phase + stride - 1) / stride),
        random_(random),
        skewed_(random && dist.kind != DistKind::Uniform),
        next_(blocks_ ? start_block % blocks_ : 0),
        rng_(seed) {
    if (skewed_) skew_ = SkewSampler(dist, blocks_, step_);
  }

  uint64_t next() noexcept {
    if (random_) {
      if (skewed_) [[unlikely]] return base_ + skew_.next(rng_) * step_;
      return base_ + rng_.below(blocks_) * step_;
    }
    const uint64_t off = base_ + next_ * step_;
    if (++next_ == blocks_) next_ = 0;
    return off;
  }
  uint64_t blocks() const noexcept { return blocks_; }
  // Sequential, with I/Os longer than one block (--bssplit): past `blocks`
  // more blocks, or back to the first.
  void skip(uint64_t blocks) noexcept {
    if (blocks_) next_ = (next_ + blocks) % blocks_;
  }
  void rewind() noexcept { next_ = 0; }

 private:
  uint64_t base_, step_, blocks_;
  bool random_, skewed_;
  uint64_t next_;
  Rng rng_;
  SkewSampler skew_;  // unused unless skewed_
};

}  // namespace ioacct
