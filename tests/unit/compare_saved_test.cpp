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

// Found by a hostile pass: 1e400 was an internal error, a negative rate
// printed as "-1--1", 1e308 as 300 digits, ios of 2^64+5 or -5 and a zero
// window were taken, bytes after a NUL were ignored, and a schema_version of
// "2" or 2.5 read as 0. Each is a usage error naming the field.
TEST(Saved, ImpossibleFiguresAreUsageErrorsNamingTheField) {
  const std::string text = bench_doc("Linux 6.18", "uring", 100).dump();
  auto with = [&](const std::string& from, const std::string& to) {
    std::string t = text;
    const size_t at = t.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? t : t.replace(at, from.size(), to);
  };
  const std::pair<std::string, std::string> cases[] = {
      {with("\"iops\":100.0", "\"iops\":-1e400"), "x.json: not valid JSON: number overflow"},
      {with("\"iops\":100.0", "\"iops\":1e5000"), "x.json: not valid JSON: number overflow"},
      {with("\"iops\":100.0", "\"iops\":-1"),
       "x.json: results.iops is -1, not a figure a run can have (0 to 1e+12); the file is damaged"},
      {with("\"iops\":100.0", "\"iops\":1e308"),
       "x.json: results.iops is 1e+308, not a figure a run can have (0 to 1e+12); the file is damaged"},
      {with("\"ios\":1000", "\"ios\":18446744073709551621"),
       "x.json: results.ios is 1.8446744073709552e+19, not a count (a whole number from 0 to 2^64-1); the file is damaged"},
      {with("\"ios\":1000", "\"ios\":-5"),
       "x.json: results.ios is -5, not a count (a whole number from 0 to 2^64-1); the file is damaged"},
      {with("\"ios\":1000", "\"ios\":1000,\"window_s\":0"),
       "x.json: results.window_s is 0, not a run's length (more than 0 s); the file is damaged"},
      {with("\"p99\":150000", "\"p99\":-3"),
       "x.json: results.latency_ns.p99 is -3, not a figure a run can have (0 to 1e+15); the file is damaged"},
      {with("\"schema_version\":2", "\"schema_version\":\"2\""),
       "x.json: context.schema_version is \"2\", not a schema version (a whole number); the file is damaged"},
      {with("\"schema_version\":2", "\"schema_version\":2.5"),
       "x.json: context.schema_version is 2.5, not a schema version (a whole number); the file is damaged"},
      {with("\"schema_version\":2", "\"schema_version\":1180591620717411303424"),
       "x.json: context.schema_version is 1.1805916207174113e+21, not a schema version (a whole number); the file is "
       "damaged"},
      {text + std::string(1, '\0') + "{\"more\": 1}", "x.json: not valid JSON: a NUL byte at offset " +
                                                            std::to_string(text.size())},
  };
  for (const auto& [doc_text, says] : cases) {
    const std::string got = usage_error([&] { parse_saved("x.json", doc_text); });
    EXPECT_EQ(got.substr(0, says.size()), says) << got;
  }
  // A compare document's runs are checked the same way, by index.
  json c = {{"context", {{"ioacct_version", "0.1.0"}, {"schema_version", 2}}},
            {"variants", json::array({{{"name", "a"}, {"runs", json::array({{{"iops", 5}}, {{"iops", -5}}})}}})}};
  EXPECT_EQ(usage_error([&] { doc("c.json", c); }),
            "c.json: variants[0].runs[1].iops is -5, not a figure a run can have (0 to 1e+12); the file is damaged");
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
