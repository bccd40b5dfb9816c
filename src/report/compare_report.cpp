#include "report/compare_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <stdexcept>

#include "common/units.hpp"
#include "report/json_opt.hpp"
#include "report/report.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

constexpr const char* kNone = "-";
constexpr const char* kReversalMark = "†";

bool reversed(const VariantSummary& v) { return !v.baseline && v.verdict.reversal.has_value(); }

std::string dur(const Figure& f) { return f.s ? format_duration_ns(f.s->median) : kNone; }
std::string pct(const Figure& f) { return f.s ? fmt::format("{:.1f}%", f.s->median) : kNone; }
std::string frac(const Figure& f) { return f.s ? fmt::format("{:.0f}%", 100 * f.s->median) : kNone; }
// The verdict's figure; marked where the medians beside it point the other
// way round 1 (the notes say why).
std::string ratio(const VariantSummary& v) {
  if (!v.verdict.ratio) return kNone;
  return format_ratio(v.verdict.ratio->estimate) + (reversed(v) ? kReversalMark : "");
}
std::string interval(const VariantSummary& v) { return v.baseline ? kNone : format_interval(v.verdict); }
std::string iops_range(const VariantSummary& v) {
  return v.iops.s ? fmt::format("{}-{}", format_count(v.iops.s->min), format_count(v.iops.s->max)) : kNone;
}

bool disagree(const VariantSummary& v) { return v.without_outliers && v.without_outliers->kind != v.verdict.kind; }

struct Column {
  std::string head;
  std::function<std::string(const VariantSummary&)> cell;
  bool text = false;
};

std::vector<Column> columns(const CompareResult& c) {
  return {
      {"variant", [](const VariantSummary& v) { return v.name; }, true},
      {"median IOPS", [](const VariantSummary& v) { return v.iops.s ? format_count(v.iops.s->median) : kNone; }},
      {"min-max", iops_range},
      {"pairwise ratio", ratio},
      {fmt::format("{:g}% CI", 100 * c.rule.level), interval},
      {"verdict", [&c](const VariantSummary& v) { return verdict_cell(v, c.rule); }, true},
      {"CPU/IO", [](const VariantSummary& v) { return dur(v.cpu_per_io_ns); }},
      {"p50", [](const VariantSummary& v) { return dur(v.p50_ns); }},
      {"p99", [](const VariantSummary& v) { return dur(v.p99_ns); }},
      {"SQ work", [](const VariantSummary& v) { return frac(v.sq_work); }},
      {"%util", [](const VariantSummary& v) { return pct(v.util_pct); }},
      {"busy%", [](const VariantSummary& v) { return pct(v.busy_pct); }},
  };
}

std::string header_line(const CompareResult& c) {
  if (!c.variants.empty() && !c.variants[0].sources.empty()) {
    // Distinct files: a compare document gives several variants the same source.
    std::set<std::string> files;
    for (const auto& v : c.variants) files.insert(v.sources.begin(), v.sources.end());
    return fmt::format("{} variant{} from {} saved file{}", c.variants.size(), c.variants.size() == 1 ? "" : "s", files.size(),
                       files.size() == 1 ? "" : "s");
  }
  const std::string added = c.repeat_asked && c.repeat > c.repeat_asked
                                ? fmt::format(" ({} asked, {} more until resolved)", c.repeat_asked, c.repeat - c.repeat_asked)
                                : "";
  return fmt::format("{} variant{} x {} repetition{}{}, interleaved{}{}", c.variants.size(),
                     c.variants.size() == 1 ? "" : "s", c.repeat, c.repeat == 1 ? "" : "s", added,
                     c.warmup ? fmt::format(" after {} warm-up round{} (discarded)", c.warmup, c.warmup == 1 ? "" : "s") : "",
                     c.preset.empty() ? "" : fmt::format(" (--preset {})", c.preset));
}

// The question and its answer, for the top of every format.
std::string top(const CompareResult& c, const char* answer_prefix) {
  std::string out;
  if (!c.question.empty()) out += c.question + "\n";
  if (!c.headline.empty()) out += answer_prefix + c.headline + "\n";
  return out;
}

