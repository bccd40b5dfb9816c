#include "common/output.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <thread>

#include "common/errors.hpp"

namespace ioacct {
namespace {

// A dangling symlink's final target: the path a new file would get there.
// Each link is read as open(2) would follow it, relative ones against their
// own directory. Returns `path` itself when it is not a link.
std::string final_target(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {  // as the kernel's MAXSYMLINKS
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    char buf[PATH_MAX];
    const ssize_t n = readlink(p.c_str(), buf, sizeof(buf) - 1);
    if (n <= 0) return p;
    const std::string to(buf, static_cast<size_t>(n));
    const size_t slash = p.rfind('/');
    if (to[0] == '/' || slash == std::string::npos) {
      p = to;
    } else {
      p.resize(slash + 1);
      p += to;
    }
  }
  return p;
}

// Where a report for `path` really goes, and how.
struct Destination {
  enum class Kind { File, Stream, Refused } kind = Kind::File;
  std::string path;  // File: the name to create or replace; Stream: to open
  std::string why;   // Refused: "is a directory; ..."
};

Destination destination(const std::string& path) {
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {Destination::Kind::File, final_target(path), {}};  // new, maybe through a link
  if (S_ISREG(st.st_mode)) {
    // A symlink stays a symlink: the file it names is replaced, not the link.
    const std::unique_ptr<char, void (*)(void*)> real(realpath(path.c_str(), nullptr), &std::free);
    return {Destination::Kind::File, real ? std::string(real.get()) : path, {}};
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return {Destination::Kind::Stream, path, {}};
  if (S_ISDIR(st.st_mode))
    return {Destination::Kind::Refused, path, "is a directory; give a file name in it"};
  if (S_ISBLK(st.st_mode))
    return {Destination::Kind::Refused, path,
            "is a block device, and a report written onto it would overwrite what it holds; give a file"};
  if (S_ISSOCK(st.st_mode))
    return {Destination::Kind::Refused, path, "is a socket, which cannot be opened by name; give a file, a FIFO or /dev/stdout"};
  return {Destination::Kind::Refused, path, "is not a regular file, character device or FIFO"};
}

// True once SIGINT, SIGTERM or SIGHUP is pending: the CLI keeps them blocked
// and collects them itself, so a wait here must look for them.
bool stop_pending() {
  sigset_t pending;
  sigemptyset(&pending);
  if (sigpending(&pending) != 0) return false;
  return sigismember(&pending, SIGINT) == 1 || sigismember(&pending, SIGTERM) == 1 ||
         sigismember(&pending, SIGHUP) == 1;
}

// Writes into a character device or FIFO as it is: no temporary name, no
// rename, nothing replaced. A FIFO's open waits for its reader, saying so
// once, and gives up on a stop signal.
void write_stream(const std::string& path, const std::string& text, const std::string& flag) {
  struct stat st {};
  const bool fifo = stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode);
  int fd = -1;
  bool told = false;
  for (;;) {
    fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY | (fifo ? O_NONBLOCK : 0));
    if (fd >= 0 || !fifo || errno != ENXIO) break;
    // Once the caller unblocks the signal it ends the process as a signal
    // does (128+N); the error is what is left if it is caught instead.
    if (stop_pending())
      throw RuntimeError(fmt::format("{}: {}: interrupted while waiting for a reader of the FIFO", flag, path));
    if (!told) {
      fmt::print(stderr, "ioacct: waiting for a reader of the FIFO {} ({})\n", path, flag);
      told = true;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  if (fd < 0) throw RuntimeError(fmt::format("{}: cannot write {}: {}", flag, path, errno_text(errno)));
  if (fifo) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);  // the report may be larger than the pipe
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      ::close(fd);
      throw RuntimeError(fmt::format("{}: writing {} failed: {}", flag, path, errno_text(e)));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
}

}  // namespace

void write_output(const std::string& text, const std::string& path, const std::string& flag) {
  if (!path.empty()) {
    write_atomically(path, text, flag);
    return;
  }
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) throw RuntimeError(fmt::format("cannot write to stdout: {}", errno_text(errno)));
}

void write_atomically(const std::string& given, const std::string& text, const std::string& flag) {
  const Destination d = destination(given);
  if (d.kind == Destination::Kind::Refused)  // it changed since check_output_writable()
    throw RuntimeError(fmt::format("{}: {}: {}", flag, given, d.why));
  if (d.kind == Destination::Kind::Stream) {
    write_stream(d.path, text, flag);
    return;
  }
  const std::string& path = d.path;
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

void check_output_writable(const std::string& flag, const std::string& given) {
  const Destination d = destination(given);
  if (d.kind == Destination::Kind::Refused) throw UsageError(fmt::format("{}: {}: {}", flag, given, d.why));
  if (d.kind == Destination::Kind::Stream) {
    if (::access(d.path.c_str(), W_OK) != 0)
      throw UsageError(fmt::format("{}: cannot write {}: {}", flag, given, errno_text(errno)));
    return;
  }
  // A new or replaced file: its directory must take the temporary name.
  const std::string& path = d.path;
  const std::string dir = path.find('/') == std::string::npos ? "." : path.substr(0, path.rfind('/') + 1);
  if (::access(dir.c_str(), W_OK) != 0 || (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) != 0))
    throw UsageError(fmt::format("{}: cannot write {}: {}", flag, given, errno_text(errno)));
}

}  // namespace ioacct
