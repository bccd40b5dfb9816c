// Mixed runs paced by direction (--rate-iops R,W; fio's rate_iops=r,w): each
// direction keeps its own pace, a paced direction gives its turns to an
// unpaced one, and what the run counts is what the device was asked for
// (diskstats of a loop device of the test's own). tests/fio/rate-dirs.fio
// runs in fio and in ioacct on one file: each job's reads and writes agree.
#include <gtest/gtest.h>

#include <array>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

struct DirRun {
  Outcome o;
  json results, options;
  std::array<uint64_t, 2> disk{};  // what the device completed meanwhile
};

DirRun run_paced(const std::string& rates, const std::string& mix, const std::string& runtime) {
  TempDir dir;
  LoopDevice loop(dir.path());
  sh("udevadm settle 2>/dev/null || true");  // udev's probe of a new loop device is not the run's
  const auto before = disk_rw_asked(loop.name());
  DirRun r{run_ioacct({"bench", "--format", "json", "--rw", "randrw", "--rwmix-read", mix, "--iodepth", "4",
                       "--rate-iops", rates, "--runtime", runtime, "--destroy-data", loop.path()}),
           {}, {}, {}};
  const auto after = disk_rw_asked(loop.name());
  r.disk = {after[0] - before[0], after[1] - before[1]};
  EXPECT_EQ(r.o.exit_code, 0) << r.o.err;
  if (r.o.exit_code == 0) {
    const json j = stdout_json(r.o);
    r.results = j["results"];
    r.options = j["context"]["options"];
  }
  return r;
}

// The witness: the device was asked for every counted write, and at most
// the depth (4) more: those in flight when the window closed are finished,
// not counted. Reads the same, but udev's probe after the run may read more.
void expect_the_disk_saw(const DirRun& r, uint64_t reads, uint64_t writes) {
  EXPECT_GE(r.disk[1], writes);
  EXPECT_LE(r.disk[1], writes + 4);
  EXPECT_GE(r.disk[0], reads);
}

// Each direction's count is its pace times the window, at most (one I/O
// over), and not much less: a late thread drops slots, never bursts.
TEST(BenchPaceByDirection, EachDirectionKeepsItsOwnPace) {
  const DirRun r = run_paced("400,200", "50", "1s");
  ASSERT_TRUE(r.results.is_object()) << r.o.err;
  const double window = r.results["window_s"].get<double>();
  const uint64_t reads = r.results["reads"].get<uint64_t>(), writes = r.results["writes"].get<uint64_t>();
  std::printf("reads %lu writes %lu in %.3f s; the disk: %lu and %lu\n", reads, writes, window, r.disk[0], r.disk[1]);
  EXPECT_LE(reads, static_cast<uint64_t>(400 * window) + 1);
  EXPECT_LE(writes, static_cast<uint64_t>(200 * window) + 1);
  EXPECT_GE(reads, 350u) << "400 due: the pace was kept";
  EXPECT_GE(writes, 175u) << "200 due";
  expect_the_disk_saw(r, reads, writes);
  EXPECT_EQ(r.options["rate_iops_by_direction"], (json{{"read", 400.0}, {"write", 200.0}, {"trim", 200.0}}));
  EXPECT_TRUE(r.options["rate_iops_per_thread"].is_null());
  EXPECT_NE(r.o.err.find("paced per thread: reads 400 IOPS, writes 200 IOPS"), std::string::npos) << r.o.err;
}

// "100,": reads paced, writes not. The mix draws half reads, but every read
// drawn ahead of its pace goes as a write: the writes fill the depth.
TEST(BenchPaceByDirection, AnUnpacedDirectionTakesThePacedOnesTurns) {
  const DirRun r = run_paced("100,", "50", "1s");
  ASSERT_TRUE(r.results.is_object()) << r.o.err;
  const uint64_t reads = r.results["reads"].get<uint64_t>(), writes = r.results["writes"].get<uint64_t>();
  std::printf("reads %lu writes %lu; the disk: %lu and %lu\n", reads, writes, r.disk[0], r.disk[1]);
  EXPECT_LE(reads, 101u);
  EXPECT_GE(reads, 80u);
  EXPECT_GT(writes, 10 * reads) << "at depth 4 on a loop device, thousands a second";
  expect_the_disk_saw(r, reads, writes);
  EXPECT_EQ(r.options["rate_iops_by_direction"], (json{{"read", 100.0}, {"write", nullptr}, {"trim", nullptr}}));
  EXPECT_NE(r.o.err.find("reads 100 IOPS, writes unpaced"), std::string::npos) << r.o.err;
}

