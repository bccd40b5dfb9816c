#include "runner/runner.hpp"

#include <pthread.h>
#include <unistd.h>
#include <sched.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <exception>
#include <fmt/format.h>
#include <mutex>
#include <optional>
#include <thread>

#include "acct/accounting.hpp"
#include "acct/clock.hpp"
#include "acct/cpu.hpp"
#include "acct/inflight.hpp"
#include "acct/series.hpp"
#include "acct/system.hpp"
#include "common/errors.hpp"
#include "common/offsets.hpp"
#include "monitor/bpf/busy_tracker.hpp"

namespace ioacct {
namespace {

constexpr Nanos kMaxWaitNs = 100'000'000;  // bound on any wait, so a stop is seen within 0.1 s
constexpr uint32_t kMaxEagain = 1000;       // a request that keeps failing with EAGAIN is an error

enum Stop : int { kRunning = 0, kInterrupted = 1, kErrors = 2, kFatal = 3 };

// Written by one worker, read by the progress line: relaxed stores once per
// batch, which on x86 are plain moves (no atomic read-modify-write per I/O).
struct alignas(64) Published {
  std::atomic<uint64_t> completed{0};  // whole run, ramp included
  std::atomic<uint64_t> bytes{0};
  std::atomic<uint64_t> inflight{0};
  std::atomic<uint64_t> measured{0};
  std::atomic<uint32_t> epoch_ack{0};  // --log-interval: the epoch whose histogram it now fills
  std::atomic<bool> done{false};
};

constexpr int kWqPending = -2, kWqFailed = -1;

struct Control {
  std::atomic<int> stop{kRunning};
  std::atomic<int> shared_wq_fd{kWqPending};  // --sq-shared: thread 0's ring
  // The time series: the main thread bumps the epoch at each interval's end;
  // a worker then fills the other of its two interval histograms and says so.
  std::atomic<uint32_t> epoch{0};
  std::atomic<uint64_t> errors{0};
  std::atomic<unsigned> ready{0};
  std::atomic<bool> go{false};
  // Set before `go` is released, read-only after.
  Nanos measure_start = 0, deadline = UINT64_MAX;
  uint64_t max_errors = 0;
  // The process CPU window: first worker to open its window samples A, the
  // last one to close it samples B.
  std::atomic<bool> window_opened{false};
  std::atomic<unsigned> windows_open{0};
  std::atomic<bool> edges_done{false};  // the closing sample is taken
  CpuSample cpu_a, cpu_b;
  // The kernel's view at the same edges (--acct basic/full).
  bool sample_system = false;
  std::vector<std::string> disks;
  std::vector<int> ring_fds;
  SystemSample sys_a, sys_b;
  // The exact device busy time (--acct full), read right after diskstats at
  // the same edges; empty if the tracker is not attached or a read failed.
  const BusyTracker* tracker = nullptr;
  std::vector<BusyCounters> busy_a, busy_b;
  std::mutex first_error_mu;
  std::string first_error;
};

struct Slot {
  char* buf;        // start of this slot's buffer
  uint64_t offset;  // next byte to transfer
  uint32_t left;    // bytes still to transfer
  uint32_t len;     // the request's full length
  uint32_t file;
  IoOp op;
  Nanos t_submit;   // when the request was first submitted
  uint64_t start;   // the request's first byte (offset moves on with short transfers)
  uint32_t eagains; // EAGAIN retries of this request so far
  uint64_t gen;     // --verify: the write's generation
};

struct Plan {
  unsigned index = 0;
  unsigned depth = 1;
  int cpu = -1;
  uint64_t quota = UINT64_MAX;       // measured I/Os this thread does (--ios)
  std::vector<uint32_t> files;       // indices into targets
  std::vector<uint64_t> start_block; // sequential start per file (threads sharing a target)
  std::vector<uint64_t> stride, phase; // --verify: the slice of blocks this thread owns
};

class Worker {
 public:
  Worker(const JobSpec& job, const Targets& targets, Plan plan, Control& ctl, Published& pub,
         ThreadResult& out, std::vector<VerifyTable>* tables, InflightLog* log)
      : job_(job), targets_(targets), plan_(std::move(plan)), ctl_(ctl), pub_(pub), out_(out), tables_(tables),
        log_(log) {}

  void operator()() noexcept {
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
    if (ctl_.stop.load() == kRunning) loop();
    close_window(now_ns(), false);
    if (log_) log_->finish();
    // Stay alive until the closing sample is taken: it reads every thread's
    // schedstat, and an exited thread's time would vanish from it.
    while (!ctl_.edges_done.load(std::memory_order_acquire))
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    out_.engine = engine_->counters();
    if (faults_) out_.faults = faults_->injected();
    pub_.done.store(true, std::memory_order_release);
  }

  std::exception_ptr setup_error() const { return setup_error_; }
  const VerifyResult& verify_result() const { return verify_; }
  // The interval histogram of `epoch`; read it only once the worker has
  // acknowledged a later epoch (or is done).
  Histogram* interval_hist(uint32_t epoch) { return ihist_[epoch & 1].get(); }
  const Engine* engine() const { return engine_.get(); }

