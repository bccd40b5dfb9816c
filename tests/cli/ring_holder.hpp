#pragma once
// A process of another user's (nobody, 65534) that holds io_uring rings until
// it is killed: one SQPOLL ring (so the process has an iou-sqp thread) and
// `plain` rings without. Unprivileged SQPOLL needs 5.11+. RLIMIT_NOFILE is
// raised (as root, before the uid changes) to hold them all. The holder's
// exit code says where it failed: 100+errno for a plain ring.
#include <gtest/gtest.h>
#include <liburing.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <string>

namespace ioacct::test {

class RingHolder {
 public:
  explicit RingHolder(int plain) {
    int ready[2];
    if (pipe(ready) != 0) return;
    pid_ = fork();
    if (pid_ == 0) {
      close(ready[0]);
      const rlim_t want = static_cast<rlim_t>(plain) + 64;
      rlimit lim{want, want};
      if (setrlimit(RLIMIT_NOFILE, &lim) != 0) _exit(2);
      if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(3);
      io_uring_params p{};
      p.flags = IORING_SETUP_SQPOLL;
      p.sq_thread_idle = 1000;
      io_uring sq{};
      if (io_uring_queue_init_params(8, &sq, &p) != 0) _exit(4);
      for (int i = 0; i < plain; ++i) {
        io_uring r{};
        // Without CAP_IPC_LOCK a ring's memory counts against the user's
        // RLIMIT_MEMLOCK (8 MiB here, 1000 small rings fit), and the kernel
        // frees an earlier holder's rings a moment after it exits: ENOMEM
        // then means "wait a little" (up to 10 s).
        int e = io_uring_queue_init(8, &r, 0);
        for (int wait = 0; e == -ENOMEM && wait < 1000; ++wait) {
          usleep(10'000);
          e = io_uring_queue_init(8, &r, 0);
        }
        if (e != 0) _exit(100 - e);  // the rings are kept open until exit
      }
      const char ok = 1;
      if (write(ready[1], &ok, 1) != 1) _exit(6);
      for (;;) pause();
    }
    close(ready[1]);
    char ok = 0;
    ready_ = pid_ > 0 && read(ready[0], &ok, 1) == 1 && ok == 1;
    close(ready[0]);
    if (!ready_ && pid_ > 0) {
      int status = 0;
      waitpid(pid_, &status, 0);
      why_ = "the ring holder exited with " + std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1);
      pid_ = -1;
    }
  }
  ~RingHolder() {
    if (pid_ <= 0) return;
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  RingHolder(const RingHolder&) = delete;
  RingHolder& operator=(const RingHolder&) = delete;
  bool ready() const { return ready_; }
  pid_t pid() const { return pid_; }
  const std::string& why() const { return why_; }

 private:
  pid_t pid_ = -1;
  bool ready_ = false;
  std::string why_;
};

}  // namespace ioacct::test