// "psync" against "uring-sleep": the stage rows, variants across.
std::vector<std::vector<std::string>> anatomy_table(const CompareResult& c) {
  std::vector<std::vector<std::string>> t{{"stage"}};
  bool syscall = false;
  for (const auto& v : c.variants) {
    t[0].push_back(v.name);
    syscall |= v.anatomy && v.anatomy_flavor == AnatomyFlavor::Syscall;
  }
  auto has = [&](AnatomyStage st) {
    bool any = false;
    for (const auto& v : c.variants) any |= v.stage_ns[static_cast<int>(st)].s.has_value();
    return any;
  };
  // The wake-up is a part of the stage it lies in, so its row goes under
  // that stage: the completion wherever a variant has one.
  const AnatomyStage wake_in = anatomy_wakeup_stage(has(AnatomyStage::Completion) ? 1 : 0,
                                                    has(AnatomyStage::Kernel) ? 1 : 0);
  for (int s = 0; s < kAnatomyStages; ++s) {
    const auto st = static_cast<AnatomyStage>(s);
    if (!has(st)) continue;
    std::string name(anatomy_stage_name(st, AnatomyFlavor::Uring).name);
    const std::string alt(anatomy_stage_name(st, AnatomyFlavor::Syscall).name);
    if (syscall && alt != name) name += " / " + alt;
    t.push_back({name});
    for (const auto& v : c.variants) t.back().push_back(dur(v.stage_ns[s]));
    if (st != wake_in) continue;
    t.push_back({"  of which wake-up"});
    for (const auto& v : c.variants) t.back().push_back(dur(v.wakeup_ns));
  }
  return t;
}

std::string render(const std::vector<std::vector<std::string>>& t) {
  // µ is two bytes but one column.
  auto shown = [](const std::string& x) { return x.size() - (x.find("µ") != std::string::npos ? 1 : 0); };
  std::vector<size_t> width(t.front().size(), 0);
  for (const auto& r : t)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], shown(r[i]));
  std::string out;
  for (const auto& r : t) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - shown(r[i]), ' ');
      line += i == 0 ? r[i] + pad : pad + r[i];
      if (i + 1 < r.size()) line += "  ";
    }
    out += line + "\n";
  }
  return out;
}

// "+12.0 µs", "-3.1 µs".
std::string signed_ns(double ns) { return (ns >= 0 ? "+" : "-") + format_duration_ns(std::abs(ns)); }

}  // namespace

std::string stage_diff_text(const StageDiff& d, AnatomyFlavor flavor, const VerdictRule& rule) {
  if (d.stands_out)
    return fmt::format("the stage that differs most beyond the run-to-run spread is {} ({} per I/O, {:g}% CI {} to {})",
                       anatomy_stage_name(d.stage, flavor).name, signed_ns(d.by_ns), 100 * rule.level, signed_ns(*d.low_ns),
                       signed_ns(*d.high_ns));
  if (d.low_ns)
    return fmt::format("no stage stands out: every stage's difference lies within its run-to-run spread (its {:g}% "
                       "interval includes 0)",
                       100 * rule.level);
  return fmt::format("no stage stands out: {} against {} cannot tell a stage's difference from its run-to-run spread "
                     "(that takes at least {} repetitions a side)",
                     plural(d.n, "repetition"), d.m, repetitions_for_interval(rule.level));
}

std::string format_compare_anatomy(const CompareResult& c) {
  bool asked = false, measured = false;
  for (const auto& v : c.variants) {
    asked |= v.anatomy || v.anatomy_unavailable.has_value();
    measured |= v.anatomy;
  }
  if (!asked) return "";
  std::string out = "\nanatomy: time per I/O in each stage, median over the repetitions (kernel tracepoints, eBPF; "
                    "a column adds up to the end-to-end mean; see 'ioacct bench --anatomy')\n";
  if (measured) out += render(anatomy_table(c));
  const VariantSummary& b = c.variants[c.baseline];
  for (const auto& v : c.variants) {
    if (v.anatomy_unavailable) out += fmt::format("'{}': not measured: {}\n", v.name, *v.anatomy_unavailable);
    if (v.stage_diff) out += fmt::format("'{}' against '{}': {}\n", v.name, b.name, stage_diff_text(*v.stage_diff, v.anatomy_flavor, c.rule));
  }
  return out;
}

