// Every bad input gives one line on stderr, "error: " naming the flag or the
// path, nothing on stdout, and the right exit code (2 usage, 1 runtime).
#include <gtest/gtest.h>
#include <sys/mount.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

struct ErrorCase {
  std::vector<std::string> args;
  std::string names;
};

TEST(BenchErrors, UsageErrorsNameTheFlagAndExit2) {
  TempDir dir;
  const std::vector<ErrorCase> cases = {
      {{"--frobnicate"}, "--frobnicate"},
      {{"--bs", "4q"}, "--bs"},
      {{"--bs", "4KB"}, "--bs"},
      {{"--bs", "0"}, "--bs"},
      {{"--bs", "1000"}, "--bs"},  // not a multiple of 512 with O_DIRECT
      {{"--runtime", "10"}, "--runtime"},
      {{"--runtime", "0s"}, "--runtime"},
      {{"--iodepth", "-1"}, "--iodepth"},
      {{"--iodepth", "0"}, "--iodepth"},
      {{"--iodepth", "65537"}, "--iodepth"},
      {{"-d", "abc"}, "--iodepth"},
      {{"--threads", "0"}, "--threads"},
      {{"--threads", "4", "--iodepth", "2"}, "--iodepth"},
      {{"--rw", "randomread"}, "--rw"},
      {{"--engine", "aio"}, "--engine"},
      {{"--rwmix-read", "101"}, "--rwmix-read"},
      {{"--ramp", "5"}, "--ramp"},
      {{"--ios", "0"}, "--ios"},
      {{"--rate-iops", "1k", "--rate", "4m"}, "--rate"},
      {{"--cpus", "0,0"}, "--cpus"},
      {{"--cpus", "4096"}, "--cpus"},
      {{"--format", "xml"}, "--format"},
      {{"--direct", "--buffered"}, "--buffered"},
      {{"--size", "1k", "--bs", "4k"}, "--size"},
      {{"--dir", "/nonexistent-ioacct-dir"}, "--dir"},
      {{"--runtime", ""}, "--runtime"},
      {{"--verify"}, "--verify"},                      // randread writes nothing to check
      {{"--verify-delay", "1s", "--rw", "write"}, "--verify-delay"},
      {{"--verify", "--rw", "write", "--bs", "4000", "--buffered"}, "--bs"},
      {{"--iodepth", "65536"}, "--iodepth"},             // more than one ring holds
      {{"--bssplit", "4k/0"}, "--bssplit"},
      {{"--bssplit", "4k/50:8k/50", "--bs", "8k"}, "--bssplit"},
      {{"--bssplit", "4k/50:1000/50"}, "--bssplit"},       // not a multiple of 512 with O_DIRECT
      {{"--bssplit", "4k/50:8k/50", "--verify", "--rw", "write"}, "--verify"},
  };
  for (const auto& c : cases) {
    auto args = c.args;
    args.insert(args.begin(), "bench");
    std::string joined;
    for (const auto& a : args) joined += a + " ";
    SCOPED_TRACE(joined);
    expect_refused(run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}}), {c.names});
    EXPECT_TRUE(dir.entries().empty()) << "left files behind";
  }
}

TEST(BenchErrors, BadTargetsNameThePath) {
  TempDir dir;
  const std::string missing = dir.path() + "/missing";
  expect_refused(run_ioacct({"bench", missing}), {missing});
  expect_refused(run_ioacct({"bench", dir.path()}), {dir.path()});
  const std::string tiny = dir.path() + "/tiny";
  std::ofstream(tiny) << std::string(100, 'x');
  expect_refused(run_ioacct({"bench", "--buffered", tiny}), {tiny});
  const std::string big = dir.path() + "/big";
  sh("truncate -s 1m " + big);
  expect_refused(run_ioacct({"bench", "--size", "2m", big}), {"--size"});
  expect_refused(run_ioacct({"bench", "--offset", "1m", big}), {"--offset"});
  expect_refused(run_ioacct({"bench", "--dir", dir.path(), big}), {"--dir"});
}

TEST(BenchErrors, TargetNotPermittedIsARuntimeError) {
  TempDir dir;
  const std::string f = dir.path() + "/secret";
  sh("head -c 1048576 /dev/urandom > " + f + " && chmod 600 " + f + " && chmod 755 " + dir.path());
  // As an unprivileged user: root would be allowed to read anything.
  auto o = run_ioacct({"bench", "--buffered", "--runtime", "1s", f},
                      {.prefix = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}});
  expect_refused(o, {f}, 1);
  EXPECT_NE(o.err.find("Permission denied"), std::string::npos) << o.err;
}

TEST(BenchErrors, DirectOnAFilesystemWithoutODirectSuggestsBuffered) {
  // ramfs has no O_DIRECT (tmpfs gained it in 6.6, so it no longer serves).
  TempDir dir;
  ASSERT_EQ(mount("ramfs", dir.path().c_str(), "ramfs", 0, nullptr), 0) << "mount ramfs: " << strerror(errno);
  const std::string f = dir.path() + "/f";
  sh("head -c 1048576 /dev/urandom > " + f);
  auto o = run_ioacct({"bench", "--runtime", "1s", f});
  expect_refused(o, {"--buffered"});
  auto t = run_ioacct({"bench", "--runtime", "1s", "--size", "1m", "--dir", dir.path()});
  expect_refused(t, {"--buffered"});
  umount(dir.path().c_str());
}

TEST(BenchErrors, IoUringMissingSuggestsPsync) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--size", "1m", "--runtime", "1s"},
                      {.env = {"TMPDIR=" + dir.path()}, .seccomp_deny_uring = true});
  expect_refused(o, {"--engine psync"}, 1);
  EXPECT_NE(o.err.find("ENOSYS"), std::string::npos) << o.err;
  EXPECT_TRUE(dir.entries().empty());
  // The psync engine needs no io_uring and still runs.
  auto p = run_ioacct({"bench", "--engine", "psync", "--size", "1m", "--runtime", "200ms"},
                      {.env = {"TMPDIR=" + dir.path()}, .seccomp_deny_uring = true});
  EXPECT_EQ(p.exit_code, 0) << p.err;
}

TEST(BenchErrors, IoUringDisabledBySysctlNamesIt) {
  std::ifstream f("/proc/sys/kernel/io_uring_disabled");
  std::string old;
  if (!(f >> old)) GTEST_SKIP() << "kernel.io_uring_disabled does not exist on this kernel (before 6.6)";
  TempDir dir;
  sh("sysctl -q kernel.io_uring_disabled=2");
  auto o = run_ioacct({"bench", "--size", "1m", "--runtime", "1s"}, {.env = {"TMPDIR=" + dir.path()}});
  sh("sysctl -q kernel.io_uring_disabled=" + old);
  expect_refused(o, {"kernel.io_uring_disabled=2"}, 1);
  EXPECT_NE(o.err.find("--engine psync"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ioacct::test
