#pragma once
// An `ioacct export` running in the background for the export tests, and
// small readers of the Prometheus text format.
#include <sys/types.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace ioacct::test {

// Started with `args` after "export" (under `prefix`, e.g. setpriv ...); its
// port is read from the "serving http(s)://ADDR:PORT/metrics" line on its
// stderr. port() is 0 when it did not start (err() says why).
class Exporter {
 public:
  explicit Exporter(std::vector<std::string> args, std::vector<std::string> prefix = {});
  ~Exporter();
  Exporter(const Exporter&) = delete;
  Exporter& operator=(const Exporter&) = delete;
  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  std::string url(const std::string& path = "/metrics") const;
  // curl's stdout for the URL, with `curl_args` before it (e.g. --cacert).
  std::string scrape(const std::string& curl_args = "") const;
  int stop();  // SIGTERM; its exit code, its stderr complete in err()
  const std::string& err() const { return err_; }
  bool https() const { return https_; }

 private:
  pid_t pid_ = -1;
  int err_fd_ = -1, port_ = 0, exit_code_ = -1;
  bool https_ = false;
  std::string err_;
};

// The value of the one sample whose line starts with `series` ("name{labels}").
std::optional<double> value(const std::string& text, const std::string& series);
// Samples of `name` whose labels contain `label_part` (e.g. pid="123").
std::vector<std::pair<std::string, double>> samples(const std::string& text, const std::string& name,
                                                    const std::string& label_part);
// promtool check metrics accepts the exposition (EXPECTs it).
void promtool_accepts(const std::string& exposition);
// A fresh TCP port on 127.0.0.1 nobody listens on (bound, then closed).
int free_port();

}  // namespace ioacct::test
