#include "runner/anatomy_slices.hpp"

#include <algorithm>

namespace ioacct {

std::optional<AnatomyResult::IopsRatio> slice_ratio(const std::vector<AnatomySlice>& slices, double slice_s,
                                                    unsigned min_pairs) {
  std::vector<double> ratios;
  uint64_t on_ios = 0, all_ios = 0;
  for (size_t k = 0; k + 1 < slices.size(); k += 2) {
    const AnatomySlice& on = slices[k];
    const AnatomySlice& off = slices[k + 1];
    if (!on.on || off.on || !on.ns || !off.ns || !off.ios) continue;
    const double with = static_cast<double>(on.ios) / static_cast<double>(on.ns);
    const double without = static_cast<double>(off.ios) / static_cast<double>(off.ns);
    ratios.push_back(with / without);
    on_ios += on.ios;
    all_ios += on.ios + off.ios;
  }
  if (ratios.size() < std::max(1u, min_pairs)) return std::nullopt;
  std::sort(ratios.begin(), ratios.end());
  const size_t n = ratios.size();
  AnatomyResult::IopsRatio r;
  r.median = n % 2 ? ratios[n / 2] : (ratios[n / 2 - 1] + ratios[n / 2]) / 2;
  r.min = ratios.front();
  r.max = ratios.back();
  r.pairs = static_cast<unsigned>(n);
  r.slice_s = slice_s;
  r.on_share = all_ios ? static_cast<double>(on_ios) / static_cast<double>(all_ios) : 0;
  return r;
}

void AnatomySlicer::step(Nanos now, uint64_t ios, AnatomyTracer& tracer) {
  if (done_ || now < next_) return;
  if (!started_) {  // the window's opening: the first slice, programs on
    started_ = true;
    t_prev_ = now;
    ios_prev_ = ios;
    next_ = now + slice_;
    return;
  }
  slices_.push_back({.on = on_, .ios = ios - ios_prev_, .ns = now - t_prev_});
  t_prev_ = now;
  ios_prev_ = ios;
  if (now + slice_ > end_) {
    finish(tracer);
    return;
  }
  if (on_) {
    tracer.detach();
    on_ = false;
  } else if (tracer.reattach()) {
    on_ = true;
  } else {
    done_ = true;  // the kernel refused: off for the rest, and no more pairs
    return;
  }
  next_ = now + slice_;
}

void AnatomySlicer::finish(AnatomyTracer& tracer) {
  if (done_) return;
  done_ = true;
  if (!on_) on_ = tracer.reattach();
}

}  // namespace ioacct
