#pragma once
// Reporters for `ioacct stat`: sinks that only read a StatReport. Console in
// iostat -x's layout (same columns, widths and order, then the exact ones);
// JSON lines, one object per report (docs/json-schema.md, "ioacct stat").
#include <nlohmann/json.hpp>
#include <map>
#include <optional>
#include <string>

#include "monitor/stat.hpp"

namespace ioacct {

inline constexpr int kStatSchemaVersion = 2;

struct StatFormat {
  bool latency = false;               // --latency columns
  std::optional<std::string> source;  // the tracker's source(); none: no exact columns
  std::optional<std::string> unavailable;  // why there is no tracker
  // iostat's -c and -d: which reports. The CPU one (avg-cpu) is printed only
  // when asked for, and then in the JSON too ("cpu").
  bool cpu = false;
  bool devices = true;
  // iostat's habits, console only (the JSON keeps its kB fields and layout):
  bool megabytes = false;  // -m: rMB/s, wMB/s, dMB/s = kB/s / 1024 (request sizes stay in kB, as iostat's)
  bool human = false;      // -h: iostat -h --compact: sizes with a unit (12.0k, 85.3M), percentages with '%',
                           // the device name last
  std::optional<std::string> time_format;  // -t: strftime format of a local-time line before each report
  // -N: the name to print for a device (dm-0 -> vg-root), console and JSON;
  // a device not in the map prints its kernel name.
  std::map<std::string, std::string> names;
};

// One report: header line, one line per device, a blank line (as iostat).
// The exact columns print "-" where nothing was measured (the since-boot
// report, or no tracker).
std::string format_stat_console(const StatReport& r, const StatFormat& f);
nlohmann::json stat_to_json(const StatReport& r, const StatFormat& f);

}  // namespace ioacct
