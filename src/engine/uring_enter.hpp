#pragma once
// io_uring_enter, made inline: the engine's batch path and the fused path
// (engine/fused_ring.hpp) both call it once per batch.
#include <liburing.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

namespace ioacct {

// io_uring_enter as an inline `syscall` instruction where the calling
// convention is known (returns the count, or -errno). Through libc's
// syscall() each call cost ~110 ns more here, spent on the instructions
// right after the kernel returns (most likely the `ret` out of the wrapper,
// mispredicted once the kernel has cleared the return predictions): ~3.5 ns
// per I/O at depth 32 on nop (bench/README.md, "The enter call"). liburing
// makes its calls inline too.
inline long enter_syscall(int fd, unsigned to_submit, unsigned min_complete, unsigned flags, const void* arg,
                          size_t argsz) noexcept {
#if defined(__x86_64__)
  long ret;
  register unsigned r10 __asm__("r10") = flags;
  register const void* r8 __asm__("r8") = arg;
  register size_t r9 __asm__("r9") = argsz;
  __asm__ volatile("syscall"
                   : "=a"(ret)
                   : "0"(static_cast<long>(__NR_io_uring_enter)), "D"(fd), "S"(to_submit), "d"(min_complete),
                     "r"(r10), "r"(r8), "r"(r9)
                   : "rcx", "r11", "memory");
  return ret;  // the kernel's own: -errno on failure
#else
  const long ret = syscall(__NR_io_uring_enter, fd, to_submit, min_complete, flags, arg, argsz);
  return ret < 0 ? -errno : ret;
#endif
}

// A wait's timeout, passed with IORING_ENTER_EXT_ARG (5.11+); none until
// set(). It points into itself: make one per call, never copy it.
class EnterTimeout {
 public:
  EnterTimeout() = default;
  EnterTimeout(const EnterTimeout&) = delete;
  EnterTimeout& operator=(const EnterTimeout&) = delete;
  void set(uint64_t ns) noexcept {
    ts_.tv_sec = static_cast<long long>(ns / 1'000'000'000ull);
    ts_.tv_nsec = static_cast<long long>(ns % 1'000'000'000ull);
    arg_.ts = reinterpret_cast<uint64_t>(&ts_);
    set_ = true;
  }
  unsigned flag() const noexcept { return set_ ? IORING_ENTER_EXT_ARG : 0; }
  const void* arg() const noexcept { return set_ ? &arg_ : nullptr; }
  size_t size() const noexcept { return set_ ? sizeof(arg_) : 0; }

 private:
  __kernel_timespec ts_{};
  io_uring_getevents_arg arg_{};
  bool set_ = false;
};

}  // namespace ioacct
