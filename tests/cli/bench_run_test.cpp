// Runs `ioacct bench` for real and checks what it reports against what must
// hold: counts agree with each other, the temporary file is gone, signals end
// the run with valid partial results.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>

#include <fstream>
#include <iterator>
#include <sstream>
#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

// Checks every count in a results (or per-thread) block against the others.
void check_counts(const json& r, uint64_t bs, bool moves_data = true) {
  const uint64_t ios = r["ios"], reads = r["reads"], writes = r["writes"];
  EXPECT_EQ(reads + writes, ios);
  if (moves_data) {
    EXPECT_EQ(r["bytes"].get<uint64_t>(), ios * bs);
    EXPECT_EQ(r["bytes_read"].get<uint64_t>(), reads * bs);
    EXPECT_EQ(r["bytes_written"].get<uint64_t>(), writes * bs);
  } else {
    EXPECT_EQ(r["bytes"].get<uint64_t>(), 0u);
    EXPECT_TRUE(r["bytes_per_s"].is_null());
  }
  if (ios) {
    EXPECT_EQ(r["latency_ns"]["count"].get<uint64_t>(), ios) << "every completed I/O has a latency";
    EXPECT_LE(r["latency_ns"]["min"].get<uint64_t>(), r["latency_ns"]["p50"].get<uint64_t>());
    EXPECT_LE(r["latency_ns"]["p50"].get<uint64_t>(), r["latency_ns"]["p99"].get<uint64_t>());
    EXPECT_LE(r["latency_ns"]["p99"].get<uint64_t>(), r["latency_ns"]["max"].get<uint64_t>());
    EXPECT_NEAR(r["iops"].get<double>(), static_cast<double>(ios) / r["window_s"].get<double>(), 1e-6 * static_cast<double>(ios));
  }
  const auto& s = r["syscalls"];
  EXPECT_EQ(s["submitted_ios"], s["reaped_ios"]) << "every submitted I/O was reaped";
  EXPECT_GE(s["submitted_ios"].get<uint64_t>(), ios);
}

TEST(BenchRun, DefaultRunExitsZeroAndLeavesNoTemporaryFile) {
  // Exactly what the README's quick start runs: no arguments at all.
  TempDir dir;
  auto o = run_ioacct({"bench"}, {.env = {"TMPDIR=" + dir.path()}});
  EXPECT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("temporary file"), std::string::npos) << "says so on stderr: " << o.err;
  EXPECT_NE(o.err.find("1 GiB"), std::string::npos) << o.err;
  EXPECT_NE(o.out.find("IOPS"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("10.0"), std::string::npos) << "10 s measured by default: " << o.out;
  EXPECT_EQ(o.out.find("temporary"), std::string::npos) << "stdout carries results only";
  EXPECT_TRUE(dir.entries().empty());
}

// The single-run page's charts come from the time series, which the
// default accounting makes; only a run without it says what it needs, and
// names the level that has it.
TEST(BenchRun, TheReportSaysWhatATimeSeriesNeedsOnlyWhereThereIsNone) {
  TempDir dir;
  const std::string html = dir.path() + "/r.html";
  auto read_page = [&] {
    std::ifstream f(html);
    return std::string((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
  };
  auto o = run_ioacct({"bench", "--size", "16m", "--runtime", "2s", "--report", html});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(read_page().find("No time series"), std::string::npos) << "the default run has its series";
  o = run_ioacct({"bench", "--size", "16m", "--runtime", "2s", "--acct", "basic", "--report", html});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string page = read_page();
  EXPECT_NE(page.find("No time series: it needs --acct latency (the default) or full"), std::string::npos);
  EXPECT_EQ(page.find("needs --acct full and"), std::string::npos);
}

TEST(BenchRun, JsonCountsAgree) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "64m", "--runtime", "1s", "--bs", "8k"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  EXPECT_EQ(j["context"]["schema_version"], 2);
  EXPECT_EQ(j["context"]["options"]["bs"], 8192);
  // The device the temporary file sits on, named from sysfs for the report's header.
  const json& id = j["context"]["targets"][0]["device_identity"];
  ASSERT_TRUE(id.is_object()) << j["context"]["targets"];
  EXPECT_FALSE(id["disk"].is_null());
  EXPECT_TRUE(id["model"].is_string() || id["model"].is_null());
  EXPECT_TRUE(j["context"]["setup_flags"].is_array());
  EXPECT_EQ(j["context"]["targets"][0]["temporary"], true);
  EXPECT_EQ(j["interrupted"], false);
  EXPECT_EQ(j["stop_reason"], "runtime");
  const json& r = j["results"];
  EXPECT_GT(r["ios"].get<uint64_t>(), 0u);
  EXPECT_EQ(r["writes"], 0);
  EXPECT_NEAR(r["window_s"].get<double>(), 1.0, 0.2) << "the window is measured, close to --runtime";
  check_counts(r, 8192);
  uint64_t hist = 0;
  for (const auto& b : r["latency_histogram_ns"]) hist += b[2].get<uint64_t>();
  EXPECT_EQ(hist, r["ios"].get<uint64_t>()) << "no latency sample is dropped";
  EXPECT_TRUE(r["cpu"].is_object());
  EXPECT_GE(r["cpu"]["sys_s"].get<double>() + r["cpu"]["user_s"].get<double>(), 0.0);
  EXPECT_TRUE(dir.entries().empty());
}

TEST(BenchRun, IosStopsAtExactlyThatManyAcrossThreads) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "32m", "--ios", "10001", "--threads", "2",
                       "--iodepth", "16", "--rw", "randrw", "--rwmix-read", "70", "--buffered"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  EXPECT_EQ(j["stop_reason"], "ios");
  EXPECT_EQ(j["results"]["ios"], 10001);
  check_counts(j["results"], 4096);
  ASSERT_EQ(j["threads"].size(), 2u);
  uint64_t sum = 0;
  for (const auto& t : j["threads"]) {
    check_counts(t, 4096);
    EXPECT_EQ(t["iodepth"], 8);
    sum += t["ios"].get<uint64_t>();
  }
  EXPECT_EQ(sum, 10001u);
  const double reads = j["results"]["reads"].get<double>();
  EXPECT_NEAR(reads / 10001, 0.70, 0.03) << "--rwmix-read 70";
}

