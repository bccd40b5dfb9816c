// io_uring engine (and nop, the same ring submitting IORING_OP_NOP).
#include <fmt/format.h>
#include <sys/resource.h>

#include <cerrno>
#include <fstream>
#include <string>

#include "common/errors.hpp"
#include "engine/engine_impl.hpp"
#include "engine/uapi.hpp"

namespace ioacct {
namespace {

// Asked for by default, most wanted first dropped last: each one the kernel
// rejects is dropped and the ring set up again (issue "modes" makes them
// individually selectable). DEFER_TASKRUN needs SINGLE_ISSUER.
constexpr uint32_t kDefaultFlags =
    IORING_SETUP_COOP_TASKRUN | IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN;
constexpr uint32_t kDropOrder[] = {IORING_SETUP_DEFER_TASKRUN, IORING_SETUP_SINGLE_ISSUER,
                                   IORING_SETUP_COOP_TASKRUN};

std::string read_sysctl(const char* path) {
  std::ifstream f(path);
  std::string v;
  if (!(f >> v)) return {};
  return v;
}

[[noreturn]] void throw_setup_error(int err) {
  const std::string disabled = read_sysctl("/proc/sys/kernel/io_uring_disabled");
  if ((err == -EPERM || err == -EACCES) && !disabled.empty() && disabled != "0")
    throw NotAvailable(fmt::format(
        "io_uring is disabled by sysctl kernel.io_uring_disabled={} ({}); "
        "enable it with 'sysctl kernel.io_uring_disabled=0' or use --engine psync",
        disabled, errno_text(err)));
  if (err == -ENOSYS)
    throw NotAvailable("io_uring is not available in this kernel (ENOSYS); use --engine psync");
  if (err == -EPERM || err == -EACCES)
    throw NotAvailable(fmt::format("io_uring_setup refused: {}; use --engine psync", errno_text(err)));
  if (err == -EMFILE || err == -ENFILE) {
    rlimit rl{};
    getrlimit(RLIMIT_NOFILE, &rl);
    throw RuntimeError(fmt::format("io_uring_setup: {}: each thread's ring needs a file descriptor "
                                   "and RLIMIT_NOFILE is {}; raise it with 'ulimit -n' or use fewer --threads",
                                   errno_text(err), rl.rlim_cur));
  }
  if (err == -ENOMEM)
    throw RuntimeError(fmt::format("io_uring_setup: {}; the ring may exceed RLIMIT_MEMLOCK "
                                   "(raise it with 'ulimit -l') or lower --iodepth",
                                   errno_text(err)));
  throw RuntimeError(fmt::format("io_uring_setup: {}", errno_text(err)));
}

}  // namespace

UringEngine::UringEngine(const EngineOptions& opts, bool nop) : fds_(opts.fds), nop_(nop) {
  uint32_t flags = kDefaultFlags;
  size_t drop = 0;
  for (;;) {
    io_uring_params p{};
    p.flags = flags;
    // The CQ is twice the SQ (the kernel default, made explicit): in-flight
    // never exceeds depth <= SQ size, so the CQ cannot overflow, and with
    // FEAT_NODROP even an overflow would be kept by the kernel, not lost.
    p.flags |= IORING_SETUP_CQSIZE;
    p.cq_entries = 2 * std::max(opts.depth, 1u);
    int ret = io_uring_queue_init_params(std::max(opts.depth, 1u), &ring_, &p);
    if (ret == 0) {
      flags_ = flags;
      if (!(p.features & IORING_FEAT_NODROP))
        throw NotAvailable("this kernel's io_uring may drop completions (no FEAT_NODROP, "
                           "before 5.5); use --engine psync");
      return;
    }
    if (ret == -EINVAL && drop < std::size(kDropOrder)) {
      flags &= ~kDropOrder[drop++];
      continue;
    }
    throw_setup_error(ret);
  }
}

UringEngine::~UringEngine() { io_uring_queue_exit(&ring_); }

unsigned UringEngine::queue(std::span<const IoRequest> reqs) noexcept {
  // One look at the kernel's head for the whole batch, then SQEs filled by
  // index: io_uring_get_sqe() would re-read the head for every request.
  io_uring_sq& sq = ring_.sq;
  const unsigned n = static_cast<unsigned>(std::min<size_t>(reqs.size(), io_uring_sq_space_left(&ring_)));
  const unsigned tail = sq.sqe_tail;
  for (unsigned i = 0; i < n; ++i) {
    const IoRequest& r = reqs[i];
    io_uring_sqe* sqe = &sq.sqes[(tail + i) & sq.ring_mask];
    if (nop_) {
      io_uring_prep_nop(sqe);
      // NOP completes with res 0; carry the length so the completion can
      // report the request as whole (nop moves no data; the runner knows).
      sqe->user_data = (static_cast<uint64_t>(r.len) << 32) | r.tag;
    } else {
      const int fd = r.file < fds_.size() ? fds_[r.file] : -1;
      if (r.op == IoOp::Read)
        io_uring_prep_read(sqe, fd, r.buf, r.len, r.offset);
      else
        io_uring_prep_write(sqe, fd, r.buf, r.len, r.offset);
      sqe->user_data = r.tag;
    }
  }
  sq.sqe_tail = tail + n;  // what a full SQ leaves out is not an error: the caller submits first
  return n;
}

int UringEngine::enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept {
  const unsigned to_submit = io_uring_sq_ready(&ring_);
  // Completions already posted satisfy the wait without a syscall.
  const bool need_call = to_submit > 0 || wait_nr > io_uring_cq_ready(&ring_) ||
                         (wait_nr == 0 && (flags_ & IORING_SETUP_DEFER_TASKRUN));
  if (need_call) {
    int ret;
    if (timeout_ns && wait_nr) {
      __kernel_timespec ts{static_cast<long long>(timeout_ns / 1'000'000'000ull),
                           static_cast<long long>(timeout_ns % 1'000'000'000ull)};
      io_uring_cqe* cqe = nullptr;
      ret = io_uring_submit_and_wait_timeout(&ring_, &cqe, wait_nr, &ts, nullptr);
    } else if (wait_nr == 0 && (flags_ & IORING_SETUP_DEFER_TASKRUN)) {
      // With DEFER_TASKRUN completions are only posted when we enter with
      // GETEVENTS; a bare submit would never see them.
      ret = io_uring_submit_and_get_events(&ring_);
    } else {
      ret = io_uring_submit_and_wait(&ring_, wait_nr);
    }
    ++counters_.syscalls;
    if (to_submit) ++counters_.submit_syscalls;
    if (wait_nr) ++counters_.reap_syscalls;
    if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EAGAIN && ret != -EBUSY) return ret;
    counters_.submitted += to_submit - io_uring_sq_ready(&ring_);
  }

  unsigned head, n = 0;
  io_uring_cqe* cqe;
  io_uring_for_each_cqe(&ring_, head, cqe) {
    if (n == out.size()) break;
    if (nop_) {
      const uint32_t len = static_cast<uint32_t>(cqe->user_data >> 32);
      out[n++] = {static_cast<uint32_t>(cqe->user_data), cqe->res < 0 ? cqe->res : static_cast<int32_t>(len)};
    } else {
      out[n++] = {static_cast<uint32_t>(cqe->user_data), cqe->res};
    }
  }
  io_uring_cq_advance(&ring_, n);
  counters_.reaped += n;
  return static_cast<int>(n);
}

std::string UringEngine::describe() const {
  return fmt::format("{} (setup flags {}, sq {}, cq {})", nop_ ? "nop on io_uring" : "io_uring",
                     setup_flag_names(flags_ & ~IORING_SETUP_CQSIZE), ring_.sq.ring_entries,
                     ring_.cq.ring_entries);
}

}  // namespace ioacct
