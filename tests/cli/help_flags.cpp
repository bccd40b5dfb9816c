#include "cli/help_flags.hpp"

#include <regex>
#include <sstream>

#include "cli/run_binary.hpp"

namespace ioacct::test {

std::vector<std::string> help_subcommands() {
  std::vector<std::string> out;
  std::istringstream in(run_ioacct({"--help"}).out);
  bool in_list = false;
  for (std::string line; std::getline(in, line);) {
    if (line == "Subcommands:") in_list = true;
    else if (in_list && line.rfind("  ", 0) == 0) out.push_back(line.substr(2, line.find(' ', 2) - 2));
    else if (in_list && !line.empty()) in_list = false;
  }
  return out;
}

std::set<std::string> help_flags(const std::string& sub) {
  std::set<std::string> out;
  std::istringstream in(run_ioacct({sub, "--help"}).out);
  const std::regex option(R"(^  (-[^ ]+))");
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (!std::regex_search(line, m, option)) continue;
    // The help's own line ("-h,--help"; stat's "--help", where -h is iostat's
    // human-readable output and has a line of its own).
    if (m[1].str().find("--help") != std::string::npos) continue;
    std::istringstream names(m[1].str());
    for (std::string n; std::getline(names, n, ',');) out.insert(n);
  }
  return out;
}

}  // namespace ioacct::test
