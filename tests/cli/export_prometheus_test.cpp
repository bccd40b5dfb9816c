// A real Prometheus (Debian's, on 127.0.0.1 with a temporary storage folder)
// scrapes a real `ioacct export` every second for 18 s while fio drives a
// loop device, first paced, then saturating it; contrib/'s recording rules
// and alerts are loaded into it, and every query of contrib/'s Grafana
// dashboard is run against it.
//
// What must hold (docs/metrics.md, "Rates"):
//  - rate(ioacct_device_busy_seconds_total[5s]) never exceeds 1 + kRateTolerance,
//    plus what the window's longest scrape can add (with the old cached
//    scrapes it read up to 1.22);
//  - at a steady, saturating load, rate(...[5s]) of the exact busy time and
//    of the device's own io_ticks agree within 5%.
//
// Each phase runs as long as its checks need: the paced one until two [5s]
// windows lie wholly inside it (6 s), the saturating one until seven do
// (12 s). Busy is compared with io_ticks over [5s] windows, not the
// dashboard's [15s]: a [15s] window's first point comes 15 s into the phase
// (22 s of saturation for seven points), and a [5s] window compares the same
// two counters over a third of the time, which is the stricter test.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>
#include <vector>

#include "cli/exporter.hpp"
#include "cli/prometheus.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

// The scrape stamps a sample with the request's start; the exporter reads the
// counters a little later (accepting the connection, a thread waking). A 5 s
// window spans about 4 s between its first and last samples, so a read 40 ms
// later at one end than at the other shows as 1%. docs/metrics.md says so.
constexpr double kRateTolerance = 0.02;


void fio(const std::string& dev, const std::string& name, const std::string& extra, int seconds,
         const std::string& prefix = "") {
  sh(prefix + "fio --name=" + name + " --filename=" + dev + " --direct=1 --rw=randread --ioengine=io_uring --time_based "
     "--runtime=" + std::to_string(seconds) + " " + extra + " --output=/dev/null");
}

struct Phases {
  double t0 = 0, saturating = 0, t1 = 0;
  double stall_ms = 0;  // the longest a 20 ms sleep of this process overslept
};

// fio paced, then saturating, while a thread of this process notes how late
// its 20 ms sleeps wake: a stall of the whole machine shows there too.
Phases run_phases(const std::string& dev) {
  Phases p;
  std::atomic<bool> done{false};
  std::atomic<double> stall{0};
  std::thread watch([&] {
    while (!done) {
      const auto t = std::chrono::steady_clock::now();
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      const double late = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t).count() - 20;
      if (late > stall) stall = late;
    }
  });
  p.t0 = wall_now();
  fio(dev, "paced", "--bs=4k --iodepth=1 --rate_iops=500", 6);
  p.saturating = wall_now();
  // Saturating means never idle. This VM's two CPUs are shared (load 10 is
  // common), and a submitter that waits its turn lets the queue drain (busy
  // read 65% at depth 16 here); at real-time priority with 32 requests of
  // 1 MiB queued it does not.
  fio(dev, "saturating", "--bs=1m --iodepth=32", 12, "chrt -f 1 ");
  p.t1 = wall_now();
  std::this_thread::sleep_for(std::chrono::milliseconds(1500));  // the last scrapes land
  done = true;
  watch.join();
  p.stall_ms = stall;
  return p;
}

// Asserts what ioacct must get right over the run, and returns why the run's
// premises failed, or "" when they held.
std::string check_truths(const Prometheus& prom, const std::string& dev, const Phases& p) {
  std::string premise;
  const auto rate5 = prom.range("rate(ioacct_device_busy_seconds_total" + dev + "[5s])", p.t0 + 5, p.t1);
  // What a late read can add (docs/metrics.md): the read happens within its
  // scrape, so a window's ends differ by at most its longest scrape; over the
  // at least 3 s between a [5s] window's first and last samples. On a loaded
  // machine a scrape can take 100 ms; the 22% that cached scrapes added could
  // not hide in that.
  const auto longest = prom.range("max_over_time(scrape_duration_seconds{job=\"ioacct\"}[5s])", p.t0 + 5, p.t1);
  double top = 0, slowest = 0;
  for (const auto& l : longest) slowest = std::max(slowest, l.second);
  for (const auto& [t, v] : rate5) {
    double scrape = 0;
    for (const auto& [lt, lv] : longest)
      if (lt == t) scrape = lv;
    top = std::max(top, v);
    EXPECT_LE(v, 1.0 + kRateTolerance + scrape / 3)
        << "rate[5s] of busy seconds at " << t - p.t0 << " s, the window's longest scrape " << scrape * 1e3 << " ms";
  }
  ::testing::Test::RecordProperty("max_rate5", std::to_string(top));
  std::printf("rate(busy[5s]) max %.4f over %zu points; the longest scrape %.1f ms\n", top, rate5.size(),
              slowest * 1e3);
  // A step has no point when its window holds fewer than two samples: four
  // seconds or more without a scrape. A fifth of them may be missing.
  const size_t steps = static_cast<size_t>(p.t1 - p.t0 - 5) + 1;
  if (rate5.size() * 5 < steps * 4)
    premise = "Prometheus did not scrape every second (" + std::to_string(rate5.size()) + " of " +
              std::to_string(steps) + " points of rate[5s], the longest scrape " +
              std::to_string(static_cast<int>(slowest * 1e3)) + " ms)";

  // Fully inside the saturating phase: the 5 s window starts after it did.
  // Both counters are read in the same scrape, diskstats first and the
  // tracker's maps right after (microseconds apart): a read delayed δ between
  // them shows in the ratio as δ over the window's span (at least 4 s), so
  // 5% would take a 200 ms stall between the two; io_ticks' own step, one
  // jiffy, is 0.1% of that span.
  const auto busy = prom.range("rate(ioacct_device_busy_seconds_total" + dev + "[5s])", p.saturating + 6, p.t1);
  const auto ticks = prom.range("rate(ioacct_device_io_ticks_seconds_total" + dev + "[5s])", p.saturating + 6, p.t1);
  EXPECT_FALSE(busy.empty());
  EXPECT_EQ(busy.size(), ticks.size());
  if (busy.empty() || busy.size() != ticks.size()) return premise;
  for (size_t i = 0; i < busy.size(); ++i) {
    EXPECT_NEAR(busy[i].second / ticks[i].second, 1.0, 0.05)
        << "busy " << busy[i].second << " io_ticks " << ticks[i].second << " at " << busy[i].first - p.t0 << " s";
    std::printf("at %.0f s: rate(busy[5s]) %.4f rate(io_ticks[5s]) %.4f\n", busy[i].first - p.t0, busy[i].second,
                ticks[i].second);
  }
  // The premise, over the phase: fio kept the device busy. One clean-clone
  // run had a few seconds in which fio sent nothing (busy and io_ticks both
  // read 0.55-0.62 there), so it is the median, not every point; the ratio
  // above holds at every point whatever the load.
  std::vector<double> levels;
  for (const auto& b : busy) levels.push_back(b.second);
  std::nth_element(levels.begin(), levels.begin() + static_cast<long>(levels.size() / 2), levels.end());
  const double median = levels[levels.size() / 2];
  if (median <= 0.9) {
    if (!premise.empty()) premise += "; ";
    premise += "fio at depth 32 did not saturate the device (median rate(busy[5s]) " + std::to_string(median) + ")";
  }
  return premise;
}

