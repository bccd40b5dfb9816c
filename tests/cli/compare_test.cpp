// `ioacct compare` for real: variants run interleaved on one temporary file,
// and the console table, the ratios and the JSON (inlined in the HTML report)
// agree; usage errors name their flag or variant before anything runs.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
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

// The Hodges-Lehmann ratio, computed here from the runs in the JSON: the
// median of every ratio of a variant's repetition to a baseline repetition
// (the geometric mean of the middle two for an even count).
double hl_ratio(const json& v, const json& base) {
  std::vector<double> r;
  for (const auto& a : v["runs"])
    for (const auto& b : base["runs"]) r.push_back(a["iops"].get<double>() / b["iops"].get<double>());
  std::sort(r.begin(), r.end());
  const size_t n = r.size();
  return n % 2 ? r[n / 2] : std::sqrt(r[n / 2 - 1] * r[n / 2]);
}

TEST(Compare, TwoVariantsTableRatiosAndJsonAgree) {
  TempDir dir;
  const std::string report = dir.path() + "/r.html";
  auto o = run_ioacct({"compare", "--engine", "psync,uring", "--iodepth", "4", "--repeat", "4", "--runtime", "300ms",
                       "--size", "32m", "--acct", "full", "--progress", "--report", report},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  // Interleaved, each round starting one later: psync, uring, uring, psync ...
  const size_t r1 = o.err.find("run 1/8: 'engine=psync'"), r2 = o.err.find("run 2/8: 'engine=uring'"),
               r3 = o.err.find("run 3/8: 'engine=uring' (repetition 2/4)"), r8 = o.err.find("run 8/8: 'engine=psync'");
  ASSERT_NE(r8, std::string::npos) << o.err;
  EXPECT_TRUE(r1 < r2 && r2 < r3 && r3 < r8) << o.err;
  // Created once for both variants, and gone afterwards.
  EXPECT_EQ(o.err.find("creating a"), o.err.rfind("creating a")) << o.err;
  EXPECT_EQ(dir.entries(), std::vector<std::string>{"r.html"});

  const json d = report_data(slurp(report));
  EXPECT_EQ(d["context"]["schema_version"], 2);
  ASSERT_EQ(d["variants"].size(), 2u);
  const json& ps = d["variants"][0];
  const json& ur = d["variants"][1];
  EXPECT_EQ(ps["name"], "engine=psync");
  EXPECT_EQ(ur["name"], "engine=uring");
  EXPECT_EQ(d["context"]["baseline"], "engine=psync");
  EXPECT_EQ(d["context"]["repeat"], 4);
  for (const json* v : {&ps, &ur}) {
    ASSERT_EQ((*v)["runs"].size(), 4u);
    std::vector<double> x;
    for (const auto& r : (*v)["runs"]) x.push_back(r["iops"].get<double>());
    std::sort(x.begin(), x.end());
    EXPECT_GT(x[0], 0);
    EXPECT_DOUBLE_EQ((*v)["iops"]["median"].get<double>(), (x[1] + x[2]) / 2);
    EXPECT_DOUBLE_EQ((*v)["iops"]["min"].get<double>(), x[0]);
    EXPECT_DOUBLE_EQ((*v)["iops"]["max"].get<double>(), x[3]);
    EXPECT_FALSE((*v)["cpu_per_io_ns"].is_null());
    EXPECT_FALSE((*v)["busy_pct"].is_null());
    EXPECT_TRUE((*v)["sq_work_fraction"].is_null());  // no SQ thread: not measured, not 0
    EXPECT_FALSE((*v)["latency_percentiles_ns"].empty());
    EXPECT_FALSE((*v)["options"].is_null());
  }
  EXPECT_DOUBLE_EQ(ps["ratio"].get<double>(), 1.0);
  EXPECT_EQ(ps["verdict"], "baseline");
  const double ratio = hl_ratio(ur, ps);
  EXPECT_NEAR(ur["ratio"].get<double>(), ratio, 1e-9 * ratio);
  // 4 against 4: the interval is the lowest and highest of the 16 ratios
  // (Mann-Whitney, P(U = 0) = 1/70 per side), and the verdict follows it.
  double lo = 1e300, hi = 0;
  for (const auto& a : ur["runs"])
    for (const auto& b : ps["runs"]) {
      lo = std::min(lo, a["iops"].get<double>() / b["iops"].get<double>());
      hi = std::max(hi, a["iops"].get<double>() / b["iops"].get<double>());
    }
  ASSERT_TRUE(ur["ratio_ci"].is_object()) << ur;
  EXPECT_NEAR(ur["ratio_ci"]["low"].get<double>(), lo, 1e-9 * lo);
  EXPECT_NEAR(ur["ratio_ci"]["high"].get<double>(), hi, 1e-9 * hi);
  EXPECT_NEAR(ur["ratio_ci"]["coverage"].get<double>(), 1 - 2.0 / 70, 1e-12);
  const std::string want = lo >= 1 / 1.05 && hi <= 1.05 ? "no difference" : lo > 1 ? "faster" : hi < 1 ? "slower" : "not resolved";
  EXPECT_EQ(ur["verdict"], want);
  EXPECT_FALSE(d["headline"].get<std::string>().empty());

  // The console table shows the same: ratio and interval to two places, the verdict.
  const auto cells = row_of(o.out, "engine=uring");
  ASSERT_GE(cells.size(), 5u);
  // Marked where the medians beside it lie on the other side of 1 (JSON's reversal).
  EXPECT_EQ(cells[2], fmt_ratio(ratio) + (ur["reversal"].is_null() ? "" : "†")) << o.out;
  EXPECT_EQ(ur["reversal"].is_null(), (ratio - 1) * (ur["ratio_of_medians"].get<double>() - 1) >= 0) << ur;
  EXPECT_EQ(cells[3], fmt_ratio(lo).substr(0, fmt_ratio(lo).size() - 1) + "-" + fmt_ratio(hi)) << o.out;
  // The verdict's first word; a one-word verdict ends in '*' when an outlier
  // repetition would change it (it happens under load), as JSON says.
  const bool one_word = want.find(' ') == std::string::npos;
  const std::string star = one_word && ur["verdicts_disagree"] == true ? "*" : "";
  EXPECT_EQ(cells[4], want.substr(0, want.find(' ')) + star) << o.out;
  EXPECT_EQ(row_of(o.out, "engine=psync").at(2), "1.00x");
  EXPECT_EQ(o.out.find("\nioacct:"), std::string::npos) << "progress belongs on stderr";
  // The answer comes first, under the header line.
  EXPECT_EQ(o.out.find("\n=> 'engine=uring' "), o.out.find('\n')) << o.out;
}

// Two identical variants: the interval must hold 1.0 and resolve to "no
// difference". Paced at 100 IOPS, so that the true ratio is exactly 1 and the
// spread small even while other work loads this VM (unpaced psync against
// itself spreads by +-50% here under load, which would need hundreds of
// repetitions for a 10% margin); --until-resolved adds rounds if the first
// five are not enough.
TEST(Compare, PsyncAgainstPsyncResolvesToNoDifference) {
  TempDir dir;
  auto o = run_ioacct({"compare", "--config", "a=--engine psync", "--config", "b=--engine psync", "--rate-iops", "100",
                       "--runtime", "1s", "--size", "16m", "--until-resolved", "15", "--margin", "10%", "--format", "json"},
                      {.env = {"TMPDIR=" + dir.path()}, .timeout_s = 200});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json d = stdout_json(o);
  const json& b = d["variants"][1];
  EXPECT_EQ(b["verdict"], "no difference") << b["verdict_text"] << "\n" << o.err;
  ASSERT_TRUE(b["ratio_ci"].is_object());
  // Contains 1 to within what a paced count can tell apart: one I/O in the
  // 100 of a 1 s window at 100/s (a quiet clean-clone run gave low 1.00001).
  EXPECT_LE(b["ratio_ci"]["low"].get<double>(), 1.01);
  EXPECT_GE(b["ratio_ci"]["high"].get<double>(), 0.99);
  EXPECT_EQ(d["context"]["verdict_rule"]["margin"], 0.1);
  EXPECT_NE(o.err.find("ioacct compare: every verdict resolved after "), std::string::npos) << o.err;
  EXPECT_EQ(d["headline"].get<std::string>().rfind("'b' completes as many I/Os as 'a' (", 0), 0u) << d["headline"];
}

// Rounds are added while a verdict is open, and stop at MAX or at the budget,
// saying which. The verdict between two runs of one unpaced workload at a
// margin of 0.01% is open unless every repetition of one lies above every
// repetition of the other: by chance, 2 of the 70 orders of 4 against 4 (the
// rounds rotate, so a place in the round favours neither). A run that
// resolves so must say so consistently, and the next try is taken.
TEST(Compare, UntilResolvedStopsAtMaxOrBudgetAndSaysWhich) {
  TempDir dir;
  const std::vector<std::string> pair = {"compare", "--config", "a=--engine nop", "--config", "b=--engine nop",
                                         "--runtime", "100ms", "--size", "16m", "--repeat", "4", "--margin", "0.01%"};
  auto with = [&](std::vector<std::string> more) {
    auto args = pair;
    args.insert(args.end(), more.begin(), more.end());
    return run_ioacct(args, {.env = {"TMPDIR=" + dir.path()}});
  };
  // The resolved-by-chance branch: consistent, and not the end of the test.
  auto resolved_by_chance = [](const Outcome& o) {
    const auto at = o.err.find("ioacct compare: every verdict resolved after ");
    if (at == std::string::npos) return false;
    std::printf("resolved by chance, tried again: %s\n", o.err.substr(at).c_str());
    return true;
  };

  Outcome o;
  for (int attempt = 0; attempt < 3; ++attempt) {
    o = with({"--until-resolved", "6", "--format", "json"});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    if (!resolved_by_chance(o)) break;
    const json d = stdout_json(o);
    EXPECT_EQ(d["context"]["rounds_note"].get<std::string>().rfind("every verdict resolved after ", 0), 0u);
    EXPECT_EQ(d["variants"][1]["runs"].size(), d["context"]["repeat"].get<size_t>());
  }
  json d = stdout_json(o);
  EXPECT_EQ(d["context"]["repeat"], 6) << o.err;
  EXPECT_EQ(d["context"]["repeat_asked"], 4);
  EXPECT_EQ(d["variants"][1]["runs"].size(), 6u);
  EXPECT_NE(o.err.find("ioacct compare: round 5 added: 1 verdict not resolved yet (--until-resolved)"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("ioacct compare: round 6 added:"), std::string::npos) << o.err;
  EXPECT_EQ(o.err.find("round 7"), std::string::npos) << o.err;
  EXPECT_NE(o.err.find("ioacct compare: 6 rounds, the most --until-resolved allows, with 1 verdict not resolved"),
            std::string::npos) << o.err;
  EXPECT_EQ(d["context"]["rounds_note"], "6 rounds, the most --until-resolved allows, with 1 verdict not resolved");
  // A live comparison knows its round time: the advice says how long it
  // takes, "(about T)", or, when the spread puts it past the cap (a loaded
  // machine: 16% under ASan beside a spinner), "(more than T)".
  EXPECT_GT(d["variants"][1]["repeat_needed_s"].get<double>(), 0) << d["variants"][1];
  const std::string advice = d["variants"][1]["verdict_text"];
  EXPECT_TRUE(advice.find(d["variants"][1]["repeat_out_of_reach"].get<bool>() ? "(more than " : "(about ") !=
              std::string::npos)
      << d["variants"][1];

  // A budget shorter than the --repeat rounds: those still run, no more.
  for (int attempt = 0; attempt < 3; ++attempt) {
    o = with({"--budget", "500ms"});
    ASSERT_EQ(o.exit_code, 0) << o.err;
    EXPECT_EQ(o.err.find("round 5"), std::string::npos) << o.err;
    if (!resolved_by_chance(o)) break;
    EXPECT_NE(o.out.find("\n--until-resolved: every verdict resolved after 4 rounds"), std::string::npos) << o.out;
  }
  EXPECT_NE(o.err.find("ioacct compare: --budget 500ms reached after 4 rounds, with 1 verdict not resolved"), std::string::npos)
      << o.err;
  EXPECT_EQ(o.out.rfind("ioacct compare: 2 variants x 4 repetitions, interleaved\n", 0), 0u) << o.out;
  EXPECT_NE(o.out.find("\n--until-resolved: --budget 500ms reached after 4 rounds"), std::string::npos) << o.out;
}

// A difference of two orders of magnitude resolves with the default
// repetitions, whatever the machine is doing.
TEST(Compare, NopAtDepth128AgainstPsyncAtDepth1ResolvesToFaster) {
  TempDir dir;
  auto o = run_ioacct({"compare", "--config", "psync1=--engine psync --iodepth 1", "--config",
                       "nop128=--engine nop --iodepth 128", "--runtime", "200ms", "--size", "16m", "--format", "json"},
                      {.env = {"TMPDIR=" + dir.path()}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json d = stdout_json(o);
  EXPECT_EQ(d["context"]["repeat"], 5) << "the default --repeat";
  const json& nop = d["variants"][1];
  EXPECT_EQ(nop["verdict"], "faster") << nop["verdict_text"];
  EXPECT_GT(nop["ratio_ci"]["low"].get<double>(), 1.0);
  EXPECT_NEAR(nop["ratio_ci"]["coverage"].get<double>(), 1 - 8.0 / 252, 1e-12);  // 5 against 5
  EXPECT_EQ(nop["verdict_text"].get<std::string>().rfind("faster (", 0), 0u);
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

// The BPF programs a process holds, by id (from each bpf-prog fd's fdinfo).
std::set<std::string> bpf_prog_ids(int pid) {
  std::set<std::string> ids;
  for (const auto& e : std::filesystem::directory_iterator(fmt_proc(pid, "fd"))) {
    std::error_code ec;
    if (std::filesystem::read_symlink(e.path(), ec).string() != "anon_inode:bpf-prog" || ec) continue;
    std::ifstream info(fmt_proc(pid, "fdinfo/") + e.path().filename().string());
    for (std::string line; std::getline(info, line);)
      if (line.rfind("prog_id:", 0) == 0) ids.insert(line.substr(8));
  }
  return ids;
}

TEST(Compare, TheTrackerIsAttachedOncePerSessionNotPerRun) {
  // Loading and verifying the programs is most of a --acct full run's
  // start-up; compare attaches them once and every run reads them.
  TempDir dir;
  std::set<std::string> first, last;
  auto o = run_ioacct({"compare", "--iodepth", "1,4", "--acct", "full", "--repeat", "2", "--runtime", "300ms",
                       "--size", "16m", "--progress", "--format", "json"},
                      {.env = {"TMPDIR=" + dir.path()},
                       .steps = {{"ioacct compare: run 1/4", [&](int pid) { first = bpf_prog_ids(pid); }},
                                 {"ioacct compare: run 4/4", [&](int pid) { last = bpf_prog_ids(pid); }}}});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  EXPECT_FALSE(first.empty()) << "attached before the first run";
  EXPECT_EQ(first, last) << "the same programs for the last run: not loaded again";
  const json j = stdout_json(o);
  for (const auto& v : j["variants"]) EXPECT_FALSE(v["busy_pct"].is_null()) << v["name"];
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
      {{"--repeat", "6", "--until-resolved", "4", "--iodepth", "1,2"},
       "error: --until-resolved: 4 is out of range (6 to 1000: at least --repeat, 6)\n"},
      {{"--until-resolved", "lots"}, "error: --until-resolved: cannot read 'lots' as a count"},
      {{"--budget", "10"}, "error: --budget: cannot read '10' as a duration"},
      {{"--margin", "0%"}, "error: --margin: cannot read '0%' as a percentage"},
      {{"--margin", "5q"}, "error: --margin: cannot read '5q' as a percentage"},
      {{"--repeat", "three"}, "error: --repeat: cannot read 'three' as a count"},
      {{"--preset", "qd2"}, "error: --preset: 'qd2' is not one of qd1, sqpoll, libaio, util\n"},
      {{"--preset", "qd1", "--config", "a=--iodepth 1"}, "error: --config: cannot be combined with --preset"},
      {{"--config", "noequals"}, "error: --config: 'noequals' is not NAME=OPTIONS"},
      {{"--config", "a=--bs 4k", "--config", "a=--bs 8k"}, "error: --config: the name 'a' is given twice\n"},
      {{"--iodepth", "1,32", "--baseline", "qd9"},
       "error: --baseline: 'qd9' is not a variant; the variants are 'iodepth=1', 'iodepth=32'\n"},
      {{"--engine", "psync,urin"}, "error: variant 'engine=urin': --engine: 'urin' is not one of uring, psync, sync, pvsync, pvsync2, nop, libaio\n"},
      {{"--iodepth", "1,,2"}, "error: --iodepth: '1,,2' has an empty item in its comma list\n"},
      {{"--config", "r=--rw randread --dsync"}, "error: variant 'r': --dsync: --rw randread does not write"},
      {{"--format", "xml"}, "error: --format: 'xml' is not one of console, json, csv, markdown\n"},
      {{"--report", "/nonexistent-dir/r.html"}, "error: --report: cannot write /nonexistent-dir/r.html: "},
      {{"--config", "a=--format json"}, "error: --format: give it once, for the comparison, not inside a variant\n"},
      {{"--iodepth", "1,2", "--no-such-flag"},
       "error: variant 'iodepth=1': unknown option --no-such-flag for 'ioacct compare' (see 'ioacct compare --help')\n"},
      {{"--iodepth", "1,2", "--depth", "4"},
       "error: variant 'iodepth=1': unknown option --depth for 'ioacct compare'; did you mean --iodepth?\n"},
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
// differs most from the baseline, the same in the console and the JSON; named
// only beyond the run-to-run spread (stage_diff's own cases are unit tests).
TEST(Compare, AnatomyPutsTheStagesOfEveryVariantSideBySide) {
  TempDir dir;
  LoopDevice loop(dir.path(), {.random_data = true});
  const std::string out = dir.path() + "/c.json";
  auto o = run_ioacct({"compare", "--engine", "psync,uring", "--iodepth", "1", "--repeat", "1", "--runtime", "500ms",
                       "--anatomy", "--format", "json", "-o", out, loop.path()});
  ASSERT_EQ(o.exit_code, 0) << o.err;
  const json j = json::parse(slurp(out));
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
  // One repetition each: no run-to-run spread to judge the difference by.
  EXPECT_TRUE(d["interval_ns"].is_null()) << d;
  EXPECT_EQ(d["stands_out"], false) << d;

  auto c = run_ioacct({"compare", "--engine", "psync,uring", "--iodepth", "1", "--repeat", "1", "--runtime", "300ms",
                       "--anatomy", loop.path()});
  ASSERT_EQ(c.exit_code, 0) << c.err;
  // So no stage is named, and the line says what would tell.
  EXPECT_NE(c.out.find("'engine=uring' against 'engine=psync': no stage stands out: 1 repetition against 1 cannot tell "
                       "a stage's difference from its run-to-run spread (that takes at least 4 repetitions a side)\n"),
            std::string::npos) << c.out;
  EXPECT_EQ(c.out.find("the stage that differs most"), std::string::npos) << c.out;
  EXPECT_NE(c.out.find("submit / syscall entry"), std::string::npos) << c.out;
}

}  // namespace
}  // namespace ioacct::test
