// `ioacct compare A.json B.json` for real: bench runs saved with --format
// json (alone, or NAME=... lists of repetitions) and compare documents read
// back, compared with the same verdicts and report, with a warning for every
// context that differs; malformed or foreign files are one error line, exit 2.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

void spit(const std::string& path, const std::string& text) { std::ofstream(path) << text; }

size_t lines(const std::string& s) { return static_cast<size_t>(std::count(s.begin(), s.end(), '\n')); }

// A short bench run saved as JSON.
void save_bench(const TempDir& dir, const std::string& name, const std::vector<std::string>& opts) {
  std::vector<std::string> args = {"bench", "--runtime", "200ms", "--size", "16m", "--format", "json", "-o", dir.path() + "/" + name};
  args.insert(args.end(), opts.begin(), opts.end());
  auto o = run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
}

TEST(CompareSaved, TwoBenchRunsWithTheirDifferencesNamed) {
  TempDir dir;
  save_bench(dir, "a.json", {"--engine", "psync"});
  save_bench(dir, "b.json", {"--engine", "uring", "--iodepth", "1"});
  const std::string a = dir.path() + "/a.json", b = dir.path() + "/b.json";
  auto o = run_ioacct({"compare", a, b});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("ioacct compare: 2 variants from 2 saved files\n", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("\na  "), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\nb  "), std::string::npos) << o.out;
  // One run each: an estimate, and no interval, said so.
  EXPECT_NE(o.out.find("'b' against 'a' is not resolved: 1 repetition against 1 cannot give a 95% interval"), std::string::npos)
      << o.out;
  EXPECT_NE(o.err.find("warning: the files ran with different options: engine (\"psync\" in " + a + ", \"uring\" in " + b + ")"),
            std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("kernels"), std::string::npos) << "same kernel: no warning\n" << o.err;

  // Another kernel (as if saved there): said, with what to do about it.
  json j = json::parse(slurp(b));
  j["context"]["kernel"] = "Linux 9.9.9-elsewhere";
  j["context"]["ioacct_version"] = "0.0.9";
  const std::string b2 = dir.path() + "/b2.json";
  spit(b2, j.dump());
  o = run_ioacct({"compare", a, b2, "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_NE(o.err.find("warning: the files ran on different kernels: "), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("'Linux 9.9.9-elsewhere' in " + b2), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("read the ratios as kernel against kernel"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("warning: the files ran on different ioacct versions: '0.0.9' in " + b2), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("uring"), o.err.find("\"uring\" in " + b2) + 1) << "psync has no uring options: not a difference\n"
                                                                        << o.err;
  const json d = stdout_json(o);
  EXPECT_EQ(d["warnings"].size(), 3u) << d["warnings"];
  EXPECT_EQ(d["variants"][1]["sources"], json::array({b2}));
}

TEST(CompareSaved, RepetitionsFromFilesResolveAndMakeAReport) {
  TempDir dir;
  std::vector<std::string> slow, fast;
  for (int i = 1; i <= 4; ++i) {
    save_bench(dir, "slow" + std::to_string(i) + ".json", {"--engine", "psync"});
    save_bench(dir, "fast" + std::to_string(i) + ".json", {"--engine", "nop", "--iodepth", "128"});
    slow.push_back(dir.path() + "/slow" + std::to_string(i) + ".json");
    fast.push_back(dir.path() + "/fast" + std::to_string(i) + ".json");
  }
  auto list = [](const std::vector<std::string>& f) {
    std::string s;
    for (const auto& x : f) s += (s.empty() ? "" : ",") + x;
    return s;
  };
  const std::string report = dir.path() + "/saved.html";
  auto o = run_ioacct({"compare", "pread=" + list(slow), "nop=" + list(fast), "--format", "json", "--report", report});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json d = stdout_json(o);
  ASSERT_EQ(d["variants"].size(), 2u);
  EXPECT_EQ(d["variants"][1]["name"], "nop");
  EXPECT_EQ(d["variants"][1]["runs"].size(), 4u);
  EXPECT_EQ(d["variants"][1]["verdict"], "faster") << d["variants"][1]["verdict_text"];
  const std::string html = slurp(report);
  EXPECT_NE(html.find("<th>saved: nop</th>"), std::string::npos);
  EXPECT_NE(html.find("id=\"headline\">'nop' completes "), std::string::npos);
}

TEST(CompareSaved, ACompareDocumentReadsBackToTheSameVerdicts) {
  TempDir dir;
  const std::string saved = dir.path() + "/c.json";
  auto o = run_ioacct({"compare", "--config", "psync=--engine psync", "--config", "nop=--engine nop --iodepth 64", "--repeat",
                       "4", "--runtime", "150ms", "--size", "16m", "--format", "json", "-o", saved},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json live = json::parse(slurp(saved));
  o = run_ioacct({"compare", saved, "--format", "json"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.err, "") << "one file: nothing to warn about";
  const json back = stdout_json(o);
  ASSERT_EQ(back["variants"].size(), live["variants"].size());
  for (size_t i = 0; i < live["variants"].size(); ++i) {
    const json &l = live["variants"][i], &b = back["variants"][i];
    EXPECT_EQ(b["name"], l["name"]);
    EXPECT_EQ(b["verdict"], l["verdict"]);
    EXPECT_DOUBLE_EQ(b["ratio"].get<double>(), l["ratio"].get<double>());
    EXPECT_EQ(b["ratio_ci"], l["ratio_ci"]);
    // The saved histogram read back: its buckets, so within the histogram's 1%
    // (the exact min and max are not in the file).
    ASSERT_EQ(b["latency_percentiles_ns"].size(), l["latency_percentiles_ns"].size());
    for (size_t q = 0; q < l["latency_percentiles_ns"].size(); ++q) {
      const double want = l["latency_percentiles_ns"][q]["ns"].get<double>();
      EXPECT_NEAR(b["latency_percentiles_ns"][q]["ns"].get<double>(), want, 0.01 * want) << l["latency_percentiles_ns"][q];
    }
    EXPECT_EQ(b["cpu_per_io_ns"], l["cpu_per_io_ns"]);
  }
  // The same headline, but for the advice: a live run is told to run with
  // more repetitions, a saved document to be run again and its file compared.
  const auto advice = [](std::string h) {
    h = std::regex_replace(h, std::regex(R"(run with --repeat (\d+)( \(about [^)]*\))?)"), "ADVICE $1");
    return std::regex_replace(h, std::regex(R"(run the comparison again with --repeat (\d+) and compare its file)"),
                              "ADVICE $1");
  };
  EXPECT_EQ(advice(back["headline"]), advice(live["headline"]));
  if (live["headline"].get<std::string>().find("run with --repeat") != std::string::npos) {
    EXPECT_NE(back["headline"].get<std::string>().find("and compare its file"), std::string::npos) << back["headline"];
  }
  // And with another baseline, by name.
  o = run_ioacct({"compare", saved, "--baseline", "nop"});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("ioacct compare: 2 variants from 1 saved file\n", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("=> 'psync' completes 0."), std::string::npos) << o.out;
}

TEST(CompareSaved, MalformedForeignOrMissingFilesAreOneErrorLine) {
  TempDir dir;
  const std::string bad = dir.path() + "/bad.json", foreign = dir.path() + "/fio.json", missing = dir.path() + "/none.json";
  spit(bad, "{\"context\": {\"ioacct_version\": ");
  spit(foreign, R"({"fio version": "fio-3.33", "jobs": []})");
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{bad}, "error: " + bad + ": not valid JSON: parse error at line 1, column 32"},
      {{foreign}, "error: " + foreign + ": not an ioacct bench or compare JSON document (it has no context.ioacct_version)"},
      {{missing}, "error: " + missing + ": cannot read: No such file or directory (ENOENT)\n"},
      {{"x=" + foreign + "," + bad}, "error: " + foreign + ": not an ioacct"},
      {{bad, "--repeat", "3"}, "error: --repeat: applies to runs made now, not to saved files"},
      {{bad, "--until-resolved"}, "error: --until-resolved: applies to runs made now, not to saved files"},
      {{"a=" + bad, "a=" + foreign}, "error: a=" + foreign + ": the name 'a' is given twice\n"},
  };
  for (const auto& c : cases) {
    std::vector<std::string> args = {"compare"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    auto o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 2) << c.message << "\n" << o.err;
    EXPECT_EQ(o.err.rfind(c.message, 0), 0u) << "want: " << c.message << "\ngot: " << o.err;
    EXPECT_EQ(lines(o.err), 1u) << o.err;
    EXPECT_EQ(o.out, "");
  }
}

}  // namespace
}  // namespace ioacct::test
