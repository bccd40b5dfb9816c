#include "cli/inputs.hpp"

#include <fmt/format.h>
#include <glob.h>
#include <sys/stat.h>

#include <algorithm>

#include "common/errors.hpp"

namespace ioacct {
namespace {

// glob(3)'s matches, sorted (GLOB_NOSORT off); empty when none.
std::vector<std::string> glob_paths(const std::string& pattern) {
  glob_t g{};
  std::vector<std::string> out;
  // The command line is expanded before any thread starts.
  if (glob(pattern.c_str(), GLOB_ERR, nullptr, &g) == 0)  // NOLINT(concurrency-mt-unsafe)
    for (size_t i = 0; i < g.gl_pathc; ++i) out.emplace_back(g.gl_pathv[i]);
  globfree(&g);
  return out;
}

}  // namespace

std::vector<std::string> expand_input(const std::string& word, bool dirs) {
  struct stat st {};
  if (dirs && stat(word.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
    std::vector<std::string> files = glob_paths((word.back() == '/' ? word : word + "/") + "*.json");
    std::erase_if(files, [](const std::string& f) {
      struct stat s {};
      return stat(f.c_str(), &s) != 0 || !S_ISREG(s.st_mode);
    });
    if (files.empty()) throw UsageError(fmt::format("{}: a directory with no .json file in it", word));
    return files;
  }
  if (word.find_first_of("*?[") == std::string::npos) return {word};
  if (stat(word.c_str(), &st) == 0) return {word};  // a file whose name has a '*' in it
  std::vector<std::string> files = glob_paths(word);
  if (files.empty()) throw UsageError(fmt::format("{}: no file matches", word));
  return files;
}

}  // namespace ioacct
