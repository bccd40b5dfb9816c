#include "runner/refill_chooser.hpp"

#include <algorithm>

namespace ioacct {

void RefillChooser::start(Nanos now, uint64_t ios) noexcept {
  started_ = probing_ = true;
  slice_ = 0;
  mode_ = slice_mode(0);
  slice_start_ = last_ = now;
  slice_ios_ = ios;
  next_event_ = now + c_.slice_ns;
  hold_ns_ = c_.hold_min_ns;
  // Reserved here, so that a probe's end allocates nothing on the hot path.
  rates_.reserve(2 * c_.pairs);
  stats_.ratios.reserve(kMaxKept);
}

void RefillChooser::account(Nanos now) noexcept {
  if (now <= last_) return;
  (mode_ == Refill::Each ? stats_.each_ns : stats_.pass_ns) += now - last_;
  last_ = now;
}

void RefillChooser::finish(Nanos now) noexcept {
  if (started_) account(now);
  next_event_ = UINT64_MAX;
}

namespace {

// Each pair's Each/Pass ratio. Slices run pass, each, each, pass: pair j is
// (2j, 2j+1), and which of the two is Pass alternates.
std::vector<double> pair_ratios(const std::vector<double>& rates) {
  std::vector<double> r;
  for (size_t k = 0; k + 1 < rates.size(); k += 2) {
    const bool pass_first = k % 4 == 0;
    const double pass = pass_first ? rates[k] : rates[k + 1];
    const double each = pass_first ? rates[k + 1] : rates[k];
    r.push_back(pass > 0 ? each / pass : 0);
  }
  return r;
}

}  // namespace

bool RefillChooser::probe_chooses_each(const std::vector<double>& rates, double margin) {
  const std::vector<double> r = pair_ratios(rates);
  size_t faster = 0;
  for (double x : r) faster += x > margin;
  return !r.empty() && 4 * faster >= 3 * r.size();
}

double RefillChooser::probe_ratio(const std::vector<double>& rates) {
  std::vector<double> r = pair_ratios(rates);
  if (r.empty()) return 0;
  std::sort(r.begin(), r.end());
  const size_t n = r.size();
  return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

Refill RefillChooser::step(Nanos now, uint64_t ios) noexcept {
  if (!started_) return mode_;
  account(now);
  if (!probing_) {  // a hold ended: probe again
    probing_ = true;
    slice_ = 0;
    rates_.clear();
    mode_ = slice_mode(0);
    slice_start_ = now;
    slice_ios_ = ios;
    next_event_ = now + c_.slice_ns;
    return mode_;
  }
  // A slice ended, unless it has too few completions to measure a rate:
  // then it runs on, looked at again a millisecond later, up to ten times
  // its length (a slow disk's probe takes 2 s, not minutes).
  if (ios - slice_ios_ < c_.slice_ios && now - slice_start_ < 10 * c_.slice_ns) {
    next_event_ = now + 1'000'000;
    return mode_;
  }
  // Its rate, then the next slice or the decision.
  const double secs = static_cast<double>(now - slice_start_) / 1e9;
  rates_.push_back(secs > 0 ? static_cast<double>(ios - slice_ios_) / secs : 0);
  slice_start_ = now;
  slice_ios_ = ios;
  if (++slice_ < 2 * c_.pairs) {
    mode_ = slice_mode(slice_);
    next_event_ = now + c_.slice_ns;
    return mode_;
  }
  const double ratio = probe_ratio(rates_);
  const Refill chose = probe_chooses_each(rates_, c_.margin) ? Refill::Each : Refill::Pass;
  ++stats_.probes;
  if (chose == Refill::Each) ++stats_.chose_each;
  stats_.last_ratio = ratio;
  if (stats_.ratios.size() < kMaxKept) stats_.ratios.push_back(ratio);
  // Probes that agree are spaced out; one that changes the choice brings
  // the next one close again.
  hold_ns_ = stats_.probes > 1 && chose == chosen_ ? std::min(hold_ns_ * 2, c_.hold_max_ns) : c_.hold_min_ns;
  chosen_ = mode_ = chose;
  probing_ = false;
  rates_.clear();
  next_event_ = now + hold_ns_;
  return mode_;
}

}  // namespace ioacct
