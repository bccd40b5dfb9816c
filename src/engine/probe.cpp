#include "engine/probe.hpp"

#include <fmt/format.h>
#include <sched.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string_view>

#include "acct/procfs.hpp"
#include "common/files.hpp"
#include "engine/probe_uapi.hpp"
#include "engine/setup_flags.hpp"

namespace ioacct {
namespace {

// Small rings: the probe asks whether a flag is accepted, not how big a
// ring may be. 4 SQ entries keep a NO_MMAP ring inside one page each.
constexpr unsigned kEntries = 4;

// Opcode names in enum io_uring_op order (include/uapi/linux/io_uring.h),
// without the IORING_OP_ prefix. Newer opcodes print as numbers.
constexpr std::array<std::string_view, 65> kOpcodeNames = {
    "NOP",           "READV",           "WRITEV",          "FSYNC",          "READ_FIXED",
    "WRITE_FIXED",   "POLL_ADD",        "POLL_REMOVE",     "SYNC_FILE_RANGE", "SENDMSG",
    "RECVMSG",       "TIMEOUT",         "TIMEOUT_REMOVE",  "ACCEPT",         "ASYNC_CANCEL",
    "LINK_TIMEOUT",  "CONNECT",         "FALLOCATE",       "OPENAT",         "CLOSE",
    "FILES_UPDATE",  "STATX",           "READ",            "WRITE",          "FADVISE",
    "MADVISE",       "SEND",            "RECV",            "OPENAT2",        "EPOLL_CTL",
    "SPLICE",        "PROVIDE_BUFFERS", "REMOVE_BUFFERS",  "TEE",            "SHUTDOWN",
    "RENAMEAT",      "UNLINKAT",        "MKDIRAT",         "SYMLINKAT",      "LINKAT",
    "MSG_RING",      "FSETXATTR",       "SETXATTR",        "FGETXATTR",      "GETXATTR",
    "SOCKET",        "URING_CMD",       "SEND_ZC",         "SENDMSG_ZC",     // 48: the last in liburing 2.3
    "READ_MULTISHOT", "WAITID",         "FUTEX_WAIT",      "FUTEX_WAKE",     "FUTEX_WAITV",   // 6.7
    "FIXED_FD_INSTALL",                                                                        // 6.8
    "FTRUNCATE",                                                                               // 6.9
    "BIND",          "LISTEN",                                                                 // 6.11
    "RECV_ZC",       "EPOLL_WAIT",      "READV_FIXED",     "WRITEV_FIXED",                    // 6.15
    "PIPE",                                                                                    // 6.16
    "NOP128",        "URING_CMD128",                                                           // 6.19
};
// The table is positional: check it against the header where the header has the name.
static_assert(kOpcodeNames[IORING_OP_READ] == "READ");
static_assert(kOpcodeNames[IORING_OP_LINKAT] == "LINKAT");
static_assert(kOpcodeNames[IORING_OP_SENDMSG_ZC] == "SENDMSG_ZC");
static_assert(IORING_OP_LAST == 49, "liburing changed: extend the asserts above");

struct BitName {
  uint32_t bit;
  const char* name;
};
constexpr BitName kFeatureNames[] = {
    {IORING_FEAT_SINGLE_MMAP, "SINGLE_MMAP"},       {IORING_FEAT_NODROP, "NODROP"},
    {IORING_FEAT_SUBMIT_STABLE, "SUBMIT_STABLE"},   {IORING_FEAT_RW_CUR_POS, "RW_CUR_POS"},
    {IORING_FEAT_CUR_PERSONALITY, "CUR_PERSONALITY"}, {IORING_FEAT_FAST_POLL, "FAST_POLL"},
    {IORING_FEAT_POLL_32BITS, "POLL_32BITS"},       {IORING_FEAT_SQPOLL_NONFIXED, "SQPOLL_NONFIXED"},
    {IORING_FEAT_EXT_ARG, "EXT_ARG"},               {IORING_FEAT_NATIVE_WORKERS, "NATIVE_WORKERS"},
    {IORING_FEAT_RSRC_TAGS, "RSRC_TAGS"},           {IORING_FEAT_CQE_SKIP, "CQE_SKIP"},
    {IORING_FEAT_LINKED_FILE, "LINKED_FILE"},       {IORING_FEAT_REG_REG_RING, "REG_REG_RING"},
    {IORING_FEAT_RECVSEND_BUNDLE, "RECVSEND_BUNDLE"}, {IORING_FEAT_MIN_TIMEOUT, "MIN_TIMEOUT"},
    {IORING_FEAT_RW_ATTR, "RW_ATTR"},               {IORING_FEAT_NO_IOWAIT, "NO_IOWAIT"},
};

// What each setup flag needs beside itself to be accepted, so that a
// rejection means "this kernel lacks it", not "the probe asked wrongly".
enum class Needs { Nothing, Sqpoll, SingleIssuer, CoopTaskrun, Iopoll, CqEntries, WqFd, UserMemory };

// A flag's companions, by flag: what it needs beside itself (Nothing for
// the rest of kSetupFlags).
Needs needs_of(uint32_t flag) {
  switch (flag) {
    case IORING_SETUP_SQ_AFF: return Needs::Sqpoll;
    case IORING_SETUP_CQSIZE: return Needs::CqEntries;
    case IORING_SETUP_ATTACH_WQ: return Needs::WqFd;
    case IORING_SETUP_TASKRUN_FLAG: return Needs::CoopTaskrun;
    case IORING_SETUP_DEFER_TASKRUN: return Needs::SingleIssuer;
    case IORING_SETUP_NO_MMAP: return Needs::UserMemory;
    // REGISTERED_FD_ONLY is only allowed together with NO_MMAP.
    case IORING_SETUP_REGISTERED_FD_ONLY: return Needs::UserMemory;
    case IORING_SETUP_HYBRID_IOPOLL: return Needs::Iopoll;
    default: return Needs::Nothing;  // IOPOLL is accepted without a pollable file
  }
}

// Memory for NO_MMAP rings: the kernel pins these pages and writes the ring
// headers into them. Static, never freed: ring teardown is asynchronous in
// the kernel, so the pages must not go back to the allocator after close().
// One page each suffices for kEntries (the rings and the SQE array); each
// of the two rings that use it (NO_MMAP, REGISTERED_FD_ONLY) has its own.
struct NoMmapPages {
  alignas(4096) std::byte rings[4096];
  alignas(4096) std::byte sqes[4096];
};
NoMmapPages no_mmap_pages[2];

std::optional<uint64_t> read_number(const std::string& path) {
  bool ok = false;
  const std::string s = read_first_line(path, &ok);
  if (!ok || s.empty() || s.find_first_not_of("0123456789") != std::string::npos) return std::nullopt;
  try {
    return std::stoull(s);
  } catch (const std::exception&) {
    return std::nullopt;
  }
}

// Tries one set of setup flags; returns 0 or the errno. Closes what it gets.
int try_setup(uint32_t flags, Needs needs, int wq_fd) {
  io_uring_params p{};
  p.flags = flags;
  switch (needs) {
    case Needs::CqEntries: p.cq_entries = 2 * kEntries; break;
    case Needs::WqFd: p.wq_fd = static_cast<uint32_t>(wq_fd); break;
    case Needs::Sqpoll: {
      // The CPU this thread runs on is online and in our affinity mask,
      // which is all the kernel asks of sq_thread_cpu.
      const int cpu = sched_getcpu();
      p.sq_thread_cpu = cpu >= 0 ? static_cast<uint32_t>(cpu) : 0;
      break;
    }
    case Needs::UserMemory:
      // sq_off.user_addr / cq_off.user_addr (6.5) are resv2 in liburing 2.3's struct.
    {
      NoMmapPages& pages = no_mmap_pages[(flags & IORING_SETUP_REGISTERED_FD_ONLY) ? 1 : 0];
      p.sq_off.resv2 = reinterpret_cast<uintptr_t>(pages.sqes);
      p.cq_off.resv2 = reinterpret_cast<uintptr_t>(pages.rings);
      break;
    }
    default: break;
  }
  const int ret = io_uring_setup(kEntries, &p);  // liburing 2.3: fd or -errno, errno untouched
  if (ret < 0) return -ret;
  if (flags & IORING_SETUP_REGISTERED_FD_ONLY) {
    // `ret` is an index into this task's registered rings, not a file
    // descriptor (close(ret) would close stdin or stdout): unregister it.
    io_uring_rsrc_update up{};
    up.offset = static_cast<uint32_t>(ret);
    io_uring_register(static_cast<unsigned>(ret), IORING_UNREGISTER_RING_FDS | IORING_REGISTER_USE_REGISTERED_RING,
                      &up, 1);
  } else {
    ::close(ret);
  }
  return 0;
}

uint32_t companions(Needs needs) {
  switch (needs) {
    case Needs::Sqpoll: return IORING_SETUP_SQPOLL;
    case Needs::SingleIssuer: return IORING_SETUP_SINGLE_ISSUER;
    case Needs::CoopTaskrun: return IORING_SETUP_COOP_TASKRUN;
    case Needs::Iopoll: return IORING_SETUP_IOPOLL;
    case Needs::UserMemory: return IORING_SETUP_NO_MMAP;
    default: return 0;
  }
}

const char* needs_text(Needs needs, uint32_t flag) {
  switch (needs) {
    case Needs::Sqpoll: return "SQPOLL";
    case Needs::SingleIssuer: return "SINGLE_ISSUER";
    case Needs::CoopTaskrun: return "COOP_TASKRUN";
    case Needs::Iopoll: return "IOPOLL";
    case Needs::CqEntries: return "cq_entries";
    case Needs::WqFd: return "wq_fd";
    case Needs::UserMemory: return flag == IORING_SETUP_NO_MMAP ? "user memory" : "NO_MMAP, user memory";
    default: return "";
  }
}

void probe_setup_flags(ProbeResult& r, int plain_fd) {
  for (const SetupFlag& s : kSetupFlags) {
    const Needs needs = needs_of(s.bit);
    SetupFlagProbe f;
    f.name = s.name;
    f.flag = s.bit;
    f.tried = s.bit | companions(needs);
    f.with = needs_text(needs, s.bit);
    f.since = s.since;
    // ATTACH_WQ needs a ring to attach to; without the plain one, the
    // reason there is none is the answer for this flag too.
    if (needs == Needs::WqFd && plain_fd < 0) f.error = r.setup_error;
    else f.error = try_setup(f.tried, needs, plain_fd);
    r.setup_flags.push_back(std::move(f));
  }
  for (unsigned bit = kFirstUnknownSetupBit; bit < 32; ++bit)
    r.unknown_setup_bits.push_back({bit, try_setup(1U << bit, Needs::Nothing, -1)});
}

void probe_opcodes(ProbeResult& r, int plain_fd) {
  if (plain_fd < 0) {
    r.opcodes_error = r.setup_error;
    return;
  }
  // 256 entries: every value an opcode (a __u8) can take.
  constexpr unsigned kOps = 256;
  const size_t bytes = sizeof(io_uring_probe) + kOps * sizeof(io_uring_probe_op);
  auto storage = std::make_unique<std::byte[]>(bytes);  // value-initialised: the kernel wants it zeroed
  auto* probe = reinterpret_cast<io_uring_probe*>(storage.get());
  const int ret = io_uring_register(static_cast<unsigned>(plain_fd), IORING_REGISTER_PROBE, probe, kOps);
  if (ret < 0) {
    r.opcodes_error = -ret;
    return;
  }
  r.last_op = probe->last_op;
  for (unsigned op = 0; op <= probe->last_op; ++op) {
    OpcodeProbe o;
    o.op = op;
    if (op < kOpcodeNames.size()) o.name = kOpcodeNames[op];
    o.supported = op < probe->ops_len && (probe->ops[op].flags & IO_URING_OP_SUPPORTED);
    r.opcodes.push_back(std::move(o));
  }
}

void probe_sqpoll(ProbeResult& r) {
  io_uring ring{};
  io_uring_params p{};
  p.flags = IORING_SETUP_SQPOLL;
  p.sq_thread_idle = 10;  // ms: the thread goes to sleep soon, it has nothing to do
  const int ret = io_uring_queue_init_params(kEntries, &ring, &p);
  if (ret < 0) {
    r.sqpoll.error = -ret;
    return;
  }
  const std::string path = fmt::format("/proc/self/fdinfo/{}", ring.ring_fd);
  std::ifstream f(path);
  std::stringstream text;
  if (f) text << f.rdbuf();
  io_uring_queue_exit(&ring);
  if (!f) {
    r.sqpoll.read_error = fmt::format("cannot read {}", path);
    return;
  }
  const FdInfo info = parse_fdinfo(text.str());
  for (const char* key : {"SqThread", "SqThreadCpu", "SqTotalTime", "SqWorkTime"}) {
    SqpollFdinfo::Field field{key, std::nullopt};
    if (auto it = info.find(std::string_view(key)); it != info.end()) field.value = it->second;
    r.sqpoll.fields.push_back(std::move(field));
  }
}

// "none [mq-deadline] kyber" -> "mq-deadline". A file without brackets
// (devices that take no scheduler) holds just "none".
std::optional<std::string> active_scheduler(const std::string& line) {
  const auto open = line.find('[');
  const auto close = line.find(']', open == std::string::npos ? 0 : open);
  if (open != std::string::npos && close != std::string::npos) return line.substr(open + 1, close - open - 1);
  const auto start = line.find_first_not_of(' ');
  if (start == std::string::npos) return std::nullopt;
  return line.substr(start, line.find(' ', start) - start);
}

void probe_block_devices(ProbeResult& r) {
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::directory_iterator it("/sys/block", ec), end;
  for (; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    // Memory-backed: their figures say nothing about storage.
    if (name.starts_with("ram") || name.starts_with("zram")) continue;
    const std::string dir = "/sys/block/" + name;
    // A loop device with no file behind it is just an unused minor number.
    std::error_code exists_ec;
    if (name.starts_with("loop") && !fs::exists(dir + "/loop/backing_file", exists_ec)) continue;
    BlockDeviceProbe d;
    d.name = name;
    if (auto v = read_number(dir + "/queue/io_poll")) d.io_poll = *v != 0;
    if (auto v = read_number(dir + "/queue/logical_block_size")) d.logical_block_size = static_cast<uint32_t>(*v);
    bool ok = false;
    const std::string sched = read_first_line(dir + "/queue/scheduler", &ok);
    if (ok) d.scheduler = active_scheduler(sched);
    r.block_devices.push_back(std::move(d));
  }
  std::sort(r.block_devices.begin(), r.block_devices.end(),
            [](const BlockDeviceProbe& a, const BlockDeviceProbe& b) { return a.name < b.name; });
}

}  // namespace

ProbeResult probe_io_uring() {
  ProbeResult r;
  utsname u{};
  if (uname(&u) == 0) {
    r.sysname = u.sysname;
    r.release = u.release;
  }
  if (auto v = read_number("/proc/sys/kernel/io_uring_disabled")) r.io_uring_disabled = static_cast<int>(*v);
  rlimit lim{};
  if (getrlimit(RLIMIT_MEMLOCK, &lim) == 0) {
    r.memlock_soft = lim.rlim_cur == RLIM_INFINITY ? ProbeResult::kUnlimited : lim.rlim_cur;
    r.memlock_hard = lim.rlim_max == RLIM_INFINITY ? ProbeResult::kUnlimited : lim.rlim_max;
  }

  // The plain ring stays open while the others are tried: ATTACH_WQ attaches
  // to it and IORING_REGISTER_PROBE asks through it. Never mmapped.
  io_uring_params p{};
  const int plain_fd = io_uring_setup(kEntries, &p);
  if (plain_fd < 0) {
    r.setup_error = -plain_fd;
  } else {
    r.features = p.features;
    uint32_t known = 0;
    for (const BitName& b : kFeatureNames) {
      known |= b.bit;
      if (p.features & b.bit) r.feature_names.emplace_back(b.name);
    }
    for (unsigned bit = 0; bit < 32; ++bit)
      if ((p.features & ~known) & (1U << bit)) r.unknown_feature_bits.push_back(bit);
  }
  probe_setup_flags(r, plain_fd);
  probe_opcodes(r, plain_fd);
  if (plain_fd >= 0) ::close(plain_fd);

  probe_sqpoll(r);
  probe_block_devices(r);
  return r;
}

}  // namespace ioacct
