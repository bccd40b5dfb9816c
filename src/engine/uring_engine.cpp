// io_uring engine (and nop, the same ring submitting IORING_OP_NOP).
//
// Submission and waiting go through our own io_uring_enter call rather than
// liburing's helpers: the modes (SQPOLL wake-ups, NO_IOWAIT, registered ring,
// spinning on the CQ) need flags liburing 2.3 cannot pass, and counting
// syscalls exactly needs to know when one is made.
#include <fmt/format.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <string>

#include "acct/clock.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "common/units.hpp"
#include "engine/engine_impl.hpp"
#include "engine/sqe.hpp"
#include "engine/uapi.hpp"
#include "engine/uring_enter.hpp"

namespace ioacct {
namespace {

[[noreturn]] void throw_setup_error(int err, const UringOptions& o) {
  const std::string disabled = read_first_line("/proc/sys/kernel/io_uring_disabled");
  if ((err == -EPERM || err == -EACCES) && !disabled.empty() && disabled != "0")
    throw NotAvailable(fmt::format(
        "io_uring is disabled by sysctl kernel.io_uring_disabled={} ({}); "
        "enable it with 'sysctl kernel.io_uring_disabled=0' or use --engine psync",
        disabled, errno_text(err)));
  if (err == -ENOSYS)
    throw NotAvailable("io_uring is not available in this kernel (ENOSYS); use --engine psync");
  if ((err == -EPERM || err == -EACCES) && o.sqpoll)
    throw NotAvailable(fmt::format("--sqpoll: the kernel refused an SQ polling thread: {} (before 5.11 it "
                                   "needs CAP_SYS_NICE or root)", errno_text(err)));
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
  if (err == -EINVAL && o.sq_cpu >= 0)
    throw RuntimeError(fmt::format("--sq-cpu: the kernel refused CPU {} for the SQ thread ({})", o.sq_cpu, errno_text(err)));
  throw RuntimeError(fmt::format("io_uring_setup: {}", errno_text(err)));
}

struct FlagChoice {
  uint32_t bit;
  FlagWish wish;
  bool by_default;  // asked for when the wish is Default
  const char* option;
  const char* name;
  const char* since;  // the kernel that added it
};

std::string memlock_text() {
  rlimit rl{};
  getrlimit(RLIMIT_MEMLOCK, &rl);
  return rl.rlim_cur == RLIM_INFINITY ? std::string("unlimited") : format_size(rl.rlim_cur);
}

}  // namespace

UringEngine::UringEngine(const EngineOptions& opts, bool nop)
    : fds_(opts.fds), is_block_(opts.is_block), discard_cmd_(!opts.force_blkdiscard), o_(opts.uring), nop_(nop) {
  is_block_.resize(fds_.size(), 0);
  trims_.resize(std::max(opts.depth, 1u));
  inline_done_.reserve(std::max(opts.depth, 1u));
  setup(opts);
  try {
    register_resources(opts);
  } catch (...) {
    io_uring_queue_exit(&ring_);
    throw;
  }
  // The fused path writes plain SQEs and sleeps in io_uring_enter: every
  // mode that changes either keeps the batch path.
  if (!o_.sqpoll && !o_.iopoll && !o_.vectored && !o_.nowait && !o_.force_async && o_.wait == WaitMode::Sleep)
    fused_.emplace(FusedRing::Config{.ring = &ring_,
                                     .counters = &counters_,
                                     .fds = fds_.data(),
                                     .nop = nop_,
                                     .fixed_files = fixed_files_,
                                     .fixed_bufs = fixed_bufs_,
                                     .enter = enter_mode()});
}

void UringEngine::setup(const EngineOptions& opts) {
  if (o_.no_sqarray == FlagWish::On)
    throw NotAvailable("--no-sqarray: this ioacct is built with liburing 2.3, which writes the SQ array "
                       "at set-up; IORING_SETUP_NO_SQARRAY needs liburing 2.5 or later");
  // Flags we want by default, each dropped if the kernel refuses it, unless
  // it was asked for by name: then the refusal is the error. DEFER_TASKRUN
  // cannot go with SQPOLL (the SQ thread, not us, would have to run it).
  const FlagChoice choices[] = {
      {IORING_SETUP_DEFER_TASKRUN, o_.defer_taskrun, !o_.sqpoll, "--defer-taskrun", "DEFER_TASKRUN", "6.1"},
      {IORING_SETUP_SINGLE_ISSUER, o_.single_issuer, true, "--single-issuer", "SINGLE_ISSUER", "6.0"},
      {IORING_SETUP_COOP_TASKRUN, o_.coop_taskrun, true, "--coop-taskrun", "COOP_TASKRUN", "5.19"},
  };
  uint32_t base = IORING_SETUP_CQSIZE;
  if (o_.sqpoll) base |= IORING_SETUP_SQPOLL | (o_.sq_cpu >= 0 ? IORING_SETUP_SQ_AFF : 0);
  if (o_.sqpoll && o_.attach_wq_fd >= 0) base |= IORING_SETUP_ATTACH_WQ;
  if (o_.iopoll) base |= IORING_SETUP_IOPOLL;
  uint32_t wanted = 0, demanded = 0;
  for (const auto& c : choices) {
    if (c.wish == FlagWish::On) demanded |= c.bit;
    if (c.wish == FlagWish::On || (c.wish == FlagWish::Default && c.by_default)) wanted |= c.bit;
  }
  // Spinning on the CQ needs to be told when completions wait for us to
  // enter the kernel (COOP/DEFER task work): IORING_SQ_TASKRUN says so.
  const bool spins = o_.wait != WaitMode::Sleep;
  for (;;) {
    uint32_t flags = base | wanted;
    if (spins && (flags & (IORING_SETUP_COOP_TASKRUN | IORING_SETUP_DEFER_TASKRUN))) flags |= IORING_SETUP_TASKRUN_FLAG;
    io_uring_params p{};
    p.flags = flags;
    // The CQ is twice the SQ (the kernel default, made explicit): in-flight
    // never exceeds depth <= SQ size, so the CQ cannot overflow, and with
    // FEAT_NODROP even an overflow would be kept by the kernel, not lost.
    p.cq_entries = 2 * std::max(opts.depth, 1u) * (o_.sqpoll ? 2 : 1);
    p.sq_thread_cpu = o_.sq_cpu >= 0 ? static_cast<uint32_t>(o_.sq_cpu) : 0;
    p.sq_thread_idle = o_.sq_idle_ms;
    p.wq_fd = o_.attach_wq_fd >= 0 ? static_cast<uint32_t>(o_.attach_wq_fd) : 0;
    // With SQPOLL the SQ thread publishes its head only after a whole batch,
    // so a completion can be seen before its SQE slot is given back: twice
    // the depth in SQ entries means the ring is never full for that reason.
    const unsigned entries = std::max(opts.depth, 1u) * (o_.sqpoll ? 2 : 1);
    const int ret = io_uring_queue_init_params(entries, &ring_, &p);
    if (ret == 0) {
      flags_ = flags;
      features_ = p.features;
      ring_ok_ = true;
      break;
    }
    if (ret == -EINVAL) {
      // Drop the first flag we only wanted by default and try again.
      bool dropped = false;
      for (const auto& c : choices) {
        if ((wanted & c.bit) && !(demanded & c.bit)) {
          wanted &= ~c.bit;
          dropped = true;
          fallbacks_.push_back(fmt::format("{}: the kernel refused it with the rest of this set-up ({}; added in "
                                           "{}); the ring runs without it",
                                           c.name, errno_text(ret), c.since));
          break;
        }
      }
      if (dropped) continue;
      if (demanded) {
        std::string names;
        for (const auto& c : choices)
          if (demanded & c.bit) names += (names.empty() ? "" : ", ") + std::string(c.option);
        throw NotAvailable(fmt::format("{}: the kernel refused the ring set-up flags asked for ({}) with "
                                       "the rest of this configuration", names, errno_text(ret)));
      }
    }
    throw_setup_error(ret, o_);
  }
  if (!(features_ & IORING_FEAT_NODROP)) {
    io_uring_queue_exit(&ring_);
    throw NotAvailable("this kernel's io_uring may drop completions (no FEAT_NODROP, before 5.5); "
                       "use --engine psync");
  }
  if (o_.no_iowait && !(features_ & IORING_FEAT_NO_IOWAIT)) {
    io_uring_queue_exit(&ring_);
    throw NotAvailable("--no-iowait: this kernel has no IORING_ENTER_NO_IOWAIT (added in 6.15)");
  }
}

// Each resource asked for by default is registered if the kernel and the
// limits allow, and otherwise named in fallbacks_ with what to do; asked for
// by name (FlagWish::On), a refusal is the error.
void UringEngine::register_resources(const EngineOptions& opts) {
  auto refused = [&](FlagWish wish, const char* option, std::string why) {
    if (wish == FlagWish::On) throw RuntimeError(fmt::format("{}: {}", option, why));
    fallbacks_.push_back(std::move(why));
  };
  if (o_.fixed_files != FlagWish::Off && !nop_ && !fds_.empty()) {
    const int ret = io_uring_register_files(&ring_, fds_.data(), static_cast<unsigned>(fds_.size()));
    if (ret == 0) {
      fixed_files_ = true;
    } else {
      rlimit rl{};
      getrlimit(RLIMIT_NOFILE, &rl);
      refused(o_.fixed_files, "--fixed-files",
              ret == -EMFILE ? fmt::format("registered files: {} files are more than RLIMIT_NOFILE ({}) allows ({}); "
                                           "raise it with 'ulimit -n'", fds_.size(), rl.rlim_cur, errno_text(ret))
                             : fmt::format("registered files: registering {} files: {}; each I/O looks its file up "
                                           "instead (--no-fixed-files leaves them out without trying)",
                                           fds_.size(), errno_text(ret)));
    }
  }
  if (o_.fixed_bufs != FlagWish::Off && !o_.vectored && !nop_ && !opts.buffers.empty()) {
    const int ret = io_uring_register_buffers(&ring_, opts.buffers.data(), static_cast<unsigned>(opts.buffers.size()));
    size_t bytes = 0;
    for (const auto& b : opts.buffers) bytes += b.iov_len;
    if (ret == 0) {
      fixed_bufs_ = true;
    } else if (ret == -ENOMEM || ret == -EPERM) {
      // Registered buffers are pinned, and without CAP_IPC_LOCK the kernel
      // charges them to RLIMIT_MEMLOCK.
      refused(o_.fixed_bufs, "--fixed-bufs",
              fmt::format("registered buffers: {} of buffers are locked memory and RLIMIT_MEMLOCK is {} ({}); "
                          "each I/O pins its pages instead; raise the limit with 'ulimit -l', or lower --iodepth or --bs",
                          format_size(bytes), memlock_text(), errno_text(ret)));
    } else {
      refused(o_.fixed_bufs, "--fixed-bufs",
              fmt::format("registered buffers: registering {} buffers of {}: {}; each I/O pins its pages instead",
                          opts.buffers.size(), format_size(opts.buffers.front().iov_len), errno_text(ret)));
    }
  }
  if (o_.register_ring != FlagWish::Off) {
    const int ret = io_uring_register_ring_fd(&ring_);
    if (ret == 1) registered_ring_ = true;
    else
      refused(o_.register_ring, "--register-ring",
              fmt::format("registered ring fd: {} (added in 5.18); each call looks the ring's fd up instead",
                          errno_text(ret < 0 ? ret : -EINVAL)));
  }
  if (o_.vectored) iovs_.resize(std::max(opts.depth, 1u));
}

UringEngine::~UringEngine() {
  if (!ring_ok_) return;
  // The ring is torn down by a kernel worker after close, which would drop
  // the registered files' references later still: a block device held with
  // O_EXCL would stay claimed after its owner closed it, and the next opener
  // would find it busy. Unregistering first drops them before we return.
  if (fixed_files_) io_uring_unregister_files(&ring_);
  io_uring_queue_exit(&ring_);
}

unsigned UringEngine::queue(std::span<const IoRequest> reqs) noexcept {
  // One look at the kernel's head for the whole batch, then SQEs filled by
  // index: io_uring_get_sqe() would re-read the head for every request.
  io_uring_sq& sq = ring_.sq;
  const unsigned n = static_cast<unsigned>(std::min<size_t>(reqs.size(), io_uring_sq_space_left(&ring_)));
  const unsigned tail = sq.sqe_tail;
  if (nop_) {
    for (unsigned i = 0; i < n; ++i) {
      // The length rides along, so that the completion reports the request
      // as whole (nop moves no data; the runner knows).
      sqe_nop(&sq.sqes[(tail + i) & sq.ring_mask], reqs[i].len, reqs[i].tag);
    }
    sq.sqe_tail = tail + n;
    return n;
  }
  unsigned used = 0;  // SQEs filled: a discard made inline by BLKDISCARD takes none
  for (unsigned i = 0; i < n; ++i) {
    const IoRequest& r = reqs[i];
    io_uring_sqe* sqe = &sq.sqes[(tail + used) & sq.ring_mask];
    const int fd = fixed_files_ ? static_cast<int>(r.file) : (r.file < fds_.size() ? fds_[r.file] : -1);
    switch (r.op) {
      case IoOp::Read:
      case IoOp::Write: {
        const bool read = r.op == IoOp::Read;
        if (o_.vectored) {
          iovec& iov = iovs_[r.tag];
          iov = {r.buf, r.len};
          if (read) io_uring_prep_readv(sqe, fd, &iov, 1, r.offset);
          else io_uring_prep_writev(sqe, fd, &iov, 1, r.offset);
        } else {
          sqe_rw(sqe, read, fd, fixed_files_, fixed_bufs_, r.buf, r.len, r.offset, r.tag);
        }
        if (o_.nowait && !r.may_block) sqe->rw_flags = RWF_NOWAIT;
        break;
      }
      case IoOp::Fsync: io_uring_prep_fsync(sqe, fd, 0); break;
      case IoOp::Fdatasync: io_uring_prep_fsync(sqe, fd, IORING_FSYNC_DATASYNC); break;
      case IoOp::Trim:
        if (r.file < is_block_.size() && is_block_[r.file]) {
          if (!discard_cmd_) {
            inline_done_.push_back({r.tag, blkdiscard(r)});
            continue;
          }
          prep_trim(sqe, fd, r);
        } else {
          io_uring_prep_fallocate(sqe, fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(r.offset),
                                  static_cast<off_t>(r.len));
        }
        break;
    }
    sqe->user_data = r.tag | (sqe->opcode == IORING_OP_URING_CMD ? kDiscardTag : 0);
    if (fixed_files_) sqe->flags |= IOSQE_FIXED_FILE;
    if (o_.force_async) sqe->flags |= IOSQE_ASYNC;
    ++used;
  }
  sq.sqe_tail = tail + used;  // what a full SQ leaves out is not an error: the caller submits first
  return n;
}

// A block device's discard as an io_uring command (6.12+): the range in
// addr (start) and addr3 (length), everything else zero.
void UringEngine::prep_trim(io_uring_sqe* sqe, int fd, const IoRequest& r) noexcept {
  io_uring_prep_rw(IORING_OP_URING_CMD, sqe, fd, nullptr, 0, 0);
  sqe->cmd_op = BLOCK_URING_CMD_DISCARD;
  sqe->__pad1 = 0;
  sqe->addr = r.offset;
  sqe->addr3 = r.len;
  trims_[r.tag] = r;
}

// BLKDISCARD, made here and now: the kernel has no discard command.
int32_t UringEngine::blkdiscard(const IoRequest& r) noexcept {
  const int fd = r.file < fds_.size() ? fds_[r.file] : -1;
  uint64_t range[2] = {r.offset, r.len};
  ++counters_.syscalls;
  ++counters_.submit_syscalls;
  ++counters_.submitted;
  return ::ioctl(fd, BLKDISCARD, range) < 0 ? -errno : 0;
}

// Publishes the SQEs queued since the last call; returns how many the kernel
// has not consumed yet.
unsigned UringEngine::flush_sq() noexcept { return publish_sq(ring_, ring_.sq.sqe_tail, enter_mode(), counters_); }

int UringEngine::sys_enter(unsigned to_submit, unsigned min_complete, unsigned flags, uint64_t timeout_ns) noexcept {
  return static_cast<int>(ring_enter(ring_, enter_mode(), counters_, to_submit, min_complete, flags, timeout_ns));
}

EnterMode UringEngine::enter_mode() const noexcept {
  return {.registered_ring = registered_ring_,
          .ext_arg = (features_ & IORING_FEAT_EXT_ARG) != 0,
          .no_iowait = o_.no_iowait,
          .sqpoll = o_.sqpoll};
}

// Busy-polls the CQ until wait_nr completions are posted or `until_ns`.
// Completions that wait for task work (COOP/DEFER_TASKRUN: the kernel sets
// IORING_SQ_TASKRUN) or for polling (IOPOLL) need a non-blocking enter.
bool UringEngine::spin_wait(unsigned wait_nr, uint64_t until_ns) noexcept {
  for (unsigned spins = 0;; ++spins) {
    if (io_uring_cq_ready(&ring_) >= wait_nr) return true;
    const unsigned kflags = IO_URING_READ_ONCE(*ring_.sq.kflags);
    if (o_.iopoll || (kflags & IORING_SQ_TASKRUN)) {
      sys_enter(0, 0, IORING_ENTER_GETEVENTS, 0);
      ++counters_.reap_syscalls;  // it reaps, though it does not wait
      continue;
    }
    if ((spins & 63) == 63 && now_ns() >= until_ns) return false;
    __builtin_ia32_pause();
  }
}

int UringEngine::enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept {
  // Discards made inline are already done: never wait for them.
  const unsigned done_inline = static_cast<unsigned>(inline_done_.size());
  wait_nr = wait_nr > done_inline ? wait_nr - done_inline : 0;
  const unsigned pending = flush_sq();
  unsigned to_submit = 0, flags = 0;
  if (o_.sqpoll) {
    // The SQ thread submits; it only needs a kick once it has gone idle. The
    // full barrier orders our tail store before the flags load (x86 may
    // reorder a store after a later load): without it we can miss a thread
    // that is just going to sleep, and stall until the next wake-up.
    io_uring_smp_mb();
    if (pending && (IO_URING_READ_ONCE(*ring_.sq.kflags) & IORING_SQ_NEED_WAKEUP)) flags |= IORING_ENTER_SQ_WAKEUP;
  } else {
    to_submit = pending;
  }
  const bool defer = flags_ & IORING_SETUP_DEFER_TASKRUN;
  bool waited = false;
  if (o_.wait != WaitMode::Sleep && wait_nr) {
    if (to_submit || flags) {
      const int ret = sys_enter(to_submit, 0, flags | (o_.iopoll || defer ? IORING_ENTER_GETEVENTS : 0), 0);
      if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) return ret;
      to_submit = 0;
      flags = 0;
    }
    const uint64_t now = now_ns();
    const uint64_t limit = o_.wait == WaitMode::Hybrid ? o_.hybrid_spin_ns : timeout_ns;
    const bool got = spin_wait(wait_nr, limit ? now + limit : UINT64_MAX);
    waited = got || o_.wait == WaitMode::Spin;  // a spinner that timed out returns what it has
  }
  if (!waited) {
    const bool need_wait = wait_nr > io_uring_cq_ready(&ring_);
    // With DEFER_TASKRUN (or IOPOLL) completions are only posted when we
    // enter with GETEVENTS, even when we do not mean to wait.
    const bool need_events = need_wait || ((defer || o_.iopoll) && wait_nr == 0 && (to_submit || !io_uring_cq_ready(&ring_)));
    if (to_submit || flags || need_events) {
      const int ret = sys_enter(to_submit, need_wait ? wait_nr : 0, flags | (need_events ? IORING_ENTER_GETEVENTS : 0),
                                need_wait ? timeout_ns : 0);
      if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EAGAIN && ret != -EBUSY) return ret;
    }
  }

  unsigned n = 0;
  if (done_inline) {
    const unsigned k = std::min<unsigned>(done_inline, static_cast<unsigned>(out.size()));
    for (unsigned i = 0; i < k; ++i) out[n++] = inline_done_[i];
    inline_done_.erase(inline_done_.begin(), inline_done_.begin() + k);
    counters_.reaped += k;
  }
  // The tail is read once for the whole batch (io_uring_for_each_cqe reads
  // it again for every CQE), with acquire: it orders the CQE reads after it.
  io_uring_cq& cq = ring_.cq;
  const unsigned head = *cq.khead;
  const unsigned reaped = std::min(io_uring_smp_load_acquire(cq.ktail) - head, static_cast<unsigned>(out.size()) - n);
  if (nop_) {
    for (unsigned i = 0; i < reaped; ++i) {
      const io_uring_cqe& cqe = cq.cqes[io_uring_cqe_index(&ring_, head + i, cq.ring_mask)];
      out[n++] = {static_cast<uint32_t>(cqe.user_data), nop_result(cqe.user_data, cqe.res)};
    }
  } else {
    for (unsigned i = 0; i < reaped; ++i) {
      const io_uring_cqe& cqe = cq.cqes[io_uring_cqe_index(&ring_, head + i, cq.ring_mask)];
      const uint32_t tag = static_cast<uint32_t>(cqe.user_data);
      int32_t res = cqe.res;
      if (cqe.user_data & kDiscardTag) [[unlikely]] {
        // A kernel without the block discard command (before 6.12) answers
        // EOPNOTSUPP, as does a device that cannot discard: BLKDISCARD tells
        // which, and if it works, takes every later discard.
        if (res == -EOPNOTSUPP && discard_cmd_) {
          res = blkdiscard(trims_[tag]);
          if (res == 0) discard_cmd_ = false;
        }
      }
      out[n++] = {tag, res};
    }
  }
  io_uring_cq_advance(&ring_, reaped);
  counters_.reaped += reaped;
  return static_cast<int>(n);
}

