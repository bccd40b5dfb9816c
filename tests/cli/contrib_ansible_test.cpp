// contrib/ansible/bench.yml run by a real ansible-playbook against a local
// inventory of three hosts (ansible_connection=local), each with its own
// loop device and tag: one start time, bench on every host, the results
// fetched and merged. The merged result must hold the three hosts, their
// windows overlapping, its IOPS their sum.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "cli/run_binary.hpp"

namespace ioacct::test {
namespace {

using nlohmann::json;

TEST(ContribAnsible, ThePlaybookBenchesEveryHostAtOnceAndMerges) {
  if (system("command -v ansible-playbook >/dev/null 2>&1") != 0)
    GTEST_SKIP() << "ansible-playbook is not installed (Debian: ansible-core; scripts/setup installs it)";
  TempDir dir;
  std::vector<std::unique_ptr<LoopDevice>> loops;
  std::ofstream inv(dir.path() + "/inventory.ini");
  inv << "[clients]\n";
  for (int i = 0; i < 3; ++i) {
    loops.push_back(std::make_unique<LoopDevice>(dir.path(), LoopOptions{.size = "16m"}));
    inv << "h" << i << " ansible_connection=local ansible_python_interpreter=/usr/bin/python3 ioacct_target="
        << loops[i]->path() << " ioacct_tags='[\"rack=r" << i % 2 << "\"]'\n";
  }
  inv.close();
  const char* other = std::getenv("IOACCT_TEST_BINARY");  // NOLINT(concurrency-mt-unsafe)
  const std::string source = IOACCT_SOURCE_DIR, bin = other && *other ? other : IOACCT_BINARY;
  const std::string out = sh("cd " + dir.path() + " && ANSIBLE_NOCOLOR=1 ANSIBLE_LOCAL_TEMP=" + dir.path() +
                             "/tmp ANSIBLE_REMOTE_TEMP=" + dir.path() + "/rtmp ansible-playbook -i inventory.ini " +
                             source + "/contrib/ansible/bench.yml -e ioacct_bin=" + bin +
                             " -e ioacct_runtime=1s -e ioacct_start_delay_s=15 -e ioacct_results_dir=" + dir.path() +
                             "/results -e ioacct_remote_dir=" + dir.path() + " -e 'ioacct_args=\"--iodepth 4\"' 2>&1");
  EXPECT_NE(out.find("failed=0"), std::string::npos) << out;
  const json m = json::parse(slurp(dir.path() + "/results/merged.json"));
  ASSERT_EQ(m["merge"]["hosts"].size(), 3u) << out;
  std::set<std::string> names;
  double sum = 0;
  for (const json& h : m["merge"]["hosts"]) {
    names.insert(h["name"].get<std::string>());
    EXPECT_TRUE(h["tags"].contains("rack")) << h["tags"].dump();
    sum += h["iops"].get<double>();
  }
  EXPECT_EQ(names, (std::set<std::string>{"h0", "h1", "h2"}));
  EXPECT_TRUE(m["merge"]["overlapped"].get<bool>());
  // One --start-at: every host was given the same instant, none opened its
  // window before it (each waited), and the merge's skew is exactly the
  // spread of the openings. The 15 s delay is the launch's: with 5 s (an
  // instant 5-6 s away), the benches started 2.3-3.8 s early quiet, 0.1-2.0 s
  // with both vCPUs spun, and beside a CI build the instant had passed. How
  // late each woke is the machine's: 0.1-0.3 ms quiet, 9.8 ms once beside a
  // CI build.
  std::set<std::string> instants;
  int64_t first = INT64_MAX, last = 0;
  for (const char* h : {"h0", "h1", "h2"}) {
    const json r = json::parse(slurp(dir.path() + "/results/hosts/" + h + ".json"));
    instants.insert(r["context"]["start_at"].get<std::string>());
    const int64_t opened = r["results"]["window_start_unix_ns"].get<int64_t>();
    first = std::min(first, opened);
    last = std::max(last, opened);
  }
  ASSERT_EQ(instants.size(), 1u) << "one start time for every host";
  const int64_t at = std::stoll(sh("date -d '" + *instants.begin() + "' +%s")) * 1'000'000'000;
  EXPECT_GE(first, at) << "never before the instant " << *instants.begin();
  EXPECT_EQ(m["merge"]["start_skew_ns"].get<int64_t>(), last - first);
  EXPECT_LT(last - first, 100'000'000) << "a wake-up's lateness, not a launch's";
  std::printf("windows opened %.3f ms apart\n", static_cast<double>(last - first) / 1e6);
  EXPECT_NEAR(m["results"]["iops"].get<double>(), sum, sum * 1e-12);
  EXPECT_GT(slurp(dir.path() + "/results/merged.html").size(), 1000u);
}

}  // namespace
}  // namespace ioacct::test
