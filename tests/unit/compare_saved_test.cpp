// Saved-run compare's pure core: which words are saved runs, reading bench
// and compare JSON back (and refusing what is malformed or foreign, in one
// line naming the file), and the context warnings between files.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "common/errors.hpp"
#include "compare/saved.hpp"

namespace ioacct {
namespace {

using nlohmann::json;

std::string usage_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UsageError& e) {
    return e.what();
  }
  return "(no error)";
}

json bench_doc(const std::string& kernel, const std::string& engine, double iops) {
  return {{"context",
           {{"ioacct_version", "0.1.0"}, {"schema_version", 2}, {"kernel", kernel}, {"host", "vm"},
            {"options", {{"rw", "randread"}, {"bs", 4096}, {"direct", true}, {"engine", engine}, {"iodepth", 1},
                         {"threads", 1}, {"rate_iops_per_thread", nullptr}, {"log_interval_s", 1.0}}},
            {"targets", json::array({{{"path", "/dev/vdb"}, {"device", "vdb"},
                                      {"device_identity", {{"disk", "vdb"}, {"model", "virtio_blk"}, {"firmware", nullptr}}}}})}}},
          {"results",
           {{"iops", iops}, {"ios", 1000}, {"bytes_per_s", iops * 4096},
            {"cpu", {{"breakdown", {{"total_s", 0.02}, {"submitters_s", 0.015}, {"sq_threads_s", 0.0}, {"iowq_s", 0.0}, {"other_s", 0.005}}}}},
            {"latency_ns", {{"p50", 80000}, {"p99", 150000}}},
            {"sq_threads", json::array()},
            {"devices", json::array({{{"device", "vdb"}, {"role", "target"}, {"util_pct", 40.0}, {"busy_pct", 55.5}}})},
            {"latency_histogram_ns", json::array({json::array({80000, 80511, 700}), json::array({150000, 151023, 300})})}}}};
}

SavedDoc doc(const std::string& path, const json& j) { return parse_saved(path, j.dump()); }

TEST(Saved, WhichWordsAreSavedRuns) {
  EXPECT_TRUE(are_saved_words({"a.json", "dir/b.json"}));
  EXPECT_TRUE(are_saved_words({"before=a1.json,a2.json", "after=b.json"}));
  EXPECT_FALSE(are_saved_words({}));
  EXPECT_FALSE(are_saved_words({"--iodepth", "1"}));
  EXPECT_FALSE(are_saved_words({"a.json", "/dev/vdb"}));  // a target among them: a bench matrix
  EXPECT_FALSE(are_saved_words({"x=a.json,/dev/vdb"}));
  const auto w = parse_saved_words({"before=a1.json,a2.json", "c.json"});
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].name, "before");
  EXPECT_EQ(w[0].files, (std::vector<std::string>{"a1.json", "a2.json"}));
  EXPECT_EQ(w[1].name, "");
  EXPECT_EQ(usage_error([] { parse_saved_words({"x=a.json", "x=b.json"}); }), "x=b.json: the name 'x' is given twice");
  EXPECT_EQ(usage_error([] { parse_saved_words({"=a.json"}); }), "=a.json: the variant has no name before '='");
}

TEST(Saved, MalformedAndForeignDocumentsAreOneLineNamingTheFile) {
  EXPECT_EQ(usage_error([] { parse_saved("a.json", "{\"context\": "); }).rfind("a.json: not valid JSON: parse error at line 1, column 13", 0), 0u)
      << usage_error([] { parse_saved("a.json", "{\"context\": "); });
  EXPECT_EQ(usage_error([] { parse_saved("f.json", R"({"name": "fio", "jobs": []})"); }),
            "f.json: not an ioacct bench or compare JSON document (it has no context.ioacct_version); give files written by "
            "'ioacct bench --format json' or 'ioacct compare --format json'");
  EXPECT_EQ(usage_error([] { parse_saved("p.json", R"({"context": {"ioacct_version": "0.1.0", "schema_version": 1}})"); }),
            "p.json: an ioacct document, but neither a bench nor a compare one (give 'ioacct bench' or 'ioacct compare' JSON)");
  json newer = bench_doc("Linux 6.18", "uring", 100);
  newer["context"]["schema_version"] = 9;
  EXPECT_EQ(usage_error([&] { doc("n.json", newer); }),
            "n.json: bench schema_version 9 is not one this ioacct reads (1 to 2); compare it with the ioacct that wrote it");
  json empty = bench_doc("Linux 6.18", "uring", 100);
  empty["results"] = nullptr;
  EXPECT_EQ(usage_error([&] { doc("e.json", empty); }), "e.json: holds no results (the run was interrupted before it started)");
  for (const char* text : {"", "[]", "42", "null", "{\"context\": []}"})
    EXPECT_NE(usage_error([&] { parse_saved("x.json", text); }).rfind("x.json: ", 0), std::string::npos) << text;
}

