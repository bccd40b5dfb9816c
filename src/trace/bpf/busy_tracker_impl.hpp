#pragma once
// The busy tracker's insides, shared by its three rooms (private to
// src/trace/bpf):
//   busy_tracker_attach.cpp  loads and attaches the programs, maps their
//                            logs, settles; read() and cost()
//   busy_tracker_log.cpp     the log reader: collects and orders the records
//                            and applies them (certain spans, first seen,
//                            lost); the background thread
//   busy_tracker_round.cpp   the sweep (the kernel's own view of every
//                            request), diskstats, and the round that turns
//                            both into cumulative figures
//   busy_tracker_who.cpp     attribution: whose each request is, its
//                            completions booked to it, and its share of
//                            each round's busy time
// Every member is guarded by `mu` (the background thread and read() take it).
#include <bpf/libbpf.h>

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <unordered_map>
#include <utility>
#include <vector>

#include "trace/bpf/busy_proc.hpp"
#include "trace/bpf/busy_tracker.hpp"
// The shared layout first: the skeleton's maps name its structs.
#include "trace/bpf/busy_shared.h"
#include "trace/bpf/busy.skel.h"
#include "trace/bpf/map_view.hpp"
#include "trace/bpf/pointer_map.hpp"

namespace ioacct {
namespace busy {

inline constexpr uint32_t kNone = IOACCT_NO_DEVICE;
// How far a start stamp may lie before the kernel accounts the request: it
// takes the stamp from the submitting task's plug, which caches the clock
// until the plug ends or the task is scheduled out (one io_uring submission
// of 16 large reads: up to a few hundred µs under load).
inline constexpr uint64_t kStaleStamp = 1'000'000;
// How long after its done program diskstats may still count a request in
// flight (blk_account_io_done moves the count just after the tracepoint).
inline constexpr uint64_t kCountLag = 100'000;
// The most requests one tag set holds (BLK_MQ_MAX_DEPTH), and where kernel
// addresses lie (x86-64 with 4- or 5-level paging, arm64 with 48- or 52-bit
// addresses).
inline constexpr uint32_t kMaxTags = 10240;
inline constexpr uint64_t kKernelSpace = 0xff00000000000000ull;

// Latency buckets, log-linear: [0, 2^kLatMinExp) is bucket 0, then every
// power of two up to 2^(kLatMinExp+kLatExps) is split into 2^kLatSubBits
// equal parts, then one bucket for everything above (~69 s).
inline constexpr int kLatSubBits = 3, kLatMinExp = 10, kLatExps = 26;
inline constexpr int kLatBuckets = 2 + kLatExps * (1 << kLatSubBits);
int lat_bucket(uint64_t v);
// Bucket i's inclusive upper bound, mirroring lat_bucket().
uint64_t latency_le(int i);

// The kernel's dev_t (MKDEV in include/linux/kdev_t.h), not glibc's.
inline uint32_t kernel_dev(unsigned major, unsigned minor) { return (major << 20) | minor; }

struct SkelDeleter {
  void operator()(busy_bpf* s) const { busy_bpf__destroy(s); }
};

// Attribution: no label yet.
inline constexpr uint32_t kNoWho = 0xffffffffu;

// The ATTR records of a struct's request not yet paired with its DONE
// (busy_shared.h), by struct.
struct Attr {
  uint64_t cgroup = 0, bytes = 0;
  uint32_t op = 0;
  uint64_t s = 0;      // the request's start stamp, which its DONE carries too
  uint64_t round = 0;  // the round it arrived in (0: none yet): unpaired ones are forgotten after kAttrRounds
};
inline constexpr uint64_t kAttrRounds = 50;

// What the reader knows of a request it has seen in the accounting span.
struct Req {
  uint32_t disk = kNone;  // the whole disk's index (kNone: only a partition of it is watched)
  uint32_t part = kNone;  // the partition's index, when watched
  uint64_t s = 0;         // the kernel's start stamp
  uint64_t seen = 0;      // the last round's end at which the kernel showed it in flight
  uint64_t issue = 0;     // block_rq_issue's stamp (dev% only; 0: not issued)
  uint64_t q = 0;         // its request_queue
  bool swept = false;     // this round's sweep found it
  uint32_t who = kNoWho;  // attribution: its label (the sweep read its cgroup)
};

// A queue the sweep walks: the index of its whole disk (kNone: only a
// partition of it is watched).
struct Queue {
  uint32_t disk = kNone;
  bool walked = false;  // this round's sweep read every request of it
};

}  // namespace busy

struct BusyTracker::Impl {
  using Req = busy::Req;
  using Queue = busy::Queue;
  static constexpr uint32_t kNone = busy::kNone;

