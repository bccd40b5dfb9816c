// `ioacct compare` for real: variants run interleaved on one temporary file,
// and the console table, the ratios and the JSON (inlined in the HTML report)
// agree; usage errors name their flag or variant before anything runs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

std::string fmt_ratio(double r) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.2fx", r);
  return buf;
}

std::string fmt_proc(int pid, const std::string& what) { return "/proc/" + std::to_string(pid) + "/" + what; }

// The report carries its data as JSON in <script id="ioacct-data">.
json report_data(const std::string& html) {
  const std::string open = "<script type=\"application/json\" id=\"ioacct-data\">";
  const size_t a = html.find(open);
  const size_t b = html.find("</script>", a);
  if (a == std::string::npos || b == std::string::npos) {
    ADD_FAILURE() << "no data block in the report";
    return json::object();
  }
  std::string text = html.substr(a + open.size(), b - a - open.size());
  for (size_t p; (p = text.find("<\\/")) != std::string::npos;) text.replace(p, 3, "</");
  return json::parse(text);
}

// The console row of a variant, split at runs of spaces.
std::vector<std::string> row_of(const std::string& out, const std::string& name) {
  std::stringstream in(out);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(name + "  ", 0) == 0) {
      std::vector<std::string> cells;
      std::stringstream l(line.substr(name.size()));
      std::string w;
      while (l >> w) cells.push_back(w);
      return cells;
    }
  ADD_FAILURE() << "no row for " << name << " in:\n" << out;
  return {};
}

TEST(Compare, TwoVariantsTableRatiosAndJsonAgree) {
  TempDir dir;
  const std::string report = dir.path() + "/r.html";
  auto o = run_ioacct({"compare", "--engine", "psync,uring", "--iodepth", "4", "--repeat", "2", "--runtime", "1s",
                       "--size", "32m", "--progress", "--report", report},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // Interleaved: psync, uring, psync, uring.
  const size_t r1 = o.err.find("run 1/4: 'engine=psync'"), r2 = o.err.find("run 2/4: 'engine=uring'"),
               r3 = o.err.find("run 3/4: 'engine=psync' (repetition 2/2)"), r4 = o.err.find("run 4/4: 'engine=uring'");
  ASSERT_NE(r4, std::string::npos) << o.err;
  EXPECT_TRUE(r1 < r2 && r2 < r3 && r3 < r4) << o.err;
  // Created once for both variants, and gone afterwards.
  EXPECT_EQ(o.err.find("creating a"), o.err.rfind("creating a")) << o.err;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"r.html"});

  const json d = report_data(read_file(report));
  ASSERT_EQ(d["variants"].size(), 2u);
  const json& ps = d["variants"][0];
  const json& ur = d["variants"][1];
  EXPECT_EQ(ps["name"], "engine=psync");
  EXPECT_EQ(ur["name"], "engine=uring");
  EXPECT_EQ(d["context"]["baseline"], "engine=psync");
  EXPECT_EQ(d["context"]["repeat"], 2);
  ASSERT_EQ(ps["runs"].size(), 2u);
  ASSERT_EQ(ur["runs"].size(), 2u);
  for (const json* v : {&ps, &ur}) {
    const double a = (*v)["runs"][0]["iops"], b = (*v)["runs"][1]["iops"];
    EXPECT_GT(a, 0);
    EXPECT_DOUBLE_EQ((*v)["iops"]["median"].get<double>(), (a + b) / 2);
    EXPECT_DOUBLE_EQ((*v)["iops"]["min"].get<double>(), std::min(a, b));
    EXPECT_DOUBLE_EQ((*v)["iops"]["max"].get<double>(), std::max(a, b));
    EXPECT_FALSE((*v)["cpu_per_io_ns"].is_null());
    EXPECT_FALSE((*v)["busy_pct"].is_null());
    EXPECT_TRUE((*v)["sq_work_fraction"].is_null());  // no SQ thread: not measured, not 0
    EXPECT_FALSE((*v)["latency_percentiles_ns"].empty());
  }
  EXPECT_DOUBLE_EQ(ps["ratio"].get<double>(), 1.0);
  EXPECT_EQ(ps["verdict"], "baseline");
  const double ratio = ur["iops"]["median"].get<double>() / ps["iops"]["median"].get<double>();
  EXPECT_DOUBLE_EQ(ur["ratio"].get<double>(), ratio);
  const bool overlap = ur["iops"]["min"].get<double>() <= ps["iops"]["max"].get<double>() &&
                       ps["iops"]["min"].get<double>() <= ur["iops"]["max"].get<double>();
  EXPECT_EQ(ur["verdict"], overlap ? "no clear difference" : ratio > 1 ? "faster" : "slower");

  // The console table shows the same: ratio to two places, the verdict.
  const auto cells = row_of(o.out, "engine=uring");
  ASSERT_GE(cells.size(), 4u);
  EXPECT_EQ(cells[2], fmt_ratio(ratio)) << o.out;
  EXPECT_NE(o.out.find(ur["verdict"].get<std::string>()), std::string::npos) << o.out;
  EXPECT_EQ(row_of(o.out, "engine=psync").at(2), "1.00x");
  EXPECT_EQ(o.out.find("\nioacct:"), std::string::npos) << "progress belongs on stderr";
}

