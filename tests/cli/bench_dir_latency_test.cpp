// A mixed job's latency by direction (--rw randrw: read_latency_ns,
// write_latency_ns ...) on a loop device of the test's own: each direction's
// histogram counts that direction's I/Os, the two add up to the job's, and
// the device (diskstats) was asked for at least as many of each. Then the
// split is seen to be the right one: with O_DSYNC a write to the loop
// device waits for its backing file's fsync while a read is served from the
// page cache, so the writes' median is the higher, a property of the
// workload and not a bound on this machine's speed.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

uint64_t samples_in(const json& summary) { return summary.is_null() ? 0 : summary["count"].get<uint64_t>(); }

struct MixedRun {
  Outcome o;
  json doc;
  std::array<uint64_t, 2> disk{};  // what the device was asked for meanwhile
};

MixedRun run_mixed(const std::vector<std::string>& extra) {
  TempDir dir;
  LoopDevice loop(dir.path());
  sh("udevadm settle 2>/dev/null || true");  // udev's probe of a new loop device is not the run's
  std::vector<std::string> args = {"bench", "--format", "json", "--rw", "randrw", "--destroy-data"};
  args.insert(args.end(), extra.begin(), extra.end());
  args.push_back(loop.path());
  const auto before = disk_rw_asked(loop.name());
  MixedRun r{run_ioacct(args), {}, {}};
  const auto after = disk_rw_asked(loop.name());
  r.disk = {after[0] - before[0], after[1] - before[1]};
  EXPECT_EQ(r.o.exit_code, 0) << r.o.err;
  if (r.o.exit_code == 0) r.doc = stdout_json(r.o);
  return r;
}

// Each direction's own histograms against its counts, in `res` (results,
// a job's or a thread's).
void expect_split_counts(const json& res, const std::string& where) {
  const uint64_t reads = res["reads"].get<uint64_t>(), writes = res["writes"].get<uint64_t>();
  EXPECT_EQ(samples_in(res["read_latency_ns"]), reads) << where;
  EXPECT_EQ(samples_in(res["write_latency_ns"]), writes) << where;
  EXPECT_EQ(reads + writes, samples_in(res["latency_ns"])) << where;
  // slat and clat: each I/O's in its own direction's, or in neither.
  EXPECT_EQ(samples_in(res["read_slat_ns"]) + samples_in(res["write_slat_ns"]), samples_in(res["slat_ns"])) << where;
  EXPECT_EQ(samples_in(res["read_clat_ns"]) + samples_in(res["write_clat_ns"]), samples_in(res["clat_ns"])) << where;
}

TEST(BenchDirLatency, EachDirectionsHistogramCountsItsOwnIos) {
  // --split-submit: every batch's slat is timed, and shared out by direction.
  const MixedRun r =
      run_mixed({"--rwmix-read", "70", "--iodepth", "8", "--threads", "2", "--split-submit", "--runtime", "1s"});
  ASSERT_TRUE(r.doc.is_object()) << r.o.err;
  const json& res = r.doc["results"];
  const uint64_t reads = res["reads"].get<uint64_t>(), writes = res["writes"].get<uint64_t>();
  std::printf("reads %lu writes %lu; the disk: %lu and %lu\n", reads, writes, r.disk[0], r.disk[1]);
  ASSERT_GT(reads, 0u);
  ASSERT_GT(writes, 0u);
  expect_split_counts(res, "results");
  expect_split_counts(r.doc["jobs"][0]["results"], "jobs[0]");
  uint64_t thread_reads = 0;
  for (const json& t : r.doc["threads"]) {
    expect_split_counts(t, "thread " + t["index"].dump());
    thread_reads += samples_in(t["read_latency_ns"]);
  }
  EXPECT_EQ(thread_reads, reads) << "the threads' reads merge into the run's";
  EXPECT_GT(samples_in(res["read_slat_ns"]), 0u) << "--split-submit times every batch apart";
  EXPECT_GT(samples_in(res["write_slat_ns"]), 0u) << "--split-submit times every batch apart";
  EXPECT_EQ(res["unsplit_ios"], 0);
  // The witness: the device was asked for every counted read and write, and
  // at most the depth (8) more writes: those in flight when the window
  // closed are finished, not counted. udev's probe may read more.
  EXPECT_GE(r.disk[0], reads);
  EXPECT_GE(r.disk[1], writes);
  EXPECT_LE(r.disk[1], writes + 8);
}

