#include "runner/depth_search.hpp"

#include <algorithm>

namespace ioacct {

DepthSearch::Step DepthSearch::window_end(uint64_t ios, uint64_t over) {
  if (ios == 0) return Step::Same;
  const double met = 100.0 * static_cast<double>(ios - std::min(over, ios)) / static_cast<double>(ios);
  return met >= pct_ ? hit() : miss();
}

DepthSearch::Step DepthSearch::hit() {
  const unsigned was = depth_;
  low_ = depth_;
  // Doubled until a depth has failed, then halfway up to it.
  depth_ = std::min(max_, high_ != max_ ? (depth_ + high_) / 2 : depth_ * 2);
  if (depth_ != was) return Step::Up;
  if (run_) {
    found_ = true;
    return Step::Same;
  }
  if (found_) return Step::Done;
  found_ = true;
  return Step::Found;
}

DepthSearch::Step DepthSearch::miss() {
  if (depth_ == 1) return Step::Failed;
  high_ = depth_;
  if (depth_ == low_) --low_;
  depth_ = (depth_ + low_) / 2;
  return Step::Down;
}

}  // namespace ioacct