bool is_text_column(size_t i) { return i == 0 || i == 5; }

std::string verdict_cell(const VariantSummary& v, const VerdictRule& rule) {
  std::string s = verdict_word(v.verdict.kind);
  if (const std::string more = repeat_advice_short(v.verdict, rule); !more.empty()) s += " (" + more + ")";
  if (disagree(v)) s += "*";
  return s;
}

namespace {

// "'b'†: its median IOPS is above 'a''s (...), but it ran slower than 'a' in
// 16 of the 25 pairs of repetitions, ...": why the ratio column and the
// medians beside it point different ways.
std::string reversal_note(const VariantSummary& v, const VariantSummary& b) {
  const Verdict::Reversal& r = *v.verdict.reversal;
  const bool slower = v.verdict.ratio->estimate < 1;
  return fmt::format("'{}'{}: its median IOPS is {} '{}''s ({} against {}: {}), but it ran {} than '{}' in {} of the {} pairs "
                     "of repetitions, so the {}, which the verdict goes by, is {}: the repetitions spread unevenly (see "
                     "min-max)\n",
                     v.name, kReversalMark, slower ? "above" : "below", b.name, format_count(v.iops.s->median),
                     format_count(b.iops.s->median), format_ratio(r.medians), slower ? "slower" : "faster", b.name,
                     slower ? r.pairs.below : r.pairs.above, r.pairs.pairs, kRatioLabel,
                     format_ratio(v.verdict.ratio->estimate));
}

}  // namespace

std::string compare_notes(const CompareResult& c) {
  std::string out;
  if (!c.rounds_note.empty()) out += "--until-resolved: " + c.rounds_note + "\n";
  for (const auto& v : c.variants) {
    if (v.verdict.kind == VerdictKind::Unresolved || v.verdict.no_io)
      out += fmt::format("'{}': {}\n", v.name, verdict_text(v.verdict, c.rule));
    if (disagree(v))
      out += fmt::format("'{}'*: without the outliers the verdict would be {}; with them {}. The table keeps every "
                         "repetition (the interval is robust to one outlier among many, not among few): {}\n",
                         v.name, verdict_text(*v.without_outliers, c.rule),
                         v.verdict.kind == VerdictKind::NotMeasured ? std::string("there is none")
                                                                   : fmt::format("it is '{}'", verdict_word(v.verdict.kind)),
                         c.rule.more.saved() ? "add saved runs of each variant" : "rerun with more --repeat");
    if (reversed(v) && v.iops.s && c.variants[c.baseline].iops.s) out += reversal_note(v, c.variants[c.baseline]);
  }
  for (const auto& v : c.variants)
    for (size_t i : v.outliers)
      out += fmt::format("outlier: '{}' repetition {}: {} IOPS against a median of {} (more than {} scaled "
                         "MADs and 1% away)\n",
                         v.name, i + 1, format_count(v.runs[i].iops), format_count(v.iops.s->median), kOutlierMads);
  out += fmt::format(
      "pairwise ratio: IOPS against '{}' as the {} (every repetition's IOPS over every baseline repetition's; the "
      "Hodges-Lehmann estimate), the figure the verdict goes by, with its distribution-free {:g}% interval (CI); not "
      "the ratio of the median IOPS, which can differ ({} marks a row where the two lie on different sides of 1). "
      "verdict: faster or slower when the interval lies above or below 1, no difference when it lies within ±{:g}%, "
      "else not resolved.\n",
      c.variants.empty() ? "" : c.variants[c.baseline].name, kRatioLabel, 100 * c.rule.level, kReversalMark,
      100 * c.rule.margin);
  out += "CPU/IO: every thread of ioacct (submitters, SQ threads, io-wq workers) per I/O, from schedstat. "
         "%util: the kernel's io_ticks for the first target device. busy%: " + std::string(kBusySource) +
         ". '-': not measured (--acct off, no SQ thread, no device).\n";
  return out;
}