 private:
  void setup() {
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
    for (const auto& t : targets_.list) eo.fds.push_back(t.fd);
    allocate_buffers();
    for (unsigned i = 0; i < plan_.depth; ++i) eo.buffers.push_back({slots_[i].buf, job_.bs});
    if (job_.sq_shared && plan_.index > 0) {
      // Attach to thread 0's SQ thread: wait for its ring to exist.
      int fd;
      while ((fd = ctl_.shared_wq_fd.load(std::memory_order_acquire)) == kWqPending)
        std::this_thread::sleep_for(std::chrono::microseconds(100));
      if (fd < 0) throw RuntimeError("--sq-shared: the first thread's ring could not be set up");
      eo.uring.attach_wq_fd = fd;
    }
    try {
      engine_ = make_engine(job_.engine, eo);
    } catch (...) {
      if (job_.sq_shared && plan_.index == 0) ctl_.shared_wq_fd.store(kWqFailed, std::memory_order_release);
      throw;
    }
    if (job_.sq_shared && plan_.index == 0) ctl_.shared_wq_fd.store(engine_->ring_fd(), std::memory_order_release);
    if (job_.faults.any()) {
      FaultSpec spec = job_.faults;
      spec.seed ^= 0x9e3779b97f4a7c15ull * (plan_.index + 1);
      auto fe = std::make_unique<FaultEngine>(std::move(engine_), spec, plan_.depth);
      faults_ = fe.get();
      engine_ = std::move(fe);
    }
    moves_data_ = engine_traits(job_.engine).moves_data;
    acct_full_ = job_.acct == AcctLevel::Full;
    dump_ = !job_.dump_intervals.empty();
    if (acct_full_ && job_.log_interval.count()) {
      ihist_[0] = std::make_unique<Histogram>();
      ihist_[1] = std::make_unique<Histogram>();
    }
    if (dump_) out_.intervals.reserve(1 << 20);
    if (job_.rw != RwMode::RandRw) fixed_op_ = op_for_next();

    reqs_.resize(plan_.depth);
    comps_.resize(plan_.depth);
    for (size_t k = 0; k < plan_.files.size(); ++k) {
      const Target& t = targets_.list[plan_.files[k]];
      gens_.emplace_back(t.base, t.range, job_.bs, rw_random(job_.rw),
                         job_.seed + 0x9e3779b97f4a7c15ull * (plan_.index * 131 + k + 1), plan_.start_block[k],
                         plan_.stride[k], plan_.phase[k]);
    }
    mix_ = Rng(job_.seed ^ (0x2545f4914f6cdd1dull * (plan_.index + 1)));
    out_.index = plan_.index;
    out_.tid = static_cast<int>(gettid());
    out_.cpu = plan_.cpu;
    out_.depth = plan_.depth;
  }

  void allocate_buffers() {
    // One aligned allocation for every slot's buffer: O_DIRECT needs the
    // memory aligned to the device, and page alignment satisfies any device.
    size_t align = 4096;
    for (const auto& t : targets_.list) align = std::max<size_t>(align, t.dio_align);
    const size_t bytes = (job_.bs * plan_.depth + align - 1) / align * align;
    buffers_.reset(static_cast<char*>(std::aligned_alloc(align, bytes)));
    if (!buffers_) throw RuntimeError(fmt::format("cannot allocate {} bytes of I/O buffers", bytes));
    // Writes carry incompressible data; reads overwrite it anyway.
    Rng fill(job_.seed ^ (0xb5ad4eceda1ce2a9ull * (plan_.index + 1)));
    for (size_t i = 0; i + 8 <= bytes; i += 8) {
      const uint64_t v = fill.next();
      std::memcpy(buffers_.get() + i, &v, 8);
    }
    slots_.resize(plan_.depth);
    free_.resize(plan_.depth);
    for (unsigned i = 0; i < plan_.depth; ++i) {
      slots_[i].buf = buffers_.get() + static_cast<size_t>(i) * job_.bs;
      free_[i] = plan_.depth - 1 - i;
    }
    nfree_ = plan_.depth;
  }

  // Prepares up to `n` new requests stamped `t`; returns how many (fewer only
  // with --verify, when the blocks picked are busy).
  unsigned prepare(unsigned n, Nanos t) noexcept {
    if (tables_) return prepare_verified(n, t);
    const uint32_t bs = static_cast<uint32_t>(job_.bs);
    const size_t nfiles = gens_.size();
    for (unsigned i = 0; i < n; ++i) {
      const uint32_t idx = free_[--nfree_];
      Slot& s = slots_[idx];
      const size_t k = nfiles == 1 ? 0 : (rw_random(job_.rw) ? mix_.below(nfiles) : rr_++ % nfiles);
      s.start = s.offset = moves_data_ ? gens_[k].next() : 0;  // nop looks at no offset
      s.left = s.len = bs;
      s.eagains = 0;
      s.file = plan_.files[k];
      s.op = fixed_op_ ? *fixed_op_ : op_for_next();
      s.t_submit = t;
      reqs_[nreq_++] = {s.offset, s.buf, bs, s.file, idx, s.op};
    }
    return n;
  }

  // The --verify path: no two I/Os to one block in flight, every write
  // formatted as a checkable block.
  unsigned prepare_verified(unsigned n, Nanos t) noexcept {
    const uint32_t bs = static_cast<uint32_t>(job_.bs);
    const size_t nfiles = gens_.size();
    for (unsigned i = 0; i < n; ++i) {
      size_t k = 0;
      uint64_t off = 0, block = 0;
      bool found = false;
      for (int attempt = 0; attempt < 8 && !found; ++attempt) {
        k = nfiles == 1 ? 0 : (rw_random(job_.rw) ? mix_.below(nfiles) : rr_++ % nfiles);
        off = gens_[k].next();
        block = (off - targets_.list[plan_.files[k]].base) / bs;
        found = !(*tables_)[plan_.files[k]].busy[block];
      }
      if (!found) return i;  // everything we tried is in flight; try again next batch
      (*tables_)[plan_.files[k]].busy[block] = 1;
      const uint32_t idx = free_[--nfree_];
      Slot& s = slots_[idx];
      s.start = s.offset = off;
      s.left = s.len = bs;
      s.eagains = 0;
      s.file = plan_.files[k];
      s.op = op_for_next();
      s.t_submit = t;
      if (s.op == IoOp::Write) {
        s.gen = ++generation_;
        format_block(s.buf, bs, off, s.gen, job_.seed, plan_.index);
      }
      reqs_[nreq_++] = {s.offset, s.buf, bs, s.file, idx, s.op};
    }
    return n;
  }

