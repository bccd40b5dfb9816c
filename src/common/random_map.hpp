#pragma once
// fio's random map, for random I/O of mixed sizes (--bssplit): each block of
// the grid is visited once per pass. A draw that lands on a visited block
// takes the next unvisited one after it (wrapping), and the I/O is cut short
// where it would reach a visited block or the range's end; when every block
// has been visited, a new pass begins. fio does the same (its axmap), which
// is why its large sizes come out smaller as a pass fills: the sizes a job
// moves are the map's, not the split's alone. Header-only: one call per I/O.
#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace ioacct {

class RandomMap {
 public:
  explicit RandomMap(uint64_t blocks) : blocks_(blocks), bits_((blocks + 63) / 64, 0) {}

  // From block `b` (< blocks), or the first unvisited one after it: the
  // block the I/O starts at and how many blocks, at most `want` (>= 1), it
  // may take; marks them visited.
  std::pair<uint64_t, uint64_t> take(uint64_t b, uint64_t want) noexcept {
    if (used_ == blocks_) {  // the pass is done: a new one
      std::fill(bits_.begin(), bits_.end(), 0);
      used_ = 0;
    }
    if (visited(b)) b = next_free(b);
    uint64_t n = 0;
    while (n < want && b + n < blocks_ && !visited(b + n)) {
      bits_[(b + n) / 64] |= 1ull << ((b + n) % 64);
      ++n;
    }
    used_ += n;
    return {b, n};
  }
  uint64_t used() const noexcept { return used_; }

 private:
  bool visited(uint64_t b) const noexcept { return bits_[b / 64] >> (b % 64) & 1; }
  // The first unvisited block after `b`, wrapping; one exists (used_ < blocks_).
  uint64_t next_free(uint64_t b) const noexcept {
    for (uint64_t w = b / 64, i = 0; i <= bits_.size(); ++i, w = w + 1 == bits_.size() ? 0 : w + 1) {
      uint64_t free = ~bits_[w];
      if (i == 0) free &= ~0ull << (b % 64);  // at or after b in its word
      if (w == bits_.size() - 1 && blocks_ % 64) free &= (1ull << (blocks_ % 64)) - 1;
      if (free) return w * 64 + static_cast<uint64_t>(std::countr_zero(free));
    }
    return b;  // not reached
  }

  uint64_t blocks_;
  std::vector<uint64_t> bits_;
  uint64_t used_ = 0;
};

}  // namespace ioacct
