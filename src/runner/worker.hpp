#pragma once
// One worker thread: it owns its ring (engine), its share of the targets and
// of the depth (its Plan), its buffers and its accounting, and runs the hot
// loop: fill the free depth a submit batch at a time, wait for a complete
// batch, count what completed (the batch path, worker.cpp); in a plain
// run's steady state, count each completion and refill its slot in one
// pass (the fused path, worker_fused.cpp). No lock, no allocation and no syscall beyond
// the I/O's own per batch; what it shares goes through Control and its
// Published (control.hpp has the memory-ordering contract).
#include <array>
#include <cstdint>
#include <cstdlib>
#include <exception>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acct/clock.hpp"
#include "acct/histogram.hpp"
#include "acct/inflight.hpp"
#include "common/offsets.hpp"
#include "common/rng.hpp"
#include "engine/engine.hpp"
#include "engine/fault_engine.hpp"
#include "common/random_map.hpp"
#include "engine/fused_ring.hpp"
#include "runner/control.hpp"
#include "runner/depth_search.hpp"
#include "runner/plan.hpp"
#include "runner/refill_chooser.hpp"
#include "runner/result.hpp"
#include "workload/job.hpp"
#include "workload/pace.hpp"
#include "workload/target.hpp"
#include "workload/verify.hpp"

namespace ioacct {

class Worker {
 public:
  // `out` is this thread's result, filled as it runs; `tables` is null
  // without --verify, `log` null unless --acct full. `jc` is its job's clock
  // and `group` its stonewall group. All must outlive it.
  Worker(const JobSpec& job, const Targets& targets, Plan plan, Control& ctl, JobControl& jc, GroupControl& group,
         Published& pub, ThreadResult& out, std::vector<VerifyTable>* tables, InflightLog* log)
      : job_(job), targets_(targets), plan_(std::move(plan)), ctl_(ctl), jc_(jc), group_(group), pub_(pub), out_(out),
        tables_(tables), log_(log) {}

  // The thread's body: set up, say ready, wait for `go`, run, close the
  // window, stay until the closing sample is taken. Never throws: a set-up
  // failure is kept for setup_error().
  void operator()() noexcept;

  std::exception_ptr setup_error() const { return setup_error_; }
  const VerifyResult& verify_result() const { return verify_; }
  // The interval histogram of `epoch`; read it only once the worker has
  // acknowledged a later epoch (or is done).
  Histogram* interval_hist(uint32_t epoch) { return ihist_[epoch & 1].get(); }
  // Its slat's and clat's, where the job keeps them (JobSpec::interval_split).
  Histogram* interval_slat(uint32_t epoch) { return islat_[epoch & 1].get(); }
  Histogram* interval_clat(uint32_t epoch) { return iclat_[epoch & 1].get(); }
  const Engine* engine() const { return engine_.get(); }

 private:
  // One request slot per unit of depth, indexed by the request's tag.
  // One cache line each: a slot is read at its completion and written at
  // its refill, and straddling two lines would double that traffic.
  struct alignas(64) Slot {
    char* buf;        // start of this slot's buffer
    uint64_t offset;  // next byte to transfer
    uint32_t left;    // bytes still to transfer
    uint32_t len;     // the request's full length
    uint32_t file;
    IoOp op;
    uint16_t eagains; // EAGAIN retries of this request so far (at most kMaxEagain)
    Nanos t_submit;   // when the request was first submitted
    uint64_t start;   // the request's first byte (offset moves on with short transfers)
    Nanos t_issued;   // when the enter that (last) submitted it returned; 0 until then, or if that enter also waited
    uint64_t gen;     // --verify: the write's generation
  };
  static_assert(sizeof(Slot) == 64, "a slot is one cache line");
  static constexpr uint32_t kMaxEagain = 1000;  // a request that keeps failing with EAGAIN is an error
  struct FreeDeleter { void operator()(char* p) const { std::free(p); } };

