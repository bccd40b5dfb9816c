#include "acct/series.hpp"

namespace ioacct {

void Series::add(SeriesSample s) {
  if (seen_++ % keep_every_ != 0) return;
  samples_.push_back(s);
  if (samples_.size() < kMaxSamples) return;
  // Full: keep every other sample, and from now on every other interval.
  size_t w = 0;
  for (size_t r = 0; r < samples_.size(); r += 2) samples_[w++] = samples_[r];
  samples_.resize(w);
  keep_every_ *= 2;
}

}  // namespace ioacct
