#pragma once
// The command line. The only place that maps errors to exit codes:
//   0 ok, 1 runtime error, 2 usage error, 128+N killed by signal N (130 Ctrl-C).
#include <initializer_list>
#include <string>
#include <string_view>

namespace ioacct {

inline constexpr int kExitOk = 0, kExitRuntime = 1, kExitUsage = 2;

int run_cli(int argc, char** argv);

// Throws UsageError "FLAG: 'VALUE' is not one of A, B" unless `value` is one
// of `choices`.
void require_one_of(std::string_view flag, const std::string& value, std::initializer_list<std::string_view> choices);

}  // namespace ioacct
