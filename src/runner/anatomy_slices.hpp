#pragma once
// bench --anatomy measures what its programs cost in IOPS within the run
// itself: over a time-based window the programs come off and back on in
// slices (on, off, on, off, ...), and each on slice's IOPS is set against
// the off slice's after it. Interleaved, so both sides see the same minute
// of a host whose speed drifts; the stages come from the on slices' I/Os.
// docs/design.md, "Anatomy of an I/O".
#include <optional>
#include <vector>

#include "acct/clock.hpp"
#include "trace/anatomy.hpp"

namespace ioacct {

// One slice: 1 s, so that a 10 s run (the default) has 5 pairs, and each
// slice holds enough I/Os at depth 1 on a slow disk (thousands) that its
// IOPS is not a handful of completions.
inline constexpr Nanos kAnatomySliceNs = 1'000'000'000;

struct AnatomySlice {
  bool on = true;     // the programs were attached
  uint64_t ios = 0;   // completed in it (every thread)
  uint64_t ns = 0;    // its length
};

// The median, least and greatest of on/off over the pairs (slice 2k, 2k+1);
// nullopt with fewer than `min_pairs` whole pairs.
std::optional<AnatomyResult::IopsRatio> slice_ratio(const std::vector<AnatomySlice>& slices, double slice_s,
                                                    unsigned min_pairs = 2);

// The supervisor's side: call step() at every wake-up with the run's
// completions so far; it closes a slice when one is due and turns the
// programs off or back on for the next. No slice starts that would end
// past `end`; the programs are on again for the rest of the run.
class AnatomySlicer {
 public:
  AnatomySlicer(Nanos start, Nanos end, Nanos slice) : next_(start), end_(end), slice_(slice) {}
  Nanos next_due() const { return done_ ? UINT64_MAX : next_; }
  void step(Nanos now, uint64_t ios, AnatomyTracer& tracer);
  void finish(AnatomyTracer& tracer);
  const std::vector<AnatomySlice>& slices() const { return slices_; }
  double slice_s() const { return static_cast<double>(slice_) / 1e9; }

 private:
  Nanos next_, end_, slice_;
  Nanos t_prev_ = 0;
  uint64_t ios_prev_ = 0;
  bool started_ = false, on_ = true, done_ = false;
  std::vector<AnatomySlice> slices_;
};

}  // namespace ioacct