std::string UringEngine::describe() const {
  std::string extras;
  auto add = [&](bool on, const char* what) {
    if (on) extras += fmt::format(", {}", what);
  };
  add(fixed_files_, "registered files");
  add(fixed_bufs_, "registered buffers");
  add(registered_ring_, "registered ring fd");
  add(o_.vectored && !nop_, "vectored");
  add(o_.nowait && !nop_, "RWF_NOWAIT");
  add(o_.force_async, "IOSQE_ASYNC");
  add(o_.no_iowait, "NO_IOWAIT");
  if (o_.sqpoll)
    extras += fmt::format(", SQ thread{}{}", o_.sq_cpu >= 0 ? fmt::format(" on CPU {}", o_.sq_cpu) : "",
                          o_.sq_idle_ms ? fmt::format(" idle {} ms", o_.sq_idle_ms) : "");
  if (o_.wait == WaitMode::Spin) extras += ", spin wait";
  if (o_.wait == WaitMode::Hybrid)
    extras += fmt::format(", hybrid wait (spin {})", format_duration_ns(static_cast<double>(o_.hybrid_spin_ns)));
  return fmt::format("{} (setup flags {}, sq {}, cq {}{})", nop_ ? "nop on io_uring" : "io_uring",
                     setup_flag_names(flags_ & ~IORING_SETUP_CQSIZE), ring_.sq.ring_entries,
                     ring_.cq.ring_entries, extras);
}

}  // namespace ioacct
