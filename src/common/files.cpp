#include "common/files.hpp"

#include <fstream>
#include <sstream>

namespace ioacct {

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

std::string read_first_line(const std::string& path, bool* ok) {
  std::ifstream f(path);
  std::string line;
  const bool got = f && std::getline(f, line);
  if (ok) *ok = got;
  return got ? line : std::string();
}

}  // namespace ioacct
