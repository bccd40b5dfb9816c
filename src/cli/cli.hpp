#pragma once
// The command line. The only place that maps errors to exit codes:
//   0 ok, 1 runtime error, 2 usage error, 128+N killed by signal N (130 Ctrl-C).
namespace ioacct {

inline constexpr int kExitOk = 0, kExitRuntime = 1, kExitUsage = 2;

int run_cli(int argc, char** argv);

}  // namespace ioacct