std::vector<std::vector<std::string>> compare_table(const CompareResult& c) {
  std::vector<std::vector<std::string>> t;
  const auto cols = columns(c);
  t.emplace_back();
  for (const auto& col : cols) t.back().push_back(col.head);
  for (const auto& v : c.variants) {
    t.emplace_back();
    for (const auto& col : cols) t.back().push_back(col.cell(v));
  }
  return t;
}

std::string format_compare_console(const CompareResult& c) {
  std::string out = fmt::format("ioacct compare: {}\n", header_line(c));
  out += top(c, "=> ");
  if (!c.explanation.empty()) out += "\n" + c.explanation + "\n";
  out += '\n';
  const auto t = compare_table(c);
  // µ and ± are two bytes but one column.
  auto shown = [](const std::string& x) {
    size_t n = 0;
    for (unsigned char ch : x) n += (ch & 0xC0) != 0x80;
    return n;
  };
  std::vector<size_t> width(t.front().size(), 0);
  for (const auto& r : t)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], shown(r[i]));
  for (const auto& r : t) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - shown(r[i]), ' ');
      line += is_text_column(i) ? r[i] + pad : pad + r[i];  // words left, figures right
      if (i + 1 < r.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  out += format_compare_anatomy(c);
  out += '\n' + compare_notes(c);
  if (c.interrupted) out += "interrupted: the table covers the runs that finished\n";
  return out;
}

std::string format_compare_markdown(const CompareResult& c) {
  const auto t = compare_table(c);
  std::string out = fmt::format("{}\n\n", header_line(c));
  if (!c.question.empty()) out += "**" + c.question + "**\n\n";
  if (!c.headline.empty()) out += c.headline + "\n\n";
  if (!c.explanation.empty()) out += c.explanation + "\n\n";
  for (size_t r = 0; r < t.size(); ++r) {
    out += "|";
    for (const auto& cell : t[r]) out += " " + cell + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t i = 0; i < t[r].size(); ++i) out += is_text_column(i) ? " --- |" : " ---: |";
      out += "\n";
    }
  }
  const std::string anatomy = format_compare_anatomy(c);
  if (!anatomy.empty()) out += "\n```" + anatomy + "```\n";
  return out + "\n" + compare_notes(c);
}

std::string format_compare_csv(const CompareResult& c) {
  // Plain numbers in base units (IOPS, ns, fractions), empty when not measured.
  auto num = [](const Figure& f, auto pick) { return f.s ? fmt::format("{}", pick(*f.s)) : std::string(); };
  auto med = [](const Spread& s) { return s.median; };
  auto opt = [](const std::optional<double>& x) { return x ? fmt::format("{}", *x) : std::string(); };
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  std::string out =
      "variant,iops_median,iops_min,iops_max,iops_mad,ratio,ratio_ci_low,ratio_ci_high,verdict,repeat_needed,"
      "cpu_per_io_ns,p50_ns,p99_ns,sq_work_fraction,util_pct,busy_pct,repetitions,outliers\n";
  for (const auto& v : c.variants) {
    const auto& r = v.verdict.ratio;
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", quote(v.name), num(v.iops, med),
                       num(v.iops, [](const Spread& s) { return s.min; }), num(v.iops, [](const Spread& s) { return s.max; }),
                       num(v.iops, [](const Spread& s) { return s.mad.value_or(0); }),
                       r ? fmt::format("{}", r->estimate) : "", r && !v.baseline ? opt(r->low) : "",
                       r && !v.baseline ? opt(r->high) : "", quote(verdict_word(v.verdict.kind)),
                       v.verdict.repeat_needed ? std::to_string(v.verdict.repeat_needed) : "", num(v.cpu_per_io_ns, med),
                       num(v.p50_ns, med), num(v.p99_ns, med), num(v.sq_work, med), num(v.util_pct, med),
                       num(v.busy_pct, med), v.runs.size(), v.outliers.size());
  }
  return out;
}