  void setup();
  void setup_latency();
  void allocate_buffers();
  unsigned prepare(unsigned n, Nanos t) noexcept;
  template <bool kMoves, bool kOneFile>
  unsigned prepare_fixed(unsigned n, Nanos t) noexcept;
  unsigned prepare_verified(unsigned n, Nanos t) noexcept;
  unsigned prepare_mixed(unsigned n, Nanos t) noexcept;
  void count_write(uint32_t file) noexcept;
  void finish_verified(const Slot& s, bool ok);
  IoOp op_for_next() noexcept;
  uint32_t place_split(size_t k, uint64_t& off) noexcept;
  uint32_t place_sized(OffsetGen& g, RandomMap* map, const Target& t, uint64_t unit, uint64_t& off,
                       uint32_t len) noexcept;
  uint32_t place_dir(int d, size_t k, uint64_t& off) noexcept;
  void setup_offsets();
  void setup_direction_offsets();
  bool take_op(IoOp& op, Nanos t) noexcept;
  size_t pick_file() noexcept;
  IoRequest request(const Slot& s, uint32_t tag, bool may_block = false) const noexcept;
  void count_other(const Slot& s, Nanos now) noexcept;
  bool take_retry(Slot& s, int32_t res) noexcept;
  // Equal values in a row, recorded as one run (record_n): I/Os submitted
  // together and reaped together share both stamps, so their latencies come
  // in runs. add() hands the run it ends to `record(value, n)`; the caller
  // records the last one.
  struct Runs {
    uint64_t value = 0, n = 0;
    template <class F>
    void add(uint64_t v, F&& record) {
      if (v == value) {
        ++n;
        return;
      }
      if (n) record(value, n);
      value = v;
      n = 1;
    }
  };
  // One batch's tally, the one both paths keep (reap and fused_loop): the
  // latencies, in runs, into the job's lat and the interval's histogram of
  // --log-interval, the clats, and the reads and writes counted. The
  // histograms are taken once per batch (the interval's epoch moves only in
  // publish(), between batches). The runs and the counts are the caller's
  // locals, which the compiler keeps in registers: inside the tally they
  // lived in memory, 2.3 more instructions per I/O on the fused path at nop
  // depth 128 (callgrind).
  struct Moved {
    uint64_t reads = 0, writes = 0, rbytes = 0, wbytes = 0;
  };
  struct Tally {
    Histogram& lat;
    Histogram* interval;  // null without --log-interval's histograms
    Histogram* clat;      // null unless latency is split
    Histogram* iclat;     // the interval's clat: null unless JobSpec::interval_split

