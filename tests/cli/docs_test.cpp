// docs/cli.md and `--help` name the same flags, subcommand by subcommand:
// every flag --help lists is documented in its section, and every flag the
// section defines (a table's first column, or a bold **`--flag`**) is one
// --help lists, unless the section says it is hidden from --help.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <sstream>

#include "cli/help_flags.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

std::string cli_md() {
  std::ifstream in(std::string(IOACCT_SOURCE_DIR) + "/docs/cli.md");
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// From the subcommand's "## " heading to the next one.
std::string section(const std::string& doc, const std::string& sub) {
  const std::string heading = sub == "bench" ? "## `ioacct bench` options\n" : "## `ioacct " + sub + "`\n";
  const size_t at = doc.find(heading);
  if (at == std::string::npos) return "";
  const size_t end = doc.find("\n## ", at + 1);
  return doc.substr(at, end == std::string::npos ? std::string::npos : end - at);
}

std::set<std::string> flags_in(const std::string& text) {
  std::set<std::string> out;
  const std::regex flag(R"(`(--?[A-Za-z][A-Za-z0-9.-]*))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), flag); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

// Flags a section defines: in a table's first cell, or bold; minus those it
// marks "(hidden from `--help`)".
std::set<std::string> defined_in(const std::string& sec) {
  std::set<std::string> out;
  std::istringstream in(sec);
  const std::regex bold(R"(\*\*(`[^*]+`)\*\*(.*))");
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("| `", 0) == 0) {
      for (const auto& f : flags_in(line.substr(1, line.find('|', 1) - 1))) out.insert(f);
    } else if (std::regex_search(line, m, bold) && m[2].str().find("hidden from `--help`") == std::string::npos) {
      for (const auto& f : flags_in(m[1])) out.insert(f);
    }
  }
  return out;
}

TEST(Docs, CliMdAndHelpNameTheSameFlags) {
  const std::string doc = cli_md();
  const auto subs = help_subcommands();
  ASSERT_GE(subs.size(), 6u);
  for (const std::string& sub : subs) {
    SCOPED_TRACE(sub);
    const std::string sec = section(doc, sub);
    ASSERT_FALSE(sec.empty()) << "docs/cli.md has no section for " << sub;
    const auto help = help_flags(sub);
    const auto mentioned = flags_in(sec);
    for (const auto& f : help) EXPECT_TRUE(mentioned.count(f)) << f << " is in --help but not in docs/cli.md";
    for (const auto& f : defined_in(sec)) EXPECT_TRUE(help.count(f)) << f << " is defined in docs/cli.md but not in --help";
  }
}

TEST(Docs, TheCheckCatchesAFlagMissingFromEitherSide) {
  const std::string sec = "## `ioacct x`\n| `--a N` | x |\n**`--hidden`** (hidden from `--help`). y\n**`--b`** (flag). z\n";
  EXPECT_EQ(defined_in(sec), (std::set<std::string>{"--a", "--b"}));
  EXPECT_EQ(flags_in(sec), (std::set<std::string>{"--a", "--b", "--hidden", "--help"}));
}

}  // namespace
}  // namespace ioacct::test