namespace {

template <typename Fig>
json anatomy_json(const VariantSummary& v, const Fig& fig) {
  if (!v.anatomy && !v.anatomy_unavailable) return nullptr;
  json stages = json::array();
  for (int s = 0; s < kAnatomyStages; ++s)
    if (v.stage_ns[s].s)
      stages.push_back({{"stage", anatomy_stage_name(static_cast<AnatomyStage>(s), v.anatomy_flavor).name},
                        {"per_io_ns", fig(v.stage_ns[s])}});
  json differs = nullptr;
  if (const auto& d = v.stage_diff)
    differs = {{"stage", anatomy_stage_name(d->stage, v.anatomy_flavor).name},
               {"by_ns", d->by_ns},
               {"interval_ns", d->low_ns ? json::array({*d->low_ns, *d->high_ns}) : json(nullptr)},
               {"stands_out", d->stands_out}};
  return {{"unavailable", v.anatomy_unavailable ? json(*v.anatomy_unavailable) : json(nullptr)},
          {"stages", v.anatomy ? stages : json(nullptr)},
          {"wakeup_per_io_ns", fig(v.wakeup_ns)},
          {"differs_most_from_baseline", differs}};
}

json verdict_json(const Verdict& v, const VerdictRule& rule, bool baseline) {
  const auto& r = v.ratio;
  return {{"verdict", verdict_word(v.kind)},
          {"verdict_text", verdict_text(v, rule)},
          {"ratio", r ? json(r->estimate) : json(nullptr)},
          {"ratio_ci", r && r->low && !baseline ? json{{"low", *r->low}, {"high", *r->high}, {"coverage", r->coverage}}
                                                : json(nullptr)},
          {"repeat_needed", v.kind == VerdictKind::Unresolved ? json(v.repeat_needed) : json(nullptr)},
          {"repeat_needed_capped", v.capped},
          {"repeat_needed_s", v.kind == VerdictKind::Unresolved && rule.more.round_s && !rule.more.saved()
                                  ? json(v.repeat_needed * *rule.more.round_s)
                                  : json(nullptr)},
          {"repeat_out_of_reach", out_of_reach(v, rule)},
          {"reversal", v.reversal && !baseline ? json{{"ratio_of_medians", v.reversal->medians},
                                                      {"pairs", v.reversal->pairs.pairs},
                                                      {"below", v.reversal->pairs.below},
                                                      {"above", v.reversal->pairs.above}}
                                               : json(nullptr)},
          {"log_spread", opt_json(v.spread)}};
}

}  // namespace

