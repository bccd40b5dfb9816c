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

// The io_uring_enter calls the process's threads make over 50 ms, from the
// syscall tracepoint in a tracefs instance of our own: fdinfo does not say
// whether the ring's fd is registered; the kernel's record of each call does
// (IORING_ENTER_REGISTERED_RING in flags, and an index where the fd goes).
struct EnterCall {
  uint64_t fd, flags;
};
constexpr uint64_t kEnterRegisteredRing = 1u << 4;  // IORING_ENTER_REGISTERED_RING

std::vector<EnterCall> trace_enters(int pid) {
  const std::string dir = "/sys/kernel/tracing/instances/ioacct-enter-" + std::to_string(getpid());
  const std::string ev = dir + "/events/syscalls/sys_enter_io_uring_enter";
  new_trace_instance(dir);
  std::string filter;
  std::istringstream tids(sh("ls /proc/" + std::to_string(pid) + "/task"));
  for (std::string tid; tids >> tid;) filter += (filter.empty() ? "" : " || ") + std::string("common_pid == ") + tid;
  sh("echo '" + filter + "' > " + ev + "/filter && echo 1 > " + ev + "/enable && echo 1 > " + dir + "/tracing_on");
  usleep(50'000);
  sh("echo 0 > " + dir + "/tracing_on && echo 0 > " + ev + "/enable");
  std::vector<EnterCall> out;
  std::istringstream trace(read_file(dir + "/trace"));
  // "ioacct-2937 [001] ..... 1858.84: sys_io_uring_enter(fd: 0, to_submit: 1, min_complete: 1, flags: 0x19, ...)"
  for (std::string line; std::getline(trace, line);) {
    const size_t f = line.find("sys_io_uring_enter(fd: "), g = line.find(", flags: ");
    if (f == std::string::npos || g == std::string::npos) continue;
    out.push_back({std::stoull(line.substr(f + 23), nullptr, 0), std::stoull(line.substr(g + 9), nullptr, 0)});
  }
  std::system(("rmdir " + dir + " 2>/dev/null").c_str());
  return out;
}

// What a short bench run showed of itself while it ran.
struct Seen {
  std::vector<Ring> rings;
  std::vector<EnterCall> enters;  // with `trace`
  Outcome outcome;
};

// Runs a short bench with `extra` flags (under `prefix`, if any) and returns
// the rings seen while it ran and, with `trace`, its io_uring_enter calls.
Seen run_and_see(const std::vector<std::string>& extra, json* report, bool trace,
                 const std::vector<std::string>& prefix = {}) {
  TempDir dir;
  std::vector<std::string> args = {"bench", "--format", "json", "--size", "16m", "--runtime", "1500ms"};
  args.insert(args.end(), extra.begin(), extra.end());
  Seen seen;
  seen.outcome = run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}, .prefix = prefix, .action_after = "ioacct bench:",
                                   .action_pid = [&](int pid) {
                                     usleep(300'000);  // let the run get going
                                     const bool sqpoll = std::find(extra.begin(), extra.end(), "--sqpoll") != extra.end();
                                     seen.rings = rings_of(pid, sqpoll);
                                     if (trace) seen.enters = trace_enters(pid);
                                   }});
  EXPECT_EQ(seen.outcome.exit_code, 0) << seen.outcome.err;
  if (report && seen.outcome.exit_code == 0) *report = stdout_json(seen.outcome);
  return seen;
}

std::vector<Ring> run_and_look(const std::vector<std::string>& extra, json* report = nullptr) {
  return run_and_see(extra, report, false).rings;
}

bool has_flag(const json& j, const std::string& flag) {
  for (const auto& f : j["context"]["setup_flags"])
    if (f == flag) return true;
  return false;
}

// Every call entered the ring through its registered index, or none did.
void expect_registered_ring(const std::vector<EnterCall>& enters, int ring_fd, bool registered) {
  ASSERT_FALSE(enters.empty()) << "the trace saw no io_uring_enter in 50 ms of the run";
  for (const auto& e : enters) {
    EXPECT_EQ((e.flags & kEnterRegisteredRing) != 0, registered) << "flags " << e.flags;
    if (!registered) {
      EXPECT_EQ(e.fd, static_cast<uint64_t>(ring_fd)) << "the ring's own fd";
    }
  }
}