TEST(Compare, EachVariantOpensTheSharedFileWithItsOwnFlags) {
  // Two variants: O_DSYNC writes and plain writes. While the first runs,
  // ioacct holds the one temporary file open three times: as created, and
  // once per variant; exactly one of them has O_DSYNC.
  TempDir dir;
  int with = -1, without = -1;
  auto o = run_ioacct({"compare", "--config", "plain=--rw randwrite", "--config", "dsync=--rw randwrite --dsync",
                       "--iodepth", "1", "--repeat", "1", "--runtime", "500ms", "--size", "8m", "--progress"},
                      {.env = {"TMPDIR=" + dir.path()}, .action_after = "ioacct compare: run 1/2",
                       .action_pid = [&](int pid) {
                         with = without = 0;
                         for (const auto& e : std::filesystem::directory_iterator(fmt_proc(pid, "fd"))) {
                           std::error_code ec;
                           const auto target = std::filesystem::read_symlink(e.path(), ec).string();
                           if (ec || target.rfind(dir.path(), 0) != 0) continue;
                           std::ifstream info(fmt_proc(pid, "fdinfo/") + e.path().filename().string());
                           std::string key, flags;
                           while (info >> key >> flags && key != "flags:") {}
                           (std::stoul(flags, nullptr, 8) & O_DSYNC) ? ++with : ++without;
                         }
                       }});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(with, 1);
  EXPECT_EQ(without, 2);
  EXPECT_NE(o.out.find("dsync"), std::string::npos);
}

