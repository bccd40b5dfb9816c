// Each io_uring mode, proved by the kernel's own view of the ring
// (/proc/PID/fdinfo), not by what ioacct says it did.
#include <dirent.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "acct/procfs.hpp"
#include "common/files.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

struct Ring {
  int fd;
  FdInfo info;
};

// Every io_uring the process holds, with its fdinfo. fdinfo shows SqThread
// -1 when it cannot take the ring's lock at that instant (an SQ thread holds
// it while it submits), so with `sqpoll` each ring is read until it can.
std::vector<Ring> rings_of(int pid, bool sqpoll) {
  std::vector<Ring> out;
  const std::string dir = "/proc/" + std::to_string(pid) + "/fd";
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      char target[256] = {};
      if (readlink((dir + "/" + e->d_name).c_str(), target, sizeof(target) - 1) <= 0) continue;
      if (std::string(target) != "anon_inode:[io_uring]") continue;
      FdInfo info;
      for (int tries = 0; tries < 2000; ++tries) {
        info = parse_fdinfo(read_file("/proc/" + std::to_string(pid) + "/fdinfo/" + e->d_name));
        // Lines printed only under the lock: UserFiles (6.x), and the SQ
        // thread's, which read -1 without it.
        const bool locked = info.count("UserFiles") > 0;
        const bool sq_ok = !sqpoll || (info.count("SqThread") && info.at("SqThread") != "-1");
        if (locked && sq_ok) break;
        usleep(200);
      }
      out.push_back({std::atoi(e->d_name), info});
    }
    closedir(d);
  }
  return out;
}

// Runs a short bench with `extra` flags and returns the rings seen while it ran.
std::vector<Ring> run_and_look(const std::vector<std::string>& extra, json* report = nullptr) {
  TempDir dir;
  std::vector<std::string> args = {"bench", "--format", "json", "--size", "16m", "--runtime", "1500ms"};
  args.insert(args.end(), extra.begin(), extra.end());
  std::vector<Ring> rings;
  auto o = run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}, .action_after = "ioacct bench:",
                             .action_pid = [&](int pid) {
                               usleep(300'000);  // let the run get going
                               rings = rings_of(pid, std::find(extra.begin(), extra.end(), "--sqpoll") != extra.end());
                             }});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  if (report && o.exit_code == 0) *report = json::parse(o.out);
  return rings;
}

bool has_flag(const json& j, const std::string& flag) {
  for (const auto& f : j["context"]["setup_flags"])
    if (f == flag) return true;
  return false;
}

TEST(BenchModes, DefaultRingGetsTheFastFlagsAndNoSqThread) {
  json j;
  auto rings = run_and_look({}, &j);
  ASSERT_EQ(rings.size(), 1u);
  EXPECT_FALSE(fdinfo_number(rings[0].info, "SqThread").value_or(0) > 0) << "no SQ thread without --sqpoll";
  EXPECT_EQ(fdinfo_number(rings[0].info, "UserFiles"), 0u);
  EXPECT_EQ(fdinfo_number(rings[0].info, "UserBufs"), 0u);
  for (const char* f : {"COOP_TASKRUN", "SINGLE_ISSUER", "DEFER_TASKRUN"}) EXPECT_TRUE(has_flag(j, f)) << f;
}

TEST(BenchModes, FlagsCanBeTurnedOff) {
  json j;
  run_and_look({"--no-defer-taskrun", "--no-coop-taskrun"}, &j);
  EXPECT_FALSE(has_flag(j, "DEFER_TASKRUN"));
  EXPECT_FALSE(has_flag(j, "COOP_TASKRUN"));
  EXPECT_TRUE(has_flag(j, "SINGLE_ISSUER"));
}

TEST(BenchModes, SqpollRunsAnSqThreadOnTheAskedCpu) {
  json j;
  auto rings = run_and_look({"--sqpoll", "--sq-cpu", "1", "--sq-idle", "20ms"}, &j);
  ASSERT_EQ(rings.size(), 1u);
  const auto tid = fdinfo_number(rings[0].info, "SqThread");
  ASSERT_TRUE(tid && *tid > 0) << "fdinfo shows the SQ thread";
  EXPECT_EQ(fdinfo_number(rings[0].info, "SqThreadCpu"), 1u);
  EXPECT_TRUE(has_flag(j, "SQPOLL"));
  EXPECT_TRUE(has_flag(j, "SQ_AFF"));
  EXPECT_FALSE(has_flag(j, "DEFER_TASKRUN")) << "cannot go with SQPOLL";
  EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u);
}

