// A fleet in Prometheus: three `ioacct export` processes (three ports, each
// scraped with a `host` label of its own), each over a loop device a bench
// run loads, and a real Prometheus evaluating contrib/'s fleet rules into
// fleet-wide figures: the hosts counted, their rates added, one latency
// quantile from every host's buckets.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <chrono>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "cli/exporter.hpp"
#include "cli/prometheus.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

TEST(ExportFleet, ContribFleetRulesAddThreeHostsExporters) {
  TempDir dir;
  // Prometheus first: its service discovery hands the scrape targets over
  // about 5 s after it starts, while the devices and exporters come up.
  std::vector<int> ports;
  std::vector<std::pair<std::string, std::string>> targets;
  for (int i = 0; i < 3; ++i) {
    ports.push_back(free_port());
    targets.emplace_back("127.0.0.1:" + std::to_string(ports[i]), "host: h" + std::to_string(i));
  }
  Prometheus prom(dir.path(), targets, std::string(IOACCT_SOURCE_DIR) + "/contrib/prometheus/ioacct-rules.yml");
  ASSERT_TRUE(prom.ready()) << slurp(dir.path() + "/prometheus.log");
  std::vector<std::unique_ptr<LoopDevice>> loops;
  std::vector<std::unique_ptr<Exporter>> exporters;
  for (int i = 0; i < 3; ++i) {
    loops.push_back(std::make_unique<LoopDevice>(dir.path(), LoopOptions{.size = "16m"}));
    exporters.push_back(std::make_unique<Exporter>(
        std::vector<std::string>{"--listen", "127.0.0.1:" + std::to_string(ports[i]), loops[i]->name()}));
    ASSERT_NE(exporters[i]->port(), 0) << exporters[i]->err();
  }
  // The load starts once every host has been scraped: a rate counts from
  // the first sample.
  for (int i = 0; i < 150 && prom.instant("count(count by (host) (ioacct_exact_busy_up))").size() != 1; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  for (int i = 0; i < 50 && prom.instant("count(count by (host) (ioacct_exact_busy_up))")[0].second < 3; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::vector<std::array<uint64_t, 2>> before;
  for (const auto& l : loops) before.push_back(disk_rw_asked(l->name()));
  std::vector<std::thread> load;
  for (int i = 0; i < 3; ++i)
    load.emplace_back([&, i] {
      run_ioacct({"bench", loops[i]->path(), "--runtime", "2s", "--iodepth", std::to_string(2 * (i + 1)), "--acct", "basic"});
    });
  for (auto& t : load) t.join();
  double asked = 0;
  for (size_t i = 0; i < loops.size(); ++i) {
    const auto after = disk_rw_asked(loops[i]->name());
    asked += static_cast<double>(after[0] - before[i][0] + after[1] - before[i][1]);
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(2500));  // the last scrapes and a rule evaluation land

  const auto hosts = prom.instant("fleet:ioacct_hosts:count");
  ASSERT_EQ(hosts.size(), 1u);
  EXPECT_EQ(hosts[0].second, 3);
  std::set<std::string> names;
  for (const auto& [labels, v] : prom.instant("host:ioacct_device_completed_ios:rate1m")) {
    names.insert(labels["host"].get<std::string>());
    EXPECT_GT(v, 0) << labels.dump();
  }
  EXPECT_EQ(names, (std::set<std::string>{"h0", "h1", "h2"}));
  // One evaluation of the group: the fleet's rate is its hosts' added.
  const auto fleet_vs_hosts =
      prom.instant("fleet:ioacct_device_completed_ios:rate1m - on() sum(host:ioacct_device_completed_ios:rate1m)");
  ASSERT_EQ(fleet_vs_hosts.size(), 1u);
  const auto fleet = prom.instant("fleet:ioacct_device_completed_ios:rate1m");
  ASSERT_EQ(fleet.size(), 1u);
  EXPECT_NEAR(fleet_vs_hosts[0].second, 0, fleet[0].second * 1e-9);
  // What the three exporters served adds up to the I/Os asked of the three
  // loop devices (each counter's last sample less its first: no
  // extrapolation), and the fleet rule, at the instant it was last
  // evaluated, is the rate Prometheus itself gives of every host's counters
  // at that instant.
  const auto served = prom.instant("sum(max_over_time(ioacct_device_completed_ios_total[1m]) - "
                                   "min_over_time(ioacct_device_completed_ios_total[1m]))");
  ASSERT_EQ(served.size(), 1u);
  EXPECT_NEAR(served[0].second / asked, 1.0, 0.02) << "served " << served[0].second << " asked " << asked;
  // A scrape stamped before an evaluation but appended after it (a scrape
  // takes up to kRingsWalkWait, 250 ms, under load) is in the query and was
  // not in the rule: 5.5% apart in a CI run. So an evaluation no scrape
  // straddled is looked for, the next one each time: a wrong rule is off in
  // every one.
  double rule = 0, prom_rate = 0;
  for (int tries = 0; tries < 5; ++tries) {
    if (tries) std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    const auto evaluated = prom.instant("timestamp(fleet:ioacct_device_completed_ios:rate1m)");
    ASSERT_EQ(evaluated.size(), 1u);
    const auto at_eval = prom.instant("fleet:ioacct_device_completed_ios:rate1m", evaluated[0].second);
    const auto direct = prom.instant("sum(rate(ioacct_device_completed_ios_total[1m]))", evaluated[0].second);
    ASSERT_EQ(at_eval.size(), 1u);
    ASSERT_EQ(direct.size(), 1u);
    rule = at_eval[0].second;
    prom_rate = direct[0].second;
    if (std::abs(rule / prom_rate - 1.0) <= 1e-9) break;
  }
  EXPECT_NEAR(rule / prom_rate, 1.0, 1e-9) << rule << " " << prom_rate << ": in five evaluations in a row";
  // A quantile of the fleet lies between the hosts' own.
  const auto p99 = prom.instant("fleet:ioacct_device_request_latency_seconds:p99_rate1m");
  const auto own = prom.instant(
      "histogram_quantile(0.99, sum by (host, le) (rate(ioacct_device_request_latency_seconds_bucket[1m])))");
  ASSERT_EQ(p99.size(), 1u);
  ASSERT_EQ(own.size(), 3u);
  double lo = 1e9, hi = 0;
  for (const auto& [labels, v] : own) {
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  EXPECT_GT(p99[0].second, 0);
  EXPECT_GE(p99[0].second, lo);
  EXPECT_LE(p99[0].second, hi);
  for (auto& e : exporters) e->stop();
}

}  // namespace
}  // namespace ioacct::test