  // --verify bookkeeping when a request is done (ok = transferred whole).
  void finish_verified(const Slot& s, bool ok) {
    VerifyTable& vt = (*tables_)[s.file];
    const uint64_t block = (s.start - targets_.list[s.file].base) / job_.bs;
    vt.busy[block] = 0;
    if (s.op == IoOp::Write) {
      // A failed write leaves the block's content unknown: stop checking it.
      vt.tag[block] = ok ? generation_tag(s.gen) : 0;
    } else if (ok && job_.verify_during && vt.tag[block]) {
      VerifyFinding f;
      ++verify_.checked_during;
      if (!check_block(s.buf, s.len, s.start, job_.seed, vt.tag[block], f)) verify_.add(std::move(f));
    }
  }

  IoOp op_for_next() noexcept {
    switch (job_.rw) {
      case RwMode::RandRead:
      case RwMode::Read: return IoOp::Read;
      case RwMode::RandWrite:
      case RwMode::Write: return IoOp::Write;
      case RwMode::RandRw: return mix_.below(100) < job_.rwmix_read ? IoOp::Read : IoOp::Write;
    }
    return IoOp::Read;
  }

  void record_error(const Slot& s, int key) {
    ++out_.errors[key];
    if (ctl_.errors.fetch_add(1) + 1 > ctl_.max_errors) {
      int expected = kRunning;
      ctl_.stop.compare_exchange_strong(expected, kErrors);
    }
    std::lock_guard lk(ctl_.first_error_mu);
    if (ctl_.first_error.empty())
      ctl_.first_error = fmt::format("{} {} {} at offset {}{}",
                                     key == kErrEof ? "unexpected end of file" : errno_text(key),
                                     s.op == IoOp::Read ? "reading" : "writing",
                                     targets_.list[s.file].path, s.start, error_hint(key));
  }

  // What a person can do about the common errors.
  static const char* error_hint(int key) {
    switch (key) {
      case kErrEof: return " (the target is shorter than when the run started: was it truncated?)";
      case ENOSPC: return " (the filesystem is full: use a smaller --size, or free space)";
      case EIO: return " (the device reported an I/O error: check 'dmesg')";
      case EBADF: return " (the target's descriptor is no longer valid)";
      default: return "";
    }
  }

  // The two edges are taken by one thread each, one after the other, so the
  // tracker is never read from two threads at once.
  void read_busy(std::vector<BusyCounters>& into) noexcept {
    if (!ctl_.tracker) return;
    try {
      into = ctl_.tracker->read();
    } catch (const std::exception&) {
      into.clear();  // reported as not measured
    }
  }

  void open_window(Nanos now) {
    counting_ = true;
    window_start_ = ctl_.measure_start;
    if (!ctl_.window_opened.exchange(true) && job_.acct != AcctLevel::Off) {
      if (ctl_.sample_system) ctl_.sys_a = sample_system(ctl_.disks, ctl_.ring_fds, job_.uring.sqpoll);
      read_busy(ctl_.busy_a);
      ctl_.cpu_a = sample_cpu();
    }
    (void)now;
  }

  void close_window(Nanos now, bool) {
    if (window_closed_) return;
    window_closed_ = true;
    if (counting_) {
      counting_ = false;
      out_.window_ns = now - window_start_;
    }
    if (ctl_.windows_open.fetch_sub(1) == 1) {
      if (job_.acct != AcctLevel::Off) {
        ctl_.cpu_b = sample_cpu();
        if (ctl_.sample_system) ctl_.sys_b = sample_system(ctl_.disks, ctl_.ring_fds, job_.uring.sqpoll);
        read_busy(ctl_.busy_b);
      }
      ctl_.edges_done.store(true, std::memory_order_release);  // now the others may exit
    }
  }

