#include "workload/target.hpp"

#include <fcntl.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/resource.h>
#include <linux/magic.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fmt/format.h>
#include <fstream>
#include <memory>
#include <thread>

#include "acct/system.hpp"
#include "common/errors.hpp"
#include "common/offsets.hpp"
#include "common/units.hpp"
#include "workload/safety.hpp"
#include "workload/storage.hpp"

namespace ioacct {
namespace {

// The first I/O size of the job (bs, each direction's, or each of --bssplit's) that is not a
// multiple of `align`; 0 when all are.
uint64_t misaligned_size(const JobSpec& job, uint32_t align) {
  for (const uint64_t b : job.bs_dir)
    if (b % align) return b;
  if (job.bs_split.empty()) return job.bs % align ? job.bs : 0;
  for (const BsShare& b : job.bs_split)
    if (b.size % align) return b.size;
  return 0;
}

const char* size_flag(const JobSpec& job) { return job.bs_split.empty() ? "--bs" : "--bssplit"; }

uint32_t logical_block_size_of(const std::string& dev) {
  std::ifstream f("/sys/class/block/" + dev + "/queue/logical_block_size");
  uint32_t v = 0;
  if (f >> v && v) return v;
  // A partition has no queue/ of its own: its parent's applies.
  std::ifstream p("/sys/class/block/" + dev + "/../queue/logical_block_size");
  if (p >> v && v) return v;
  return 512;
}

// STATX_DIOALIGN (6.1+) tells the filesystem's own O_DIRECT alignment.
uint32_t dio_alignment(int fd, const std::string& dev) {
#ifdef STATX_DIOALIGN
  struct statx stx {};
  if (statx(fd, "", AT_EMPTY_PATH, STATX_DIOALIGN, &stx) == 0 && (stx.stx_mask & STATX_DIOALIGN) &&
      stx.stx_dio_offset_align)
    return std::max(stx.stx_dio_offset_align, stx.stx_dio_mem_align);
#endif
  return dev.empty() ? 512 : logical_block_size_of(dev);
}

int open_flags(const JobSpec& job) {
  return (rw_writes(job.rw) ? O_RDWR : O_RDONLY) | O_CLOEXEC | (job.direct ? O_DIRECT : 0) |
         (job.dsync ? O_DSYNC : 0);
}

// The file behind `fd` opened again (it may have no name: O_TMPFILE); -errno on failure.
int reopen_fd(int fd, int flags) {
  const std::string proc = fmt::format("/proc/self/fd/{}", fd);
  const int r = ::open(proc.c_str(), flags);
  return r < 0 ? -errno : r;
}

// The filesystem `path` is on, by name where statfs' magic says which.
std::string filesystem_name(const std::string& path) {
  struct statfs sf {};
  if (statfs(path.c_str(), &sf) != 0) return "a filesystem";
  switch (sf.f_type) {
    case TMPFS_MAGIC: return "tmpfs";
    case RAMFS_MAGIC: return "ramfs";
    case OVERLAYFS_SUPER_MAGIC: return "overlayfs";
    case FUSE_SUPER_MAGIC: return "a FUSE filesystem";
    default: return fmt::format("a filesystem of type {:#x}", static_cast<unsigned long>(sf.f_type));
  }
}

[[noreturn]] void direct_unsupported(const std::string& path) {
  throw UsageError(fmt::format("--direct: {} is on {}, which refuses O_DIRECT; "
                               "use --buffered, or a target on a disk-backed filesystem", path, filesystem_name(path)));
}

// fdatasync(fd), waited for in a child process, polling `should_stop` every
// 10 ms; a stop leaves the child to finish alone. The sync commits ext4's
// journal, and in data=ordered mode the commit first waits for the data of
// every file whose blocks were allocated in the same transaction, so beside
// another process's heavy writeback it can take seconds, in which no signal
// can end a process (a thread in the sync holds up the whole process's
// exit, and with it the end of its stdout and stderr). The child has no
// stdout or stderr of its own, so whoever reads ioacct's sees them end when
// ioacct exits; it holds the temporary file, which has no name, until its
// sync returns.
void sync_unless_stopped(int fd, const std::function<bool()>& should_stop, const std::string& where) {
  const pid_t pid = fork();
  if (pid < 0) throw RuntimeError(fmt::format("{}: cannot start the sync of the temporary file: {}", where, errno_text(errno)));
  if (pid == 0) {
    // Async-signal-safe calls only: the parent may have threads.
    ::close(STDOUT_FILENO);
    ::close(STDERR_FILENO);
    _exit(::fdatasync(fd) == 0 ? 0 : errno);
  }
  for (;;) {
    int status = 0;
    const pid_t done = ::waitpid(pid, &status, WNOHANG);
    if (done == pid) {
      const int e = WIFEXITED(status) ? WEXITSTATUS(status) : EIO;
      if (e != 0) throw RuntimeError(fmt::format("{}: fdatasync of the temporary file: {}", where, errno_text(e)));
      return;
    }
    if (done < 0 && errno != EINTR)
      throw RuntimeError(fmt::format("{}: waiting for the sync of the temporary file: {}", where, errno_text(errno)));
    if (should_stop()) throw RuntimeError("interrupted while syncing the temporary file");
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

// Writes incompressible data so that reads of the temporary file reach the
// device, then drops it from the page cache for O_DIRECT runs (dirty or cached
// pages would otherwise be flushed or served by the first reads).
void fill_temp(int fd, uint64_t size, bool drop_cache, const std::function<bool()>& should_stop,
               const std::string& where) {
  constexpr size_t kChunk = 1 << 20;
  // Page-aligned: the file may be open with O_DIRECT.
  struct Free { void operator()(uint64_t* p) const { std::free(p); } };
  std::unique_ptr<uint64_t, Free> mem(static_cast<uint64_t*>(std::aligned_alloc(4096, kChunk)));
  if (!mem) throw RuntimeError("cannot allocate memory to fill the temporary file");
  uint64_t* buf = mem.get();
  Rng rng(0x7e3779b97f4a7c15ull);
  for (uint64_t off = 0; off < size; off += kChunk) {
    if (should_stop()) throw RuntimeError("interrupted while creating the temporary file");
    for (size_t i = 0; i < kChunk / 8; ++i) buf[i] = rng.next();
    const size_t n = static_cast<size_t>(std::min<uint64_t>(kChunk, size - off));
    const char* p = reinterpret_cast<const char*>(buf);
    for (size_t done = 0; done < n;) {
      ssize_t w = ::pwrite(fd, p + done, n - done, static_cast<off_t>(off + done));
      if (w < 0 && errno == EINTR) continue;
      if (w < 0) {
        int e = errno;
        if (e == ENOSPC)
          throw RuntimeError(fmt::format("{}: no space left for the {} temporary file; use --size "
                                         "to make it smaller or --dir to put it elsewhere",
                                         where, format_size(size)));
        throw RuntimeError(fmt::format("{}: writing the temporary file: {}", where, errno_text(e)));
      }
      done += static_cast<size_t>(w);
    }
  }
  sync_unless_stopped(fd, should_stop, where);
  if (drop_cache) posix_fadvise(fd, 0, static_cast<off_t>(size), POSIX_FADV_DONTNEED);
}

void describe_device(Target& t, const struct stat& st) {
  const dev_t d = t.is_block ? st.st_rdev : st.st_dev;
  t.dev_major = major(d);
  t.dev_minor = minor(d);
  t.device = resolve_device(t.dev_major, t.dev_minor).device;  // "" for tmpfs, overlay...
  struct statfs sf {};
  if (!t.is_block && fstatfs(t.fd, &sf) == 0)
    t.in_memory = sf.f_type == TMPFS_MAGIC || sf.f_type == RAMFS_MAGIC;
}

Target open_temp(const JobSpec& job, const std::function<bool()>& should_stop) {
  std::string dir = job.dir;
  if (dir.empty()) {
    // Read before any worker thread exists, and nothing here calls setenv.
    const char* tmp = std::getenv("TMPDIR");  // NOLINT(concurrency-mt-unsafe)
    dir = tmp && *tmp ? tmp : "/tmp";
  }
  const std::string flag = job.dir.empty() ? "$TMPDIR" : "--dir";
  struct stat st {};
  if (stat(dir.c_str(), &st) != 0)
    throw UsageError(fmt::format("{}: {}: {}", flag, dir, errno_text(errno)));
  if (!S_ISDIR(st.st_mode)) throw UsageError(fmt::format("{}: {}: not a directory", flag, dir));

  if (job.temp_size < job.bs)
    throw UsageError(fmt::format("--size: {} is smaller than one --bs block ({})",
                                 format_size(job.temp_size), format_size(job.bs)));
  Target t;
  t.is_temp = true;
  t.path = fmt::format("(temporary file in {})", dir);
  // O_TMPFILE: the file never has a name, so no exit path (not even SIGKILL
  // or a crash) can leave it behind. Fall back to mkstemp + unlink at once.
  const int flags = O_RDWR | O_CLOEXEC | (job.direct ? O_DIRECT : 0);
  t.fd = ::open(dir.c_str(), flags | O_TMPFILE, 0600);
  if (t.fd < 0 && errno == EINVAL && job.direct) {
    // tmpfs and friends refuse O_DIRECT; say so rather than benchmark the page cache.
    int probe = ::open(dir.c_str(), O_RDWR | O_TMPFILE | O_CLOEXEC, 0600);
    if (probe >= 0) {
      ::close(probe);
      direct_unsupported(dir);
    }
  }
  if (t.fd < 0 && (errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL)) {
    std::string templ = dir + "/ioacct-XXXXXX";
    t.fd = mkostemp(templ.data(), O_CLOEXEC);
    if (t.fd >= 0) {
      ::unlink(templ.c_str());
      if (job.direct && fcntl(t.fd, F_SETFL, O_DIRECT) != 0) {
        ::close(t.fd);
        direct_unsupported(dir);
      }
    }
  }
  if (t.fd < 0) {
    const int e = errno;
    throw RuntimeError(fmt::format("{}: {}: cannot create the temporary file: {}", flag, dir, errno_text(e)));
  }
  fstat(t.fd, &st);
  describe_device(t, st);
  t.dio_align = job.direct ? dio_alignment(t.fd, t.device) : 1;
  if (const uint64_t bad = misaligned_size(job, t.dio_align)) {
    ::close(t.fd);
    throw UsageError(fmt::format("{}: {} bytes with --direct must be a multiple of {}'s O_DIRECT "
                                 "alignment, {} bytes (or use --buffered)", size_flag(job), bad, dir, t.dio_align));
  }
  t.range = job.temp_size / job.bs * job.bs;
  if (job.engine == EngineKind::Nop) {
    if (ftruncate(t.fd, static_cast<off_t>(t.range)) != 0) {
      ::close(t.fd);
      throw RuntimeError(fmt::format("{}: {}: ftruncate: {}", flag, dir, errno_text(errno)));
    }
  } else if (posix_fallocate(t.fd, 0, static_cast<off_t>(t.range)) == ENOSPC) {
    ::close(t.fd);
    throw RuntimeError(fmt::format("{}: {}: no space for a {} temporary file; use --size to make it "
                                   "smaller or --dir to put it elsewhere", flag, dir, format_size(t.range)));
  }
  t.file_size = t.range;
  if (job.engine == EngineKind::Nop) return t;  // nop never touches it: no need to fill it
  fmt::print(stderr, "ioacct: creating a {} temporary file in {} and filling it with random data "
             "so that reads reach the device; it is removed when ioacct exits\n", format_size(t.range), dir);
  try {
    fill_temp(t.fd, t.range, job.direct, should_stop, dir);
  } catch (...) {
    ::close(t.fd);
    throw;
  }
  if (job.dsync) {
    // Filled without O_DSYNC (one sync at the end is enough), then opened
    // again with it; fcntl(F_SETFL) cannot set O_DSYNC.
    const int fd = reopen_fd(t.fd, O_RDWR | O_CLOEXEC | (job.direct ? O_DIRECT : 0) | O_DSYNC);
    ::close(t.fd);
    if (fd < 0) throw RuntimeError(fmt::format("--dsync: reopening the temporary file: {}", errno_text(-fd)));
    t.fd = fd;
  }
  return t;
}

// A named target before it is opened: what it is and which bytes it would use.
struct Named {
  std::string path;
  struct stat st {};
  bool is_block = false;
  Extent reach;  // the bytes the run would use, down to their root
};

Named identify(const JobSpec& job, const std::string& path, const BlockStack& stack) {
  Named n;
  n.path = path;
  struct stat& st = n.st;
  if (stat(path.c_str(), &st) != 0) {
    const int e = errno;
    if (e == ENOENT)
      throw UsageError(fmt::format("{}: no such file or device (give an existing file or block "
                                   "device, or no target for a temporary file)", path));
    throw UsageError(fmt::format("{}: {}", path, errno_text(e)));
  }
  if (S_ISDIR(st.st_mode))
    throw UsageError(fmt::format("{}: is a directory; give a file or block device, or use "
                                 "--dir {} for a temporary file there", path, path));
  if (!S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode))
    throw UsageError(fmt::format("{}: not a regular file or block device", path));
  n.is_block = S_ISBLK(st.st_mode);
  // The range set_range() will choose (it checks the sizes; this only needs
  // the bytes): from --offset, --size of it or up to the end.
  uint64_t size = static_cast<uint64_t>(st.st_size);
  if (n.is_block) {
    const BlockDevice* d = find_device(stack, st.st_rdev);
    size = d ? d->size : UINT64_MAX;
  }
  const uint64_t begin = job.offset;
  const uint64_t end = job.size ? begin + *job.size : std::max(size, begin);
  n.reach = n.is_block ? device_extent(stack, st.st_rdev, begin, end)
                       : file_extent(st.st_dev, st.st_ino, begin, end, path);
  return n;
}

std::string device_number(dev_t d) { return fmt::format("{}:{}", major(d), minor(d)); }

// One file, one target: two names for the same file or device, or two
// targets whose bytes overlap anywhere down the stack, would put two I/Os on
// one block at once (and --verify would then see its own writes as stale).
void check_distinct(const std::vector<Named>& named) {
  for (size_t i = 0; i < named.size(); ++i) {
    for (size_t j = 0; j < i; ++j) {
      const Named& a = named[j];
      const Named& b = named[i];
      const bool same = a.is_block == b.is_block &&
                        (a.is_block ? a.st.st_rdev == b.st.st_rdev
                                    : a.st.st_dev == b.st.st_dev && a.st.st_ino == b.st.st_ino);
      if (same && a.path == b.path)
        throw UsageError(fmt::format("{}: given twice; give each target once (--threads N puts N threads on "
                                     "one target, each on its own blocks)", a.path));
      if (same)
        throw UsageError(fmt::format(
            "{} and {}: the same {} ({}); give each target once (--threads N puts N threads on one target, "
            "each on its own blocks)", a.path, b.path,
            a.is_block ? "block device" : "file, through a hard link, symlink or bind mount",
            a.is_block ? "device " + device_number(a.st.st_rdev)
                       : fmt::format("inode {} on device {}", a.st.st_ino, device_number(a.st.st_dev))));
      if (overlap(a.reach, b.reach)) {
        const uint64_t from = std::max(a.reach.begin, b.reach.begin);
        const uint64_t to = std::min(a.reach.end, b.reach.end);
        throw UsageError(fmt::format(
            "{} and {}: both reach the same {} at offset {} of {} (through partitions or loop devices); "
            "give only one of them, or --offset/--size ranges that do not overlap",
            a.path, b.path, format_size(to - from), from, a.reach.root_name));
      }
    }
  }
}

// The block device this run already holds with O_EXCL that `n` is a
// partition of, or that is a partition of `n`: the kernel lets one holder
// claim a disk or its partitions, so the second claim fails with EBUSY
// although nobody else is there. "" if none.
std::string held_by_us(const Named& n, const Targets& opened, const std::vector<Named>& named) {
  auto lies_on = [](const Named& upper, const Named& lower) {
    const auto& via = upper.reach.via;
    return std::find(via.begin(), via.end(), lower.st.st_rdev) != via.end();
  };
  for (size_t i = 0; i < opened.list.size(); ++i)
    if (opened.list[i].is_block && (lies_on(n, named[i]) || lies_on(named[i], n))) return named[i].path;
  return {};
}

Target open_named(const JobSpec& job, const Named& n, const std::string& ours) {
  const std::string& path = n.path;
  const struct stat& st = n.st;
  Target t;
  t.path = path;
  t.is_block = n.is_block;
  const bool block_writes = t.is_block && rw_writes(job.rw);

  // A device we write to is held with O_EXCL for the whole run, so nobody
  // can mount it (or assemble it into an array) behind our back.
  t.fd = ::open(path.c_str(), open_flags(job) | (block_writes ? O_EXCL : 0));
  if (t.fd < 0 && errno == EBUSY && block_writes && !ours.empty())
    throw UsageError(fmt::format("{}: cannot hold it exclusively (O_EXCL failed with EBUSY) because this run "
                                 "already holds {} on the same disk, and the kernel lets only one holder claim "
                                 "a disk and its partitions at once; give only one of them", path, ours));
  if (t.fd < 0 && errno == EBUSY && block_writes)
    throw UsageError(fmt::format("{}: refusing to write: it is held open exclusively by another user "
                                 "(O_EXCL failed with EBUSY)", path));
  if (t.fd < 0) {
    const int e = errno;
    if (e == EINVAL && job.direct) direct_unsupported(path);
    if (e == EACCES || e == EPERM || e == EROFS)
      throw RuntimeError(fmt::format("{}: cannot open for {}: {}", path,
                                     rw_writes(job.rw) ? "writing" : "reading", errno_text(e)));
    if (e == EMFILE || e == ENFILE) {
      rlimit rl{};
      getrlimit(RLIMIT_NOFILE, &rl);
      throw RuntimeError(fmt::format("{}: cannot open: {}: RLIMIT_NOFILE is {}; raise it with 'ulimit -n' "
                                     "or give fewer targets", path, errno_text(e), rl.rlim_cur));
    }
    throw RuntimeError(fmt::format("{}: cannot open: {}", path, errno_text(e)));
  }
  // A read-only device opens for writing and then fails every write with
  // EPERM: say so now, once, instead of as N I/O errors.
  int ro = 0;
  if (block_writes && ioctl(t.fd, BLKROGET, &ro) == 0 && ro) {
    ::close(t.fd);
    throw RuntimeError(fmt::format("{}: refusing to write: the device is read-only (BLKROGET: a read-only loop "
                                   "device, 'blockdev --setro', or write-protected media); use --rw read or "
                                   "randread, or make it writable", path));
  }
  if (!t.is_block && rw_writes(job.rw)) {
    try {
      check_not_pseudo(t.fd, path);
    } catch (...) {
      ::close(t.fd);
      throw;
    }
  }
  describe_device(t, st);
  if (t.is_block) {
    uint64_t bytes = 0;
    if (ioctl(t.fd, BLKGETSIZE64, &bytes) != 0)
      throw RuntimeError(fmt::format("{}: BLKGETSIZE64: {}", path, errno_text(errno)));
    int lbs = 512;
    ioctl(t.fd, BLKSSZGET, &lbs);
    t.file_size = bytes;
    t.dio_align = job.direct ? static_cast<uint32_t>(lbs) : 1;
  } else {
    t.file_size = static_cast<uint64_t>(st.st_size);
    t.dio_align = job.direct ? dio_alignment(t.fd, t.device) : 1;
  }
  return t;
}

}  // namespace

// Decides the byte range of `t` that the run uses, and checks the sizes.
void set_range(const JobSpec& job, Target& t) {
  t.base = job.offset;
  if (const uint64_t bad = job.direct ? misaligned_size(job, t.dio_align) : 0)
    throw UsageError(fmt::format("{}: {} bytes with --direct must be a multiple of {}'s O_DIRECT "
                                 "alignment, {} bytes (or use --buffered)", size_flag(job), bad, t.path, t.dio_align));
  if (job.direct && job.offset % t.dio_align)
    throw UsageError(fmt::format("--offset: {} with --direct must be a multiple of {}'s O_DIRECT "
                                 "alignment, {} bytes (or use --buffered)", job.offset, t.path, t.dio_align));
  uint64_t range;
  if (job.size) {
    range = *job.size;
    // Writes alone may extend a file.
    const bool may_grow = !t.is_block && (job.rw == RwMode::Write || job.rw == RwMode::RandWrite);
    if (!may_grow && t.base + range > t.file_size)
      throw UsageError(fmt::format("--size: {} from offset {} goes past the end of {} ({})",
                                   format_size(range), job.offset, t.path, format_size(t.file_size)));
  } else {
    if (t.file_size == 0)
      throw UsageError(fmt::format("{}: is empty; give --size to say how much of it to write, or "
                                   "use a file with data in it", t.path));
    if (t.base >= t.file_size)
      throw UsageError(fmt::format("--offset: {} is at or past the end of {} ({})", job.offset, t.path,
                                   format_size(t.file_size)));
    range = t.file_size - t.base;
  }
  if (range < job.bs)
    throw UsageError(fmt::format("{}: {} of it can be used, smaller than one --bs block ({}); "
                                 "use a smaller --bs or a larger target",
                                 t.path, format_size(range), format_size(job.bs)));
  t.range = range / job.bs * job.bs;
}

namespace {

// --iopoll completes only on a device with poll queues; finding out from the
// first completion (EOPNOTSUPP) is too late to be a good message.
void check_poll_queues(const Targets& targets) {
  for (const auto& t : targets.list) {
    if (t.device.empty())
      throw UsageError(fmt::format("--iopoll: {} has no block device under it to poll", t.path));
    std::string dev = t.device;
    std::ifstream f("/sys/class/block/" + dev + "/queue/io_poll");
    std::ifstream parent("/sys/class/block/" + dev + "/../queue/io_poll");  // a partition's disk
    std::string v;
    if (!(f >> v) && !(parent >> v)) continue;  // cannot tell: the first completion will
    if (v == "0")
      throw RuntimeError(fmt::format("--iopoll: {} has no poll queues (/sys/block/{}/queue/io_poll is 0), so "
                                     "polled I/O cannot complete on {}; give the driver poll queues (e.g. "
                                     "nvme.poll_queues=N) or leave out --iopoll",
                                     dev, dev, t.path));
  }
}
}  // namespace

Target reopen_target(const Target& base, const JobSpec& job) {
  Target t = base;
  t.fd = reopen_fd(base.fd, open_flags(job));
  if (t.fd < 0) throw RuntimeError(fmt::format("{}: cannot open it again: {}", t.path, errno_text(-t.fd)));
  try {
    t.dio_align = job.direct ? dio_alignment(t.fd, t.device) : 1;
    if (job.direct && job.bs % t.dio_align)
      throw UsageError(fmt::format("--bs: {} bytes with --direct must be a multiple of {}'s O_DIRECT "
                                   "alignment, {} bytes (or use --buffered)", job.bs, t.path, t.dio_align));
    t.range = base.range / job.bs * job.bs;
    if (t.range < job.bs)
      throw UsageError(fmt::format("--bs: {} is larger than {} ({})", format_size(job.bs), t.path, format_size(base.range)));
  } catch (...) {
    ::close(t.fd);
    throw;
  }
  return t;
}

Targets reopen_targets(const Targets& opened, const JobSpec& job) {
  Targets out;
  for (const Target& base : opened.list) out.list.push_back(reopen_target(base, job));  // owned from here
  return out;
}

Targets::Targets(Targets&& o) noexcept : list(std::move(o.list)) { o.list.clear(); }
Targets& Targets::operator=(Targets&& o) noexcept {
  std::swap(list, o.list);
  return *this;
}
Targets::~Targets() {
  for (auto& t : list)
    if (t.fd >= 0) ::close(t.fd);
}

Targets open_targets(const JobSpec& job, const std::function<bool()>& should_stop) {
  Targets out;
  if (job.targets.empty()) {
    out.list.push_back(open_temp(job, should_stop));
    return out;
  }
  const BlockStack stack = read_block_stack();
  std::vector<Named> named;
  for (const auto& p : job.targets) named.push_back(identify(job, p, stack));
  check_distinct(named);
  if (rw_writes(job.rw))
    for (const Named& n : named)
      check_writable({n.path, n.is_block, n.st.st_rdev, n.reach}, stack, job.destroy_data);
  for (const Named& n : named) {
    out.list.push_back(open_named(job, n, n.is_block && rw_writes(job.rw) ? held_by_us(n, out, named) : ""));
    set_range(job, out.list.back());
  }
  return out;
}

void check_targets(const JobSpec& job, const Targets& targets) {
  if (job.uring.iopoll && job.engine == EngineKind::Uring) check_poll_queues(targets);
  for (const auto& t : targets.list)
    if (t.in_memory && job.engine != EngineKind::Nop)
      fmt::print(stderr, "warning: {} is on tmpfs/ramfs: its I/O is served from memory, not a device "
                 "(even with O_DIRECT); put the target on a disk to measure one\n", t.path);
}

}  // namespace ioacct
