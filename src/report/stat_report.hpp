#pragma once
// Reporters for `ioacct stat`: sinks that only read a StatReport. Console in
// iostat -x's layout (same columns, widths and order, then the exact ones);
// JSON lines, one object per report (docs/json-schema.md, "ioacct stat").
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "monitor/stat.hpp"

namespace ioacct {

inline constexpr int kStatSchemaVersion = 2;

struct StatFormat {
  bool latency = false;               // --latency columns
  std::optional<std::string> source;  // the tracker's source(); none: no exact columns
  std::optional<std::string> unavailable;  // why there is no tracker
};

// One report: header line, one line per device, a blank line (as iostat).
// The exact columns print "-" where nothing was measured (the since-boot
// report, or no tracker).
std::string format_stat_console(const StatReport& r, const StatFormat& f);
nlohmann::json stat_to_json(const StatReport& r, const StatFormat& f);

}  // namespace ioacct
