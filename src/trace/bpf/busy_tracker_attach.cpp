// The busy tracker's loader: checks the kernel, sizes and loads the BPF
// programs, fills their watch table, maps their logs, attaches and arms
// them, and settles; and the tracker's public face (read, cost).
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <malloc.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string_view>

#include "acct/clock.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "trace/bpf/busy_tracker_impl.hpp"
#include "trace/bpf/libbpf_log.hpp"

namespace ioacct {
namespace {

using busy::kernel_dev;

// While it lives, large allocations of this thread come from a heap region
// marked MADV_HUGEPAGE. libbpf reads the kernel's BTF (5.5 MB here) into one
// fresh buffer and copies it into another; each 4 KiB page touched for the
// first time is a page fault, and on a VM with shadow paging that is what
// start-up cost (70-90 ms for the read alone here; 8-20 ms with 2 MiB pages).
// Afterwards the default thresholds are back and the freed memory is
// returned (malloc_trim). mallopt takes glibc's own lock; the thresholds
// are process-wide, and only the attach changes them (hence the NOLINTs).
class HugePageHeap {
 public:
  HugePageHeap() {
    constexpr size_t kHuge = 2u << 20, kPad = 24u << 20;
    mallopt(M_MMAP_THRESHOLD, 64 << 20);  // NOLINT(concurrency-mt-unsafe)
    mallopt(M_TRIM_THRESHOLD, 128 << 20);  // NOLINT(concurrency-mt-unsafe)
    void* p = std::malloc(kPad);
    if (!p) return;
    const uintptr_t a = (reinterpret_cast<uintptr_t>(p) + kHuge - 1) & ~static_cast<uintptr_t>(kHuge - 1);
    const uintptr_t end = (reinterpret_cast<uintptr_t>(p) + kPad) & ~static_cast<uintptr_t>(kHuge - 1);
    if (end > a) madvise(reinterpret_cast<void*>(a), end - a, MADV_HUGEPAGE);  // NOLINT(performance-no-int-to-ptr)
    std::free(p);
  }
  ~HugePageHeap() {
    mallopt(M_MMAP_THRESHOLD, 128 << 10);  // NOLINT(concurrency-mt-unsafe): glibc's defaults
    mallopt(M_TRIM_THRESHOLD, 128 << 10);  // NOLINT(concurrency-mt-unsafe)
    malloc_trim(0);
  }
  HugePageHeap(const HugePageHeap&) = delete;
  HugePageHeap& operator=(const HugePageHeap&) = delete;
};

// A sysfs "dev" file ("259:3\n") as the kernel's dev_t; nullopt if it is
// missing or not two numbers.
std::optional<uint32_t> read_dev(const std::filesystem::path& file) {
  const std::string text = read_first_line(file.string());
  unsigned ma = 0, mi = 0;
  const char* end = text.data() + text.size();
  auto [p, ec] = std::from_chars(text.data(), end, ma);
  if (ec != std::errc() || p == end || *p != ':') return std::nullopt;
  auto [q, ec2] = std::from_chars(p + 1, end, mi);
  if (ec2 != std::errc()) return std::nullopt;
  return kernel_dev(ma, mi);
}

std::string why_not(const char* step, int err) {
  err = err < 0 ? -err : err;
  // EACCES is also the verifier's "no": a permission problem only without root.
  if (err == EPERM || (err == EACCES && geteuid() != 0))
    return "no permission to load BPF programs (needs root or CAP_BPF+CAP_PERFMON): run as root (or grant "
           "those capabilities) for the exact busy time";
  if (err == ESRCH && std::string_view(step) == "load")
    return "this kernel has no block_io_start/block_io_done tracepoints (Linux 6.5+), which exact busy time needs";
  return fmt::format("cannot {} the BPF programs for exact busy time: {}", step, errno_text(err));
}

uint32_t pow2_at_least(uint64_t n) { return static_cast<uint32_t>(std::bit_ceil(std::max<uint64_t>(n, 1))); }

// IOACCT_TEST_SKIP_DONE=2^k (2..1024): the done program skips one completion
// in 2^k, a stand-in for the runs the kernel skips (busy_shared.h). For the
// witness tests only; 1 otherwise.
uint32_t test_skip_done() {
  const char* v = std::getenv("IOACCT_TEST_SKIP_DONE");  // NOLINT(concurrency-mt-unsafe)
  if (!v) return 1;
  const unsigned long n = std::strtoul(v, nullptr, 10);
  if (n < 2 || n > 1024 || (n & (n - 1)) != 0) {
    std::fprintf(stderr, "ioacct: busy tracker: IOACCT_TEST_SKIP_DONE=%s ignored: give a power of two, 2 to 1024\n", v);
    return 1;
  }
  std::fprintf(stderr,
               "ioacct: busy tracker: IOACCT_TEST_SKIP_DONE: one completion in %lu is not logged (a test hook: "
               "unset it for true figures)\n",
               n);
  return static_cast<uint32_t>(n);
}

// IOACCT_TEST_STALE_SWEEP=1: the sweep reads a free struct as held when its
// last request was stamped after the attach, as a sweep does that looks
// between blk_account_io_start's two stores on a struct taken again. For the
// witness tests only.
bool test_stale_sweep() {
  const char* v = std::getenv("IOACCT_TEST_STALE_SWEEP");  // NOLINT(concurrency-mt-unsafe)
  if (!v || std::string_view(v) != "1") return false;
  std::fprintf(stderr,
               "ioacct: busy tracker: IOACCT_TEST_STALE_SWEEP: free requests read as held with their last stamp "
               "(a test hook: unset it for true figures)\n");
  return true;
}

// IOACCT_BPF_LOG=1: how long each step of the attach took (with libbpf's log).
class StepLog {
 public:
  StepLog() : on_(libbpf_log_wanted()), at_(now_ns()) {}
  void operator()(const char* what) {
    if (!on_) return;
    const uint64_t t = now_ns();
    std::fprintf(stderr, "ioacct: busy tracker: %s %.1f ms\n", what, static_cast<double>(t - at_) / 1e6);
    at_ = t;
  }

