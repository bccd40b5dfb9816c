// compare's presets for real, where a preset's answer is a measurement of
// the kernel (the headline logic on fixed figures is in
// tests/unit/compare_presets_test.cpp).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

// Student's t, two-sided 95%, for a few degrees of freedom, from the
// tables: the test's own, not the code's.
double t95(size_t df) {
  static const std::map<size_t, double> t{{1, 12.706}, {2, 4.303}, {3, 3.182}, {4, 2.776}, {5, 2.571}};
  return t.at(df);
}

// The kernel's HZ from /proc/config.gz (as stat_iostat_test.cpp reads it);
// 100, the longest jiffy and so the widest bound below, when not exported.
double jiffy_s() {
  const std::string hz = sh("zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_HZ=//p'");
  const double v = std::atof(hz.c_str());
  return 1 / (v > 0 ? v : 100.0);
}

// %util against busy% on fio's classic case, sync 4 KiB O_DIRECT writes at
// 2 MiB/s, on a temporary file on vda, as the seed measured it (on a loop
// device the same writes read 1.18x, 95% CI 1.03-1.32x: the loop device's
// own accounting, not this question).
// Its pace cannot lock to the tick, so io_ticks counts each write's ticks
// without bias: an isolated write shorter than a jiffy adds one tick with
// probability (its length / jiffy), else none, so the ticks over all
// repetitions have a mean of busy / jiffy (E) and a variance at most E.
// %util / busy% pooled over the repetitions then lies within 4 / sqrt(E) of
// 1.0 but for 1 run in 15,000; arrivals locked to the tick read 0 or 2+.
// And the headline places the variant as its own 95% figures do.
TEST(ComparePresets, UtilSyncWritesReadTheBusyTimeWithoutBias) {
  auto o = run_ioacct({"compare", "--preset", "util", "--repeat", "3", "--runtime", "1s", "--size", "64m", "--format",
                       "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = stdout_json(o);
  const json* sync = nullptr;
  for (const auto& v : j["variants"])
    if (v["name"] == "sync-write-2m") sync = &v;
  ASSERT_NE(sync, nullptr) << o.out;
  std::vector<double> r;
  double util_s = 0, busy_s = 0;
  for (const auto& run : (*sync)["runs"]) {
    ASSERT_TRUE(run["util_pct"].is_number() && run["busy_pct"].is_number()) << run;
    ASSERT_GT(run["busy_pct"].get<double>(), 0) << run;
    const double window = run["ios"].get<double>() / run["iops"].get<double>();
    util_s += run["util_pct"].get<double>() / 100 * window;
    busy_s += run["busy_pct"].get<double>() / 100 * window;
    r.push_back(run["util_pct"].get<double>() / run["busy_pct"].get<double>());
  }
  ASSERT_EQ(r.size(), 3u);
  const double ticks = busy_s / jiffy_s(), pooled = util_s / busy_s;
  ASSERT_GE(ticks, 8) << "the writes reached the disk: " << busy_s << " s busy";
  EXPECT_NEAR(pooled, 1.0, 4 / std::sqrt(ticks)) << "%util / busy% over " << ticks << " jiffies of busy time";

  double mean = 0, ss = 0;
  for (double x : r) mean += x / 3;
  for (double x : r) ss += (x - mean) * (x - mean);
  const double se = std::sqrt(ss / 2 / 3);
  const std::string h = j["headline"];
  const bool covers = mean - t95(2) * se <= 1.0 && mean + t95(2) * se >= 1.0;
  // The clause that names the variant: from the ';' before it to the one after.
  const size_t at = h.find("'sync-write-2m' (");
  ASSERT_NE(at, std::string::npos) << h;
  const size_t from = h.rfind(';', at), to = h.find(';', at);
  const std::string clause = h.substr(from == std::string::npos ? 0 : from, to == std::string::npos ? h.npos : to - from);
  if (covers) EXPECT_NE(clause.find("has a 95% interval covering 1.0 for"), std::string::npos) << h;
  else EXPECT_NE(clause.find(mean < 1 ? "reads below the exact busy time" : "reads above the exact busy time"), std::string::npos) << h;
  std::cout << "sync-write-2m: %util / busy% per repetition " << r[0] << ", " << r[1] << ", " << r[2] << "; pooled "
            << pooled << " over " << ticks << " jiffies (bound " << 4 / std::sqrt(ticks) << ")\n"
            << "headline: " << h << "\n";
}

}  // namespace
}  // namespace ioacct::test
