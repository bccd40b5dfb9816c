// libaio: Linux native AIO (io_setup, io_submit, io_getevents) through
// Debian's libaio, the engine most published fio job files name.
//
// AIO is asynchronous only for O_DIRECT: a buffered read or write runs to
// completion inside io_submit (the kernel's aio_read calls the file's
// read_iter, which waits for the page cache), so at most one I/O per thread
// is really in flight. bench warns about that at start-up.
//
// One enter() is one io_submit of everything queued and, when there is
// something to collect, one io_getevents. libaio returns -errno and leaves
// errno alone, as the other engines' syscall boundaries do.
#include <fcntl.h>
#include <libaio.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <ctime>
#include <fmt/format.h>

#include "common/errors.hpp"
#include "common/files.hpp"
#include "engine/engine_impl.hpp"

namespace ioacct {
namespace {

// The head of the kernel's AIO completion ring, which io_setup maps into the
// process at the io_context_t's address (struct aio_ring, fs/aio.c; fio's
// userspace_reap reads the same). libaio's io_getevents makes no syscall for
// a zero timeout when head == tail; making that test here instead keeps the
// syscall count exact: every io_getevents this engine calls enters the kernel.
struct AioRingHead {
  unsigned id, nr, head, tail, magic;
};
constexpr unsigned kAioRingMagic = 0xa10a10a1;

[[noreturn]] void throw_setup_error(int err, unsigned depth) {
  if (err == -ENOSYS)
    throw NotAvailable("--engine libaio: this kernel has no native AIO (CONFIG_AIO is off: io_setup answers ENOSYS); "
                       "use --engine uring or psync");
  if (err == -EAGAIN || err == -EINVAL)
    // Every io_setup takes events from one system-wide pool, fs.aio-max-nr
    // (the kernel reserves about twice what is asked, per CPU at least).
    throw RuntimeError(fmt::format("--engine libaio: io_setup of {} events: {}: the system's AIO events (fs.aio-nr {} "
                                   "of fs.aio-max-nr {}) cannot take another context; raise the limit with "
                                   "'sysctl fs.aio-max-nr=1048576', or lower --iodepth or --threads",
                                   depth, errno_text(err), read_first_line("/proc/sys/fs/aio-nr"),
                                   read_first_line("/proc/sys/fs/aio-max-nr")));
  if (err == -ENOMEM)
    throw RuntimeError(fmt::format("--engine libaio: io_setup of {} events: {}; lower --iodepth or --threads", depth,
                                   errno_text(err)));
  throw RuntimeError(fmt::format("--engine libaio: io_setup of {} events: {}", depth, errno_text(err)));
}

class LibaioEngine final : public Engine {
 public:
  explicit LibaioEngine(const EngineOptions& opts)
      : fds_(opts.fds),
        is_block_(opts.is_block),
        depth_(std::max(opts.depth, 1u)),
        vectored_(opts.uring.vectored),
        nowait_(opts.uring.nowait),
        iocbs_(depth_),
        iovs_(depth_),
        pending_(depth_),
        events_(depth_) {
    is_block_.resize(fds_.size(), 0);
    done_.reserve(depth_);
    if (const int ret = io_setup(static_cast<int>(depth_), &ctx_); ret < 0) throw_setup_error(ret, depth_);
  }
  ~LibaioEngine() override { io_destroy(ctx_); }
  LibaioEngine(const LibaioEngine&) = delete;
  LibaioEngine& operator=(const LibaioEngine&) = delete;

  unsigned queue(std::span<const IoRequest> reqs) noexcept override;
  int enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept override;
  const EngineCounters& counters() const noexcept override { return counters_; }
  std::string describe() const override {
    return fmt::format("libaio (io_submit/io_getevents, {} events{}{})", depth_, vectored_ ? ", vectored" : "",
                       nowait_ ? ", RWF_NOWAIT" : "");
  }

 private:
  int32_t trim(const IoRequest& r) noexcept;
  void submit() noexcept;
  bool ring_empty() const noexcept;
  uint32_t tag_of(const iocb* cb) const noexcept { return static_cast<uint32_t>(cb - iocbs_.data()); }