  void loop() noexcept {
    const unsigned depth = plan_.depth;
    const unsigned sb = std::min(job_.submit_batch_eff(), depth);
    const unsigned cb = std::min(job_.complete_batch_eff(), depth);
    const double rate = job_.rate_per_thread();
    const Nanos interval = rate > 0 ? std::max<Nanos>(1, static_cast<Nanos>(1e9 / rate)) : 0;
    const uint64_t quota = plan_.quota;
    Histogram& lat = *out_.latency;

    Nanos now = now_ns();
    // Pacing: the k-th I/O since `pace_start` is due at pace_start + k*period,
    // computed from k each time so that rounding never accumulates.
    const double period = rate > 0 ? 1e9 / rate : 0;
    Nanos pace_start = now;
    uint64_t pace_k = 0;
    Nanos next_due = now;
    unsigned inflight = 0;  // prepared or submitted, not yet finished
    unsigned inflight_logged = 0;  // last count sent to the in-flight log
    if (now >= ctl_.measure_start) open_window(now);  // no ramp: the first I/O counts
    if (quota == 0) {  // this thread's share of --ios is nothing
      close_window(now, true);
      return;
    }
    uint64_t completed = 0, bytes_all = 0;
    bool stopping = false;

    for (;;) {
      // 1. New requests: fill the free depth, a submit batch at a time.
      bool starved = false;  // --verify: the blocks picked were all in flight
      Nanos t_prep = 0;      // the submission stamp of this batch
      if (!stopping) {
        unsigned n = std::min(depth - inflight, sb);
        if (counting_ && quota != UINT64_MAX)
          n = static_cast<unsigned>(std::min<uint64_t>(n, quota > out_.ios + inflight ? quota - out_.ios - inflight : 0));
        if (n && interval) {
          // Paced by a schedule: the k-th I/O is due at start + k*interval.
          // If we fall more than one interval behind, the backlog is dropped
          // rather than sent as a burst.
          Nanos t = now_ns();
          unsigned due = 0;
          while (due < n && next_due <= t) {
            ++due;
            next_due = pace_start + static_cast<Nanos>(static_cast<double>(++pace_k) * period);
          }
          if (next_due + interval < t) {  // more than one interval behind
            pace_start = next_due = t;
            pace_k = 0;
          }
          n = due ? prepare(due, t) : 0;
          starved = n < due;
          t_prep = t;
        } else if (n) {
          const unsigned asked = n;
          t_prep = now_ns();
          n = prepare(n, t_prep);
          starved = n < asked;
        }
        inflight += n;
        // Published after the refill: after the reap it would read 0 whenever
        // a whole batch had just completed.
        pub_.inflight.store(inflight, std::memory_order_relaxed);
        if (n && log_) {
          log_->push(t_prep, inflight);
          inflight_logged = inflight;
        }
      }
      if (nreq_) {
        const unsigned q = engine_->queue({reqs_.data(), nreq_});
        if (q < nreq_) std::memmove(reqs_.data(), reqs_.data() + q, (nreq_ - q) * sizeof(IoRequest));
        nreq_ -= q;
      }

      // 2. Wait: only when no more can be issued now (depth full, quota or
      // pace reached, or stopping); then for a complete batch.
      if (inflight == 0) {
        if (stopping || (counting_ && out_.ios >= quota)) break;
        if (interval) {
          sleep_until_ns(std::min(next_due, now_ns() + kMaxWaitNs));
          now = now_ns();
          if (check_stop(now)) stopping = true;
          continue;
        }
      }
      const bool quota_full = counting_ && quota != UINT64_MAX && out_.ios + inflight >= quota;
      const bool can_issue = !stopping && !starved && inflight < depth && !quota_full &&
                             !(interval && next_due > now_ns());
      const unsigned wait_nr = can_issue ? 0 : std::min(cb, inflight);
      // The pace bounds the wait only when the pace is what holds the next
      // request back. With the depth full (an I/O slower than the interval,
      // such as a durable write) only a completion can free a slot: bounding
      // that wait by an instant already past made every enter return at once,
      // a spin of ~30 reaps per I/O that was counted in the CPU per I/O.
      Nanos timeout = kMaxWaitNs;
      if (interval && !stopping && !starved && !quota_full && inflight < depth) {
        const Nanos t = now_ns();
        timeout = next_due > t ? std::min(next_due - t, kMaxWaitNs) : 1000;
      }
      const int got = engine_->enter(wait_nr, {comps_.data(), comps_.size()}, timeout);
      now = now_ns();
      if (got < 0) {
        fatal(fmt::format("io_uring_enter failed: {}", errno_text(got)));
        break;
      }

      // 3. Completions, all stamped `now`: the reaping time.
      if (!counting_ && !window_closed_ && now >= ctl_.measure_start) open_window(now);
      // Requests submitted in one batch and reaped in one batch share both
      // stamps, so equal latencies come in runs: record each run once.
      uint64_t run_lat = 0, run_n = 0;
      for (int i = 0; i < got; ++i) {
        const IoCompletion c = comps_[i];
        Slot& s = slots_[c.tag];
        if (c.res == static_cast<int32_t>(s.left)) [[likely]] {
          if (tables_) finish_verified(s, true);
          --inflight;
          ++completed;
          const uint32_t moved = moves_data_ ? s.len : 0;  // nop moves no data
          bytes_all += moved;
          free_[nfree_++] = c.tag;
          if (counting_ && out_.ios < quota) {
            ++out_.ios;
            if (s.op == IoOp::Read) { ++out_.reads; out_.bytes_read += moved; }
            else { ++out_.writes; out_.bytes_written += moved; }
            if (dump_) out_.intervals.emplace_back(s.t_submit, now);
            if (acct_full_) {
              const uint64_t l = now - s.t_submit;
              if (l == run_lat) {
                ++run_n;
              } else {
                if (run_n) {
                  lat.record_n(run_lat, run_n);
                  if (ihist_[0]) ihist_[epoch_ & 1]->record_n(run_lat, run_n);
                }
                run_lat = l;
                run_n = 1;
              }
            }
          }
        } else if (c.res > 0 && moves_data_) {
          // Short transfer: finish it by resubmitting the rest; the latency
          // still runs from the first submission.
          s.offset += static_cast<uint32_t>(c.res);
          s.left -= static_cast<uint32_t>(c.res);
          ++out_.short_resubmits;
          reqs_[nreq_++] = {s.offset, s.buf + (s.len - s.left), s.left, s.file, c.tag, s.op};
        } else if (c.res == -EAGAIN && ++s.eagains <= kMaxEagain) {
          // Retried. Under --nowait the retry may block: EAGAIN there means
          // "not possible inline", and the I/O still has to be done (what an
          // application does); eagain_retries then counts the I/Os that
          // could not complete inline.
          ++out_.eagain_retries;
          reqs_[nreq_++] = {s.offset, s.buf + (s.len - s.left), s.left, s.file, c.tag, s.op, true};
        } else if (c.res == -EOPNOTSUPP && job_.uring.iopoll) {
          // Polled I/O on a device without poll queues: every I/O will fail
          // the same way. Stop now rather than count them.
          const Target& t = targets_.list[s.file];
          fatal(fmt::format("--iopoll: {} has no poll queues (the kernel answered EOPNOTSUPP); leave out --iopoll",
                            t.device.empty() ? t.path : t.device));
          --inflight;
          free_[nfree_++] = c.tag;
        } else {
          record_error(s, c.res == 0 ? kErrEof : -c.res);
          if (tables_) finish_verified(s, false);
          --inflight;
          free_[nfree_++] = c.tag;
        }
      }
      if (run_n) {
        lat.record_n(run_lat, run_n);
        if (ihist_[0]) ihist_[epoch_ & 1]->record_n(run_lat, run_n);
      }
      if (ihist_[0]) {
        const uint32_t e = ctl_.epoch.load(std::memory_order_relaxed);
        if (e != epoch_) {  // an interval ended: fill the other histogram from now on
          epoch_ = e;
          pub_.epoch_ack.store(e, std::memory_order_release);
        }
      }
      if (log_) {
        if (inflight != inflight_logged) log_->push(now, inflight);
        log_->watermark(now);
        inflight_logged = inflight;
      }
      pub_.completed.store(completed, std::memory_order_relaxed);
      pub_.bytes.store(bytes_all, std::memory_order_relaxed);
      pub_.measured.store(out_.ios, std::memory_order_relaxed);

      // 4. The window closes at the deadline, at the quota, or on a stop.
      if (counting_ && (now >= ctl_.deadline || out_.ios >= quota)) {
        close_window(now, true);
        stopping = true;
      }
      if (!stopping && check_stop(now)) stopping = true;
      if (stopping && inflight == 0) break;
    }
  }

