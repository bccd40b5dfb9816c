#include "report/compare_report.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <functional>

#include "common/units.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

constexpr const char* kNone = "-";

std::string dur(const Figure& f) { return f.s ? format_duration_ns(f.s->median) : kNone; }
std::string pct(const Figure& f) { return f.s ? fmt::format("{:.1f}%", f.s->median) : kNone; }
std::string frac(const Figure& f) { return f.s ? fmt::format("{:.0f}%", 100 * f.s->median) : kNone; }
std::string ratio(const VariantSummary& v) { return v.ratio ? fmt::format("{:.2f}x", *v.ratio) : kNone; }
std::string iops_range(const VariantSummary& v) {
  return v.iops.s ? fmt::format("{}-{}", format_count(v.iops.s->min), format_count(v.iops.s->max)) : kNone;
}

struct Column {
  std::string head;
  std::function<std::string(const VariantSummary&)> cell;
};

std::vector<Column> columns() {
  return {
      {"variant", [](const VariantSummary& v) { return v.name; }},
      {"IOPS", [](const VariantSummary& v) { return v.iops.s ? format_count(v.iops.s->median) : kNone; }},
      {"min-max", iops_range},
      {"ratio", ratio},
      {"verdict", verdict},
      {"CPU/IO", [](const VariantSummary& v) { return dur(v.cpu_per_io_ns); }},
      {"p50", [](const VariantSummary& v) { return dur(v.p50_ns); }},
      {"p99", [](const VariantSummary& v) { return dur(v.p99_ns); }},
      {"SQ work", [](const VariantSummary& v) { return frac(v.sq_work); }},
      {"%util", [](const VariantSummary& v) { return pct(v.util_pct); }},
      {"busy%", [](const VariantSummary& v) { return pct(v.busy_pct); }},
  };
}

std::string header_line(const CompareResult& c) {
  return fmt::format("{} variant{} x {} repetition{}, interleaved{}{}", c.variants.size(),
                     c.variants.size() == 1 ? "" : "s", c.repeat, c.repeat == 1 ? "" : "s",
                     c.warmup ? fmt::format(" after {} warm-up round{} (discarded)", c.warmup, c.warmup == 1 ? "" : "s") : "",
                     c.preset.empty() ? "" : fmt::format(" (--preset {})", c.preset));
}

// "psync" against "uring-sleep": the stage rows, variants across.
std::vector<std::vector<std::string>> anatomy_table(const CompareResult& c) {
  std::vector<std::vector<std::string>> t{{"stage"}};
  bool syscall = false;
  for (const auto& v : c.variants) {
    t[0].push_back(v.name);
    syscall |= v.anatomy && v.anatomy_flavor == AnatomyFlavor::Syscall;
  }
  for (int s = 0; s < kAnatomyStages; ++s) {
    bool any = false;
    for (const auto& v : c.variants) any |= v.stage_ns[s].s.has_value();
    if (!any) continue;
    const auto st = static_cast<AnatomyStage>(s);
    std::string name(anatomy_stage_name(st, AnatomyFlavor::Uring).name);
    const std::string alt(anatomy_stage_name(st, AnatomyFlavor::Syscall).name);
    if (syscall && alt != name) name += " / " + alt;
    t.push_back({name});
    for (const auto& v : c.variants) t.back().push_back(dur(v.stage_ns[s]));
  }
  t.push_back({"  of which wake-up"});
  for (const auto& v : c.variants) t.back().push_back(dur(v.wakeup_ns));
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

}  // namespace

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
    if (!v.differs_most) continue;
    const auto n = anatomy_stage_name(*v.differs_most, v.anatomy_flavor);
    out += fmt::format("'{}' against '{}': the stage that differs most is {} ({}{} per I/O)\n", v.name, b.name, n.name,
                       v.differs_by_ns >= 0 ? "+" : "-", format_duration_ns(std::abs(v.differs_by_ns)));
  }
  return out;
}

std::string compare_notes(const CompareResult& c) {
  std::string out;
  for (const auto& v : c.variants)
    for (size_t i : v.outliers)
      out += fmt::format("outlier: '{}' repetition {}: {} IOPS against a median of {} (more than {} scaled "
                         "MADs and 1% away); rerun with more --repeat if it changes the verdict\n",
                         v.name, i + 1, format_count(v.runs[i].iops), format_count(v.iops.s->median), kOutlierMads);
  out += fmt::format("ratio: median IOPS against '{}'; 'no clear difference': the min-max ranges overlap, or the medians are within 1%.\n",
                     c.variants.empty() ? "" : c.variants[c.baseline].name);
  out += "CPU/IO: every thread of ioacct (submitters, SQ threads, io-wq workers) per I/O, from schedstat. "
         "%util: the kernel's io_ticks for the first target device. busy%: " + std::string(kBusySource) +
         ". '-': not measured (--acct off, no SQ thread, no device).\n";
  return out;
}

std::vector<std::vector<std::string>> compare_table(const CompareResult& c) {
  std::vector<std::vector<std::string>> t;
  const auto cols = columns();
  t.emplace_back();
  for (const auto& col : cols) t.back().push_back(col.head);
  for (const auto& v : c.variants) {
    t.emplace_back();
    for (const auto& col : cols) t.back().push_back(col.cell(v));
  }
  return t;
}

std::string verdict(const VariantSummary& v) {
  if (v.baseline) return "baseline";
  if (!v.ratio) return kNone;
  if (!v.clear_difference) return "no clear difference";
  return *v.ratio > 1 ? "faster" : "slower";
}

