// Several jobs in one run (--job, --fio) on a loop device only the test uses,
// with the block layer's own counters (/sys/block/NAME/stat) as the witness:
// every job's I/Os, trims and syncs reach the device, no more and no fewer.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <dirent.h>

#include <algorithm>
#include <cstdio>
#include <array>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

const std::string kCorpus = std::string(IOACCT_SOURCE_DIR) + "/tests/fio";

// /sys/block/NAME/stat: reads, read merges, ..., writes (4), write merges (5),
// ..., discards (11), discard merges (12), ..., flushes (15).
std::vector<uint64_t> device_stat(const std::string& name) {
  std::ifstream f("/sys/block/" + name + "/stat");
  std::vector<uint64_t> v;
  uint64_t x;
  while (f >> x) v.push_back(x);
  v.resize(17, 0);
  return v;
}

const json& job(const json& j, const std::string& name) {
  for (const auto& x : j["jobs"])
    if (x["name"] == name) return x;
  static const json none;
  ADD_FAILURE() << "no job " << name << " in " << j["jobs"].dump().substr(0, 300);
  return none;
}

// Acceptance: a depth-1 reader and a depth-16 writer on one loop device, from
// a job file: each job's IOPS, p99 and CPU; and their I/Os, summed, are the
// device's completed I/Os (merged ones counted where diskstats merged them).
TEST(BenchJobs, TwoJobsFromAJobFileAddUpToTheDevicesIos) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "64m", .random_data = true});
  const auto before = device_stat(loop.name());
  auto o = run_ioacct({"bench", "--fio", kCorpus + "/two-jobs-counted.fio", "--destroy-data", "--format", "json"},
                      {.env = {"IOACCT_TARGET=" + loop.path()}});
  const auto after = device_stat(loop.name());
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = stdout_json(o);
  ASSERT_EQ(j["jobs"].size(), 2u);
  const json& reader = job(j, "reader");
  const json& writer = job(j, "writer");
  EXPECT_EQ(reader["results"]["ios"], 1024) << "one pass of size=4m in 4 KiB reads";
  EXPECT_EQ(writer["results"]["ios"], 4096) << "one pass of size=16m in 4 KiB writes";
  EXPECT_EQ(reader["results"]["reads"], 1024);
  EXPECT_EQ(writer["results"]["writes"], 4096);
  EXPECT_EQ(reader["options"]["iodepth"], 1);
  EXPECT_EQ(writer["options"]["iodepth"], 16);
  for (const json* x : {&reader, &writer}) {
    const json& r = (*x)["results"];
    EXPECT_GT(r["iops"].get<double>(), 0) << (*x)["name"];
    EXPECT_GT(r["latency_ns"]["p99"].get<uint64_t>(), 0u) << (*x)["name"];
    EXPECT_GE(r["latency_ns"]["p99"].get<uint64_t>(), r["latency_ns"]["p50"].get<uint64_t>());
    ASSERT_TRUE(r["cpu"].is_object()) << (*x)["name"];
    EXPECT_GT(r["cpu"]["submitters_s"].get<double>(), 0) << (*x)["name"];
    EXPECT_EQ(r["cpu"]["by_thread_s"].size(), 1u);
  }
  // The witness: the block layer's counters for this device. Around the
  // whole process they also hold libblkid's probe of the device before the
  // writer may write it (reads); over the run's window (sampled before the
  // first I/O and after the last) exactly the jobs' I/Os.
  const uint64_t read_merges = after[1] - before[1];
  const uint64_t writes = after[4] - before[4], write_merges = after[5] - before[5];
  EXPECT_GE(after[0] - before[0] + read_merges, 1024u);
  EXPECT_EQ(writes + write_merges, 4096u) << writes << " writes completed, " << write_merges << " merged";
  EXPECT_EQ(j["results"]["ios"], 1024 + 4096) << "the run's total is the jobs' sum";
  bool seen = false;
  for (const auto& d : j["results"]["devices"])
    if (d["device"] == loop.name()) {
      seen = true;
      EXPECT_EQ(d["reads"].get<uint64_t>() + read_merges, 1024u) << "reads in the window, merged ones too";
      EXPECT_EQ(d["writes"].get<uint64_t>() + write_merges, 4096u) << "writes in the window, merged ones too";
    }
  EXPECT_TRUE(seen) << j["results"]["devices"];
  // Threads say which job they belong to.
  ASSERT_EQ(j["threads"].size(), 2u);
  EXPECT_EQ(j["threads"][0]["job"], 0);
  EXPECT_EQ(j["threads"][1]["job"], 1);
}

