#include "common/files.hpp"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>

#include "common/errors.hpp"
#include "common/units.hpp"

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

namespace {

const char* kind_of(mode_t m) {
  if (S_ISFIFO(m)) return "a FIFO";
  if (S_ISSOCK(m)) return "a socket";
  if (S_ISCHR(m)) return "a character device";
  if (S_ISBLK(m)) return "a block device";
  return "a file";
}

std::string span(std::chrono::milliseconds d) {
  return d.count() % 1000 ? fmt::format("{} ms", d.count()) : fmt::format("{} s", d.count() / 1000);
}

}  // namespace

std::optional<std::string> read_user_file(const std::string& path, size_t limit, std::string& error,
                                          std::chrono::milliseconds idle, int* errno_out) {
  if (errno_out) *errno_out = 0;
  auto fail = [&](int err, std::string why) -> std::optional<std::string> {
    if (errno_out) *errno_out = err;
    error = std::move(why);
    return std::nullopt;
  };
  // O_NONBLOCK: opening a FIFO would otherwise wait for a writer, for ever.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return fail(errno, errno_text(errno));
  struct stat st {};
  if (fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return fail(e, errno_text(e));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return fail(EISDIR, errno_text(EISDIR));
  }
  const bool stream = !S_ISREG(st.st_mode);
  std::string text;
  char buf[65536];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN && stream) {
      pollfd p{fd, POLLIN, 0};
      const int r = ::poll(&p, 1, static_cast<int>(idle.count()));
      if (r < 0 && errno == EINTR) continue;
      if (r < 0) {
        const int e = errno;
        ::close(fd);
        return fail(e, errno_text(e));
      }
      if (r == 0) {
        ::close(fd);
        return fail(0, fmt::format("{} that sent nothing for {}; give a regular file", kind_of(st.st_mode), span(idle)));
      }
      continue;
    }
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return fail(e, errno_text(e));
    }
    if (n == 0) {
      // A FIFO nobody has opened for writing reads as ended at once: say so
      // rather than call it empty.
      if (stream && S_ISFIFO(st.st_mode) && text.empty()) {
        pollfd p{fd, POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(idle.count()));
        if (r > 0 && (p.revents & POLLIN)) continue;
        if (r == 0) {
          ::close(fd);
          return fail(0, fmt::format("a FIFO that nobody wrote to for {}; give a regular file", span(idle)));
        }
      }
      break;
    }
    text.append(buf, static_cast<size_t>(n));
    if (text.size() > limit) {
      ::close(fd);
      return fail(0, fmt::format("larger than {}", format_size(limit)));
    }
  }
  ::close(fd);
  return text;
}

}  // namespace ioacct
