#include "monitor/bpf/busy_tracker.hpp"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <fmt/format.h>
#include <malloc.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cerrno>
#include <condition_variable>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <mutex>
#include <thread>
#include <optional>
#include <string_view>
#include <unordered_map>

#include "acct/clock.hpp"
#include "acct/procfs.hpp"
#include "common/errors.hpp"
#include "common/files.hpp"
// The shared layout first: the skeleton's maps name its structs.
#include "monitor/bpf/busy_shared.h"
#include "monitor/bpf/busy.skel.h"
#include "monitor/bpf/libbpf_log.hpp"
#include "monitor/bpf/map_view.hpp"
#include "monitor/bpf/pointer_map.hpp"

namespace ioacct {
namespace {

constexpr uint32_t kNone = IOACCT_NO_DEVICE;
// How far a start stamp may lie before the kernel accounts the request: it
// takes the stamp from the submitting task's plug, which caches the clock
// until the plug ends or the task is scheduled out (one io_uring submission
// of 16 large reads: up to a few hundred µs under load).
constexpr uint64_t kStaleStamp = 1'000'000;
// How long after its done program diskstats may still count a request in
// flight (blk_account_io_done moves the count just after the tracepoint).
constexpr uint64_t kCountLag = 100'000;
// The most requests one tag set holds (BLK_MQ_MAX_DEPTH), and where kernel
// addresses lie (x86-64 with 4- or 5-level paging, arm64 with 48- or 52-bit
// addresses).
constexpr uint32_t kMaxTags = 10240;
constexpr uint64_t kKernelSpace = 0xff00000000000000ull;

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

// Latency buckets, log-linear: [0, 2^kLatMinExp) is bucket 0, then every
// power of two up to 2^(kLatMinExp+kLatExps) is split into 2^kLatSubBits
// equal parts, then one bucket for everything above (~69 s).
constexpr int kLatSubBits = 3, kLatMinExp = 10, kLatExps = 26;
constexpr int kLatBuckets = 2 + kLatExps * (1 << kLatSubBits);

int lat_bucket(uint64_t v) {
  if (v < (uint64_t{1} << kLatMinExp)) return 0;
  const int e = static_cast<int>(std::bit_width(v)) - 1;
  if (e >= kLatMinExp + kLatExps) return kLatBuckets - 1;
  const auto sub = static_cast<int>((v >> (e - kLatSubBits)) & ((1u << kLatSubBits) - 1));
  return 1 + (e - kLatMinExp) * (1 << kLatSubBits) + sub;
}

// Bucket i's inclusive upper bound, mirroring lat_bucket().
uint64_t latency_le(int i) {
  if (i == 0) return (uint64_t{1} << kLatMinExp) - 1;
  if (i >= kLatBuckets - 1) return UINT64_MAX;
  const int e = (i - 1) / (1 << kLatSubBits) + kLatMinExp;
  const auto sub = static_cast<uint64_t>((i - 1) % (1 << kLatSubBits));
  const uint64_t width = uint64_t{1} << (e - kLatSubBits);
  return (uint64_t{1} << e) + (sub + 1) * width - 1;
}

// The kernel's dev_t (MKDEV in include/linux/kdev_t.h), not glibc's.
uint32_t kernel_dev(unsigned major, unsigned minor) { return (major << 20) | minor; }

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

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

uint32_t pow2_at_least(uint64_t n) { return static_cast<uint32_t>(std::bit_ceil(std::max<uint64_t>(n, 1))); }

struct SkelDeleter {
  void operator()(busy_bpf* s) const { busy_bpf__destroy(s); }
};

// What the reader knows of a request it has seen in the accounting span.
struct Req {
  uint32_t disk = kNone;  // the whole disk's index (kNone: only a partition of it is watched)
  uint32_t part = kNone;  // the partition's index, when watched
  uint64_t s = 0;         // the kernel's start stamp
  uint64_t seen = 0;      // the last round's end at which the kernel showed it in flight
  uint64_t issue = 0;     // block_rq_issue's stamp (dev% only; 0: not issued)
  uint64_t q = 0;         // its request_queue
  bool swept = false;     // this round's sweep found it
};

// A queue the sweep walks: the index of its whole disk (kNone: only a
// partition of it is watched).
struct Queue {
  uint32_t disk = kNone;
  bool walked = false;  // this round's sweep read every request of it
};

}  // namespace

struct BusyTracker::Impl {
  std::unique_ptr<busy_bpf, SkelDeleter> skel;
  std::vector<BusyDevice> devices;
  BusyOptions opt;
  std::string source = "block_io_start/block_io_done";
  uint32_t ncpu = 1, nlogs = 2, slots = 1, probe_cap = 1;
  MapView logs_v, heads_v, probes_v, tagsets_v;
  ioacct_rec* logs = nullptr;
  ioacct_head* heads = nullptr;  // IOACCT_LOGS per CPU (busy_shared.h)
  // Program k's head on CPU c.
  ioacct_head& head_of(uint32_t k, uint32_t c) const { return heads[c * IOACCT_LOGS + k]; }
  ioacct_probe* probes = nullptr;
  ioacct_tagset* tagsets = nullptr;
  std::unordered_map<uint32_t, uint32_t> index_of;  // dev_t -> device index
  std::vector<std::vector<uint32_t>> kernel_devs;   // per device: the dev_ts whose diskstats in_flight add up to it
  int stats_fd = -1;

