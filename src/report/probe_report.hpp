#pragma once
// Reporters for `ioacct probe`: sinks that only read a ProbeResult. Console
// for people (one screen), JSON for scripts (docs/json-schema.md, "ioacct
// probe --format json").
#include <nlohmann/json.hpp>
#include <string>

#include "engine/probe.hpp"

namespace ioacct {

// The probe document's own layout version, independent of bench's report.
inline constexpr int kProbeSchemaVersion = 1;

std::string format_probe_console(const ProbeResult& r);
nlohmann::json probe_to_json(const ProbeResult& r);

}  // namespace ioacct