TEST(BenchDirLatency, DurableWritesAreSlowerThanCachedReadsInTheirOwnHistograms) {
  const MixedRun r = run_mixed({"--rwmix-read", "50", "--iodepth", "1", "--dsync", "--runtime", "1s"});
  ASSERT_TRUE(r.doc.is_object()) << r.o.err;
  const json& res = r.doc["results"];
  ASSERT_FALSE(res["read_latency_ns"].is_null()) << r.o.out;
  ASSERT_FALSE(res["write_latency_ns"].is_null()) << r.o.out;
  const uint64_t read_p50 = res["read_latency_ns"]["p50"].get<uint64_t>();
  const uint64_t write_p50 = res["write_latency_ns"]["p50"].get<uint64_t>();
  std::printf("reads %lu p50 %lu ns, writes %lu p50 %lu ns (O_DSYNC); the job's p50 %lu ns\n",
              res["reads"].get<uint64_t>(), read_p50, res["writes"].get<uint64_t>(), write_p50,
              res["latency_ns"]["p50"].get<uint64_t>());
  EXPECT_GT(write_p50, read_p50) << "a durable write waits for the backing file's fsync; a read does not";
  expect_split_counts(res, "results");
  EXPECT_GE(r.disk[1], res["writes"].get<uint64_t>());
}

TEST(BenchDirLatency, TheConsoleShowsReadsAndWritesUnderTheLatency) {
  TempDir dir;
  LoopDevice loop(dir.path());
  const Outcome o = run_ioacct({"bench", "--rw", "randrw", "--iodepth", "4", "--runtime", "300ms", "--destroy-data",
                                loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const size_t lat = o.out.find("  latency    submission to reaping (lat)\n");
  const size_t rd = o.out.find("             reads  p50 ");
  const size_t wr = o.out.find("             writes p50 ");
  ASSERT_NE(lat, std::string::npos) << o.out;
  ASSERT_NE(rd, std::string::npos) << o.out;
  ASSERT_NE(wr, std::string::npos) << o.out;
  EXPECT_LT(lat, rd) << o.out;
  EXPECT_LT(rd, wr) << o.out;
  EXPECT_LT(wr, o.out.find("  slat")) << o.out;
}

// fio-json from the command line, for a mixed job: read and write each
// from its own direction's figures in ioacct's document beside them.
TEST(BenchDirLatency, FioJsonOfAMixedJobGivesEachDirectionItsOwn) {
  TempDir dir;
  LoopDevice loop(dir.path());
  const Outcome o = run_ioacct({"bench", "--rw", "randrw", "--rwmix-read", "70", "--iodepth", "4", "--runtime",
                                "300ms", "--format", "fio-json", "--destroy-data", loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json f = stdout_json(o);
  const json& res = f["ioacct"]["results"];
  for (const std::string way : {"read", "write"}) {
    const json& d = f["jobs"][0][way];
    const json& own = res[way + "_latency_ns"];
    EXPECT_EQ(d["total_ios"], res[way + "s"]) << way;
    EXPECT_EQ(d["lat_ns"]["N"], own["count"]) << way;
    EXPECT_EQ(d["lat_ns"]["min"], own["min"]) << way;
    EXPECT_EQ(d["lat_ns"]["max"], own["max"]) << way;
    EXPECT_EQ(d["clat_ns"]["N"], samples_in(res[way + "_clat_ns"])) << way;
    EXPECT_EQ(d["slat_ns"]["N"], samples_in(res[way + "_slat_ns"])) << way;
    EXPECT_GT(d["slat_ns"]["N"].get<uint64_t>(), 0u) << way << ": fio-json times every batch apart";
  }
  EXPECT_EQ(res["unsplit_ios"], 0) << "fio-json turns on --split-submit";
}

}  // namespace
}  // namespace ioacct::test
