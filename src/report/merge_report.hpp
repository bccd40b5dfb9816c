#pragma once
// `ioacct merge`'s reporters: the merged result as a bench JSON document (the
// same schema, so that compare, --report and other readers take it as one
// run), the console's per-host table beside the total, and the one line on
// stderr that says how well the windows lined up.
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "compare/merge.hpp"

namespace ioacct {

// `first_context` is the first host's context block, whose options and
// layout the merged document keeps; `argv` is the merge's command line.
nlohmann::json merged_json(const MergedRun& m, const nlohmann::json& first_context, const std::vector<std::string>& argv);
// The per-host table, the total, and the windows (overlap, skew, clocks).
std::string merged_console(const MergedRun& m);
// "merged 4 hosts: windows overlap 1.00 s of 1.00 s; opened 0.61 ms apart, closed ...; clocks ..."
std::string merged_summary_line(const MergedRun& m);

}  // namespace ioacct
