#include "cli/prometheus.hpp"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "cli/exporter.hpp"
#include "cli/run_binary.hpp"

namespace ioacct::test {

using nlohmann::json;

double wall_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

Prometheus::Prometheus(const std::string& dir, const std::string& target, const std::string& rules) {
  start(dir, "[{targets: ['" + target + "']}]", rules);
}

Prometheus::Prometheus(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& labelled_targets,
                       const std::string& rules) {
  std::string configs = "[";
  for (const auto& [target, labels] : labelled_targets)
    configs += (configs.size() > 1 ? ", " : "") + std::string("{targets: ['") + target + "'], labels: {" + labels + "}}";
  start(dir, configs + "]", rules);
}

void Prometheus::start(const std::string& dir, const std::string& static_configs, const std::string& rules) {
  port_ = free_port();
  std::ofstream(dir + "/prometheus.yml") << "global:\n"
                                            "  scrape_interval: 1s\n"
                                            "  scrape_timeout: 1s\n"
                                            "  evaluation_interval: 1s\n"
                                            "rule_files: ['" << rules << "']\n"
                                            "scrape_configs:\n"
                                            "  - job_name: ioacct\n"
                                            "    static_configs: " << static_configs << "\n";
  pid_ = fork();
  if (pid_ == 0) {
    const std::string log = dir + "/prometheus.log";
    freopen(log.c_str(), "w", stderr);
    execlp("prometheus", "prometheus", ("--config.file=" + dir + "/prometheus.yml").c_str(),
           ("--storage.tsdb.path=" + dir + "/data").c_str(),
           ("--web.listen-address=127.0.0.1:" + std::to_string(port_)).c_str(), "--log.level=warn",
           static_cast<char*>(nullptr));
    _exit(127);
  }
  for (int i = 0; i < 300 && !ready(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
}

Prometheus::~Prometheus() {
  kill(pid_, SIGTERM);
  waitpid(pid_, nullptr, 0);
}

bool Prometheus::ready() const {
  return sh("curl -s -o /dev/null -w '%{http_code}' http://127.0.0.1:" + std::to_string(port_) + "/-/ready || true") ==
         "200";
}

json Prometheus::api(const std::string& path, const std::vector<std::pair<std::string, std::string>>& params) const {
  std::string cmd = "curl -sS -G http://127.0.0.1:" + std::to_string(port_) + path;
  for (const auto& [k, v] : params) {
    std::string quoted;
    for (char c : v) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
    cmd += " --data-urlencode '" + k + "=" + quoted + "'";
  }
  return json::parse(sh(cmd));
}

std::vector<std::pair<double, double>> Prometheus::range(const std::string& query, double start, double end) const {
  const json r = api("/api/v1/query_range", {{"query", query},
                                             {"start", std::to_string(start)},
                                             {"end", std::to_string(end)},
                                             {"step", "1"}});
  std::vector<std::pair<double, double>> out;
  EXPECT_EQ(r["status"], "success") << query << ": " << r.dump();
  if (r["status"] != "success" || r["data"]["result"].empty()) return out;
  EXPECT_EQ(r["data"]["result"].size(), 1u) << query;
  for (const auto& v : r["data"]["result"][0]["values"])
    out.emplace_back(v[0].get<double>(), std::stod(v[1].get<std::string>()));
  return out;
}

std::vector<std::pair<json, double>> Prometheus::instant(const std::string& query, double time) const {
  std::vector<std::pair<std::string, std::string>> params = {{"query", query}};
  if (time > 0) params.emplace_back("time", std::to_string(time));
  const json r = api("/api/v1/query", params);
  std::vector<std::pair<json, double>> out;
  EXPECT_EQ(r["status"], "success") << query << ": " << r.dump();
  if (r["status"] != "success") return out;
  for (const auto& v : r["data"]["result"]) out.emplace_back(v["metric"], std::stod(v["value"][1].get<std::string>()));
  return out;
}

}  // namespace ioacct::test
