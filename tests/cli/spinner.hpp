#pragma once
// A CPU-bound neighbour: a child process that spins on the machine's last
// CPU until the object goes, as a compiler or a noisy tenant would. The
// bench's figures change beside it; what a test asserts must not.
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

namespace ioacct::test {

class CpuSpinner {
 public:
  CpuSpinner() {
    pid_ = fork();
    if (pid_ == 0) {
      cpu_set_t set;
      CPU_ZERO(&set);
      CPU_SET(static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN)) - 1, &set);
      sched_setaffinity(0, sizeof set, &set);
      volatile unsigned long n = 0;
      for (;;) n = n + 1;  // volatile: the loop is not optimised away
    }
  }
  ~CpuSpinner() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  CpuSpinner(const CpuSpinner&) = delete;
  CpuSpinner& operator=(const CpuSpinner&) = delete;

 private:
  pid_t pid_ = -1;
};

}  // namespace ioacct::test
