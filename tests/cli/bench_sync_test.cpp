// The psync family under fio's names: sync, psync, pvsync and pvsync2 each
// move the data with their own syscall, seen from the kernel's syscall
// tracepoints in a tracefs instance of our own (the witness), and a fio job
// file's ioengine runs as the engine it names.
#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

constexpr const char* kIoSyscalls[] = {"pread64", "pwrite64", "read",    "write",   "lseek",
                                       "preadv",  "pwritev",  "preadv2", "pwritev2"};

// The I/O syscalls each thread of `pid` entered over 300 ms: thread → call → count.
// Every one of them, from one instant: a buffered sync run makes ~110k events
// in that time, of which the instance's default buffer (1408 KB a CPU) kept a
// third, and a new instance records from the first event enabled, so the
// reads before lseek's was enabled were counted alone (2,617 in a run here).
// The overwritten start mostly hid those; where the worker had moved between
// CPUs, one CPU kept it, and a CI run read 2,081 more reads than lseeks.
using Calls = std::map<std::string, std::map<std::string, int>>;
Calls trace_io_syscalls(int pid) {
  const std::string dir = "/sys/kernel/tracing/instances/ioacct-sync-" + std::to_string(getpid());
  new_trace_instance(dir);
  sh("echo 16384 > " + dir + "/buffer_size_kb");  // per CPU: ~3x the events of 300 ms on one CPU
  std::string filter;
  std::istringstream tids(sh("ls /proc/" + std::to_string(pid) + "/task"));
  for (std::string tid; tids >> tid;) filter += (filter.empty() ? "" : " || ") + std::string("common_pid == ") + tid;
  for (const char* call : kIoSyscalls) {
    const std::string ev = dir + "/events/syscalls/sys_enter_" + call;
    sh("echo '" + filter + "' > " + ev + "/filter && echo 1 > " + ev + "/enable");
  }
  sh("echo 1 > " + dir + "/tracing_on");
  usleep(300'000);
  sh("echo 0 > " + dir + "/tracing_on");
  for (const char* call : kIoSyscalls) sh("echo 0 > " + dir + "/events/syscalls/sys_enter_" + std::string(call) + "/enable");
  EXPECT_EQ(trace_events_lost(dir), 0u) << "the trace buffer overflowed: the witness lost calls";
  Calls out;
  std::istringstream trace(slurp(dir + "/trace"));
  // "       ioacct-2937    [001] ..... 1858.84: sys_preadv2(fd: 3, vec: ..., ...)"
  for (std::string line; std::getline(trace, line);) {
    if (line.empty() || line[0] == '#') continue;
    const size_t dash = line.find('-'), bracket = line.find(" [");
    const size_t sys = line.find(": sys_"), paren = line.find('(', sys == std::string::npos ? 0 : sys);
    if (dash == std::string::npos || bracket == std::string::npos || sys == std::string::npos || paren == std::string::npos)
      continue;
    const std::string tid = line.substr(line.rfind('-', bracket) + 1, bracket - line.rfind('-', bracket) - 1);
    ++out[tid][line.substr(sys + 6, paren - sys - 6)];
  }
  sh("rmdir " + dir + " 2>/dev/null");
  return out;
}

// The calls of the thread that did the most I/O syscalls: the worker.
std::map<std::string, int> worker_calls(const Calls& c) {
  std::map<std::string, int> best;
  int most = -1;
  for (const auto& [tid, calls] : c) {
    int n = 0;
    for (const auto& [name, k] : calls) n += k;
    if (n > most) {
      most = n;
      best = calls;
    }
  }
  return best;
}

struct SyncCase {
  const char* engine;
  std::vector<std::string> calls;  // the worker's, and only these
};

TEST(BenchSync, EachOfTheFamilyMovesTheDataWithItsOwnSyscall) {
  TempDir dir;
  const std::string file = dir.path() + "/data";
  sh("head -c 16777216 /dev/urandom > " + file);
  for (const SyncCase& c : {SyncCase{"psync", {"pread64"}}, SyncCase{"sync", {"lseek", "read"}}, SyncCase{"pvsync", {"preadv"}},
                        SyncCase{"pvsync2", {"preadv2"}}}) {
    SCOPED_TRACE(c.engine);
    Calls seen;
    auto o = run_ioacct({"bench", "--engine", c.engine, "--buffered", "--runtime", "1500ms", "--format", "json", file},
                        {.action_after = "ioacct bench:", .action_pid = [&](int pid) {
                           usleep(300'000);  // into the window
                           seen = trace_io_syscalls(pid);
                         }});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json j = stdout_json(o);
    EXPECT_EQ(j["context"]["options"]["engine"], c.engine);
    const std::map<std::string, int> w = worker_calls(seen);
    for (const std::string& call : c.calls)
      EXPECT_GT(w.count(call) ? w.at(call) : 0, 100) << "the worker's " << call << " calls in 300 ms";
    for (const auto& [name, n] : w)
      EXPECT_NE(std::find(c.calls.begin(), c.calls.end(), name), c.calls.end())
          << "the worker entered " << name << " " << n << " times";
    if (c.calls.size() == 2) {
      EXPECT_NEAR(w.count("lseek") ? w.at("lseek") : 0, w.count("read") ? w.at("read") : 0, 1)
          << "sync: one lseek before each read";
    }
    // syscalls counts what the engine made: sync two per I/O.
    const json& sc = j["results"]["syscalls"];
    EXPECT_EQ(sc["total"].get<uint64_t>(), c.calls.size() * sc["submitted_ios"].get<uint64_t>()) << sc;
  }
}

TEST(BenchSync, Pvsync2TakesHipriAndNowaitAndTheOthersRefuseThem) {
  TempDir dir;
  const std::string file = dir.path() + "/data";
  sh("head -c 4194304 /dev/urandom > " + file + " && cat " + file + " > /dev/null");  // in the page cache
  auto o = run_ioacct({"bench", "--engine", "pvsync2", "--hipri", "--nowait", "--buffered", "--ios", "2000", "--format",
                       "json", file});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = stdout_json(o);
  EXPECT_EQ(j["context"]["options"]["sync"], (json{{"hipri", true}, {"hipri_percentage", 100}, {"nowait", true}}));
  EXPECT_TRUE(j["context"]["options"]["uring"].is_null()) << "pvsync2's flag, not a ring's";
  const std::string desc = j["context"]["engine_description"];
  EXPECT_NE(desc.find("RWF_HIPRI"), std::string::npos) << desc;
  EXPECT_NE(desc.find("RWF_NOWAIT"), std::string::npos) << desc;
  EXPECT_EQ(j["results"]["ios"], 2000) << "hot pages: RWF_NOWAIT reads do not block, and none failed";

  expect_refused(run_ioacct({"bench", "--engine", "psync", "--hipri", file}), {"--hipri", "pvsync2"});
  expect_refused(run_ioacct({"bench", "--engine", "pvsync2", "--hipri-percentage", "50", file}),
                 {"--hipri-percentage: only applies with --hipri"});
  expect_refused(run_ioacct({"bench", "--engine", "uring", "--hipri", file}), {"--hipri", "--iopoll"});
  expect_refused(run_ioacct({"bench", "--engine", "pvsync", "--nowait", file}), {"--nowait", "pvsync2"});
  expect_refused(run_ioacct({"bench", "--engine", "vsync", file}), {"--engine", "pvsync2"});
}

// --hipri-percentage (fio's hipri_percentage): strace, the witness, sees
// RWF_HIPRI on that share of the preadv2 calls (2,000 draws at 30%: 6 sigma
// is 6.1 points).
TEST(BenchSync, HipriPercentageIsTheShareOfCallsStraceSeesWithRwfHipri) {
  TempDir dir;
  const std::string file = dir.path() + "/data", trace = dir.path() + "/strace";
  sh("head -c 4194304 /dev/urandom > " + file + " && cat " + file + " > /dev/null");
  // LeakSanitizer cannot run under ptrace: an ASan build's leak check would
  // fail the run, so strace turns it off (the rest of ASan runs on).
  const Outcome o = run_ioacct({"bench", "--engine", "pvsync2", "--hipri", "--hipri-percentage", "30", "--buffered",
                                "--ios", "2000", "--format", "json", file},
                               {.prefix = {"/usr/bin/strace", "-E", "ASAN_OPTIONS=detect_leaks=0", "-f", "-qq", "-e",
                                           "trace=preadv2", "-o", trace}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(stdout_json(o)["context"]["options"]["sync"]["hipri_percentage"], 30);
  const std::string calls = slurp(trace);
  size_t all = 0, hipri = 0;
  for (size_t at = calls.find("preadv2("); at != std::string::npos; at = calls.find("preadv2(", at + 1)) {
    ++all;
    const size_t eol = calls.find('\n', at);
    hipri += calls.substr(at, eol - at).find("RWF_HIPRI") != std::string::npos;
  }
  ASSERT_EQ(all, 2000u) << "one preadv2 per I/O";
  EXPECT_NEAR(static_cast<double>(hipri) / 2000.0, 0.30, 0.061);
}

TEST(BenchSync, AFioJobFilesIoengineRunsAsTheEngineItNames) {
  TempDir dir;
  const std::string file = dir.path() + "/data";
  sh("head -c 4194304 /dev/urandom > " + file + " && cat " + file + " > /dev/null");
  for (const char* engine : {"sync", "pvsync", "pvsync2"}) {
    SCOPED_TRACE(engine);
    const std::string job = dir.path() + "/" + engine + ".fio";
    std::ofstream(job) << "[j]\nioengine=" << engine << "\nrw=randread\nbs=4k\nfilename=" << file
                       << "\nnumber_ios=500\nsize=4m\n"
                       << (std::string(engine) == "pvsync2" ? "hipri=1\nhipri_percentage=50\nnowait=1\n" : "");
    auto o = run_ioacct({"bench", "--fio", job, "--format", "json"});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json j = stdout_json(o);
    const json& opts = j["jobs"][0]["options"];
    EXPECT_EQ(opts["engine"], engine) << opts;
    if (std::string(engine) == "pvsync2") {
      EXPECT_EQ(opts["sync"], (json{{"hipri", true}, {"hipri_percentage", 50}, {"nowait", true}})) << opts;
    }
  }
  const std::string job = dir.path() + "/psync-hipri.fio";
  std::ofstream(job) << "[j]\nioengine=psync\nhipri=1\nrw=randread\nfilename=" << file << "\nsize=4m\n";
  expect_refused(run_ioacct({"bench", "--fio", job}), {"hipri", "pvsync2"});
}

TEST(BenchSync, TheAnatomyTimesTheSyscallOfTheEngineAsked) {
  TempDir dir;
  const std::string file = dir.path() + "/data";
  sh("head -c 4194304 /dev/urandom > " + file + " && cat " + file + " > /dev/null");
  for (const char* engine : {"sync", "pvsync2"}) {
    SCOPED_TRACE(engine);
    auto o = run_ioacct({"bench", "--engine", engine, "--anatomy", "--buffered", "--ios", "3000", "--format", "json",
                         file});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json a = stdout_json(o)["results"]["anatomy"];
    ASSERT_TRUE(a.is_object()) << o.out;
    ASSERT_TRUE(a["unavailable"].is_null()) << a["unavailable"] << " (root with BTF: the programs attach)";
    EXPECT_GE(a["linked"].get<double>(), 0.99 * a["ios"].get<double>())
        << "each I/O's syscall was stamped at its entry and exit: " << a;
  }
}

}  // namespace
}  // namespace ioacct::test
