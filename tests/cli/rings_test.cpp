// `ioacct rings`: real rings in real processes (ioacct bench, with and
// without SQPOLL, two rings sharing one SQ thread; a ring of the test's own
// with registered files, buffers and overflowed CQEs), checked against what
// the test knows independently: the bench's start-up line, /proc/PID/task.
#include <gtest/gtest.h>

#include <iostream>
#include <liburing.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <mutex>
#include <regex>
#include <set>
#include <thread>

#include "cli/ring_holder.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

// The SQ threads of `pid`: its tasks named iou-sqp-*.
std::vector<uint64_t> sq_threads_of(int pid) {
  std::vector<uint64_t> out;
  std::error_code ec;
  for (const auto& t : std::filesystem::directory_iterator("/proc/" + std::to_string(pid) + "/task", ec)) {
    std::ifstream f(t.path() / "comm");
    std::string comm;
    std::getline(f, comm);
    if (comm.rfind("iou-sqp-", 0) == 0) out.push_back(std::stoull(t.path().filename().string()));
  }
  return out;
}

std::vector<json> rings_of(const json& j, int pid) {
  std::vector<json> out;
  for (const auto& r : j["rings"])
    if (r["pid"] == pid) out.push_back(r);
  return out;
}

struct BenchRings {
  Outcome bench;
  int pid = 0;
  json by_pid, all;               // `rings --pid PID` and `rings` (the whole machine)
  std::vector<uint64_t> sq_tids;  // read by the test from /proc
};

// Starts a bench, and while it runs asks `ioacct rings` about it.
BenchRings look_at_bench(const TempDir& dir, const std::vector<std::string>& extra, bool whole_machine) {
  BenchRings b;
  std::vector<std::string> args = {"bench", "--size", "16m", "--runtime", "20s", "--buffered"};
  args.insert(args.end(), extra.begin(), extra.end());
  // A ring whose lock its submitter held through all of a walk's looks
  // (its 50 ms budget) is reported as not read ("locked": false), which is
  // right, and leaves these tests nothing to check: on a loaded VM (load 8)
  // a buffered bench at depth 16 held it once through a whole walk. Such a
  // look is taken again, up to 5 times.
  const auto all_read = [](const json& j, int pid) {
    for (const auto& r : rings_of(j, pid))
      if (!r["locked"].get<bool>()) return false;
    return true;
  };
  auto look = [&](int pid) {
    b.pid = pid;
    for (int i = 0; i < 5; ++i) {
      auto r = run_ioacct({"rings", "--pid", std::to_string(pid), "--format", "json", "--sample", "200ms"});
      EXPECT_EQ(r.exit_code, 0) << r.err;
      EXPECT_EQ(r.err, "");
      b.by_pid = stdout_json(r);
      if (all_read(b.by_pid, pid)) break;
      std::cout << "  look " << i + 1 << ": a ring of the bench was busy through the walk; looking again\n";
    }
    // After the look: an SQ thread of a ring closed at start-up may linger a moment.
    b.sq_tids = sq_threads_of(pid);
    if (whole_machine) {
      for (int i = 0; i < 5; ++i) {
        auto all = run_ioacct({"rings", "--format", "json", "--sample", "0s"});
        EXPECT_EQ(all.exit_code, 0) << all.err;
        b.all = stdout_json(all);
        if (all_read(b.all, pid)) break;
        std::cout << "  look " << i + 1 << " at the whole machine: a ring of the bench was busy; looking again\n";
      }
    }
    kill(pid, SIGINT);  // done: no need to wait out the runtime
  };
  b.bench = run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}, .timeout_s = 60, .steps = {{"ioacct bench:", look}}});
  EXPECT_EQ(b.bench.exit_code, 130) << "stopped by SIGINT " << b.bench.err;
  return b;
}

// "sq 8, cq 16" from the bench's start-up line.
std::pair<uint64_t, uint64_t> sizes_from_startup(const std::string& err) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(err, m, std::regex(R"(sq (\d+), cq (\d+))"))) << err;
  if (m.size() < 3) return {0, 0};
  return {std::stoull(m[1]), std::stoull(m[2])};
}

