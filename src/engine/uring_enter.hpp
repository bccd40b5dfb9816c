#pragma once
// io_uring_enter, made inline and counted: the engine's batch path and the
// fused path (engine/fused_ring.hpp) both enter the ring through ring_enter(),
// once per batch.
#include <liburing.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>

#include "engine/engine.hpp"
#include "engine/uapi.hpp"

namespace ioacct {

// io_uring_enter as an inline `syscall` instruction where the calling
// convention is known (returns the count, or -errno). Through libc's
// syscall() each call cost ~110 ns more here, spent on the instructions
// right after the kernel returns (most likely the `ret` out of the wrapper,
// mispredicted once the kernel has cleared the return predictions): ~3.5 ns
// per I/O at depth 32 on nop (bench/history/2026-12.md, "The enter call"). liburing
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

// How a ring is entered, fixed when it is set up.
struct EnterMode {
  bool registered_ring = false;  // through the registered ring fd
  bool ext_arg = false;          // the kernel takes a wait's timeout (IORING_FEAT_EXT_ARG, 5.11+)
  bool no_iowait = false;        // waits are not iowait (IORING_ENTER_NO_IOWAIT, 6.15+)
  bool sqpoll = false;           // the SQ thread submits: the call's count is not what it submitted
};

// Publishes the SQEs written up to `tail` since the last call and returns
// how many the kernel has not consumed yet: those, and any an enter left.
// (What liburing's __io_uring_flush_sq does.) The SQ thread takes all it is
// given, so with SQPOLL they are counted submitted here.
inline unsigned publish_sq(io_uring& ring, unsigned tail, const EnterMode& m, EngineCounters& k) noexcept {
  io_uring_sq& sq = ring.sq;
  if (sq.sqe_head != tail) {
    if (m.sqpoll) k.submitted += tail - sq.sqe_head;
    sq.sqe_head = tail;
    if (m.sqpoll) io_uring_smp_store_release(sq.ktail, tail);  // the SQ thread reads it concurrently
    else IO_URING_WRITE_ONCE(*sq.ktail, tail);
  }
  return tail - IO_URING_READ_ONCE(*sq.khead);
}

// One io_uring_enter of `ring`, counted in `k`. The timeout (0: none) and
// NO_IOWAIT go with a wait only. Returns the kernel's answer: the requests
// submitted, or -errno.
inline long ring_enter(io_uring& ring, const EnterMode& m, EngineCounters& k, unsigned to_submit,
                       unsigned min_complete, unsigned flags, uint64_t timeout_ns) noexcept {
  int fd = ring.ring_fd;
  if (m.registered_ring) {
    fd = ring.enter_ring_fd;
    flags |= IORING_ENTER_REGISTERED_RING;
  }
  EnterTimeout timeout;
  if (timeout_ns && min_complete && m.ext_arg) timeout.set(timeout_ns);
  if (m.no_iowait && min_complete) flags |= IORING_ENTER_NO_IOWAIT;
  const long ret = enter_syscall(fd, to_submit, min_complete, flags | timeout.flag(), timeout.arg(), timeout.size());
  ++k.syscalls;
  if (to_submit) ++k.submit_syscalls;
  if (min_complete) ++k.reap_syscalls;
  if (ret > 0 && !m.sqpoll) k.submitted += static_cast<uint64_t>(ret);
  return ret;
}

}  // namespace ioacct
