#pragma once
// Reporters for `ioacct compare`: sinks that only read a CompareResult. The
// table for people (console), JSON for scripts (docs/json-schema.md,
// "ioacct compare"), CSV and Markdown for spreadsheets and write-ups, and the
// self-contained HTML report (html_report.hpp).
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "compare/summary.hpp"
#include "report/format.hpp"

namespace ioacct {

// 2: verdicts from the ratio's interval (ratio is the median of pairwise
// ratios, the Hodges-Lehmann estimate; ratio_ci, verdict_text, repeat_needed,
// without_outliers), the headline, per-variant options and latency
// histograms, per-run CPU split. Added within 2: reversal,
// repeat_out_of_reach, repeat_needed_s, verdict_rule.ratio and .spread.
inline constexpr int kCompareSchemaVersion = 2;

std::string format_compare_console(const CompareResult& c);
std::string format_compare_csv(const CompareResult& c);
std::string format_compare_markdown(const CompareResult& c);
// `context` is the bench context block (host, kernel, version, command line);
// its per-run "options" are left out: each variant has its own.
nlohmann::json compare_json(const CompareResult& c, nlohmann::json context);

// compare's --format sinks: console, json, csv, markdown, each with its
// renderer (`context` as compare_json's; only json prints it).
struct CompareSink {
  Format format;
  std::string (*render)(const CompareResult& c, const nlohmann::json& context);
};
std::span<const CompareSink> compare_sinks();
// The text of `f`'s sink; throws std::logic_error for a Format compare has no sink for.
std::string render_compare(Format f, const CompareResult& c, const nlohmann::json& context);

// The table as text: a header row, then one row per variant (the console,
// Markdown and HTML tables are all this). kTextColumns are words, the rest figures.
std::vector<std::vector<std::string>> compare_table(const CompareResult& c);
// With --anatomy: the stages' time per I/O, variants across, and for each
// variant against the baseline stage_diff_text ("" without --anatomy).
std::string format_compare_anatomy(const CompareResult& c);
// A stage named only when its difference lies outside the run-to-run
// spread: "the stage that differs most beyond the run-to-run spread is
// completion (-111.0 µs per I/O, 95% CI -115.2 µs to -108.0 µs)", else "no
// stage stands out: ..." with why (within the spread, or too few repetitions).
std::string stage_diff_text(const StageDiff& d, AnatomyFlavor flavor, const VerdictRule& rule);
bool is_text_column(size_t i);
// The verdicts that need a word more (not resolved, outliers that change
// them, a ratio on the other side of 1 from the medians), each outlier, and
// what the columns mean: one line each.
std::string compare_notes(const CompareResult& c);

// The verdict column: "baseline", "faster", "slower", "no difference",
// "not resolved (--repeat 12)" ("(12 runs)" for saved files, "(too noisy)"
// past advice_reach), "-"; a trailing '*' when the verdict without outliers
// differs.
std::string verdict_cell(const VariantSummary& v, const VerdictRule& rule);

// The label of the ratio column, the same in every format: the verdict's
// figure, not the ratio of the medians beside it.
inline constexpr const char* kRatioLabel = "median of pairwise ratios";

}  // namespace ioacct
