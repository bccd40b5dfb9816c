#include "compare/summary.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "compare/headline.hpp"

namespace ioacct {

std::optional<double> busy_pct(const RunResult& r) {
  if (!r.accounting) return std::nullopt;
  for (const auto& d : r.accounting->devices)
    if (d.role == DeviceRole::Target) return d.busy_pct;  // the device %util is read from
  return std::nullopt;
}

namespace {

// What a run's or a job's thread total gives either: counts, rates, latency.
RunMetrics measure_total(const ThreadResult& t, uint64_t window_ns) {
  RunMetrics m;
  m.ios = t.ios;
  m.iops = per_s(t.ios, window_ns);
  m.bytes_per_s = per_s(t.bytes_read + t.bytes_written, window_ns);
  if (t.latency && t.latency->count()) {
    m.p50_ns = static_cast<double>(t.latency->quantile(0.5));
    m.p99_ns = static_cast<double>(t.latency->quantile(0.99));
    m.latency = t.latency;
  }
  return m;
}

}  // namespace

RunMetrics measure(const RunResult& r) {
  const ThreadResult& t = r.total;
  RunMetrics m = measure_total(t, r.window_ns);
  if (r.accounting && t.ios) {
    const auto& c = r.accounting->cpu;
    const double n = static_cast<double>(t.ios);
    m.cpu_per_io_ns = c.total_s * 1e9 / n;
    m.cpu_submit_ns = c.submitters_s * 1e9 / n;
    m.cpu_sq_ns = c.sq_threads_s * 1e9 / n;
    m.cpu_iowq_ns = c.iowq_s * 1e9 / n;
    m.cpu_other_ns = c.other_s * 1e9 / n;
  }
  if (r.accounting) {
    double cpu = 0, work = 0;
    bool all_work = !r.accounting->sq_threads.empty();
    for (const auto& sq : r.accounting->sq_threads) {
      cpu += sq.cpu_s;
      if (sq.work_s) work += *sq.work_s;
      else all_work = false;
    }
    if (all_work) m.sq_work = sq_work_ratio(work, cpu);
    for (const auto& d : r.accounting->devices)
      if (d.role == DeviceRole::Target) {
        m.util_pct = d.row.util;
        break;
      }
  }
  m.busy_pct = busy_pct(r);
  if (r.anatomy) {
    const AnatomyResult& a = *r.anatomy;
    AnatomyFigures f;
    f.flavor = a.flavor;
    f.unavailable = a.unavailable;
    if (!a.unavailable && a.linked) {
      const double n = static_cast<double>(a.linked);
      for (int i = 0; i < kAnatomyStages; ++i)
        if (a.stages[i].count()) f.stage_ns[i] = a.stages[i].mean() * static_cast<double>(a.stages[i].count()) / n;
      if (a.wakeup.count()) f.wakeup_ns = a.wakeup.mean() * static_cast<double>(a.wakeup.count()) / n;
    }
    m.anatomy = f;
  }
  return m;
}

RunMetrics measure(const JobResult& j) {
  const ThreadResult& t = j.total;
  RunMetrics m = measure_total(t, j.window_ns);
  if (j.cpu && t.ios) {
    const double n = static_cast<double>(t.ios);
    m.cpu_per_io_ns = j.cpu->total_s * 1e9 / n;
    m.cpu_submit_ns = j.cpu->submitters_s * 1e9 / n;
    m.cpu_sq_ns = j.cpu->sq_threads_s * 1e9 / n;
    m.cpu_iowq_ns = j.cpu->iowq_s * 1e9 / n;
  }
  return m;
}

namespace {

Figure figure(const std::vector<RunMetrics>& runs, const std::function<std::optional<double>(const RunMetrics&)>& get) {
  std::vector<double> v;
  for (const auto& r : runs)
    if (auto x = get(r)) v.push_back(*x);
  return {spread(v)};
}

void summarize_anatomy(VariantSummary& v) {
  v.anatomy = false;
  v.anatomy_unavailable.reset();
  for (const auto& r : v.runs) {
    if (!r.anatomy) continue;
    v.anatomy_flavor = r.anatomy->flavor;
    if (r.anatomy->unavailable) {
      if (!v.anatomy_unavailable) v.anatomy_unavailable = r.anatomy->unavailable;
    } else {
      v.anatomy = true;
    }
  }
  if (v.anatomy) v.anatomy_unavailable.reset();
  for (int s = 0; s < kAnatomyStages; ++s)
    v.stage_ns[s] = figure(v.runs, [s](const RunMetrics& r) {
      return r.anatomy ? r.anatomy->stage_ns[s] : std::nullopt;
    });
  v.wakeup_ns = figure(v.runs, [](const RunMetrics& r) { return r.anatomy ? r.anatomy->wakeup_ns : std::nullopt; });
}

// Each repetition's stage times, for those that measured the anatomy.
std::vector<StageTimes> stage_times(const VariantSummary& v) {
  std::vector<StageTimes> out;
  for (const auto& r : v.runs)
    if (r.anatomy && !r.anatomy->unavailable) out.push_back(r.anatomy->stage_ns);
  return out;
}

}  // namespace

std::vector<double> iops_of(const VariantSummary& v, bool without_outliers) {
  std::vector<double> out;
  for (size_t i = 0; i < v.runs.size(); ++i)
    if (!without_outliers || std::find(v.outliers.begin(), v.outliers.end(), i) == v.outliers.end())
      out.push_back(v.runs[i].iops);
  return out;
}

void summarize(CompareResult& c) {
  for (auto& v : c.variants) {
    const std::vector<double> iops = iops_of(v);
    v.iops = {spread(iops)};
    v.outliers = outliers(iops);
    v.cpu_per_io_ns = figure(v.runs, [](const RunMetrics& r) { return r.cpu_per_io_ns; });
    v.cpu_submit_ns = figure(v.runs, [](const RunMetrics& r) { return r.cpu_submit_ns; });
    v.cpu_sq_ns = figure(v.runs, [](const RunMetrics& r) { return r.cpu_sq_ns; });
    v.cpu_iowq_ns = figure(v.runs, [](const RunMetrics& r) { return r.cpu_iowq_ns; });
    v.cpu_other_ns = figure(v.runs, [](const RunMetrics& r) { return r.cpu_other_ns; });
    v.p50_ns = figure(v.runs, [](const RunMetrics& r) { return r.p50_ns; });
    v.p99_ns = figure(v.runs, [](const RunMetrics& r) { return r.p99_ns; });
    v.sq_work = figure(v.runs, [](const RunMetrics& r) { return r.sq_work; });
    v.util_pct = figure(v.runs, [](const RunMetrics& r) { return r.util_pct; });
    v.busy_pct = figure(v.runs, [](const RunMetrics& r) { return r.busy_pct; });
    v.latency = std::make_shared<Histogram>();
    for (const auto& r : v.runs)
      if (r.latency) v.latency->merge(*r.latency);
    summarize_anatomy(v);
  }
  if (!c.variants.empty()) {
    const VariantSummary& b = c.variants[c.baseline];
    for (size_t i = 0; i < c.variants.size(); ++i) {
      VariantSummary& v = c.variants[i];
      v.baseline = i == c.baseline;
      v.stage_diff.reset();
      if (!v.baseline && v.anatomy && b.anatomy) v.stage_diff = stage_that_differs(stage_times(v), stage_times(b), c.rule.level);
      v.ratio_of_medians.reset();
      v.without_outliers.reset();
      if (v.iops.s && b.iops.s && b.iops.s->median > 0) v.ratio_of_medians = v.iops.s->median / b.iops.s->median;
      v.verdict = decide(iops_of(v), iops_of(b), c.rule);
      if (v.baseline) {
        v.verdict.kind = VerdictKind::Baseline;
        continue;
      }
      // The Hodges-Lehmann interval already shrugs off one wild repetition
      // among many; with few, an outlier can still move it, so the verdict is
      // also taken without them, and a disagreement is reported.
      if (!v.outliers.empty() || !b.outliers.empty())
        v.without_outliers = decide(iops_of(v, true), iops_of(b, true), c.rule);
    }
  }
  c.headline = headline(c);
}

}  // namespace ioacct
