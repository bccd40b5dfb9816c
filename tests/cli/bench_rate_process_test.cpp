// --rate-process poisson and the floors (--rate-min, --rate-iops-min,
// --rate-cycle). The arrivals' shape is read at the block layer (a tracefs
// instance on a loop device): evenly spaced I/Os have gaps of about one
// period, a Poisson process's are exponential (a quarter of them over
// twice the median, 29% under half of it). The floors end a
// thread that falls under them, with the run's results and exit 1.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <utility>

#include <nlohmann/json.hpp>

#include "cli/block_trace.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

struct Gaps {
  size_t n = 0;
  double mean_us = 0, cv = 0;  // coefficient of variation: the spread over the mean
  double max_us = 0;
  // Shape by quantiles, which a few outliers cannot move: one stall of 20 ms
  // among ~2,600 gaps of 500 µs adds as much variance as the gaps' own
  // (cv 1.0 -> 1.25), and a loaded machine deschedules a thread that long.
  double median_us = 0;
  double iqr_over_median = 0;  // (q75 - q25) / q50
  double under_half = 0;       // share of gaps under half the median
  double over_double = 0;      // share of gaps over twice the median
  double steal = 0;            // the host's steal time over the run, a share of the vCPUs' time
};

// /proc/stat's first line: the vCPUs' time in all states, and the part the
// host took for itself (steal). Stolen time stalls a paced thread for up to
// ~20 ms here; the I/Os due in a stall reach the device in a burst.
std::pair<double, double> cpu_and_steal() {
  std::FILE* f = std::fopen("/proc/stat", "r");
  if (!f) return {0, 0};
  unsigned long long v[10] = {};
  const int n = std::fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2],
                            &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9]);
  std::fclose(f);
  double all = 0;
  for (int i = 0; i < 8 && i < n; ++i) all += static_cast<double>(v[i]);  // guest time is inside user
  return {all, n >= 8 ? static_cast<double>(v[7]) : 0};
}

// The gaps between requests reaching the loop device while `ioacct bench`
// paces reads at 2,000 a second for 1.5 s.
Gaps arrivals(const std::string& process) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "64m"});
  struct stat st {};
  EXPECT_EQ(stat(loop.path().c_str(), &st), 0);
  std::vector<uint64_t> starts;
  const auto before = cpu_and_steal();
  {
    BlockTrace trace(major(st.st_rdev), minor(st.st_rdev));
    const Outcome o = run_ioacct({"bench", "--runtime", "1500ms", "--iodepth", "8", "--rate-iops", "2000",
                                  "--rate-process", process, loop.path()});
    EXPECT_EQ(o.exit_code, 0) << o.err;
    for (const auto& e : trace.stop())
      if (e.start) starts.push_back(e.t_ns);
  }
  const auto after = cpu_and_steal();
  Gaps g;
  g.steal = after.first > before.first ? (after.second - before.second) / (after.first - before.first) : 0;
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
  std::sort(d.begin(), d.end());
  const auto q = [&](double p) { return d[static_cast<size_t>(p * static_cast<double>(d.size() - 1))]; };
  g.max_us = d.back();
  g.median_us = q(0.5);
  g.iqr_over_median = (q(0.75) - q(0.25)) / g.median_us;
  for (double x : d) {
    g.under_half += x < g.median_us / 2 ? 1.0 / static_cast<double>(d.size()) : 0;
    g.over_double += x > 2 * g.median_us ? 1.0 / static_cast<double>(d.size()) : 0;
  }
  return g;
}

TEST(BenchRateProcess, PoissonArrivalsAreExponentialAtTheSameMeanLinearOnesEven) {
  const Gaps lin = arrivals("linear"), poi = arrivals("poisson");
  // The mean gap is the pace's period, 500 µs, either way (a thread stalled
  // more than a period drops its backlog: a little longer).
  EXPECT_NEAR(lin.mean_us, 500, 75) << lin.n << " gaps";
  EXPECT_NEAR(poi.mean_us, 500, 75) << poi.n << " gaps";
  // An exponential's spread equals its mean (cv 1). Its median is ln 2 of
  // the mean; (q75 - q25) / q50 = ln 3 / ln 2 = 1.585; a quarter of its gaps
  // are over twice the median (e^-2 ln 2) and 1 - 2^-1/2 = 29% under half
  // of it. A schedule's gaps are the period, give or take a wake-up's
  // lateness: none of that.
  //
  // The host's steal stalls the thread, and the I/Os due in a stall come in
  // a burst: with 14% of the vCPUs' time stolen the linear gaps read iqr/median
  // 0.17-0.23, 19% under half the median and 6% over twice it, and the
  // Poisson ones 1.8-2.5, 32-37% and 26-32% (cv up to 1.29, max 20 ms). So
  // the bounds sit halfway between the shapes, where a disturbance cannot
  // carry one into the other: evenly spaced (iqr/median 0), uniform gaps of
  // the same mean (1.0, none over twice the median), exponential (1.585, 25%).
  // The cv is only bounded below, as a stall inflates it.
  const auto show = [](const char* name, const Gaps& g) {
    std::printf("gaps %s: n %zu, mean %.0f us, cv %.3f, max %.0f us, median %.0f us, iqr/median %.3f, "
                "%.1f%% under half the median, %.1f%% over twice it; host steal %.1f%%\n",
                name, g.n, g.mean_us, g.cv, g.max_us, g.median_us, g.iqr_over_median, 100 * g.under_half,
                100 * g.over_double, 100 * g.steal);
  };
  show("linear", lin);
  show("poisson", poi);
  EXPECT_GT(poi.median_us / poi.mean_us, 0.5);
  EXPECT_LT(poi.median_us / poi.mean_us, 0.8);
  EXPECT_GT(poi.iqr_over_median, 1.3);
  EXPECT_LT(poi.iqr_over_median, 2.8);
  EXPECT_GT(poi.over_double, 0.17);
  EXPECT_LT(poi.over_double, 0.37);
  EXPECT_GT(poi.under_half, 0.2);
  EXPECT_LT(poi.under_half, 0.45);
  EXPECT_GT(poi.cv, 0.8);
  EXPECT_NEAR(lin.median_us, 500, 50);
  EXPECT_LT(lin.iqr_over_median, 0.8);
  EXPECT_LT(lin.over_double, 0.12);
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