  mutable std::mutex mu;
  PointerMap<Req> inflight;
  PointerMap<uint64_t> issued;     // dev% only: the last issue of a struct request not yet known in flight
  // What ended on each struct request. `le`, in round `round` only: every
  // request on it that started at or before this is over (a completion's
  // stamp, a merge's time). `last`, in any round: the stamp of the last
  // request seen ending on it (`last_t`: when). A struct taken again keeps
  // that stamp until its new request is stamped, just after the request is
  // flagged accounted (blk_account_io_start), so a sweep that looks between
  // the two stores reads the old request's stamp on the new one: that is no
  // request in flight.
  struct Ended {
    uint64_t le = 0, last = 0, last_t = 0, round = 0;
  };
  PointerMap<Ended> ended;
  uint64_t round_no = 0;
  PointerMap<Queue> queues;        // by request_queue address
  std::vector<uint64_t> sample;    // per device: a request of its queue (from a completion), 0: none yet
  std::vector<bool> is_disk;       // per device: a whole disk (not a partition)
  std::vector<uint64_t> keys;
  // What diskstats says of a device (its own and, for a whole disk, its
  // partitions'): the kernel's count of requests in the accounting span
  // (per-CPU counters moved right after our programs run), the requests it
  // completed, and their latencies summed (ms, truncated per field).
  struct Kernel {
    uint64_t in_flight = 0, ms = 0;
    uint64_t field_done[4] = {};  // completions per ms field (reads, writes, discards, flushes)
    bool read = false;
    uint64_t done() const { return field_done[0] + field_done[1] + field_done[2] + field_done[3]; }
  };
  struct Dev {
    BusyCounters c;
    BusyRoundInput acct, dev;
    std::vector<BusySpan> carry_acct, carry_dev;  // the parts of completed spans after the round's end
    uint64_t in_walk = 0;    // requests the sweep showed in flight, started before the kernel's count was read
    uint64_t ended_at_k = 0;  // completions logged about when the kernel's count was read, started before it
    Kernel kernel_prev;       // diskstats read just before the last read's round
    BusyCounters at_read;     // the counters at the last read
    // Completions seen since diskstats was read before the last read's round
    // (and, in a read's round, before this read's diskstats after the
    // sweep), with their latencies; and those since this read's own first
    // diskstats read, for the next window.
    // Completions logged about when diskstats was read (it may or may not
    // count them) are `amb`: they may explain a count, and their latencies
    // are not taken off the bound.
    uint64_t win_n = 0, win_lat = 0, win_amb = 0, next_n = 0, next_lat = 0, next_amb = 0;
  };
  std::vector<Dev> dev;
  uint64_t t_prev = 0, t_arm = 0, last_read = 0;
  uint64_t lost_at = 0;  // the last round that found a request whose end no program saw
  uint64_t busiest = 0;  // the most records one log held at a collect, this round
  bool settled = false, last_unknown = false;
  std::vector<uint64_t> dropped_seen, dropped_ns_seen;
  uint64_t dropped_total = 0;
  BusyCost cost;
  std::vector<ioacct_rec> batch[IOACCT_LOGS], pending[IOACCT_LOGS];
  std::vector<uint64_t> cut_heads;
  std::vector<std::pair<uint64_t, uint32_t>> arrays;  // this round's request arrays (static_rqs, nr_tags)
  std::vector<uint64_t> array_q;                      // ... and the queue each was found from
  bool collected_unknown = false;
  std::vector<Kernel> kernel_before, kernel_after;  // diskstats as the last checked round read it, before and after its sweep
  // When diskstats was read before the last read's round (the read began,
  // it ended), before this round's (a checked round; 0 otherwise), and
  // after this round's sweep (began, ended).
  uint64_t win_lo_start = 0, win_lo = 0, k_now = 0, k_end = 0;
  uint64_t win_cap = UINT64_MAX, win_cap_end = UINT64_MAX;

  std::thread bg;
  std::condition_variable cv;
  bool stop = false;

  ~Impl() {
    {
      std::lock_guard<std::mutex> l(mu);
      stop = true;
    }
    cv.notify_all();
    if (bg.joinable()) bg.join();
    skel.reset();  // detaches before the maps are unmapped
    if (stats_fd >= 0) close(stats_fd);
  }

  void for_devices(uint32_t disk, uint32_t part, const auto& f) {
    if (disk != kNone && disk < dev.size()) f(dev[disk]);
    if (part != kNone && part < dev.size() && part != disk) f(dev[part]);
  }

  // Copies every published record into `pending` and frees its slots; the
  // next drain() hands them over. Runs between rounds too, when the logs
  // fill fast. Returns whether a log dropped a merge or issue record (then
  // a request may be unaccounted for) and adds dropped completions' time to
  // unsure. Each CPU's log is in time order, the logs among themselves are
  // not: drain() puts them in order.
  bool collect() {
    for (uint32_t k = 0; k < nlogs; ++k)
      for (uint32_t c = 0; c < ncpu; ++c) cut_heads[k * ncpu + c] = __atomic_load_n(&head_of(k, c).head, __ATOMIC_ACQUIRE);
    bool unknown = false;
    for (uint32_t k = 0; k < nlogs; ++k) {
      for (uint32_t c = 0; c < ncpu; ++c) {
        const uint32_t idx = k * ncpu + c;
        ioacct_head& h = head_of(k, c);
        const uint64_t head = cut_heads[idx];
        uint64_t tail = h.tail;
        if (head - tail > slots) tail = head - slots;  // never: the writer checks
        // At most two runs of the ring: up to its end, then from its start.
        const ioacct_rec* log = logs + h.base;
        const uint64_t at = tail & (slots - 1), n = head - tail, first = std::min<uint64_t>(n, slots - at);
        pending[k].insert(pending[k].end(), log + at, log + at + first);
        pending[k].insert(pending[k].end(), log, log + (n - first));
        busiest = std::max<uint64_t>(busiest, n);
        __atomic_store_n(&h.tail, head, __ATOMIC_RELEASE);
        const uint64_t dropped = __atomic_load_n(&h.dropped, __ATOMIC_RELAXED);
        const uint64_t dropped_ns = __atomic_load_n(&h.dropped_ns, __ATOMIC_RELAXED);
        if (dropped != dropped_seen[idx]) {
          dropped_total += dropped - dropped_seen[idx];
          if (k != IOACCT_LOG_DONE) unknown = true;
          dropped_seen[idx] = dropped;
        }
        if (dropped_ns != dropped_ns_seen[idx]) {
          for (Dev& d : dev) d.acct.unsure_extra_ns += dropped_ns - dropped_ns_seen[idx];
          dropped_ns_seen[idx] = dropped_ns;
        }
      }
    }
    collected_unknown |= unknown;
    return unknown;
  }

