#pragma once
// `stat --by`: the who tables and their JSON, sinks that only read a
// StatReport's rows (docs/json-schema.md, "who").
#include <nlohmann/json.hpp>
#include <string>

#include "monitor/stat.hpp"

namespace ioacct {

// "cgroup" or "process".
const char* who_by_name(BusyBy by);

// One table per device after the device report: its cgroups or processes
// by busy share. Nothing when the report has no attribution (since boot, no
// tracker).
std::string format_who_console(const StatReport& r, double interval_s);

// A device's `who` array: one object per row, in the rows' order.
nlohmann::json who_to_json(const std::vector<WhoRow>& rows, BusyBy by, double window_s);

}  // namespace ioacct