std::string format_compare_console(const CompareResult& c) {
  std::string out = fmt::format("ioacct compare: {}\n", header_line(c));
  if (!c.explanation.empty()) out += c.explanation + "\n";
  out += '\n';
  const auto t = compare_table(c);
  // µ is two bytes but one column.
  auto shown = [](const std::string& x) { return x.size() - (x.find("µ") != std::string::npos ? 1 : 0); };
  std::vector<size_t> width(t.front().size(), 0);
  for (const auto& r : t)
    for (size_t i = 0; i < r.size(); ++i) width[i] = std::max(width[i], shown(r[i]));
  for (const auto& r : t) {
    std::string line;
    for (size_t i = 0; i < r.size(); ++i) {
      const std::string pad(width[i] - shown(r[i]), ' ');
      line += i == 0 || i == 4 ? r[i] + pad : pad + r[i];  // words left, figures right
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
  if (!c.explanation.empty()) out += c.explanation + "\n\n";
  for (size_t r = 0; r < t.size(); ++r) {
    out += "|";
    for (const auto& cell : t[r]) out += " " + cell + " |";
    out += "\n";
    if (r == 0) {
      out += "|";
      for (size_t i = 0; i < t[r].size(); ++i) out += i == 0 || i == 4 ? " --- |" : " ---: |";
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
  auto quote = [](const std::string& s) {
    std::string q = "\"";
    for (char ch : s) q += ch == '"' ? std::string("\"\"") : std::string(1, ch);
    return q + "\"";
  };
  std::string out =
      "variant,iops_median,iops_min,iops_max,iops_mad,ratio,verdict,cpu_per_io_ns,p50_ns,p99_ns,sq_work_fraction,"
      "util_pct,busy_pct,repetitions,outliers\n";
  for (const auto& v : c.variants) {
    out += fmt::format("{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", quote(v.name), num(v.iops, med),
                       num(v.iops, [](const Spread& s) { return s.min; }), num(v.iops, [](const Spread& s) { return s.max; }),
                       num(v.iops, [](const Spread& s) { return s.mad.value_or(0); }),
                       v.ratio ? fmt::format("{}", *v.ratio) : "", quote(verdict(v)), num(v.cpu_per_io_ns, med),
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
  if (v.differs_most)
    differs = {{"stage", anatomy_stage_name(*v.differs_most, v.anatomy_flavor).name}, {"by_ns", v.differs_by_ns}};
  return {{"unavailable", v.anatomy_unavailable ? json(*v.anatomy_unavailable) : json(nullptr)},
          {"stages", v.anatomy ? stages : json(nullptr)},
          {"wakeup_per_io_ns", fig(v.wakeup_ns)},
          {"differs_most_from_baseline", differs}};
}

}  // namespace

json compare_json(const CompareResult& c, json context) {
  auto opt = [](const std::optional<double>& x) { return x ? json(*x) : json(nullptr); };
  auto fig = [](const Figure& f) -> json {
    if (!f.s) return nullptr;
    return {{"median", f.s->median}, {"min", f.s->min}, {"max", f.s->max}, {"mad", f.s->mad ? json(*f.s->mad) : json(nullptr)}};
  };
  context.erase("options");
  context["schema_version"] = kCompareSchemaVersion;
  context["preset"] = c.preset.empty() ? json(nullptr) : json(c.preset);
  context["explanation"] = c.explanation.empty() ? json(nullptr) : json(c.explanation);
  context["repeat"] = c.repeat;
  context["warmup"] = c.warmup;
  context["baseline"] = c.variants.empty() ? json(nullptr) : json(c.variants[c.baseline].name);
  context["busy_source"] = kBusySource;
  json targets = json::array();
  for (const auto& t : c.targets)
    targets.push_back({{"path", t.path}, {"device", t.device.empty() ? json(nullptr) : json(t.device)},
                       {"temporary", t.is_temp}, {"bytes_used", t.range}});
  context["targets"] = targets;
  json variants = json::array();
  static constexpr double kCurve[] = {0.01, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 0.99, 0.999, 0.9999};
  for (const auto& v : c.variants) {
    json runs = json::array();
    for (size_t i = 0; i < v.runs.size(); ++i) {
      const RunMetrics& r = v.runs[i];
      runs.push_back({{"iops", r.iops}, {"bytes_per_s", r.bytes_per_s}, {"ios", r.ios},
                      {"cpu_per_io_ns", opt(r.cpu_per_io_ns)}, {"p50_ns", opt(r.p50_ns)}, {"p99_ns", opt(r.p99_ns)},
                      {"sq_work_fraction", opt(r.sq_work)}, {"util_pct", opt(r.util_pct)}, {"busy_pct", opt(r.busy_pct)},
                      {"outlier", std::find(v.outliers.begin(), v.outliers.end(), i) != v.outliers.end()}});
    }
    json curve = json::array();
    if (v.latency && v.latency->count())
      for (double q : kCurve) curve.push_back({{"q", q}, {"ns", v.latency->quantile(q)}});
    variants.push_back({{"name", v.name},
                        {"args", v.args},
                        {"description", v.description},
                        {"engine_description", v.engine_desc},
                        {"baseline", v.baseline},
                        {"ratio", opt(v.ratio)},
                        {"verdict", verdict(v)},
                        {"rate_iops", opt(v.rate_iops)},
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
                        {"anatomy", anatomy_json(v, fig)},
                        {"runs", runs}});
  }
  return {{"context", context}, {"variants", variants}, {"interrupted", c.interrupted}, {"wall_s", c.wall_s}};
}

}  // namespace ioacct