  // Everything collected so far, as a batch in the order the programs ran.
  // apply() reads a completion with a later stamp than the request known on
  // its struct as that request having ended unseen, which holds only when
  // the known request's own completion, if logged, came first. Two requests
  // on one struct can end on two CPUs within one batch (one found in flight
  // by the sweep, the next taken and ended on the other CPU before the
  // reader's next round), and CPU order would put the later one first: 2 of
  // ~1000 requests counted lost and busy twice the trace's in 1 run of 4
  // (StatExact.AStructTakenAgainBeforeItsStampIsNoRequest). A struct's two
  // requests end in the order they held it, so time order is that order.
  bool drain() {
    collect();
    for (uint32_t k = 0; k < nlogs; ++k) {
      batch[k].swap(pending[k]);
      pending[k].clear();
      if (ncpu > 1)
        std::stable_sort(batch[k].begin(), batch[k].end(),
                         [](const ioacct_rec& a, const ioacct_rec& b) { return a.t < b.t; });
    }
    const bool unknown = collected_unknown;
    collected_unknown = false;
    return unknown;
  }

  void late(Dev& d, uint64_t s, uint64_t from) {
    // Coverage of a request no round found in flight, before this round:
    // since the last read it belongs to the window still open (unsure there,
    // unplaced); before that, to a report already made.
    const uint64_t a = std::max(s, t_arm);
    if (a >= from) return;
    const uint64_t split = std::max(a, std::min(from, last_read));
    d.acct.unsure_extra_ns += from - split;
    if (settled) d.c.late_ns += split - a;
  }

  // A request the reader did not know, first seen now (by its completion or
  // by the sweep). A round's sweep finds every request in flight when it
  // looks, so one that started more than a plug-cached stamp's lag before
  // this round was in flight unseen by the last one: its time before this
  // round is unsure (late()).
  void first_seen(uint32_t disk, uint32_t part, uint64_t s, uint64_t from) {
    const bool missed = settled && s >= t_arm && s + kStaleStamp < from;
    // Within the lag, its time since the last read is unsure in this window
    // (it may have been accounted after the last sweep looked).
    const uint64_t a = std::max({s, t_arm, last_read});
    for_devices(disk, part, [&](Dev& d) {
      ++d.c.started;
      if (missed) {
        ++d.c.unseen_starts;
        late(d, s, from);
      } else if (a < from) {
        d.acct.unsure_extra_ns += from - a;
      }
    });
  }

  // A known request ended and no program saw it: unsure from when it was
  // last known in flight to `until`.
  void lost(const Req& r, uint64_t from, uint64_t until, uint64_t t) {
    const uint64_t a = std::max(r.seen, from);
    for_devices(r.disk, r.part, [&](Dev& d) {
      if (until > a) {
        d.acct.unsure.push_back({a, until});
        if (r.issue) d.dev.unsure.push_back({a, until});
      }
      ++d.c.lost;
      ++d.win_n;  // ended after it was last seen in flight: inside the window's span
    });
    lost_at = t;
  }

  // A certain span; its part after the round's end `t` waits for the next.
  static void certain(std::vector<BusySpan>& now, std::vector<BusySpan>& carry, uint64_t a, uint64_t b, uint64_t t) {
    now.push_back({a, b});
    if (b > t) carry.push_back({std::max(a, t), b});
  }

  // A request on struct `rq` ended (completed or merged away): those
  // started at or before `le` are over this round, and the struct keeps
  // stamp `s` from time `t` until its next request is stamped.
  void ended_on(uint64_t rq, uint64_t le, uint64_t s, uint64_t t) {
    Ended& e = ended[rq];
    if (e.round != round_no) {
      e.round = round_no;
      e.le = 0;
    }
    e.le = std::max(e.le, le);
    if (s && t >= e.last_t) {
      e.last = s;
      e.last_t = t;
    }
  }

