// --engine libaio (and ioengine=libaio) end to end: the I/Os counted are the
// I/Os the device saw, every account is there, and what it cannot do is one
// usage error naming the flag.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/run_binary.hpp"
#include "common/files.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

size_t lines_of(const std::string& s) {
  size_t n = 0;
  for (char c : s) n += c == '\n';
  return n;
}

TEST(BenchLibaio, CountsEveryReadTheDeviceSawWithEveryAccount) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  std::istringstream before_in(read_first_line("/sys/block/" + loop.name() + "/stat"));
  uint64_t reads_before = 0, merges_before = 0;
  before_in >> reads_before >> merges_before;
  auto o = run_ioacct({"bench", "--engine", "libaio", "--format", "json", "--ios", "3000", "--iodepth", "8", "--acct",
                       "full", loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::istringstream after_in(read_first_line("/sys/block/" + loop.name() + "/stat"));
  uint64_t reads_after = 0, merges_after = 0;
  after_in >> reads_after >> merges_after;
  const json j = stdout_json(o);
  EXPECT_EQ(j["context"]["options"]["engine"], "libaio");
  EXPECT_EQ(j["context"]["engine_description"].get<std::string>().rfind("libaio (io_submit/io_getevents, 8 events", 0), 0u)
      << j["context"]["engine_description"];
  const json& r = j["results"];
  EXPECT_EQ(r["ios"], 3000);
  EXPECT_TRUE(r["errors"].empty()) << r["errors"];
  // Every syscall is an io_submit or an io_getevents; a batch of 8 needs
  // far fewer of each than there are reads.
  const json& sc = r["syscalls"];
  EXPECT_EQ(sc["total"].get<uint64_t>(), sc["submit"].get<uint64_t>() + sc["reap"].get<uint64_t>()) << sc;
  EXPECT_LT(sc["submit"].get<uint64_t>(), 3000u) << sc;
  EXPECT_EQ(sc["submitted_ios"], 3000) << sc;
  EXPECT_EQ(sc["reaped_ios"], 3000) << sc;
  // The device's own count: every read and only ours (two neighbouring
  // reads may merge into one request, and the kernel counts the merge).
  const json* d = nullptr;
  for (const auto& x : r["devices"])
    if (x["device"] == loop.name()) d = &x;
  ASSERT_NE(d, nullptr) << r["devices"];
  EXPECT_EQ((*d)["reads"].get<uint64_t>() + (merges_after - merges_before), 3000u);
  EXPECT_EQ((*d)["reads"].get<uint64_t>(), reads_after - reads_before);
  EXPECT_FALSE((*d)["busy_pct"].is_null()) << "--acct full: the tracker's exact busy time" << *d;
  EXPECT_EQ(r["latency_ns"]["count"], 3000);
  EXPECT_FALSE(r["cpu"].is_null());
  EXPECT_GT(r["cpu"]["breakdown"]["total_s"].get<double>(), 0.0);
}

TEST(BenchLibaio, EveryDataPathWritesAndReadsBackExactly) {
  const std::vector<std::vector<std::string>> variants = {{}, {"--vectored"}, {"--buffered"}, {"--fsync", "16"},
                                                          {"--split-submit"}};
  for (const auto& v : variants) {
    std::string name;
    for (const auto& a : v) name += a + " ";
    SCOPED_TRACE(name);
    TempDir dir;
    const std::string f = dir.path() + "/data";
    sh("head -c 4194304 /dev/urandom > " + f);
    std::vector<std::string> args = {"bench", "--engine", "libaio", "--format", "json", "--rw", "randrw",
                                     "--verify-during", "--ios", "3000", "--iodepth", "16", f};
    args.insert(args.end(), v.begin(), v.end());
    auto o = run_ioacct(args);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json j = stdout_json(o);
    EXPECT_EQ(j["results"]["ios"], 3000);
    EXPECT_EQ(j["results"]["verify"]["mismatches"], 0);
    EXPECT_TRUE(j["results"]["errors"].empty()) << j["results"]["errors"];
    // Buffered AIO runs inside io_submit: the warning says so and what to do.
    EXPECT_EQ(o.err.find("warning: --engine libaio without O_DIRECT") != std::string::npos, v == variants[2]) << o.err;
  }
}

TEST(BenchLibaio, AFioJobWithIoengineLibaioRuns) {
  TempDir dir;
  const std::string f = dir.path() + "/data", job = dir.path() + "/aio.fio";
  sh("head -c 4194304 /dev/urandom > " + f);
  // Without time_based, one pass over the 4 MiB: 1024 reads.
  std::ofstream(job) << "[global]\nioengine=libaio\ndirect=1\n[reads]\nrw=randread\nbs=4k\niodepth=8\nfilename=" << f
                     << "\n";
  auto o = run_ioacct({"bench", "--fio", job, "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = stdout_json(o);
  EXPECT_EQ(j["context"]["options"]["engine"], "libaio");
  EXPECT_EQ(j["context"]["options"]["iodepth"], 8);
  EXPECT_EQ(j["results"]["ios"], 1024);
}

// --nowait (fio's libaio nowait): RWF_NOWAIT on each iocb. A buffered read
// of a block not in the page cache cannot complete inline, so on a loop
// device of the test's own, its cache cold, some reads come back EAGAIN
// and are resubmitted without the flag; without --nowait none do.
TEST(BenchLibaio, NowaitGivesEagainForWhatCannotCompleteInlineAndEachIsRetried) {
  for (const bool nowait : {true, false}) {
    SCOPED_TRACE(nowait ? "--nowait" : "without");
    TempDir dir;
    LoopDevice loop(dir.path(), {.size = "64m", .random_data = true});
    sh("udevadm settle 2>/dev/null || true");
    std::vector<std::string> args = {"bench", "--engine", "libaio", "--buffered", "--format", "json", "--ios", "2000",
                                     "--iodepth", "8", loop.path()};
    if (nowait) args.emplace_back("--nowait");
    auto o = run_ioacct(args);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json j = stdout_json(o);
    EXPECT_EQ(j["results"]["ios"], 2000);
    EXPECT_TRUE(j["results"]["errors"].empty()) << j["results"]["errors"];
    const uint64_t retries = j["results"]["eagain_retries"].get<uint64_t>();
    std::printf("%s: %lu EAGAIN retries in 2000 reads\n", nowait ? "--nowait" : "without", retries);
    if (nowait) {
      EXPECT_GT(retries, 0u) << "cold 4 KiB blocks of a 64 MiB device: reads that had to wait";
      EXPECT_NE(j["context"]["engine_description"].get<std::string>().find("RWF_NOWAIT"), std::string::npos);
    } else {
      EXPECT_EQ(retries, 0u);
    }
  }
}

TEST(BenchLibaio, WhatItCannotDoIsOneUsageErrorNamingTheFlag) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--sqpoll"}, "--sqpoll: is an io_uring mode; --engine libaio has none of io_uring's modes (use --engine uring)"},
      {{"--fixed-files"}, "--fixed-files: is an io_uring mode"},
      {{"--no-fixed-bufs"}, "--no-fixed-bufs: is an io_uring mode"},
      {{"--iopoll"}, "--iopoll: is an io_uring mode"},
      {{"--wait", "spin"}, "--wait: is an io_uring mode"},
      {{"--anatomy"}, "--anatomy: libaio I/Os pass no tracepoint"},
      {{"--iodepth", "40000"}, "--iodepth: 40000 in one thread is more than one thread's AIO context takes (32768)"},
  };
  for (const auto& [extra, message] : cases) {
    std::vector<std::string> args = {"bench", "--engine", "libaio", "--size", "1m", "--runtime", "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 2) << message << ": " << o.err;
    EXPECT_EQ(o.err.rfind("error: " + message, 0), 0u) << o.err;
    EXPECT_EQ(lines_of(o.err), 1u) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
  }
  auto o = run_ioacct({"bench", "--engine", "aio"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "error: --engine: 'aio' is not one of uring, psync, sync, pvsync, pvsync2, nop, libaio\n");
}

}  // namespace
}  // namespace ioacct::test