TEST(BenchModes, SqSharedGivesAllRingsOneSqThread) {
  auto shared = run_and_look({"--sqpoll", "--sq-shared", "--threads", "3", "--iodepth", "12"});
  ASSERT_EQ(shared.size(), 3u);
  const auto t0 = fdinfo_number(shared[0].info, "SqThread");
  ASSERT_TRUE(t0 && *t0 > 0);
  for (const auto& r : shared) EXPECT_EQ(fdinfo_number(r.info, "SqThread"), t0) << "ring fd " << r.fd;
  auto separate = run_and_look({"--sqpoll", "--threads", "2", "--iodepth", "8"});
  ASSERT_EQ(separate.size(), 2u);
  EXPECT_NE(fdinfo_number(separate[0].info, "SqThread"), fdinfo_number(separate[1].info, "SqThread"))
      << "without --sq-shared each ring has its own";
}

TEST(BenchModes, RegisteredFilesAndBuffersAreRegistered) {
  json j;
  auto rings = run_and_look({"--fixed-files", "--fixed-bufs", "--register-ring", "--iodepth", "16"}, &j);
  ASSERT_EQ(rings.size(), 1u);
  EXPECT_EQ(fdinfo_number(rings[0].info, "UserFiles"), 1u) << "one target";
  EXPECT_EQ(fdinfo_number(rings[0].info, "UserBufs"), 16u) << "one buffer per slot";
  const std::string desc = j["context"]["engine_description"];
  EXPECT_NE(desc.find("registered ring fd"), std::string::npos) << desc;
}

TEST(BenchModes, EveryDataPathWritesAndReadsBackExactly) {
  // Data integrity through each submission variant: --verify re-reads every
  // block written and checks reads of written blocks on the fly.
  const std::vector<std::vector<std::string>> variants = {
      {"--vectored"}, {"--fixed-bufs", "--fixed-files"}, {"--sqpoll"}, {"--wait", "spin"},
      {"--wait", "hybrid:20us"}, {"--force-async"}, {"--no-iowait"}, {"--buffered", "--nowait"}};
  for (const auto& v : variants) {
    std::string name;
    for (const auto& a : v) name += a + " ";
    SCOPED_TRACE(name);
    TempDir dir;
    const std::string f = dir.path() + "/data";
    sh("head -c 4194304 /dev/urandom > " + f);
    std::vector<std::string> args = {"bench", "--format", "json", "--rw", "randrw", "--verify-during",
                                     "--ios", "3000", "--iodepth", "16", f};
    args.insert(args.end(), v.begin(), v.end());
    auto o = run_ioacct(args);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    json j = json::parse(o.out);
    EXPECT_EQ(j["results"]["ios"], 3000);
    EXPECT_EQ(j["results"]["verify"]["mismatches"], 0);
    // RWF_NOWAIT may bounce buffered I/O as EAGAIN; it is retried, never an error.
    EXPECT_TRUE(j["results"]["errors"].empty()) << j["results"]["errors"];
  }
}

TEST(BenchModes, IopollWithoutPollQueuesStopsAtOnceWithTheReason) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--iopoll", "--size", "16m", "--runtime", "5s"}, {.env = {"TMPDIR=" + dir.path()}});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("error: --iopoll:"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("no poll queues"), std::string::npos) << o.err;
  EXPECT_TRUE(o.out.empty());
}

TEST(BenchModes, ImpossibleCombinationsAreUsageErrors) {
  const std::vector<std::pair<std::vector<std::string>, std::string>> cases = {
      {{"--iopoll", "--buffered"}, "--iopoll"},
      {{"--wait", "spin", "--engine", "psync"}, "--wait"},
      {{"--sqpoll", "--engine", "psync"}, "--sqpoll"},
      {{"--sq-cpu", "1"}, "--sq-cpu"},
      {{"--sq-idle", "5ms"}, "--sq-idle"},
      {{"--sq-shared"}, "--sq-shared"},
      {{"--sqpoll", "--defer-taskrun"}, "--defer-taskrun"},
      {{"--vectored", "--fixed-bufs"}, "--vectored"},
      {{"--wait", "hybrid"}, "--wait"},
      {{"--wait", "busy"}, "--wait"},
      {{"--sqpoll", "--sq-idle", "1500us"}, "--sq-idle"},
      {{"--defer-taskrun", "--no-defer-taskrun"}, "--defer-taskrun"},
  };
  for (const auto& [extra, flag] : cases) {
    std::vector<std::string> args = {"bench", "--size", "1m", "--runtime", "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 2) << flag << ": " << o.err;
    EXPECT_NE(o.err.find("error: " + flag), std::string::npos) << o.err;
  }
  // A flag the kernel has but this build's liburing cannot drive: said plainly.
  auto o = run_ioacct({"bench", "--no-sqarray", "--size", "1m", "--runtime", "1s"});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("liburing"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ioacct::test