TEST(Rings, FindsABenchRingWithItsSizesAndNoSqThread) {
  TempDir dir;
  const BenchRings b = look_at_bench(dir, {"--iodepth", "16"}, true);
  const auto [sq, cq] = sizes_from_startup(b.bench.err);
  for (const json* j : {&b.by_pid, &b.all}) {
    const auto rings = rings_of(*j, b.pid);
    ASSERT_EQ(rings.size(), 1u) << j->dump(1);
    const json& r = rings[0];
    EXPECT_EQ(r["sq_entries"], sq);
    EXPECT_EQ(r["cq_entries"], cq);
    EXPECT_EQ(r["comm"], "ioacct");
    EXPECT_TRUE(r["sq_thread"].is_null()) << "no SQPOLL, no SQ thread";
    EXPECT_EQ(r["user_files"], 1) << "bench registers its target by default";
    EXPECT_EQ(r["user_bufs"], 16) << "and a buffer per slot";
    EXPECT_EQ(r["cq_overflow"], 0);
    EXPECT_TRUE(r["fdinfo"].contains("SqHead")) << "every fdinfo line is kept";
  }
  EXPECT_TRUE(b.by_pid["sq_threads"].empty());
  EXPECT_GT(b.by_pid["interval_s"].get<double>(), 0.0);
  EXPECT_TRUE(b.all["interval_s"].is_null()) << "--sample 0s: one snapshot, no rates";
}

TEST(Rings, FindsEachSqThreadAndGroupsRingsThatShareOne) {
  TempDir dir;
  struct Case {
    std::vector<std::string> args;
    size_t rings;
  };
  for (const Case& c : {Case{{"--sqpoll", "--iodepth", "8"}, 1},
                        Case{{"--sqpoll", "--threads", "2", "--sq-shared", "--iodepth", "16"}, 2}}) {
    SCOPED_TRACE(c.args[c.args.size() - 3]);
    const BenchRings b = look_at_bench(dir, c.args, false);
    const auto [sq, cq] = sizes_from_startup(b.bench.err);
    const auto rings = rings_of(b.by_pid, b.pid);
    ASSERT_EQ(rings.size(), c.rings) << b.by_pid.dump(1);
    std::vector<int> fds;
    for (const auto& r : rings) {
      EXPECT_EQ(r["sq_entries"], sq);
      EXPECT_EQ(r["cq_entries"], cq);
      EXPECT_EQ(r["sq_thread"], rings[0]["sq_thread"]) << "one SQ thread for all";
      fds.push_back(r["fd"]);
    }
    ASSERT_EQ(b.by_pid["sq_threads"].size(), 1u) << "rings sharing an SQ thread are one entry";
    const json& t = b.by_pid["sq_threads"][0];
    EXPECT_EQ(t["tid"], rings[0]["sq_thread"]);
    EXPECT_NE(std::find(b.sq_tids.begin(), b.sq_tids.end(), t["tid"].get<uint64_t>()), b.sq_tids.end())
        << "the SQ thread is an iou-sqp task of the bench, as /proc/PID/task/*/comm says";
    EXPECT_EQ(t["pid"], b.pid);
    std::sort(fds.begin(), fds.end());
    EXPECT_EQ(t["ring_fds"].get<std::vector<int>>(), fds);
    ASSERT_FALSE(t["cpu_s"].is_null()) << t;
    ASSERT_FALSE(t["work_s"].is_null()) << t;
    EXPECT_GT(t["cpu_s"].get<double>(), 0.0) << "a polling SQ thread runs";
    EXPECT_LE(t["work_s"].get<double>(), t["cpu_s"].get<double>() + kSqWorkOverTotalS)
        << "SqWorkTime is part of SqTotalTime, up to a tick";
    EXPECT_FALSE(t["cpus_allowed"].is_null());
  }
}

