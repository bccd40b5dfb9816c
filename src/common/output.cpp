#include "common/output.hpp"

#include <fcntl.h>
#include <sys/random.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <thread>

#include "common/errors.hpp"

namespace ioacct {
namespace {

// The directory `p` is in, as a link there is read against ("." for a bare
// name), and the name in it.
std::string dir_of(const std::string& p) {
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}
std::string base_of(const std::string& p) {
  const size_t slash = p.rfind('/');
  return slash == std::string::npos ? p : p.substr(slash + 1);
}

// Why the symlink `link` (lstat()ed as `st`) is not followed, or "" when it
// may be. The rule of fs.protected_symlinks, kept whatever the sysctl says: a
// link in a sticky world-writable directory (/tmp) is followed only when it
// is the caller's own or the directory owner's. Anyone can plant a name
// there, and root writing through it would write wherever the planter chose.
std::string foreign_link(const std::string& link, const struct stat& st) {
  const std::string dir = dir_of(link);
  struct stat d {};
  if (stat(dir.c_str(), &d) != 0) return {};  // nothing can be made there either; the open says why
  const bool shared = (d.st_mode & (S_ISVTX | S_IWOTH)) == (S_ISVTX | S_IWOTH);
  if (!shared || st.st_uid == geteuid() || st.st_uid == d.st_uid) return {};
  return fmt::format("a symlink owned by uid {} in the sticky world-writable directory {}", st.st_uid, dir);
}

// The links at the end of a path, followed as open(2) would (relative ones
// against their own directory), up to what they lead to: the file or the
// name a new file would get. `refused` says why not, when a link on the way
// is someone else's (foreign_link()).
struct Followed {
  std::string path;
  std::string refused;
};

Followed follow_links(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {  // as the kernel's MAXSYMLINKS
    struct stat st {};
    if (lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return {p, {}};
    if (const std::string who = foreign_link(p, st); !who.empty()) {
      const std::string what = hops == 0 ? "is " + who : fmt::format("leads to {}, {}", p, who);
      return {p, what + "; ioacct does not follow it (remove it or give another name)"};
    }
    std::array<char, PATH_MAX> buf{};
    const ssize_t n = readlink(p.c_str(), buf.data(), buf.size() - 1);
    if (n <= 0) return {p, {}};
    const std::string to(buf.data(), static_cast<size_t>(n));
    const size_t slash = p.rfind('/');
    if (to[0] == '/' || slash == std::string::npos) {
      p = to;
    } else {
      p.resize(slash + 1);
      p += to;
    }
  }
  return {p, {}};
}

// Where a report for `path` really goes, and how.
struct Destination {
  enum class Kind { File, Stream, Refused } kind = Kind::File;
  std::string path;  // File: the name to create or replace; Stream: to open
  std::string why;   // Refused: "is a directory; ..."
};

Destination destination(const std::string& path) {
  const Followed f = follow_links(path);
  if (!f.refused.empty()) return {Destination::Kind::Refused, path, f.refused};
  struct stat st {};
  if (stat(path.c_str(), &st) != 0) return {Destination::Kind::File, f.path, {}};  // new, maybe through a link
  if (S_ISREG(st.st_mode)) {
    // A symlink stays a symlink: the file it names is replaced, not the link.
    // (A /proc magic link reads as no path; realpath() knows the file.)
    struct stat at {};
    if (lstat(f.path.c_str(), &at) == 0 && S_ISREG(at.st_mode)) return {Destination::Kind::File, f.path, {}};
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

// A file descriptor, closed when it goes out of scope.
struct Fd {
  int fd = -1;
  explicit Fd(int f) : fd(f) {}
  Fd(const Fd&) = delete;
  Fd& operator=(const Fd&) = delete;
  ~Fd() {
    if (fd >= 0) ::close(fd);
  }
};

// All of `text` into `fd`: 0, or the errno of the write that failed.
int write_all(int fd, const std::string& text) {
  for (size_t done = 0; done < text.size();) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return n < 0 ? errno : EIO;
    done += static_cast<size_t>(n);
  }
  return 0;
}

// A name for the temporary file that nobody can guess ahead (a pid can be).
std::string random_name() {
  uint64_t r = 0;
  if (getrandom(&r, sizeof(r), 0) != static_cast<ssize_t>(sizeof(r))) r = std::random_device{}();
  return fmt::format(".ioacct-{:016x}.tmp", r);
}

// Gives the O_TMPFILE file `fd` the name `name` in `dir`, never replacing or
// following what is there (EEXIST): AT_EMPTY_PATH where the caller may
// (CAP_DAC_READ_SEARCH), else through /proc. Returns 0 or -errno.
int link_anonymous(int fd, int dir, const std::string& name) {
  if (::linkat(fd, "", dir, name.c_str(), AT_EMPTY_PATH) == 0) return 0;
  if (errno == EEXIST) return -EEXIST;
  const std::string proc = fmt::format("/proc/self/fd/{}", fd);
  return ::linkat(AT_FDCWD, proc.c_str(), dir, name.c_str(), AT_SYMLINK_FOLLOW) == 0 ? 0 : -errno;
}

// Writes a regular file whole: the text goes into a file with no name
// (O_TMPFILE), or, where the filesystem has none, into a new random name made
// with O_EXCL|O_NOFOLLOW; either way nothing already in the directory is
// opened, so a link planted there is never written through. The file then
// gets a random name and is renamed over `path`, replacing its last component
// (never following it) in one step.
void write_file(const std::string& path, const std::string& text, const std::string& flag) {
  const Fd dir(::open(dir_of(path).c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  if (dir.fd < 0) throw RuntimeError(fmt::format("{}: cannot write {}: {}", flag, path, errno_text(errno)));
  Fd f(::openat(dir.fd, ".", O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666));
  const bool anonymous = f.fd >= 0;
  std::string tmp;
  for (int tries = 0; !anonymous && f.fd < 0 && tries < 100; ++tries) {
    tmp = random_name();
    f.fd = ::openat(dir.fd, tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
    if (f.fd < 0 && errno != EEXIST) break;
  }
  if (f.fd < 0) throw RuntimeError(fmt::format("{}: cannot write {}: {}", flag, path, errno_text(errno)));
  const auto fail = [&](const std::string& what, int e) {
    if (!tmp.empty()) ::unlinkat(dir.fd, tmp.c_str(), 0);
    throw RuntimeError(fmt::format("{}: {}: {}", flag, what, errno_text(e)));
  };
  if (const int e = write_all(f.fd, text); e != 0) fail(fmt::format("writing {} failed", path), e);
  if (anonymous) {
    int r = -EEXIST;
    for (int tries = 0; r == -EEXIST && tries < 100; ++tries) {
      tmp = random_name();
      r = link_anonymous(f.fd, dir.fd, tmp);
    }
    if (r != 0) {
      tmp.clear();  // not made
      fail(fmt::format("cannot write {}", path), -r);
    }
  }
  const int closed = ::close(f.fd);  // where a delayed write error shows (NFS)
  f.fd = -1;
  if (closed != 0) fail(fmt::format("writing {} failed", path), errno);
  if (::renameat(dir.fd, tmp.c_str(), dir.fd, base_of(path).c_str()) != 0)
    fail(fmt::format("cannot rename {}/{} to {}", dir_of(path), tmp, path), errno);
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
  if (const int e = write_all(fd, text); e != 0) {
    ::close(fd);
    throw RuntimeError(fmt::format("{}: writing {} failed: {}", flag, path, errno_text(e)));
  }
  ::close(fd);
}

void write_stdout(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  if (std::fflush(stdout) != 0) throw RuntimeError(fmt::format("cannot write to stdout: {}", errno_text(errno)));
}

}  // namespace

void write_output(const std::string& text, const std::string& path, const std::string& flag) {
  if (path.empty()) {
    write_stdout(text);
    return;
  }
  try {
    write_atomically(path, text, flag);
  } catch (const RuntimeError& e) {
    // A full disk at the end of a long run must not cost its results.
    write_stdout(text);
    throw RuntimeError(fmt::format("{}; the results went to stdout instead", e.what()));
  }
}

void write_atomically(const std::string& given, const std::string& text, const std::string& flag) {
  const Destination d = destination(given);
  if (d.kind == Destination::Kind::Refused)  // it changed since check_output_writable()
    throw RuntimeError(fmt::format("{}: {}: {}", flag, given, d.why));
  if (d.kind == Destination::Kind::Stream) {
    write_stream(d.path, text, flag);
    return;
  }
  write_file(d.path, text, flag);
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
  if (::access(dir_of(path).c_str(), W_OK) != 0 || (::access(path.c_str(), F_OK) == 0 && ::access(path.c_str(), W_OK) != 0))
    throw UsageError(fmt::format("{}: cannot write {}: {}", flag, given, errno_text(errno)));
}

}  // namespace ioacct
