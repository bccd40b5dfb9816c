#pragma once
// A real Prometheus (Debian's) for the export tests: on 127.0.0.1 with a
// temporary storage folder, scraping every second and evaluating the rules
// it is given every second.
#include <sys/types.h>

#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

namespace ioacct::test {

double wall_now();  // seconds since the epoch, as Prometheus stamps samples

class Prometheus {
 public:
  // One job, "ioacct", scraping `target` ("127.0.0.1:PORT").
  Prometheus(const std::string& dir, const std::string& target, const std::string& rules);
  // One job, "ioacct", scraping each target with its own labels (a fleet:
  // {"127.0.0.1:PORT", "host: h1"}).
  Prometheus(const std::string& dir, const std::vector<std::pair<std::string, std::string>>& labelled_targets,
             const std::string& rules);
  ~Prometheus();
  Prometheus(const Prometheus&) = delete;
  Prometheus& operator=(const Prometheus&) = delete;
  bool ready() const;
  nlohmann::json api(const std::string& path, const std::vector<std::pair<std::string, std::string>>& params = {}) const;
  // Every value of the one series `query` gives over [start, end] at 1 s steps.
  std::vector<std::pair<double, double>> range(const std::string& query, double start, double end) const;
  // Each series `query` gives now (or at `time`, seconds since the epoch): its labels and value.
  std::vector<std::pair<nlohmann::json, double>> instant(const std::string& query, double time = 0) const;

 private:
  void start(const std::string& dir, const std::string& static_configs, const std::string& rules);
  pid_t pid_ = -1;
  int port_ = 0;
};

}  // namespace ioacct::test
