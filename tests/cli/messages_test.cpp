// Messages that name the real cause, in plain English: each case here was
// found wrong by a test pass.
#include <gtest/gtest.h>
#include <signal.h>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

const std::vector<std::string> kNobody = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"};

TEST(Messages, OneIOIsSingular) {
  auto o = run_ioacct({"bench", "--engine", "nop", "--size", "1m", "--ios", "1"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.out.find("(1 I/O completed in the window)"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("1 I/Os"), std::string::npos) << o.out;
}

TEST(Messages, LongDurationsInHours) {
  auto o = run_ioacct({"bench", "--engine", "nop", "--size", "1m", "--ios", "5", "--runtime", "100000h"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("runtime 100000 h or 5 I/Os"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("360000000.00 s"), std::string::npos) << o.err;
}

TEST(Messages, SignatureTypeIsNotAWord) {
  TempDir dir;
  LoopDevice loop(dir.path());
  sh("mkfs.ext4 -q " + loop.path());
  auto o = run_ioacct({"bench", "--rw", "randwrite", "--runtime", "300ms", loop.path()});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find("carries a signature: ext4"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("a ext4"), std::string::npos) << o.err;
}

TEST(Messages, RamfsIsCalledRamfs) {
  TempDir mnt;
  Mount m("-t ramfs none", mnt.path());
  auto o = run_ioacct({"bench", "--ios", "10", "--dir", mnt.path()});
  EXPECT_EQ(o.exit_code, 2) << o.err;
  EXPECT_NE(o.err.find(mnt.path() + " is on ramfs, which refuses O_DIRECT; use --buffered"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("tmpfs"), std::string::npos) << o.err;
}

TEST(Messages, RingsPidIsAPlainNumber) {
  for (const char* pid : {"1k", "1K", "1.0"}) {
    SCOPED_TRACE(pid);
    auto o = run_ioacct({"rings", "--pid", pid});
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_EQ(o.err, std::string("error: --pid: cannot read '") + pid +
                         "' as a process id (plain decimal digits, no suffix)\n");
  }
  auto ok = run_ioacct({"rings", "--pid", "1"});
  EXPECT_EQ(ok.exit_code, 0) << ok.err;
  auto sq = run_ioacct({"bench", "--sqpoll", "--sq-cpu", "1k", "--engine", "nop", "--ios", "1"});
  EXPECT_EQ(sq.exit_code, 2) << sq.err;
  EXPECT_NE(sq.err.find("--sq-cpu: cannot read '1k' as a CPU number"), std::string::npos) << sq.err;
}

TEST(Messages, ExportWithoutBpfSpeaksOfBusyTimeNotColumns) {
  auto o = run_ioacct({"export", "--listen", "127.0.0.1:0"},
                      {.signal = SIGTERM, .signal_after = "no exact busy", .timeout_s = 30, .prefix = kNobody});
  EXPECT_NE(o.err.find("run as root (or grant those capabilities) for the exact busy time"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("columns"), std::string::npos) << o.err;
}

// Every write failed, so nothing was checked: never "0 blocks re-read ...
// all as written".
TEST(Messages, VerifyWithNothingWrittenSaysSo) {
  TempDir dir;
  const std::string f = dir.path() + "/f";
  sh("truncate -s 4m " + f);
  auto o = run_ioacct({"bench", "--rw", "randwrite", "--verify", "--ios", "64", "--max-errors", "64",
                       "--inject-faults", "eio=1", f});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.out.find("verify     nothing to check: no write of this run completed"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("all as written"), std::string::npos) << o.out;
}

}  // namespace
}  // namespace ioacct::test