  // Applies one drained batch: completed intervals become certain spans (the
  // part after the round's end `t` kept for the next round), and the
  // requests they end leave the in-flight set. `k`: when the kernel's
  // in-flight count was read (0: not read).
  void apply(uint64_t from, uint64_t t, uint64_t k) {
    for (const ioacct_rec& r : batch[IOACCT_LOG_DONE]) {
      if (r.part == IOACCT_UNACCOUNTED) continue;  // the kernel did not account it: nor does the sweep
      if (r.disk != kNone && r.disk < sample.size()) sample[r.disk] = r.rq;
      else if (r.part != kNone && r.part < sample.size()) sample[r.part] = r.rq;
      Req* known = inflight.find(r.rq);
      // The same request: its stamp, or an earlier one (a request merged
      // into it after the sweep saw it: the kernel keeps the earlier stamp).
      const bool same = known && r.s <= known->s;
      if (known && !same) {  // the struct's earlier request ended, no program saw it, before this one started
        lost(*known, from, std::min<uint64_t>(r.s, t), t);
        inflight.erase(r.rq);
        known = nullptr;
      }
      if (!same) first_seen(r.disk, r.part, r.s, from);
      ended_on(r.rq, r.s, r.s, r.t);
      const uint64_t lat = r.t > r.s ? r.t - r.s : 0;
      const uint64_t issue = known ? known->issue : issue_of(r.rq, r.s);
      for_devices(r.disk, r.part, [&](Dev& d) {
        certain(d.acct.certain, d.carry_acct, r.s, r.t, t);
        if (issue && issue < r.t) certain(d.dev.certain, d.carry_dev, issue, r.t, t);
        ++d.c.done;
        d.c.latency_sum_ns += lat;
        d.c.latency_max_ns = std::max(d.c.latency_max_ns, lat);
        if (opt.latency) ++d.c.latency_count[static_cast<size_t>(lat_bucket(lat))];
        // diskstats takes a request out of its count just after this
        // program; one that ended about when the count was read may be in it.
        if (k && r.s <= k && r.t + kCountLag >= k) ++d.ended_at_k;
        // diskstats counts a completion just after its program: one logged
        // after a diskstats read is not in it, one logged well before the
        // next is.
        if (r.t > win_lo && r.t + kCountLag <= win_cap) {
          ++d.win_n;
          d.win_lat += lat;
        } else if (r.t > win_lo_start && r.t <= win_cap_end) {
          ++d.win_amb;
        }
        if (k_now && r.t > k_end) {
          ++d.next_n;
          d.next_lat += lat;
        } else if (k_now && r.t > k_now) {
          ++d.next_amb;
        }
      });
      if (same) inflight.erase(r.rq);
      ++cost.completions;
    }
    for (const ioacct_rec& r : batch[IOACCT_LOG_MERGE]) {
      // Merged away: the survivor keeps the earlier start stamp, so the
      // union loses nothing; its own span up to here counts for depth.
      ended_on(r.rq, r.t, r.s, r.t);
      const Req* known = inflight.find(r.rq);
      for_devices(r.disk, known ? known->part : kNone, [&](Dev& d) {
        if (known) certain(d.acct.certain, d.carry_acct, std::max(known->s, from), r.t, t);
        ++d.c.merged;
      });
      if (known) inflight.erase(r.rq);
    }
  }

  // dev% only: a request's device span runs from its last issue (after its
  // start: an older one is a stale issue of the struct's previous request,
  // whose end no program saw) to the end of its accounting. Issues of
  // requests not known yet wait in `issued`.
  void note_issues() {
    for (const ioacct_rec& r : batch[IOACCT_LOG_ISSUE]) {
      if (Req* known = inflight.find(r.rq); known && r.t >= known->s) known->issue = std::max<uint64_t>(known->issue, r.t);
      else {
        uint64_t& i = issued[r.rq];
        i = std::max<uint64_t>(i, r.t);
      }
    }
  }
  uint64_t issue_of(uint64_t rq, uint64_t s) {
    const uint64_t* i = issued.find(rq);
    return i && *i >= s ? *i : 0;
  }

  // Where each queue keeps its requests, from the sample of each device.
  void find_queues() {
    arrays.clear();
    array_q.clear();
    uint32_t n = 0;
    std::vector<uint32_t> of;
    for (uint32_t i = 0; i < sample.size(); ++i)
      if (sample[i]) {
        tagsets[n] = ioacct_tagset{};
        tagsets[n].rq = sample[i];
        of.push_back(i);
        ++n;
      }
    if (!n) return;
    queues.clear();
    skel->bss->n_tagsets = n;
    uint64_t args[1] = {};
    LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
    if (bpf_prog_test_run_opts(bpf_program__fd(skel->progs.find_tags), &run) != 0) return;
    for (uint32_t j = 0; j < n; ++j) {
      const ioacct_tagset& ts = tagsets[j];
      if (!ts.ok) continue;
      Queue& q = queues[ts.q];
      // A disk's sample gives its queue the disk's index; a partition's
      // (its disk is not watched: completions name the disk when it is)
      // leaves it kNone.
      if (is_disk[of[j]]) q.disk = of[j];
      for (uint32_t a = 0; a < ts.n && a < IOACCT_TAG_ARRAYS; ++a) {
        const std::pair<uint64_t, uint32_t> arr{ts.rqs[a], ts.nr[a]};
        // A queue holds at most BLK_MQ_MAX_DEPTH (10240) requests per tag
        // set, in kernel memory: anything else was read from a request that
        // is no longer the queue's (a sample from a queue since torn down),
        // and walking it would take the sweep forever.
        if (arr.second == 0 || arr.second > kMaxTags || arr.first < kKernelSpace) continue;
        if (std::find(arrays.begin(), arrays.end(), arr) != arrays.end()) continue;
        arrays.push_back(arr);
        array_q.push_back(ts.q);
      }
    }
  }

