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
// How far a start stamp may lie before the moment its start was logged: the
// kernel takes it from the submitting task's plug, which caches the clock
// until the plug ends or the task is scheduled out (one io_uring
// submission: tens of µs).
constexpr uint64_t kStaleStamp = 200'000;

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

// What the reader knows of a request it believes in the accounting span.
struct Req {
  uint32_t disk = kNone;   // the whole disk's index (kNone: only a partition of it is watched)
  uint32_t part = kNone;   // the partition's index, once known (the kernel sets it after block_io_start)
  uint64_t s = 0;          // the kernel's start stamp, once seen (0: not yet)
  uint64_t seen = 0;       // the last time it was known in flight
  uint64_t issue = 0;      // block_rq_issue's stamp (dev% only; 0: not issued)
  uint64_t pred_from = 0;  // the struct's previous request ended unseen, after this (0: none)
  uint8_t pending = 0;     // rounds the kernel showed it not yet started
  bool part_counted = false;
  bool fresh = false;      // started after this round's sweep: not looked at yet
};

}  // namespace

struct BusyTracker::Impl {
  std::unique_ptr<busy_bpf, SkelDeleter> skel;
  std::vector<BusyDevice> devices;
  BusyOptions opt;
  std::string source = "block_io_start/block_io_done";
  uint32_t ncpu = 1, nlogs = 3, slots = 1, probe_cap = 1;
  MapView logs_v, heads_v, probes_v;
  ioacct_rec* logs = nullptr;
  ioacct_head* heads = nullptr;  // IOACCT_LOGS per CPU (busy_shared.h)
  // Program k's head on CPU c.
  ioacct_head& head_of(uint32_t k, uint32_t c) const { return heads[c * IOACCT_LOGS + k]; }
  ioacct_probe* probes = nullptr;
  std::unordered_map<uint32_t, uint32_t> index_of;  // dev_t -> device index
  std::vector<std::vector<uint32_t>> kernel_devs;   // per device: the dev_ts whose diskstats in_flight add up to it
  int stats_fd = -1;

  mutable std::mutex mu;
  // What one batch holds for one struct request. Its starts and ends
  // alternate, but the logs are per CPU and a start has no time: the ends'
  // start stamps order them (busy_pair()). Without that an end of a request
  // the reader did not know (one from before the attach) and the struct's
  // next start, taken in one batch, closed each other: the next request was
  // then never known, and the struct's later ends looked like unseen starts,
  // batch after batch.
  struct Agg {
    BusyStructBatch in;
    BusyStructPairing out;
    uint32_t start_disk = kNone;
    uint64_t first_before = UINT64_MAX;  // the earliest end stamped before the floor
    uint64_t first_other = UINT64_MAX;   // the earliest of the other ends
    uint64_t known_end = UINT64_MAX;     // the time of the end that closes the known request (none: max)
    uint64_t unseen_upto = 0;            // the latest of the other ends that started unseen
  };

