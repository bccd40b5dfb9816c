// bench --bssplit against the device: every request the block layer issues
// for the run, read from the block_rq_issue tracepoint in a tracefs instance
// of the test's own, is one of the split's sizes or one cut short by fio's
// random map, which reads no block twice in a pass; sequential requests
// follow each other; and the bytes the run reports are the bytes the device
// was asked for.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <tuple>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

struct Issue {
  uint64_t sector = 0, bytes = 0;
  bool write = false;
  std::string task;  // "ioacct-123": the thread that issued it
};

// The requests issued to one device while it is alive, in order.
class IssueTrace {
 public:
  explicit IssueTrace(dev_t dev) {
    sh("udevadm settle 2>/dev/null || true");  // udev's probe of a new loop device is not the run's
    new_trace_instance(dir_);
    const std::string ev = dir_ + "/events/block/block_rq_issue";
    sh("echo 'dev == " + std::to_string((major(dev) << 20) | minor(dev)) + "' > " + ev + "/filter");
    sh("echo 16384 > " + dir_ + "/buffer_size_kb && echo 1 > " + ev + "/enable && echo 1 > " + dir_ + "/tracing_on");
  }
  ~IssueTrace() { std::system(("echo 0 > " + dir_ + "/tracing_on; rmdir " + dir_ + " 2>/dev/null").c_str()); }
  IssueTrace(const IssueTrace&) = delete;
  IssueTrace& operator=(const IssueTrace&) = delete;

  std::vector<Issue> stop() {
    sh("echo 0 > " + dir_ + "/tracing_on");
    EXPECT_EQ(trace_events_lost(dir_), 0u) << "the trace buffer overflowed";
    std::vector<Issue> out;
    std::istringstream in(read_file(dir_ + "/trace"));
    // "ioacct-123 [001] ..... 12.345678: block_rq_issue: 7,0 R 16384 () 2048 + 32 none,0,0 [ioacct]"
    for (std::string line; std::getline(in, line);) {
      const size_t at = line.find(": block_rq_issue: ");
      if (at == std::string::npos) continue;
      std::istringstream f(line.substr(at + 18));
      std::string devno, rwbs, cmd;
      Issue i;
      f >> devno >> rwbs >> i.bytes >> cmd >> i.sector;
      i.write = rwbs.find('W') != std::string::npos;
      std::istringstream head(line);
      head >> i.task;
      if (f) out.push_back(i);
    }
    return out;
  }

 private:
  std::string dir_ = "/sys/kernel/tracing/instances/ioacct-bssplit-" + std::to_string(getpid());
};

dev_t rdev_of(const std::string& path) {
  struct stat sb {};
  EXPECT_EQ(::stat(path.c_str(), &sb), 0) << path;
  return sb.st_rdev;
}

// Random reads of 4k and 64k, three in four small, over fio's random map:
// no 4k block of the device is read twice in a pass (2,000 I/Os take at most
// 9,500 of its 16,384); each request is a multiple of 4k up to 64k, cut short
// only where the map says; at least three in four are 4k (binomial: 6 sigma
// over 2,000 is 0.058); and the device is asked for the bytes the run
// reports, but for the I/Os past --ios.
TEST(BenchBssplit, RandomSizesKeepFiosRandomMapOnTheDevice) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  IssueTrace trace(rdev_of(loop.path()));
  const auto o = run_ioacct({"bench", "--format", "json", "--rw", "randread", "--bssplit", "4k/75:64k/25",
                             "--iodepth", "4", "--ios", "2000", "--acct", "basic", loop.path()});
  const auto issued = trace.stop();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json r = stdout_json(o);
  EXPECT_EQ(r["context"]["options"]["bssplit"], json::parse(R"([{"size":4096,"weight":75},{"size":65536,"weight":25}])"));
  EXPECT_EQ(r["context"]["options"]["bs"], 65536);
  const uint64_t n = issued.size();
  ASSERT_GE(n, 2000u);
  EXPECT_LE(n, 2000u + 3) << "at most the depth's other slots past --ios";
  std::vector<int> read(16384, 0);
  uint64_t bytes = 0, small = 0, full = 0, twice = 0;
  for (const Issue& i : issued) {
    EXPECT_EQ(i.sector % 8, 0u) << "offsets on the 4k grid: sector " << i.sector;
    EXPECT_TRUE(i.bytes % 4096 == 0 && i.bytes >= 4096 && i.bytes <= 65536) << i.bytes;
    for (uint64_t b = i.sector / 8; b < (i.sector * 512 + i.bytes) / 4096 && b < read.size(); ++b) twice += read[b]++ > 0;
    bytes += i.bytes;
    small += i.bytes == 4096;
    full += i.bytes == 65536;
  }
  EXPECT_EQ(twice, 0u) << "blocks read twice in one pass";
  EXPECT_GE(static_cast<double>(small) / static_cast<double>(n), 0.75 - 0.058);
  EXPECT_GT(full, n / 10) << "most 64k reads are whole while the map is sparse";
  const uint64_t ours = r["results"]["bytes_read"].get<uint64_t>();
  EXPECT_EQ(r["results"]["ios"], 2000);
  EXPECT_LE(ours, bytes);
  EXPECT_GE(ours + 3 * 65536, bytes) << "the run's bytes are the device's, but for the I/Os past --ios";
}

