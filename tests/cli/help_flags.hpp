#pragma once
// What `ioacct --help` and `ioacct SUB --help` list: the one source the man
// pages, the completions and docs/cli.md are held to.
#include <set>
#include <string>
#include <vector>

namespace ioacct::test {

std::vector<std::string> help_subcommands();             // bench, compare, ...
std::set<std::string> help_flags(const std::string& sub);  // "--bs", "-d", ... (not -h/--help)

}  // namespace ioacct::test
