// The fused path of the hot loop: the steady state of a run of only reads
// or only writes (of one size, or of --bssplit's), refilled as reaped. Each completion is read where the
// kernel put it (FusedRing::reap), counted, and its slot re-armed with the
// next request, whose SQE is written at once: one pass per I/O where the
// batch path (worker.cpp) makes four (completions into an array, the reap
// into the slots and the free list, the refill into the request array, the
// SQEs). Everything else, and the edges of every run (the first batch, the
// window's end, a stop, the quota's last I/Os), take the batch path.
#include <cerrno>

#include "runner/worker.hpp"

namespace ioacct {

// Whether the next batches may take the fused path: the run has one (set
// up), no anatomy follows each I/O's stages (none asked for, or its
// programs are off for a slice), the window is open, every slot is in
// flight and the quota is more than two depths away (a batch reaps at most
// one depth and refills it).
bool Worker::fused_may_run(unsigned inflight, bool stopping) const noexcept {
  return fused_ && !stopping && counting_ && inflight == plan_.depth && !anatomy_on() && quota_far();
}

bool Worker::anatomy_on() const noexcept { return ctl_.anatomy && ctl_.anatomy->attached_since(); }

bool Worker::quota_far() const noexcept {
  return plan_.quota == UINT64_MAX || out_.ios + 2ull * plan_.depth <= plan_.quota;
}

void Worker::run_fused(Nanos& now, uint64_t& completed, uint64_t& bytes_all) noexcept {
  FusedRing& ring = *fused_;
  if (choose_ && !chooser_.started()) chooser_.start(now, out_.ios);
  const bool one_file = gens_.size() == 1;
  // One loop per accounting level and per whether offsets are drawn and
  // from how many files, as the batch path's prepare and reap.
#define IOACCT_FUSED(T, S)                                                                          \
  (moves_data_ ? (one_file ? fused_loop<T, S, true, true>(ring, now, completed, bytes_all)         \
                           : fused_loop<T, S, true, false>(ring, now, completed, bytes_all))       \
               : (one_file ? fused_loop<T, S, false, true>(ring, now, completed, bytes_all)        \
                           : fused_loop<T, S, false, false>(ring, now, completed, bytes_all)))
  if (!acct_latency_) IOACCT_FUSED(false, false);
  else if (split_lat_) IOACCT_FUSED(true, true);
  else IOACCT_FUSED(true, false);
#undef IOACCT_FUSED
}

// A completion that is not its request's whole transfer. A short transfer
// and EAGAIN resubmit the rest from the same slot (true: the slot stays
// as it is; take_retry, as the batch path); anything else is an error,
// counted (false: the slot takes the next request, as the batch path
// refills a freed one).
bool Worker::fused_retry(Slot& s, uint32_t tag, int32_t res, FusedRing::Sq& sq) {
  if (!take_retry(s, res)) {
    record_error(s, res == 0 ? kErrEof : -res);
    return false;
  }
  // Only an engine that moves data (not nop) comes back short or EAGAIN.
  sq.refill<false>(s.op == IoOp::Read, s.file, s.offset, s.buf + (s.len - s.left), s.left, tag);
  return true;
}

template <bool kTimed, bool kSplit, bool kMoves, bool kOneFile>
void Worker::fused_loop(FusedRing& ring, Nanos& now, uint64_t& completed, uint64_t& bytes_all) noexcept {
  const uint32_t bs = static_cast<uint32_t>(job_.bs);
  const bool sized = !split_size_.empty();  // --bssplit: each request's size is drawn
  const bool read = *fixed_op_ == IoOp::Read;
  const uint32_t* files = plan_.files.data();
  OffsetGen* gens = gens_.data();
  Slot* const slots = slots_.data();
  for (;;) {
    const int ready = ring.submit_and_wait(wait_bound_);
    const Nanos t = now_ns();  // a local: the pass reads it per I/O, and `now` could alias what it writes
    now = t;
    // The batch path takes over where it has more to do than count and
    // refill: a failed call, requests the kernel did not take, the window's
    // end, a stop, the quota's last I/Os.
    if (ready < 0 || !ring.all_submitted() || t >= deadline_) return;
    if (ctl_.stop.load(std::memory_order_relaxed) != kRunning) return;
    if (!quota_far() || anatomy_on()) return;
    if (ready == 0) continue;
    const bool each = choose_ ? chooser_.next(t, out_.ios) == Refill::Each : refill_ == Refill::Each;

    // Every completion of the batch is stamped `t`, and the request that
    // refills its slot is stamped `t` too: its latency runs from the
    // start of the pass that writes its SQE, as the batch path's runs from
    // the start of its prepare pass.
    uint64_t ios = 0, bytes = 0;
    Tally tl = tally();
    Runs lat_run, clat_run;
    ring.reap<!kMoves>([&](uint32_t tag, int32_t res, FusedRing::Sq& sq) {
      Slot& s = slots[tag];
      if (res == static_cast<int32_t>(s.left)) [[likely]] {
        ++ios;
        if constexpr (kMoves) bytes += s.len;
        if constexpr (kTimed) tl.add_lat(lat_run, t - s.t_submit);
        // Only the first batch after the batch path can carry t_issued:
        // every enter here waits, so its submissions have no end of their
        // own (unsplit, as the batch path's waiting enters).
        if constexpr (kSplit)
          if (s.t_issued) [[unlikely]] tl.add_clat(clat_run, t - s.t_issued);
      } else if (fused_retry(s, tag, res, sq)) [[unlikely]] {
        return;
      }
      // The slot's next request. Only what differs from the last one is
      // stored: nop has no offset, one file is always that file, and a
      // retried request's count is reset only where there was one.
      const size_t k = kOneFile ? 0 : pick_file();
      uint64_t off = kMoves ? gens[k].next() : 0;  // nop looks at no offset
      uint32_t len = bs;
      if constexpr (kMoves)
        if (sized) [[unlikely]] s.len = len = place_split(k, off);
      const uint32_t file = files[k];
      if constexpr (kMoves) s.start = s.offset = off;
      s.left = len;
      if (s.eagains) [[unlikely]] s.eagains = 0;
      if constexpr (!kOneFile) s.file = file;
      s.t_submit = t;
      if constexpr (kSplit) s.t_issued = 0;
      sq.refill<!kMoves>(read, file, off, s.buf, len, tag);
    }, kick_early(static_cast<uint32_t>(ready)), each);
    tl.finish(out_, lat_run, clat_run, read ? Moved{ios, 0, bytes, 0} : Moved{0, ios, 0, bytes});
    completed += ios;
    bytes_all += bytes;

    // Once per batch, as the batch path (every slot stays in flight: the
    // in-flight log has no event, only the watermark).
    if (log_) log_->watermark(t);
    publish(completed, bytes_all);
  }
}

}  // namespace ioacct