  std::vector<int> fds_;
  std::vector<uint8_t> is_block_;
  unsigned depth_;
  bool vectored_;
  bool nowait_;  // RWF_NOWAIT on each read and write (aio_rw_flags, 4.13+)
  io_context_t ctx_ = nullptr;
  std::vector<iocb> iocbs_;    // per tag: an iocb's index is its request's tag
  std::vector<iovec> iovs_;    // per tag, for PREADV/PWRITEV
  std::vector<iocb*> pending_;  // queued for the next io_submit
  size_t npending_ = 0;
  std::vector<io_event> events_;
  // Completions that no io_getevents returns: trims (AIO has no discard, so
  // they are made inline by queue()) and iocbs io_submit refused.
  std::vector<IoCompletion> done_;
  EngineCounters counters_;
};

// A trim, made here and now: BLKDISCARD on a block device, a punched hole in
// a file. 0 when done, or -errno.
int32_t LibaioEngine::trim(const IoRequest& r) noexcept {
  const int fd = r.file < fds_.size() ? fds_[r.file] : -1;
  ++counters_.syscalls;
  ++counters_.submit_syscalls;
  ++counters_.submitted;
  int ret;
  if (r.file < is_block_.size() && is_block_[r.file]) {
    uint64_t range[2] = {r.offset, r.len};
    ret = ::ioctl(fd, BLKDISCARD, range);
  } else {
    ret = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, static_cast<off_t>(r.offset),
                      static_cast<off_t>(r.len));
  }
  return ret < 0 ? -errno : 0;
}

unsigned LibaioEngine::queue(std::span<const IoRequest> reqs) noexcept {
  unsigned n = 0;
  for (const IoRequest& r : reqs) {
    if (npending_ + done_.size() >= depth_) break;  // full: the caller submits first
    ++n;
    if (r.op == IoOp::Trim) {
      done_.push_back({r.tag, trim(r)});
      continue;
    }
    if (r.tag >= depth_) [[unlikely]] {  // outside engine.hpp's contract: never an iocb past the array
      done_.push_back({r.tag, -EINVAL});
      continue;
    }
    iocb* cb = &iocbs_[r.tag];
    const int fd = r.file < fds_.size() ? fds_[r.file] : -1;
    const long long off = static_cast<long long>(r.offset);
    switch (r.op) {
      case IoOp::Read:
      case IoOp::Write:
        if (vectored_) {
          iovs_[r.tag] = {r.buf, r.len};
          if (r.op == IoOp::Read) io_prep_preadv(cb, fd, &iovs_[r.tag], 1, off);
          else io_prep_pwritev(cb, fd, &iovs_[r.tag], 1, off);
        } else if (r.op == IoOp::Read) {
          io_prep_pread(cb, fd, r.buf, r.len, off);
        } else {
          io_prep_pwrite(cb, fd, r.buf, r.len, off);
        }
        // fio's libaio nowait: -EAGAIN instead of blocking in io_submit (the
        // retry of one, may_block, goes without it, as io_uring's does).
        if (nowait_ && !r.may_block) cb->aio_rw_flags = RWF_NOWAIT;
        break;
      case IoOp::Fsync: io_prep_fsync(cb, fd); break;
      case IoOp::Fdatasync: io_prep_fdsync(cb, fd); break;
      case IoOp::Trim: break;
    }
    pending_[npending_++] = cb;  // its tag is its index in iocbs_
  }
  return n;
}

// Hands every queued iocb to the kernel. io_submit stops at the first iocb it
// refuses (a bad descriptor, an unsupported operation) and returns how many
// it took, or that iocb's -errno when it is the first: the refused one
// completes with its -errno, as a per-I/O error, and the rest go on.
void LibaioEngine::submit() noexcept {
  size_t at = 0;
  while (at < npending_) {
    const int ret = io_submit(ctx_, static_cast<long>(npending_ - at), &pending_[at]);
    ++counters_.syscalls;
    ++counters_.submit_syscalls;
    if (ret > 0) {
      counters_.submitted += static_cast<uint64_t>(ret);
      at += static_cast<size_t>(ret);
      continue;
    }
    const iocb* refused = pending_[at++];
    ++counters_.submitted;
    done_.push_back({tag_of(refused), ret < 0 ? ret : -EIO});
  }
  npending_ = 0;
}

bool LibaioEngine::ring_empty() const noexcept {
  const auto* ring = reinterpret_cast<const AioRingHead*>(ctx_);
  if (__atomic_load_n(&ring->magic, __ATOMIC_RELAXED) != kAioRingMagic) return false;
  return __atomic_load_n(&ring->head, __ATOMIC_RELAXED) == __atomic_load_n(&ring->tail, __ATOMIC_ACQUIRE);
}

int LibaioEngine::enter(unsigned wait_nr, std::span<IoCompletion> out, uint64_t timeout_ns) noexcept {
  if (npending_) submit();
  // Completions held here first: they are done, never waited for.
  unsigned n = 0;
  if (!done_.empty()) {
    n = static_cast<unsigned>(std::min(done_.size(), out.size()));
    std::copy_n(done_.begin(), n, out.begin());
    done_.erase(done_.begin(), done_.begin() + n);
    counters_.reaped += n;
  }
  const long room = static_cast<long>(std::min(out.size() - n, events_.size()));
  if (room == 0) return static_cast<int>(n);
  const long min_nr = std::min<long>(wait_nr > n ? wait_nr - n : 0, room);
  timespec zero{}, limit{};
  timespec* ts = nullptr;  // no limit
  if (min_nr == 0) {
    if (ring_empty()) return static_cast<int>(n);
    ts = &zero;
  } else if (timeout_ns) {
    limit = {static_cast<time_t>(timeout_ns / 1'000'000'000), static_cast<long>(timeout_ns % 1'000'000'000)};
    ts = &limit;
  }
  const int got = io_getevents(ctx_, min_nr, room, events_.data(), ts);
  ++counters_.syscalls;
  ++counters_.reap_syscalls;
  if (got < 0) return got == -EINTR || n ? static_cast<int>(n) : got;  // EINTR: the caller loops
  for (int i = 0; i < got; ++i) {
    const io_event& ev = events_[static_cast<size_t>(i)];
    // res is the byte count or -errno, in an unsigned long; obj is our iocb.
    out[n++] = {tag_of(ev.obj), static_cast<int32_t>(static_cast<long>(ev.res))};
  }
  counters_.reaped += static_cast<uint64_t>(got);
  return static_cast<int>(n);
}

}  // namespace

std::unique_ptr<Engine> make_libaio_engine(const EngineOptions& opts) { return std::make_unique<LibaioEngine>(opts); }

void check_libaio_available(unsigned depth) {
  io_context_t ctx = nullptr;
  if (const int ret = io_setup(static_cast<int>(std::max(depth, 1u)), &ctx); ret < 0) throw_setup_error(ret, depth);
  io_destroy(ctx);
}

}  // namespace ioacct