TEST(Compare, VariantsThatWriteToOneDeviceTakeTurnsHoldingIt) {
  // A device written to is held O_EXCL while open, so each variant opens it
  // for its own runs only; the second variant must not find it busy.
  TempDir dir;
  LoopDevice loop(dir.path(), {.size = "16m"});
  auto o = run_ioacct({"compare", "--config", "qd1=--iodepth 1", "--config", "qd4=--iodepth 4", "--rw", "randwrite",
                       "--destroy-data", "--repeat", "2", "--runtime", "200ms", "--format", "csv", loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_EQ(o.out.rfind("variant,iops_median,", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("\n\"qd1\","), std::string::npos) << o.out;
  EXPECT_NE(o.out.find("\n\"qd4\","), std::string::npos) << o.out;
}

TEST(Compare, UsageErrorsNameTheFlagOrVariantBeforeAnythingRuns) {
  struct Case {
    std::vector<std::string> args;
    std::string message;
  };
  const std::vector<Case> cases = {
      {{"--repeat", "0", "--iodepth", "1,2"}, "error: --repeat: 0 is out of range (1 to 1000)\n"},
      {{"--repeat", "three"}, "error: --repeat: cannot read 'three' as a count"},
      {{"--preset", "qd2"}, "error: --preset: 'qd2' is not one of qd1, sqpoll, util\n"},
      {{"--preset", "qd1", "--config", "a=--iodepth 1"}, "error: --config: cannot be combined with --preset"},
      {{"--config", "noequals"}, "error: --config: 'noequals' is not NAME=OPTIONS"},
      {{"--config", "a=--bs 4k", "--config", "a=--bs 8k"}, "error: --config: the name 'a' is given twice\n"},
      {{"--iodepth", "1,32", "--baseline", "qd9"},
       "error: --baseline: 'qd9' is not a variant; the variants are 'iodepth=1', 'iodepth=32'\n"},
      {{"--engine", "psync,urin"}, "error: variant 'engine=urin': --engine: 'urin' is not one of uring, psync, nop\n"},
      {{"--iodepth", "1,,2"}, "error: --iodepth: '1,,2' has an empty item in its comma list\n"},
      {{"--config", "r=--rw randread --dsync"}, "error: variant 'r': --dsync: --rw randread does not write"},
      {{"--format", "xml"}, "error: --format: 'xml' is not one of console, json, csv, markdown\n"},
      {{"--report", "/nonexistent-dir/r.html"}, "error: --report: cannot write /nonexistent-dir/r.html: "},
      {{"--config", "a=--format json"}, "error: --format: give it once, for the comparison, not inside a variant\n"},
      {{"--iodepth", "1,2", "--no-such-flag"}, "error: variant 'iodepth=1': The following argument was not expected: --no-such-flag"},
  };
  // bench's own new options, checked the same way.
  auto o = run_ioacct({"bench", "--dsync"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err, "error: --dsync: --rw randread does not write; O_DSYNC only changes writes\n");
  o = run_ioacct({"bench", "--report", "/nonexistent-dir/r.html"});
  EXPECT_EQ(o.exit_code, 2);
  EXPECT_EQ(o.err.rfind("error: --report: cannot write /nonexistent-dir/r.html: ", 0), 0u) << o.err;
  for (const auto& c : cases) {
    std::vector<std::string> args = {"compare"};
    args.insert(args.end(), c.args.begin(), c.args.end());
    o = run_ioacct(args);
    EXPECT_EQ(o.exit_code, 2) << c.message << "\n" << o.err;
    EXPECT_EQ(o.err.rfind(c.message, 0), 0u) << "want: " << c.message << "got: " << o.err;
    EXPECT_EQ(o.out, "");
  }
}

}  // namespace
}  // namespace ioacct::test

namespace ioacct::test {
namespace {

// compare --anatomy: every variant's stages side by side, and the stage that
// differs most from the baseline, the same in the console and the JSON.
TEST(Compare, AnatomyPutsTheStagesOfEveryVariantSideBySide) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  const std::string out = dir.path() + "/c.json";
  auto o = run_ioacct({"compare", "--engine", "psync,uring", "--iodepth", "1", "--repeat", "1", "--runtime", "500ms",
                       "--anatomy", "--format", "json", "-o", out, loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = json::parse(read_file(out));
  ASSERT_EQ(j["variants"].size(), 2u);
  // Stage -> median time per I/O, psync's names mapped onto io_uring's (they
  // bound the same points). "in kernel" appears only for an I/O whose block
  // request could not be linked (rare; a loaded machine), so it is left out
  // of the list but kept in the sums.
  auto stages = [](const json& v) {
    std::map<std::string, double> m;
    for (const auto& s : v["anatomy"]["stages"]) {
      std::string n = s["stage"];
      if (n == "syscall entry") n = "submit";
      if (n == "return") n = "reaping";
      m[n] = s["per_io_ns"]["median"].get<double>();
    }
    return m;
  };
  auto names = [](const std::map<std::string, double>& m) {
    std::set<std::string> keys;
    for (const auto& [k, v] : m)
      if (k != "in kernel") keys.insert(k);
    return keys;
  };
  const auto psync = stages(j["variants"][0]), uring = stages(j["variants"][1]);
  const std::set<std::string> six{"submit", "issue", "queue", "device", "completion", "reaping"};
  EXPECT_EQ(names(psync), six);
  EXPECT_EQ(names(uring), six);
  EXPECT_TRUE(j["variants"][0]["anatomy"]["differs_most_from_baseline"].is_null()) << "the baseline";
  const json d = j["variants"][1]["anatomy"]["differs_most_from_baseline"];
  ASSERT_TRUE(d.is_object()) << j["variants"][1]["anatomy"];
  // The named stage is the one whose medians are furthest apart.
  double best = -1;
  std::string best_stage;
  std::set<std::string> all;
  for (const auto& [k, v] : psync) all.insert(k);
  for (const auto& [k, v] : uring) all.insert(k);
  for (const auto& k : all) {
    const double diff = std::abs((uring.count(k) ? uring.at(k) : 0.0) - (psync.count(k) ? psync.at(k) : 0.0));
    if (diff > best) {
      best = diff;
      best_stage = k;
    }
  }
  EXPECT_EQ(d["stage"], best_stage);
  EXPECT_NEAR(std::abs(d["by_ns"].get<double>()), best, 1e-6);

  auto c = run_ioacct({"compare", "--engine", "psync,uring", "--iodepth", "1", "--repeat", "1", "--runtime", "300ms",
                       "--anatomy", loop.path()});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.out.find("'engine=uring' against 'engine=psync': the stage that differs most is "), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("submit / syscall entry"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace ioacct::test
