// psync: plain pread/pwrite, one I/O per syscall. The baseline every io_uring
// claim is held against, so it must be as lean as the syscall allows.
#include <fcntl.h>
#include <linux/falloc.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cerrno>
#include <fmt/format.h>

#include "engine/engine_impl.hpp"

namespace ioacct {

PsyncEngine::PsyncEngine(const EngineOptions& opts)
    : fds_(opts.fds), is_block_(opts.is_block), queue_(opts.depth ? opts.depth : 1) {
  is_block_.resize(fds_.size(), 0);
}

// One request, one syscall (syncs fsync/fdatasync; trims BLKDISCARD on a
// block device, a punched hole in a file): bytes moved, 0 for a sync or trim done, or -errno.
int32_t PsyncEngine::run(const IoRequest& r) noexcept {
  const int fd = r.file < fds_.size() ? fds_[r.file] : -1;
  const off_t off = static_cast<off_t>(r.offset);
  ssize_t ret;
  switch (r.op) {
    case IoOp::Read: ret = ::pread(fd, r.buf, r.len, off); break;
    case IoOp::Write: ret = ::pwrite(fd, r.buf, r.len, off); break;
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
  counters_.syscalls += n;
  counters_.submit_syscalls += n;
  counters_.reap_syscalls += n;
  counters_.submitted += n;
  counters_.reaped += n;
  return static_cast<int>(n);
}

std::string PsyncEngine::describe() const { return "psync (pread/pwrite, one I/O per syscall)"; }

}  // namespace ioacct