  PointerMap<Req> inflight;
  PointerMap<Agg> aggs;
  PointerMap<uint64_t> pending_issue;
  PointerMap<uint8_t> held;
  std::vector<uint64_t> keys;
  std::vector<std::pair<uint64_t, std::optional<Req>>> changes;  // applied after a pass over `aggs`
  struct Dev {
    BusyCounters c;
    BusyRoundInput acct, dev;
    uint64_t valid = 0, fresh_starts = 0;
    uint64_t certain_in_flight = 0;  // the last round's `valid`: what settling compares with the kernel's count
  };
  std::vector<Dev> dev;
  uint64_t t_prev = 0, t_arm = 0, last_read = 0;
  // The cut of the last collect() before a drain, and the one before it:
  // every start of a batch was logged after its floor's start heads were read.
  uint64_t last_cut = 0, drained_cut = 0, batch_floor = 0;
  uint64_t lost_at = 0;  // the last round that found a request whose end no program saw
  uint64_t pre_arm_ended = 0;  // completions of requests started before the attach, since the last settle check
  uint64_t busiest = 0;        // the most records one log held at a drain, this round
  bool settled = false;
  std::vector<uint64_t> dropped_seen, dropped_ns_seen;
  uint64_t dropped_total = 0;
  BusyCost cost;
  std::vector<ioacct_rec> batch[IOACCT_LOGS], pending[IOACCT_LOGS], deferred[IOACCT_LOGS];
  std::vector<uint64_t> cut_heads;
  bool collected_unknown = false;

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
  // next round's drain() hands them over. Runs between rounds too, when the
  // logs fill fast. Returns whether any log dropped a start, merge or issue
  // record (then a request in flight may be unknown) and adds dropped
  // completions' time to unsure.
  bool collect() {
    // A consistent cut: every start log's head first, then the other logs'.
    // A request's start is logged before its end, so an end taken here has
    // its start taken too, unless the request started after the start heads
    // were read; its record says so (its start stamp is later than `cut`),
    // and it waits for the next pass. Read the other way round, a struct's
    // next start could be taken before its previous end, or an end before
    // its own start, whenever this thread is preempted in between.
    for (uint32_t k = 0; k < nlogs; ++k)
      for (const ioacct_rec& r : deferred[k]) pending[k].push_back(r);
    for (auto& d : deferred) d.clear();
    const uint64_t cut = now_ns();
    last_cut = cut;
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
        for (uint64_t n = tail; n < head; ++n) {
          const ioacct_rec& r = logs[h.base + (n & (slots - 1))];
          const uint64_t started = k == IOACCT_LOG_DONE && r.s ? r.s : r.t;  // the start is no later than this
          (k != IOACCT_LOG_START && started > cut ? deferred[k] : pending[k]).push_back(r);
        }
        busiest = std::max<uint64_t>(busiest, head - tail);
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

  // Everything collected so far, as this round's batch.
  bool drain() {
    batch_floor = drained_cut;
    collect();
    drained_cut = last_cut;
    for (uint32_t k = 0; k < nlogs; ++k) {
      batch[k].swap(pending[k]);
      pending[k].clear();
    }
    const bool unknown = collected_unknown;
    collected_unknown = false;
    return unknown;
  }

  void late(Dev& d, uint64_t s, uint64_t from) {
    // Coverage of a request nobody saw start, before this round: since the
    // last read it belongs to the window still open (unsure there, unplaced);
    // before that, to a report already made.
    const uint64_t a = std::max(s, t_arm);
    if (a >= from) return;
    const uint64_t split = std::max(a, std::min(from, last_read));
    d.acct.unsure_extra_ns += from - split;
    if (settled) d.c.late_ns += split - a;
  }

  // Applies one drained batch: completed intervals become certain spans, the
  // in-flight set follows starts and ends. `since`: the earliest a request
  // first seen in this batch can have started; `until`: the latest one can
  // have ended.
  void apply(uint64_t from, uint64_t since, uint64_t until, bool after_sweep) {
    aggs.clear();
    for (const ioacct_rec& r : batch[IOACCT_LOG_START]) {
      Agg& a = aggs[r.rq];
      ++a.in.starts;
      a.start_disk = r.disk;
    }
    // A merge or an unaccounted end has no start stamp: it may close either.
    const auto before_floor = [&](const ioacct_rec& r) {
      return r.s != 0 && r.part != IOACCT_UNACCOUNTED && r.s + kStaleStamp < batch_floor;
    };
    for (uint32_t k : {uint32_t{IOACCT_LOG_DONE}, uint32_t{IOACCT_LOG_MERGE}})
      for (const ioacct_rec& r : batch[k]) {
        Agg& a = aggs[r.rq];
        if (before_floor(r)) {
          ++a.in.before;
          a.first_before = std::min<uint64_t>(a.first_before, r.t);
        } else {
          ++a.in.others;
          a.first_other = std::min<uint64_t>(a.first_other, r.t);
        }
      }
    bool any_unseen_others = false;
    aggs.for_each([&](uint64_t rq, Agg& a) {
      a.in.known = inflight.find(rq) != nullptr;
      a.out = busy_pair(a.in);
      if (a.out.known_closed_by_before) a.known_end = a.first_before;
      if (a.out.known_closed_by_other) a.known_end = a.first_other;
      any_unseen_others |= a.out.unseen_others > 0;
    });
    if (any_unseen_others) find_unseen_others(before_floor);
    if (opt.device_span) pair_issues();
    for (const ioacct_rec& r : batch[IOACCT_LOG_DONE]) {
      if (r.part == IOACCT_UNACCOUNTED) continue;
      const Agg& a = *aggs.find(r.rq);
      const Req* known = inflight.find(r.rq);
      const bool of_known = known && r.t == a.known_end;
      // Ends with no start to close: requests in flight since before the
      // attach, or whose start no program saw. Their time before this round
      // was not counted.
      const bool unseen = !of_known && (before_floor(r) || (a.out.unseen_others > 0 && r.t <= a.unseen_upto));
      const bool count_part = !(of_known && known->part_counted);
      for_devices(r.disk, r.part, [&](Dev& d) {
        d.acct.certain.push_back({r.s, r.t});
        ++d.c.done;
        const uint64_t lat = r.t > r.s ? r.t - r.s : 0;
        d.c.latency_sum_ns += lat;
        d.c.latency_max_ns = std::max(d.c.latency_max_ns, lat);
        if (opt.latency) ++d.c.latency_count[static_cast<size_t>(lat_bucket(lat))];
        if (unseen) {
          if (settled || r.s >= t_arm) ++d.c.unseen_starts;
          late(d, r.s, from);
        }
      });
      if (unseen && r.s < t_arm) ++pre_arm_ended;
      if (count_part && r.part != kNone && r.part < dev.size()) ++dev[r.part].c.started;
      ++cost.completions;
    }
    for (const ioacct_rec& r : batch[IOACCT_LOG_MERGE]) {
      // Merged away: the survivor keeps the earlier start stamp, so the
      // union loses nothing; its own span up to here counts for depth.
      const Req* known = inflight.find(r.rq);
      const bool of_known = known && r.t == aggs.find(r.rq)->known_end;
      for_devices(r.disk, of_known ? known->part : kNone, [&](Dev& d) {
        if (of_known && known->s) d.acct.certain.push_back({known->s, r.t});
        ++d.c.merged;
      });
    }
    aggs.for_each([&](uint64_t rq, Agg& a) {
      Req* known = inflight.find(rq);
      const int net = a.out.open_after;
      if (a.in.starts > 0 && a.start_disk != kNone && a.start_disk < dev.size())
        dev[a.start_disk].c.started += static_cast<uint64_t>(a.in.starts);
      uint64_t pred_from = 0;
      if (net >= 2) {
        // A struct request started again without an end: the earlier
        // request's completion ran no program. It ended before the new one
        // started; classify() closes its unsure span at that start.
        const uint32_t disk = known ? known->disk : a.start_disk;
        const uint32_t part = known ? known->part : kNone;
        pred_from = known ? std::max(known->seen, from) : since;
        for_devices(disk, part, [&](Dev& d) { d.c.lost += static_cast<uint64_t>(net - 1); });
        lost_at = until;
      }
      if (net >= 1) {
        Req n;
        n.disk = a.in.starts ? a.start_disk : (known ? known->disk : kNone);
        n.seen = since;
        n.fresh = after_sweep;
        n.pred_from = pred_from;
        if (const uint64_t* i = pending_issue.find(rq)) n.issue = *i;
        changes.emplace_back(rq, n);
      } else {
        if (pred_from)  // it ended too: the unseen end lies before this batch's end
          for_devices(known ? known->disk : a.start_disk, known ? known->part : kNone,
                      [&](Dev& d) { d.acct.unsure.push_back({pred_from, until}); });
        if (known) changes.emplace_back(rq, std::nullopt);
      }
    });
    for (const auto& [rq, r] : changes) {
      if (r) inflight[rq] = *r;
      else inflight.erase(rq);
    }
    changes.clear();
    pending_issue.clear();
  }

  // For each struct with more ends than starts to close: the latest of the
  // earliest `unseen_others` ends that close neither. Rare (a start no
  // program saw), so a plain pass over the batch.
  void find_unseen_others(const auto& before_floor) {
    std::unordered_map<uint64_t, std::vector<uint64_t>> times;
    for (uint32_t k : {uint32_t{IOACCT_LOG_DONE}, uint32_t{IOACCT_LOG_MERGE}})
      for (const ioacct_rec& r : batch[k]) {
        const Agg& a = *aggs.find(r.rq);
        if (a.out.unseen_others > 0 && !before_floor(r) && r.t != a.known_end) times[r.rq].push_back(r.t);
      }
    for (auto& [rq, ts] : times) {
      Agg& a = *aggs.find(rq);
      const auto nth = ts.begin() + (a.out.unseen_others - 1);
      std::nth_element(ts.begin(), nth, ts.end());
      a.unseen_upto = *nth;
    }
  }

  // dev% only: each accounting end's device span starts at its request's
  // last issue before that end. The last, not the first: an issue still held
  // for the struct is stale when the previous request's end was lost (no
  // program ran for it), and pairing the next end with it counted the gap
  // between the two requests as device time (dev% above busy%). A request
  // requeued and issued again is on the device from its last issue.
  void pair_issues() {
    struct Ev {
      uint64_t rq, t;
      int kind;  // 0 issue, 1 end
      const ioacct_rec* r;
    };
    std::vector<Ev> ev;
    for (const ioacct_rec& r : batch[IOACCT_LOG_ISSUE]) ev.push_back({r.rq, r.t, 0, &r});
    if (ev.empty()) return;
    for (uint32_t k : {uint32_t{IOACCT_LOG_DONE}, uint32_t{IOACCT_LOG_MERGE}})
      for (const ioacct_rec& r : batch[k]) ev.push_back({r.rq, r.t, 1, &r});
    std::sort(ev.begin(), ev.end(), [](const Ev& a, const Ev& b) { return a.rq != b.rq ? a.rq < b.rq : a.t < b.t; });
    for (size_t g = 0; g < ev.size();) {
      size_t h = g;
      while (h < ev.size() && ev[h].rq == ev[g].rq) ++h;
      const Req* known = inflight.find(ev[g].rq);
      uint64_t issue = known ? known->issue : 0;
      for (size_t j = g; j < h; ++j) {
        if (ev[j].kind == 0) {
          issue = ev[j].t;
          continue;
        }
        const ioacct_rec& r = *ev[j].r;
        if (issue && issue < r.t && r.part != IOACCT_UNACCOUNTED)
          for_devices(r.disk, ev[j].r->part == IOACCT_NO_DEVICE || r.s == 0 ? kNone : r.part,
                      [&](Dev& d) { d.dev.certain.push_back({issue, r.t}); });
        issue = 0;
      }
      if (issue) pending_issue[ev[g].rq] = issue;  // the request still in flight after the batch
      g = h;
    }
  }

  // The kernel's own view of every request in the in-flight set.
  std::vector<std::pair<uint64_t, ioacct_probe>> sweep() {
    std::vector<std::pair<uint64_t, ioacct_probe>> out;
    out.reserve(inflight.size());
    keys.clear();
    inflight.for_each([&](uint64_t rq, Req&) { keys.push_back(rq); });
    for (size_t next = 0; next < keys.size();) {
      uint32_t n = 0;
      for (; next < keys.size() && n < probe_cap; ++next, ++n) {
        probes[n] = ioacct_probe{};
        probes[n].rq = keys[next];
      }
      skel->bss->n_probes = n;
      uint64_t args[1] = {};
      LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
      const int err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sweep), &run);
      for (uint32_t i = 0; i < n; ++i) {
        ioacct_probe p = probes[i];
        if (err) p.ok = 0;
        out.emplace_back(p.rq, p);
      }
    }
    return out;
  }

  // diskstats' in_flight (the kernel's own count of requests in the
  // accounting span: per-CPU counters moved right after our programs run).
  std::vector<uint64_t> kernel_in_flight() {
    std::vector<uint64_t> k(devices.size(), 0);
    std::unordered_map<uint32_t, uint64_t> by_dev;
    const std::string text = read_file("/proc/diskstats");
    size_t pos = 0;
    while (pos < text.size()) {
      size_t nl = text.find('\n', pos);
      if (nl == std::string::npos) nl = text.size();
      if (auto d = parse_diskstats_line(std::string_view(text).substr(pos, nl - pos)))
        by_dev[kernel_dev(d->major, d->minor)] = d->in_flight;
      pos = nl + 1;
    }
    for (size_t i = 0; i < devices.size(); ++i)
      for (uint32_t d : kernel_devs[i])
        if (auto f = by_dev.find(d); f != by_dev.end()) k[i] += f->second;
    return k;
  }

  // One round: everything up to now becomes cumulative figures.
  // `check`: also compare with the kernel's in-flight counts (a read).
  void round(bool check) {
    const uint64_t cpu0 = thread_cpu_ns();
    const uint64_t from = t_prev;
    const uint64_t t1 = now_ns();
    bool unknown = drain();
    apply(from, from, t1, false);
    const auto probed = sweep();
    // What the kernel showed in flight when the sweep looked, for the
    // comparison with its own count below.
    std::vector<uint64_t> at_sweep(dev.size(), 0);
    for (const auto& [rq, p] : probed)
      if (p.ok && p.ref > 0 && p.accounted && p.start_time_ns)
        if (const Req* r = inflight.find(rq)) {
          auto f = p.part_dev ? index_of.find(p.part_dev) : index_of.end();
          const uint32_t part = f == index_of.end() || f->second == r->disk ? kNone : f->second;
          for_devices(r->disk, part, [&](Dev& d) { ++at_sweep[static_cast<size_t>(&d - dev.data())]; });
        }
    std::vector<uint64_t> kernel;
    if (check) kernel = kernel_in_flight();
    const uint64_t t = now_ns();
    unknown |= drain();
    apply(from, t1, t, true);
    // Ends taken but held back for the next pass (collect()): those requests
    // did end, and are not lost; the next round has their records.
    held.clear();
    for (uint32_t k : {uint32_t{IOACCT_LOG_DONE}, uint32_t{IOACCT_LOG_MERGE}})
      for (const ioacct_rec& r : deferred[k]) held[r.rq] = 1;
    for (const auto& [rq, p] : probed) {
      Req* r = inflight.find(rq);
      if (!r || r->fresh) continue;  // ended (or ended and started again) after the sweep
      if (held.find(rq)) continue;
      if (!classify(*r, p, from, t)) inflight.erase(rq);
    }
    inflight.for_each([&](uint64_t, Req& r) {
      if (!r.fresh) return;
      // Started after the sweep looked: its start is after t1; the next
      // round looks at it. Until then it may have been in flight.
      for_devices(r.disk, r.part, [&](Dev& d) {
        d.acct.unsure.push_back({t1, t});
        if (r.pred_from) d.acct.unsure.push_back({r.pred_from, t});
        ++d.fresh_starts;
      });
      r.pred_from = 0;
      r.fresh = false;
      r.seen = t1;
    });
    // Every request still held counts as in flight at `t`, not only those
    // the kernel showed started: one that started after the sweep (or that
    // the kernel had not stamped yet) was counted started, and must be
    // somewhere in started = done + lost + in flight.
    for (Dev& d : dev) d.c.in_flight = 0;
    inflight.for_each([&](uint64_t, Req& r) { for_devices(r.disk, r.part, [](Dev& d) { ++d.c.in_flight; }); });
    for (size_t i = 0; i < dev.size(); ++i) {
      Dev& d = dev[i];
      // A request the kernel counts but the reader does not know is in
      // flight since some time nobody saw: all the round's idle time is unsure.
      const bool unknown_here = unknown || (check && kernel[i] > at_sweep[i] + d.fresh_starts);
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
      d.certain_in_flight = d.valid;
      d.c.stamp_ns = t;
      d.acct.certain.clear();
      d.acct.unsure.clear();
      d.acct.unknown = false;
      d.acct.unsure_extra_ns = 0;
      d.dev.certain.clear();
      d.dev.unsure.clear();
      d.dev.unknown = false;
      d.dev.unsure_extra_ns = 0;
      d.valid = d.fresh_starts = 0;
    }
    t_prev = t;
    cost.user_cpu_ns += thread_cpu_ns() - cpu0;
  }

  // What the kernel says of one request of the in-flight set; false: it is
  // not in flight (any more) and leaves the set.
  bool classify(Req& r, const ioacct_probe& p, uint64_t from, uint64_t t) {
    const uint32_t part_idx = [&] {
      auto f = p.part_dev ? index_of.find(p.part_dev) : index_of.end();
      return f == index_of.end() || f->second == r.disk ? kNone : f->second;
    }();
    auto gone = [&](uint64_t until) {
      // Ended, and no program saw it end: unsure from when it was last
      // known in flight (or its start, which the freed request still holds)
      // to `until`. (A completion that did run a program is in this round's
      // logs: the program logs before the kernel frees the request.)
      uint64_t a = std::max(r.seen, from);
      if (!r.s && p.ok && p.accounted && p.start_time_ns > a && p.start_time_ns < until) a = p.start_time_ns;
      for_devices(r.disk, r.part, [&](Dev& d) {
        d.acct.unsure.push_back({a, until});
        if (r.issue) d.dev.unsure.push_back({a, until});
        ++d.c.lost;
      });
      lost_at = t;
    };
    const bool started = p.accounted && p.start_time_ns != 0;
    if (r.pred_from) {
      // The request this struct served before ended unseen, before this one
      // started (or, when it has not, before now).
      const uint64_t until = started ? std::min<uint64_t>(t, std::max<uint64_t>(p.start_time_ns, r.pred_from)) : t;
      for_devices(r.disk, r.part, [&](Dev& d) { d.acct.unsure.push_back({r.pred_from, until}); });
      r.pred_from = 0;
    }
    if (!p.ok || p.ref <= 0) {
      gone(t);
      return false;
    }
    if (!started) {
      if (r.s) {  // freed and allocated again: the one we knew ended unseen
        gone(t);
        return false;
      }
      // Logged at block_io_start, not yet stamped by the kernel (or a
      // request it does not account). Maybe in flight since it was seen.
      for_devices(r.disk, r.part, [&](Dev& d) { d.acct.unsure.push_back({std::max(r.seen, from), t}); });
      return ++r.pending < 3;
    }
    if (r.s && p.start_time_ns != r.s) {
      if (p.start_time_ns < r.s) {
        r.s = p.start_time_ns;  // a request merged into it: the kernel keeps the earlier stamp
      } else {  // used again by a request no program saw start: the one we knew ended before it started
        gone(std::min<uint64_t>(t, p.start_time_ns));
        r.issue = 0;
        r.s = 0;
        r.part_counted = false;
        for_devices(r.disk, part_idx, [&](Dev& d) {
          ++d.c.unseen_starts;
          late(d, p.start_time_ns, from);
        });
      }
    }
    if (!r.s) r.s = p.start_time_ns;
    if (part_idx != kNone && r.part == kNone) r.part = part_idx;
    if (!r.part_counted && r.part != kNone && r.part < dev.size()) {
      ++dev[r.part].c.started;
      r.part_counted = true;
    }
    r.pending = 0;
    for_devices(r.disk, r.part, [&](Dev& d) {
      d.acct.certain.push_back({std::max(r.s, from), t});
      if (r.issue) d.dev.certain.push_back({std::max(r.issue, from), t});
      ++d.valid;
    });
    r.seen = t;
    return true;
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
  // logs emptied before they are half full at the rate they fill. Each wake
  // costs a context switch, each round a sweep: nothing in between.
  void background() {
    // The logs hold ~15-30 ms of records at 100k+ I/Os per second: on a
    // machine whose CPUs the I/O itself keeps busy, this thread must not wait
    // behind it for its turn, or records are dropped and the window says it
    // cannot be sure. Ahead of normal threads when allowed (CAP_SYS_NICE);
    // as it is otherwise. It runs for well under 1% of a CPU.
    setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), -10);
    std::unique_lock<std::mutex> l(mu);
    uint64_t collect_every = 100'000'000, collected = now_ns();
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
        // The next look before the busiest log could be half full at this rate.
        const double per_ns = static_cast<double>(busiest) / static_cast<double>(std::max<uint64_t>(1, t - collected));
        collect_every = per_ns > 0 ? std::clamp<uint64_t>(static_cast<uint64_t>(static_cast<double>(slots) / 2 / per_ns),
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
    for (const bpf_program* prog : {skel->progs.on_io_start, skel->progs.on_io_done, skel->progs.on_rq_merge,
                                    skel->progs.on_rq_issue}) {
      const int fd = bpf_program__fd(prog);
      if (fd < 0) continue;
      bpf_prog_info info{};
      uint32_t len = sizeof(info);
      if (bpf_obj_get_info_by_fd(fd, &info, &len) == 0) missed += info.recursion_misses;
    }
    return missed;
  }
};

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
  for (size_t i = 0; i < devices.size(); ++i) {
    const BusyDevice& d = devices[i];
    const uint32_t dev = kernel_dev(d.major, d.minor);
    impl->index_of[dev] = static_cast<uint32_t>(i);
    impl->kernel_devs[i].push_back(dev);
    const std::filesystem::path sys =
        std::filesystem::canonical(fmt::format("/sys/dev/block/{}:{}", d.major, d.minor), ec);
    if (ec) continue;
    const bool partition = std::filesystem::exists(sys / "partition", ec);
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
  impl->nlogs = options.device_span ? 4 : 3;
  // 4096 records (128 KiB) per log and CPU: small enough to stay in the
  // CPU's cache (a ring four times larger cost each append a cache miss,
  // ~50-80 ns here), large enough that the background thread, which empties
  // the logs before they are half full, wakes every ~20 ms at 100k I/Os per
  // second on one CPU. Half that with many CPUs, for memory.
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
  for (uint32_t k = 0; k < impl->nlogs; ++k)
    for (uint32_t c = 0; c < impl->ncpu; ++c) __atomic_store_n(&impl->head_of(k, c).armed, 1, __ATOMIC_SEQ_CST);
  impl->t_arm = impl->t_prev = impl->last_read = impl->drained_cut = now_ns();
  for (Impl::Dev& d : impl->dev) d.c.attach_ns = d.c.stamp_ns = impl->t_arm;

  // Settle: wait until the kernel counts no request in flight that the
  // reader does not know (requests from before the attach have left), so
  // that the caller's first read starts a whole window.
  {
    std::lock_guard<std::mutex> l(impl->mu);
    const uint64_t give_up = now_ns() + 300'000'000ull;
    for (;;) {
      impl->round(false);
      const std::vector<uint64_t> k = impl->kernel_in_flight();
      bool known = true;
      for (size_t i = 0; i < devices.size(); ++i) known &= k[i] <= impl->dev[i].certain_in_flight;
      // And no request from before the attach ended in that round: the
      // kernel's count moves while it is read, so both must say so.
      known &= impl->pre_arm_ended == 0;
      impl->pre_arm_ended = 0;
      if (known || now_ns() >= give_up) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    impl->settled = true;
    impl->last_read = impl->t_prev;
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
  for (const bpf_program* prog : {m.skel->progs.on_io_start, m.skel->progs.on_io_done, m.skel->progs.on_rq_merge,
                                  m.skel->progs.on_rq_issue, m.skel->progs.sweep}) {
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