// fio's counts and verify, run for real: the fill writes two passes of 2 MiB
// and every block it wrote reads back as written; the reader's pass of 1 MiB
// is cut to number_ios. The witness is the I/O each job completed and the
// blocks the check re-read.
TEST(BenchJobs, LoopsVerifyAndNumberIosRunAsInFio) {
  TempDir dir;
  const std::string f = dir.path() + "/data";
  sh("head -c 8388608 /dev/urandom > " + f);
  auto o = run_ioacct({"bench", "--fio", kCorpus + "/verify-loops.fio", "--format", "json"},
                      {.env = {"IOACCT_TARGET=" + f}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json& fill = j["results"];
  EXPECT_EQ(fill["writes"], 1024) << "loops=2 passes of size=2m in 4 KiB writes";
  ASSERT_TRUE(fill["verify"].is_object()) << fill.dump().substr(0, 300);
  EXPECT_EQ(fill["verify"]["blocks_written"], 512) << "the 2 MiB it wrote";
  EXPECT_EQ(fill["verify"]["checked_after"], 512);
  EXPECT_EQ(fill["verify"]["mismatches"], 0);
  EXPECT_EQ(j["context"]["options"]["engine"], "libaio");

  o = run_ioacct({"bench", "--fio", kCorpus + "/number-ios.fio", "--format", "json"}, {.env = {"IOACCT_TARGET=" + f}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  j = stdout_json(o);
  EXPECT_EQ(j["results"]["reads"], 100) << "number_ios=100 ends the pass of io_size=1m (256 reads) early";
}

TEST(BenchJobs, JobsOnTheCommandLineAndTheirConsoleReport) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "64m", .random_data = true});
  const std::string html = dir.path() + "/r.html";
  auto o = run_ioacct({"bench", "--runtime", "1s", "--destroy-data", "--job", "r:--rw randread --iodepth 1",
                       "--job", "w:--rw randwrite --iodepth 16 --threads 2 --startdelay 300ms", "--report", html,
                       loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // The HTML report: a row per job and one for the whole run; jobs are not
  // alternatives, so no ratio or verdict between them.
  std::ifstream f(html);
  const std::string page((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  for (const char* want : {"<td class=\"text\">job r</td>", "<td class=\"text\">job w</td>",
                           "<td class=\"text\">all 2 jobs</td>"})
    EXPECT_NE(page.find(want), std::string::npos) << want;
  EXPECT_EQ(page.find(">baseline<"), std::string::npos);
  for (const char* want : {"job r: randread 4 KiB O_DIRECT, uring, depth 1", "job w: randwrite 4 KiB O_DIRECT, uring, depth 16",
                           "started 300", "all 2 jobs: 3 threads", "thread 1", "cpu        "})
    EXPECT_NE(o.out.find(want), std::string::npos) << "'" << want << "' in\n" << o.out;
  EXPECT_NE(o.err.find("job w: randwrite"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("device     " + loop.name()), std::string::npos) << o.out;
}

TEST(BenchJobs, StartdelayAndStonewallPlaceTheWindows) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "64m", .random_data = true});
  auto o = run_ioacct({"bench", "--fio", kCorpus + "/startdelay.fio", "--destroy-data", "--format", "json"},
                      {.env = {"IOACCT_TARGET=" + loop.path(), "RUNTIME=2"}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  const json& burst = job(j, "burst")["results"];
  EXPECT_NEAR(burst["start_s"].get<double>(), 0.5, 0.1) << "startdelay=500ms";
  EXPECT_NEAR(burst["window_s"].get<double>(), 0.5, 0.1) << "its own runtime=500ms";
  EXPECT_NEAR(job(j, "background")["results"]["window_s"].get<double>(), 2.0, 0.2);

  o = run_ioacct({"bench", "--fio", kCorpus + "/stonewall.fio", "--destroy-data", "--format", "json"},
                 {.env = {"IOACCT_TARGET=" + loop.path(), "RUNTIME=1"}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  j = stdout_json(o);
  const json& fill = job(j, "fill")["results"];
  const json& read = job(j, "read-back")["results"];
  EXPECT_EQ(fill["ios"], 64) << "8 MiB in 128 KiB writes";
  EXPECT_GE(read["start_s"].get<double>(), fill["window_s"].get<double>()) << "starts after the fill ends";
  EXPECT_GT(read["ios"].get<uint64_t>(), 0u);
}

TEST(BenchJobs, TrimsAndSyncsReachTheDevice) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "64m", .random_data = true});
  for (const char* engine : {"uring", "psync"}) {
    SCOPED_TRACE(engine);
    auto before = device_stat(loop.name());
    auto o = run_ioacct({"bench", "--rw", "randtrim", "--bs", "64k", "--ios", "300", "--engine", engine,
                         "--destroy-data", "--format", "json", loop.path()});
    auto after = device_stat(loop.name());
    ASSERT_EQ(o.exit_code, 0) << o.err;
    json j = stdout_json(o);
    EXPECT_EQ(j["results"]["trims"], 300);
    EXPECT_EQ(j["results"]["bytes_trimmed"], 300 * 65536);
    EXPECT_EQ(j["results"]["trim_latency_ns"]["count"], 300);
    EXPECT_EQ(after[11] - before[11] + after[12] - before[12], 300u) << "discards completed + merged in diskstats";
    EXPECT_EQ(after[4] - before[4], 0u) << "no writes";

    before = device_stat(loop.name());
    o = run_ioacct({"bench", "--rw", "randwrite", "--fsync", "10", "--ios", "400", "--iodepth", "1", "--engine",
                    engine, "--destroy-data", "--format", "json", loop.path()});
    after = device_stat(loop.name());
    ASSERT_EQ(o.exit_code, 0) << o.err;
    j = stdout_json(o);
    EXPECT_EQ(j["results"]["writes"], 400);
    const uint64_t syncs = j["results"]["syncs"];
    EXPECT_GE(syncs, 39u) << "one after every 10 writes";
    EXPECT_LE(syncs, 40u);
    EXPECT_EQ(j["results"]["sync_latency_ns"]["count"], syncs);
    EXPECT_EQ(after[15] - before[15], syncs) << "each fsync of the device is one flush in diskstats";
  }
}

TEST(BenchJobs, TrimsOnAFilePunchHoles) {
  TempDir dir;
  const std::string f = dir.path() + "/data";
  sh("dd if=/dev/urandom of=" + f + " bs=1M count=16 status=none");
  struct stat st {};
  stat(f.c_str(), &st);
  const auto blocks_before = st.st_blocks;
  auto o = run_ioacct({"bench", "--rw", "trim", "--bs", "1m", "--ios", "8", "--format", "json", f});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  stat(f.c_str(), &st);
  EXPECT_EQ(st.st_size, 16 << 20) << "the file keeps its size";
  EXPECT_LE(st.st_blocks, blocks_before / 2 + 256) << "8 of its 16 MiB are holes now";
  sh("cmp -n 1048576 " + f + " /dev/zero");  // the first (trimmed) MiB reads as zeros
}

TEST(BenchJobs, SplitSubmitTimesEverySubmission) {
  auto o = run_ioacct({"bench", "--size", "16m", "--ios", "2000", "--iodepth", "8", "--split-submit", "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json r = stdout_json(o)["results"];
  EXPECT_EQ(r["unsplit_ios"], 0);
  // An I/O complete by its submission's return has no clat of its own.
  EXPECT_EQ(r["clat_ns"]["count"].get<uint64_t>() + r["complete_at_submit_ios"].get<uint64_t>(), 2000u) << r;
  EXPECT_GT(r["clat_ns"]["min"].get<uint64_t>(), 0u) << "no clat is a clock read shared with the slat's end";
  EXPECT_GE(r["slat_ns"]["count"].get<uint64_t>(), 2000u);
  // Per I/O, slat + clat is its latency, and an I/O complete at its
  // submission's return has a slat only: so the sums, not the means, add up
  // (the means did only while no I/O was complete at submit; beside other
  // work 280 of the 2,000 were, and slat's mean + clat's read 1.13x lat's).
  auto sum = [&](const char* key) { return r[key]["mean"].get<double>() * r[key]["count"].get<double>(); };
  EXPECT_LE(sum("slat_ns") + sum("clat_ns"), sum("latency_ns") * 1.05 + 1000 * 2000) << "slat + clat is lat";
  EXPECT_GT(r["latency_ns"]["stdev"].get<double>(), 0);
}

// A nop completes inside the enter that submits it: with --split-submit
// its whole latency is slat. Its clat would be the same clock read twice,
// so clat leaves such I/Os out and the console counts them (the partial
// cases: tests/unit/console_split_test.cpp).
TEST(BenchJobs, SplitSubmitLeavesIosCompleteAtSubmitOutOfClat) {
  auto o = run_ioacct({"bench", "--engine", "nop", "--iodepth", "8", "--ios", "5000", "--split-submit", "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json r = stdout_json(o)["results"];
  EXPECT_EQ(r["complete_at_submit_ios"], 5000) << r;
  EXPECT_EQ(r["unsplit_ios"], 0);
  EXPECT_TRUE(r["clat_ns"].is_null()) << r["clat_ns"];
  EXPECT_EQ(r["slat_ns"]["count"], 5000);
  auto c = run_ioacct({"bench", "--engine", "nop", "--iodepth", "8", "--ios", "5000", "--split-submit"});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("5000 I/Os (100.0%) complete by the return of the io_uring_enter that submitted it"),
            std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("clat       min 0 ns"), std::string::npos) << c.out;
}

// fio's zones, run by fio and by ioacct on zeroed files, with the files'
// contents as the witness: the blocks each wrote are counted per zone. 3000
// writes: ~1500 into the first zone's 819 blocks (~690 of them hit, most
// several times), ~900 into the next 2458, ~600 into the last 13107. Each tool's
// written share per zone lies far from the uniform one's (5%, 15%, 80% of
// the blocks written), on the same side as the other tool's.
TEST(BenchJobs, ZonedWritesLandInTheirZonesAsFiosDo) {
  TempDir dir;
  auto zone_blocks = [](const std::string& path) {
    std::ifstream f(path, std::ios::binary);
    std::vector<char> block(4096);
    std::array<uint64_t, 3> written{};
    for (uint64_t b = 0; f.read(block.data(), 4096); ++b)
      if (std::any_of(block.begin(), block.end(), [](char c) { return c != 0; }))
        ++written[b < 819 ? 0 : b < 3277 ? 1 : 2];  // 5% and 20% of 16384 blocks
    return written;
  };
  std::array<std::array<uint64_t, 3>, 2> seen{};
  for (int tool = 0; tool < 2; ++tool) {
    const std::string f = dir.path() + (tool ? "/ioacct" : "/fio");
    sh("truncate -s 64m " + f);
    if (tool == 0) {
      sh("IOACCT_TARGET=" + f + " fio --output=/dev/null " + kCorpus + "/zoned.fio");
    } else {
      auto o = run_ioacct({"bench", "--fio", kCorpus + "/zoned.fio", "--format", "json"}, {.env = {"IOACCT_TARGET=" + f}});
      ASSERT_EQ(o.exit_code, 0) << o.err;
      EXPECT_EQ(stdout_json(o)["results"]["writes"], 3000);
    }
    seen[tool] = zone_blocks(f);
    const auto& w = seen[tool];
    const double all = static_cast<double>(w[0] + w[1] + w[2]);
    ASSERT_GT(all, 1000) << (tool ? "ioacct" : "fio");
    EXPECT_GT(static_cast<double>(w[0]) / all, 0.20) << (tool ? "ioacct" : "fio") << ": the first 5% took " << w[0];
    EXPECT_LT(static_cast<double>(w[2]) / all, 0.45) << (tool ? "ioacct" : "fio") << ": the last 80% took " << w[2];
    // 1500 writes into 819 blocks leave 819·e^(-1500/819) ≈ 131 unwritten.
    EXPECT_GT(w[0], 600u) << "the hot zone's 819 blocks are mostly written";
  }
  std::printf("blocks written per zone: fio %lu %lu %lu, ioacct %lu %lu %lu\n", static_cast<unsigned long>(seen[0][0]),
              static_cast<unsigned long>(seen[0][1]), static_cast<unsigned long>(seen[0][2]),
              static_cast<unsigned long>(seen[1][0]), static_cast<unsigned long>(seen[1][1]),
              static_cast<unsigned long>(seen[1][2]));
}

// fio's log files, written by fio and by ioacct from the same job file: the
// same files, each line fio's five comma-separated fields, time rising by
// about the 500 ms average, reads as the direction; ioacct's bandwidth line
// is its IOPS line times 4 KiB (the same interval).
TEST(BenchJobs, LogsAreWrittenAsFioWritesThem) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  sh("dd if=/dev/urandom of=" + data + " bs=1M count=16 status=none");
  using Line = std::array<int64_t, 5>;
  auto read_log = [](const std::string& path) {
    std::ifstream f(path);
    std::vector<Line> lines;
    for (std::string s; std::getline(f, s);) {
      Line l{};
      EXPECT_EQ(std::sscanf(s.c_str(), "%ld, %ld, %ld, %ld, %ld", &l[0], &l[1], &l[2], &l[3], &l[4]), 5) << path << ": " << s;
      lines.push_back(l);
    }
    return lines;
  };
  for (const char* tool : {"fio", "ioacct"}) {
    const std::string logs = dir.path() + "/" + tool;
    sh("mkdir -p " + logs);
    const std::vector<std::string> env = {"IOACCT_TARGET=" + data, "LOGDIR=" + logs};
    if (std::string(tool) == "fio") {
      sh("IOACCT_TARGET=" + data + " LOGDIR=" + logs + " fio --output=/dev/null " + kCorpus + "/logs.fio");
    } else {
      auto o = run_ioacct({"bench", "--fio", kCorpus + "/logs.fio"}, {.env = env});
      ASSERT_EQ(o.exit_code, 0) << o.err;
    }
    std::map<std::string, std::vector<Line>> got;
    for (const char* kind : {"bw", "iops", "lat", "slat", "clat"}) {
      got[kind] = read_log(logs + "/x_" + kind + ".1.log");
      const auto& v = got[kind];
      ASSERT_GE(v.size(), 2u) << tool << " " << kind;
      for (size_t i = 0; i < v.size(); ++i) {
        EXPECT_GT(v[i][1], 0) << tool << " " << kind;
        EXPECT_EQ(v[i][2], 0) << tool << " " << kind << ": reads";
        EXPECT_EQ(v[i][3], 0) << "an averaged log has no block size";
        if (i > 0) {
          EXPECT_GE(v[i][0], v[i - 1][0]) << tool << " " << kind;
        }
      }
      EXPECT_NEAR(static_cast<double>(v[0][0]), 500, 150) << tool << " " << kind << ": the first average ends near 500 ms";
    }
    // Each interval's mean lat is about its slat's and clat's, in both
    // tools. Not exactly: an interval's slat is of the I/Os submitted in it,
    // its clat and lat of those reaped in it, and ioacct's clat leaves out
    // an I/O already complete when its submission returned (all slat). On
    // a CPU shared with a sanitizer build the sum read 9% over lat once (a
    // slow interval's edge); the logs are fio's shape, not a new figure.
    for (size_t i = 0; i < std::min({got["lat"].size(), got["slat"].size(), got["clat"].size()}); ++i) {
      const double lat = static_cast<double>(got["lat"][i][1]);
      EXPECT_NEAR(static_cast<double>(got["slat"][i][1] + got["clat"][i][1]), lat, 0.2 * lat) << tool << " interval " << i;
      EXPECT_LT(got["slat"][i][1], got["lat"][i][1]) << tool << " interval " << i;
    }
    if (std::string(tool) == "ioacct") {
      ASSERT_EQ(got["bw"].size(), got["iops"].size());
      for (size_t i = 0; i < got["bw"].size(); ++i)
        EXPECT_NEAR(static_cast<double>(got["bw"][i][1]), 4.0 * static_cast<double>(got["iops"][i][1]), 4.0);
    }
  }
  // A log is of one job's reads or writes: ioacct's time series is the run's.
  const std::string two = dir.path() + "/two.fio", mixed = dir.path() + "/mixed.fio";
  sh("printf '[a]\\nrw=randread\\nwrite_bw_log=x\\n[b]\\nrw=randread\\n' > " + two);
  sh("printf '[m]\\nrw=randrw\\nwrite_iops_log=x\\n' > " + mixed);
  for (const auto& [file, says] : {std::pair{two, "write_bw_log: [a] is one of 2 jobs"},
                                   std::pair{mixed, "rw=randrw: ioacct's time series does not keep reads and writes apart"}}) {
    auto o = run_ioacct({"bench", "--fio", file}, {.env = {"IOACCT_TARGET=" + data}});
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_NE(o.err.find(says), std::string::npos) << o.err;
  }
}

// Acceptance: each bad job file is one clear error, exit code 2.
TEST(BenchJobs, BadJobFilesAreOneClearErrorEach) {
  struct Case {
    const char* file;
    const char* says;
  } cases[] = {{"bad/unknown-option.fio", "unknown-option.fio:6: thinktime: not an option ioacct maps"},
               {"bad/bad-value.fio", "bad-value.fio:5: iodepth: cannot read 'lots' as a whole number"},
               {"bad/missing-section.fio", "missing-section.fio:2: rw: an option outside any [section]"},
               {"bad/include-loop.fio", "include-loop-b.fio:2: include include-loop.fio ("},
               {"bad/unreadable-include.fio", "unreadable-include.fio:3: include no-such-include.fio ("}};
  for (const auto& c : cases) {
    auto o = run_ioacct({"bench", "--fio", kCorpus + "/" + c.file}, {.env = {"IOACCT_TARGET=/dev/null"}});
    EXPECT_EQ(o.exit_code, 2) << c.file << ": " << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
    EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << "one line: " << o.err;
    EXPECT_EQ(o.err.rfind("error: ", 0), 0u) << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << c.file << ": " << o.err;
  }
}

// Found by a hostile pass: `--fio FIFO` waited for a writer for ever. A job
// file piped in (`--fio /dev/stdin`) runs; a FIFO is opened without waiting
// for a writer, and Ctrl-C ends ioacct while it waits for one (a FIFO that
// nobody writes for 10 s is an error: tests/unit/user_file_test.cpp).
TEST(BenchJobs, AJobFileFromAPipeRunsAndAFifoNeverHoldsCtrlCUp) {
  const RunOptions piped{.prefix = {"/bin/sh", "-c",
                                    "printf '[piped]\\nrw=read\\nsize=1m\\nbs=4k\\n' | \"$0\" \"$@\""}};
  auto o = run_ioacct({"bench", "--fio", "/dev/stdin", "--format", "json"}, piped);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto j = stdout_json(o);
  ASSERT_EQ(j["jobs"].size(), 1u) << o.out;
  EXPECT_EQ(j["jobs"][0]["name"], "piped");

  TempDir dir;
  const std::string fifo = dir.path() + "/job.fio";
  ASSERT_EQ(mkfifo(fifo.c_str(), 0600), 0);
  o = run_ioacct({"bench", "--fio", fifo}, {.signal = SIGINT, .signal_delay_s = 1, .timeout_s = 30});
  EXPECT_EQ(o.exit_code, 128 + SIGINT) << o.err;
  EXPECT_GE(o.signal_to_exit_s, 0);
  EXPECT_LT(o.signal_to_exit_s, 5) << "Ctrl-C ends a wait on a FIFO at once";
}

TEST(BenchJobs, MistakesInJobsAreNamed) {
  struct Case {
    std::vector<std::string> args;
    const char* says;
  } cases[] = {
      {{"--job", "a:--ramp 1s"}, "--job a: --ramp is an option of the whole run"},
      {{"--job", "a:--bs 4q"}, "--job a: --bs: cannot read '4q'"},
      {{"--job", "a:--nonsense"}, "--job a: "},
      {{"--job", "a:", "--job", "a:"}, "two jobs are named 'a'"},
      {{"--job", "no colon"}, "is not NAME:OPTIONS"},
      {{"--job", "b@d:"}, "is not a job name"},
      {{"--job", "a:--rw randread '"}, "quote"},
      {{"--job", "a:", "--job", "b:", "--rw", "randwrite", "--verify"}, "--verify: checks one job's writes"},
      {{"--fio", kCorpus + "/two-jobs.fio", "--bs", "8k"}, "--bs: with --fio the job file says"},
      {{"--fio", kCorpus + "/two-jobs.fio", "--job", "a:"}, "give --job or --fio, not both"},
      {{"--rw", "read", "--random-distribution", "zipf:1.2"}, "--random-distribution: --rw read is sequential"},
      {{"--rw", "randread", "--fsync", "4"}, "--fsync: syncs follow writes"},
      {{"--rw", "randtrim", "--verify"}, "--verify: cannot check blocks this run trims"},
      {{"--rw", "randrw", "--rwmix-read", "80", "--rwmix-trim", "30"}, "make more than 100%"},
      {{"--engine", "psync", "--split-submit"}, "--split-submit: psync has no submission to split"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"bench"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    if (c.args[0] != "--fio") args.insert(args.end(), {"--size", "1m"});
    auto o = run_ioacct(args, {.env = {"IOACCT_TARGET=/dev/null", "RUNTIME=1"}});
    EXPECT_EQ(o.exit_code, 2) << c.args[1] << ": " << o.err;
    EXPECT_NE(o.err.find(c.says), std::string::npos) << "'" << c.says << "' in: " << o.err;
  }
  // A compare variant is one job: --job and --fio inside one are named, not dropped.
  for (const char* inner : {"a=--job x:--rw read", "a=--fio two.fio"}) {
    auto o = run_ioacct({"compare", "--config", inner, "--size", "1m"}, {.env = {"IOACCT_TARGET=/dev/null"}});
    EXPECT_EQ(o.exit_code, 2) << inner << ": " << o.err;
    EXPECT_NE(o.err.find("variant 'a': --"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find(": a variant is one job"), std::string::npos) << o.err;
  }
}

}  // namespace
}  // namespace ioacct::test