TEST(BenchModes, DefaultRingGetsTheFastFlagsRegisteredResourcesAndNoSqThread) {
  json j;
  const Seen s = run_and_see({"--iodepth", "16"}, &j, true);
  ASSERT_EQ(s.rings.size(), 1u);
  const FdInfo& info = s.rings[0].info;
  EXPECT_FALSE(fdinfo_number(info, "SqThread").value_or(0) > 0) << "no SQ thread without --sqpoll";
  EXPECT_EQ(fdinfo_number(info, "UserFiles"), 1u) << "the target, registered";
  EXPECT_EQ(fdinfo_number(info, "UserBufs"), 16u) << "one registered buffer per slot";
  expect_registered_ring(s.enters, s.rings[0].fd, true);
  for (const char* f : {"COOP_TASKRUN", "SINGLE_ISSUER", "DEFER_TASKRUN"}) EXPECT_TRUE(has_flag(j, f)) << f;
  for (const char* r : {"registered files", "registered buffers", "registered ring fd"})
    EXPECT_NE(j["context"]["engine_description"].get<std::string>().find(r), std::string::npos) << r;
}

TEST(BenchModes, EachRegisteredResourceCanBeTurnedOff) {
  struct Case {
    const char* flag;
    uint64_t files, bufs;
    bool ring;
  };
  for (const Case& c : {Case{"--no-fixed-files", 0, 16, true}, Case{"--no-fixed-bufs", 1, 0, true},
                        Case{"--no-register-ring", 1, 16, false}}) {
    SCOPED_TRACE(c.flag);
    json j;
    const Seen s = run_and_see({"--iodepth", "16", c.flag}, &j, true);
    ASSERT_EQ(s.rings.size(), 1u);
    EXPECT_EQ(fdinfo_number(s.rings[0].info, "UserFiles"), c.files);
    EXPECT_EQ(fdinfo_number(s.rings[0].info, "UserBufs"), c.bufs);
    expect_registered_ring(s.enters, s.rings[0].fd, c.ring);
    EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u);
  }
}

// Without CAP_IPC_LOCK the kernel charges registered buffers to
// RLIMIT_MEMLOCK: 32 KiB cannot hold 16 buffers of 4 KiB.
const std::vector<std::string> kTightMemlock = {"/usr/bin/prlimit", "--memlock=32768:32768", "/usr/bin/setpriv", "--bounding-set",
                                                "-ipc_lock", "--inh-caps", "-ipc_lock"};

TEST(BenchModes, MemlockFallbackIsNamedAndTheRunGoesOn) {
  json j;
  const Seen s = run_and_see({"--iodepth", "16"}, &j, false, kTightMemlock);
  ASSERT_EQ(s.rings.size(), 1u);
  EXPECT_EQ(fdinfo_number(s.rings[0].info, "UserBufs"), 0u) << "the buffers could not be registered";
  EXPECT_EQ(fdinfo_number(s.rings[0].info, "UserFiles"), 1u) << "the files still are";
  const std::string& err = s.outcome.err;
  const std::string start = err.substr(err.find("ioacct bench:"));
  EXPECT_NE(start.find("registered buffers"), std::string::npos) << err;
  EXPECT_NE(start.find("RLIMIT_MEMLOCK is 32 KiB"), std::string::npos) << err;
  EXPECT_NE(start.find("ulimit -l"), std::string::npos) << "says what to do: " << err;
  ASSERT_TRUE(j["context"]["engine_fallbacks"].is_array()) << j["context"];
  ASSERT_EQ(j["context"]["engine_fallbacks"].size(), 1u) << j["context"]["engine_fallbacks"];
  EXPECT_NE(j["context"]["engine_fallbacks"][0].get<std::string>().find("RLIMIT_MEMLOCK"), std::string::npos);
  EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u);
}

TEST(BenchModes, DemandedBuffersThatCannotBeRegisteredAreAnError) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--fixed-bufs", "--iodepth", "16", "--size", "16m", "--runtime", "500ms"},
                      {.env = {"TMPDIR=" + dir.path()}, .prefix = kTightMemlock});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("error: --fixed-bufs: registered buffers"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("ulimit -l"), std::string::npos) << o.err;
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
      {}, {"--no-fixed-files", "--no-fixed-bufs", "--no-register-ring"}, {"--vectored"},
      {"--fixed-bufs", "--fixed-files"}, {"--sqpoll"}, {"--wait", "spin"},
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
    json j = stdout_json(o);
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
      {{"--fixed-bufs", "--no-fixed-bufs"}, "--fixed-bufs"},
      {{"--no-fixed-files", "--engine", "psync"}, "--no-fixed-files"},
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
