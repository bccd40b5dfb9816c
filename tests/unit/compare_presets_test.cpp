// compare's presets: their definitions (what each variant runs) and the
// headline sentences that answer their questions, on fixed figures. The
// generic verdict sentences are in compare_verdict_test.cpp.
#include <gtest/gtest.h>

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <set>

#include <nlohmann/json.hpp>

#include "acct/cpu_power.hpp"
#include "common/units.hpp"
#include "compare/presets.hpp"
#include "compare/summary.hpp"
#include "compare/stage_diff.hpp"
#include "compare/util_ratio.hpp"
#include "unit/compare_fixtures.hpp"
#include "report/compare_report.hpp"

// A namespace of its own: the unit tests are built in batches (a unity build),
// where another file's helpers (compare_verdict_test.cpp's variant()) share
// the anonymous namespace.
namespace ioacct::preset_test {
namespace {

// ---- util: arrivals that cannot lock to the tick ----

// The kernel's HZ as the cli tests read it (stat_iostat_test.cpp): from
// /proc/config.gz; 0 when the config is not exported.
unsigned kernel_hz() {
  FILE* p = popen("zcat /proc/config.gz 2>/dev/null | sed -n 's/^CONFIG_HZ=//p'", "r");
  if (!p) return 0;
  char buf[32] = {};
  const size_t n = fread(buf, 1, sizeof(buf) - 1, p);
  pclose(p);
  buf[n] = '\0';
  return static_cast<unsigned>(std::strtoul(buf, nullptr, 10));
}

// A variant's pace from its words, per second: --rate-iops, or --rate over
// --bs (4 KiB unless given). 0 when unpaced.
double pace_of(const std::vector<std::string>& w) {
  double iops = 0, bw = 0, bs = 4096;
  for (size_t i = 0; i + 1 < w.size(); ++i) {
    if (w[i] == "--rate-iops") iops = static_cast<double>(parse_count(w[i], w[i + 1]));
    if (w[i] == "--rate") bw = static_cast<double>(parse_bandwidth(w[i], w[i + 1]));
    if (w[i] == "--bs") bs = static_cast<double>(parse_size(w[i], w[i + 1]));
  }
  return iops ? iops : bw / bs;
}

// The widest gap, in ns, between the phases (due time modulo the jiffy) at
// which the first 10000 arrivals of a pace fall: due times are
// round(k * 1e9 / rate) ns, as the pace schedule computes them. A period
// that divides the jiffy leaves one phase, so the gap is the whole jiffy.
double widest_phase_gap(double rate, double jiffy_ns) {
  std::set<double> phases;
  for (int k = 0; k < 10000; ++k) phases.insert(std::fmod(std::round(k * 1e9 / rate), jiffy_ns));
  double gap = *phases.begin() + jiffy_ns - *phases.rbegin();  // around the wrap
  for (auto a = phases.begin(), b = std::next(a); b != phases.end(); ++a, ++b) gap = std::max(gap, *b - *a);
  return gap;
}

TEST(PresetUtil, NoPeriodDividesTheJiffySoArrivalsSweepTheTick) {
  const unsigned hz = kernel_hz();
  std::set<unsigned> hzs{100, 250, 300, 1000};  // the kernel's choices (CONFIG_HZ_*)
  if (hz) hzs.insert(hz);
  std::cout << "this kernel's CONFIG_HZ: " << (hz ? std::to_string(hz) : "not exported") << "\n";
  // The check itself fails the old paces, periods of 10, 4, 2 and 1 ms:
  // at a 4 ms jiffy they arrive at 1, 2 or 4 phases of the tick.
  for (double old : {100.0, 250.0, 500.0, 1000.0}) EXPECT_GE(widest_phase_gap(old, 4e6), 1e6) << old;

  const Preset* util = find_preset("util");
  ASSERT_NE(util, nullptr);
  size_t paced = 0;
  for (const auto& [name, words] : util->configs) {
    const double rate = pace_of(words);
    ASSERT_GT(rate, 0) << name << " is paced";
    ++paced;
    const double period_ns = 1e9 / rate;
    for (unsigned h : hzs) {
      const double jiffy_ns = 1e9 / h;
      SCOPED_TRACE(fmt::format("{} at HZ {}: period {:.0f} ns", name, h, period_ns));
      const double turns = jiffy_ns / period_ns;
      EXPECT_GT(std::abs(turns - std::round(turns)), 1e-6) << "the period divides the jiffy";
      // Arrivals spread over the tick's phases: no gap wider than 2% of the
      // jiffy (80 µs at HZ 250), at least 50 phases evenly spread. (2 MiB/s
      // of 4 KiB at HZ 1000 has 64: 125/64 jiffies a period.)
      EXPECT_LE(widest_phase_gap(rate, jiffy_ns), jiffy_ns / 50);
    }
  }
  EXPECT_EQ(paced, 5u);
  // The classic case is one of them, as fio runs it.
  const auto sync = std::find_if(util->configs.begin(), util->configs.end(), [](const auto& c) { return c.first == "sync-write-2m"; });
  ASSERT_NE(sync, util->configs.end());
  EXPECT_EQ(sync->second, (std::vector<std::string>{"--engine", "psync", "--rw", "write", "--bs", "4k", "--rate", "2m"}));
  EXPECT_EQ(util->fixed, (std::vector<std::string>{"--iodepth", "1", "--acct", "full"}));
}

// ---- util: %util / busy% with its interval ----

TEST(PresetUtil, StudentQuantileMatchesTheTables) {
  // t(0.975, df), four decimals, from any statistics table.
  const std::vector<std::pair<unsigned, double>> table{{1, 12.7062}, {2, 4.3027}, {3, 3.1824}, {4, 2.7764},
                                                       {5, 2.5706},  {9, 2.2622}, {29, 2.0452}};
  for (const auto& [df, t] : table) EXPECT_NEAR(student_quantile(0.975, df), t, 1e-4) << df;
  EXPECT_NEAR(student_quantile(0.95, 5), 2.0150, 1e-4);
  EXPECT_NEAR(student_quantile(0.025, 4), -2.7764, 1e-4);
  EXPECT_NEAR(student_quantile(0.975, 100000), 1.95996, 1e-4);  // the normal's
}

TEST(PresetUtil, RatioIsTakenPerRepetitionWithItsInterval) {
  using O = std::optional<double>;
  // Ratios 0.8, 1.0, 1.2: mean 1, sd 0.2, half-width t(0.975, 2) * 0.2 / sqrt(3).
  auto r = util_ratio({O(4), O(5), O(6)}, {O(5), O(5), O(5)}, 0.95);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->n, 3u);
  EXPECT_DOUBLE_EQ(r->estimate, 1.0);
  const double half = 4.302653 * 0.2 / std::sqrt(3.0);
  ASSERT_TRUE(r->low && r->high);
  EXPECT_NEAR(*r->low, 1 - half, 1e-6);
  EXPECT_NEAR(*r->high, 1 + half, 1e-6);
  // Paired: the same figures in another pairing give another answer (0.8 / 1.2 ...).
  auto swapped = util_ratio({O(4), O(5), O(6)}, {O(6), O(5), O(4)}, 0.95);
  ASSERT_TRUE(swapped);
  EXPECT_NEAR(swapped->estimate, (4.0 / 6 + 1 + 6.0 / 4) / 3, 1e-12);
  // A repetition without busy%, or with an idle device, has no ratio; one left: no interval.
  auto one = util_ratio({O(4), O(5), O(6)}, {O(), O(0), O(5)}, 0.95);
  ASSERT_TRUE(one);
  EXPECT_EQ(one->n, 1u);
  EXPECT_FALSE(one->low);
  EXPECT_FALSE(util_ratio({O(4)}, {O()}, 0.95));
  // The interval never goes below 0.
  auto wide = util_ratio({O(0), O(10)}, {O(5), O(5)}, 0.95);
  ASSERT_TRUE(wide && wide->low);
  EXPECT_EQ(*wide->low, 0.0);
}

VariantSummary paced(std::string name, double iops, std::vector<std::pair<double, double>> util_busy) {
  VariantSummary v;
  v.name = std::move(name);
  v.rate_iops = iops;
  for (const auto& [u, b] : util_busy) {
    RunMetrics m;
    m.iops = iops;
    m.util_pct = u;
    m.busy_pct = b;
    v.runs.push_back(m);
  }
  return v;
}

TEST(PresetUtil, HeadlineGivesDirectionAndSizeOnlyWhereTheIntervalExcludesOne) {
  CompareResult c;
  c.preset = "util";
  // The classic case: %util 4.46% against 4.54% give or take a jiffy's worth.
  c.variants = {paced("sync-write-2m", 512, {{4.46, 4.54}, {4.70, 4.52}, {4.31, 4.55}, {4.58, 4.50}, {4.41, 4.56}})};
  summarize(c);
  EXPECT_EQ(c.headline.rfind("No bias shown here: %util / busy% has a 95% interval covering 1.0 for 'sync-write-2m' (0.99x, "
                             "95% CI 0.94-1.04x).", 0), 0u) << c.headline;
  // Not the old claims: no single range over all rates, no IOPS.
  EXPECT_EQ(c.headline.find("paced at"), std::string::npos) << c.headline;
  EXPECT_EQ(c.headline.find("Yes"), std::string::npos) << c.headline;

  // A variant whose interval lies below 1 gets its direction and size; the
  // one that covers 1 is said to, without a direction.
  c.variants.push_back(paced("read-769", 769, {{3.0, 6.0}, {3.3, 6.1}, {2.9, 5.9}, {3.1, 6.0}, {3.2, 6.2}}));
  c.variants.push_back(paced("read-271", 271, {{1.0, 2.0}}));
  summarize(c);
  EXPECT_EQ(c.headline.rfind("No: %util reads below the exact busy time for 'read-769' (0.51x, 95% CI 0.49-0.54x); "
                             "%util / busy% has a 95% interval covering 1.0 for 'sync-write-2m' (0.99x, 95% CI 0.94-1.04x); "
                             "one repetition gives no interval for 'read-271' (0.50x): run with --repeat 2 or more.", 0), 0u)
      << c.headline;
  // The IOPS, which pacing fixes, play no part: the same %util and busy% at
  // other IOPS give the same sentence.
  const std::string before = c.headline;
  for (auto& v : c.variants)
    for (auto& r : v.runs) r.iops *= 3;
  summarize(c);
  EXPECT_EQ(c.headline, before);

  // Nothing measured busy%: said, with what it needs.
  for (auto& v : c.variants)
    for (auto& r : v.runs) r.busy_pct.reset();
  summarize(c);
  EXPECT_EQ(c.headline.rfind("Not answered here: busy%", 0), 0u) << c.headline;
}

// ---- sqpoll: rows named for what they are ----

using test::variant;

TEST(PresetSqpoll, TheAccountingRowIsIoacctsOwnAndTheKernelsStatisticsAreSaidUnmeasured) {
  const Preset* p = find_preset("sqpoll");
  ASSERT_NE(p, nullptr);
  std::vector<std::string> names;
  for (const auto& [name, words] : p->configs) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"qd1", "qd1-sqpoll", "qd32", "qd32-sqpoll", "qd32-ioacct-acct-off"}));
  EXPECT_EQ(p->configs.back().second, (std::vector<std::string>{"--iodepth", "32", "--acct", "off"}));
  EXPECT_NE(p->explanation.find("what ioacct's own accounting costs"), std::string::npos) << p->explanation;
  EXPECT_NE(p->explanation.find("The kernel's\nown SQ thread statistics (SqTotalTime, SqWorkTime) have no switch through Linux 6.18"),
            std::string::npos) << p->explanation;
  EXPECT_NE(p->explanation.find("perf record -t on iou-sqp-PID"), std::string::npos) << p->explanation;
  EXPECT_EQ(p->explanation.find("spent submitting"), std::string::npos) << "SqWorkTime is not all submission work";

  CompareResult c;
  c.preset = "sqpoll";
  c.variants = {variant("qd1", {9000, 9100, 8900, 9050, 8950}), variant("qd1-sqpoll", {8100, 8200, 8000, 8150, 8050}),
                variant("qd32", {40000, 40500, 39500, 40200, 39800}), variant("qd32-sqpoll", {40100, 40400, 39600, 40300, 39700}),
                variant("qd32-ioacct-acct-off", {41000, 41500, 40500, 41200, 40800})};
  auto cpu = [&](size_t i, double ns) {
    for (auto& r : c.variants[i].runs) r.cpu_per_io_ns = ns;
  };
  cpu(0, 47000), cpu(1, 134000), cpu(2, 5000), cpu(3, 25000);
  c.variants[2].options = std::make_shared<const nlohmann::json>(nlohmann::json{{"acct", "full"}});
  summarize(c);
  EXPECT_EQ(c.headline.rfind("On this machine, SQPOLL at depth 1 (2.85x the CPU per I/O) completes 0.90x the I/Os of a ring "
                             "without it (95% CI 0.", 0), 0u) << c.headline;
  EXPECT_NE(c.headline.find("; at depth 32 SQPOLL (5.00x the CPU per I/O) completes as many I/Os as a ring without it (1.00x, "
                            "95% CI "), std::string::npos) << c.headline;
  // 0.96-0.99x is inside the 5% margin, but wholly below 1: a cost, with its
  // interval, and whose accounting it is. The level is qd32's, from its options.
  EXPECT_NE(c.headline.find("; at depth 32, ioacct's own accounting (--acct full) costs 2.4% of the IOPS (95% CI 0.7-4.1%); "
                            "the kernel's own SQ thread statistics have no switch through Linux 6.18, so no row measures "
                            "their cost."), std::string::npos) << c.headline;
  EXPECT_EQ(c.headline.find("at depth 32, --acct full costs"), std::string::npos) << "the old, ambiguous row";
  EXPECT_EQ(c.headline.back(), '.');
  c.variants[2].options.reset();
  summarize(c);
  EXPECT_NE(c.headline.find("; at depth 32, ioacct's own accounting costs 2.4% of the IOPS"), std::string::npos) << c.headline;
}