TEST(BenchPaceByDirection, WhatCannotBePacedByDirectionIsAUsageError) {
  TempDir dir;
  const std::vector<std::string> base = {"bench", "--size", "16m"};
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}});
  };
  expect_refused(run({"--rw", "randread", "--rate-iops", "100,50"}),
                 {"--rate-iops: a pace per direction (R,W,T) is for the mixes", "not --rw randread"});
  expect_refused(run({"--rw", "randrw", "--rate-iops", ","}), {"--rate-iops: ',' paces no direction"});
  expect_refused(run({"--rw", "randrw", "--rate-iops", "1,2,3,4"}), {"more than three fields"});
  expect_refused(run({"--rw", "randrw", "--rate-iops", "0,5"}), {"--rate-iops: '0' must be more than 0"});
  expect_refused(run({"--rw", "randrw", "--rate", "1m,x"}), {"--rate"});
  expect_refused(run({"--rw", "randrw", "--rate-iops", "1,", "--runtime", "500ms"}),
                 {"--runtime: 500.0 ms is shorter than one period of the read pace"});
  expect_refused(run({"--rw", "randrw", "--rate-iops", "5,", "--rate", ",1m"}), {"not both"});
}

// fio as the witness: the same job file, on the same file, in both tools.
// Counts are each job's reads and writes; paced directions agree within
// what a 1 s window's edges allow, and an unpaced direction outruns the
// paced one in both.
TEST(BenchPaceByDirection, RateDirsFioRunsAsInFio) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  sh("dd if=/dev/zero of=" + data + " bs=1M count=8 status=none");
  const std::string file = std::string(IOACCT_SOURCE_DIR) + "/tests/fio/rate-dirs.fio";
  const json fio = run_fio(file, {"IOACCT_TARGET=" + data, "RUNTIME=1"});
  const Outcome o = run_ioacct({"bench", "--fio", file, "--format", "json"},
                               {.env = {"IOACCT_TARGET=" + data, "RUNTIME=1"}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json ours = stdout_json(o);
  std::map<std::string, std::array<uint64_t, 2>> f, us;
  for (const json& j : fio["jobs"])
    f[j["jobname"]] = {j["read"]["total_ios"].get<uint64_t>(), j["write"]["total_ios"].get<uint64_t>()};
  for (const json& j : ours["jobs"])
    us[j["name"]] = {j["results"]["reads"].get<uint64_t>(), j["results"]["writes"].get<uint64_t>()};
  ASSERT_EQ(f.size(), 2u) << fio.dump();
  ASSERT_EQ(us.size(), 2u) << o.out;
  for (const auto& [name, n] : f) std::printf("%s: fio %lu/%lu, ioacct %lu/%lu\n", name.c_str(), n[0], n[1],
                                              us[name][0], us[name][1]);
  // both-paced: 400 reads and 200 writes due in 1 s.
  EXPECT_NEAR(static_cast<double>(us["both-paced"][0]), static_cast<double>(f["both-paced"][0]), 40);
  EXPECT_NEAR(static_cast<double>(us["both-paced"][1]), static_cast<double>(f["both-paced"][1]), 20);
  EXPECT_NEAR(static_cast<double>(f["both-paced"][0]), 400, 40) << "fio kept its pace";
  // reads-paced: 200 reads due; the writes take every other turn.
  EXPECT_NEAR(static_cast<double>(us["reads-paced"][0]), static_cast<double>(f["reads-paced"][0]), 20);
  EXPECT_GT(f["reads-paced"][1], 2 * f["reads-paced"][0]);
  EXPECT_GT(us["reads-paced"][1], 2 * us["reads-paced"][0]);
}

}  // namespace
}  // namespace ioacct::test
