#pragma once
// Log-linear latency histogram (HDR-style) with fixed memory.
//
// Values below 2^kSubBits are counted exactly. Above, every power of two
// [2^e, 2^(e+1)) is split into 2^kSubBits equal buckets, so a bucket's width
// is at most 1/128 of its lower bound: reporting a bucket's midpoint is off by
// at most 0.4% of the true value, well inside the 1% we promise. Memory is
// fixed (kBuckets counters, ~60 KiB) however many samples are recorded, and no
// sample is ever dropped: the range covers all of uint64_t.
//
// Not thread-safe: each worker thread owns one and they are merged at the end.
#include <array>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace ioacct {

class Histogram {
 public:
  static constexpr int kSubBits = 7;
  static constexpr uint64_t kSub = uint64_t{1} << kSubBits;       // 128
  static constexpr size_t kBuckets = (64 - kSubBits + 1) * kSub;  // 7424

  // Hot path: a handful of instructions, no branch on the common path but one.
  void record(uint64_t v) noexcept { record_n(v, 1); }
  void record_n(uint64_t v, uint64_t n) noexcept {
    counts_[index(v)] += n;
    count_ += n;
    sum_ += static_cast<unsigned __int128>(v) * n;
    sumsq_ += static_cast<unsigned __int128>(v) * v * n;
    if (v < min_) min_ = v;
    if (v > max_) max_ = v;
  }

  void merge(const Histogram& o) noexcept;
  void reset() noexcept { *this = Histogram{}; }

  uint64_t count() const noexcept { return count_; }
  uint64_t min() const noexcept { return count_ ? min_ : 0; }
  uint64_t max() const noexcept { return max_; }
  double mean() const noexcept;
  // Population standard deviation (fio's stdev), from the exact sums of the
  // values and of their squares; 0 for fewer than two samples. The squares
  // are exact while every value is below 2^42 ns (73 minutes) and there are
  // fewer than 2^44 of them; beyond, it comes from the buckets (within 0.4%).
  double stdev() const noexcept;
  // Value at quantile q in [0,1]: the sample of rank ceil(q*count) (nearest
  // rank), reported as its bucket's midpoint clamped to [min, max]; ranks 1
  // and count are the exact min and max. 0 if empty.
  uint64_t quantile(double q) const noexcept;

  // Non-empty buckets as (lower bound, upper bound inclusive, count), for JSON.
  struct Bucket { uint64_t lo, hi, count; };
  std::vector<Bucket> buckets() const;

  // A histogram read back from a report: each bucket's count at its lower
  // bound's index, and the exact min and max beside them, so that quantile()
  // gives what the histogram that wrote them gave. The sums come from the
  // printed mean and stdev (a double each), so mean() and stdev() of a merge
  // of restored histograms are exact to a double's rounding, not to the ns.
  // Buckets whose bounds are not this layout's are refused: false, and
  // `out` is left as it was.
  static bool restore(const std::vector<Bucket>& buckets, uint64_t min, uint64_t max, double mean, double stdev,
                      Histogram& out);

  static constexpr size_t index(uint64_t v) noexcept {
    if (v < kSub) return static_cast<size_t>(v);
    const int e = 63 - std::countl_zero(v);  // e >= kSubBits
    const uint64_t sub = (v >> (e - kSubBits)) & (kSub - 1);
    return static_cast<size_t>((e - kSubBits + 1) * kSub + sub);
  }
  static constexpr uint64_t lower_bound(size_t i) noexcept {
    if (i < kSub) return i;
    const int e = static_cast<int>(i / kSub) + kSubBits - 1;
    return (uint64_t{1} << e) + ((i % kSub) << (e - kSubBits));
  }
  static constexpr uint64_t upper_bound(size_t i) noexcept {  // inclusive
    if (i < kSub) return i;
    const int e = static_cast<int>(i / kSub) + kSubBits - 1;
    return lower_bound(i) + (uint64_t{1} << (e - kSubBits)) - 1;
  }

 private:
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0;
  unsigned __int128 sum_ = 0;
  unsigned __int128 sumsq_ = 0;
  uint64_t min_ = UINT64_MAX;
  uint64_t max_ = 0;
};

}  // namespace ioacct