TEST(Saved, ABenchDocumentIsOneRepetition) {
  // Through text, as from a file.
  const RunMetrics m = metrics_of_bench(doc("r.json", bench_doc("Linux 6.18", "uring", 12345)).doc());
  EXPECT_EQ(m.iops, 12345);
  EXPECT_EQ(m.ios, 1000u);
  EXPECT_DOUBLE_EQ(*m.cpu_per_io_ns, 0.02 * 1e9 / 1000);
  EXPECT_DOUBLE_EQ(*m.cpu_other_ns, 0.005 * 1e9 / 1000);
  EXPECT_EQ(*m.p99_ns, 150000);
  EXPECT_EQ(*m.busy_pct, 55.5);
  EXPECT_EQ(*m.util_pct, 40.0);
  EXPECT_FALSE(m.sq_work);  // no SQ thread: not measured, not 0
  ASSERT_TRUE(m.latency);
  EXPECT_EQ(m.latency->count(), 1000u);
  EXPECT_NEAR(static_cast<double>(m.latency->quantile(0.5)), 80000, 800);  // the bucket holding 80 µs, within 1%
}

TEST(Saved, GroupsFilesAndComparesThemWithWarningsForTheirDifferences) {
  const auto words = parse_saved_words({"old=a1.json,a2.json,a3.json,a4.json", "new=b1.json,b2.json,b3.json,b4.json"});
  std::vector<std::vector<SavedDoc>> docs(2);
  for (int i = 0; i < 4; ++i) {
    docs[0].push_back(doc(fmt::format("a{}.json", i + 1), bench_doc("Linux 6.1", "psync", 1000 + i)));
    docs[1].push_back(doc(fmt::format("b{}.json", i + 1), bench_doc("Linux 6.18", "uring", 2000 + i)));
  }
  SavedCompare s = saved_compare(words, docs);
  ASSERT_EQ(s.result.variants.size(), 2u);
  EXPECT_EQ(s.result.variants[1].name, "new");
  EXPECT_EQ(s.result.variants[1].runs.size(), 4u);
  EXPECT_EQ(s.result.variants[1].sources.size(), 4u);
  EXPECT_EQ(s.result.variants[0].description, "randread 4 KiB O_DIRECT, psync, depth 1");
  summarize(s.result);
  EXPECT_EQ(s.result.variants[1].verdict.kind, VerdictKind::Faster);
  ASSERT_EQ(s.warnings.size(), 2u) << ::testing::PrintToString(s.warnings);
  EXPECT_EQ(s.warnings[0].rfind("warning: the files ran on different kernels: 'Linux 6.1' in a1.json, a2.json, a3.json, a4.json; "
                                "'Linux 6.18' in b1.json", 0), 0u) << s.warnings[0];
  EXPECT_NE(s.warnings[1].find("warning: the files ran with different options: engine (\"psync\" in a1.json"), std::string::npos)
      << s.warnings[1];
  // Alike: no warning.
  std::vector<SavedDoc> same = {doc("x.json", bench_doc("Linux 6.18", "uring", 1)), doc("y.json", bench_doc("Linux 6.18", "uring", 2))};
  EXPECT_TRUE(context_warnings(same).empty());
}

TEST(Saved, ACompareDocumentKeepsItsVariantsAndQuestion) {
  json c = {{"context", {{"ioacct_version", "0.1.0"}, {"schema_version", 2}, {"preset", "qd1"},
                         {"question", "Is io_uring slower than pread at depth 1?"}, {"kernel", "Linux 6.18"}}},
            {"variants", json::array()}};
  for (const char* name : {"psync", "uring-sleep"}) {
    json runs = json::array();
    for (int i = 0; i < 4; ++i) runs.push_back({{"iops", (name[0] == 'p' ? 5000 : 3500) + i}, {"ios", 100}, {"p50_ns", 1000}});
    c["variants"].push_back({{"name", name}, {"baseline", name[0] == 'p'}, {"runs", runs}, {"description", "d"},
                             {"latency_histogram_ns", json::array({json::array({1000, 1007, 400})})}});
  }
  const auto words = parse_saved_words({"qd1.json"});
  SavedCompare s = saved_compare(words, {{doc("qd1.json", c)}});
  EXPECT_EQ(s.result.preset, "qd1");
  ASSERT_EQ(s.result.variants.size(), 2u);
  EXPECT_EQ(s.result.variants[1].name, "uring-sleep");
  summarize(s.result);
  EXPECT_EQ(s.result.variants[0].latency->count(), 400u) << "the saved histogram, not the runs' (none)";
  EXPECT_EQ(s.result.headline.rfind("On this machine, at depth 1, io_uring (sleep) completes 0.70x the I/Os of pread", 0), 0u)
      << s.result.headline;
  // Beside another file its variants are prefixed with the file's name; a
  // compare document cannot be a repetition in a NAME= list.
  s = saved_compare(parse_saved_words({"qd1.json", "b.json"}), {{doc("qd1.json", c)}, {doc("b.json", bench_doc("Linux 6.18", "uring", 1))}});
  EXPECT_EQ(s.result.variants[0].name, "qd1/psync");
  EXPECT_EQ(s.result.variants[2].name, "b");
  EXPECT_EQ(usage_error([&] { saved_compare(parse_saved_words({"x=qd1.json"}), {{doc("qd1.json", c)}}); }),
            "x=qd1.json: qd1.json is a compare document; a NAME= list takes bench runs, one repetition each");
}

}  // namespace
}  // namespace ioacct