TEST(BenchRun, EveryEngineRuns) {
  TempDir dir;
  for (const char* engine : {"uring", "psync", "nop"}) {
    SCOPED_TRACE(engine);
    auto o = run_ioacct({"bench", "--format", "json", "--size", "16m", "--runtime", "300ms", "--engine", engine},
                        {.env = {"TMPDIR=" + dir.path()}});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    json j = stdout_json(o);
    check_counts(j["results"], 4096, std::string(engine) != "nop");
    EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u);
    if (std::string(engine) == "psync") {
      EXPECT_EQ(j["results"]["iodepth"], 1);
      EXPECT_EQ(j["results"]["syscalls"]["ios_per_submit"], 1.0);
    }
  }
}

// With O_DIRECT the fused path submits the first refill of a pass of two
// or more at once, before it refills the rest (FusedRing::reap's `early`):
// those enters submit and do not wait, so submits outnumber waits. The page
// cache completes inside the enter, so a buffered run does not.
TEST(BenchRun, ODirectSubmitsAPassFirstRefillAtOnce) {
  TempDir dir;
  for (const bool buffered : {false, true}) {
    SCOPED_TRACE(buffered ? "buffered" : "O_DIRECT");
    std::vector<std::string> args = {"bench", "--format", "json", "--size", "64m", "--runtime", "500ms", "--iodepth", "32"};
    if (buffered) args.emplace_back("--buffered");
    auto o = run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    const json sc = stdout_json(o)["results"]["syscalls"];
    const double submit = sc["submit"].get<double>(), reap = sc["reap"].get<double>();
    if (buffered) EXPECT_LT(submit, 1.05 * reap + 2) << sc;
    else EXPECT_GT(submit, 1.2 * reap) << sc;
  }
}

TEST(BenchRun, RatePacesEachThreadOnASchedule) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "16m", "--runtime", "2s", "--rate-iops", "200",
                       "--iodepth", "4", "--threads", "2", "--buffered"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  json j = stdout_json(o);
  // 200 per second per thread, 2 threads: 800 I/Os in 2 s, give or take the edges.
  EXPECT_NEAR(j["results"]["iops"].get<double>(), 400.0, 20.0);
  for (const auto& t : j["threads"]) EXPECT_NEAR(t["iops"].get<double>(), 200.0, 10.0);
}

// An I/O slower than the pace's interval (here held back 10 ms at 200 IOPS)
// keeps the depth full past the next due time: the worker must then wait for
// the completion, not poll for it (it once made ~10 reaping syscalls per I/O,
// all counted in the CPU per I/O).
TEST(BenchRun, PacedRunSlowerThanItsPaceWaitsInsteadOfPolling) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "16m", "--ios", "40", "--rate-iops", "200",
                       "--iodepth", "1", "--inject-faults", "delay=1:10ms"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json s = stdout_json(o)["results"]["syscalls"];
  EXPECT_EQ(s["reaped_ios"], 40);
  EXPECT_LE(s["reap"].get<uint64_t>(), 2 * 40u) << "reaping syscalls for 40 I/Os: " << s;
}