  bool check_stop(Nanos now) {
    if (ctl_.stop.load(std::memory_order_relaxed) == kRunning) return false;
    close_window(now, true);
    return true;
  }

  // Stops every thread: the run cannot go on. `why` becomes the error line.
  void fatal(std::string why) {
    std::lock_guard lk(ctl_.first_error_mu);
    ctl_.first_error = std::move(why);
    ctl_.stop.store(kFatal);
  }

  struct FreeDeleter { void operator()(char* p) const { std::free(p); } };

  const JobSpec& job_;
  const Targets& targets_;
  Plan plan_;
  Control& ctl_;
  Published& pub_;
  ThreadResult& out_;
  std::exception_ptr setup_error_;
  std::vector<VerifyTable>* tables_;  // null without --verify
  InflightLog* log_;                  // null unless --acct full
  VerifyResult verify_;
  uint64_t generation_ = 0;
  std::optional<IoOp> fixed_op_;  // every request's op, unless --rw randrw mixes them
  std::unique_ptr<Engine> engine_;
  FaultEngine* faults_ = nullptr;  // engine_ itself, when faults are injected
  bool moves_data_ = true;
  bool acct_full_ = true;  // record per-I/O latency
  bool dump_ = false;      // test-only: keep every counted I/O's interval
  std::unique_ptr<Histogram> ihist_[2];  // --log-interval with --acct full
  uint32_t epoch_ = 0;
  std::unique_ptr<char, FreeDeleter> buffers_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> free_;
  unsigned nfree_ = 0;
  std::vector<IoRequest> reqs_;
  unsigned nreq_ = 0;
  std::vector<IoCompletion> comps_;
  std::vector<OffsetGen> gens_;
  Rng mix_{0};
  uint64_t rr_ = 0;
  bool counting_ = false, window_closed_ = false;
  Nanos window_start_ = 0;
};

// The time series (--log-interval, with --acct full): at each interval's end
// the main thread snapshots the counters and the kernel's figures, bumps the
// epoch so that workers switch histograms, and emits the interval once every
// worker has switched (its old histogram is then the main thread's to read)
// and the in-flight merge has passed the interval's end.
class SeriesCollector {
 public:
  SeriesCollector(const JobSpec& job, Control& ctl, Published* pub, std::vector<std::unique_ptr<Worker>>& workers,
                  InflightMerger& merger, std::string disk)
      : job_(job), ctl_(ctl), pub_(pub), workers_(workers), merger_(merger), disk_(std::move(disk)),
        interval_(static_cast<Nanos>(job.log_interval.count())), next_(ctl.measure_start) {}

  void tick(Nanos now) {
    if (now < next_ || ctl_.windows_open.load(std::memory_order_acquire) == 0) return;
    const uint32_t e = ctl_.epoch.load(std::memory_order_relaxed);
    if (!all_acked(e)) return;  // a worker still fills the histogram we would hand back: later
    Snap s = snap(now);
    merger_.add_boundary(now);
    if (have_prev_) pending_.push_back({prev_, s, e, boundaries_});
    ++boundaries_;
    prev_ = std::move(s);
    have_prev_ = true;
    ctl_.epoch.store(e + 1, std::memory_order_release);
    next_ = now + interval_;
  }

  Nanos next_due() const { return next_; }

