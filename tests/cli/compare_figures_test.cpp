// `ioacct compare` on saved runs with planted IOPS (no timing involved): the
// table says which figure is which, a row whose pairwise ratio and medians
// point different ways says why, in console, JSON and HTML alike, and the
// advice for more repetitions stays bounded by an outlier and tells files
// to add files.
#include <gtest/gtest.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

// A bench document that holds only what compare reads, with `iops` planted.
json planted_bench(double iops) {
  return {{"context",
           {{"ioacct_version", "0.1.0"}, {"schema_version", 2}, {"kernel", "Linux 6.18"}, {"host", "vm"},
            {"options", {{"rw", "randread"}, {"bs", 4096}, {"direct", true}, {"engine", "uring"}, {"iodepth", 1},
                         {"threads", 1}, {"rate_iops_per_thread", nullptr}, {"log_interval_s", 1.0}}}}},
          {"results", {{"iops", iops}, {"ios", 1000}, {"bytes_per_s", iops * 4096}}}};
}

// NAME=F1.json,F2.json,...: one saved bench run per value.
std::string planted_variant(const TempDir& dir, const std::string& name, const std::vector<double>& iops) {
  std::string word = name + "=";
  for (size_t i = 0; i < iops.size(); ++i) {
    const std::string f = dir.path() + "/" + name + std::to_string(i + 1) + ".json";
    std::ofstream(f) << planted_bench(iops[i]).dump();
    word += (i ? "," : "") + f;
  }
  return word;
}

std::string line_starting(const std::string& out, const std::string& start) {
  const size_t a = out.find("\n" + start);
  return a == std::string::npos ? "" : out.substr(a + 1, out.find('\n', a + 1) - a - 1);
}

TEST(CompareFigures, AReversalIsMarkedAndExplainedInEveryFormat) {
  TempDir dir;
  // 'rev' has the higher median IOPS (102 against 101), yet 16 of its 25
  // pairs with 'base' are lower: the median of pairwise ratios is 0.80x.
  const std::string base = planted_variant(dir, "base", {99, 100, 101, 130, 131});
  const std::string rev = planted_variant(dir, "rev", {80, 81, 102, 103, 104});
  const std::string report = dir.path() + "/r.html";
  auto o = run_ioacct({"compare", base, rev, "--report", report});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const std::string head = line_starting(o.out, "variant ");
  EXPECT_NE(head.find(" median IOPS "), std::string::npos) << o.out;
  EXPECT_NE(head.find(" pairwise ratio "), std::string::npos) << o.out;
  EXPECT_EQ(head.find("  ratio"), std::string::npos) << "a bare 'ratio' says not which: " << head;
  const std::string row = line_starting(o.out, "rev ");
  EXPECT_NE(row.find("0.80x†"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\n'rev'†: its median IOPS is above 'base''s (102 against 101: 1.01x), but it ran slower than 'base' "
                       "in 16 of the 25 pairs of repetitions, so the median of pairwise ratios, which the verdict goes by, "
                       "is 0.80x"),
            std::string::npos)
      << o.out;
  // Files take no --repeat: the advice says how to add files.
  EXPECT_EQ(o.out.find("--repeat"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find(" saved runs of each variant, as NAME=RUN1.json,...,RUN"), std::string::npos) << o.out;
  EXPECT_NE(row.find(" runs)"), std::string::npos) << row;

  // The HTML report carries the same table and notes, and the same label in its data.
  const std::string html = slurp(report);
  EXPECT_NE(html.find("<th>pairwise ratio</th>"), std::string::npos);
  EXPECT_NE(html.find("0.80x†"), std::string::npos);
  EXPECT_NE(html.find("\"ratio\":\"median of pairwise ratios\""), std::string::npos);

  o = run_ioacct({"compare", base, rev, "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json d = stdout_json(o);
  EXPECT_EQ(d["context"]["verdict_rule"]["ratio"], "median of pairwise ratios");
  const json& r = d["variants"][1];
  EXPECT_LT(r["ratio"].get<double>(), 1);
  EXPECT_GT(r["ratio_of_medians"].get<double>(), 1);
  ASSERT_TRUE(r["reversal"].is_object()) << r;
  EXPECT_EQ(r["reversal"]["below"], 16);
  EXPECT_EQ(r["reversal"]["above"], 9);
  EXPECT_NE(r["verdict_text"].get<std::string>().find("; the ratio of the medians is 1.01x, but it ran slower in 16 of the 25 "
                                                      "pairs of repetitions)"),
            std::string::npos)
      << r["verdict_text"];
  EXPECT_NE(d["headline"].get<std::string>().find("the ratio of the medians is 1.01x"), std::string::npos) << d["headline"];
}

TEST(CompareFigures, AnOutlierDoesNotInflateTheAdvice) {
  TempDir dir;
  // One repetition at 30 among ~104: the old pooled spread asked for 816
  // repetitions ("1000 or more" with a wilder one); the rest say 6.
  const std::string base = planted_variant(dir, "base", {100, 101, 99, 100, 100.5});
  const std::string odd = planted_variant(dir, "odd", {104, 105, 104.5, 30, 104.8});
  auto o = run_ioacct({"compare", base, odd, "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json v = stdout_json(o)["variants"][1];
  EXPECT_EQ(v["verdict"], "not resolved");
  EXPECT_EQ(v["repeat_needed"], 6);
  EXPECT_EQ(v["repeat_out_of_reach"], false);
  EXPECT_TRUE(v["reversal"].is_null()) << "ratio and medians agree";
  EXPECT_EQ(v["verdict_text"], "not resolved at this noise (1.04x, 95% CI 0.30-1.06x): give 6 saved runs of each variant, as "
                               "NAME=RUN1.json,...,RUN6.json");
  o = run_ioacct({"compare", base, odd});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(line_starting(o.out, "odd ").find("not resolved (6 runs)*"), std::string::npos) << o.out;
  EXPECT_EQ(o.out.find("1000"), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("The table keeps every repetition (the interval is robust to one outlier among many, not among few): "
                       "add saved runs of each variant\n"),
            std::string::npos)
      << o.out;
}

}  // namespace
}  // namespace ioacct::test