    [[gnu::always_inline]] void record_lat(uint64_t v, uint64_t n) {
      lat.record_n(v, n);
      if (interval) interval->record_n(v, n);
    }
    [[gnu::always_inline]] void record_clat(uint64_t v, uint64_t n) {
      clat->record_n(v, n);
      if (iclat) [[unlikely]] iclat->record_n(v, n);
    }
    [[gnu::always_inline]] void add_lat(Runs& run, uint64_t v) {
      run.add(v, [this](uint64_t x, uint64_t n) { record_lat(x, n); });
    }
    [[gnu::always_inline]] void add_clat(Runs& run, uint64_t v) {
      run.add(v, [this](uint64_t x, uint64_t n) { record_clat(x, n); });
    }
    // The batch's end: its open runs recorded, its counts into `out`.
    [[gnu::always_inline]] void finish(ThreadResult& out, const Runs& lat_run, const Runs& clat_run, const Moved& m) {
      if (lat_run.n) record_lat(lat_run.value, lat_run.n);
      if (clat_run.n) record_clat(clat_run.value, clat_run.n);
      out.ios += m.reads + m.writes;
      out.reads += m.reads;
      out.writes += m.writes;
      out.bytes_read += m.rbytes;
      out.bytes_written += m.wbytes;
    }
  };
  Tally tally() noexcept {
    return {*out_.latency, ihist_[0] ? ihist_[epoch_ & 1].get() : nullptr, out_.clat.get(),
            iclat_[0] ? iclat_[epoch_ & 1].get() : nullptr};
  }
  // A mixed job's reads' and writes' own latency (DirLatency), in runs as
  // the job's: [0] reads, [1] writes. Set (take) only in reap's mixed variant.
  struct DirRuns {
    Histogram* lat[2] = {};
    Histogram* clat[2] = {};
    Runs lat_run[2], clat_run[2];
    void take(ThreadResult& out) noexcept {
      lat[0] = out.read_lat.lat.get();
      lat[1] = out.write_lat.lat.get();
      clat[0] = out.read_lat.clat.get();
      clat[1] = out.write_lat.clat.get();
    }
    void add_lat(unsigned d, uint64_t v) {
      lat_run[d].add(v, [this, d](uint64_t x, uint64_t n) { lat[d]->record_n(x, n); });
    }
    void add_clat(unsigned d, uint64_t v) {
      clat_run[d].add(v, [this, d](uint64_t x, uint64_t n) { clat[d]->record_n(x, n); });
    }
    // The runs still open at the batch's end.
    void flush() noexcept {
      for (unsigned d = 0; d < 2; ++d) {
        if (lat_run[d].n) lat[d]->record_n(lat_run[d].value, lat_run[d].n);
        if (clat_run[d].n) clat[d]->record_n(clat_run[d].value, clat_run[d].n);
      }
    }
  };
  // Once per batch, after its completions: the interval histograms' epoch
  // and the progress counters.
  void publish(uint64_t completed, uint64_t bytes_all) noexcept;
  struct Reaped {
    unsigned freed;      // requests finished, whole or failed: no longer in flight
    unsigned completed;  // of which whole
    uint64_t bytes;      // moved by them, counted or not
  };
  // kDirs: a mixed job's, which also records each direction's latency.
  template <bool kTimed, bool kSplit, bool kDirs>
  Reaped reap(int got, Nanos now, uint64_t quota, AnatomyThread* anat) noexcept;
  Reaped reap_any(int got, Nanos now, uint64_t quota, AnatomyThread* anat) noexcept;
  bool reap_failed(Slot& s, const IoCompletion& c);
  void record_dir_slat(uint64_t slat, unsigned from, unsigned to) noexcept;
  bool anatomy_on() const noexcept;  // --anatomy, and its programs attached now
  bool wait_for_start() noexcept;
  void record_error(const Slot& s, int key);
  static const char* error_hint(int key, IoOp op);
  void read_busy(std::vector<BusyCounters>& into) noexcept;
  void open_window();
  // `drained`: nothing of this thread is in flight (a quota reached).
  void close_window(Nanos now, bool drained = false);
  void settle_disks(SystemSample& s) const;
  // The batch loop and its steps (worker.cpp), over the state they share.
  struct LoopState;
  void loop() noexcept;
  void refill(LoopState& s) noexcept;
  void idle_paced(LoopState& s) noexcept;
  Nanos pace_due(const LoopState& s) const noexcept;
  // --latency-target (worker_search.cpp): the search's step after a reap,
  // the completions over the target, and the figures begun afresh.
  // Returns true when the search is done: the job ends.
  bool search_step(Nanos now, unsigned inflight) noexcept;
  void count_over_target(int got, Nanos now) noexcept;
  void restart_window(Nanos now);
  int enter_batch(LoopState& s, unsigned q) noexcept;
  void reap_batch(LoopState& s, int got) noexcept;
  // The fused path (worker_fused.cpp): the steady state of a run of reads or
  // writes, each completion refilling its own slot in place.
  bool fused_may_run(unsigned inflight, bool stopping) const noexcept;
  bool quota_far() const noexcept;
  void run_fused(Nanos& now, uint64_t& completed, uint64_t& bytes_all) noexcept;
  template <bool kTimed, bool kSplit, bool kMoves, bool kOneFile>
  void fused_loop(FusedRing& ring, Nanos& now, uint64_t& completed, uint64_t& bytes_all) noexcept;
  bool fused_retry(Slot& s, uint32_t tag, int32_t res, FusedRing::Sq& sq);
  void choose_refill();
  void close_refill(Nanos now);
  bool check_stop(Nanos now);
  bool floor_missed(Nanos now);
  void fatal(std::string why);

