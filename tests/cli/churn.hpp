#pragma once
// Another BPF user beside the tracker: a child process that attaches and
// detaches a program on each of some tracepoints, over and over, as fast as
// it can. Each attach and detach changes the tracepoint's probe array (and
// its static call between one probe and several), which is what other BPF
// users do to a tracer's programs in production.
#include <bpf/bpf.h>
#include <linux/bpf.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <string>
#include <vector>

namespace ioacct::test {

class ProbeChurn {
 public:
  explicit ProbeChurn(const std::vector<std::string>& tracepoints) {
    // "r0 = 0; exit": the cheapest program there is; what it does is not the point.
    const bpf_insn insns[] = {
        {.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .src_reg = 0, .off = 0, .imm = 0},
        {.code = BPF_JMP | BPF_EXIT, .dst_reg = 0, .src_reg = 0, .off = 0, .imm = 0},
    };
    const int prog = bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "ioacct_churn", "GPL", insns, 2, nullptr);
    if (prog < 0) {
      error_ = std::string("cannot load the churn program: ") + std::strerror(errno);
      return;
    }
    cycles_ = static_cast<std::atomic<uint64_t>*>(
        mmap(nullptr, sizeof(std::atomic<uint64_t>), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
    if (cycles_ == MAP_FAILED) {
      cycles_ = nullptr;
      error_ = std::string("mmap: ") + std::strerror(errno);
      close(prog);
      return;
    }
    new (cycles_) std::atomic<uint64_t>(0);
    pid_ = fork();
    if (pid_ == 0) {
      std::vector<int> fds(tracepoints.size(), -1);
      for (;;) {
        for (size_t i = 0; i < tracepoints.size(); ++i) fds[i] = bpf_raw_tracepoint_open(tracepoints[i].c_str(), prog);
        for (int& fd : fds)
          if (fd >= 0) close(fd);
        cycles_->fetch_add(1, std::memory_order_relaxed);
      }
    }
    close(prog);
    if (pid_ < 0) error_ = std::string("fork: ") + std::strerror(errno);
  }
  ~ProbeChurn() { stop(); }
  ProbeChurn(const ProbeChurn&) = delete;
  ProbeChurn& operator=(const ProbeChurn&) = delete;

  bool running() const { return pid_ > 0; }
  const std::string& error() const { return error_; }

  // Stops the child (its programs detach as its descriptors close) and
  // returns how many attach-and-detach cycles it made.
  uint64_t stop() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
    }
    uint64_t n = cycles_ ? cycles_->load() : 0;
    if (cycles_) {
      munmap(cycles_, sizeof(std::atomic<uint64_t>));
      cycles_ = nullptr;
    }
    done_ = done_ ? done_ : n;
    return done_;
  }

 private:
  pid_t pid_ = -1;
  std::atomic<uint64_t>* cycles_ = nullptr;
  uint64_t done_ = 0;
  std::string error_;
};

}  // namespace ioacct::test
