// --complete-max (fio's iodepth_batch_complete_max): at most N completions
// taken per syscall, the rest left for the next. fio's default is its _min,
// 1, so a mapped libaio job takes one completion per io_getevents, as fio's
// does; strace is the witness.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"
#include "common/files.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

// The nop engine's completions are all there the moment they are submitted:
// uncapped, one enter submits the batch of 16 and takes it back; capped at
// N, an enter takes N, and the N slots it frees are what the next submits.
TEST(BenchCompleteMax, EachSyscallTakesAtMostTheCap) {
  const auto run = [](std::vector<std::string> extra) {
    std::vector<std::string> args = {"bench", "--engine", "nop", "--iodepth", "16", "--submit-batch", "16",
                                     "--ios", "4000", "--format", "json"};
    args.insert(args.end(), extra.begin(), extra.end());
    const Outcome o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 0) << o.err;
    return stdout_json(o);
  };
  const json all = run({}), one = run({"--complete-max", "1"}), four = run({"--complete-max", "4"});
  const auto enters = [](const json& j) { return j["results"]["syscalls"]["total"].get<double>(); };
  EXPECT_LE(enters(all), 4000.0 / 8) << all["results"]["syscalls"];
  EXPECT_GE(enters(one), 0.95 * 4000) << one["results"]["syscalls"];
  EXPECT_GE(enters(four), 0.95 * 4000 / 4) << four["results"]["syscalls"];
  EXPECT_LE(enters(four), 4000.0 / 2) << four["results"]["syscalls"];
  for (const json* j : {&one, &four}) EXPECT_EQ((*j)["results"]["ios"], 4000);
  EXPECT_EQ(one["context"]["options"]["complete_max"], 1);
  EXPECT_TRUE(all["context"]["options"]["complete_max"].is_null());
}

TEST(BenchCompleteMax, AFioLibaioJobTakesOneCompletionPerIoGeteventsAsFioDoes) {
  TempDir dir;
  const std::string f = dir.path() + "/data", job = dir.path() + "/aio.fio", trace = dir.path() + "/strace";
  sh("head -c 4194304 /dev/urandom > " + f);
  std::ofstream(job) << "[global]\nioengine=libaio\ndirect=1\n[reads]\nrw=randread\nbs=4k\niodepth=16\nfilename=" << f
                     << "\n";
  // LeakSanitizer cannot run under ptrace (bench_sync_test.cpp).
  const Outcome o = run_ioacct({"bench", "--fio", job, "--format", "json"},
                               {.prefix = {"/usr/bin/strace", "-E", "ASAN_OPTIONS=detect_leaks=0", "-f", "-qq", "-e",
                                           "trace=io_getevents", "-o", trace}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = stdout_json(o);
  EXPECT_EQ(j["context"]["options"]["complete_max"], 1);
  EXPECT_EQ(j["results"]["ios"], 1024);
  // Every call asks for at most one event: "io_getevents(ctx, 1, 1, ...)"
  // waiting, "(ctx, 0, 1, ...)" not.
  const std::string calls = slurp(trace);
  size_t n = 0, capped = 0;
  for (size_t at = calls.find("io_getevents("); at != std::string::npos; at = calls.find("io_getevents(", at + 1)) {
    ++n;
    const size_t eol = calls.find('\n', at);
    const std::string line = calls.substr(at, eol - at);
    capped += line.find(", 1, [") != std::string::npos || line.find(", 1, 0x") != std::string::npos;
  }
  EXPECT_GT(n, 0u);
  EXPECT_EQ(capped, n) << calls.substr(0, 2000);
}

TEST(BenchCompleteMax, UsageErrors) {
  expect_refused(run_ioacct({"bench", "--engine", "nop", "--iodepth", "16", "--complete-batch", "8", "--complete-max",
                             "4", "--ios", "100"}),
                 {"--complete-max", "under --complete-batch 8"});
  expect_refused(run_ioacct({"bench", "--engine", "nop", "--complete-max", "4", "--submit-policy", "each", "--ios",
                             "100"}),
                 {"--submit-policy", "--complete-max"});
  expect_refused(run_ioacct({"bench", "--engine", "nop", "--complete-max", "0", "--ios", "100"}), {"--complete-max"});
}

}  // namespace
}  // namespace ioacct::test
