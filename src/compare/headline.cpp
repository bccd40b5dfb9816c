#include "compare/headline.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "compare/presets.hpp"
#include "compare/util_ratio.hpp"

namespace ioacct {
namespace {

const VariantSummary* find(const CompareResult& c, const std::string& name) {
  for (const auto& v : c.variants)
    if (v.name == name) return &v;
  return nullptr;
}

// a against b, and again without their outliers when either has any.
struct Verdicts {
  Verdict all;
  std::optional<Verdict> without;
};
Verdicts against(const VariantSummary& a, const VariantSummary& b, const VerdictRule& rule) {
  Verdicts v{decide(iops_of(a), iops_of(b), rule), std::nullopt};
  if (!a.outliers.empty() || !b.outliers.empty()) v.without = decide(iops_of(a, true), iops_of(b, true), rule);
  return v;
}

std::string claim(const std::string& subject, const std::string& object, const Verdicts& v, const VerdictRule& rule) {
  return claim(subject, object, v.all, rule, v.without ? &*v.without : nullptr);
}

// "NAME (DETAIL, 1.5x the CPU per I/O OF)": a subject with its price, when
// both measured it.
std::string priced(const std::string& name, const std::string& detail, const VariantSummary& a, const VariantSummary& b,
                   const std::string& of) {
  std::string in = detail;
  if (a.cpu_per_io_ns.s && b.cpu_per_io_ns.s && b.cpu_per_io_ns.s->median > 0)
    in += fmt::format("{}{} the CPU per I/O{}", in.empty() ? "" : ", ",
                      format_ratio(a.cpu_per_io_ns.s->median / b.cpu_per_io_ns.s->median), of);
  return in.empty() ? name : fmt::format("{} ({})", name, in);
}

std::string ci(const Verdict& v, const VerdictRule& rule) {
  return fmt::format("{:g}% CI {}", 100 * rule.level, format_interval(v));
}

std::string claim_of(const std::string& subject, const std::string& object, const Verdict& v, const VerdictRule& rule) {
  if (v.no_io) return fmt::format("{} against {} has no ratio: a repetition completed no I/O", subject, object);
  if (v.kind == VerdictKind::NotMeasured || !v.ratio) return fmt::format("{} against {} was not measured", subject, object);
  const std::string est = format_ratio(v.ratio->estimate);
  const std::string again = repeat_advice(v, rule);
  // Where the medians point the other way, the sentence says so, so that
  // no figure printed beside it seems to contradict it.
  const std::string why = v.reversal ? "; " + reversal_text(v) : "";
  switch (v.kind) {
    case VerdictKind::Faster:
    case VerdictKind::Slower:
      return fmt::format("{} completes {} the I/Os of {} ({}{})", subject, est, object, ci(v, rule), why);
    case VerdictKind::NoDifference:
      return fmt::format("{} completes as many I/Os as {} ({}, {}, within ±{:g}%{})", subject, object, est, ci(v, rule),
                         100 * rule.margin, why);
    default: break;
  }
  if (!v.ratio->low)
    return fmt::format("{} against {} is not resolved: {} repetition{} against {} cannot give a {:g}% interval ({}{}): {}",
                       subject, object, v.ratio->n, v.ratio->n == 1 ? "" : "s", v.ratio->m, 100 * rule.level, est, why,
                       again);
  return fmt::format("{} against {} is not resolved at this noise ({}, {}{}): {}", subject, object, est, ci(v, rule), why,
                     again);
}


// iowait against --no-iowait, and whether this machine lets it matter:
// iowait changes a CPU's speed only through cpufreq and cpuidle (acct/cpu_power.hpp).
std::string iowait(const CompareResult& c, const VariantSummary& noiow, const VariantSummary& sleep) {
  const Verdicts vs = against(noiow, sleep, c.rule);
  std::string s = claim("sleeping without iowait (--no-iowait)", "sleeping with it", vs, c.rule);
  if (!c.cpu_power || c.cpu_power->cpufreq || c.cpu_power->cpuidle) return s;
  const bool differs = vs.all.kind == VerdictKind::Faster || vs.all.kind == VerdictKind::Slower;
  const std::string why = "this machine has no cpufreq or cpuidle driver in sysfs, the paths by which iowait changes a "
                          "CPU's speed";
  return differs ? s + ", although " + why + ": the difference comes from elsewhere"
                 : s + "; " + why + ", so no difference is expected here";
}

std::string qd1(const CompareResult& c) {
  const VariantSummary *ps = find(c, "psync"), *sleep = find(c, "uring-sleep"), *spin = find(c, "uring-spin"),
                       *noiow = find(c, "uring-no-iowait");
  if (!ps || !sleep) return "";
  std::string s = "On this machine, at depth 1, " + claim("io_uring (sleep)", "pread", against(*sleep, *ps, c.rule), c.rule);
  if (spin) {
    s += "; " + claim(priced("busy-polling", "spin", *spin, *sleep, " of sleeping"), "pread", against(*spin, *ps, c.rule), c.rule);
  }
  if (noiow) s += "; " + iowait(c, *noiow, *sleep);
  return s + ".";
}

std::string sqpoll(const CompareResult& c) {
  const VariantSummary *q1 = find(c, "qd1"), *q1s = find(c, "qd1-sqpoll"), *q32 = find(c, "qd32"),
                       *q32s = find(c, "qd32-sqpoll"), *off = find(c, kIoacctAcctOffVariant);
  if (!q1 || !q1s || !q32 || !q32s) return "";
  std::string s = "On this machine, " +
                  claim(priced("SQPOLL at depth 1", "", *q1s, *q1, ""), "a ring without it", against(*q1s, *q1, c.rule), c.rule) + "; " +
                  claim(priced("at depth 32 SQPOLL", "", *q32s, *q32, ""), "a ring without it", against(*q32s, *q32, c.rule), c.rule);
  if (off) {
    // The accounting level qd32 ran at, from its job: the default may change,
    // and the sentence names what was measured. "ioacct's own": in a sentence
    // about SQPOLL, "accounting" alone reads as the kernel's SQ statistics.
    std::string level = "ioacct's own accounting";
    if (q32->options && q32->options->contains("acct") && (*q32->options)["acct"].is_string())
      level += " (--acct " + (*q32->options)["acct"].get<std::string>() + ")";
    const Verdicts vs = against(*q32, *off, c.rule);
    const Verdict& v = vs.all;
    s += "; ";
    // Accounting's cost is asked for at well under the margin (2%), so an
    // interval wholly below 1 is a cost, said with its interval, even where
    // the verdict calls it no difference.
    if (v.ratio && v.ratio->high && *v.ratio->high < 1 && !(vs.without && vs.without->kind != v.kind)) {
      // The cost is what accounting takes away: 1 - ratio, its interval flipped.
      s += fmt::format("at depth 32, {} costs {:.1f}% of the IOPS ({:g}% CI {:.1f}-{:.1f}%)", level,
                       100 * (1 - v.ratio->estimate), 100 * c.rule.level, 100 * (1 - *v.ratio->high),
                       100 * (1 - *v.ratio->low));
    } else {
      s += claim("at depth 32, " + level, "--acct off", vs, c.rule);
    }
  }
  // The kernel's own statistics are named too, since the reader asks for them.
  return s + "; the kernel's own SQ thread statistics have no switch through Linux 6.18, so no row measures their cost.";
}

std::string libaio(const CompareResult& c) {
  std::vector<std::string> parts;
  for (const char* depth : {"1", "32"}) {
    const VariantSummary *aio = find(c, fmt::format("libaio-qd{}", depth)), *uring = find(c, fmt::format("uring-qd{}", depth));
    if (!aio || !uring) continue;
    parts.push_back(claim(priced(fmt::format("at depth {}, io_uring", depth), "", *uring, *aio, " of libaio"), "libaio",
                          against(*uring, *aio, c.rule), c.rule));
  }
  if (parts.empty()) return "";
  std::string s = "On this machine, " + parts[0];
  for (size_t i = 1; i < parts.size(); ++i) s += "; " + parts[i];
  return s + ".";
}

// "'a' (0.62x, 95% CI 0.55-0.70x), 'b' (...) and 'c' (...)".
std::string listed(const std::vector<std::string>& items) {
  std::string s;
  for (size_t i = 0; i < items.size(); ++i) s += (i == 0 ? "" : i + 1 == items.size() ? " and " : ", ") + items[i];
  return s;
}

// %util against busy% per variant, from each repetition's ratio (pacing fixes
// the IOPS, so they say nothing here): a direction and a size only where the
// interval excludes 1, since %util moves in whole jiffies and one run's ratio
// is noisy at low load.
std::string util(const CompareResult& c) {
  std::vector<std::string> low, high, covers, lone, unmeasured;
  for (const auto& v : c.variants) {
    std::vector<std::optional<double>> u, b;
    u.reserve(v.runs.size());
    b.reserve(v.runs.size());
    for (const auto& r : v.runs) {
      u.push_back(r.util_pct);
      b.push_back(r.busy_pct);
    }
    const auto q = util_ratio(u, b, c.rule.level);
    const std::string name = fmt::format("'{}'", v.name);
    if (!q) {
      unmeasured.push_back(name);
    } else if (!q->low) {
      lone.push_back(fmt::format("{} ({})", name, format_ratio(q->estimate)));
    } else {
      const std::string fig = fmt::format("{} ({}, {:g}% CI {})", name, format_ratio(q->estimate), 100 * c.rule.level,
                                          format_ratio_range(*q->low, *q->high));
      (*q->high < 1 ? low : *q->low > 1 ? high : covers).push_back(fig);
    }
  }
  if (unmeasured.size() == c.variants.size())
    return "Not answered here: busy% (the device's exact busy time) was not measured; it needs root (BPF), "
           "--acct full and a block device under the target.";
  std::vector<std::string> parts;
  if (!low.empty()) parts.push_back("%util reads below the exact busy time for " + listed(low));
  if (!high.empty()) parts.push_back("%util reads above the exact busy time for " + listed(high));
  if (!covers.empty())
    parts.push_back(fmt::format("%util / busy% has a {:g}% interval covering 1.0 for {}", 100 * c.rule.level,
                                listed(covers)));
  if (!lone.empty())
    parts.push_back("one repetition gives no interval for " + listed(lone) + ": run with --repeat 2 or more");
  if (!unmeasured.empty()) parts.push_back("busy% was not measured for " + listed(unmeasured));
  std::string s = !low.empty() || !high.empty() ? "No: "
                  : !covers.empty()            ? "No bias shown here: "
                                               : "Not resolved: ";
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  return s + ".";
}

std::string generic(const CompareResult& c) {
  if (c.variants.size() < 2) return "";
  const VariantSummary& b = c.variants[c.baseline];
  std::vector<std::string> parts;
  for (const auto& v : c.variants)
    if (!v.baseline)
      parts.push_back(claim(fmt::format("'{}'", v.name), fmt::format("'{}'", b.name), v.verdict, c.rule,
                            v.without_outliers ? &*v.without_outliers : nullptr));
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  s[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(s[0])));
  return s + ".";
}

}  // namespace

std::string claim(const std::string& subject, const std::string& object, const Verdict& v, const VerdictRule& rule,
                  const Verdict* without_outliers) {
  std::string s = claim_of(subject, object, v, rule);
  if (without_outliers && without_outliers->kind != v.kind)
    s += " (without the outlying repetitions: " + verdict_text(*without_outliers, rule) + ")";
  return s;
}


std::string headline(const CompareResult& c) {
  std::string s;
  if (c.preset == "qd1") s = qd1(c);
  else if (c.preset == "sqpoll") s = sqpoll(c);
  else if (c.preset == "libaio") s = libaio(c);
  else if (c.preset == "util") s = util(c);
  return s.empty() ? generic(c) : s;
}

}  // namespace ioacct