json compare_json(const CompareResult& c, json context) {
  auto fig = [](const Figure& f) -> json {
    if (!f.s) return nullptr;
    return {{"median", f.s->median}, {"min", f.s->min}, {"max", f.s->max}, {"mad", f.s->mad ? json(*f.s->mad) : json(nullptr)}};
  };
  context.erase("options");
  context["schema_version"] = kCompareSchemaVersion;
  context["preset"] = c.preset.empty() ? json(nullptr) : json(c.preset);
  context["question"] = c.question.empty() ? json(nullptr) : json(c.question);
  context["explanation"] = c.explanation.empty() ? json(nullptr) : json(c.explanation);
  context["repeat"] = c.repeat;
  context["repeat_asked"] = c.repeat_asked ? json(c.repeat_asked) : json(nullptr);
  context["rounds_note"] = c.rounds_note.empty() ? json(nullptr) : json(c.rounds_note);
  context["warmup"] = c.warmup;
  context["baseline"] = c.variants.empty() ? json(nullptr) : json(c.variants[c.baseline].name);
  context["busy_source"] = kBusySource;
  context["verdict_rule"] = {{"level", c.rule.level}, {"margin", c.rule.margin},
                             {"method", "Hodges-Lehmann ratio, exact Mann-Whitney interval"},
                             {"ratio", kRatioLabel},
                             {"spread", "Shamos: 1.0483 x the median |log IOPS difference| within each variant, pooled"}};
  // Saved runs keep the targets of the context they were given (the first
  // file's), device identities included.
  if (!c.targets.empty() || !context.contains("targets")) {
    json targets = json::array();
    for (const auto& t : c.targets)
      targets.push_back({{"path", t.path}, {"device", t.device.empty() ? json(nullptr) : json(t.device)},
                         {"device_identity", device_identity_json(t)}, {"temporary", t.is_temp},
                         {"bytes_used", t.range}});
    context["targets"] = targets;
  }
  json variants = json::array();
  static constexpr double kCurve[] = {0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999};
  for (const auto& v : c.variants) {
    json runs = json::array();
    for (size_t i = 0; i < v.runs.size(); ++i) {
      const RunMetrics& r = v.runs[i];
      runs.push_back({{"iops", r.iops}, {"bytes_per_s", r.bytes_per_s}, {"ios", r.ios},
                      {"cpu_per_io_ns", opt_json(r.cpu_per_io_ns)},
                      {"cpu_split_ns", {{"submitters", opt_json(r.cpu_submit_ns)}, {"sq_threads", opt_json(r.cpu_sq_ns)},
                                        {"io_wq", opt_json(r.cpu_iowq_ns)}, {"other", opt_json(r.cpu_other_ns)}}},
                      {"p50_ns", opt_json(r.p50_ns)}, {"p99_ns", opt_json(r.p99_ns)},
                      {"sq_work_fraction", opt_json(r.sq_work)}, {"util_pct", opt_json(r.util_pct)}, {"busy_pct", opt_json(r.busy_pct)},
                      {"outlier", std::find(v.outliers.begin(), v.outliers.end(), i) != v.outliers.end()}});
    }
    json curve = json::array(), hist = json::array();
    if (v.latency && v.latency->count()) {
      for (double q : kCurve) curve.push_back({{"q", q}, {"ns", v.latency->quantile(q)}});
      for (const auto& b : v.latency->buckets()) hist.push_back({b.lo, b.hi, b.count});
    }
    json entry = verdict_json(v.verdict, c.rule, v.baseline);
    entry.update({{"name", v.name},
                  {"args", v.args},
                  {"options", v.job ? job_options_json(*v.job) : v.options ? *v.options : json(nullptr)},
                  {"description", v.description},
                  {"engine_description", v.engine_desc},
                  {"baseline", v.baseline},
                  {"ratio_of_medians", opt_json(v.ratio_of_medians)},
                  {"without_outliers", v.without_outliers ? verdict_json(*v.without_outliers, c.rule, false) : json(nullptr)},
                  {"verdicts_disagree", disagree(v)},
                  {"rate_iops", opt_json(v.rate_iops)},
                  {"iops", fig(v.iops)},
                  {"cpu_per_io_ns", fig(v.cpu_per_io_ns)},
                  {"cpu_split_ns", {{"submitters", fig(v.cpu_submit_ns)}, {"sq_threads", fig(v.cpu_sq_ns)},
                                    {"io_wq", fig(v.cpu_iowq_ns)}, {"other", fig(v.cpu_other_ns)}}},
                  {"p50_ns", fig(v.p50_ns)},
                  {"p99_ns", fig(v.p99_ns)},
                  {"sq_work_fraction", fig(v.sq_work)},
                  {"util_pct", fig(v.util_pct)},
                  {"busy_pct", fig(v.busy_pct)},
                  {"latency_percentiles_ns", curve},
                  {"latency_histogram_ns", hist},
                  {"anatomy", anatomy_json(v, fig)},
                  {"sources", v.sources},
                  {"runs", runs}});
    variants.push_back(std::move(entry));
  }
  return {{"context", context},
          {"headline", c.headline.empty() ? json(nullptr) : json(c.headline)},
          {"warnings", c.warnings},
          {"variants", variants},
          {"interrupted", c.interrupted},
          {"wall_s", c.wall_s}};
}

namespace {

constexpr CompareSink kCompareSinks[] = {
    {Format::Console, [](const CompareResult& c, const json&) { return format_compare_console(c); }},
    {Format::Json, [](const CompareResult& c, const json& context) { return compare_json(c, context).dump(2) + "\n"; }},
    {Format::Csv, [](const CompareResult& c, const json&) { return format_compare_csv(c); }},
    {Format::Markdown, [](const CompareResult& c, const json&) { return format_compare_markdown(c); }},
};

}  // namespace

std::span<const CompareSink> compare_sinks() { return kCompareSinks; }

std::string render_compare(Format f, const CompareResult& c, const json& context) {
  for (const CompareSink& s : kCompareSinks)
    if (s.format == f) return s.render(c, context);
  throw std::logic_error(std::string("compare has no sink for --format ") + format_name(f));
}

}  // namespace ioacct
