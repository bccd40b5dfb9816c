// --rate-process poisson and the floors (--rate-min, --rate-iops-min,
// --rate-cycle). The arrivals' shape is read at the block layer (a tracefs
// instance on a loop device): evenly spaced I/Os have gaps of about one
// period, a Poisson process's are exponential (as many above the mean as
// its spread says, a third of them under half of it). The floors end a
// thread that falls under them, with the run's results and exit 1.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <cmath>

#include <nlohmann/json.hpp>

#include "cli/block_trace.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

struct Gaps {
  size_t n = 0;
  double mean_us = 0, cv = 0;  // coefficient of variation: the spread over the mean
  double under_half = 0;       // share of gaps under half the mean
};

// The gaps between requests reaching the loop device while `ioacct bench`
// paces reads at 2,000 a second for 1.5 s.
Gaps arrivals(const std::string& process) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "64m"});
  struct stat st {};
  EXPECT_EQ(stat(loop.path().c_str(), &st), 0);
  std::vector<uint64_t> starts;
  {
    BlockTrace trace(major(st.st_rdev), minor(st.st_rdev));
    const Outcome o = run_ioacct({"bench", "--runtime", "1500ms", "--iodepth", "8", "--rate-iops", "2000",
                                  "--rate-process", process, loop.path()});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    for (const auto& e : trace.stop())
      if (e.start) starts.push_back(e.t_ns);
  }
  Gaps g;
  if (starts.size() < 1000) {
    ADD_FAILURE() << "the trace saw " << starts.size() << " requests of ~3,000";
    return g;
  }
  // The middle: the first and last 100 ms hold the start-up and the drain.
  std::vector<double> d;
  for (size_t i = 1; i < starts.size(); ++i)
    if (starts[i - 1] > starts.front() + 100'000'000 && starts[i] < starts.back() - 100'000'000)
      d.push_back(static_cast<double>(starts[i] - starts[i - 1]) / 1e3);
  g.n = d.size();
  for (double x : d) g.mean_us += x / static_cast<double>(d.size());
  double var = 0;
  for (double x : d) var += (x - g.mean_us) * (x - g.mean_us) / static_cast<double>(d.size());
  g.cv = std::sqrt(var) / g.mean_us;
  for (double x : d) g.under_half += x < g.mean_us / 2 ? 1.0 / static_cast<double>(d.size()) : 0;
  return g;
}

TEST(BenchRateProcess, PoissonArrivalsAreExponentialAtTheSameMeanLinearOnesEven) {
  const Gaps lin = arrivals("linear"), poi = arrivals("poisson");
  // The mean gap is the pace's period, 500 µs, either way (a late wake-up
  // on a busy machine drops a slot or two: a little longer).
  EXPECT_NEAR(lin.mean_us, 500, 50) << lin.n << " gaps";
  EXPECT_NEAR(poi.mean_us, 500, 50) << poi.n << " gaps";
  // An exponential's spread equals its mean (cv 1) and 1 - e^-0.5 = 39% of
  // its gaps are under half the mean; a schedule's gaps are the period,
  // give or take a wake-up's lateness, and almost none are that short.
  EXPECT_LT(lin.cv, 0.5);
  EXPECT_LT(lin.under_half, 0.1);
  EXPECT_GT(poi.cv, 0.75);
  EXPECT_LT(poi.cv, 1.3);
  EXPECT_NEAR(poi.under_half, 0.39, 0.08);
}

Outcome floored(const std::vector<std::string>& extra) {
  TempDir dir;
  std::vector<std::string> args = {"bench", "--format", "json", "--size", "16m", "--buffered", "--iodepth", "4",
                                   "--rate-cycle", "250ms"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}});
}

TEST(BenchRateFloor, AThreadUnderItsFloorEndsAfterTheSettlingAndOneCycleAndTheRunExits1) {
  const Outcome o = floored({"--rate-iops", "300", "--rate-iops-min", "600", "--runtime", "5s"});
  EXPECT_EQ(o.exit_code, 1);
  EXPECT_NE(o.err.find("error: thread 0: reads ran at 30"), std::string::npos) << o.err;  // 300 a second
  EXPECT_NE(o.err.find("under --rate-iops-min 600 (fio's rate_iops_min)"), std::string::npos) << o.err;
  const json r = stdout_json(o)["results"];
  EXPECT_NE(r["rate_floor_missed"].get<std::string>().find("reads ran at"), std::string::npos);
  // 2 s to settle, then one cycle of 250 ms: the window ends there, not at 5 s.
  EXPECT_GE(r["window_s"].get<double>(), 2.25);
  EXPECT_LT(r["window_s"].get<double>(), 3.0);
  EXPECT_NEAR(r["iops"].get<double>(), 300, 30);
}

TEST(BenchRateFloor, AFloorHeldEndsNothingAndEachDirectionIsHeldToItsOwn) {
  const Outcome held = floored({"--rate-iops", "400", "--rate-iops-min", "100", "--runtime", "2500ms"});
  EXPECT_EQ(held.exit_code, 0) << held.err;
  const json r = stdout_json(held)["results"];
  EXPECT_TRUE(r["rate_floor_missed"].is_null());
  EXPECT_GE(r["window_s"].get<double>(), 2.5);
  const json floor = stdout_json(held)["context"]["options"]["rate_floor"];
  EXPECT_EQ(floor["min_ios_per_s"]["read"], 100);
  EXPECT_EQ(floor["cycle_s"], 0.25);

  // Reads at 400 hold a read floor of 200; writes at 100 miss theirs of 200.
  const Outcome mixed = floored({"--rw", "randrw", "--rate-iops", "400,100", "--rate-iops-min", "200,200",
                                 "--runtime", "4s"});
  EXPECT_EQ(mixed.exit_code, 1);
  EXPECT_NE(mixed.err.find("error: thread 0: writes ran at"), std::string::npos) << mixed.err;
}

TEST(BenchRateFloor, UsageErrors) {
  const auto err = [](const std::vector<std::string>& args) {
    std::vector<std::string> a = {"bench", "--size", "16m", "--runtime", "1s"};
    a.insert(a.end(), args.begin(), args.end());
    const Outcome o = run_ioacct(a);
    EXPECT_EQ(o.exit_code, 2) << o.err;
    return o.err;
  };
  EXPECT_EQ(err({"--rate-process", "poisson"}),
            "error: --rate-process: poisson spaces a pace; give --rate-iops or --rate too\n");
  EXPECT_EQ(err({"--rate-iops", "10", "--rate-process", "bursty"}),
            "error: --rate-process: 'bursty' is not linear or poisson\n");
  EXPECT_EQ(err({"--rate-cycle", "1s"}), "error: --rate-cycle: only applies with --rate-min or --rate-iops-min\n");
  EXPECT_EQ(err({"--rate-iops-min", "0"}),
            "error: --rate-iops-min: must be more than 0 (leave it out for no floor)\n");
  EXPECT_EQ(err({"--rate-min", "1m,2m,3m,4m"}),
            "error: --rate-min: '1m,2m,3m,4m' has more than three fields (reads, writes, trims)\n");
}

}  // namespace
}  // namespace ioacct::test