 private:
  bool on_;
  uint64_t at_;
};

}  // namespace

BusyTracker::Impl::~Impl() {
  {
    std::lock_guard<std::mutex> l(mu);
    stop = true;
  }
  cv.notify_all();
  if (bg.joinable()) bg.join();
  skel.reset();  // detaches before the maps are unmapped
  if (stats_fd >= 0) close(stats_fd);
}

BusyTracker::BusyTracker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BusyTracker::~BusyTracker() = default;

const std::string& BusyTracker::source() const { return impl_->source; }

std::unique_ptr<BusyTracker> BusyTracker::attach(const std::vector<BusyDevice>& devices, const BusyOptions& options) {
  StepLog step;
  std::error_code ec;
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux", ec))
    throw NotAvailable(
        "this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF), which exact busy time needs: "
        "use a kernel built with it");
  auto impl = std::make_unique<Impl>();
  impl->devices = devices;
  impl->opt = options;
  const std::vector<uint32_t> parent_disks = impl->look_up_devices();
  set_libbpf_log();
  step("devices looked up");

  impl->size_logs();
  std::vector<uint32_t> table_devs;
  table_devs.reserve(devices.size() + parent_disks.size());
  for (const BusyDevice& d : devices) table_devs.push_back(kernel_dev(d.major, d.minor));
  for (uint32_t p : parent_disks)
    if (!impl->index_of.count(p)) table_devs.push_back(p);
  const uint32_t watch_slots = pow2_at_least(std::max<uint64_t>(16, 4 * table_devs.size()));
  impl->probe_cap = 4096;  // requests looked at per sweep run (more: several runs)

  impl->open_and_load(watch_slots, [&step](const char* what) { step(what); });
  const ioacct_watch first = impl->fill_watch(table_devs, parent_disks, watch_slots);
  impl->map_logs(first, watch_slots);
  step("maps filled and mapped");
  impl->find_queues_from_files();
  step("queues found from the devices' files");
  if (int err = busy_bpf__attach(impl->skel.get())) throw NotAvailable(why_not("attach", err));
  step("attached");
  impl->arm();
  impl->settle();
  step("settled");
  Impl* p = impl.get();
  impl->bg = std::thread([p] { p->background(); });
  return std::unique_ptr<BusyTracker>(new BusyTracker(std::move(impl)));
}

// With iostats off the block layer accounts nothing (no start stamp, no
// diskstats): refuse rather than print a wrong figure. Each device's
// diskstats in_flight is its own plus, for a whole disk, its partitions'.
// Returns the dev_ts of whole disks with a watched partition.
std::vector<uint32_t> BusyTracker::Impl::look_up_devices() {
  std::error_code ec;
  std::vector<uint32_t> parent_disks;
  kernel_devs.resize(devices.size());
  is_disk.assign(devices.size(), true);
  for (size_t i = 0; i < devices.size(); ++i) {
    const BusyDevice& d = devices[i];
    const uint32_t dv = kernel_dev(d.major, d.minor);
    index_of[dv] = static_cast<uint32_t>(i);
    kernel_devs[i].push_back(dv);
    const std::filesystem::path sys =
        std::filesystem::canonical(fmt::format("/sys/dev/block/{}:{}", d.major, d.minor), ec);
    if (ec) continue;
    const bool partition = std::filesystem::exists(sys / "partition", ec);
    is_disk[i] = !partition;
    const std::filesystem::path disk = partition ? sys.parent_path() : sys;
    if (read_first_line((disk / "queue" / "iostats").string()) == "0")
      throw NotAvailable(fmt::format("iostats is off for {} ({}/queue/iostats is 0), so the block layer does not "
                                     "account its requests: echo 1 > /sys/block/{}/queue/iostats for the exact busy time",
                                     d.name, disk.string(), disk.filename().string()));
    if (partition) {
      if (const auto dt = read_dev(disk / "dev")) parent_disks.push_back(*dt);
    } else {
      for (const auto& e : std::filesystem::directory_iterator(sys, ec)) {
        if (!std::filesystem::exists(e.path() / "partition", ec)) continue;
        if (const auto dt = read_dev(e.path() / "dev")) kernel_devs[i].push_back(*dt);
      }
    }
  }
  return parent_disks;
}

// One log per program and CPU.
void BusyTracker::Impl::size_logs() {
  const int n = libbpf_num_possible_cpus();
  if (n <= 0) throw NotAvailable(fmt::format("cannot count the possible CPUs: {}", errno_text(-n)));
  ncpu = static_cast<uint32_t>(n);
  // The logs up to the last program loaded (busy_shared.h's order); one
  // not loaded stays empty.
  nlogs = opt.by == BusyBy::Process ? IOACCT_LOG_PROC + 1
          : opt.by == BusyBy::Cgroup ? IOACCT_LOG_ATTR + 1
          : opt.device_span          ? IOACCT_LOG_ISSUE + 1
                                     : IOACCT_LOG_MERGE + 1;
  // 4096 records (128 KiB) per log and CPU: small enough to stay in the
  // CPU's cache (a ring four times larger cost each append a cache miss,
  // ~50-80 ns here), large enough that the background thread, which empties
  // the logs before they are a quarter full, wakes every ~10 ms at 100k I/Os
  // per second on one CPU. Half that with many CPUs, for memory.
  slots = ncpu > 32 ? 2048 : 4096;
}

// Every map sized for these devices and CPUs, then the programs loaded
// (the kernel's BTF read, relocations, the verifier).
void BusyTracker::Impl::open_and_load(uint32_t watch_slots, const std::function<void(const char*)>& step) {
  busy_bpf* raw = busy_bpf__open();
  if (!raw) throw NotAvailable(why_not("open", errno));
  skel.reset(raw);
  bpf_map__set_max_entries(raw->maps.watch, watch_slots);
  bpf_map__set_max_entries(raw->maps.logs, nlogs * ncpu * slots);
  bpf_map__set_max_entries(raw->maps.heads, IOACCT_LOGS * ncpu);
  bpf_map__set_max_entries(raw->maps.probes, probe_cap);
  bpf_map__set_max_entries(raw->maps.tagsets, static_cast<uint32_t>(std::max<size_t>(1, devices.size())));
  if (!opt.device_span) bpf_program__set_autoload(raw->progs.on_rq_issue, false);
  if (opt.by == BusyBy::None) bpf_program__set_autoload(raw->progs.on_rq_complete, false);
  if (opt.by != BusyBy::Process) {
    bpf_program__set_autoload(raw->progs.on_io_start, false);
    bpf_map__set_max_entries(raw->maps.comms, 1);  // unused: the start program notes names
  }
  step("opened");
  {
    HugePageHeap huge;
    if (int err = busy_bpf__load(raw)) throw NotAvailable(why_not("load", err));
  }
  step("loaded (kernel BTF read, relocated, verified)");
}

// The watch table, filled like the programs look it up (busy.bpf.c).
// Returns the first device's entry, which the programs look at before the
// table (in each head).
ioacct_watch BusyTracker::Impl::fill_watch(const std::vector<uint32_t>& table_devs,
                                           const std::vector<uint32_t>& parent_disks, uint32_t watch_slots) {
  ioacct_watch first{};
  std::vector<ioacct_watch> table(watch_slots);
  for (uint32_t dv : table_devs) {
    const bool is_disk_of_part = std::find(parent_disks.begin(), parent_disks.end(), dv) != parent_disks.end();
    auto f = index_of.find(dv);
    const ioacct_watch entry{dv, f == index_of.end() ? kNone : f->second, is_disk_of_part ? 1u : 0u, 0};
    // The first device is looked at before the table (in each head),
    // and stays in it too.
    if (dv == table_devs.front()) first = entry;
    uint32_t h = ioacct_watch_hash(dv);
    for (uint32_t n = 0; n < watch_slots; ++n, ++h) {
      ioacct_watch& w = table[h & (watch_slots - 1)];
      if (w.dev) continue;
      w = entry;
      break;
    }
  }
  const int fd = bpf_map__fd(skel->maps.watch);
  for (uint32_t k = 0; k < watch_slots; ++k)
    if (table[k].dev && bpf_map_update_elem(fd, &k, &table[k], BPF_ANY) != 0)
      throw NotAvailable(why_not("fill", errno));
  return first;
}

// The logs, heads, probes and tag sets mapped into this process, each head
// told where its log lies, and the reader's per-device state made.
void BusyTracker::Impl::map_logs(const ioacct_watch& first, uint32_t watch_slots) {
  logs_v.map(skel->maps.logs, "the busy tracker's log map");
  heads_v.map(skel->maps.heads, "the busy tracker's head map");
  probes_v.map(skel->maps.probes, "the busy tracker's probe map");
  logs = logs_v.as<ioacct_rec>();
  heads = heads_v.as<ioacct_head>();
  // What the programs read before their record, in each head's line. Set
  // before the attach: no program reads it yet.
  for (uint32_t k = 0; k < nlogs; ++k)
    for (uint32_t c = 0; c < ncpu; ++c) {
      ioacct_head& h = head_of(k, c);
      h.watch_mask = watch_slots - 1;
      h.slots = slots;
      h.base = (k * ncpu + c) * slots;
      h.first = first;
    }
  probes = probes_v.as<ioacct_probe>();
  tagsets_v.map(skel->maps.tagsets, "the busy tracker's queue map");
  tagsets = tagsets_v.as<ioacct_tagset>();
  sample.assign(devices.size(), 0);
  dropped_seen.assign(nlogs * ncpu, 0);
  cut_heads.assign(nlogs * ncpu, 0);
  dropped_ns_seen.assign(nlogs * ncpu, 0);
  dev.resize(devices.size());
  for (Dev& d : dev) {
    d.c.device_span = opt.device_span;
    if (opt.latency) {
      d.c.latency_le_ns.resize(busy::kLatBuckets);
      for (int b = 0; b < busy::kLatBuckets; ++b) d.c.latency_le_ns[static_cast<size_t>(b)] = busy::latency_le(b);
      d.c.latency_count.assign(busy::kLatBuckets, 0);
    }
    if (attributing())
      for (int b = 0; b < busy::kLatBuckets; ++b) d.c.who_latency_le_ns.push_back(busy::latency_le(b));
  }
  skel->bss->want_cgroup = attributing() ? 1 : 0;
  if (opt.bpf_stats) stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
}

// Each device's queue, from the device's own file. Otherwise only the
// first completion on a device names its queue (find_queues), and until
// then the sweep cannot see a request of it: on a device idle at the
// attach, the first request would be idle time at the rounds between reads
// (those compare no count), unsure only from a read on, and late and unseen
// at its completion. The file is opened for reading with O_NONBLOCK (no
// media check), never read, and closed before the attach: the tracker holds
// no device open. A device with no node in /dev waits for its first
// completion.
void BusyTracker::Impl::find_queues_from_files() {
  queue_of.assign(devices.size(), 0);
  std::vector<int> fds;
  std::vector<size_t> of;
  for (size_t i = 0; i < devices.size(); ++i) {
    const BusyDevice& d = devices[i];
    const int fd = ::open(("/dev/" + d.name).c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISBLK(st.st_mode) || major(st.st_rdev) != d.major || minor(st.st_rdev) != d.minor) {
      ::close(fd);
      continue;
    }
    ioacct_tagset& ts = tagsets[fds.size()];
    ts = ioacct_tagset{};
    ts.fd = fd;
    ts.dev = kernel_dev(d.major, d.minor);
    fds.push_back(fd);
    of.push_back(i);
  }
  if (!fds.empty() && find_tags(static_cast<uint32_t>(fds.size())))
    for (size_t j = 0; j < fds.size(); ++j)
      if (tagsets[j].ok) queue_of[of[j]] = tagsets[j].q;
  for (int fd : fds) ::close(fd);
}

// Only now, with every program attached, may a request be logged: one that
// started earlier is seen ending without a start. The arming instant is
// read after the store (a full fence): a program that still saw 0 ran
// before it, and the kernel stamps a request after its program, so a
// request not logged has a stamp before t_arm and is one from before the
// attach. Read before the store, a preemption between the two (23 requests
// once, under ASan on a loaded machine) made requests started in between
// look like starts no program saw.
void BusyTracker::Impl::arm() {
  const uint32_t word = 1u | (test_skip_done() - 1) << IOACCT_ARM_SKIP_SHIFT;
  for (uint32_t k = 0; k < nlogs; ++k)
    for (uint32_t c = 0; c < ncpu; ++c) __atomic_store_n(&head_of(k, c).armed, word, __ATOMIC_SEQ_CST);
  t_arm = t_prev = last_read = now_ns();
  if (test_stale_sweep()) skel->bss->stale_after = t_arm;
  for (Dev& d : dev) d.c.attach_ns = d.c.stamp_ns = t_arm;
}

// Settle: rounds until the kernel counts no request in flight that the
// sweep did not show (the first completion on a device names its queue),
// so that the caller's first read starts a whole window.
void BusyTracker::Impl::settle() {
  std::lock_guard<std::mutex> l(mu);
  const uint64_t give_up = now_ns() + 300'000'000ull;
  for (;;) {
    round(true);
    if (!last_unknown || now_ns() >= give_up) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  settled = true;
  last_read = t_prev;
  for (size_t i = 0; i < dev.size(); ++i) start_window(i);
  k_now = 0;
  win_cap = win_cap_end = UINT64_MAX;
}

uint64_t BusyTracker::Impl::recursion_misses() const {
  uint64_t missed = 0;
  for (const bpf_program* prog : {skel->progs.on_io_done, skel->progs.on_rq_merge, skel->progs.on_rq_issue,
                                  skel->progs.on_rq_complete, skel->progs.on_io_start}) {
    const int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) missed += info.recursion_misses;
  }
  return missed;
}

std::vector<BusyCounters> BusyTracker::read() const {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> l(m.mu);
  m.round(true);
  m.bound_invisible();
  m.last_read = m.t_prev;
  const uint64_t missed = m.recursion_misses();
  std::vector<BusyCounters> out;
  out.reserve(m.dev.size());
  for (Impl::Dev& d : m.dev) {
    for (size_t w = 0; w < d.c.who.size(); ++w) d.c.who[w].cgroup = m.who_keys[w].first;  // by process: the latest
    out.push_back(d.c);
    out.back().missed = missed;
    out.back().dropped = m.dropped_total;
  }
  return out;
}

BusyCost BusyTracker::cost() const {
  Impl& m = *impl_;
  std::lock_guard<std::mutex> l(m.mu);
  BusyCost c = m.cost;
  uint64_t ns = 0, runs = 0;
  for (const bpf_program* prog : {m.skel->progs.on_io_done, m.skel->progs.on_rq_merge, m.skel->progs.on_rq_issue,
                                  m.skel->progs.on_rq_complete, m.skel->progs.on_io_start, m.skel->progs.find_tags,
                                  m.skel->progs.sweep}) {
    const int fd = bpf_program__fd(prog);
    if (fd < 0) continue;
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) != 0) continue;
    ns += info.run_time_ns;
    runs += info.run_cnt;
  }
  // Run times are kept only while the kernel's statistics are on (ours or
  // anybody's): then even 0 is a measurement.
  if (m.stats_fd >= 0 || runs > 0 || read_first_line("/proc/sys/kernel/bpf_stats_enabled") == "1") {
    c.bpf_run_ns = ns;
    c.bpf_runs = runs;
  }
  return c;
}

}  // namespace ioacct
