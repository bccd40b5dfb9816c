// `ioacct top`'s frame: what fits, in what order, and what the keys change.
#include <gtest/gtest.h>

#include "report/top_report.hpp"

namespace ioacct {
namespace {

StatRow device(const std::string& name, std::vector<WhoRow> who) {
  StatRow r;
  r.device.name = name;
  r.io.r_s = 100;
  r.window_ns = 1'000'000'000;
  r.busy_ns = 500'000'000;
  r.busy_pct = 50;
  r.who = std::move(who);
  return r;
}

WhoRow who(const std::string& cgroup, uint64_t share_ns, uint64_t reads, uint64_t bytes) {
  WhoRow w;
  w.cgroup = cgroup;
  w.busy_share_ns = share_ns;
  w.busy_share_pct = static_cast<double>(share_ns) / 1e7;
  w.reads = reads;
  w.read_bytes = bytes;
  return w;
}

StatReport report() {
  StatReport r;
  r.who_by = BusyBy::Cgroup;
  r.rows.push_back(device("loop0", {who("/a", 300'000'000, 10, 10 << 20), who("/b", 200'000'000, 500, 2 << 20)}));
  r.rows.push_back(device("vda", {who("/c", 100'000'000, 50, 1 << 20)}));
  return r;
}

size_t at(const std::vector<std::string>& lines, const std::string& text) {
  for (size_t i = 0; i < lines.size(); ++i)
    if (lines[i].find(text) != std::string::npos) return i;
  return lines.size();
}

TEST(TopFrame, FitsTheScreenWithTheHelpLineLast) {
  TopView v;
  v.width = 40;
  v.height = 12;
  const auto lines = format_top_frame(report(), {}, v);
  EXPECT_EQ(lines.size(), 12u);
  for (const auto& l : lines) EXPECT_LE(l.size(), 40u) << l;
  EXPECT_EQ(lines.back(), std::string(kTopHelp).substr(0, 40));
}

TEST(TopFrame, TheSortKeyOrdersTheCgroups) {
  TopView v;
  auto lines = format_top_frame(report(), {}, v);
  EXPECT_LT(at(lines, "/a"), at(lines, "/b"));
  EXPECT_LT(at(lines, "/b"), at(lines, "/c"));
  v.sort = next_sort(v.sort);
  EXPECT_STREQ(top_sort_name(v.sort), "io/s");
  lines = format_top_frame(report(), {}, v);
  EXPECT_LT(at(lines, "/b"), at(lines, "/c"));
  EXPECT_LT(at(lines, "/c"), at(lines, "/a"));
  v.sort = next_sort(v.sort);
  EXPECT_STREQ(top_sort_name(v.sort), "MB/s");
  lines = format_top_frame(report(), {}, v);
  EXPECT_LT(at(lines, "/a"), at(lines, "/b"));
  EXPECT_EQ(next_sort(v.sort), TopView::Sort::Share);
}

TEST(TopFrame, ADeviceFilterLeavesTheOthersOut) {
  TopView v;
  v.device = "vda";
  const auto lines = format_top_frame(report(), {}, v);
  EXPECT_NE(at(lines, "device vda"), lines.size());
  EXPECT_EQ(at(lines, "/a"), lines.size());
  EXPECT_EQ(at(lines, "loop0"), lines.size());
  EXPECT_NE(at(lines, "/c"), lines.size());
}

TEST(TopFrame, WithoutTheTrackerItSaysWhy) {
  TopView v;
  v.no_exact = "no permission";
  v.paused = true;
  const auto lines = format_top_frame(report(), {}, v);
  EXPECT_NE(at(lines, "no exact figures: no permission"), lines.size());
  EXPECT_NE(at(lines, "[paused]"), lines.size());
}

}  // namespace
}  // namespace ioacct
