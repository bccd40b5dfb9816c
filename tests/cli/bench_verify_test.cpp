// --verify: what was written must read back, and a block damaged behind
// ioacct's back must be reported, exactly that block, with its offset.
#include <fcntl.h>
#include <signal.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

TEST(BenchVerify, CleanRunReadsBackEverything) {
  TempDir dir;
  const std::string f = dir.path() + "/data";
  sh("head -c 4194304 /dev/urandom > " + f);
  auto o = run_ioacct({"bench", "--format", "json", "--rw", "randrw", "--verify-during", "--ios", "4000",
                       "--threads", "2", "--iodepth", "16", f});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json& v = j["results"]["verify"];
  EXPECT_EQ(v["mismatches"], 0);
  EXPECT_GT(v["checked_after"].get<uint64_t>(), 500u);
  EXPECT_GT(v["checked_during"].get<uint64_t>(), 0u) << "reads of written blocks were checked";
  EXPECT_NE(o.err.find("verifying"), std::string::npos);
}

TEST(BenchVerify, DamagedBlocksAreReportedWithTheirOffsets) {
  TempDir dir;
  const std::string f = dir.path() + "/data";
  sh("head -c 1048576 /dev/urandom > " + f);  // 256 blocks of 4 KiB
  constexpr off_t kFlipped = 40 * 4096, kTorn = 81 * 4096;
  auto damage = [&] {
    const int fd = open(f.c_str(), O_RDWR);
    ASSERT_GE(fd, 0);
    // One byte flipped in the middle of a block: corruption.
    char c;
    ASSERT_EQ(pread(fd, &c, 1, kFlipped + 1000), 1);
    c = static_cast<char>(c ^ 0x40);
    ASSERT_EQ(pwrite(fd, &c, 1, kFlipped + 1000), 1);
    // The second half of another block replaced: a torn write.
    std::string half(2048, '\0');
    ASSERT_EQ(pwrite(fd, half.data(), half.size(), kTorn + 2048), 2048);
    fsync(fd);
    close(fd);
  };
  // Every block written exactly once (sequential, 256 I/Os); the damage is
  // done during --verify-delay, after the run and before the check.
  auto o = run_ioacct({"bench", "--format", "json", "--rw", "write", "--ios", "256", "--verify",
                       "--verify-delay", "2s", f},
                      {.action_after = "verifying", .action = damage});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("--verify: 2 blocks did not read back as written"), std::string::npos) << o.err;
  json j = stdout_json(o);
  const json& v = j["results"]["verify"];
  EXPECT_EQ(v["checked_after"], 256);
  ASSERT_EQ(v["mismatches"], 2);
  ASSERT_EQ(v["findings"].size(), 2u);
  EXPECT_EQ(v["findings"][0]["offset"], kFlipped);
  EXPECT_EQ(v["findings"][0]["kind"], "corrupt");
  EXPECT_EQ(v["findings"][1]["offset"], kTorn);
  EXPECT_EQ(v["findings"][1]["kind"], "torn");
  EXPECT_NE(v["findings"][1]["found"].get<std::string>().find("bytes 0-2047 as written"), std::string::npos)
      << v["findings"][1]["found"];
}

// Found by a hostile pass: a signal during a --verify run skipped the final
// pass, and the console still read "all as written" of blocks nobody had
// re-read. It now says how many of the blocks written were re-read, the JSON
// has blocks_written beside checked_after, and stderr says what to do.
TEST(BenchVerify, AnInterruptedRunSaysHowMuchOfWhatItWroteWasChecked) {
  TempDir dir;
  const std::string f = dir.path() + "/data";
  sh("head -c 1048576 /dev/urandom > " + f);  // 256 blocks of 4 KiB, each written once
  for (const char* format : {"json", "console"}) {
    SCOPED_TRACE(format);
    auto o = run_ioacct({"bench", "--format", format, "--rw", "write", "--ios", "256", "--verify", "--verify-delay",
                         "30s", f},
                        {.signal = SIGINT, .signal_after = "verifying every block"});
    EXPECT_EQ(o.exit_code, 128 + SIGINT) << o.err;
    EXPECT_NE(o.err.find("warning: --verify: interrupted, so 0 of the 256 blocks this run wrote were re-read and the "
                         "other 256 never checked; run it again to the end to check every block"),
              std::string::npos)
        << o.err;
    if (std::string(format) == "json") {
      const json v = stdout_json(o)["results"]["verify"];
      EXPECT_EQ(v["final_pass_skipped"], true);
      EXPECT_EQ(v["checked_after"], 0);
      EXPECT_EQ(v["blocks_written"], 256);
    } else {
      EXPECT_NE(o.out.find("verify     0 of the 256 blocks written re-read after the run (final pass SKIPPED: "
                           "interrupted), 0 reads checked during it: no mismatch in what was checked"),
                std::string::npos)
          << o.out;
      EXPECT_EQ(o.out.find("all as written"), std::string::npos) << o.out;
    }
  }
}

TEST(BenchVerify, OverwrittenAndTruncatedBlocksAreReported) {
  TempDir dir;
  const std::string f = dir.path() + "/data";
  sh("head -c 1048576 /dev/urandom > " + f);
  auto damage = [&] {
    // A whole foreign block at block 3 (no header), and the file cut short
    // by two blocks.
    sh("head -c 4096 /dev/urandom | dd of=" + f + " bs=4096 seek=3 conv=notrunc status=none");
    sh("truncate -s " + std::to_string(1048576 - 2 * 4096) + " " + f);
  };
  auto o = run_ioacct({"bench", "--format", "json", "--rw", "write", "--ios", "256", "--verify",
                       "--verify-delay", "2s", f},
                      {.action_after = "verifying", .action = damage});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  json j = stdout_json(o);
  const json& v = j["results"]["verify"];
  ASSERT_EQ(v["mismatches"], 3);
  EXPECT_EQ(v["findings"][0]["offset"], 3 * 4096);
  EXPECT_EQ(v["findings"][0]["kind"], "no-header");
  EXPECT_EQ(v["findings"][1]["kind"], "missing");
  EXPECT_EQ(v["findings"][2]["offset"], 1048576 - 4096);
}

}  // namespace
}  // namespace ioacct::test