// ---- qd1: iowait against --no-iowait, and whether this machine lets it matter ----

TEST(PresetQd1, CpuPowerReadsThePolicyAndTheIdleDriverFromSysfs) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / fmt::format("ioacct-cpu-power-{}", getpid());
  fs::remove_all(dir);
  fs::create_directories(dir / "cpufreq");
  fs::create_directories(dir / "cpuidle");
  auto write = [&](const std::string& driver) { std::ofstream(dir / "cpuidle" / "current_driver") << driver << "\n"; };
  write("none");  // as this VM: the folders exist, empty of drivers
  CpuPower p = read_cpu_power(dir.string());
  EXPECT_FALSE(p.cpufreq);
  EXPECT_FALSE(p.cpuidle);
  fs::create_directories(dir / "cpufreq" / "policy0");
  write("intel_idle");
  p = read_cpu_power(dir.string());
  EXPECT_TRUE(p.cpufreq);
  EXPECT_TRUE(p.cpuidle);
  fs::remove_all(dir);
  p = read_cpu_power(dir.string());  // no such folder: no driver
  EXPECT_FALSE(p.cpufreq || p.cpuidle);
}

TEST(PresetQd1, HeadlineGivesIowaitAgainstNoIowaitAndNamesMissingDrivers) {
  const Preset* p = find_preset("qd1");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->configs.back(), (std::pair<std::string, std::vector<std::string>>{
                                   "uring-no-iowait", {"--engine", "uring", "--wait", "sleep", "--no-iowait"}}));
  EXPECT_EQ(p->explanation.find("deeper idle states"), std::string::npos) << "the old claim, true only with cpuidle";

  CompareResult c;
  c.preset = "qd1";
  c.variants = {variant("psync", {5140, 5200, 5100, 5150, 5180}), variant("uring-sleep", {3590, 3600, 3580, 3620, 3570}),
                variant("uring-no-iowait", {3600, 3590, 3585, 3610, 3575})};
  summarize(c);
  // Not read (a saved run): no word about the drivers.
  const std::string plain = "; sleeping without iowait (--no-iowait) completes as many I/Os as sleeping with it (1.00x, 95% CI ";
  EXPECT_NE(c.headline.find(plain), std::string::npos) << c.headline;
  EXPECT_EQ(c.headline.find("cpufreq"), std::string::npos) << c.headline;
  // This VM: neither driver, so no difference is what can appear.
  c.cpu_power = CpuPower{};
  summarize(c);
  EXPECT_NE(c.headline.find("; this machine has no cpufreq or cpuidle driver in sysfs, the paths by which iowait changes "
                            "a CPU's speed, so no difference is expected here."), std::string::npos) << c.headline;
  // A difference all the same: it is said to come from elsewhere.
  for (auto& r : c.variants[2].runs) r.iops *= 1.3;
  summarize(c);
  EXPECT_NE(c.headline.find("; sleeping without iowait (--no-iowait) completes 1.30x the I/Os of sleeping with it (95% CI "),
            std::string::npos) << c.headline;
  EXPECT_NE(c.headline.find(", although this machine has no cpufreq or cpuidle driver in sysfs, the paths by which iowait "
                            "changes a CPU's speed: the difference comes from elsewhere."), std::string::npos) << c.headline;
  // A machine with a cpufreq policy: the effect can appear, nothing to add.
  c.cpu_power = CpuPower{.cpufreq = true, .cpuidle = false};
  summarize(c);
  EXPECT_EQ(c.headline.find("cpufreq"), std::string::npos) << c.headline;
}

