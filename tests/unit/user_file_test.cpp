// read_user_file() on what a user may name as a job file or configuration:
// a regular file, a pipe that sends at once, a FIFO written late, and a FIFO
// nobody writes (which must end, not hang the run).
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <string>
#include <thread>

#include "common/files.hpp"

namespace ioacct {
namespace {

using std::chrono::milliseconds;

class Dir {
 public:
  Dir() {
    char tmpl[] = "/tmp/ioacct-user-file-XXXXXX";
    path_ = mkdtemp(tmpl);
  }
  ~Dir() { std::system(("rm -rf " + path_).c_str()); }  // NOLINT(cert-env33-c)
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

TEST(UserFile, ARegularFileIsReadWholeAndAnOversizedOneIsRefused) {
  Dir d;
  std::ofstream(d / "job.fio") << "[a]\nrw=read\n";
  std::string error;
  EXPECT_EQ(read_user_file(d / "job.fio", 100, error).value_or("?"), "[a]\nrw=read\n");
  EXPECT_FALSE(read_user_file(d / "job.fio", 4, error).has_value());
  EXPECT_EQ(error, "larger than 4 B");
  int err = -1;
  EXPECT_FALSE(read_user_file(d / "missing", 100, error, kUserFileIdle, &err).has_value());
  EXPECT_EQ(err, ENOENT);
  EXPECT_NE(error.find("ENOENT"), std::string::npos) << error;
  EXPECT_FALSE(read_user_file(d / "", 100, error).has_value());
  EXPECT_NE(error.find("EISDIR"), std::string::npos) << error;
}

TEST(UserFile, AFifoNobodyWritesEndsAfterTheIdleTimeAndOneWrittenLateIsRead) {
  Dir d;
  const std::string fifo = d / "fifo";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  std::string error;
  const auto t0 = std::chrono::steady_clock::now();
  EXPECT_FALSE(read_user_file(fifo, 100, error, milliseconds(200)).has_value());
  EXPECT_GE(std::chrono::steady_clock::now() - t0, milliseconds(200));
  EXPECT_EQ(error, "a FIFO that nobody wrote to for 200 ms; give a regular file");

  std::thread writer([&] {
    std::this_thread::sleep_for(milliseconds(100));
    const int fd = ::open(fifo.c_str(), O_WRONLY);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::write(fd, "[a]\n", 4), 4);
    std::this_thread::sleep_for(milliseconds(100));  // a writer that pauses mid-file
    ASSERT_EQ(::write(fd, "rw=read\n", 8), 8);
    ::close(fd);
  });
  EXPECT_EQ(read_user_file(fifo, 100, error, milliseconds(10000)).value_or("?"), "[a]\nrw=read\n") << error;
  writer.join();
}

TEST(UserFile, APipeThatStopsSendingMidFileEnds) {
  int p[2];
  ASSERT_EQ(pipe(p), 0);
  ASSERT_EQ(::write(p[1], "[a]\n", 4), 4);
  std::string error;
  EXPECT_FALSE(read_user_file("/proc/self/fd/" + std::to_string(p[0]), 100, error, milliseconds(200)).has_value());
  EXPECT_EQ(error, "a FIFO that sent nothing for 200 ms; give a regular file");
  ::close(p[1]);
  ::close(p[0]);
}

}  // namespace
}  // namespace ioacct
