#include "compare/verdict.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

namespace ioacct {
namespace {

// The smallest equal sample size that gives an interval at `level` at all.
unsigned smallest_repeat(double level) {
  for (unsigned n = 2; n < kMaxRepeat; ++n)
    if (shift_rank(n, n, level).k) return n;
  return kMaxRepeat;
}

std::string pct(double level) { return fmt::format("{:g}%", 100 * level); }

VerdictKind kind_of(const RatioInterval& r, const VerdictRule& rule) {
  const double top = 1 + rule.margin, bottom = 1 / top;
  if (!r.low || !r.high) return VerdictKind::Unresolved;  // too few repetitions for an interval
  if (*r.low >= bottom && *r.high <= top) return VerdictKind::NoDifference;
  if (*r.low > 1) return VerdictKind::Faster;
  if (*r.high < 1) return VerdictKind::Slower;
  return VerdictKind::Unresolved;  // it holds 1 and reaches past the margin
}

}  // namespace

unsigned repeat_needed(double ratio, std::optional<double> sd, unsigned now, const VerdictRule& rule, bool* capped) {
  if (capped) *capped = false;
  const unsigned floor_n = std::max(smallest_repeat(rule.level), now + 1);
  if (!sd || *sd <= 0 || !(ratio > 0)) return std::min(floor_n, kMaxRepeat);
  const double d = std::fabs(std::log(ratio));
  const double target = std::max(d, std::log1p(rule.margin) - d);  // > 0: at least half the margin
  // The predicted half-width is z * sqrt(pi/3) * sd * sqrt(2/n): the
  // Hodges-Lehmann interval is sqrt(pi/3) times as wide as a normal-theory one
  // under normal errors (its asymptotic relative efficiency is 3/pi).
  const double z = -normal_quantile((1 - rule.level) / 2);
  const double k = z * std::sqrt(std::numbers::pi / 3) * *sd / target;
  const double n = std::ceil(2 * k * k);
  if (n > kMaxRepeat) {
    if (capped) *capped = true;
    return kMaxRepeat;
  }
  return std::min(std::max(static_cast<unsigned>(n), floor_n), kMaxRepeat);
}

Verdict decide(const std::vector<double>& x, const std::vector<double>& base, const VerdictRule& rule) {
  Verdict v;
  v.ratio = ratio_interval(x, base, rule.level);
  if (!v.ratio) {
    auto zero = [](const std::vector<double>& s) { return std::any_of(s.begin(), s.end(), [](double a) { return a == 0; }); };
    v.no_io = !x.empty() && !base.empty() && (zero(x) || zero(base));
    return v;
  }
  const RatioInterval& r = *v.ratio;
  v.kind = kind_of(r, rule);
  if (v.kind == VerdictKind::Unresolved) {
    // Robust, so that one wild repetition cannot ask for hundreds of
    // repetitions where a few do (as the pooled standard deviation let it).
    v.spread = robust_log_sd(x, base);
    v.repeat_needed = repeat_needed(r.estimate, v.spread, static_cast<unsigned>(std::min(x.size(), base.size())), rule, &v.capped);
  }
  // Both samples hold positive values here (ratio_interval checked).
  const double medians = *median(x) / *median(base);
  if ((r.estimate < 1 && medians > 1) || (r.estimate > 1 && medians < 1))
    v.reversal = Verdict::Reversal{medians, pair_count(x, base)};
  return v;
}

unsigned advice_reach(const VerdictRule& rule) {
  const MoreRuns& m = rule.more;
  if (m.saved()) return kSavedAdviceMax;
  if (!m.round_s || !(*m.round_s > 0)) return kMaxRepeat;
  const double horizon = std::max(kAdviceHorizonS, m.budget_s.value_or(0));
  return static_cast<unsigned>(std::clamp(std::floor(horizon / *m.round_s), 1.0, static_cast<double>(kMaxRepeat)));
}

bool out_of_reach(const Verdict& v, const VerdictRule& rule) {
  return v.kind == VerdictKind::Unresolved && (v.capped || v.repeat_needed > advice_reach(rule));
}

namespace {

// "about 40 s", "about 12 min", "more than 3.5 h": an estimate, said as one.
std::string approx(const char* word, double s) {
  if (s < 90) return fmt::format("{} {:.0f} s", word, s);
  if (s < 90 * 60) return fmt::format("{} {:.0f} min", word, s / 60);
  return fmt::format("{} {:.{}f} h", word, s / 3600, s < 10 * 3600 ? 1 : 0);
}

}  // namespace

std::string repeat_advice(const Verdict& v, const VerdictRule& rule) {
  if (v.kind != VerdictKind::Unresolved) return "";
  const unsigned n = v.repeat_needed;
  const MoreRuns& m = rule.more;
  const bool live = !m.saved();
  // A capped count is a lower bound, and so is its time.
  const std::string time = live && m.round_s ? approx(v.capped ? "more than" : "about", n * *m.round_s) : "";
  if (out_of_reach(v, rule)) {
    const std::string count = v.capped ? fmt::format("more than {}", kMaxRepeat) : fmt::format("about {}", n);
    const std::string spread = v.spread ? fmt::format(" at a run-to-run spread of {:.0f}%", 100 * std::expm1(*v.spread)) : "";
    return fmt::format("too noisy to resolve by repeating:{} it takes {} {} per variant{}; steadier runs (a longer "
                       "--runtime, an idle machine) take fewer",
                       spread, count, live ? "repetitions" : "saved runs", time.empty() ? "" : " (" + time + ")");
  }
  if (live) return fmt::format("run with --repeat {}{}", n, time.empty() ? "" : " (" + time + ")");
  const std::string files = fmt::format("NAME=RUN1.json,...,RUN{}.json", n);
  if (!m.saved_compare) return fmt::format("give {} saved runs of each variant, as {}", n, files);
  if (!m.saved_bench) return fmt::format("run the comparison again with --repeat {} and compare its file", n);
  return fmt::format("give {} saved runs of each variant (bench runs as {}; a comparison run again with --repeat {})", n, files,
                     n);
}

std::string repeat_advice_short(const Verdict& v, const VerdictRule& rule) {
  if (v.kind != VerdictKind::Unresolved || !v.repeat_needed) return "";
  if (out_of_reach(v, rule)) return "too noisy";
  if (!rule.more.saved()) return fmt::format("--repeat {}", v.repeat_needed);
  return fmt::format("{} runs", v.repeat_needed);
}

std::string reversal_text(const Verdict& v) {
  if (!v.reversal || !v.ratio) return "";
  const Verdict::Reversal& r = *v.reversal;
  const bool slower = v.ratio->estimate < 1;
  return fmt::format("the ratio of the medians is {}, but it ran {} in {} of the {} pairs of repetitions",
                     format_ratio(r.medians), slower ? "slower" : "faster", slower ? r.pairs.below : r.pairs.above,
                     r.pairs.pairs);
}

std::string verdict_word(VerdictKind k) {
  switch (k) {
    case VerdictKind::Baseline: return "baseline";
    case VerdictKind::Faster: return "faster";
    case VerdictKind::Slower: return "slower";
    case VerdictKind::NoDifference: return "no difference";
    case VerdictKind::Unresolved: return "not resolved";
    case VerdictKind::NotMeasured: break;
  }
  return "-";
}

std::string format_ratio(double r) {
  if (r >= 99.95) return fmt::format("{:.0f}x", r);
  if (r >= 9.995) return fmt::format("{:.1f}x", r);
  if (r >= 0.0995 || !(r > 0)) return fmt::format("{:.2f}x", r);
  // Small ratios keep two significant digits: 0.070x, 0.0012x.
  const int decimals = std::min(9, static_cast<int>(std::ceil(-std::log10(r))) + 1);
  return fmt::format("{:.{}f}x", r, decimals);
}

std::string format_ratio_range(double lo, double hi) {
  std::string a = format_ratio(lo);
  const std::string b = format_ratio(hi);
  if (a == b) return a;
  a.pop_back();  // one "x" for the pair
  return a + "-" + b;
}

std::string format_interval(const Verdict& v) {
  if (!v.ratio || !v.ratio->low) return "-";
  return format_ratio_range(*v.ratio->low, *v.ratio->high);
}

std::string verdict_text(const Verdict& v, const VerdictRule& rule) {
  if (v.no_io) return "no ratio: a repetition completed no I/O";
  if (v.kind == VerdictKind::NotMeasured || v.kind == VerdictKind::Baseline || !v.ratio) return verdict_word(v.kind);
  const RatioInterval& r = *v.ratio;
  const std::string est = format_ratio(r.estimate);
  const std::string ci = fmt::format("{} CI {}", pct(rule.level), format_interval(v));
  const std::string again = repeat_advice(v, rule);
  const std::string why = v.reversal ? "; " + reversal_text(v) : "";
  switch (v.kind) {
    case VerdictKind::Faster:
    case VerdictKind::Slower: return fmt::format("{} ({}, {}{})", verdict_word(v.kind), est, ci, why);
    case VerdictKind::NoDifference:
      return fmt::format("no difference ({}, {}, within ±{:g}%{})", est, ci, 100 * rule.margin, why);
    default: break;
  }
  if (!r.low)
    return fmt::format("not resolved: {} repetition{} against {} cannot give a {} interval ({}{}): {}", r.n,
                       r.n == 1 ? "" : "s", r.m, pct(rule.level), est, why, again);
  return fmt::format("not resolved at this noise ({}, {}{}): {}", est, ci, why, again);
}

}  // namespace ioacct
