// When: bench's JSON context says when the run began (RFC 3339) and the
// CLOCK_MONOTONIC reading taken with it; every `stat --format json` line says
// when it was taken. Both are checked against the test's own clocks.
#include <gtest/gtest.h>
#include <time.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

int64_t clock_ns(clockid_t c) {
  timespec ts;
  clock_gettime(c, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1'000'000'000 + ts.tv_nsec;
}

// Seconds since the epoch of an RFC 3339 UTC time with milliseconds, read
// with the C library (an independent reader of the format).
double parse_rfc3339(const std::string& s) {
  EXPECT_EQ(s.size(), 24u) << s;
  EXPECT_EQ(s.back(), 'Z') << s;
  tm t{};
  const char* rest = strptime(s.c_str(), "%Y-%m-%dT%H:%M:%S", &t);
  EXPECT_NE(rest, nullptr) << s;
  return static_cast<double>(timegm(&t)) + (rest ? std::stod(std::string(rest, 4)) : 0);
}

TEST(TimeFields, BenchContextHasItsStartTimeAndMonotonicAnchor) {
  TempDir dir;
  const int64_t wall0 = clock_ns(CLOCK_REALTIME), mono0 = clock_ns(CLOCK_MONOTONIC);
  auto o = run_ioacct({"bench", "--format", "json", "--size", "16m", "--runtime", "300ms", "--buffered"},
                      {.env = {"TMPDIR=" + dir.path()}});
  const int64_t wall1 = clock_ns(CLOCK_REALTIME), mono1 = clock_ns(CLOCK_MONOTONIC);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json ctx = stdout_json(o)["context"];
  const double start = parse_rfc3339(ctx["start_time"]);
  EXPECT_GE(start, static_cast<double>(wall0) / 1e9 - 0.001);
  EXPECT_LE(start, static_cast<double>(wall1) / 1e9);
  const auto anchor = ctx["start_monotonic_ns"].get<int64_t>();
  EXPECT_GT(anchor, mono0);
  EXPECT_LT(anchor, mono1);
  // The two were read together: the same instant on both clocks, within the
  // millisecond the wall time is printed to (and a little scheduling).
  const double wall_at_anchor = static_cast<double>(wall0 + (anchor - mono0)) / 1e9;
  EXPECT_NEAR(start, wall_at_anchor, 0.05);
}

TEST(TimeFields, EveryStatJsonLineHasATimestamp) {
  const int64_t wall0 = clock_ns(CLOCK_REALTIME);
  auto o = run_ioacct({"stat", "--format", "json", "--no-bpf", "200ms", "3"});
  const int64_t wall1 = clock_ns(CLOCK_REALTIME);
  ASSERT_EQ(o.exit_code, 0) << o.err;
  std::istringstream in(o.out);
  std::vector<double> stamps;
  for (std::string line; std::getline(in, line);) stamps.push_back(parse_rfc3339(json::parse(line)["timestamp"]));
  ASSERT_EQ(stamps.size(), 3u);
  EXPECT_GE(stamps.front(), static_cast<double>(wall0) / 1e9 - 0.001);
  EXPECT_LE(stamps.back(), static_cast<double>(wall1) / 1e9);
  for (size_t i = 1; i < stamps.size(); ++i) EXPECT_NEAR(stamps[i] - stamps[i - 1], 0.2, 0.1) << "the interval apart";
}

}  // namespace
}  // namespace ioacct::test