TEST(Rings, ShowsRegisteredFilesBuffersAndOverflowedCompletions) {
  // A ring of the test's own: 4 SQEs / 8 CQEs, 2 registered files, 1
  // registered buffer, NOPs completed but never reaped beyond the CQ's size.
  io_uring ring;
  ASSERT_EQ(io_uring_queue_init(4, &ring, 0), 0);
  if (!(ring.features & IORING_FEAT_NODROP)) GTEST_SKIP() << "kernel drops overflowed CQEs (no IORING_FEAT_NODROP)";
  int files[2] = {STDIN_FILENO, STDOUT_FILENO};
  ASSERT_EQ(io_uring_register_files(&ring, files, 2), 0);
  static char buf[4096];
  iovec iov{buf, sizeof buf};
  ASSERT_EQ(io_uring_register_buffers(&ring, &iov, 1), 0);
  unsigned completed = 0;
  for (int round = 0; round < 5; ++round) {
    for (int i = 0; i < 4; ++i) io_uring_prep_nop(io_uring_get_sqe(&ring));
    const int n = io_uring_submit(&ring);
    ASSERT_GT(n, 0) << n;
    completed += static_cast<unsigned>(n);
  }
  ASSERT_GT(completed, 8u);
  auto o = run_ioacct({"rings", "--pid", std::to_string(getpid()), "--format", "json", "--sample", "0s"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto rings = rings_of(stdout_json(o), getpid());
  ASSERT_EQ(rings.size(), 1u) << o.out;
  const json& r = rings[0];
  EXPECT_EQ(r["fd"], ring.ring_fd);
  EXPECT_EQ(r["sq_entries"], 4);
  EXPECT_EQ(r["cq_entries"], 8);
  EXPECT_EQ(r["sq_pending"], 0);
  EXPECT_EQ(r["cq_pending"], 8) << "the CQ is full";
  EXPECT_EQ(r["cq_overflow"], completed - 8) << "the rest wait on the overflow list";
  EXPECT_EQ(r["user_files"], 2);
  EXPECT_EQ(r["user_bufs"], 1);
  io_uring_queue_exit(&ring);
}

TEST(Rings, ProcessesExitingMidScanAreSkippedSilently) {
  // Children that each open a ring, live 1-99 ms and exit, 16 at a time,
  // while rings scans the whole machine again and again.
  std::atomic<bool> stop{false};
  std::atomic<unsigned> born{0};
  std::mutex mu;
  std::set<int> kids;
  std::thread spawner([&] {
    std::vector<pid_t> alive;
    while (!stop) {
      while (alive.size() < 16) {
        const pid_t p = fork();
        if (p == 0) {
          io_uring r;
          if (io_uring_queue_init(8, &r, 0) != 0) _exit(1);
          usleep(static_cast<useconds_t>(1000 + (getpid() % 50) * 2000));  // 1 to 99 ms
          _exit(0);
        }
        if (p > 0) {
          alive.push_back(p);
          const std::lock_guard lock(mu);
          kids.insert(p);
          ++born;
        }
      }
      // Only our own children: run_ioacct waits for its ioacct itself.
      std::erase_if(alive, [](pid_t p) { return waitpid(p, nullptr, WNOHANG) == p; });
      usleep(500);
    }
    for (pid_t p : alive) waitpid(p, nullptr, 0);
  });
  size_t seen = 0;
  for (int i = 0; i < 8; ++i) {
    auto o = run_ioacct({"rings", "--format", "json", "--sample", "0s"});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.err, "") << "a vanished process is not an error or a warning";
    const std::lock_guard lock(mu);
    const json j = stdout_json(o);
    for (const auto& r : j["rings"]) seen += kids.contains(r["pid"].get<int>());
  }
  auto o = run_ioacct({"rings", "-i", "20ms", "--count", "5"});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "");
  stop = true;
  spawner.join();
  EXPECT_GT(born.load(), 16u);
  EXPECT_GT(seen, 0u) << "the scans did see the short-lived rings";
}