  // The kernel's own view of every request of every queue found: those in
  // the accounting span now, with their start stamps.
  struct Found {
    uint64_t rq, q, s;
    uint32_t part_dev;
    bool hooked;  // free, read as held by IOACCT_TEST_STALE_SWEEP
  };
  std::vector<Found> sweep() {
    std::vector<Found> out;
    queues.for_each([](uint64_t, Queue& q) { q.walked = true; });
    std::vector<uint64_t> slot_q;
    for (size_t a = 0; a < arrays.size(); ++a)
      for (uint32_t i = 0; i < arrays[a].second; ++i) {
        keys.push_back(arrays[a].first + 8ull * i);
        slot_q.push_back(array_q[a]);
      }
    for (size_t next = 0; next < keys.size();) {
      const size_t first = next;
      uint32_t n = 0;
      for (; next < keys.size() && n < probe_cap; ++next, ++n) {
        probes[n] = ioacct_probe{};
        probes[n].slot = keys[next];
      }
      skel->bss->n_probes = n;
      uint64_t args[1] = {};
      LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
      const int err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sweep), &run);
      for (uint32_t i = 0; i < n; ++i) {
        const ioacct_probe& p = probes[i];
        if (err || !p.ok) {
          if (Queue* q = queues.find(slot_q[first + i])) q->walked = false;
          continue;
        }
        if (p.ref > 0 && p.accounted && p.start_time_ns) out.push_back({p.rq, p.q, p.start_time_ns, p.part_dev, p.accounted == 2});
      }
    }
    keys.clear();
    return out;
  }

  std::vector<Kernel> kernel_stats() {
    std::vector<Kernel> k(devices.size());
    std::unordered_map<uint32_t, DiskStats> by_dev;
    const std::string text = read_file("/proc/diskstats");
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      if (auto d = parse_diskstats_line(std::string_view(text).substr(pos, nl - pos)))
        by_dev[kernel_dev(d->major, d->minor)] = *d;
      pos = nl + 1;
    }
    for (size_t i = 0; i < devices.size(); ++i)
      for (uint32_t dv : kernel_devs[i])
        if (auto f = by_dev.find(dv); f != by_dev.end()) {
          const DiskStats& s = f->second;
          k[i].in_flight += s.in_flight;
          if (dv != kernel_devs[i].front()) continue;  // a disk's completions include its partitions'
          k[i].ms += s.read_ms + s.write_ms + s.discard_ms + s.flush_ms;
          const uint64_t per[4] = {s.reads, s.writes, s.discards, s.flushes};
          for (int n = 0; n < 4; ++n) k[i].field_done[n] += per[n];
          k[i].read = true;
        }
    return k;
  }

  // Completions no program saw at either end (the kernel ran none: docs/
  // design.md, "Lost events") leave no trace but diskstats' counts: at each
  // read, busy_invisible() bounds their time with diskstats' latency sum
  // over a span that holds the window (read before the previous read's round
  // and after this read's sweep, before its second drain, so that every
  // completion counted there has its record drained). diskstats' latency of
  // a request is a little longer than ours (its clock is read after our
  // program), so the bound is a little loose, never short.
  void bound_invisible() {
    for (size_t i = 0; i < dev.size(); ++i) {
      Dev& d = dev[i];
      const Kernel& a = d.kernel_prev;
      if (i < kernel_after.size() && a.read && kernel_after[i].read) {
        const Kernel& b = kernel_after[i];
        // diskstats truncates each field's latency sum to ms: a field with
        // no completion in between did not move at all.
        uint64_t changed = 0;
        for (int f = 0; f < 4; ++f) changed += b.field_done[f] != a.field_done[f] ? 1 : 0;
        const uint64_t window = d.c.stamp_ns - d.at_read.stamp_ns;
        const uint64_t used = (d.c.busy_ns - d.at_read.busy_ns) + (d.c.unsure_ns - d.at_read.unsure_ns);
        const BusyInvisibleOutput o = busy_invisible({.kernel_done = b.done() > a.done() ? b.done() - a.done() : 0,
                                                      .seen = d.win_n,
                                                      .ambiguous = d.win_amb,
                                                      .kernel_ms = b.ms > a.ms ? b.ms - a.ms : 0,
                                                      .ms_fields = changed,
                                                      .seen_latency_ns = d.win_lat,
                                                      .idle_ns = window > used ? window - used : 0});
        d.c.unsure_ns += o.unsure_ns;
        d.c.invisible += o.invisible;
      }
      start_window(i);
    }
    k_now = 0;
    win_cap = win_cap_end = UINT64_MAX;
  }

  // The next window's span starts at this read's first diskstats read.
  void start_window(size_t i) {
    Dev& d = dev[i];
    if (i < kernel_before.size()) d.kernel_prev = kernel_before[i];
    d.win_n = d.next_n;
    d.win_lat = d.next_lat;
    d.win_amb = d.next_amb;
    d.next_n = d.next_lat = d.next_amb = 0;
    d.at_read = d.c;
    win_lo_start = k_now;
    win_lo = k_end;
  }

  // One round: everything up to now becomes cumulative figures. The round
  // ends at `t`, just before the sweep looks; every request in the span
  // then is either one the sweep finds or one whose completion is logged
  // before the second drain. `check`: also compare with the kernel's own
  // in-flight count (every read, and while settling).
  void round(bool check) {
    const uint64_t cpu0 = thread_cpu_ns();
    const uint64_t from = t_prev;
    ++round_no;
    for (Dev& d : dev) {
      for (const BusySpan& s : d.carry_acct) d.acct.certain.push_back(s);
      for (const BusySpan& s : d.carry_dev) d.dev.certain.push_back(s);
      d.carry_acct.clear();
      d.carry_dev.clear();
      d.in_walk = d.ended_at_k = 0;
    }
    std::vector<uint64_t> kernel;
    uint64_t k = 0;
    if (check) {
      k = now_ns();
      kernel_before = kernel_stats();
      for (const Kernel& x : kernel_before) kernel.push_back(x.in_flight);
      k_now = k;
      k_end = now_ns();
      for (Dev& d : dev) d.next_n = d.next_lat = d.next_amb = 0;
    }
    bool unknown = drain();
    const uint64_t t = now_ns();
    if (opt.device_span) note_issues();
    apply(from, t, k);
    find_queues();
    const std::vector<Found> found = sweep();
    if (check) {  // before the second drain: every completion it counts has its record in that drain
      win_cap = now_ns();
      kernel_after = kernel_stats();
      win_cap_end = now_ns();
    }
    unknown |= drain();
    if (opt.device_span) note_issues();
    apply(from, t, k);
    // What the sweep showed: known requests still in flight, requests not
    // known yet, and the ends of known ones whose completion no program saw.
    inflight.for_each([](uint64_t, Req& r) { r.swept = false; });
    for (const Found& f : found) {
      const Queue* q = queues.find(f.q);
      if (!q) continue;  // another queue sharing the tag set
      // The test hook's struct stands for one taken again whose last request
      // a program saw end: only those are the race (one whose end no program
      // saw is free, and the reader cannot know it).
      const Ended* e = ended.find(f.rq);
      if (f.hooked && (!e || e->last != f.s)) continue;
      if (e) {
        if (e->round == round_no && f.s <= e->le) continue;  // it ended after the sweep looked
        if (f.s == e->last) continue;  // ended, or taken again and not stamped yet (Ended)
      }
      auto pi = f.part_dev ? index_of.find(f.part_dev) : index_of.end();
      const uint32_t part = pi == index_of.end() || pi->second == q->disk ? kNone : pi->second;
      if (q->disk == kNone && part == kNone) continue;  // a partition not watched, of a disk not watched
      Req* known = inflight.find(f.rq);
      if (known && f.s > known->s) {  // used again: the one known ended unseen before this one started
        lost(*known, from, std::min(f.s, t), t);
        inflight.erase(f.rq);
        known = nullptr;
      }
      if (!known) {
        first_seen(q->disk, part, f.s, from);
        Req& n = inflight[f.rq];
        n = Req{};
        n.disk = q->disk;
        n.part = part;
        n.s = f.s;
        n.issue = issue_of(f.rq, f.s);
        n.q = f.q;
        known = &n;
      }
      known->s = std::min(known->s, f.s);  // a request merged into it: the kernel keeps the earlier stamp
      if (known->part == kNone) known->part = part;
      known->swept = true;
      known->seen = t;
      if (known->s < t)
        for_devices(known->disk, known->part, [&](Dev& d) {
          d.acct.certain.push_back({std::max(known->s, from), t});
          if (known->issue && known->issue < t) d.dev.certain.push_back({std::max(known->issue, from), t});
          if (!k || known->s <= k) ++d.in_walk;
        });
    }
    // Known, and not found in flight: ended, and no program saw it end.
    keys.clear();
    inflight.for_each([&](uint64_t rq, Req& r) {
      if (r.swept) return;
      const Queue* q = queues.find(r.q);
      if (!q || !q->walked) {  // not looked at: maybe still in flight
        for_devices(r.disk, r.part, [&](Dev& d) { d.acct.unsure.push_back({std::max(r.seen, from), t}); });
        return;
      }
      lost(r, from, t, t);
      keys.push_back(rq);
    });
    for (uint64_t rq : keys) inflight.erase(rq);
    keys.clear();
    for (Dev& d : dev) d.c.in_flight = 0;
    inflight.for_each([&](uint64_t, Req& r) { for_devices(r.disk, r.part, [](Dev& d) { ++d.c.in_flight; }); });
    last_unknown = unknown;
    for (size_t i = 0; i < dev.size(); ++i) {
      Dev& d = dev[i];
      // A request the kernel counts that the sweep did not show (a queue not
      // found yet, a hardware queue beyond those read) is in flight since
      // some time nobody saw: all the round's idle time is unsure.
      const bool unknown_here = unknown || (check && kernel[i] > d.in_walk + d.ended_at_k);
      last_unknown |= unknown_here;
      d.acct.from = d.dev.from = from;
      d.acct.to = d.dev.to = t;
      d.acct.unknown = d.dev.unknown = unknown_here;
      d.dev.unsure_extra_ns = d.acct.unsure_extra_ns;
      const BusyRoundOutput a = busy_round(d.acct);
      d.c.busy_ns += a.busy_ns;
      d.c.unsure_ns += a.unsure_ns;
      for (int b = 0; b < kBusyDepthBuckets; ++b) d.c.depth_ns[b] += a.depth_ns[static_cast<size_t>(b)];
      if (opt.device_span) {
        const BusyRoundOutput v = busy_round(d.dev);
        d.c.dev_busy_ns += v.busy_ns;
        d.c.dev_unsure_ns += v.unsure_ns;
      }
      d.c.stamp_ns = t;
      d.acct.certain.clear();
      d.acct.unsure.clear();
      d.acct.unknown = false;
      d.acct.unsure_extra_ns = 0;
      d.dev.certain.clear();
      d.dev.unsure.clear();
      d.dev.unknown = false;
      d.dev.unsure_extra_ns = 0;
    }
    t_prev = t;
    cost.user_cpu_ns += thread_cpu_ns() - cpu0;
  }

  uint64_t fill() const {
    uint64_t most = 0;
    for (uint32_t k = 0; k < nlogs; ++k)
      for (uint32_t c = 0; c < ncpu; ++c) {
        const ioacct_head& h = head_of(k, c);
        most = std::max<uint64_t>(most, __atomic_load_n(&h.head, __ATOMIC_RELAXED) - h.tail);
      }
    return most;
  }

  // 100 ms; 5 ms for half a second after a round found a lost completion.
  uint64_t round_period() const { return now_ns() - lost_at < 500'000'000ull ? 5'000'000ull : 100'000'000ull; }

  // Between reads: rounds every 100 ms (every 5 ms while the kernel skips
  // programs: a request whose end no program saw is unsure until a round
  // finds it gone, so each leaves at most that much unsure time), and the
  // logs emptied before they are a quarter full at the rate they fill. Each wake
  // costs a context switch, each round a sweep: nothing in between.
  void background() {
    // The logs hold ~15-30 ms of records at 100k+ I/Os per second: on a
    // machine whose CPUs the I/O itself keeps busy, this thread must not wait
    // behind it for its turn, or records are dropped and the window says it
    // cannot be sure. Ahead of normal threads when allowed (CAP_SYS_NICE);
    // as it is otherwise. It runs for well under 1% of a CPU.
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), -10);
    std::unique_lock<std::mutex> l(mu);
    // The first look soon: until it has seen how fast the logs fill, a log
    // could fill before a 100 ms wait ends (4096 records in ~37 ms at 110k
    // completions a second on one CPU).
    uint64_t collect_every = 2'000'000, collected = now_ns();
    while (!stop) {
      const uint64_t round_due = t_prev + round_period();
      const uint64_t due = std::min(round_due, collected + collect_every);
      const uint64_t now = now_ns();
      if (now < due) cv.wait_for(l, std::chrono::nanoseconds(due - now));
      if (stop) break;
      try {
        const uint64_t t = now_ns();
        busiest = 0;
        if (t >= t_prev + round_period()) round(false);
        else if (t >= collected + collect_every) collect();
        else continue;  // a read ran meanwhile
        // The next look before the busiest log could be a quarter full at
        // this rate: three quarters of it are left for a late wake-up (an
        // ASan build in CI once woke >60 ms late at 31k completions a second
        // on one CPU, with half the log left, and dropped 311 records).
        const double per_ns = static_cast<double>(busiest) / static_cast<double>(std::max<uint64_t>(1, t - collected));
        collect_every = per_ns > 0 ? std::clamp<uint64_t>(static_cast<uint64_t>(static_cast<double>(slots) / 4 / per_ns),
                                                            2'000'000, 100'000'000)
                                   : 100'000'000;
        collected = t;
      } catch (const std::exception&) {
        // the next read reports it
      }
    }
  }

  uint64_t recursion_misses() const {
    uint64_t missed = 0;
    for (const bpf_program* prog : {skel->progs.on_io_done, skel->progs.on_rq_merge, skel->progs.on_rq_issue}) {
      const int fd = bpf_program__fd(prog);
      if (fd < 0) continue;
      bpf_prog_info info{};
      uint32_t len = sizeof(info);
      if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) missed += info.recursion_misses;
    }
    return missed;
  }
};

