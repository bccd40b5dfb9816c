// --latency-target (fio's latency_target): the depth the search finds, held
// to fio's own search on the same job file and file (tests/fio/
// latency-target.fio), and the figures counted afresh at that depth.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

const std::string kJob = std::string(IOACCT_SOURCE_DIR) + "/tests/fio/latency-target.fio";

// A target every depth meets: fio and ioacct both double the depth to the
// most the job allows (1, 2, 4, 8), find it, run one more window there
// with the figures counted afresh, and end long before the runtime.
TEST(BenchLatencyTarget, ATargetEveryDepthMeetsEndsAtTheWholeDepthAsInFio) {
  TempDir dir;
  const std::string data = dir.path() + "/data";
  sh("dd if=/dev/zero of=" + data + " bs=1M count=16 status=none");
  const json fio = run_fio(kJob, {"IOACCT_TARGET=" + data, "RUNTIME=20"});
  ASSERT_FALSE(fio.is_null());
  const json& fj = fio["jobs"][0];
  const Outcome o = run_ioacct({"bench", "--fio", kJob, "--format", "json"},
                               {.env = {"IOACCT_TARGET=" + data, "RUNTIME=20"}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json ours = stdout_json(o);
  const json& r = ours["results"];
  std::printf("depth: fio %d, ioacct %d; the counted window: fio %d ms, ioacct %.3f s\n",
              fj["latency_depth"].get<int>(), r["latency_target_depth"].get<int>(), fj["job_runtime"].get<int>(),
              r["window_s"].get<double>());
  EXPECT_EQ(fj["latency_depth"], 8);
  EXPECT_EQ(r["latency_target_depth"], fj["latency_depth"]);
  EXPECT_EQ(r["latency_target_found"], true);
  EXPECT_EQ(ours["context"]["options"]["latency_target"],
            (json{{"target_ns", 2'000'000'000}, {"window_s", 0.1}, {"percentile", 100.0}, {"run", false}}));
  // The figures are the found depth's last window (fio: 100 ms of 20 s);
  // the search ended the job, not the runtime.
  EXPECT_GE(r["window_s"].get<double>(), 0.1);
  EXPECT_LT(r["window_s"].get<double>(), 10.0);
  EXPECT_LT(fj["job_runtime"].get<int>(), 10'000);
  EXPECT_GT(r["ios"].get<uint64_t>(), 0u);
  EXPECT_EQ(o.err.find("warning"), std::string::npos) << o.err;
  // fio's JSON layout carries the search as fio's does.
  const Outcome f = run_ioacct({"bench", "--fio", kJob, "--format", "fio-json"},
                               {.env = {"IOACCT_TARGET=" + data, "RUNTIME=20"}});
  ASSERT_EQ(f.exit_code, 0) << f.err;
  const json fiojson = stdout_json(f);
  const json& ff = fiojson["jobs"][0];
  for (const char* k : {"latency_depth", "latency_target", "latency_percentile", "latency_window"})
    EXPECT_EQ(ff[k], fj[k]) << k;
}

// A target no I/O meets: at depth 1 the search has nowhere to go; fio fails
// the job (ETIMEDOUT), ioacct ends the run with one error line, exit 1.
TEST(BenchLatencyTarget, ATargetNoIoMeetsFailsAtDepthOneAsInFio) {
  TempDir dir;
  const std::string data = dir.path() + "/data", job = dir.path() + "/tight.fio";
  sh("dd if=/dev/zero of=" + data + " bs=1M count=16 status=none");
  std::string text = slurp(kJob);
  text.replace(text.find("latency_target=2s"), 17, "latency_target=1");  // 1 µs: fio's default unit
  std::ofstream(job) << text;
  const std::string fio_rc = sh("IOACCT_TARGET=" + data + " RUNTIME=5 fio --output-format=json " + job +
                                " >/dev/null 2>&1; echo $?");
  EXPECT_NE(fio_rc, "0") << "fio fails the job";
  const Outcome o = run_ioacct({"bench", "--fio", job}, {.env = {"IOACCT_TARGET=" + data, "RUNTIME=5"}});
  EXPECT_EQ(o.exit_code, 1) << o.err;
  EXPECT_NE(o.err.find("error: --latency-target: I/Os at depth 1 took over 1.00 µs"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("warning"), std::string::npos) << o.err;
}

TEST(BenchLatencyTarget, WhatTheSearchCannotRunWithIsAUsageError) {
  TempDir dir;
  const auto run = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = {"bench", "--size", "16m", "--runtime", "1s"};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}});
  };
  expect_refused(run({"--latency-target", "1ms", "--threads", "2"}), {"--latency-target: not with --threads"});
  expect_refused(run({"--latency-target", "1ms", "--rate-iops", "10"}), {"--latency-target: not with --rate-iops"});
  expect_refused(run({"--latency-target", "0s"}), {"--latency-target: must be more than 0"});
  expect_refused(run({"--latency-window", "1s"}), {"--latency-window: only applies with --latency-target"});
  expect_refused(run({"--latency-target", "1ms", "--latency-percentile", "101"}),
                 {"--latency-percentile: '101' is not a percentage"});
  expect_refused(run({"--latency-run"}), {"--latency-run: only applies with --latency-target"});
}

// latency_run=1: the search goes on for the whole run, in fio and in
// ioacct: both run to the runtime (1 s, where latency_run=0 ends in ~0.5 s)
// at the depth a target every depth meets gives, 8.
TEST(BenchLatencyTarget, LatencyRunKeepsTheJobToItsRuntimeAsInFio) {
  TempDir dir;
  const std::string data = dir.path() + "/data", job = dir.path() + "/run.fio";
  sh("dd if=/dev/zero of=" + data + " bs=1M count=16 status=none");
  sh("sed 's/^latency_window=100ms$/latency_window=100ms\\nlatency_run=1/' " + kJob + " > " + job);
  ASSERT_NE(slurp(job).find("latency_run=1"), std::string::npos);
  const json fio = run_fio(job, {"IOACCT_TARGET=" + data, "RUNTIME=1"});
  ASSERT_FALSE(fio.is_null());
  const json& fj = fio["jobs"][0];
  const Outcome o = run_ioacct({"bench", "--fio", job, "--format", "json"}, {.env = {"IOACCT_TARGET=" + data, "RUNTIME=1"}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json ours = stdout_json(o);
  const json& r = ours["results"];
  std::printf("latency_run=1: depth fio %d, ioacct %d; ran fio %d ms, ioacct %.3f s\n", fj["latency_depth"].get<int>(),
              r["latency_target_depth"].get<int>(), fj["job_runtime"].get<int>(), r["window_s"].get<double>());
  EXPECT_GE(fj["job_runtime"].get<int>(), 1000);
  EXPECT_GE(r["window_s"].get<double>(), 1.0);
  EXPECT_EQ(fj["latency_depth"], 8);
  EXPECT_EQ(r["latency_target_depth"], 8);
  EXPECT_EQ(r["latency_target_found"], true);
  EXPECT_EQ(ours["context"]["options"]["latency_target"]["run"], true);
  EXPECT_EQ(o.err.find("warning"), std::string::npos) << o.err;
}

}  // namespace
}  // namespace ioacct::test
