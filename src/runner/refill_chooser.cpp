#include "runner/refill_chooser.hpp"

#include <algorithm>

namespace ioacct {

void RefillChooser::start(Nanos now, uint64_t ios) noexcept {
  started_ = true;
  last_ = now;
  hold_ns_ = c_.hold_min_ns;
  // Reserved here, so that a probe's end allocates nothing on the hot path.
  rates_.reserve(4 * c_.pairs);
  pairs_.reserve(2 * c_.pairs);
  stats_.ratios.reserve(kMaxKept);
  begin_probe(now, ios);
}

void RefillChooser::begin_probe(Nanos now, uint64_t ios) noexcept {
  probing_ = true;
  extended_ = false;
  slice_ = 0;
  rates_.clear();
  mode_ = slice_mode(0);
  slice_start_ = now;
  slice_ios_ = ios;
  next_event_ = now + c_.slice_ns;
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

// The Each/Pass ratio of the pair that starts at slice `k` (even). Slices
// run pass, each, each, pass: pair j is (2j, 2j+1), and which of the two is
// Pass alternates.
double pair_ratio(const std::vector<double>& rates, size_t k) {
  const bool pass_first = k % 4 == 0;
  const double pass = pass_first ? rates[k] : rates[k + 1];
  const double each = pass_first ? rates[k + 1] : rates[k];
  return pass > 0 ? each / pass : 0;
}

// Each pair's ratio into `r`, sorted.
void sorted_pair_ratios(const std::vector<double>& rates, std::vector<double>& r) {
  r.clear();
  for (size_t k = 0; k + 1 < rates.size(); k += 2) r.push_back(pair_ratio(rates, k));
  std::sort(r.begin(), r.end());
}

// How many of the sorted pairs are above `x`.
size_t above(const std::vector<double>& r, double x) {
  return static_cast<size_t>(r.end() - std::upper_bound(r.begin(), r.end(), x));
}

double median(const std::vector<double>& r) {
  if (r.empty()) return 0;
  const size_t n = r.size();
  return n % 2 ? r[n / 2] : (r[n / 2 - 1] + r[n / 2]) / 2;
}

// The first two pairs (slices 0-3, in the order they ran) both under
// `clear_loss`: Each is far behind.
bool clear_loss(const std::vector<double>& rates, const RefillChooser::Config& c) {
  return rates.size() >= 4 && pair_ratio(rates, 0) < c.clear_loss && pair_ratio(rates, 2) < c.clear_loss;
}

// On sorted pairs.
RefillChooser::Verdict verdict(const std::vector<double>& r, const RefillChooser::Config& c, bool extended) {
  using V = RefillChooser::Verdict;
  if (r.empty()) return V::Pass;
  const size_t n = r.size();
  if (extended) return median(r) > c.margin_again && 4 * above(r, 1.0) >= 3 * n ? V::Each : V::Pass;
  if (4 * above(r, c.margin) >= 3 * n) return V::Each;
  return median(r) > 1.0 ? V::Unsure : V::Pass;
}

}  // namespace

RefillChooser::Verdict RefillChooser::probe_verdict(const std::vector<double>& rates, const Config& c, bool extended) {
  if (!extended && clear_loss(rates, c)) return Verdict::Pass;
  std::vector<double> r;
  sorted_pair_ratios(rates, r);
  return verdict(r, c, extended);
}

double RefillChooser::probe_ratio(const std::vector<double>& rates) {
  std::vector<double> r;
  sorted_pair_ratios(rates, r);
  return median(r);
}

Refill RefillChooser::step(Nanos now, uint64_t ios) noexcept {
  if (!started_) return mode_;
  account(now);
  if (!probing_) {  // a hold ended: probe again
    begin_probe(now, ios);
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
  const unsigned slices = (extended_ ? 4 : 2) * c_.pairs;
  ++slice_;
  const bool cut = !extended_ && slice_ == 4 && slice_ < slices && clear_loss(rates_, c_);
  if (slice_ < slices && !cut) {
    mode_ = slice_mode(slice_);
    next_event_ = now + c_.slice_ns;
    return mode_;
  }
  sorted_pair_ratios(rates_, pairs_);  // into the reserved buffer: no allocation here
  const Verdict v = cut ? Verdict::Pass : verdict(pairs_, c_, extended_);
  if (v == Verdict::Unsure) {  // as many pairs again; the slices' order runs on
    extended_ = true;
    mode_ = slice_mode(slice_);
    next_event_ = now + c_.slice_ns;
    return mode_;
  }
  if (cut) ++stats_.cut_short;
  return decide(now, ios, v);
}

// The probe's end: the choice, held for a while. Each found faster while
// Pass is held is only the question: a second probe, at once, answers it.
Refill RefillChooser::decide(Nanos now, uint64_t ios, Verdict v) noexcept {
  const double ratio = median(pairs_);
  const Refill chose = v == Verdict::Each ? Refill::Each : Refill::Pass;
  ++stats_.probes;
  if (chose == Refill::Each) ++stats_.chose_each;
  if (extended_) ++stats_.extended;
  stats_.last_ratio = ratio;
  if (stats_.ratios.size() < kMaxKept) stats_.ratios.push_back(ratio);
  if (chose == Refill::Each && chosen_ == Refill::Pass && !confirming_) {
    confirming_ = true;
    begin_probe(now, ios);
    return mode_;
  }
  const bool unconfirmed = confirming_ && chose == Refill::Pass;
  if (unconfirmed) ++stats_.unconfirmed;
  confirming_ = false;
  // Probes that agree are spaced out; one that changes the choice, or two
  // that disagreed on it, bring the next one close again.
  const bool agree = stats_.probes > 1 && chose == chosen_ && !unconfirmed;
  hold_ns_ = agree ? std::min(hold_ns_ * 2, c_.hold_max_ns) : c_.hold_min_ns;
  chosen_ = mode_ = chose;
  probing_ = false;
  rates_.clear();
  next_event_ = now + hold_ns_;
  return mode_;
}

}  // namespace ioacct
