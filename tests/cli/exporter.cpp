#include "cli/exporter.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli/run_binary.hpp"

namespace ioacct::test {

Exporter::Exporter(std::vector<std::string> args, std::vector<std::string> prefix) {
  std::vector<std::string> argv_s = std::move(prefix);
  argv_s.push_back(IOACCT_BINARY);
  argv_s.push_back("export");
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  int err[2];
  EXPECT_EQ(pipe2(err, O_CLOEXEC), 0);
  pid_ = fork();
  if (pid_ == 0) {
    dup2(err[1], 2);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(argv[0], argv.data());
    _exit(127);
  }
  close(err[1]);
  err_fd_ = err[0];
  const std::regex serving(R"(serving (https?)://[^ ]+:(\d+)/metrics)");
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  std::smatch m;
  while (!std::regex_search(err_, m, serving) && std::chrono::steady_clock::now() < deadline) {
    char buf[4096];
    const ssize_t n = read(err_fd_, buf, sizeof buf);
    if (n <= 0) break;  // it exited
    err_.append(buf, static_cast<size_t>(n));
  }
  if (m.size() > 2) {
    https_ = m[1] == "https";
    port_ = std::stoi(m[2]);
  }
}

Exporter::~Exporter() {
  if (pid_ > 0 && exit_code_ < 0) stop();
}

std::string Exporter::url(const std::string& path) const {
  return std::string(https_ ? "https" : "http") + "://127.0.0.1:" + std::to_string(port_) + path;
}

std::string Exporter::scrape(const std::string& curl_args) const {
  return sh("curl -sS --max-time 30 " + curl_args + " " + url());
}

int Exporter::stop() {
  kill(pid_, SIGTERM);
  char buf[4096];
  for (ssize_t n; (n = read(err_fd_, buf, sizeof buf)) > 0;) err_.append(buf, static_cast<size_t>(n));
  close(err_fd_);
  int status = 0;
  waitpid(pid_, &status, 0);
  exit_code_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  return exit_code_;
}

std::optional<double> value(const std::string& text, const std::string& series) {
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);)
    if (line.rfind(series + " ", 0) == 0) return std::stod(line.substr(series.size() + 1));
  return std::nullopt;
}

std::vector<std::pair<std::string, double>> samples(const std::string& text, const std::string& name,
                                                    const std::string& label_part) {
  std::vector<std::pair<std::string, double>> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(name + "{", 0) != 0 || line.find(label_part) == std::string::npos) continue;
    const size_t sp = line.rfind(' ');
    out.emplace_back(line.substr(0, sp), std::stod(line.substr(sp + 1)));
  }
  return out;
}

void promtool_accepts(const std::string& exposition) {
  TempDir dir;
  const std::string file = dir.path() + "/metrics.txt";
  std::ofstream(file) << exposition << "\n";  // sh() took the last newline off
  // promtool reads the exposition on stdin; lint findings and errors print and exit non-zero.
  EXPECT_EQ(sh("promtool check metrics < " + file + " 2>&1; echo rc=$?"), "rc=0");
}

int free_port() {
  const int s = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  EXPECT_EQ(bind(s, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
  socklen_t len = sizeof addr;
  getsockname(s, reinterpret_cast<sockaddr*>(&addr), &len);
  close(s);
  return ntohs(addr.sin_port);
}

}  // namespace ioacct::test
