// The real binary when things go wrong: injected I/O faults (the test-only
// --inject-faults), a full filesystem, a target truncated or deleted under a
// run, signals at random moments, and resource limits. What must hold in every
// case: the exit code says what happened (never a crash), one error line names
// the cause and what to do, the report is still written, the counts agree with
// what was injected, and nothing is left behind.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

json parse_json(const std::string& text, const Outcome& o) {
  try {
    return json::parse(text);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "not JSON (" << e.what() << "): " << text.substr(0, 500) << "\nstderr: " << o.err;
    return json::object();
  }
}

std::vector<std::string> lines_starting(const std::string& text, const std::string& prefix) {
  std::vector<std::string> found;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(prefix, 0) == 0) found.push_back(line);
  return found;
}

bool has(const std::string& text, const std::string& what) { return text.find(what) != std::string::npos; }

// Exit codes a run may end with; anything else (128+SIGSEGV, SIGABRT, ...) is a crash.
void expect_no_crash(const Outcome& o) {
  EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 1) << "exit code " << o.exit_code << "\nstderr: " << o.err;
}

// ---------------------------------------------------------------------------
// a. Injected faults within --max-errors: counted exactly, run completes.

void check_faulted_run(const std::vector<std::string>& extra) {
  TempDir tmp;
  std::vector<std::string> args = {"bench", "--inject-faults", "eio=0.01,short=0.05,eagain=0.05,delay=0.02:3ms",
                                   "--max-errors", "1M", "--runtime", "2s", "--size", "64m", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  auto o = run_ioacct(args, {.env = {"TMPDIR=" + tmp.path()}, .timeout_s = 60});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const auto warnings = lines_starting(o.err, "warning:");
  ASSERT_EQ(warnings.size(), 1u) << o.err;
  EXPECT_TRUE(has(warnings[0], "tolerated")) << warnings[0];
  EXPECT_TRUE(has(warnings[0], "--max-errors")) << warnings[0];
  EXPECT_TRUE(lines_starting(o.err, "error:").empty()) << o.err;
  EXPECT_TRUE(has(o.err, "injected faults")) << "the start-up line says faults are injected: " << o.err;

  json j = parse_json(o.out, o);
  EXPECT_EQ(j["interrupted"], false);
  EXPECT_EQ(j["stop_reason"], "runtime");
  const json& r = j["results"];
  ASSERT_TRUE(r.is_object()) << o.out.substr(0, 500);
  ASSERT_TRUE(r.contains("faults_injected")) << "results.faults_injected is there with --inject-faults";
  const json& f = r["faults_injected"];
  const uint64_t eio = f["EIO"], shorts = f["short"], eagain = f["EAGAIN"], delayed = f["delayed"];
  // Every EIO counted was injected and every injected one counted; EIO is
  // the only error.
  ASSERT_TRUE(r["errors"].contains("EIO")) << r["errors"].dump();
  EXPECT_EQ(r["errors"]["EIO"].get<uint64_t>(), eio);
  EXPECT_EQ(r["errors"].size(), 1u) << r["errors"].dump();
  EXPECT_GT(eio, 0u);
  EXPECT_GT(shorts, 0u);
  EXPECT_GT(eagain, 0u);
  EXPECT_GT(delayed, 0u);
  EXPECT_EQ(r["short_resubmits"].get<uint64_t>(), shorts) << "each short transfer resubmitted once";
  EXPECT_EQ(r["eagain_retries"].get<uint64_t>(), eagain) << "each EAGAIN retried once";
  const uint64_t ios = r["ios"], submitted = r["syscalls"]["submitted_ios"], reaped = r["syscalls"]["reaped_ios"];
  EXPECT_EQ(submitted, reaped) << "no I/O left in flight";
  EXPECT_EQ(r["bytes"].get<uint64_t>(), ios * 4096) << "a finished short transfer counts as one whole I/O";
  EXPECT_EQ(r["bytes_read"].get<uint64_t>(), ios * 4096);
  EXPECT_EQ(r["reads"].get<uint64_t>(), ios);
  EXPECT_GT(ios, 0u);
  // Every submission was a new I/O, a resubmission of a short one or an
  // EAGAIN retry; errors and resubmissions are not I/Os.
  EXPECT_GE(submitted, ios + eio + shorts + eagain);
  if (ios) {
    EXPECT_EQ(r["latency_ns"]["count"].get<uint64_t>(), ios);
  }
  // Per thread: the errors add up to the total.
  uint64_t thread_eio = 0, thread_short = 0, thread_eagain = 0;
  for (const auto& t : j["threads"]) {
    if (t["errors"].contains("EIO")) thread_eio += t["errors"]["EIO"].get<uint64_t>();
    thread_short += t["short_resubmits"].get<uint64_t>();
    thread_eagain += t["eagain_retries"].get<uint64_t>();
    EXPECT_EQ(t["syscalls"]["submitted_ios"], t["syscalls"]["reaped_ios"]);
  }
  EXPECT_EQ(thread_eio, eio);
  EXPECT_EQ(thread_short, shorts);
  EXPECT_EQ(thread_eagain, eagain);
  EXPECT_TRUE(tmp.entries().empty()) << "temporary file left in " << tmp.path();
  std::cout << "  ios " << ios << ", injected EIO " << eio << ", short " << shorts << ", EAGAIN " << eagain
            << ", delayed " << delayed << "\n";
}

TEST(BenchFaults, InjectedFaultsAreCountedExactly) { check_faulted_run({}); }

TEST(BenchFaults, InjectedFaultsAreCountedExactlyOverTwoThreads) {
  check_faulted_run({"--threads", "2", "--iodepth", "16"});
}

TEST(BenchFaults, InjectedFaultsAreCountedExactlyWithPsync) { check_faulted_run({"--engine", "psync"}); }

// ---------------------------------------------------------------------------
// b. More errors than --max-errors: exit 1, one error line, results printed.

TEST(BenchFaults, TooManyErrorsStopTheRunWithTheReport) {
  TempDir tmp;
  auto o = run_ioacct({"bench", "--inject-faults", "eio=0.5", "--runtime", "2s", "--size", "64m", "--format", "json"},
                      {.env = {"TMPDIR=" + tmp.path()}, .timeout_s = 60});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const auto errors = lines_starting(o.err, "error:");
  ASSERT_EQ(errors.size(), 1u) << o.err;
  EXPECT_TRUE(has(errors[0], "EIO")) << errors[0];
  EXPECT_TRUE(has(errors[0], "--max-errors")) << errors[0];
  EXPECT_TRUE(has(errors[0], "--max-errors 0 allows more")) << errors[0];
  EXPECT_TRUE(lines_starting(o.err, "warning:").empty()) << "an error, not also a warning: " << o.err;
  json j = parse_json(o.out, o);
  EXPECT_EQ(j["stop_reason"], "errors");
  EXPECT_EQ(j["interrupted"], false);
  const json& r = j["results"];
  ASSERT_TRUE(r.is_object());
  EXPECT_GE(r["errors"]["EIO"].get<uint64_t>(), 1u);
  EXPECT_EQ(r["errors"]["EIO"], r["faults_injected"]["EIO"]);
  EXPECT_TRUE(r["first_error"].is_string() && has(r["first_error"].get<std::string>(), "EIO")) << r["first_error"];
  EXPECT_EQ(r["syscalls"]["submitted_ios"], r["syscalls"]["reaped_ios"]) << "in-flight I/O drained";
  EXPECT_LT(r["window_s"].get<double>(), 1.5) << "stopped at once, not at the end of --runtime";
  EXPECT_TRUE(tmp.entries().empty());
}

// ---------------------------------------------------------------------------
// c. ENOSPC: a small filesystem on a loop device, a file that writes grow.

// An ext4 filesystem made on `dev` and mounted on `dir`; unmounted on destruction.
class Ext4Mount {
 public:
  Ext4Mount(const std::string& dev, const std::string& dir) : dir_(dir) {
    sh("mkfs.ext4 -q -F " + dev);
    mounted_ = std::system(("mount " + dev + " " + dir).c_str()) == 0;
    EXPECT_TRUE(mounted_) << "cannot mount " << dev << " on " << dir;
  }
  ~Ext4Mount() {
    if (mounted_ && std::system(("umount " + dir_).c_str()) != 0) std::system(("umount -l " + dir_).c_str());
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

TEST(BenchFaults, FullFilesystemIsAnErrorNamingENOSPCAndSize) {
  TempDir dir, mnt;
  LoopDevice loop(dir.path(), {.size = "16m"});
  ASSERT_FALSE(loop.path().empty());
  Ext4Mount fs(loop.path(), mnt.path());
  ASSERT_FALSE(HasFailure());
  const std::string file = mnt.path() + "/grow";
  sh("touch " + file);
  // Writes may grow a regular file up to --size; 64 MiB does not fit in 16.
  auto o = run_ioacct({"bench", "--rw", "write", "--size", "64m", "--bs", "64k", "--format", "json", file},
                      {.timeout_s = 60});
  expect_no_crash(o);
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const auto errors = lines_starting(o.err, "error:");
  ASSERT_EQ(errors.size(), 1u) << o.err;
  EXPECT_TRUE(has(errors[0], "No space left on device")) << errors[0];
  EXPECT_TRUE(has(errors[0], "ENOSPC")) << errors[0];
  EXPECT_TRUE(has(errors[0], "--size")) << "says what to do: " << errors[0];
  EXPECT_TRUE(has(errors[0], file)) << "names the target: " << errors[0];
  json j = parse_json(o.out, o);
  EXPECT_EQ(j["stop_reason"], "errors");
  EXPECT_GE(j["results"]["errors"]["ENOSPC"].get<uint64_t>(), 1u) << j["results"]["errors"].dump();
  EXPECT_GT(j["results"]["writes"].get<uint64_t>(), 0u) << "the space there was got written";
}

// ---------------------------------------------------------------------------
// d. The target changes under the run.

std::string make_file(const TempDir& dir, const std::string& name, const std::string& size) {
  const std::string path = dir.path() + "/" + name;
  sh("fallocate -l " + size + " " + path);
  return path;
}

TEST(BenchFaults, TruncatedTargetIsAnErrorNamingEndOfFile) {
  for (const char* engine : {"uring", "psync"}) {
    SCOPED_TRACE(engine);
    TempDir dir;
    const std::string file = make_file(dir, "target", "64m");
    auto o = run_ioacct({"bench", "--rw", "randread", "--runtime", "10s", "--engine", engine, "--format", "json", file},
                        {.timeout_s = 60, .action_after = "ioacct bench:",
                         .action = [&] { sh("truncate -s 1m " + file); }});
    expect_no_crash(o);
    ASSERT_EQ(o.exit_code, 1) << o.err;
    const auto errors = lines_starting(o.err, "error:");
    ASSERT_EQ(errors.size(), 1u) << o.err;
    EXPECT_TRUE(has(errors[0], "end of file")) << errors[0];
    EXPECT_TRUE(has(errors[0], "truncated")) << errors[0];
    EXPECT_TRUE(has(errors[0], file)) << errors[0];
    json j = parse_json(o.out, o);
    EXPECT_EQ(j["stop_reason"], "errors");
    EXPECT_GE(j["results"]["errors"]["EOF"].get<uint64_t>(), 1u) << j["results"]["errors"].dump();
  }
}

TEST(BenchFaults, TruncatedTargetWithinMaxErrorsIsCounted) {
  TempDir dir;
  const std::string file = make_file(dir, "target", "64m");
  auto o = run_ioacct({"bench", "--rw", "randread", "--runtime", "1s", "--max-errors", "1G", "--format", "json", file},
                      {.timeout_s = 60, .action_after = "ioacct bench:",
                       .action = [&] { sh("truncate -s 1m " + file); }});
  expect_no_crash(o);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(lines_starting(o.err, "warning:").size(), 1u) << o.err;
  json j = parse_json(o.out, o);
  const json& r = j["results"];
  EXPECT_GE(r["errors"]["EOF"].get<uint64_t>(), 1u) << r["errors"].dump();
  EXPECT_EQ(r["syscalls"]["submitted_ios"], r["syscalls"]["reaped_ios"]);
  EXPECT_EQ(r["bytes"].get<uint64_t>(), r["ios"].get<uint64_t>() * 4096) << "failed reads are not counted";
}

// A new end of file inside a block: the read of that block comes back
// short, its rest is resubmitted (and then meets the end), on the default
// run's fused path as on the batch path (--submit-batch keeps a run there).
TEST(BenchFaults, ShortReadAtANewEndOfFileIsResubmittedThenCounted) {
  for (const bool batch : {false, true}) {
    SCOPED_TRACE(batch ? "batch path" : "fused path");
    TempDir dir;
    const std::string file = make_file(dir, "target", "64m");
    std::vector<std::string> args = {"bench", "--rw", "read", "--bs", "4k", "--runtime", "1s", "--max-errors", "1G",
                                     "--format", "json", file};
    if (batch) args.insert(args.begin() + 1, {"--submit-batch", "32"});
    auto o = run_ioacct(args, {.timeout_s = 60, .action_after = "ioacct bench:",
                               .action = [&] { sh("truncate -s " + std::to_string(1048576 + 1616) + " " + file); }});
    expect_no_crash(o);
    ASSERT_EQ(o.exit_code, 0) << o.err;
    json j = parse_json(o.out, o);
    const json& r = j["results"];
    EXPECT_GE(r["short_resubmits"].get<uint64_t>(), 1u) << "each pass over the file reads the cut block";
    EXPECT_GE(r["errors"]["EOF"].get<uint64_t>(), r["short_resubmits"].get<uint64_t>()) << r["errors"].dump();
    EXPECT_EQ(r["syscalls"]["submitted_ios"], r["syscalls"]["reaped_ios"]);
    EXPECT_EQ(r["bytes"].get<uint64_t>(), r["ios"].get<uint64_t>() * 4096) << "failed reads are not counted";
    EXPECT_GT(r["ios"].get<uint64_t>(), 256u) << "the blocks before the cut were read whole";
  }
}

TEST(BenchFaults, DeletedTargetKeepsWorkingThroughItsDescriptor) {
  TempDir dir;
  const std::string file = make_file(dir, "target", "64m");
  auto o = run_ioacct({"bench", "--rw", "randread", "--runtime", "1s", "--format", "json", file},
                      {.timeout_s = 60, .action_after = "ioacct bench:", .action = [&] { sh("rm " + file); }});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(lines_starting(o.err, "error:").empty()) << o.err;
  json j = parse_json(o.out, o);
  EXPECT_EQ(j["stop_reason"], "runtime");
  EXPECT_TRUE(j["results"]["errors"].empty()) << j["results"]["errors"].dump();
  EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u);
  EXPECT_TRUE(dir.entries().empty()) << "the file is gone once the run ends";
}

// ---------------------------------------------------------------------------
// e. Signals at random moments: start-up, filling, ramp, measuring, reporting,
// after the report. Whatever the moment, the run ends within a second, exits
// 0 or 128+N, and leaves no temporary file and no half-written report.

TEST(BenchFaults, SignalsAtRandomMomentsLeaveNothingBehind) {
  const char* seed_env = std::getenv("IOACCT_SIGNAL_SEED");
  const unsigned seed = seed_env ? static_cast<unsigned>(std::strtoul(seed_env, nullptr, 10)) : std::random_device{}();
  std::cout << "  seed " << seed << " (IOACCT_SIGNAL_SEED=" << seed << " repeats these moments)\n";
  std::mt19937 rng(seed);
  // 50 moments uniform over the whole run (about 1.4 s), then 10 in its
  // first 60 ms, which the uniform ones seldom hit: exec, the io_uring probe,
  // filling the temporary file.
  std::uniform_real_distribution<double> delay(0.0, 1.8), early(0.0, 0.06);
  std::map<std::string, int> phases;
  const auto t_start = std::chrono::steady_clock::now();
  constexpr int kUniform = 50, kEarly = 10, kIterations = kUniform + kEarly;
  for (int i = 0; i < kIterations; ++i) {
    const int sig = i % 2 == 0 ? SIGINT : SIGTERM;
    const double after = i < kUniform ? delay(rng) : early(rng);
    SCOPED_TRACE("iteration " + std::to_string(i) + ": " + (sig == SIGINT ? "SIGINT" : "SIGTERM") + " after " +
                 std::to_string(after) + " s");
    TempDir tmp, out_dir;
    const std::string out = out_dir.path() + "/out.json";
    auto o = run_ioacct({"bench", "--format", "json", "--size", "16m", "--runtime", "1s", "--ramp", "300ms",
                         "--output", out},
                        {.env = {"TMPDIR=" + tmp.path()}, .signal = sig, .signal_after = "",
                         .signal_delay_s = after, .timeout_s = 30});
    if (o.signal_to_exit_s >= 0) {
      EXPECT_LT(o.signal_to_exit_s, 1.0) << "must end within one second of the signal";
    }
    EXPECT_TRUE(o.exit_code == 0 || o.exit_code == 128 + sig) << "exit code " << o.exit_code << "\n" << o.err;
    EXPECT_TRUE(o.out.empty()) << "with --output nothing goes to stdout: " << o.out.substr(0, 200);
    EXPECT_TRUE(tmp.entries().empty()) << "temporary file left behind";
    const auto left = out_dir.entries();
    for (const auto& name : left) EXPECT_EQ(name, "out.json") << "left behind in the --output directory";
    const bool have_report = std::find(left.begin(), left.end(), "out.json") != left.end();
    json j;
    if (have_report) {
      std::ifstream f(out);
      std::string text((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      j = parse_json(text, o);
    }
    const bool said_interrupted = has(o.err, "ioacct: interrupted; the results above");
    const bool said_before_start = has(o.err, "ioacct: interrupted before the run started");
    EXPECT_TRUE(lines_starting(o.err, "error:").empty()) << o.err;

    std::string phase;
    if (o.exit_code == 0) {
      phase = "completed (signal after exit or not sent)";
      EXPECT_TRUE(have_report);
      EXPECT_EQ(j["interrupted"], false);
      EXPECT_EQ(j["stop_reason"], "runtime");
    } else if (said_before_start) {
      phase = "while filling the temporary file";
      ASSERT_TRUE(have_report) << "--format json writes a report with null results";
      EXPECT_EQ(j["interrupted"], true);
      EXPECT_TRUE(j["results"].is_null());
    } else if (said_interrupted) {
      ASSERT_TRUE(have_report) << "an interrupted run still writes its partial report";
      EXPECT_EQ(j["interrupted"], true);
      EXPECT_EQ(j["stop_reason"], "interrupted");
      ASSERT_TRUE(j["results"].is_object());
      const json& r = j["results"];
      EXPECT_EQ(r["syscalls"]["submitted_ios"], r["syscalls"]["reaped_ios"]);
      EXPECT_EQ(r["bytes"].get<uint64_t>(), r["ios"].get<uint64_t>() * 4096);
      phase = r["ios"].get<uint64_t>() == 0 ? "before the window opened (set-up or ramp)" : "in the measured window";
    } else if (have_report) {
      // The default action of a signal that arrived after the report was
      // written, once ioacct had stopped catching signals.
      phase = "after the report was written";
      EXPECT_EQ(j["interrupted"], false);
      EXPECT_EQ(j["stop_reason"], "runtime");
    } else {
      // Before ioacct catches signals (exec, parsing, the io_uring probe): the
      // default action, nothing written.
      phase = "before signals were caught";
      EXPECT_FALSE(has(o.err, "creating a")) << "signals are caught before the temporary file is made: " << o.err;
    }
    ++phases[phase];
    if (HasFailure()) {
      std::cout << "  stopping after iteration " << i << " (" << phase << "): exit " << o.exit_code << ", stderr:\n"
                << o.err;
      break;
    }
  }
  const double total_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  std::cout << "  " << kIterations << " signals in " << total_s << " s, landed:\n";
  for (const auto& [phase, n] : phases) std::cout << "    " << n << "  " << phase << "\n";
}

// ---------------------------------------------------------------------------
// f. Resource limits.

TEST(BenchFaults, TooFewFileDescriptorsNameRlimitNofile) {
#if defined(IOACCT_BINARY_ASAN) || defined(IOACCT_BINARY_TSAN)
  // UBSan's vptr check tests whether memory is readable by writing it to a
  // pipe(); with every descriptor in use that fails and it reports "invalid
  // vptr" on correct code (std::ifstream, std::thread), then halts. Nothing
  // to learn about ioacct here.
  GTEST_SKIP() << "sanitizer build: the sanitizer runtime itself needs free file descriptors";
#endif
  TempDir tmp;
  auto o = run_ioacct({"bench", "--threads", "4", "--iodepth", "4", "--size", "16m", "--runtime", "1s"},
                      {.env = {"TMPDIR=" + tmp.path()}, .timeout_s = 60, .prefix = {"/usr/bin/prlimit", "--nofile=5:5"}});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  const auto errors = lines_starting(o.err, "error:");
  ASSERT_EQ(errors.size(), 1u) << o.err;
  EXPECT_TRUE(has(errors[0], "RLIMIT_NOFILE")) << errors[0];
  EXPECT_TRUE(has(errors[0], "'ulimit -n'")) << errors[0];
  EXPECT_TRUE(o.out.empty()) << "no report for a set-up failure: " << o.out;
  EXPECT_TRUE(tmp.entries().empty()) << "temporary file left behind";
}

TEST(BenchFaults, MemlockLimitDoesNotBreakARun) {
  // Since 5.12 io_uring rings are charged to the memory cgroup, not to
  // RLIMIT_MEMLOCK; on this kernel a locked-memory limit of 0 changes nothing.
  TempDir tmp;
  auto o = run_ioacct({"bench", "--threads", "4", "--iodepth", "16", "--size", "16m", "--runtime", "300ms"},
                      {.env = {"TMPDIR=" + tmp.path()}, .timeout_s = 60, .prefix = {"/usr/bin/prlimit", "--memlock=0"}});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(tmp.entries().empty());
  std::cout << "  RLIMIT_MEMLOCK=0: the run " << (o.exit_code == 0 ? "completed" : "failed")
            << "; this kernel charges io_uring rings to the memory cgroup, not to RLIMIT_MEMLOCK\n";
}

}  // namespace
}  // namespace ioacct::test
