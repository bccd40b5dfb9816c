#pragma once
// bench --anatomy: each I/O's latency split into stages at the kernel's
// tracepoints, by a BPF object of its own (bpf/anatomy.bpf.c), loaded only
// when asked for. The programs stamp each I/O's slot; the bench thread that
// reaps the I/O reads the slot from mapped memory (no syscall) and splits it
// (anatomy_split.hpp). docs/design.md ("Anatomy of an I/O").
#include <sys/syscall.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "acct/clock.hpp"
#include "acct/histogram.hpp"
#include "trace/anatomy_split.hpp"

struct ioacct_anat_slot;
struct ioacct_anat_thread;

namespace ioacct {

struct AnatomyOptions {
  int tgid = 0;           // the bench process
  unsigned threads = 1;   // bench threads (indices 0..threads-1)
  unsigned stride = 1;    // slots per thread: the largest depth of a thread (tags are below it)
  AnatomyFlavor flavor = AnatomyFlavor::Uring;
  AnatomyBlockLink block_link = AnatomyBlockLink::None;
  // AnatomyFlavor::Syscall: the syscall numbers that move a read's and a
  // write's data (pread64 and pwrite64 for psync; the runner names its
  // engine's: read is 0 on x86-64, so no value stands for "unset").
  uint32_t sys_read = SYS_pread64, sys_write = SYS_pwrite64;
};

// What one thread (or, merged, the run) measured. Plain data.
struct AnatomyResult {
  AnatomyFlavor flavor = AnatomyFlavor::Uring;
  AnatomyBlockLink block_link = AnatomyBlockLink::None;
  std::optional<std::string> unavailable;  // why there is no anatomy (then nothing below is measured)
  uint64_t ios = 0;                        // I/Os looked at (measured, completed whole)
  uint64_t linked = 0;                     // of them, split into stages
  std::array<uint64_t, static_cast<int>(AnatomyUnlinked::Count)> unlinked{};  // by reason
  std::vector<Histogram> stages = std::vector<Histogram>(kAnatomyStages);      // ns, linked I/Os
  Histogram e2e;                           // end to end, linked I/Os
  Histogram wakeup;                        // sched_wakeup -> on CPU, inside the completion
  Histogram req_queue, req_device;         // per block request (whether linked or not)
  uint64_t with_request = 0;               // linked I/Os that started a block request
  uint64_t block_linked = 0;               // linked I/Os whose block stages are linked
  uint64_t end_unseen = 0;                 // linked I/Os whose request's completion no program saw
  uint64_t residual_max = 0;               // largest |end to end - sum of stages|, ns
  uint64_t residual_over_1us = 0;          // linked I/Os whose stages miss end to end by more than 1 us
  uint64_t foreign_requests = 0;           // block requests of the bench started outside its submissions (io-wq)
  std::optional<std::string> cpuidle;      // the idle-state figure's absence, said in words
  // The programs' own run time over the whole attach (every run, for every
  // task on the machine: the filtering is part of the price), when the
  // kernel's BPF statistics were on: the tracer turns them on for its attach
  // where it may (CAP_SYS_ADMIN), or sysctl kernel.bpf_stats_enabled=1 had.
  std::optional<uint64_t> bpf_run_ns;
  uint64_t bpf_runs = 0;
  // The reaping thread's own share, in two parts: the copy of an I/O's
  // stamps, timed on one I/O in kReapSample (two clock reads each,
  // included), and the split and recording of the copies, timed per batch.
  static constexpr uint64_t kReapSample = 1024;
  uint64_t reap_timed = 0, reap_timed_ns = 0;
  uint64_t flushed = 0, flush_ns = 0;
  // Both parts per I/O; nullopt when no I/O was timed.
  std::optional<double> reap_ns_per_io() const {
    if (!reap_timed) return std::nullopt;
    return static_cast<double>(reap_timed_ns) / static_cast<double>(reap_timed) +
           (flushed ? static_cast<double>(flush_ns) / static_cast<double>(flushed) : 0.0);
  }

