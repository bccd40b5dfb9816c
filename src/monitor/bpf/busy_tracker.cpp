#include "monitor/bpf/busy_tracker.hpp"

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <filesystem>

#include "acct/clock.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
#include "monitor/bpf/busy.skel.h"
#include "monitor/bpf/busy_shared.h"

namespace ioacct {
namespace {

static_assert(BusyCounters::kDepthBuckets == IOACCT_DEPTH_BUCKETS);

// libbpf explains failures on stderr by default; we turn each into one line
// of our own instead, so its chatter is dropped.
int quiet(enum libbpf_print_level /*level*/, const char* /*fmt*/, va_list /*args*/) { return 0; }

// The kernel's dev_t (MKDEV in include/linux/kdev_t.h), not glibc's.
uint32_t kernel_dev(unsigned major, unsigned minor) { return (major << 20) | minor; }

std::string why_not(const char* step, int err) {
  err = err < 0 ? -err : err;
  // EACCES is also the verifier's "no": a permission problem only without root.
  if (err == EPERM || (err == EACCES && geteuid() != 0))
    return "no permission to load BPF programs (needs root or CAP_BPF+CAP_PERFMON): run as root (or grant "
           "those capabilities) for the exact busy time";
  return fmt::format("cannot {} the BPF programs for exact busy time: {}", step, errno_text(err));
}

// Bucket i's inclusive upper bound, mirroring lat_bucket() in busy.bpf.c.
uint64_t latency_le(int i) {
  if (i == 0) return (uint64_t{1} << IOACCT_LAT_MIN_EXP) - 1;
  if (i >= IOACCT_LAT_BUCKETS - 1) return UINT64_MAX;
  const int e = (i - 1) / (1 << IOACCT_LAT_SUB_BITS) + IOACCT_LAT_MIN_EXP;
  const uint64_t sub = static_cast<uint64_t>((i - 1) % (1 << IOACCT_LAT_SUB_BITS));
  const uint64_t width = uint64_t{1} << (e - IOACCT_LAT_SUB_BITS);
  return (uint64_t{1} << e) + (sub + 1) * width - 1;
}

struct SkelDeleter {
  void operator()(busy_bpf* s) const { busy_bpf__destroy(s); }
};

}  // namespace

int busy_depth_bucket(uint64_t n) noexcept { return n == 0 ? 0 : n == 1 ? 1 : n < 4 ? 2 : n < 8 ? 3 : n < 16 ? 4 : 5; }
uint64_t busy_depth_low(int bucket) noexcept { return bucket == 0 ? 0 : uint64_t{1} << (bucket - 1); }

std::unique_ptr<BusyTracker> BusyTracker::attach(const std::vector<BusyDevice>& devices, bool latency,
                                                 bool device_span) {
  if (devices.size() > IOACCT_MAX_DEVICES)
    throw NotAvailable(fmt::format("exact busy time watches at most {} devices; {} were asked for: name fewer",
                                   IOACCT_MAX_DEVICES, devices.size()));
  std::error_code ec;
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux", ec))
    throw NotAvailable(
        "this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF), which exact busy time needs: "
        "use a kernel built with it");
  // With iostats off (and no I/O scheduler) the block layer skips
  // block_io_done but still fires block_io_start: every request would look
  // in flight forever. Refuse rather than print a wrong figure.
  for (const BusyDevice& d : devices) {
    const std::filesystem::path dev = std::filesystem::canonical(fmt::format("/sys/dev/block/{}:{}", d.major, d.minor), ec);
    if (ec) continue;
    const std::filesystem::path disk = std::filesystem::exists(dev / "partition", ec) ? dev.parent_path() : dev;
    if (read_first_line((disk / "queue" / "iostats").string()) == "0")
      throw NotAvailable(fmt::format("iostats is off for {} ({}/queue/iostats is 0), so the block layer does not end "
                                     "the accounting span: echo 1 > /sys/block/{}/queue/iostats for the exact busy time",
                                     d.name, disk.string(), disk.filename().string()));
  }
  libbpf_set_print(quiet);

  // Kernels before 6.5 have no block_io_start/done: the accounting span is
  // then issue..complete, and source() says so.
  bool has_io_start = false;
  if (btf* vmlinux = btf__load_vmlinux_btf()) {
    has_io_start = btf__find_by_name_kind(vmlinux, "btf_trace_block_io_start", BTF_KIND_TYPEDEF) >= 0 &&
                   btf__find_by_name_kind(vmlinux, "btf_trace_block_io_done", BTF_KIND_TYPEDEF) >= 0;
    btf__free(vmlinux);
  }

  std::unique_ptr<busy_bpf, SkelDeleter> skel(busy_bpf__open());
  if (!skel) throw NotAvailable(why_not("open", errno));
  skel->rodata->latency = latency ? 1 : 0;
  skel->rodata->acct_from_rq = has_io_start ? 0 : 1;
  if (!has_io_start) {
    bpf_program__set_autoload(skel->progs.on_io_start, false);
    bpf_program__set_autoload(skel->progs.on_io_done, false);
  } else if (!device_span) {
    bpf_program__set_autoload(skel->progs.on_rq_issue, false);
    bpf_program__set_autoload(skel->progs.on_rq_complete, false);
  }
  // The sweep that finds lost completions (busy.bpf.c) needs bpf_loop (5.17+);
  // without it a lost one is still found when its struct request is reused.
  // (libbpf cannot probe a tracing program type; a helper is there for all.)
  if (libbpf_probe_bpf_helper(BPF_PROG_TYPE_RAW_TRACEPOINT, BPF_FUNC_loop, nullptr) <= 0)
    bpf_program__set_autoload(skel->progs.sweep, false);
  skel->rodata->n_watch = static_cast<uint32_t>(devices.size());
  std::error_code pec;
  for (const BusyDevice& d : devices)
    if (std::filesystem::exists(fmt::format("/sys/dev/block/{}:{}/partition", d.major, d.minor), pec))
      skel->rodata->any_partition = 1;
  for (size_t i = 0; i < devices.size(); ++i) skel->rodata->watch[i] = kernel_dev(devices[i].major, devices[i].minor);
  if (int err = busy_bpf__load(skel.get())) throw NotAvailable(why_not("load", err));

  const int stats_fd = bpf_map__fd(skel->maps.stats);
  const uint64_t t0 = now_ns();
  for (uint32_t i = 0; i < devices.size(); ++i) {
    ioacct_dev v{};
    v.acct_word = v.dev_word = IOACCT_WORD(t0, 0);  // the programs count nothing before `armed`
    if (bpf_map_update_elem(stats_fd, &i, &v, BPF_ANY) != 0) throw NotAvailable(why_not("fill", errno));
  }
  if (int err = busy_bpf__attach(skel.get())) throw NotAvailable(why_not("attach", err));
  // Only now, with every program attached, may a request be counted: one that
  // started earlier is seen ending without a start and is left out.
  __atomic_store_n(&skel->bss->armed, 1, __ATOMIC_RELEASE);

  std::unique_ptr<BusyTracker> t(new BusyTracker());
  t->skel_ = skel.release();
  t->devices_ = devices;
  t->latency_ = latency;
  t->device_span_ = device_span;
  t->attach_ns_ = t0;
  t->source_ = has_io_start ? "block_io_start/block_io_done" : "block_rq_issue/block_rq_complete";
  return t;
}

BusyTracker::~BusyTracker() { busy_bpf__destroy(skel_); }

namespace {

// A consistent copy of a device's shared entry: two equal copies with no
// change between its CAS and its sums (busy_shared.h). A change takes tens of
// ns, so a retry or two is the most ever needed; after many (a CPU stopped
// in the middle of one, by the hypervisor) the last copy is taken as it is.
ioacct_dev snapshot(int fd, uint32_t i) {
  ioacct_dev a{}, b{};
  for (int tries = 0;; ++tries) {
    if (bpf_map_lookup_elem(fd, &i, &a) != 0 || bpf_map_lookup_elem(fd, &i, &b) != 0)
      throw RuntimeError(fmt::format("cannot read the busy-time map: {}", errno_text(errno)));
    if ((a.acct_pending == 0 && a.dev_pending == 0 && std::memcmp(&a, &b, sizeof(a)) == 0) || tries >= 10000) return b;
  }
}

}  // namespace

std::vector<BusyCounters> BusyTracker::read() const {
  // Find the lost completions first (busy.bpf.c, sweep), so that this read
  // has the spans they leave open closed.
  if (const int fd = bpf_program__fd(skel_->progs.sweep); fd >= 0) {
    uint64_t args[1] = {};
    LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
    (void)bpf_prog_test_run_opts(fd, &run);  // best effort: a lost one is also found on reuse
  }
  std::vector<BusyCounters> out(devices_.size());
  uint64_t missed = 0;
  for (const bpf_program* p : {skel_->progs.on_io_start, skel_->progs.on_io_done, skel_->progs.on_rq_issue,
                               skel_->progs.on_rq_complete, skel_->progs.on_rq_merge}) {
    const int fd = bpf_program__fd(p);
    if (fd < 0) continue;  // not loaded (before 6.5)
    bpf_prog_info info{};
    uint32_t len = sizeof(info);
    if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) missed += info.recursion_misses;
  }
  const int stats_fd = bpf_map__fd(skel_->maps.stats), lat_fd = bpf_map__fd(skel_->maps.lat);
  const int counts_fd = bpf_map__fd(skel_->maps.counts);
  const int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) throw RuntimeError(fmt::format("cannot count the possible CPUs: {}", errno_text(-ncpu)));
  std::vector<ioacct_cnt> per_cpu(static_cast<size_t>(ncpu));  // 56 bytes: a multiple of 8, as the kernel lays them out
  for (uint32_t i = 0; i < devices_.size(); ++i) {
    // The clock before the snapshot, never after: this thread may be
    // preempted between the two, and a clock read after would extend the
    // open spans over time in which requests may have ended. Events applied
    // meanwhile are in the snapshot with later stamps; the snapshot is then
    // exact as of the latest of them.
    const uint64_t before = now_ns();
    const ioacct_dev v = snapshot(stats_fd, i);
    if (bpf_map_lookup_elem(counts_fd, &i, per_cpu.data()) != 0)
      throw RuntimeError(fmt::format("cannot read the busy-time counters: {}", errno_text(errno)));
    const uint64_t acct_last = IOACCT_WORD_STAMP_NS(v.acct_word), dev_last = IOACCT_WORD_STAMP_NS(v.dev_word);
    const uint64_t acct_n = IOACCT_WORD_COUNT(v.acct_word), dev_n = IOACCT_WORD_COUNT(v.dev_word);
    const uint64_t now = std::max<uint64_t>({before, acct_last, dev_last});
    BusyCounters& c = out[i];
    c.stamp_ns = now;
    c.attach_ns = attach_ns_;
    c.in_flight = acct_n;
    for (int b = 0; b < IOACCT_DEPTH_BUCKETS; ++b) c.depth_ns[b] = v.depth_ns[b];
    c.busy_ns = v.acct_busy;
    c.dev_busy_ns = v.dev_busy;
    c.unsure_ns = v.unsure;
    c.device_span = device_span_;
    // The spans still open run on to `now`.
    c.depth_ns[busy_depth_bucket(acct_n)] += now - acct_last;
    if (acct_n) c.busy_ns += now - acct_last;
    if (dev_n) c.dev_busy_ns += now - dev_last;
    for (const ioacct_cnt& k : per_cpu) {
      c.started += k.started;
      c.done += k.done;
      c.untracked += k.untracked;
      c.lost += k.lost;
      c.contended += k.contended;
      c.latency_sum_ns += k.lat_sum;
      c.latency_max_ns = std::max<uint64_t>(c.latency_max_ns, k.lat_max);
    }
    c.missed = missed;
    if (latency_) {
      ioacct_lat l{};
      if (bpf_map_lookup_elem(lat_fd, &i, &l) != 0)
        throw RuntimeError(fmt::format("cannot read the latency map: {}", errno_text(errno)));
      c.latency_le_ns.resize(IOACCT_LAT_BUCKETS);
      c.latency_count.assign(l.count, l.count + IOACCT_LAT_BUCKETS);
      for (int b = 0; b < IOACCT_LAT_BUCKETS; ++b) c.latency_le_ns[b] = latency_le(b);
    } else {
      c.latency_sum_ns = c.latency_max_ns = 0;
    }
  }
  return out;
}

}  // namespace ioacct