  void collect(bool final) {
    while (!pending_.empty()) {
      Pending& p = pending_.front();
      if (!all_acked(p.epoch + 1)) return;
      const auto& busy = merger_.interval_busy();
      if (!final && busy.size() <= p.boundary) return;
      emit(p, busy.size() > p.boundary ? std::optional<uint64_t>(busy[p.boundary]) : std::nullopt);
      pending_.pop_front();
    }
  }

  Series series;

 private:
  struct Snap {
    Nanos t = 0;
    uint64_t ios = 0, bytes = 0, inflight = 0;
    CpuSample cpu;
    SystemSample sys;
  };
  struct Pending {
    Snap a, b;
    uint32_t epoch;   // the epoch whose histograms hold this interval
    size_t boundary;  // index into the merger's interval_busy()
  };

  bool all_acked(uint32_t e) const {
    for (size_t i = 0; i < workers_.size(); ++i)
      if (!pub_[i].done.load(std::memory_order_acquire) && pub_[i].epoch_ack.load(std::memory_order_acquire) < e)
        return false;
    return true;
  }

  Snap snap(Nanos now) {
    Snap s;
    s.t = now;
    for (size_t i = 0; i < workers_.size(); ++i) {
      s.ios += pub_[i].measured.load(std::memory_order_relaxed);
      s.bytes += pub_[i].bytes.load(std::memory_order_relaxed);
      s.inflight += pub_[i].inflight.load(std::memory_order_relaxed);
    }
    s.cpu = sample_cpu();
    s.sys = sample_system(disk_.empty() ? std::vector<std::string>{} : std::vector<std::string>{disk_},
                          job_.uring.sqpoll ? ctl_.ring_fds : std::vector<int>{}, job_.uring.sqpoll, false);
    return s;
  }

  void emit(const Pending& p, std::optional<uint64_t> busy_ns) {
    SeriesSample x;
    const double dur = static_cast<double>(p.b.t - p.a.t) / 1e9;
    x.t_s = static_cast<double>(p.b.t - ctl_.measure_start) / 1e9;
    x.dur_s = dur;
    x.iops = static_cast<double>(p.b.ios - p.a.ios) / dur;
    x.bytes_per_s = static_cast<double>(p.b.bytes - p.a.bytes) / dur;
    x.inflight = p.b.inflight;
    Histogram merged;
    for (auto& w : workers_) {
      if (Histogram* h = w->interval_hist(p.epoch)) {
        merged.merge(*h);
        h->reset();
      }
    }
    if (merged.count()) {
      x.p50_ns = merged.quantile(0.5);
      x.p99_ns = merged.quantile(0.99);
    }
    if (busy_ns) x.busy_pct = 100.0 * static_cast<double>(*busy_ns) / (dur * 1e9);
    if (p.a.cpu.valid && p.b.cpu.valid) {
      const CpuUsage c = cpu_delta(p.a.cpu, p.b.cpu);
      x.cpu_pct = 100.0 * (c.user_s + c.sys_s) / dur;
    }
    if (job_.uring.sqpoll) {
      const Accounting acc = account(p.a.sys, p.b.sys, {}, {});
      double cpu = 0, work = 0;
      bool has_work = !acc.sq_threads.empty();
      for (const auto& t : acc.sq_threads) {
        cpu += t.cpu_s;
        if (t.work_s) work += *t.work_s; else has_work = false;
      }
      if (!acc.sq_threads.empty()) x.sq_cpu_pct = 100.0 * cpu / dur;
      if (has_work) x.sq_work_pct = 100.0 * work / dur;
    }
    auto da = p.a.sys.disks.find(disk_), db = p.b.sys.disks.find(disk_);
    if (da != p.a.sys.disks.end() && db != p.b.sys.disks.end()) x.util_pct = iostat_row(da->second, db->second, dur).util;
    series.add(x);
  }