  std::unique_ptr<busy_bpf, busy::SkelDeleter> skel;
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
  std::vector<uint64_t> queue_of;  // per device: its queue, found at the attach from its file, 0: not found
  std::vector<bool> is_disk;       // per device: a whole disk (not a partition)
  std::vector<uint64_t> keys;
  // What diskstats says of a device (its own and, for a whole disk, its
  // partitions'): the kernel's count of requests in the accounting span
  // (per-CPU counters moved right after our programs run), the requests it
  // completed, and their latencies summed (ms, truncated per field). Not
  // its flush field: that counts the flush machinery's own requests
  // (blk_account_io_flush), which pass no tracepoint and no accounting
  // span, so no program could ever see them end.
  struct Kernel {
    uint64_t in_flight = 0, ms = 0;
    uint64_t field_done[3] = {};  // completions per ms field (reads, writes, discards)
    bool read = false;
    uint64_t done() const { return field_done[0] + field_done[1] + field_done[2]; }
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
    // Attribution: the label of each span in acct.certain and carry_acct.
    std::vector<uint32_t> acct_who, carry_who;
  };
  std::vector<Dev> dev;
  uint64_t t_prev = 0, t_arm = 0, last_read = 0;
  uint64_t lost_at = 0;  // the last round that found a request whose end no program saw
  // How fast the busiest log fills, records per ns, measured by every
  // collect over the time since the one before it (whoever ran it: a read's
  // round or the background thread), and when that was.
  double fill_per_ns = 0;
  uint64_t collected_at = 0;
  // The background thread's collects: never closer than this, and never
  // further apart than kCollectIdle, whatever the rate (background()).
  static constexpr uint64_t kCollectMin = 2'000'000, kCollectIdle = 20'000'000;
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

  // Attribution (opt.by): ATTR records waiting for their DONE, the PROC
  // records waiting for theirs (by struct), and the labels: a cgroup id (or a tgid, by
  // process) to its index, and each index's cgroup and pid.
  PointerMap<busy::Attr> attrs;  // by struct: its request's ATTR records so far
  PointerMap<busy::Procs> procs;
  std::unordered_map<uint64_t, uint32_t> who_index;
  uint64_t last_who_key = 0;
  uint32_t last_who = busy::kNoWho;
  std::vector<std::pair<uint64_t, uint32_t>> who_keys;
  std::vector<std::string> who_comms;  // by process: each label's name, read when first seen

  std::thread bg;
  std::condition_variable cv;
  bool stop = false;

  ~Impl();

  void for_devices(uint32_t disk, uint32_t part, const auto& f) {
    if (disk != kNone && disk < dev.size()) f(dev[disk]);
    if (part != kNone && part < dev.size() && part != disk) f(dev[part]);
  }

  // busy_tracker_attach.cpp: the steps of BusyTracker::attach.
  std::vector<uint32_t> look_up_devices();  // returns the dev_ts of whole disks with a watched partition
  void size_logs();
  void open_and_load(uint32_t watch_slots, const std::function<void(const char*)>& step);
  ioacct_watch fill_watch(const std::vector<uint32_t>& table_devs, const std::vector<uint32_t>& parent_disks,
                          uint32_t watch_slots);
  void map_logs(const ioacct_watch& first, uint32_t watch_slots);
  void arm();
  void settle();
  uint64_t recursion_misses() const;

  // busy_tracker_log.cpp: the log reader.
  bool collect();
  bool drain();
  void late(Dev& d, uint64_t s, uint64_t from);
  void first_seen(uint32_t disk, uint32_t part, uint64_t s, uint64_t from);
  void lost(const Req& r, uint64_t from, uint64_t until, uint64_t t);
  static void certain(std::vector<BusySpan>& now, std::vector<BusySpan>& carry, uint64_t a, uint64_t b, uint64_t t);
  void ended_on(uint64_t rq, uint64_t le, uint64_t s, uint64_t t);
  void apply(uint64_t from, uint64_t t, uint64_t k);
  void note_issues();
  uint64_t issue_of(uint64_t rq, uint64_t s);
  uint64_t fill() const;
  uint64_t round_period() const;
  void background();

  // busy_tracker_round.cpp: the sweep and the round.
  // The kernel's own view of every request of every queue found: those in
  // the accounting span now, with their start stamps.
  struct Found {
    uint64_t rq, q, s;
    uint32_t part_dev;
    bool hooked;      // free, read as held by IOACCT_TEST_STALE_SWEEP
    uint64_t cgroup;  // attribution: its cgroup id (0: none read)
  };
  bool find_tags(uint32_t n);
  void find_queues();
  void find_queues_from_files();
  std::vector<Found> sweep();
  std::vector<Kernel> kernel_stats();
  void bound_invisible();
  void start_window(size_t i);
  void round(bool check);
  void begin_round();
  uint64_t read_kernel_before(std::vector<uint64_t>& kernel);
  void take_found(const Found& f, uint64_t from, uint64_t t, uint64_t k);
  void drop_unswept(uint64_t from, uint64_t t);
  void close_round(bool check, bool unknown, const std::vector<uint64_t>& kernel, uint64_t from, uint64_t t);

  // busy_tracker_who.cpp: attribution.
  bool attributing() const { return opt.by != BusyBy::None; }
  uint32_t who_of(uint64_t cgroup, uint32_t pid);
  std::string comm_of(uint32_t pid) const;
  BusyWho& who_in(Dev& d, uint32_t who);
  void feed_attrs(size_t& next, uint64_t upto);
  void feed_procs(size_t& next, uint64_t upto);
  uint32_t who_of_done(const ioacct_rec& r, const Req* known, busy::Attr& attr, bool& paired);
  void book_done(Dev& d, uint32_t who, const busy::Attr& attr, bool paired, uint64_t lat);
  uint32_t who_of_found(const Found& f);
  void certain_acct(Dev& d, uint64_t a, uint64_t b, uint64_t t, uint32_t who);
  void carry_over(Dev& d);
  void share_round(Dev& d, uint64_t from, uint64_t t);
  void forget_attrs();
};

}  // namespace ioacct
