#pragma once
// Reporters for `ioacct compare`: sinks that only read a CompareResult. The
// table for people (console), JSON for scripts (docs/json-schema.md,
// "ioacct compare"), CSV and Markdown for spreadsheets and write-ups, and the
// self-contained HTML report (html_report.hpp).
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/summary.hpp"

namespace ioacct {

inline constexpr int kCompareSchemaVersion = 1;

std::string format_compare_console(const CompareResult& c);
std::string format_compare_csv(const CompareResult& c);
std::string format_compare_markdown(const CompareResult& c);
// `context` is the bench context block (host, kernel, version, command line);
// its per-run "options" are left out: each variant has its own.
nlohmann::json compare_json(const CompareResult& c, nlohmann::json context);

// The table as text: a header row, then one row per variant (the console,
// Markdown and HTML tables are all this). Columns 0 and 4 are words, the rest figures.
std::vector<std::vector<std::string>> compare_table(const CompareResult& c);
// With --anatomy: the stages' time per I/O, variants across, and for each
// variant the stage that differs most from the baseline ("" without).
std::string format_compare_anatomy(const CompareResult& c);
// What the columns mean, and each outlier, one line each.
std::string compare_notes(const CompareResult& c);

// "baseline", "no clear difference", "faster", "slower": the verdict column.
std::string verdict(const VariantSummary& v);

}  // namespace ioacct