  // The run's IOPS with the programs attached over its IOPS without, from
  // the same run: the programs come off and back on in slices of the
  // window (runner/anatomy_slices.hpp), and each on slice is set against
  // the off slice after it. nullopt, with the reason, where no slices ran.
  struct IopsRatio {
    double median = 0, min = 0, max = 0;  // over the pairs
    unsigned pairs = 0;
    double slice_s = 0;
    double on_share = 0;  // of the window's I/Os, those of the on slices
  };
  std::optional<IopsRatio> iops_ratio;
  // Why not, when not (report/ words it).
  enum class Unmeasured : uint8_t {
    NoSlices,      // none ran
    Compare,       // compare keeps the programs on in every run
    FewPairs,      // the window held fewer than 2 pairs of slices
    CountedByIos,  // an --ios run keeps the programs on throughout
  };
  Unmeasured iops_ratio_unmeasured = Unmeasured::NoSlices;
  double unmeasured_slice_s = 0;  // FewPairs: the slices' length

  void merge(const AnatomyResult& o);
};

// One bench thread's recorder. Not thread-safe: its thread only.
class AnatomyThread {
 public:
  // Hot path, once per measured I/O completed whole: copies the I/O's slot
  // and the thread's wake-up stamps; every kPending copies are split and
  // their stages recorded in one go. At depth 1 the thread has slept since
  // its last I/O and a dozen histograms' lines are cold: recorded one I/O at
  // a time they cost ~100 ns more per I/O than in a batch
  // (bench/history/2026-12.md, "Again, and the split per batch").
  // `retried`: the I/O was resubmitted (its stamps are its last try's).
  void reap(uint32_t tag, uint64_t user_submit, uint64_t user_reap, bool retried) noexcept {
    if (r_.ios % AnatomyResult::kReapSample != AnatomyResult::kReapSample - 1) {
      copy(tag, user_submit, user_reap, retried);
    } else {
      const uint64_t t0 = now_ns();
      copy(tag, user_submit, user_reap, retried);
      r_.reap_timed_ns += now_ns() - t0;
      ++r_.reap_timed;
    }
    if (npending_ == kPending) flush();
  }
  // Splits and records the copies not yet recorded. The thread calls it
  // once more after its last I/O.
  void flush() noexcept;
  const AnatomyResult& result() const { return r_; }

 private:
  static constexpr unsigned kPending = 64;
  void copy(uint32_t tag, uint64_t user_submit, uint64_t user_reap, bool retried) noexcept;
  friend class AnatomyTracer;
  const volatile ioacct_anat_slot* slots_ = nullptr;  // this thread's, `stride_` of them
  const volatile ioacct_anat_thread* rec_ = nullptr;
  uint32_t stride_ = 1;
  std::array<AnatomyStamps, kPending> pending_{};  // copied, not yet split
  unsigned npending_ = 0;
  AnatomyResult r_;
};

class AnatomyTracer {
 public:
  // Loads and attaches the programs. Throws NotAvailable with one line a
  // person can act on (no permission, no BTF, a tracepoint missing).
  static std::unique_ptr<AnatomyTracer> attach(const AnatomyOptions& options);
  ~AnatomyTracer();  // detaches; the kernel is left as it was
  AnatomyTracer(const AnatomyTracer&) = delete;
  AnatomyTracer& operator=(const AnatomyTracer&) = delete;

  // Follows thread `index` (its kernel tid). Before the thread's first I/O.
  void add_thread(unsigned index, int tid);
  AnatomyThread& thread(unsigned index) { return threads_[index]; }
  // Every thread's figures merged; call once the threads are done.
  AnatomyResult result() const;

  // The programs come off and back on (runner/anatomy_slices.hpp), so a
  // run can set its IOPS with them against its IOPS without. While they are
  // off attached_since() is 0; once on again, the CLOCK_MONOTONIC time they
  // were: an I/O submitted before it was seen by no program at its start,
  // and the workers leave it out. detach() publishes 0 before the programs
  // come off, reattach() the time after they are on.
  uint64_t attached_since() const noexcept { return since_.load(std::memory_order_acquire); }
  void detach();
  bool reattach();  // false when the kernel refused (the programs stay off)

  struct Impl;

 private:
  AnatomyTracer(std::unique_ptr<Impl> impl, const AnatomyOptions& o);
  std::unique_ptr<Impl> impl_;
  AnatomyOptions opt_;
  std::vector<AnatomyThread> threads_;
  std::atomic<uint64_t> since_{0};
};

struct AnatomyAttach {
  std::unique_ptr<AnatomyTracer> tracer;   // null when it could not be attached
  std::optional<std::string> unavailable;  // then why: NotAvailable's message
};
// AnatomyTracer::attach, then add_thread(i, tids[i]) for every thread, with
// NotAvailable turned into `unavailable`.
AnatomyAttach attach_anatomy(const AnatomyOptions& options, const std::vector<int>& tids);

}  // namespace ioacct