  const JobSpec& job_;
  Control& ctl_;
  Published* pub_;
  std::vector<std::unique_ptr<Worker>>& workers_;
  InflightMerger& merger_;
  std::string disk_;
  Nanos interval_;
  Nanos next_;
  Snap prev_;
  bool have_prev_ = false;
  size_t boundaries_ = 0;
  std::deque<Pending> pending_;
};

std::vector<Plan> make_plans(const JobSpec& job, const Targets& targets) {
  const unsigned T = job.threads;
  const size_t nt = targets.list.size();
  std::vector<Plan> plans(T);
  for (unsigned i = 0; i < T; ++i) {
    Plan& p = plans[i];
    p.index = i;
    p.depth = job.depth_per_thread();
    if (!job.cpus.empty()) p.cpu = job.cpus[i % job.cpus.size()];
    if (job.ios) p.quota = *job.ios / T + (i < *job.ios % T ? 1 : 0);
    if (T <= nt) {
      for (size_t j = i; j < nt; j += T) {
        p.files.push_back(static_cast<uint32_t>(j));
        p.start_block.push_back(0);
        p.stride.push_back(1);
        p.phase.push_back(0);
      }
    } else {
      // More threads than targets: threads share a target; sequential
      // threads start at evenly spaced points of it so they do not all read
      // the same blocks.
      const size_t j = i % nt;
      const unsigned sharers = static_cast<unsigned>(T / nt + (j < T % nt ? 1 : 0));
      const unsigned k = static_cast<unsigned>(i / nt);
      const uint64_t blocks = targets.list[j].range / job.bs;
      p.files.push_back(static_cast<uint32_t>(j));
      if (job.verify) {
        // Disjoint slices (every sharers-th block): no two threads ever
        // have I/O in flight to the same block.
        p.start_block.push_back(0);
        p.stride.push_back(sharers);
        p.phase.push_back(k);
      } else {
        p.start_block.push_back(blocks * k / sharers);
        p.stride.push_back(1);
        p.phase.push_back(0);
      }
    }
  }
  return plans;
}

}  // namespace

RunResult run_bench(const JobSpec& job, const Targets& targets, const RunHooks& hooks) {
  const unsigned T = job.threads;
  std::vector<Plan> plans = make_plans(job, targets);
  Control ctl;
  ctl.max_errors = job.max_errors;
  ctl.windows_open = T;
  std::unique_ptr<Published[]> pub(new Published[T]);
  RunResult result;
  result.threads.resize(T);
  for (const auto& t : targets.list)
    result.targets.push_back({t.path, t.device, t.is_block, t.is_temp, t.base, t.range, t.dio_align});

  std::vector<VerifyTable> tables;
  if (job.verify)
    for (const auto& t : targets.list) {
      const size_t blocks = static_cast<size_t>(t.range / job.bs);
      tables.push_back({std::vector<uint8_t>(blocks, 0), std::vector<uint8_t>(blocks, 0)});
    }
  // The exact in-flight tracker (--acct full): one log per worker, merged here.
  std::vector<std::unique_ptr<InflightLog>> log_store;
  std::vector<InflightLog*> logs;
  if (job.acct == AcctLevel::Full)
    for (unsigned i = 0; i < T; ++i) logs.push_back(log_store.emplace_back(std::make_unique<InflightLog>()).get());
  InflightMerger merger(T);
  std::vector<std::unique_ptr<Worker>> workers;
  std::vector<std::thread> threads;
  for (unsigned i = 0; i < T; ++i)
    workers.push_back(std::make_unique<Worker>(job, targets, plans[i], ctl, pub[i], result.threads[i],
                                               job.verify ? &tables : nullptr, logs.empty() ? nullptr : logs[i]));
  auto join_all = [&] {
    for (auto& th : threads)
      if (th.joinable()) th.join();
  };
  for (unsigned i = 0; i < T; ++i) threads.emplace_back(std::ref(*workers[i]));

  // Every ring is set up (or failed) before any I/O starts.
  bool interrupted = false;
  while (ctl.ready.load(std::memory_order_acquire) < T)
    if (hooks.wait_stop_signal && hooks.wait_stop_signal(1)) interrupted = true;
  for (auto& w : workers) {
    if (w->setup_error()) {
      ctl.stop = kFatal;
      ctl.go.store(true, std::memory_order_release);
      join_all();
      std::rethrow_exception(w->setup_error());
    }
  }
  result.engine_desc = workers[0]->engine()->describe();
  std::vector<std::string> target_disks;
  if (job.acct != AcctLevel::Off) {
    ctl.sample_system = true;
    for (const auto& w : workers)
      if (w->engine()->ring_fd() >= 0) ctl.ring_fds.push_back(w->engine()->ring_fd());
    for (const auto& t : targets.list) {
      const DeviceChain c = resolve_device(t.dev_major, t.dev_minor);
      if (c.disk.empty()) continue;
      auto add = [&](const std::string& d) {
        if (std::find(ctl.disks.begin(), ctl.disks.end(), d) == ctl.disks.end()) ctl.disks.push_back(d);
      };
      add(c.disk);
      target_disks.push_back(c.disk);
      for (const auto& u : c.underlying) add(u);
    }
  }
  // The devices' exact busy time beside their %util (--acct full): one
  // tracker for the run, detached when this function returns.
  std::unique_ptr<BusyTracker> tracker;
  std::vector<std::string> busy_names;
  std::optional<std::string> busy_unavailable;
  if (job.acct == AcctLevel::Full && !ctl.disks.empty()) {
    const SystemSample s = sample_system(ctl.disks, {}, false, false);
    std::vector<BusyDevice> devs;
    for (const auto& [name, d] : s.disks) {
      devs.push_back({name, d.major, d.minor});
      busy_names.push_back(name);
    }
    try {
      tracker = BusyTracker::attach(devs, false);
      ctl.tracker = tracker.get();
    } catch (const NotAvailable& e) {
      busy_unavailable = e.what();
    }
  }
  result.setup_flags = workers[0]->engine()->setup_flags();
  if (hooks.on_start) hooks.on_start(result);

  const Nanos t0 = now_ns();
  ctl.measure_start = t0 + static_cast<Nanos>(job.ramp.count());
  if (job.runtime) ctl.deadline = ctl.measure_start + static_cast<Nanos>(job.runtime->count());
  if (interrupted) ctl.stop = kInterrupted;  // a signal while the rings were set up
  merger.start_at(ctl.measure_start);
  std::optional<SeriesCollector> series;
  if (!logs.empty() && job.log_interval.count())
    series.emplace(job, ctl, pub.get(), workers, merger, target_disks.empty() ? std::string() : target_disks[0]);
  ctl.go.store(true, std::memory_order_release);

  // Supervise: progress once a second, stop on a signal.
  Nanos last_t = t0;
  uint64_t last_ios = 0, last_bytes = 0;
  Nanos next_tick = t0 + 1'000'000'000ull;
  for (;;) {
    bool all_done = true;
    for (unsigned i = 0; i < T; ++i) all_done &= pub[i].done.load(std::memory_order_acquire);
    if (all_done) break;
    Nanos t = now_ns();
    // Wake often enough to drain the in-flight logs long before they fill
    // (16k events each: 80 ms at 200k batches/s), and no more: this thread's
    // CPU is part of the process's.
    const Nanos wake_at = series ? std::min(next_tick, series->next_due()) : next_tick;
    const int wait_ms = static_cast<int>(std::clamp<int64_t>((static_cast<int64_t>(wake_at) - static_cast<int64_t>(t)) / 1'000'000, 1,
                                                             logs.empty() ? 50 : 20));
    if (!logs.empty()) merger.poll(logs);
    if (series) {
      series->tick(now_ns());
      series->collect(false);
    }
    if (hooks.wait_stop_signal && hooks.wait_stop_signal(wait_ms) && !interrupted) {
      interrupted = true;
      int expected = kRunning;  // a stop for errors came first and stays the reason
      ctl.stop.compare_exchange_strong(expected, kInterrupted);
    }
    const Nanos now = now_ns();
    if (!hooks.on_progress && now >= next_tick) next_tick = now + 1'000'000'000ull;  // no progress line: just sleep on
    if (hooks.on_progress && now >= next_tick) {
      uint64_t ios = 0, bytes = 0, inflight = 0, measured = 0;
      for (unsigned i = 0; i < T; ++i) {
        ios += pub[i].completed.load(std::memory_order_relaxed);
        bytes += pub[i].bytes.load(std::memory_order_relaxed);
        inflight += pub[i].inflight.load(std::memory_order_relaxed);
        measured += pub[i].measured.load(std::memory_order_relaxed);
      }
      Progress p;
      const double dt = static_cast<double>(now - last_t) / 1e9;  // the interval as measured
      p.elapsed_s = static_cast<double>(now - t0) / 1e9;
      p.ramping = now < ctl.measure_start;
      p.iops = static_cast<double>(ios - last_ios) / dt;
      p.bytes_per_s = static_cast<double>(bytes - last_bytes) / dt;
      p.inflight = inflight;
      if (job.runtime) p.eta_s = static_cast<double>(ctl.deadline - std::min(ctl.deadline, now)) / 1e9;
      if (job.ios && p.iops > 0) {
        const double left = static_cast<double>(*job.ios - std::min<uint64_t>(*job.ios, measured)) / p.iops;
        p.eta_s = p.eta_s < 0 ? left : std::min(p.eta_s, left);
      }
      hooks.on_progress(p);
      last_t = now;
      last_ios = ios;
      last_bytes = bytes;
      next_tick = now + 1'000'000'000ull;
    }
  }
  join_all();

  result.merge_threads();
  result.window_ns = result.total.window_ns;
  if (!logs.empty() && ctl.window_opened) result.inflight = merger.finish(logs, ctl.measure_start + result.window_ns);
  if (series) {
    series->collect(true);
    result.series = std::move(series->series);
  }
  if (ctl.window_opened && ctl.cpu_a.valid && ctl.cpu_b.valid) {
    result.cpu = cpu_delta(ctl.cpu_a, ctl.cpu_b);
    if (ctl.sample_system) {
      std::vector<int> tids;
      for (const auto& t : result.threads) tids.push_back(t.tid);
      result.accounting = account(ctl.sys_a, ctl.sys_b, tids, target_disks);
      result.accounting->exact_unavailable = busy_unavailable;
      if (tracker) result.accounting->exact_source = tracker->source();
      if (ctl.busy_a.size() == busy_names.size() && ctl.busy_b.size() == busy_names.size())
        for (auto& d : result.accounting->devices)
          for (size_t i = 0; i < busy_names.size(); ++i) {
            if (busy_names[i] != d.row.device) continue;
            const BusyCounters &x = ctl.busy_a[i], &y = ctl.busy_b[i];
            const double w = static_cast<double>(y.stamp_ns - x.stamp_ns);
            if (w <= 0) continue;
            d.busy_pct = 100.0 * static_cast<double>(y.busy_ns - x.busy_ns) / w;
            d.dev_pct = 100.0 * static_cast<double>(y.dev_busy_ns - x.dev_busy_ns) / w;
            d.lost = y.lost - x.lost;
            d.unsure_pct = 100.0 * static_cast<double>(y.unsure_ns - x.unsure_ns) / w;
          }
    }
  }
  result.first_error = ctl.first_error;
  if (job.verify) {
    result.verify.emplace();
    for (const auto& w : workers) {
      const VerifyResult& v = w->verify_result();
      result.verify->checked_during += v.checked_during;
      result.verify->mismatches += v.mismatches - v.findings.size();
      for (const auto& f : v.findings) result.verify->add(f);
    }
  }
  const int stop = ctl.stop.load();
  result.interrupted = stop == kInterrupted;
  if (job.verify) {
    auto stop_now = [&] { return hooks.wait_stop_signal && hooks.wait_stop_signal(0); };
    if (result.interrupted || stop_now()) {
      result.verify_skipped = true;
    } else {
      if (hooks.on_verify) hooks.on_verify(job.verify_delay.count());
      const Nanos until = now_ns() + static_cast<Nanos>(job.verify_delay.count());
      while (!result.verify_skipped && now_ns() < until)
        result.verify_skipped = hooks.wait_stop_signal && hooks.wait_stop_signal(50);
      if (!result.verify_skipped) verify_written(targets, tables, job.bs, job.seed, *result.verify, stop_now);
      result.verify_skipped |= stop_now();
    }
  }
  result.stop_reason = stop == kErrors ? "errors" : stop == kFatal ? "fatal" : result.interrupted ? "interrupted"
                       : (job.ios && result.total.ios >= *job.ios) ? "ios" : "runtime";
  return result;
}

}  // namespace ioacct
