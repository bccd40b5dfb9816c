#include "common/output.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "common/errors.hpp"

namespace ioacct {

void write_output(const std::string& text, const std::string& path, const std::string& flag) {
  if (!path.empty()) {
    write_atomically(path, text, flag);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) throw RuntimeError(fmt::format("cannot write to stdout: {}", errno_text(errno)));
}

void write_atomically(const std::string& path, const std::string& text, const std::string& flag) {
  const std::string tmp = fmt::format("{}.tmp.{}", path, getpid());
  {
    std::ofstream f(tmp, std::ios::trunc);
    if (!f) throw RuntimeError(fmt::format("{}: cannot write {}: {}", flag, path, errno_text(errno)));
    f << text;
    f.flush();
    if (!f) {
      ::unlink(tmp.c_str());
      throw RuntimeError(fmt::format("{}: writing {} failed", flag, path));
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int e = errno;
    ::unlink(tmp.c_str());
    throw RuntimeError(fmt::format("{}: cannot rename {} to {}: {}", flag, tmp, path, errno_text(e)));
  }
}

void check_output_writable(const std::string& flag, const std::string& path) {
  const std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
  if (::access(dir.c_str(), W_OK) != 0 || (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) != 0))
    throw UsageError(fmt::format("{}: cannot write {}: {}", flag, path, errno_text(errno)));
}

}  // namespace ioacct
