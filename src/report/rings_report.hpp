#pragma once
// Reporters for `ioacct rings`: sinks that only read a RingsView. Console for
// people (a top-like screen), JSON for scripts (docs/json-schema.md, "ioacct
// rings --format json").
#include <nlohmann/json.hpp>
#include <string>

#include "monitor/rings.hpp"

namespace ioacct {

// The rings document's own layout version, independent of bench's report.
inline constexpr int kRingsSchemaVersion = 1;

std::string format_rings_console(const RingsView& v);
nlohmann::json rings_to_json(const RingsView& v);

}  // namespace ioacct