TEST(BenchRun, WritesStayInsideTheFile) {
  TempDir dir;
  const std::string f = dir.path() + "/data";
  sh("head -c 1048576 /dev/urandom > " + f);
  auto o = run_ioacct({"bench", "--rw", "randwrite", "--ios", "3000", "--iodepth", "8", f});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  struct stat st {};
  ASSERT_EQ(stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 1048576) << "writes must not grow the file";
  // With --size a write-only run may grow the file, but only to --size.
  auto g = run_ioacct({"bench", "--rw", "write", "--ios", "1000", "--size", "2m", f});
  ASSERT_EQ(g.exit_code, 0) << g.err;
  ASSERT_EQ(stat(f.c_str(), &st), 0);
  EXPECT_EQ(st.st_size, 2 * 1048576);
}

TEST(BenchRun, OutputFileIsWrittenWholeOrNotAtAll) {
  TempDir dir;
  TempDir tmp;
  const std::string out = dir.path() + "/result.json";
  auto o = run_ioacct({"bench", "--format", "json", "--size", "8m", "--runtime", "200ms", "--output", out},
                      {.env = {"TMPDIR=" + tmp.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_TRUE(o.out.empty()) << "the report went to the file";
  std::ifstream f(out);
  json j = json::parse(f);
  EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u);
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"result.json"}) << "no temporary name left behind";
}

void interrupt_test(int sig, int expected_exit) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "64m", "--runtime", "60s"},
                      {.env = {"TMPDIR=" + dir.path()}, .signal = sig, .signal_after = "ioacct bench:",
                       .signal_delay_s = 1.0, .timeout_s = 30});
  EXPECT_EQ(o.exit_code, expected_exit) << o.err;
  std::cout << "signal " << sig << " to exit: " << o.signal_to_exit_s << " s\n";
  EXPECT_LT(o.signal_to_exit_s, 1.0) << "must end within one second of the signal";
  json j = stdout_json(o);
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_EQ(j["stop_reason"], "interrupted");
  EXPECT_GT(j["results"]["ios"].get<uint64_t>(), 0u) << "partial results are kept";
  EXPECT_LT(j["results"]["window_s"].get<double>(), 10.0);
  check_counts(j["results"], 4096);
  EXPECT_TRUE(dir.entries().empty()) << "temporary file removed";
}

TEST(BenchRun, SigintGivesPartialJsonAndExit130) { interrupt_test(SIGINT, 130); }
TEST(BenchRun, SigtermGivesPartialJsonAndExit143) { interrupt_test(SIGTERM, 143); }

TEST(BenchRun, SigintWhileCreatingTheTemporaryFile) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--format", "json", "--size", "8g", "--runtime", "1s"},
                      {.env = {"TMPDIR=" + dir.path()}, .signal = SIGINT, .signal_after = "temporary file",
                       .signal_delay_s = 0.2, .timeout_s = 60});
  EXPECT_EQ(o.exit_code, 130) << o.err;
  EXPECT_LT(o.signal_to_exit_s, 1.0);
  json j = stdout_json(o);
  EXPECT_EQ(j["interrupted"], true);
  EXPECT_TRUE(j["results"].is_null());
  EXPECT_TRUE(dir.entries().empty());
}

}  // namespace
}  // namespace ioacct::test

namespace ioacct::test {
namespace {

TEST(BenchRun, ProgressGoesToStderrOncePerSecond) {
  TempDir dir;
  auto o = run_ioacct({"bench", "--progress", "--size", "16m", "--runtime", "2500ms", "--ramp", "1500ms", "--buffered"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::istringstream lines(o.err);
  int ticks = 0, ramp = 0;
  for (std::string l; std::getline(lines, l);) {
    if (l.rfind("[", 0) != 0) continue;
    ++ticks;
    EXPECT_NE(l.find("IOPS"), std::string::npos) << l;
    EXPECT_NE(l.find("in flight"), std::string::npos) << l;
    EXPECT_NE(l.find("ETA"), std::string::npos) << l;
    ramp += l.find("ramp") != std::string::npos;
  }
  EXPECT_GE(ticks, 3) << o.err;
  EXPECT_LE(ticks, 5) << o.err;
  EXPECT_GE(ramp, 1) << "the first second is ramp, and says so";
  EXPECT_EQ(o.out.find('['), std::string::npos) << "no progress on stdout";
}

}  // namespace
}  // namespace ioacct::test
