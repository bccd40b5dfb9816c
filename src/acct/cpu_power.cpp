#include "acct/cpu_power.hpp"

#include <filesystem>
#include <fstream>

namespace ioacct {

CpuPower read_cpu_power(const std::string& cpu_dir) {
  namespace fs = std::filesystem;
  CpuPower p;
  std::error_code ec;
  for (fs::directory_iterator it(cpu_dir + "/cpufreq", ec), end; !ec && it != end; it.increment(ec))
    if (it->path().filename().string().rfind("policy", 0) == 0) p.cpufreq = true;
  std::ifstream f(cpu_dir + "/cpuidle/current_driver");
  std::string driver;
  p.cpuidle = static_cast<bool>(f >> driver) && driver != "none";
  return p;
}

}  // namespace ioacct
