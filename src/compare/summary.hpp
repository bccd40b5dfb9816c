#pragma once
// From runs to the comparison table: the figures taken from each run
// (RunMetrics, plain data), and per variant their median, range, outliers and
// verdict against the baseline, then the headline. Pure: reporters read a
// CompareResult and nothing else.
#include <array>
#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "acct/cpu_power.hpp"
#include "acct/histogram.hpp"
#include "compare/stage_diff.hpp"
#include "compare/stats.hpp"
#include "compare/verdict.hpp"
#include "runner/result.hpp"
#include "workload/job.hpp"

namespace ioacct {

// --anatomy in one run: each stage's time per linked I/O (the stage's total
// over the linked I/Os' count, so that the stages add up to the end-to-end
// mean), or why there is none.
struct AnatomyFigures {
  AnatomyFlavor flavor = AnatomyFlavor::Uring;
  std::optional<std::string> unavailable;
  std::array<std::optional<double>, kAnatomyStages> stage_ns{};
  std::optional<double> wakeup_ns;  // the wake-up's share of the completion, per linked I/O
};

// What one run measured, in the table's units. A figure that the run could
// not measure (--acct off, no SQ thread, no device) is empty, never 0.
struct RunMetrics {
  double iops = 0, bytes_per_s = 0;
  uint64_t ios = 0;
  std::optional<double> cpu_per_io_ns;             // every thread of the process, SQ threads and io-wq included (schedstat)
  std::optional<double> cpu_submit_ns, cpu_sq_ns, cpu_iowq_ns, cpu_other_ns;  // its split, per I/O
  std::optional<double> p50_ns, p99_ns;            // submission to reaping
  std::optional<double> sq_work;                   // SQ threads' useful work / their CPU (0..1)
  std::optional<double> util_pct;                  // the first target device's %util (io_ticks)
  std::optional<double> busy_pct;                  // see busy_pct()
  std::shared_ptr<const Histogram> latency;        // for the percentile curves
  std::optional<AnatomyFigures> anatomy;           // with --anatomy
};

// The busy% column, read in one place: the first target device's exact busy
// time over the window (eBPF, block_io_start..block_io_done: the span that
// diskstats accounts, so it stands beside %util of the same device and counts
// the same I/O, other programs' too). None without --acct full, without BPF
// permission, or without a block device under the targets.
std::optional<double> busy_pct(const RunResult& r);
inline constexpr const char* kBusySource =
    "the exact time the first target device had I/O in flight (eBPF, every I/O on it, like %util)";

RunMetrics measure(const RunResult& r);
// One job of a run with several, over its own window: its I/O, latency and
// CPU (its threads and the kernel threads working for them; no "other").
// Device figures are the whole run's and stay empty here.
RunMetrics measure(const JobResult& j);

// One figure over a variant's measured repetitions (warm-ups excluded).
struct Figure {
  std::optional<Spread> s;  // none when no repetition measured it
};

struct VariantSummary {
  std::string name;
  std::vector<std::string> args;   // the bench words that made it
  std::string description;         // "randread 4 KiB O_DIRECT, uring, depth 1"
  std::string engine_desc;         // as the engine described itself
  std::vector<RunMetrics> runs;    // measured repetitions, in the order run
  std::vector<size_t> outliers;    // indices into runs (by IOPS, MAD rule)
  Figure iops, cpu_per_io_ns, cpu_submit_ns, cpu_sq_ns, cpu_iowq_ns, cpu_other_ns, p50_ns, p99_ns, sq_work,
      util_pct, busy_pct;
  std::optional<double> rate_iops;       // pacing asked for (all threads), if any
  // Median IOPS / the baseline's: not the verdict's figure (the median of
  // pairwise ratios), and on the other side of 1 from it where
  // verdict.reversal says so.
  std::optional<double> ratio_of_medians;
  bool baseline = false;
  // IOPS against the baseline's, every repetition (Baseline for the baseline
  // itself); and again without the outliers of either, when there are any.
  Verdict verdict;
  std::optional<Verdict> without_outliers;
  std::shared_ptr<Histogram> latency;    // every measured repetition's, merged
  std::vector<std::string> sources;      // saved-run compare: the files it came from
  // The job as run: typed for a comparison run now (`job`), as its document
  // states it for a saved one (`options`, bench JSON's context.options);
  // null if unknown. The JSON reporter prints either the same way. Shared
  // and immutable (and pointers, so that moving a summary cannot throw).
  std::shared_ptr<const JobSpec> job;
  std::shared_ptr<const nlohmann::json> options;
  // --anatomy: each stage's time per I/O over the repetitions that measured
  // it, and against the baseline the stage that differs beyond the stages'
  // run-to-run spread (stage_diff.hpp): none for the baseline, or without
  // figures on both sides.
  bool anatomy = false;
  AnatomyFlavor anatomy_flavor = AnatomyFlavor::Uring;
  std::optional<std::string> anatomy_unavailable;  // the first repetition's reason, when none measured
  std::array<Figure, kAnatomyStages> stage_ns{};
  Figure wakeup_ns;
  std::optional<StageDiff> stage_diff;
};

struct CompareResult {
  std::string preset;                  // "" when none
  std::string question;                // the preset's question, "" when none
  std::string explanation;             // printed with the preset's result
  std::vector<VariantSummary> variants;
  size_t baseline = 0;
  VerdictRule rule;
  std::string headline;                // one sentence: the answer (headline.hpp)
  std::vector<std::string> warnings;   // saved runs: contexts that differ (saved.hpp)
  unsigned repeat = 0, warmup = 0;     // measured rounds run (--until-resolved adds to --repeat), warm-ups
  unsigned repeat_asked = 0;           // --repeat as given; 0 for saved runs
  std::string rounds_note;             // --until-resolved: why no further round was run
  bool interrupted = false;
  double wall_s = 0;                   // the whole comparison, as measured
  std::vector<std::string> argv;
  std::vector<TargetInfo> targets;
  // This machine's cpufreq and cpuidle drivers, read for a comparison run
  // now; none for saved runs (they may come from another machine). The qd1
  // headline needs them to say whether iowait can change speed here.
  std::optional<CpuPower> cpu_power;
};

// Fills every Figure, the outliers, ratios, verdicts and the headline from
// each variant's `runs`.
void summarize(CompareResult& c);

// The IOPS of a variant's repetitions, all of them or without its outliers.
std::vector<double> iops_of(const VariantSummary& v, bool without_outliers = false);

}  // namespace ioacct
