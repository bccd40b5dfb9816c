#pragma once
// Whether this machine's kernel can change a CPU's speed: a cpufreq policy
// and a cpuidle driver in sysfs. iowait reaches a CPU's speed only through
// them (cpufreq's boost on I/O wait; the idle state cpuidle picks), so with
// neither, sleeping with or without iowait differs only in how /proc/stat
// names the idle time. A VM often has neither: its host's drivers act on the
// host's view of the vCPU, which does not see the guest's iowait.
#include <string>

namespace ioacct {

struct CpuPower {
  bool cpufreq = false;  // a policy folder under cpufreq/: a driver sets frequencies
  bool cpuidle = false;  // cpuidle/current_driver names a driver, not "none"
};

// Reads `cpu_dir` (/sys/devices/system/cpu; another folder in tests). A file
// or folder that is missing reads as no driver.
CpuPower read_cpu_power(const std::string& cpu_dir = "/sys/devices/system/cpu");

}  // namespace ioacct