// ---- --anatomy: a stage named only beyond the run-to-run spread ----

StageTimes times(std::initializer_list<std::pair<AnatomyStage, double>> stages) {
  StageTimes t{};
  for (const auto& [s, ns] : stages) t[static_cast<int>(s)] = ns;
  return t;
}

TEST(AnatomyStageDiff, NamesAStageOnlyWhenItsIntervalExcludesZero) {
  EXPECT_EQ(repetitions_for_interval(0.95), 4u);  // 4 against 4: 97.1%; 3 against 3 at most 90%
  using S = AnatomyStage;
  // The device stage differs most between the medians (-80 µs) but moves as
  // much between repetitions; submit differs by 1 µs in every repetition.
  std::vector<StageTimes> x, y;
  const double xd[] = {100e3, 300e3, 50e3, 250e3, 120e3}, yd[] = {200e3, 60e3, 280e3, 90e3, 210e3};
  for (int i = 0; i < 5; ++i) {
    x.push_back(times({{S::Submit, 11e3 + 50 * i}, {S::Device, xd[i]}}));
    y.push_back(times({{S::Submit, 10e3 + 50 * i}, {S::Device, yd[i]}}));
  }
  auto d = stage_that_differs(x, y, 0.95);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->stage, S::Submit);
  EXPECT_TRUE(d->stands_out);
  EXPECT_NEAR(d->by_ns, 1000, 1e-9);  // medians 11.1 µs against 10.1 µs
  // 5 against 5: the 3rd smallest and largest of the pairwise differences
  // 1000 + 50 (i - j), each there 5 - |i - j| times.
  ASSERT_TRUE(d->low_ns && d->high_ns);
  EXPECT_DOUBLE_EQ(*d->low_ns, 850);
  EXPECT_DOUBLE_EQ(*d->high_ns, 1150);
  const VerdictRule rule;
  EXPECT_EQ(stage_diff_text(*d, AnatomyFlavor::Uring, rule),
            "the stage that differs most beyond the run-to-run spread is submit (+1.00 µs per I/O, 95% CI +850 ns to "
            "+1.15 µs)");

  // Without the steady stage, none stands out: the largest is kept for the
  // JSON, and the sentence names none.
  for (auto* side : {&x, &y})
    for (auto& t : *side) t[static_cast<int>(S::Submit)].reset();
  d = stage_that_differs(x, y, 0.95);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->stage, S::Device);
  EXPECT_FALSE(d->stands_out);
  EXPECT_NEAR(d->by_ns, 120e3 - 200e3, 1e-6);
  EXPECT_EQ(stage_diff_text(*d, AnatomyFlavor::Uring, rule),
            "no stage stands out: every stage's difference lies within its run-to-run spread (its 95% interval includes 0)");

  // One repetition a side: no interval at all, and the sentence says what would give one.
  d = stage_that_differs({x[0]}, {y[0]}, 0.95);
  ASSERT_TRUE(d);
  EXPECT_FALSE(d->low_ns);
  EXPECT_FALSE(d->stands_out);
  EXPECT_EQ(stage_diff_text(*d, AnatomyFlavor::Syscall, rule),
            "no stage stands out: 1 repetition against 1 cannot tell a stage's difference from its run-to-run spread "
            "(that takes at least 4 repetitions a side)");

  // A stage only one side has counts as 0 on the other (psync has no reaping work of io_uring's kind).
  std::vector<StageTimes> a(4, times({{S::Reaping, 500}})), b(4, times({}));
  d = stage_that_differs(a, b, 0.95);
  ASSERT_TRUE(d);
  EXPECT_EQ(d->stage, S::Reaping);
  EXPECT_DOUBLE_EQ(d->by_ns, 500);
  EXPECT_TRUE(d->stands_out);
  EXPECT_FALSE(stage_that_differs(b, b, 0.95)) << "no stage measured on either side";
}

}  // namespace
}  // namespace ioacct::preset_test
