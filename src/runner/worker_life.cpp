// A worker's life around its loop (worker.cpp): the thread's body, from
// setup (its engine, buffers and offsets, pinned where asked) through the
// wait for its job's start to giving its ring back on the thread that made
// it. Nothing here runs per I/O.
#include <pthread.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <fmt/format.h>
#include <initializer_list>
#include <thread>

#include "common/errors.hpp"
#include "runner/kick.hpp"
#include "runner/worker.hpp"

namespace ioacct {

void Worker::operator()() noexcept {
  accept_kicks();
  try {
    setup();
  } catch (...) {
    setup_error_ = std::current_exception();
    if (log_) log_->finish();
    window_closed_ = true;
    if (ctl_.windows_open.fetch_sub(1) == 1) ctl_.edges_done.store(true, std::memory_order_release);
    ctl_.ready.fetch_add(1, std::memory_order_release);
    pub_.done.store(true);
    return;
  }
  ctl_.ready.fetch_add(1, std::memory_order_release);
  while (!ctl_.go.load(std::memory_order_acquire)) std::this_thread::sleep_for(std::chrono::microseconds(50));
  if (ctl_.stop.load() == kRunning && wait_for_start()) loop();
  close_window(now_ns());
  // Its I/O is done: the last of its group to get here starts the next
  // group (stonewall).
  if (group_.running.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    const Nanos t = now_ns();
    for (JobControl* j : group_.next) j->open_at(t);
  }
  if (log_) log_->finish();
  // Stay alive until the closing sample is taken: it reads every thread's
  // schedstat, and an exited thread's time would vanish from it.
  while (!ctl_.edges_done.load(std::memory_order_acquire))
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  out_.engine = engine_->counters();
  if (faults_) out_.faults = faults_->injected();
  // The ring goes on the thread that made it: with SINGLE_ISSUER only its
  // creator may unregister the files, which must happen before the ring
  // closes (see UringEngine's destructor).
  faults_ = nullptr;
  engine_.reset();
  pub_.done.store(true, std::memory_order_release);
}


// Waits until the job may start: its group open (a stonewall before it has
// fallen) and its --startdelay passed. False on a stop.
bool Worker::wait_for_start() noexcept {
  for (;;) {
    if (ctl_.stop.load(std::memory_order_relaxed) != kRunning) return false;
    if (jc_.open.load(std::memory_order_acquire)) {
      const Nanos now = now_ns();
      if (now >= jc_.start) break;
      sleep_until_ns(std::min(jc_.start, now + kMaxWaitNs));
      continue;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
  measure_start_ = jc_.measure_start;
  deadline_ = jc_.deadline;
  return true;
}

void Worker::setup() {
  // Jobs after the first draw other offsets from the same --seed (the first
  // job's are what a plain run draws).
  seed_ = job_.seed ^ (plan_.job ? 0x632be59bd9b4e019ull * plan_.job : 0);
  if (plan_.cpu >= 0) {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(plan_.cpu, &set);
    if (int e = pthread_setaffinity_np(pthread_self(), sizeof(set), &set); e != 0)
      throw RuntimeError(fmt::format("--cpus: cannot pin thread {} to CPU {}: {}", plan_.index, plan_.cpu, errno_text(e)));
  }
  EngineOptions eo;
  eo.depth = plan_.depth;
  eo.uring = job_.uring;
  eo.sync = job_.sync;
  for (const auto& t : targets_.list) {
    eo.fds.push_back(t.fd);
    eo.is_block.push_back(t.is_block ? 1 : 0);
  }
  moves_data_ = engine_traits(job_.engine).moves_data;
  allocate_buffers();
  for (unsigned i = 0; i < plan_.depth; ++i) eo.buffers.push_back({slots_[i].buf, job_.bs});
  if (job_.sq_shared && plan_.index > 0) {
    // Attach to thread 0's SQ thread: wait for its ring to exist.
    int fd;
    while ((fd = jc_.shared_wq_fd.load(std::memory_order_acquire)) == kWqPending)
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    if (fd < 0) throw RuntimeError("--sq-shared: the first thread's ring could not be set up");
    eo.uring.attach_wq_fd = fd;
  }
  try {
    engine_ = make_engine(job_.engine, eo);
  } catch (...) {
    if (job_.sq_shared && plan_.index == 0) jc_.shared_wq_fd.store(kWqFailed, std::memory_order_release);
    throw;
  }
  if (job_.sq_shared && plan_.index == 0) jc_.shared_wq_fd.store(engine_->ring_fd(), std::memory_order_release);
  if (job_.faults.any()) {
    FaultSpec spec = job_.faults;
    spec.seed ^= 0x9e3779b97f4a7c15ull * (plan_.index + 1);
    auto fe = std::make_unique<FaultEngine>(std::move(engine_), spec, plan_.depth);
    faults_ = fe.get();
    engine_ = std::move(fe);
  }
  acct_latency_ = job_.acct >= AcctLevel::Latency;
  dump_ = !job_.dump_intervals.empty();
  if (acct_latency_ && job_.log_interval.count()) {
    ihist_[0] = std::make_unique<Histogram>();
    ihist_[1] = std::make_unique<Histogram>();
  }
  if (dump_) out_.intervals.reserve(1 << 20);
  if (!rw_mixed(job_.rw)) fixed_op_ = op_for_next();
  sync_every_ = job_.fsync_every ? job_.fsync_every : job_.fdatasync_every;
  mixed_ = sync_every_ || !fixed_op_ || !io_moves_data(*fixed_op_) || !job_.bs_split.empty() ||
           job_.sized_by_direction();
  sync_op_ = job_.fsync_every ? IoOp::Fsync : IoOp::Fdatasync;
  if (acct_latency_) setup_latency();

  // The fused path takes the steady state of a plain run: only reads or
  // only writes, refilled as they are reaped (no lockstep batches, no
  // --split-submit, no --complete-max: a pass takes every completion), unpaced, without a --latency-target's search or a
  // --rate-min's floor, --verify or the test-only interval
  // dump (nor the anatomy, which is attached after set-up: loop() checks
  // it). Everything else, and every run's edges, take the batch path.
  if (FusedRing* f = engine_->fused(); f && f->nop() == !moves_data_ && !tables_ && !dump_ && job_.rate_per_thread() == 0 &&
                                       !job_.latency_target.count() && !job_.has_rate_floor() &&
                                       !sync_every_ && fixed_op_ && io_moves_data(*fixed_op_) && !job_.lockstep() &&
                                       !job_.split_submit && !job_.complete_max)
    fused_ = f;
  // Only a device has a queue to keep fed: nop and the page cache complete
  // inside the enter.
  submit_early_ = fused_ && moves_data_ && job_.direct;
  choose_refill();
  wait_bound_ = job_.uring.wait == WaitMode::Spin ? kMaxWaitNs : 0;

  reqs_.resize(plan_.depth);
  comps_.resize(plan_.depth);
  reap_room_ = job_.complete_max ? std::min<size_t>(job_.complete_max, comps_.size()) : comps_.size();
  setup_offsets();
  out_.index = plan_.index;
  out_.job = plan_.job;
  out_.tid = static_cast<int>(gettid());
  out_.cpu = plan_.cpu;
  out_.depth = plan_.depth;
}

// The histograms beside lat's (--acct latency and full): slat and clat
// where the engine queues (psync's one syscall per I/O has no slat), each
// direction's apart in a job that mixes them, as fio's JSON has them, and
// the trims' and syncs' own.
void Worker::setup_latency() {
  if (job_.engine != EngineKind::Psync) {
    split_lat_ = true;
    out_.slat = std::make_shared<Histogram>();
    out_.clat = std::make_shared<Histogram>();
    if (job_.interval_split && ihist_[0])
      for (int e = 0; e < 2; ++e) {
        islat_[e] = std::make_unique<Histogram>();
        iclat_[e] = std::make_unique<Histogram>();
      }
  }
  if (rw_mixed(job_.rw)) {
    dir_lat_ = true;
    for (DirLatency* d : {&out_.read_lat, &out_.write_lat}) {
      d->lat = std::make_shared<Histogram>();
      if (split_lat_) {
        d->slat = std::make_shared<Histogram>();
        d->clat = std::make_shared<Histogram>();
      }
    }
  }
  if (rw_trims_only(job_.rw) || job_.rwmix_trim) out_.trim_latency = std::make_shared<Histogram>();
  if (sync_every_) out_.sync_latency = std::make_shared<Histogram>();
}

// Where the requests go: each file's offsets, the op mix, and with
// --bssplit the sizes' weights and, for random I/O, each file's random map
// (with --bs R,W each direction's: setup_direction_offsets).
void Worker::setup_offsets() {
  for (size_t k = 0; k < plan_.files.size(); ++k) {
    const Target& t = targets_.list[plan_.files[k]];
    if (!job_.bs_split.empty() && rw_random(job_.rw)) maps_.emplace_back(t.range / job_.bs_align());
    // --blockalign: random offsets every `ba` bytes, each with a whole
    // --bs after it before the range's end (fio's blockalign).
    const uint64_t ba = job_.blockalign && rw_random(job_.rw) ? job_.blockalign : 0;
    const uint64_t range = ba ? (t.range >= job_.bs ? ((t.range - job_.bs) / ba + 1) * ba : 0) : t.range;
    gens_.emplace_back(t.base, range, ba ? ba : job_.bs_align(), rw_random(job_.rw),
                       seed_ + 0x9e3779b97f4a7c15ull * (plan_.index * 131 + k + 1), plan_.start_block[k],
                       plan_.stride[k], plan_.phase[k], job_.distribution);
  }
  mix_ = Rng(seed_ ^ (0x2545f4914f6cdd1dull * (plan_.index + 1)));
  split_unit_ = job_.bs_align();
  if (job_.sized_by_direction()) setup_direction_offsets();
  uint64_t cum = 0;
  for (const BsShare& b : job_.bs_split) {
    split_cum_.push_back(cum += b.weight);
    split_size_.push_back(b.size);
  }
}

// --bs R,W[,T]: each direction drawn gets its own offsets on its own size's
// grid (starting at the thread's point of each file) and, random, its map.
void Worker::setup_direction_offsets() {
  by_dir_ = true;
  const std::array<bool, 3> drawn = job_.directions();
  for (int d = 0; d < 3; ++d) {
    if (!drawn[d]) continue;
    DirSizes& ds = dir_[d];
    uint64_t cum = 0, unit = UINT64_MAX;
    for (const BsShare& b : job_.sizes_of(d)) {
      ds.cum.push_back(cum += b.weight);
      ds.size.push_back(b.size);
      unit = std::min<uint64_t>(unit, b.size);
    }
    ds.unit = unit;
    for (size_t k = 0; k < plan_.files.size(); ++k) {
      const Target& t = targets_.list[plan_.files[k]];
      dir_gens_[d].emplace_back(t.base, t.range, unit, rw_random(job_.rw),
                                seed_ + 0x9e3779b97f4a7c15ull * (plan_.index * 131 + k + 1) + 0x51ed27ull * (d + 1),
                                plan_.start_block[k] * job_.bs_align() / unit, 1, 0, job_.distribution);
      if (rw_random(job_.rw)) dir_maps_[d].emplace_back(t.range / unit);
    }
  }
}

void Worker::allocate_buffers() {
  // One aligned allocation for every slot's buffer: O_DIRECT needs the
  // memory aligned to the device, and page alignment satisfies any device.
  size_t align = 4096;
  for (const auto& t : targets_.list) align = std::max<size_t>(align, t.dio_align);
  const size_t bytes = (job_.bs * plan_.depth + align - 1) / align * align;
  buffers_.reset(static_cast<char*>(std::aligned_alloc(align, bytes)));
  if (!buffers_) throw RuntimeError(fmt::format("cannot allocate {} bytes of I/O buffers", bytes));
  // Writes carry incompressible data. Reads overwrite whatever is there, so
  // their pages are only touched (no fault in the window); nop needs none.
  if (rw_writes(job_.rw) && moves_data_) {
    Rng fill(seed_ ^ (0xb5ad4eceda1ce2a9ull * (plan_.index + 1)));
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
      const uint64_t v = fill.next();
      std::memcpy(buffers_.get() + i, &v, 8);
    }
  } else if (moves_data_) {
    std::memset(buffers_.get(), 0, bytes);
  }
  slots_.resize(plan_.depth);
  free_.resize(plan_.depth);
  for (unsigned i = 0; i < plan_.depth; ++i) {
    slots_[i].buf = buffers_.get() + static_cast<size_t>(i) * job_.bs;
    free_[i] = plan_.depth - 1 - i;
  }
  nfree_ = plan_.depth;
}

}  // namespace ioacct
