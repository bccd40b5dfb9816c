// Paced runs (--rate-iops): the window and the count match the schedule, at
// 1, 10 and 1000 I/Os per second. Found by a test pass: 10/s over 1 s counted
// 11 I/Os (both ends of the window), 1/s over 1500 ms measured 2 s, and 1/s
// over 100 ms measured 1 s and blamed a stalled device.
#include <gtest/gtest.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

struct Paced {
  Outcome o;
  json results;
};

Paced paced(const std::string& rate, const std::string& runtime, std::vector<std::string> extra = {}) {
  TempDir dir;
  std::vector<std::string> args = {"bench", "--format", "json", "--size", "16m", "--buffered", "--iodepth", "4",
                                   "--rate-iops", rate, "--runtime", runtime};
  args.insert(args.end(), extra.begin(), extra.end());
  Paced p{run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}}), {}};
  EXPECT_EQ(p.o.exit_code, 0) << p.o.err;
  if (p.o.exit_code == 0) p.results = stdout_json(p.o)["results"];
  return p;
}

// IOPS never above the pace by more than one I/O over the window; the window
// is the runtime asked for, give or take a wake-up.
void expect_on_schedule(const Paced& p, double rate, double runtime_s, uint64_t most, uint64_t least) {
  ASSERT_TRUE(p.results.is_object()) << p.o.err;
  const double window = p.results["window_s"].get<double>();
  const uint64_t ios = p.results["ios"].get<uint64_t>();
  EXPECT_GE(window, runtime_s);
  // A wake-up on a busy machine may be late by some milliseconds; the next
  // slot would be a whole period late.
  EXPECT_LT(window, runtime_s + 0.1) << "the window ends at the runtime, not at the next slot";
  EXPECT_LE(ios, most);
  EXPECT_GE(ios, least) << "the pace was kept (a late thread drops slots, so on a busy machine a little less)";
  EXPECT_LE(p.results["iops"].get<double>(), rate + 1 / window);
  EXPECT_EQ(p.o.err.find("warning"), std::string::npos) << p.o.err;
}

TEST(BenchPace, TenPerSecondForOneSecondIsTen) {
  const Paced p = paced("10", "1s");
  expect_on_schedule(p, 10, 1.0, 10, 9);
  EXPECT_LE(p.results["iops"].get<double>(), 10.0);
}

TEST(BenchPace, OnePerSecondForOneAndAHalfSecondsIsTwoInOneAndAHalf) {
  const Paced p = paced("1", "1500ms");
  expect_on_schedule(p, 1, 1.5, 2, 2);
}

TEST(BenchPace, AThousandPerSecond) {
  const Paced p = paced("1000", "1s");
  expect_on_schedule(p, 1000, 1.0, 1000, 500);
  // Two threads, each on its own schedule.
  const Paced two = paced("1000", "1s", {"--threads", "2"});
  expect_on_schedule(two, 2000, 1.0, 2000, 1000);
}

TEST(BenchPace, WithARampTheWindowStillHoldsThePace) {
  const Paced p = paced("10", "1s", {"--ramp", "250ms"});
  expect_on_schedule(p, 10, 1.0, 11, 8);
}

TEST(BenchPace, ARuntimeShorterThanOnePeriodIsAUsageError) {
  for (const std::vector<std::string>& pace : {std::vector<std::string>{"--rate-iops", "1"},
                                               std::vector<std::string>{"--rate", "4k"}}) {
    SCOPED_TRACE(pace[0]);
    std::vector<std::string> args = {"bench", "--size", "16m", "--runtime", "100ms"};
    args.insert(args.end(), pace.begin(), pace.end());
    const Outcome o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 2) << o.err;
    EXPECT_TRUE(o.out.empty()) << o.out;
    EXPECT_NE(o.err.find("error: --runtime: 100.0 ms is shorter than one period of the pace"), std::string::npos) << o.err;
    EXPECT_NE(o.err.find("at least 1.00 s"), std::string::npos) << o.err;
  }
}

}  // namespace
}  // namespace ioacct::test