TEST(Rings, ProcessesItMayNotReadAreCountedInOneLine) {
  auto o = run_ioacct({"rings", "--format", "json", "--sample", "0s"},
                      {.prefix = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = stdout_json(o);
  EXPECT_GT(j["unreadable_processes"].get<size_t>(), 0u) << "pid 1's fds are not nobody's to list";
  EXPECT_NE(o.err.find(std::to_string(j["unreadable_processes"].get<size_t>()) + " process"), std::string::npos)
      << o.err;
  EXPECT_EQ(std::count(o.err.begin(), o.err.end(), '\n'), 1) << o.err;
}

// Issue 30: fdinfo prints "SqThread: -1" for a plain ring, and (before
// 6.16) also for a SQPOLL ring whose lock is busy; rings used to look again
// up to 2000 times at every -1 ring of a process that has an SQ thread, so
// one unprivileged process with 1 SQPOLL ring and 999 plain ones made a scan
// take 14 s here. Now a complete read is final on this kernel and all looks
// again share 50 ms per scan. The scan takes 0.1-0.3 s here with the
// 1000 rings; the bound is 1 s, over three times that, because the two CPUs are
// shared with other builds and the issue asks for this bound: a timed
// assertion, which the guide otherwise avoids, kept generous on purpose.
// The bound is on the scan, not on starting a process: under ASan the start
// alone takes ~0.25 s (shadow memory, interceptors) and once pushed a whole
// run to 1.02 s beside a spinner. So the time of the same command on a
// process with no rings, the faster of two, is taken off first. Under ASan
// every read and parse of the scan is instrumented: in one clean-clone CI
// run, beside the fuzz workflow on the other CPU, the scan itself took 1.11
// and 1.21 s (0.1-0.3 s in Release). The bound is the Release suite's, which runs every test;
// a sanitizer suite is there for memory errors and races, and holds the
// scan to 3 s.
#if defined(IOACCT_BINARY_ASAN) || defined(IOACCT_BINARY_TSAN)
constexpr double kScanBoundS = 3.0;
#else
constexpr double kScanBoundS = 1.0;
#endif
TEST(Rings, AThousandPlainRingsBesideAnSqThreadScanWithinASecond) {
  RingHolder holder(999);
  ASSERT_TRUE(holder.ready()) << holder.why();
  const auto timed = [](const std::vector<std::string>& args) {
    const auto t0 = std::chrono::steady_clock::now();
    auto o = run_ioacct(args);
    return std::pair{std::move(o), std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count()};
  };
  double start = 1e9;
  for (int i = 0; i < 2; ++i) {
    auto [o, took] = timed({"rings", "--format", "json", "--sample", "0s", "--pid", std::to_string(getpid())});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    start = std::min(start, took);
  }
  for (const std::vector<std::string>& scope :
       {std::vector<std::string>{}, std::vector<std::string>{"--pid", std::to_string(holder.pid())}}) {
    std::vector<std::string> args = {"rings", "--format", "json", "--sample", "0s"};
    args.insert(args.end(), scope.begin(), scope.end());
    auto [o, took] = timed(args);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_LE(took - start, kScanBoundS) << "rings " << (scope.empty() ? "(whole machine)" : "--pid") << " took " << took
                                 << " s, of which " << start << " s is starting the process";
    const auto rings = rings_of(stdout_json(o), holder.pid());
    ASSERT_EQ(rings.size(), 1000u);
    size_t sqpoll = 0, plain = 0;
    for (const json& r : rings) {
      EXPECT_TRUE(r["sq_thread_known"].get<bool>()) << r.dump() << ": nothing holds these rings' locks";
      (r["sq_thread"].is_null() ? plain : sqpoll) += 1;
    }
    EXPECT_EQ(sqpoll, 1u);
    EXPECT_EQ(plain, 999u);
  }
}

TEST(Rings, RefreshesAndRejectsBadInput) {
  auto o = run_ioacct({"rings", "-i", "50ms", "--count", "3", "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::istringstream lines(o.out);
  int n = 0;
  for (std::string line; std::getline(lines, line); ++n) EXPECT_GT(json::parse(line)["interval_s"].get<double>(), 0);
  EXPECT_EQ(n, 3);

  struct Bad {
    std::vector<std::string> args;
    int code;
    std::string err;
  };
  for (const Bad& b : {Bad{{"--format", "xml"}, 2, "error: --format: 'xml' is not one of console, json"},
                       Bad{{"-i", "1"}, 2, "error: --interval: cannot read '1' as a duration"},
                       Bad{{"-i", "1ms"}, 2, "error: --interval: 1ms is too short"},
                       Bad{{"--sample", "x"}, 2, "error: --sample: cannot read 'x'"},
                       Bad{{"-i", "25h"}, 2, "error: --interval: 25h is too long"},
                       Bad{{"--pid", "abc"}, 2, "error: --pid:"},
                       Bad{{"--pid", "0"}, 2, "error: --pid: 0 is not a process id"},
                       Bad{{"--count", "2"}, 2, "error: --count: only with -i/--interval"},
                       Bad{{"--pid", "4000000"}, 1, "error: --pid: no process 4000000"}}) {
    std::vector<std::string> args = {"rings"};
    args.insert(args.end(), b.args.begin(), b.args.end());
    auto r = run_ioacct(args);
    EXPECT_EQ(r.exit_code, b.code) << b.args[0] << " " << r.err;
    EXPECT_EQ(r.err.rfind(b.err, 0), 0u) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
}

}  // namespace
}  // namespace ioacct::test