  // What it was given.
  const JobSpec& job_;
  const Targets& targets_;
  Plan plan_;
  Control& ctl_;
  JobControl& jc_;
  GroupControl& group_;
  Published& pub_;
  ThreadResult& out_;
  std::vector<VerifyTable>* tables_;  // null without --verify
  InflightLog* log_;                  // null unless --acct full
  // Set up once, before `go`.
  std::exception_ptr setup_error_;
  uint64_t seed_ = 0;  // the job's --seed, made its own for jobs after the first
  std::unique_ptr<Engine> engine_;
  FaultEngine* faults_ = nullptr;  // engine_ itself, when faults are injected
  std::optional<IoOp> fixed_op_;   // every request's op, unless --rw randrw mixes them
  bool mixed_ = false;             // prepare_mixed's requests: several ops or sizes, trims, syncs
  bool moves_data_ = true;
  // --fsync / --fdatasync: a sync of the last file written after every N writes.
  uint64_t sync_every_ = 0, writes_since_sync_ = 0;
  IoOp sync_op_ = IoOp::Fsync;
  bool sync_due_ = false;
  uint32_t last_write_file_ = 0;
  bool split_lat_ = false;  // slat/clat recorded (--acct latency and full, an engine that queues)
  bool acct_latency_ = true;  // record per-I/O latency (--acct latency and full)
  bool dir_lat_ = false;      // and each direction's apart: a mixed job (out_.read_lat, write_lat)
  bool dump_ = false;      // test-only: keep every counted I/O's interval
  FusedRing* fused_ = nullptr;  // the engine's fused path, where this run may take it
  bool submit_early_ = false;   // FusedRing::reap's `early`: O_DIRECT runs
  // `early` for a pass of `ready` completions: only a pass that holds half
  // the depth or more. With more than half still in flight the device is
  // not idle while the pass refills, and the kick is an enter for nothing,
  // dear in an hour when enters are (docs/design.md, the fused path).
  bool kick_early(uint32_t ready) const noexcept { return submit_early_ && 2 * uint64_t{ready} >= plan_.depth; }
  // How the fused path submits its refills: refill_ as given, or, with
  // choose_, as chooser_ measures pass by pass (--submit-policy).
  Refill refill_ = Refill::Pass;
  bool choose_ = false;
  RefillChooser chooser_;
  // The bound on a wait for completions: none where the wait sleeps in the
  // kernel, which the main thread's kick interrupts (control.hpp); kMaxWaitNs
  // for --wait spin, which spins in user space, where no signal reaches it.
  Nanos wait_bound_ = 0;
  // The requests: slots and their buffers, the free list, the batch being
  // queued and the completions reaped.
  std::unique_ptr<char, FreeDeleter> buffers_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  unsigned nfree_ = 0;
  std::vector<IoRequest> reqs_;
  unsigned nreq_ = 0;
  std::vector<IoCompletion> comps_;
  size_t reap_room_ = 0;  // completions one enter may take: the depth, or --complete-max
  // Where the next request goes.
  std::vector<OffsetGen> gens_;
  Rng mix_{0};
  // --rate-iops R,W,T: each direction's pace, and the direction the mix drew
  // that no pace let go yet (-1: none), which the next refill issues first.
  std::optional<DirPace> dir_pace_;
  int held_dir_ = -1;
  // --rate-min / --rate-iops-min: the floors, from the window's opening.
  std::optional<RateFloor> floor_;
  // --latency-target: the search, the depth it lets the refill reach (0
  // while what is in flight drains: fio quiesces), and the window being tried.
  std::optional<DepthSearch> search_;
  unsigned search_cap_ = 0;
  bool restart_when_drained_ = false;
  Nanos cycle_start_ = 0;
  uint64_t cycle_ios_ = 0, cycle_over_ = 0;
  // --bssplit: each size's cumulative weight, and the sizes; random I/O's
  // map of each file's visited blocks (fio's random map).
  std::vector<uint64_t> split_cum_;
  std::vector<uint32_t> split_size_;
  // Sizes per direction (--bs R,W[,T], --bssplit R,W[,T]): each
  // direction's sizes (cumulative weights, sizes, the grid: the smallest),
  // and its own offsets and, for random I/O, map per file (place_dir).
  struct DirSizes {
    std::vector<uint64_t> cum;
    std::vector<uint32_t> size;
    uint64_t unit = 0;
  };
  bool by_dir_ = false;
  std::array<DirSizes, 3> dir_;
  std::array<std::vector<OffsetGen>, 3> dir_gens_;
  std::array<std::vector<RandomMap>, 3> dir_maps_;
  uint64_t split_unit_ = 0;  // the grid: job_.bs_align(), taken once
  std::vector<RandomMap> maps_;
  uint64_t rr_ = 0;
  // --verify.
  VerifyResult verify_;
  uint64_t generation_ = 0;
  // The measured window and the time series' interval histograms.
  bool counting_ = false, window_closed_ = false;
  Nanos window_start_ = 0;
  Nanos measure_start_ = 0, deadline_ = UINT64_MAX;  // this job's window, from jc_ once open
  std::unique_ptr<Histogram> ihist_[2];  // --log-interval with --acct latency or full
  std::unique_ptr<Histogram> islat_[2], iclat_[2];  // and JobSpec::interval_split, where latency is split
  uint32_t epoch_ = 0;
};

// --fsync/--fdatasync N: after every N writes, a sync of the file last
// written is due (the next request prepare_mixed or prepare_verified makes).
[[gnu::always_inline]] inline void Worker::count_write(uint32_t file) noexcept {
  last_write_file_ = file;
  if (++writes_since_sync_ == sync_every_) {
    writes_since_sync_ = 0;
    sync_due_ = true;
  }
}

}  // namespace ioacct
