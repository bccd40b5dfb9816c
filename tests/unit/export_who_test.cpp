// export --per-cgroup's series: the top K by busy time plus other, counters
// that never go down while the top K changes, adding up to the device's.
#include <gtest/gtest.h>

#include "monitor/export_who.hpp"

namespace ioacct {
namespace {

BusyWho who(uint64_t cgroup, uint64_t share, uint64_t reads) {
  BusyWho w;
  w.cgroup = cgroup;
  w.share_ns = share;
  w.ios[BusyWho::kRead] = reads;
  return w;
}

BusyCounters device(std::vector<BusyWho> w) {
  BusyCounters c;
  c.who = std::move(w);
  return c;
}

WhoNames names() {
  WhoNames n;
  for (uint64_t id = 1; id <= 5; ++id) n.cgroups[id] = "/c" + std::to_string(id);
  return n;
}

uint64_t total_share(const WhoTotals& t, size_t d) {
  uint64_t s = 0;
  for (const std::string& label : t.shown[d]) s += t.series[d].at(label).share_ns;
  return s;
}

TEST(ExportWho, TheTopKAndOtherHoldEverything) {
  WhoTotals t;
  accumulate_who(t, {device({who(1, 10, 1), who(2, 50, 1), who(3, 30, 1), who(4, 5, 1)})}, 2, names());
  ASSERT_EQ(t.shown.size(), 1u);
  EXPECT_EQ(t.shown[0], (std::vector<std::string>{"/c2", "/c3", "other"}));
  EXPECT_EQ(t.series[0].at("other").share_ns, 15u);
  EXPECT_EQ(t.series[0].at("other").ios[BusyWho::kRead], 2u);
  EXPECT_EQ(total_share(t, 0), 95u);
}

TEST(ExportWho, NoCounterGoesDownWhenTheTopKChanges) {
  WhoTotals t;
  accumulate_who(t, {device({who(1, 100, 1), who(2, 10, 1)})}, 1, names());
  EXPECT_EQ(t.shown[0], (std::vector<std::string>{"/c1", "other"}));
  const uint64_t other_before = t.series[0].at("other").share_ns;
  // /c2 overtakes /c1: its series starts with what it did since; /c1's
  // last value stays (not shown), other only grows.
  accumulate_who(t, {device({who(1, 110, 2), who(2, 500, 9)})}, 1, names());
  EXPECT_EQ(t.shown[0], (std::vector<std::string>{"/c2", "other"}));
  EXPECT_EQ(t.series[0].at("/c2").share_ns, 490u);
  EXPECT_EQ(t.series[0].at("/c1").share_ns, 100u);
  EXPECT_GE(t.series[0].at("other").share_ns, other_before);
  EXPECT_EQ(t.series[0].at("other").share_ns, 20u);  // /c2's first 10, then /c1's 10 since
  // Everything the tracker counted is in some series, shown or not.
  uint64_t all = 0;
  for (const auto& [label, s] : t.series[0]) all += s.share_ns;
  EXPECT_EQ(all, 610u);
}

TEST(ExportWho, AtMostKPlusOneSeriesHoweverManyCgroups) {
  std::vector<BusyWho> many;
  for (uint64_t id = 1; id <= 300; ++id) many.push_back(who(id, id, 1));
  WhoTotals t;
  accumulate_who(t, {device(many)}, 20, {});
  EXPECT_EQ(t.shown[0].size(), 21u);
  EXPECT_EQ(t.shown[0].front(), "(removed cgroup 300)") << "no path known: named by its id";
  EXPECT_EQ(total_share(t, 0), 300u * 301 / 2);
}

}  // namespace
}  // namespace ioacct
