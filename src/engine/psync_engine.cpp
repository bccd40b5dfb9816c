// psync: one I/O per syscall, by pread/pwrite or, as fio's sync, pvsync and
// pvsync2 engines do, by lseek then read/write, preadv/pwritev or
// preadv2/pwritev2 with per-call flags. The baseline every io_uring claim is
// held against, so it must be as lean as the syscall allows.
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

#include "engine/engine_impl.hpp"

namespace ioacct {

PsyncEngine::PsyncEngine(const EngineOptions& opts)
    : fds_(opts.fds), is_block_(opts.is_block), queue_(opts.depth ? opts.depth : 1), sync_(opts.sync) {
  is_block_.resize(fds_.size(), 0);
  if (sync_.hipri) rwf_ |= RWF_HIPRI;
  if (sync_.nowait) rwf_ |= RWF_NOWAIT;
}

// The data's syscall, by the family member asked for.
ssize_t PsyncEngine::move(int fd, const IoRequest& r, off_t off) noexcept {
  const bool write = r.op == IoOp::Write;
  iovec iov{r.buf, r.len};
  switch (sync_.call) {
    case SyncCall::Pread: return write ? ::pwrite(fd, r.buf, r.len, off) : ::pread(fd, r.buf, r.len, off);
    case SyncCall::Read:
      if (::lseek(fd, off, SEEK_SET) < 0) return -1;
      return write ? ::write(fd, r.buf, r.len) : ::read(fd, r.buf, r.len);
    case SyncCall::Preadv: return write ? ::pwritev(fd, &iov, 1, off) : ::preadv(fd, &iov, 1, off);
    case SyncCall::Preadv2: {
      // fio's hipri_percentage: each call carries RWF_HIPRI with that chance.
      int rwf = rwf_;
      if (sync_.hipri_pct < 100 && hipri_draw_.below(100) >= sync_.hipri_pct) rwf &= ~RWF_HIPRI;
      return write ? ::pwritev2(fd, &iov, 1, off, rwf) : ::preadv2(fd, &iov, 1, off, rwf);
    }
  }
  errno = EINVAL;
  return -1;
}

// One request, one syscall (syncs fsync/fdatasync; trims BLKDISCARD on a
// block device, a punched hole in a file): bytes moved, 0 for a sync or trim done, or -errno.
int32_t PsyncEngine::run(const IoRequest& r) noexcept {
  const int fd = r.file < fds_.size() ? fds_[r.file] : -1;
  const off_t off = static_cast<off_t>(r.offset);
  ssize_t ret;
  switch (r.op) {
    case IoOp::Read:
    case IoOp::Write: ret = move(fd, r, off); break;
    case IoOp::Fsync: ret = ::fsync(fd); break;
    case IoOp::Fdatasync: ret = ::fdatasync(fd); break;
    case IoOp::Trim:
      if (r.file < is_block_.size() && is_block_[r.file]) {
        uint64_t range[2] = {r.offset, r.len};
        ret = ::ioctl(fd, BLKDISCARD, range);
      } else {
        ret = ::fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, off, static_cast<off_t>(r.len));
      }
      break;
    default: return -EINVAL;
  }
  return ret < 0 ? -errno : static_cast<int32_t>(ret);
}

unsigned PsyncEngine::queue(std::span<const IoRequest> reqs) noexcept {
  unsigned n = 0;
  for (const auto& r : reqs) {
    if (queued_ == queue_.size()) break;
    queue_[queued_++] = r;
    ++n;
  }
  return n;
}

int PsyncEngine::enter(unsigned, std::span<IoCompletion> out, uint64_t) noexcept {
  // Each request runs to completion here; "waiting" has nothing left to do.
  const size_t n = std::min<size_t>(queued_, out.size());
  for (size_t i = 0; i < n; ++i) {
    const IoRequest& r = queue_[i];
    out[i] = {r.tag, run(r)};
  }
  // Keep any request that did not fit in `out` for the next call, in order.
  for (size_t i = n; i < queued_; ++i) queue_[i - n] = queue_[i];
  queued_ -= n;
  counters_.syscalls += sync_.call == SyncCall::Read ? 2 * n : n;  // sync: lseek too
  counters_.submit_syscalls += n;
  counters_.reap_syscalls += n;
  counters_.submitted += n;
  counters_.reaped += n;
  return static_cast<int>(n);
}

std::string PsyncEngine::describe() const {
  switch (sync_.call) {
    case SyncCall::Pread: break;
    case SyncCall::Read: return "sync (lseek, then read/write: one I/O per read or write)";
    case SyncCall::Preadv: return "pvsync (preadv/pwritev, one I/O per syscall)";
    case SyncCall::Preadv2:
      return fmt::format("pvsync2 (preadv2/pwritev2, one I/O per syscall{}{})",
                         !sync_.hipri               ? ""
                         : sync_.hipri_pct == 100   ? ", RWF_HIPRI"
                                                    : fmt::format(", RWF_HIPRI on {}% of calls", sync_.hipri_pct),
                         sync_.nowait ? ", RWF_NOWAIT" : "");
  }
  return "psync (pread/pwrite, one I/O per syscall)";
}

}  // namespace ioacct