// Sequential reads of 4k and 16k at depth 1: each request starts where the
// one before it ended, so the device sees one unbroken stream.
TEST(BenchBssplit, SequentialSizesFollowEachOther) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  IssueTrace trace(rdev_of(loop.path()));
  const auto o = run_ioacct({"bench", "--format", "json", "--rw", "read", "--bssplit", "4k/50:16k/50", "--iodepth",
                             "1", "--ios", "2000", "--acct", "basic", loop.path()});
  const auto issued = trace.stop();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(issued.size(), 2000u);
  EXPECT_EQ(issued.front().sector, 0u);
  uint64_t breaks = 0, small = 0;
  for (size_t i = 1; i < issued.size(); ++i) breaks += issued[i].sector != issued[i - 1].sector + issued[i - 1].bytes / 512;
  for (const Issue& i : issued) small += i.bytes == 4096;
  EXPECT_EQ(breaks, 0u) << "a request that does not start where the last one ended";
  EXPECT_NEAR(static_cast<double>(small) / 2000.0, 0.5, 0.067);  // 6 sigma
  EXPECT_EQ(stdout_json(o)["results"]["bytes_read"].get<uint64_t>(), issued.back().sector * 512 + issued.back().bytes);
}

// Sequential I/O wraps to the start of the range when the next one would
// pass its end, never past it: 1 MiB of 4k and 64k reads, many passes.
TEST(BenchBssplit, SequentialWrapsInsideTheRange) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  IssueTrace trace(rdev_of(loop.path()));
  const auto o = run_ioacct({"bench", "--format", "json", "--rw", "read", "--bssplit", "4k/50:64k/50", "--size",
                             "1m", "--iodepth", "1", "--ios", "1000", "--acct", "basic", loop.path()});
  const auto issued = trace.stop();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  ASSERT_EQ(issued.size(), 1000u);
  uint64_t wraps = 0;
  for (size_t i = 0; i < issued.size(); ++i) {
    EXPECT_LE(issued[i].sector * 512 + issued[i].bytes, 1u << 20) << "request " << i << " passes the range's end";
    if (i && issued[i].sector != issued[i - 1].sector + issued[i - 1].bytes / 512) {
      ++wraps;
      EXPECT_EQ(issued[i].sector, 0u) << "a break in the stream is a wrap to the start";
    }
  }
  EXPECT_GE(wraps, 10u) << "1000 I/Os of 34k on average make ~32 passes of 1 MiB";
}