TEST(ExportPrometheus, RatesStayTrueAtA1sScrapeAndTheContribRulesAndDashboardWork) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "256m", .random_data = true});
  // Direct I/O onto the VM's disk: each request really waits on a device.
  sh("losetup --direct-io=on " + loop.path());
  // --per-cgroup: the dashboard's "who" panels find data too.
  Exporter ex({"--listen", "127.0.0.1:0", "--per-cgroup", loop.name()});
  ASSERT_GT(ex.port(), 0) << ex.err();
  const std::string source = IOACCT_SOURCE_DIR;
  Prometheus prom(dir.path(), "127.0.0.1:" + std::to_string(ex.port()), source + "/contrib/prometheus/ioacct-rules.yml");
  ASSERT_TRUE(prom.ready()) << sh("cat " + dir.path() + "/prometheus.log");

  const std::string dev = "{device=\"" + loop.name() + "\"}";
  // Both phases' premises (a scrape every second, fio keeping the device
  // busy) rest on the machine running us. A CI host once stopped this VM's
  // userspace for ~10 s: one scrape took 10.0 s against a 1 s timeout, which
  // only a Prometheus that was not run can record, and fio sent nothing then
  // (busy and io_ticks both flat, and equal). A run whose premise failed is
  // run again, at most three times, saying why; what ioacct must get right
  // (the bound on rate[5s], busy against io_ticks) is asserted on every run.
  Phases run;
  for (int attempt = 1;; ++attempt) {
    run = run_phases(loop.path());
    const std::string why = check_truths(prom, dev, run);
    if (why.empty()) break;
    std::fprintf(stderr, "run %d: %s; the machine's longest stall seen by the test itself %.0f ms\n", attempt,
                 why.c_str(), run.stall_ms);
    if (attempt == 3) {
      ADD_FAILURE() << why << " on three runs in a row";
      break;
    }
  }
  const double t1 = run.t1;

  // contrib/'s rules: loaded, healthy, and recording.
  const json rules = prom.api("/api/v1/rules");
  size_t n = 0;
  for (const auto& g : rules["data"]["groups"])
    for (const auto& r : g["rules"]) {
      ++n;
      EXPECT_EQ(r["health"], "ok") << r.dump();
    }
  EXPECT_EQ(n, 19u);
  const auto recorded = prom.range("instance_device:ioacct_device_busy:ratio_rate1m" + dev, t1 - 2, t1);
  ASSERT_FALSE(recorded.empty());
  EXPECT_GT(recorded.back().second, 0.05);
  EXPECT_LE(recorded.back().second, 1.0 + kRateTolerance);

  // Every query of the Grafana dashboard runs and finds data here.
  std::ifstream in(source + "/contrib/grafana/ioacct.json");
  const json dash = json::parse(in);
  size_t queries = 0;
  for (const auto& p : dash["panels"]) {
    if (!p.contains("targets")) continue;
    for (const auto& t : p["targets"]) {
      std::string expr = t["expr"];
      expr = std::regex_replace(expr, std::regex(R"(\$__rate_interval)"), "15s");
      expr = std::regex_replace(expr, std::regex(R"(\$instance)"), ".*");
      expr = std::regex_replace(expr, std::regex(R"(\$device)"), loop.name());
      const json r = prom.api("/api/v1/query", {{"query", expr}, {"time", std::to_string(t1)}});
      EXPECT_EQ(r["status"], "success") << p["title"] << ": " << expr << " " << r.dump();
      EXPECT_FALSE(r["data"]["result"].empty()) << p["title"] << ": " << expr;
      ++queries;
    }
  }
  EXPECT_GE(queries, 15u);
  EXPECT_EQ(ex.stop(), 0) << ex.err();
}

}  // namespace
}  // namespace ioacct::test