namespace {
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
}  // namespace

BusyTracker::BusyTracker(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BusyTracker::~BusyTracker() = default;

const std::string& BusyTracker::source() const { return impl_->source; }

std::unique_ptr<BusyTracker> BusyTracker::attach(const std::vector<BusyDevice>& devices, const BusyOptions& options) {
  // IOACCT_BPF_LOG=1: libbpf's log, and how long each step of the attach took.
  const bool log = libbpf_log_wanted();
  uint64_t step_at = now_ns();
  auto step = [&](const char* what) {
    if (!log) return;
    const uint64_t t = now_ns();
    std::fprintf(stderr, "ioacct: busy tracker: %s %.1f ms\n", what, static_cast<double>(t - step_at) / 1e6);
    step_at = t;
  };
  std::error_code ec;
  if (!std::filesystem::exists("/sys/kernel/btf/vmlinux", ec))
    throw NotAvailable(
        "this kernel has no BTF (/sys/kernel/btf/vmlinux; CONFIG_DEBUG_INFO_BTF), which exact busy time needs: "
        "use a kernel built with it");
  auto impl = std::make_unique<Impl>();
  impl->devices = devices;
  impl->opt = options;
  // With iostats off the block layer accounts nothing (no start stamp, no
  // diskstats): refuse rather than print a wrong figure. Each device's
  // diskstats in_flight is its own plus, for a whole disk, its partitions'.
  std::vector<uint32_t> parent_disks;  // dev_ts of whole disks with a watched partition
  impl->kernel_devs.resize(devices.size());
  impl->is_disk.assign(devices.size(), true);
  for (size_t i = 0; i < devices.size(); ++i) {
    const BusyDevice& d = devices[i];
    const uint32_t dev = kernel_dev(d.major, d.minor);
    impl->index_of[dev] = static_cast<uint32_t>(i);
    impl->kernel_devs[i].push_back(dev);
    const std::filesystem::path sys =
        std::filesystem::canonical(fmt::format("/sys/dev/block/{}:{}", d.major, d.minor), ec);
    if (ec) continue;
    const bool partition = std::filesystem::exists(sys / "partition", ec);
    impl->is_disk[i] = !partition;
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
        if (const auto dt = read_dev(e.path() / "dev")) impl->kernel_devs[i].push_back(*dt);
      }
    }
  }
  set_libbpf_log();
  step("devices looked up");

  const int ncpu = libbpf_num_possible_cpus();
  if (ncpu <= 0) throw NotAvailable(fmt::format("cannot count the possible CPUs: {}", errno_text(-ncpu)));
  impl->ncpu = static_cast<uint32_t>(ncpu);
  impl->nlogs = options.device_span ? 3 : 2;
  // 4096 records (128 KiB) per log and CPU: small enough to stay in the
  // CPU's cache (a ring four times larger cost each append a cache miss,
  // ~50-80 ns here), large enough that the background thread, which empties
  // the logs before they are a quarter full, wakes every ~10 ms at 100k I/Os
  // per second on one CPU. Half that with many CPUs, for memory.
  impl->slots = impl->ncpu > 32 ? 2048 : 4096;
  std::vector<uint32_t> table_devs;
  table_devs.reserve(devices.size() + parent_disks.size());
  for (const BusyDevice& d : devices) table_devs.push_back(kernel_dev(d.major, d.minor));
  for (uint32_t p : parent_disks)
    if (!impl->index_of.count(p)) table_devs.push_back(p);
  const uint32_t watch_slots = pow2_at_least(std::max<uint64_t>(16, 4 * table_devs.size()));
  impl->probe_cap = 4096;  // requests looked at per sweep run (more: several runs)

  busy_bpf* raw = busy_bpf__open();
  if (!raw) throw NotAvailable(why_not("open", errno));
  impl->skel.reset(raw);
  busy_bpf* skel = raw;
  bpf_map__set_max_entries(skel->maps.watch, watch_slots);
  bpf_map__set_max_entries(skel->maps.logs, impl->nlogs * impl->ncpu * impl->slots);
  bpf_map__set_max_entries(skel->maps.heads, IOACCT_LOGS * impl->ncpu);
  bpf_map__set_max_entries(skel->maps.probes, impl->probe_cap);
  bpf_map__set_max_entries(skel->maps.tagsets, static_cast<uint32_t>(std::max<size_t>(1, devices.size())));
  if (!options.device_span) bpf_program__set_autoload(skel->progs.on_rq_issue, false);
  step("opened");
  {
    HugePageHeap huge;
    if (int err = busy_bpf__load(skel)) throw NotAvailable(why_not("load", err));
  }
  step("loaded (kernel BTF read, relocated, verified)");

  // The watch table, filled like the programs look it up (busy.bpf.c).
  ioacct_watch first{};
  {
    std::vector<ioacct_watch> table(watch_slots);
    for (uint32_t dev : table_devs) {
      const bool is_disk_of_part = std::find(parent_disks.begin(), parent_disks.end(), dev) != parent_disks.end();
      auto f = impl->index_of.find(dev);
      const ioacct_watch entry{dev, f == impl->index_of.end() ? kNone : f->second, is_disk_of_part ? 1u : 0u, 0};
      // The first device is looked at before the table (in each head),
      // and stays in it too.
      if (dev == table_devs.front()) first = entry;
      uint32_t h = ioacct_watch_hash(dev);
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
  }
  impl->logs_v.map(skel->maps.logs, "the busy tracker's log map");
  impl->heads_v.map(skel->maps.heads, "the busy tracker's head map");
  impl->probes_v.map(skel->maps.probes, "the busy tracker's probe map");
  impl->logs = impl->logs_v.as<ioacct_rec>();
  impl->heads = impl->heads_v.as<ioacct_head>();
  // What the programs read before their record, in each head's line. Set
  // before the attach: no program reads it yet.
  for (uint32_t k = 0; k < impl->nlogs; ++k)
    for (uint32_t c = 0; c < impl->ncpu; ++c) {
      ioacct_head& h = impl->head_of(k, c);
      h.watch_mask = watch_slots - 1;
      h.slots = impl->slots;
      h.base = (k * impl->ncpu + c) * impl->slots;
      h.first = first;
    }
  impl->probes = impl->probes_v.as<ioacct_probe>();
  impl->tagsets_v.map(skel->maps.tagsets, "the busy tracker's queue map");
  impl->tagsets = impl->tagsets_v.as<ioacct_tagset>();
  impl->sample.assign(devices.size(), 0);
  impl->dropped_seen.assign(impl->nlogs * impl->ncpu, 0);
  impl->cut_heads.assign(impl->nlogs * impl->ncpu, 0);
  impl->dropped_ns_seen.assign(impl->nlogs * impl->ncpu, 0);
  impl->dev.resize(devices.size());
  for (Impl::Dev& d : impl->dev) {
    d.c.device_span = options.device_span;
    if (options.latency) {
      d.c.latency_le_ns.resize(kLatBuckets);
      for (int b = 0; b < kLatBuckets; ++b) d.c.latency_le_ns[static_cast<size_t>(b)] = latency_le(b);
      d.c.latency_count.assign(kLatBuckets, 0);
    }
  }
  if (options.bpf_stats) impl->stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);

  step("maps filled and mapped");
  if (int err = busy_bpf__attach(skel)) throw NotAvailable(why_not("attach", err));
  step("attached");
  // Only now, with every program attached, may a request be logged: one that
  // started earlier is seen ending without a start. The arming instant is
  // read after the store (a full fence): a program that still saw 0 ran
  // before it, and the kernel stamps a request after its program, so a
  // request not logged has a stamp before t_arm and is one from before the
  // attach. Read before the store, a preemption between the two (23 requests
  // once, under ASan on a loaded machine) made requests started in between
  // look like starts no program saw.
  const uint32_t arm = 1u | (test_skip_done() - 1) << IOACCT_ARM_SKIP_SHIFT;
  for (uint32_t k = 0; k < impl->nlogs; ++k)
    for (uint32_t c = 0; c < impl->ncpu; ++c) __atomic_store_n(&impl->head_of(k, c).armed, arm, __ATOMIC_SEQ_CST);
  impl->t_arm = impl->t_prev = impl->last_read = now_ns();
  if (test_stale_sweep()) impl->skel->bss->stale_after = impl->t_arm;
  for (Impl::Dev& d : impl->dev) d.c.attach_ns = d.c.stamp_ns = impl->t_arm;

  // Settle: rounds until the kernel counts no request in flight that the
  // sweep did not show (the first completion on a device names its queue),
  // so that the caller's first read starts a whole window.
  {
    std::lock_guard<std::mutex> l(impl->mu);
    const uint64_t give_up = now_ns() + 300'000'000ull;
    for (;;) {
      impl->round(true);
      if (!impl->last_unknown || now_ns() >= give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    impl->settled = true;
    impl->last_read = impl->t_prev;
    for (size_t i = 0; i < impl->dev.size(); ++i) impl->start_window(i);
    impl->k_now = 0;
    impl->win_cap = impl->win_cap_end = UINT64_MAX;
  }
  step("settled");
  Impl* p = impl.get();
  impl->bg = std::thread([p] { p->background(); });
  return std::unique_ptr<BusyTracker>(new BusyTracker(std::move(impl)));
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
  for (const Impl::Dev& d : m.dev) {
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
                                  m.skel->progs.find_tags, m.skel->progs.sweep}) {
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