// The corpus's mixed-size files in fio and in ioacct, on the same file: the
// mean size of an I/O (bytes over I/Os) is the same in both. bssplit.fio's
// random reads keep fio's random map, which cuts large reads short as the
// pass fills (the split alone would give 12,697.6 bytes); its sizes' sd is
// 18.3k, so the two means of 2,000 reads differ by 3.5k at most (6 sigma of
// the difference). bsrange.fio's sequential writes, 4k to 32k with every 4k
// step as likely: 18,432 bytes, sd 9.4k, 6 sigma over ~1,800 writes of one
// 32 MiB pass is 1.4k, in each tool.
TEST(BenchBssplit, TheCorpusFilesHaveFiosMeanSizeInBothTools) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  sh("dd if=/dev/urandom of=" + data + " bs=1M count=64 status=none");
  struct SplitCase {
    const char* file;
    const char* dir;  // "read" or "write"
    double mean;      // 0: none known beforehand; the tools agree within tol
    double tol;
  };
  // bs-dirs.fio's writes are 16k each, whole (a map per direction in
  // ioacct; in fio, one map each direction reads in its own units).
  for (const SplitCase& c : {SplitCase{"bssplit.fio", "read", 0, 3500}, SplitCase{"bsrange.fio", "write", 18432, 1400},
                             SplitCase{"bs-dirs.fio", "write", 16384, 0}}) {
    SCOPED_TRACE(c.file);
    const std::string file = std::string(IOACCT_SOURCE_DIR) + "/tests/fio/" + c.file;
    const json fio = run_fio(file, {"IOACCT_TARGET=" + data})["jobs"][0][c.dir];
    const auto o = run_ioacct({"bench", "--fio", file, "--format", "fio-json"}, {.env = {"IOACCT_TARGET=" + data}});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json ours = stdout_json(o)["jobs"][0][c.dir];
    const auto mean = [](const json& d) { return d["io_bytes"].get<double>() / d["total_ios"].get<double>(); };
    ASSERT_GT(fio["total_ios"].get<uint64_t>(), 500u) << fio.dump();
    ASSERT_GT(ours["total_ios"].get<uint64_t>(), 500u) << ours.dump();
    std::printf("%s: mean bytes per I/O: fio %.0f, ioacct %.0f\n", c.file, mean(fio), mean(ours));
    if (c.mean > 0) {
      EXPECT_NEAR(mean(fio), c.mean, c.tol) << "fio";
      EXPECT_NEAR(mean(ours), c.mean, c.tol) << "ioacct";
    } else {
      EXPECT_NEAR(mean(ours), mean(fio), c.tol);
      EXPECT_LT(mean(fio), 12697.6) << "the random map cuts reads short";
    }
    if (c.file == std::string("bs-dirs.fio")) {
      const json fio_reads = run_fio(file, {"IOACCT_TARGET=" + data})["jobs"][0]["read"];
      const json our_reads = stdout_json(o)["jobs"][0]["read"];
      EXPECT_EQ(fio_reads["io_bytes"].get<uint64_t>(), 4096 * fio_reads["total_ios"].get<uint64_t>());
      EXPECT_EQ(our_reads["io_bytes"].get<uint64_t>(), 4096 * our_reads["total_ios"].get<uint64_t>());
      // number_ios=3000: ioacct's exactly; fio 3.33 stops at 2,966 of them
      // here, every run (a count of its own; within 2%).
      EXPECT_EQ(our_reads["total_ios"].get<uint64_t>() + ours["total_ios"].get<uint64_t>(), 3000u);
      EXPECT_NEAR(fio_reads["total_ios"].get<double>() + fio["total_ios"].get<double>(), 3000, 60);
      EXPECT_NEAR(our_reads["total_ios"].get<double>() / 3000, 0.7, 0.05);  // rwmixread=70: 6 sigma 0.05
    } else if (c.dir == std::string("read")) {
      EXPECT_EQ(ours["total_ios"], fio["total_ios"]) << "number_ios";
    } else {
      // One pass of 32 MiB: fio ends it at its bytes, ioacct at 32 MiB / the
      // mean size in I/Os, whose bytes are 32 MiB within 6 sigma (2.4 MiB).
      EXPECT_EQ(fio["io_bytes"], 32u << 20);
      EXPECT_NEAR(ours["io_bytes"].get<double>(), 32 << 20, 2.4 * (1 << 20));
    }
  }
}

// --bs R,W (fio's bs=r,w) on the device: every read is 4k and every write
// 16k and on the 16k grid, whole, as fio's are; each direction's map takes
// no block of its grid twice in a pass; the run's bytes each way are the
// device's.
TEST(BenchBssplit, SizesPerDirectionReachTheDeviceAsAsked) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  IssueTrace trace(rdev_of(loop.path()));
  const auto o = run_ioacct({"bench", "--format", "json", "--rw", "randrw", "--rwmix-read", "70", "--bs", "4k,16k",
                             "--iodepth", "1", "--ios", "2000", "--acct", "basic", "--destroy-data", loop.path()});
  std::vector<Issue> issued = trace.stop();
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // Before a device is written, ioacct's main thread reads its signatures
  // (libblkid, workload/safety.hpp): the run's requests are its worker's.
  std::map<std::string, int> by_task;
  for (const Issue& i : issued) ++by_task[i.task];
  const std::string worker =
      std::max_element(by_task.begin(), by_task.end(), [](const auto& a, const auto& b) { return a.second < b.second; })->first;
  std::erase_if(issued, [&](const Issue& i) { return i.task != worker; });
  const json r = stdout_json(o);
  EXPECT_EQ(r["context"]["options"]["bs_by_direction"], json::parse(R"({"read":4096,"write":16384,"trim":16384})"));
  ASSERT_EQ(issued.size(), 2000u);
  std::vector<int> read(16384, 0), written(4096, 0);
  uint64_t rbytes = 0, wbytes = 0, writes = 0, twice = 0;
  for (const Issue& i : issued) {
    if (i.write) {
      EXPECT_EQ(i.bytes, 16384u);
      EXPECT_EQ(i.sector % 32, 0u) << "writes on the 16k grid: sector " << i.sector;
      twice += written[i.sector / 32]++ > 0;
      wbytes += i.bytes;
      ++writes;
    } else {
      EXPECT_EQ(i.bytes, 4096u);
      EXPECT_EQ(i.sector % 8, 0u) << "reads on the 4k grid: sector " << i.sector;
      twice += read[i.sector / 8]++ > 0;
      rbytes += i.bytes;
    }
  }
  EXPECT_EQ(twice, 0u) << "a block of a direction's grid taken twice in one pass";
  EXPECT_NEAR(static_cast<double>(writes) / 2000.0, 0.3, 0.07);  // 6 sigma
  EXPECT_EQ(r["results"]["bytes_read"].get<uint64_t>(), rbytes);
  EXPECT_EQ(r["results"]["bytes_written"].get<uint64_t>(), wbytes);
}

