// contrib/: what an SRE deploys beside the binary. The rules pass promtool's
// check and their unit tests; the Grafana dashboard is well-formed and asks
// only for metrics ioacct exports or the rules record (a real Prometheus runs
// every one of its queries in export_prometheus_test.cpp); the systemd unit
// passes systemd-analyze, is hardened, and its capabilities are enough for
// the exact busy time.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "cli/exporter.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;
const std::string kContrib = std::string(IOACCT_SOURCE_DIR) + "/contrib";

TEST(Contrib, PromtoolChecksTheRulesAndTheirUnitTestsPass) {
  EXPECT_NE(sh("promtool check rules " + kContrib + "/prometheus/ioacct-rules.yml 2>&1").find("SUCCESS: 19 rules found"),
            std::string::npos);
  const std::string unit = sh("cd " + kContrib + "/prometheus && promtool test rules ioacct-rules.test.yml 2>&1; echo rc=$?");
  EXPECT_NE(unit.find("  SUCCESS\n"), std::string::npos) << unit;
  EXPECT_EQ(unit.substr(unit.size() - 4), "rc=0") << unit;
}

// Every ioacct_ metric name a query uses, and every recorded series.
std::set<std::string> names_in(const std::string& text) {
  std::set<std::string> out;
  const std::regex name(R"(\b((?:instance_device|instance|host|fleet):[a-z_:0-9]+|ioacct_[a-z_]+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), name); it != std::sregex_iterator(); ++it)
    out.insert((*it)[1]);
  return out;
}

// Metric names a real exporter serves (with the tracker, on a loop device,
// and its per-cgroup series).
std::set<std::string> exported_names() {
  TempDir dir;
  LoopDevice loop(dir.path());
  Exporter ex({"--listen", "127.0.0.1:0", "--per-cgroup", loop.name()});
  const std::string text = ex.scrape();
  std::set<std::string> out;
  const std::regex type(R"(# TYPE (\S+) (\S+))");
  for (auto it = std::sregex_iterator(text.begin(), text.end(), type); it != std::sregex_iterator(); ++it) {
    const std::string n = (*it)[1];
    out.insert(n);
    if ((*it)[2] == "histogram")
      for (const char* suffix : {"_bucket", "_sum", "_count"}) out.insert(n + suffix);
  }
  return out;
}

TEST(Contrib, TheDashboardIsWellFormedAndAsksOnlyForMetricsThatExist) {
  const json d = json::parse(slurp(kContrib + "/grafana/ioacct.json"));
  EXPECT_EQ(d["uid"], "ioacct-export");
  EXPECT_FALSE(d["title"].get<std::string>().empty());
  EXPECT_GE(d["schemaVersion"].get<int>(), 30);
  std::set<std::string> variables;
  for (const auto& v : d["templating"]["list"]) variables.insert(v["name"]);
  EXPECT_EQ(variables, (std::set<std::string>{"datasource", "instance", "device"}));
  std::set<int> ids;
  std::set<std::string> used;
  size_t targets = 0;
  for (const auto& p : d["panels"]) {
    SCOPED_TRACE(p["title"].get<std::string>());
    EXPECT_TRUE(ids.insert(p["id"].get<int>()).second) << "panel ids are unique";
    const auto& g = p["gridPos"];
    EXPECT_GT(g["w"].get<int>(), 0);
    EXPECT_GT(g["h"].get<int>(), 0);
    EXPECT_LE(g["x"].get<int>() + g["w"].get<int>(), 24) << "within Grafana's 24 columns";
    if (p["type"] == "row") continue;
    EXPECT_EQ(p["datasource"]["uid"], "${datasource}") << "the data source is the dashboard's variable";
    ASSERT_FALSE(p["targets"].empty());
    std::set<std::string> refs;
    for (const auto& t : p["targets"]) {
      EXPECT_TRUE(refs.insert(t["refId"].get<std::string>()).second);
      const std::string expr = t["expr"];
      EXPECT_NE(expr.find("$instance"), std::string::npos) << "every query follows the host selector: " << expr;
      for (const auto& n : names_in(expr)) used.insert(n);
      ++targets;
    }
  }
  EXPECT_GE(targets, 15u);
  const std::string rules = slurp(kContrib + "/prometheus/ioacct-rules.yml");
  for (const auto& n : names_in(rules)) used.insert(n);
  std::set<std::string> known = exported_names();
  const std::regex recorded(R"(- record: (\S+))");
  for (auto it = std::sregex_iterator(rules.begin(), rules.end(), recorded); it != std::sregex_iterator(); ++it)
    known.insert((*it)[1]);
  for (const auto& n : used) EXPECT_TRUE(known.count(n)) << n << " is used by contrib/ but neither exported nor recorded";
}

// The unit as installed, but with ExecStart on the built binary (verify wants
// it to exist) and MANPATH on the generated man pages (verify checks
// Documentation= too).
std::string unit_copy(const TempDir& dir) {
  std::string unit = slurp(kContrib + "/systemd/ioacct-export.service");
  unit = std::regex_replace(unit, std::regex("/usr/bin/ioacct"), IOACCT_BINARY);
  std::ofstream(dir.path() + "/ioacct-export.service") << unit;
  return dir.path() + "/ioacct-export.service";
}

std::string generated_man() {
  const std::string gen = std::filesystem::path(IOACCT_BINARY).parent_path().string() + "/generated-docs";
  return gen;  // man1/ under it
}

TEST(Contrib, TheSystemdUnitVerifiesAndIsHardened) {
  if (sh("command -v systemd-analyze || true").empty()) GTEST_SKIP() << "no systemd-analyze on this machine";
  TempDir dir;
  const std::string unit = unit_copy(dir);
  EXPECT_EQ(sh("MANPATH=" + generated_man() + " systemd-analyze verify " + unit + " 2>&1; echo rc=$?"), "rc=0")
      << "no warning, no error";
  // systemd's own exposure score: 1.9 here, "OK"; 10 is a service with no hardening.
  EXPECT_EQ(sh("systemd-analyze security --offline=yes --threshold=20 " + unit + " >/dev/null 2>&1; echo rc=$?"), "rc=0")
      << sh("systemd-analyze security --offline=yes " + unit + " 2>&1 | tail -1");
}

std::string setting(const std::string& unit, const std::string& key) {
  std::smatch m;
  EXPECT_TRUE(std::regex_search(unit, m, std::regex("\n" + key + "=([^\n]*)"))) << key;
  return m.size() > 1 ? m[1].str() : "";
}

// No systemd runs this VM's services, so the unit's capability set is tried
// the way systemd would apply it: an unprivileged user with exactly those
// capabilities, ambient.
TEST(Contrib, TheUnitsCapabilitiesAreEnoughForTheExactBusyTime) {
  const std::string unit = slurp(kContrib + "/systemd/ioacct-export.service");
  const std::string ambient = setting(unit, "AmbientCapabilities");
  EXPECT_EQ(setting(unit, "CapabilityBoundingSet"), ambient) << "nothing bounded beyond what is used";
  EXPECT_EQ(ambient, "CAP_BPF CAP_PERFMON");
  EXPECT_EQ(setting(unit, "DynamicUser"), "yes");
  std::string caps;
  std::istringstream in(ambient);
  for (std::string c; in >> c;) {
    std::string lower = c.substr(4);
    for (char& ch : lower) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
    caps += (caps.empty() ? "+" : ",+") + lower;
  }
  TempDir dir;
  LoopDevice loop(dir.path());
  Exporter ex({"--listen", "127.0.0.1:0", loop.name()},
              {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=" + caps,
               "--ambient-caps=" + caps});
  ASSERT_GT(ex.port(), 0) << ex.err();
  const std::string s = ex.scrape();
  EXPECT_EQ(value(s, "ioacct_exact_busy_up"), 1.0) << ex.err();
  EXPECT_TRUE(value(s, "ioacct_device_busy_seconds_total{device=\"" + loop.name() + "\"}"));
  EXPECT_EQ(ex.stop(), 0) << ex.err();
}

}  // namespace
}  // namespace ioacct::test
