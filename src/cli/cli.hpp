#pragma once
// The command line. The only place that maps errors to exit codes:
//   0 ok, 1 runtime error, 2 usage error, 128+N killed by signal N (130 Ctrl-C).
#include <initializer_list>
#include <string>
#include <span>
#include <string_view>
#include <vector>

#include "report/format.hpp"

namespace ioacct {

inline constexpr int kExitOk = 0, kExitRuntime = 1, kExitUsage = 2;

int run_cli(int argc, char** argv);

// Throws UsageError "FLAG: 'VALUE' is not one of A, B" unless `value` is one
// of `choices`.
void require_one_of(std::string_view flag, const std::string& value, std::initializer_list<std::string_view> choices);

// --format's word as a Format, once per command: throws UsageError
// "FLAG: 'VALUE' is not one of console, json" unless it names one of
// `choices` (the sinks the command has).
Format parse_format(std::string_view flag, const std::string& value, const std::vector<Format>& choices);
// The formats of a table of sinks (bench_sinks(), compare_sinks()), in its order.
template <class Sink>
std::vector<Format> formats_of(std::span<const Sink> sinks) {
  std::vector<Format> out;
  out.reserve(sinks.size());
  for (const Sink& s : sinks) out.push_back(s.format);
  return out;
}

}  // namespace ioacct