// bssplit-dirs.fio (reads 4k/50:8k/50, writes 4k/90:16k/10) in fio and in
// ioacct, on the same file: each direction's mean size is the same in both
// within 6 sigma of the difference of two means of ~1,500 (reads' sd 2k:
// 460 bytes; writes' 3.7k: 800), and under its list's own mean (6,144 and
// 5,325 bytes) by what the random map cuts short.
TEST(BenchBssplit, ListsPerDirectionHaveFiosMeanSizesInBothTools) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  sh("dd if=/dev/urandom of=" + data + " bs=1M count=64 status=none");
  const std::string file = std::string(IOACCT_SOURCE_DIR) + "/tests/fio/bssplit-dirs.fio";
  const json fio = run_fio(file, {"IOACCT_TARGET=" + data})["jobs"][0];
  const auto o = run_ioacct({"bench", "--fio", file, "--format", "fio-json"}, {.env = {"IOACCT_TARGET=" + data}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json ours = stdout_json(o)["jobs"][0];
  const auto mean = [](const json& d) { return d["io_bytes"].get<double>() / d["total_ios"].get<double>(); };
  for (const auto& [d, list_mean, tol] : {std::tuple{"read", 6144.0, 460.0}, std::tuple{"write", 5324.8, 800.0}}) {
    SCOPED_TRACE(d);
    ASSERT_GT(fio[d]["total_ios"].get<uint64_t>(), 1000u) << fio.dump();
    ASSERT_GT(ours[d]["total_ios"].get<uint64_t>(), 1000u) << ours.dump();
    std::printf("bssplit-dirs.fio %s: mean bytes per I/O: fio %.0f, ioacct %.0f\n", d, mean(fio[d]), mean(ours[d]));
    EXPECT_NEAR(mean(ours[d]), mean(fio[d]), tol);
    EXPECT_LE(mean(ours[d]), list_mean + tol);
    EXPECT_GE(mean(ours[d]), 4096);
  }
  EXPECT_EQ(ours["read"]["total_ios"].get<uint64_t>() + ours["write"]["total_ios"].get<uint64_t>(), 3000u);
}

// --blockalign on the device: 4k reads on 64k boundaries, every one on
// one; 64k reads on 4k boundaries, on 4k ones and most not on 64k ones,
// each whole and inside the device.
TEST(BenchBssplit, BlockalignPutsRandomOffsetsOnItsBoundary) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  for (const auto& [bs, ba] : {std::pair{4096u, 65536u}, std::pair{65536u, 4096u}}) {
    SCOPED_TRACE(std::to_string(bs) + " on " + std::to_string(ba));
    IssueTrace trace(rdev_of(loop.path()));
    const auto o = run_ioacct({"bench", "--format", "json", "--rw", "randread", "--bs", std::to_string(bs),
                               "--blockalign", std::to_string(ba), "--iodepth", "1", "--ios", "1000", "--acct", "basic",
                               loop.path()});
    const auto issued = trace.stop();
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(stdout_json(o)["context"]["options"]["blockalign"], ba);
    ASSERT_EQ(issued.size(), 1000u);
    uint64_t off_bs = 0;
    for (const Issue& i : issued) {
      EXPECT_EQ(i.bytes, bs);
      EXPECT_EQ(i.sector * 512 % ba, 0u) << "sector " << i.sector;
      EXPECT_LE(i.sector * 512 + i.bytes, 64u << 20) << "past the device's end";
      off_bs += i.sector * 512 % bs != 0;
    }
    // On 4k boundaries a 64k read is on a 64k one one time in 16.
    if (ba < bs) {
      EXPECT_GT(off_bs, 800u);
    }
  }
}

}  // namespace
}  // namespace ioacct::test
