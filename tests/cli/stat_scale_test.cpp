// The exact-busy tracker at scale: 256 devices, partitions included, from 64
// loop devices with three partitions each. Every map is sized at load, so
// nothing limits the count but memory.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <map>
#include <memory>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

// A loop device with three 4 MiB partitions, added with BLKPG (addpart):
// this kernel has no partition-table parser built in, and the test needs
// none. Partitions added so outlive the loop device's detach (the driver
// drops only those it scanned itself), so they are deleted first, whatever
// way the test ends.
struct PartitionedLoop {
  TempDir dir;
  LoopDevice loop{dir.path(), {.size = "16m"}};
  PartitionedLoop() {
    for (int p = 1; p <= 3; ++p)
      sh("addpart " + loop.path() + " " + std::to_string(p) + " " + std::to_string(2048 + (p - 1) * 8192) + " 8192");
  }
  ~PartitionedLoop() {
    for (int p = 1; p <= 3; ++p) std::system(("delpart " + loop.path() + " " + std::to_string(p) + " 2>/dev/null").c_str());
  }
  PartitionedLoop(const PartitionedLoop&) = delete;
  PartitionedLoop& operator=(const PartitionedLoop&) = delete;
};

TEST(StatScale, TwoHundredFiftySixDevicesPartitionsIncluded) {
  std::vector<std::unique_ptr<PartitionedLoop>> loops;
  for (int i = 0; i < 64; ++i) loops.push_back(std::make_unique<PartitionedLoop>());
  std::vector<std::string> args = {"stat", "--format", "json", "-p", "-y", "2", "1"};
  for (const auto& l : loops) args.push_back(l->loop.name());
  const std::string busy_part = loops[0]->loop.name() + "p2", busy_disk = loops[5]->loop.name();
  std::thread io;
  Outcome a, b;
  const auto t0 = std::chrono::steady_clock::now();
  double attach_s = 0;
  RunOptions opts;
  opts.timeout_s = 120;
  opts.action_after = "exact busy time from";
  opts.action = [&] {
    attach_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    io = std::thread([&] {
      a = run_ioacct({"bench", "--ios", "500", "--iodepth", "4", "--size", "4m", "/dev/" + busy_part});
      b = run_ioacct({"bench", "--ios", "500", "--iodepth", "4", "--size", "16m", "/dev/" + busy_disk});
    });
  };
  const Outcome o = run_ioacct(args, opts);
  if (io.joinable()) io.join();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(a.exit_code, 0) << a.err;
  ASSERT_EQ(b.exit_code, 0) << b.err;
  EXPECT_NE(o.err.find("on 256 devices"), std::string::npos) << o.err;
  std::cout << "stat attached to 256 devices in " << attach_s << " s\n";
  const auto j = stdout_json(o);
  ASSERT_EQ(j["devices"].size(), 256u);
  std::map<std::string, nlohmann::json> by;
  for (const auto& d : j["devices"]) by[d["device"]] = d;
  for (const auto& [name, d] : by) {
    SCOPED_TRACE(name);
    ASSERT_FALSE(d["busy_pct"].is_null()) << d;
    const bool used = name == busy_part || name == loops[0]->loop.name() || name == busy_disk;
    if (used) {
      // The bench's 500 reads (a few may merge on the way: diskstats' count),
      // each seen ending or found lost.
      const double reads = d["r_s"].get<double>() * j["interval_s"].get<double>();
      EXPECT_NEAR(static_cast<double>(d["requests_done"].get<uint64_t>() + d["completions_lost"].get<uint64_t>()),
                  reads, 0.5)
          << d;
      EXPECT_GE(reads, 490.0);
      EXPECT_GT(d["busy_pct"].get<double>(), 0.0);
    } else {
      EXPECT_EQ(d["requests_done"], 0u);
      EXPECT_EQ(d["busy_pct"], 0.0);
    }
  }
  // A partition's requests are its disk's: the same intervals, the same union.
  const auto& part = by[busy_part];
  const auto& disk = by[loops[0]->loop.name()];
  EXPECT_EQ(disk["requests_done"], part["requests_done"]);
  EXPECT_EQ(disk["completions_lost"], part["completions_lost"]);
  EXPECT_NEAR(disk["busy_ns"].get<double>(), part["busy_ns"].get<double>(), 1000.0);
  EXPECT_EQ(by[loops[0]->loop.name() + "p1"]["requests_done"], 0u) << "the other partitions stay idle";
}

}  // namespace
}  // namespace ioacct::test
