#pragma once
// Fixtures the engine tests share: a real file of patterned blocks, and
// aligned (O_DIRECT-capable) buffers filled with a poison byte.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace ioacct::enginetest {

inline constexpr uint32_t kBlock = 4096;
inline constexpr uint8_t kPoison = 0xEE;  // what a buffer holds before any read

// Byte i of block b: a pattern that differs per block and per byte.
inline uint8_t pattern(uint64_t block, size_t i) { return static_cast<uint8_t>((block * 131 + i * 7 + 3) & 0xff); }

struct AlignedBuf {
  explicit AlignedBuf(size_t n) : p(static_cast<uint8_t*>(std::aligned_alloc(4096, n))), size(n) { std::memset(p, kPoison, n); }
  ~AlignedBuf() { std::free(p); }
  AlignedBuf(const AlignedBuf&) = delete;
  AlignedBuf& operator=(const AlignedBuf&) = delete;
  uint8_t* p;
  size_t size;
};

class TempFile {
 public:
  // A file of `blocks` patterned blocks plus `tail` extra patterned bytes.
  explicit TempFile(uint64_t blocks, size_t tail = 0) {
    const char* dir = std::getenv("TMPDIR");
    path_ = std::string(dir && *dir ? dir : "/var/tmp") + "/ioacct-engine-XXXXXX";
    int fd = mkstemp(path_.data());
    EXPECT_GE(fd, 0) << strerror(errno);
    std::vector<uint8_t> buf(kBlock);
    for (uint64_t b = 0; b <= blocks; ++b) {
      const size_t n = b < blocks ? kBlock : tail;
      for (size_t i = 0; i < n; ++i) buf[i] = pattern(b, i);
      if (n) {
        EXPECT_EQ(pwrite(fd, buf.data(), n, static_cast<off_t>(b * kBlock)), static_cast<ssize_t>(n));
      }
    }
    fsync(fd);
    close(fd);
  }
  ~TempFile() { unlink(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  int open(int flags) const { return ::open(path_.c_str(), flags | O_CLOEXEC); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

}  // namespace ioacct::enginetest
