#include "acct/run_context.hpp"

#include <sched.h>
#include <sys/timex.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fstream>
#include <thread>

namespace ioacct {
namespace {

std::string cpu_model() {
  std::ifstream f("/proc/cpuinfo");
  std::string line;
  while (std::getline(f, line))
    if (line.rfind("model name", 0) == 0) {
      auto p = line.find(':');
      if (p != std::string::npos) return line.substr(line.find_first_not_of(' ', p + 1));
    }
  return {};
}

std::string boot_id() {
  std::ifstream f("/proc/sys/kernel/random/boot_id");
  std::string id;
  std::getline(f, id);
  return id;
}

int cpus_allowed() {
  cpu_set_t set;
  CPU_ZERO(&set);
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 0;
}

}  // namespace

RunContext gather_run_context() {
  RunContext c;
  utsname u{};
  uname(&u);
  char host[256] = {};
  gethostname(host, sizeof(host) - 1);
  c.host = host;
  c.kernel = std::string(u.sysname) + " " + u.release;
  c.cpu_model = cpu_model();
  c.cpus = std::thread::hardware_concurrency();
  c.cpus_allowed = cpus_allowed();
  c.boot_id = boot_id();
  c.clock = read_clock_sync();
  return c;
}

std::optional<ClockSync> read_clock_sync() {
  timex t{};
  const int state = adjtimex(&t);
  if (state < 0) return std::nullopt;
  ClockSync s;
  s.state = state;
  s.synchronised = state != TIME_ERROR && !(t.status & STA_UNSYNC);
  s.maxerror_us = t.maxerror;
  s.esterror_us = t.esterror;
  return s;
}

}  // namespace ioacct
