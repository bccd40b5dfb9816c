#pragma once
// The fused path of the io_uring engine: one pass per I/O.
//
// queue() and enter() hand a batch of requests in and a batch of completions
// out. With the runner's own passes over its slots, that made four passes
// per I/O where a bare io_uring loop makes one, and at nop depth 128 it cost
// ~12 of ioacct's ~21 ns per I/O in user space (bench/history/2026-12.md,
// "Where nop's user-space time goes"). Here the runner reads each completion where
// the kernel put it and writes the same slot's next request into the SQ at
// once: what a hand-written loop does, behind the engine's own type.
//
// Inline and not virtual: it runs per I/O. Engine::fused() hands one out
// only where a read or write is one plain SQE (no SQ thread, no polling, no
// vectored or RWF_NOWAIT requests, no IOSQE_ASYNC, a sleeping wait); the
// runner uses it only for a run of reads or of writes.
#include <liburing.h>

#include <cstdint>

#include "engine/engine.hpp"
#include "engine/sqe.hpp"
#include "engine/uring_enter.hpp"

namespace ioacct {

class FusedRing {
 public:
  struct Config {
    io_uring* ring;
    EngineCounters* counters;
    const int* fds;          // the engine's, indexed by IoRequest::file
    bool nop;                // IORING_OP_NOP: completes with the request's length
    bool fixed_files;        // registered: `file` is the index
    bool fixed_bufs;         // registered: buffer `tag` is the tag's
    EnterMode enter;         // the engine's own
  };
  explicit FusedRing(const Config& c) noexcept : c_(c) {}

  // Whether the kernel took every request written so far: then the SQ has a
  // free entry for each request in flight, and refill() needs no check.
  bool all_submitted() const noexcept {
    const io_uring_sq& sq = c_.ring->sq;
    return sq.sqe_tail == io_uring_smp_load_acquire(sq.khead);
  }

  // Submits every request written and waits for at least one completion, or
  // `timeout_ns`. Returns the completions ready (0 after a timeout or a
  // signal), or -errno when the kernel refused the call itself.
  int submit_and_wait(uint64_t timeout_ns) noexcept {
    const unsigned to_submit = publish_sq(*c_.ring, c_.ring->sq.sqe_tail, c_.enter, *c_.counters);
    // Already there (the kernel completed some while we reaped): submit
    // without waiting, as the batch path does.
    const unsigned min_complete = io_uring_cq_ready(c_.ring) ? 0 : 1;
    const long ret =
        ring_enter(*c_.ring, c_.enter, *c_.counters, to_submit, min_complete, IORING_ENTER_GETEVENTS, timeout_ns);
    if (ret < 0 && ret != -EINTR && ret != -ETIME && ret != -EAGAIN && ret != -EBUSY) return static_cast<int>(ret);
    return static_cast<int>(io_uring_cq_ready(c_.ring));
  }

  // The SQ during one reap pass, its tail held in a register: refill()
  // writes a read or write of `len` bytes at `offset` of file `file` into
  // `buf` (inside buffer `tag` when buffers are registered), or with kNop an
  // IORING_OP_NOP, to be submitted by the next submit_and_wait().
  class Sq {
   public:
    template <bool kNop>
    void refill(bool read, uint32_t file, uint64_t offset, void* buf, uint32_t len, uint32_t tag) noexcept {
      io_uring_sqe* sqe = &sqes_[tail_++ & mask_];
      if constexpr (kNop)
        sqe_nop(sqe, len, tag);
      else
        sqe_rw(sqe, read, fixed_files_ ? static_cast<int>(file) : fds_[file], fixed_files_, fixed_bufs_, buf, len, offset,
               tag);
    }

   private:
    friend class FusedRing;
    io_uring_sqe* sqes_;
    const int* fds_;
    unsigned tail_, mask_;
    bool fixed_files_, fixed_bufs_;
  };

  // Hands each completion ready to f(tag, res, sq), oldest first (res as
  // Engine::enter's: bytes, or -errno), then frees their CQ entries; `f` may
  // refill its tag through `sq`. kNop must be the engine's own (Config::nop):
  // the runner's nop runs move no data, and only the nop engine's do not.
  //
  // `early`: in a pass with more than one completion, the request written
  // for the first is submitted at once, without waiting, and the rest with
  // the next submit_and_wait(). A device whose queue the last batch drained
  // starts again while the pass goes on: on vda at depth 32, 6% more IOPS
  // and no more CPU per I/O (bench/history/2026-12.md, "Kicking the device
  // early"). The runner asks for it only for a pass that holds half the
  // depth or more (Worker::kick_early).
  // `each`: every request is submitted as it is written, one enter per
  // I/O, as fio's defaults submit (runner/refill_chooser.hpp says when that
  // pays).
  template <bool kNop, class F>
  unsigned reap(F&& f, bool early = false, bool each = false) noexcept {
    io_uring_cq& cq = c_.ring->cq;
    io_uring_sq& ring_sq = c_.ring->sq;
    Sq sq;
    sq.sqes_ = ring_sq.sqes;
    sq.fds_ = c_.fds;
    sq.tail_ = ring_sq.sqe_tail;
    sq.mask_ = ring_sq.ring_mask;
    sq.fixed_files_ = c_.fixed_files;
    sq.fixed_bufs_ = c_.fixed_bufs;
    const unsigned head = *cq.khead;
    const unsigned n = io_uring_smp_load_acquire(cq.ktail) - head;
    const unsigned mask = cq.ring_mask;
    const io_uring_cqe* cqes = cq.cqes;
    const bool first_at_once = !each && early && n > 1;
    for (unsigned i = 0; i < n; ++i) {
      const io_uring_cqe& cqe = cqes[(head + i) & mask];
      const uint64_t ud = cqe.user_data;
      int32_t res = cqe.res;
      if constexpr (kNop) res = nop_result(ud, res);
      f(static_cast<uint32_t>(ud), res, sq);
      if (each || (first_at_once && i == 0)) {
        // Whatever the kernel does not take now, submit_and_wait() submits.
        if (const unsigned k = publish_sq(*c_.ring, sq.tail_, c_.enter, *c_.counters))
          ring_enter(*c_.ring, c_.enter, *c_.counters, k, 0, 0, 0);
      }
    }
    ring_sq.sqe_tail = sq.tail_;
    io_uring_smp_store_release(cq.khead, head + n);
    c_.counters->reaped += n;
    return n;
  }

  bool nop() const noexcept { return c_.nop; }

 private:
  Config c_;
};

}  // namespace ioacct
