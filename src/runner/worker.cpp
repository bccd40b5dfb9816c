#include "runner/worker.hpp"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fmt/format.h>
#include <optional>

#include "common/errors.hpp"
#include "runner/kick.hpp"
#include "workload/pace.hpp"

namespace ioacct {

// The file of the next request: at random, or in turn.
size_t Worker::pick_file() noexcept {
  const size_t nfiles = gens_.size();
  return nfiles == 1 ? 0 : (rw_random(job_.rw) ? mix_.below(nfiles) : rr_++ % nfiles);
}

// What the engine is handed for slot `s` (tag `tag`): the rest of a read or
// write, a whole trim, or a sync.
IoRequest Worker::request(const Slot& s, uint32_t tag, bool may_block) const noexcept {
  if (io_moves_data(s.op)) [[likely]]
    return {s.offset, s.buf + (s.len - s.left), s.left, s.file, tag, s.op, may_block};
  return {s.offset, s.buf, s.len, s.file, tag, s.op, may_block};
}

// Prepares up to `n` new requests stamped `t`; returns how many (fewer only
// with --verify, when the blocks picked are busy).
unsigned Worker::prepare(unsigned n, Nanos t) noexcept {
  if (tables_) return prepare_verified(n, t);
  if (mixed_) [[unlikely]] return prepare_mixed(n, t);
  // Only reads or only writes: what every benchmark runs. Whether offsets
  // are drawn (nop draws none) and from how many files are fixed for the
  // run, so each combination gets a loop of its own.
  const bool one_file = gens_.size() == 1;
  if (moves_data_) return one_file ? prepare_fixed<true, true>(n, t) : prepare_fixed<true, false>(n, t);
  return one_file ? prepare_fixed<false, true>(n, t) : prepare_fixed<false, false>(n, t);
}

template <bool kMoves, bool kOneFile>
unsigned Worker::prepare_fixed(unsigned n, Nanos t) noexcept {
  // The members read per request are taken into locals first: the stores
  // into the slots could alias them, and each would be reloaded per request
  // otherwise.
  const uint32_t bs = static_cast<uint32_t>(job_.bs);
  const IoOp op = *fixed_op_;
  const uint32_t* free = free_.data();
  const uint32_t* files = plan_.files.data();
  OffsetGen* gens = gens_.data();
  Slot* slots = slots_.data();
  IoRequest* reqs = reqs_.data();
  unsigned nfree = nfree_, nreq = nreq_;
  for (unsigned i = 0; i < n; ++i) {
    const uint32_t idx = free[--nfree];
    Slot& s = slots[idx];
    const size_t k = kOneFile ? 0 : pick_file();
    const uint64_t off = kMoves ? gens[k].next() : 0;  // nop looks at no offset
    const uint32_t file = files[k];
    s.start = s.offset = off;
    s.left = s.len = bs;
    s.eagains = 0;
    s.file = file;
    s.op = op;
    s.t_submit = t;
    s.t_issued = 0;  // until an enter that does not wait submits it
    reqs[nreq++] = {off, s.buf, bs, file, idx, op};
  }
  nfree_ = nfree;
  nreq_ = nreq;
  return n;
}

// --bssplit: the size of the request at `off` in file k, drawn by weight,
// and where it goes (place_sized).
uint32_t Worker::place_split(size_t k, uint64_t& off) noexcept {
  const uint64_t r = mix_.below(split_cum_.back());
  const auto i = static_cast<size_t>(std::upper_bound(split_cum_.begin(), split_cum_.end(), r) - split_cum_.begin());
  return place_sized(gens_[k], maps_.empty() ? nullptr : &maps_[k], targets_.list[plan_.files[k]], split_unit_, off,
                     split_size_[i]);
}

// A request of `len` bytes (mixed sizes) drawn at `off` by `g` on a grid of
// `unit` bytes. Random: fio's random map moves `off` to an unvisited block
// and cuts the I/O short at a visited one or the range's end. Sequential:
// an I/O longer than one block of the grid moves the next past it, as
// fio's next I/O starts where the last one ended. Returns its length.
uint32_t Worker::place_sized(OffsetGen& g, RandomMap* map, const Target& t, uint64_t unit, uint64_t& off,
                             uint32_t len) noexcept {
  if (!map) {
    if (off + len > t.base + t.range) {  // wraps to the first block, as a pass does
      g.rewind();
      off = g.next();
    }
    g.skip((len + unit - 1) / unit - 1);
    return len;
  }
  const auto [b, n] = map->take((off - t.base) / unit, (len + unit - 1) / unit);
  off = t.base + b * unit;
  return static_cast<uint32_t>(std::min<uint64_t>(len, n * unit));
}

// Sizes per direction (--bs R,W[,T], --bssplit R,W[,T]): direction d's
// request in file k, its size drawn from the direction's own list, on the
// direction's own grid (its smallest size) and stream, as fio aligns each
// direction to its own block size and keeps each one's last position; and
// for random I/O the direction's own map, so a size given alone is always
// whole. Returns the length; `off` is set.
uint32_t Worker::place_dir(int d, size_t k, uint64_t& off) noexcept {
  const DirSizes& ds = dir_[d];
  uint32_t len = ds.size[0];
  if (ds.size.size() > 1) {
    const uint64_t r = mix_.below(ds.cum.back());
    len = ds.size[static_cast<size_t>(std::upper_bound(ds.cum.begin(), ds.cum.end(), r) - ds.cum.begin())];
  }
  OffsetGen& g = dir_gens_[d][k];
  off = g.next();
  return place_sized(g, dir_maps_[d].empty() ? nullptr : &dir_maps_[d][k], targets_.list[plan_.files[k]], ds.unit,
                     off, len);
}

// Mixed ops, trims, syncs after every N writes, and mixed sizes.
unsigned Worker::prepare_mixed(unsigned n, Nanos t) noexcept {
  const uint32_t bs = static_cast<uint32_t>(job_.bs);
  for (unsigned i = 0; i < n; ++i) {
    IoOp op = sync_op_;
    if (!sync_due_ && !take_op(op, t)) return i;  // paced by direction: none is due
    const uint32_t idx = free_[--nfree_];
    Slot& s = slots_[idx];
    s.eagains = 0;
    s.t_submit = t;
    s.t_issued = 0;
    if (sync_due_) [[unlikely]] {
      // --fsync/--fdatasync: the file last written, after every N writes.
      sync_due_ = false;
      s.op = sync_op_;
      s.file = last_write_file_;
      s.start = s.offset = 0;
      s.left = s.len = 0;
    } else {
      const size_t k = pick_file();
      uint64_t off = moves_data_ ? gens_[k].next() : 0;
      uint32_t len = bs;
      if (moves_data_ && !split_size_.empty()) {
        len = place_split(k, off);
      } else if (moves_data_ && by_dir_) {  // sizes per direction: its own sizes, stream and map
        len = place_dir(op == IoOp::Trim ? 2 : op == IoOp::Write, k, off);
      }
      s.start = s.offset = off;
      s.file = plan_.files[k];
      s.op = op;
      s.len = len;
      s.left = s.op == IoOp::Trim ? 0 : len;  // a trim completes with 0 when done
      if (sync_every_ && s.op == IoOp::Write) count_write(s.file);
    }
    reqs_[nreq_++] = request(s, idx);
  }
  return n;
}

IoOp Worker::op_for_next() noexcept {
  switch (job_.rw) {
    case RwMode::RandRead:
    case RwMode::Read: return IoOp::Read;
    case RwMode::RandWrite:
    case RwMode::Write: return IoOp::Write;
    case RwMode::Trim:
    case RwMode::RandTrim: return IoOp::Trim;
    case RwMode::RandRw:
    case RwMode::ReadWrite: {
      const uint64_t r = mix_.below(100);
      return r < job_.rwmix_read ? IoOp::Read : r < job_.rwmix_read + job_.rwmix_trim ? IoOp::Trim : IoOp::Write;
    }
  }
  return IoOp::Read;
}

// The next request's op: the job's one, or the mix's draw; paced by
// direction, the one DirPace lets go now (false: none is due, and the draw
// is held for the next refill, as fio sleeps on it).
bool Worker::take_op(IoOp& op, Nanos t) noexcept {
  if (fixed_op_) {
    op = *fixed_op_;
    return true;
  }
  if (!dir_pace_) {
    op = op_for_next();
    return true;
  }
  constexpr IoOp kOps[] = {IoOp::Read, IoOp::Write, IoOp::Trim};
  const int wanted = held_dir_ >= 0 ? held_dir_ : static_cast<int>(std::find(kOps, kOps + 3, op_for_next()) - kOps);
  const int d = dir_pace_->take(wanted, t);
  held_dir_ = d < 0 ? wanted : -1;
  if (d >= 0) op = kOps[d];
  return d >= 0;
}

// A completed trim or sync inside the window: trims are I/Os (in IOPS, with
// their own latency), syncs are counted apart.
void Worker::count_other(const Slot& s, Nanos now) noexcept {
  const uint64_t l = now - s.t_submit;
  if (s.op == IoOp::Trim) {
    ++out_.ios;
    ++out_.trims;
    out_.bytes_trimmed += s.len;
    if (out_.trim_latency) out_.trim_latency->record(l);
    if (dump_) out_.intervals.emplace_back(s.t_submit, now);
  } else {
    ++out_.syncs;
    if (out_.sync_latency) out_.sync_latency->record(l);
  }
}

// The batch loop's state between its steps. The steps are inlined into
// loop(), so it compiles to the one function it was (bench/sol.sh prices it).
struct Worker::LoopState {
  LoopState(unsigned depth_, unsigned sb_, unsigned cb_, uint64_t quota_, AnatomyThread* anat_, Nanos now_)
      : depth(depth_), sb(sb_), cb(cb_), quota(quota_), anat(anat_), now(now_) {}
  const unsigned depth, sb, cb;  // the depth, submit and complete batches
  const uint64_t quota;          // this thread's share of --ios
  AnatomyThread* const anat;
  Nanos now;
  // Paced by a schedule (workload/pace.hpp): only I/Os due before the
  // window's end are issued, and a backlog is dropped, never burst. Paced
  // by direction, the worker's dir_pace_ holds the schedules instead.
  std::optional<PaceSchedule> pace;
  bool paced = false;  // either way
  unsigned inflight = 0;         // prepared or submitted, not yet finished
  unsigned inflight_logged = 0;  // last count sent to the in-flight log
  uint64_t completed = 0, bytes_all = 0;
  bool stopping = false;
  // This batch's.
  bool starved = false;  // --verify: the blocks picked were all in flight
  Nanos t_prep = 0;      // the submission stamp of this batch
  unsigned fresh = 0;    // new requests in it
};

// When the pace lets the next request go: 0 when it does now (or the run is
// unpaced), UINT64_MAX when it has none left before the window's end. Paced
// by direction, only a held draw waits (a refill that stopped for the depth
// or the quota holds none).
[[gnu::always_inline]] inline Nanos Worker::pace_due(const LoopState& s) const noexcept {
  if (s.pace) return s.pace->next_due();
  return dir_pace_ && held_dir_ >= 0 ? dir_pace_->next_due(held_dir_) : 0;
}

// 1. New requests: fill the free depth, a submit batch at a time.
[[gnu::always_inline]] inline void Worker::refill(LoopState& s) noexcept {
  unsigned n = std::min(s.depth - s.inflight, s.sb);
  if (search_) [[unlikely]]  // --latency-target: the depth being tried
    n = std::min(n, search_cap_ > s.inflight ? search_cap_ - s.inflight : 0u);
  if (counting_ && s.quota != UINT64_MAX)
    n = static_cast<unsigned>(std::min<uint64_t>(n, s.quota > out_.ios + s.inflight ? s.quota - out_.ios - s.inflight : 0));
  if (n && s.pace) {
    const Nanos t = now_ns();
    const unsigned due = s.pace->take(n, t);
    n = due ? prepare(due, t) : 0;
    s.starved = n < due;
    s.t_prep = t;
  } else if (n && dir_pace_) {
    s.t_prep = now_ns();
    n = prepare(n, s.t_prep);  // as many as the paces let go (held_dir_)
  } else if (n) {
    const unsigned asked = n;
    s.t_prep = now_ns();
    n = prepare(n, s.t_prep);
    s.starved = n < asked;
  }
  s.inflight += n;
  s.fresh = n;
  // Published after the refill: after the reap it would read 0 whenever
  // a whole batch had just completed.
  pub_.inflight.store(s.inflight, std::memory_order_relaxed);
  if (n && log_) {
    log_->push(s.t_prep, s.inflight);
    s.inflight_logged = s.inflight;
  }
}

// Nothing in flight on a pace: idle until the next slot or, once the
// schedule is over, the window's end: the window is the runtime asked for,
// never stretched to a slot past it.
[[gnu::always_inline]] inline void Worker::idle_paced(LoopState& s) noexcept {
  const Nanos due = pace_due(s);
  sleep_until_ns(std::min(due == UINT64_MAX ? deadline_ : due, now_ns() + kMaxWaitNs));
  s.now = now_ns();
  if (s.now >= deadline_) {
    if (!counting_ && !window_closed_) open_window();  // a window no completion fell in
    close_window(s.now);
    s.stopping = true;
  }
  if (check_stop(s.now)) s.stopping = true;
}

// 2. Wait: only when no more can be issued now (depth full, quota or pace
// reached, or stopping); then for a complete batch. `q` of the batch's
// requests went to the ring. Returns the enter's result.
[[gnu::always_inline]] inline int Worker::enter_batch(LoopState& s, unsigned q) noexcept {
  const bool quota_full = counting_ && s.quota != UINT64_MAX && out_.ios + s.inflight >= s.quota;
  const bool can_issue = !s.stopping && !s.starved && s.inflight < s.depth && !quota_full &&
                         !(s.paced && pace_due(s) > now_ns()) && !(search_ && s.inflight >= search_cap_);
  unsigned wait_nr = can_issue ? 0 : std::min(s.cb, s.inflight);
  // --split-submit: an enter that submits does not also wait, so that
  // every submission ends on its own (one more syscall per batch).
  if (q && job_.split_submit) wait_nr = 0;
  // The pace bounds the wait only when the pace is what holds the next
  // request back. With the depth full (an I/O slower than the interval,
  // such as a durable write) only a completion can free a slot: bounding
  // that wait by an instant already past made every enter return at once,
  // a spin of ~30 reaps per I/O that was counted in the CPU per I/O.
  Nanos timeout = wait_bound_;
  if (s.paced && !s.stopping && !s.starved && !quota_full && s.inflight < s.depth) {
    const Nanos t = now_ns(), due = pace_due(s);
    timeout = due > t ? std::min(due - t, kMaxWaitNs) : 1000;
  }
  const int got = engine_->enter(wait_nr, {comps_.data(), reap_room_}, timeout);
  s.now = now_ns();
  if (got < 0) return got;
  if (split_lat_ && q && wait_nr == 0) {
    // slat ends when the enter that submitted the batch returns, unless
    // that enter also waited for completions: then the submission has no
    // end of its own, t_issued stays 0 and its I/Os count as unsplit.
    for (unsigned i = 0; i < q; ++i) slots_[reqs_[i].tag].t_issued = s.now;
    if (s.fresh && q == nreq_ && counting_) {
      out_.slat->record_n(s.now - s.t_prep, s.fresh);
      if (islat_[0]) [[unlikely]] islat_[epoch_ & 1]->record_n(s.now - s.t_prep, s.fresh);
      // The batch's new requests are the last `fresh` of the q (retries
      // were queued before the refill).
      if (dir_lat_) [[unlikely]] record_dir_slat(s.now - s.t_prep, q - s.fresh, q);
    }
  }
  if (q) {
    if (q < nreq_) std::memmove(reqs_.data(), reqs_.data() + q, (nreq_ - q) * sizeof(IoRequest));
    nreq_ -= q;
  }
  return got;
}

// 3. Completions, all stamped `now`: the reaping time.
[[gnu::always_inline]] inline void Worker::reap_batch(LoopState& s, int got) noexcept {
  if (!counting_ && !window_closed_ && s.now >= measure_start_) open_window();
  const Reaped r = reap_any(got, s.now, s.quota, s.anat);
  s.inflight -= r.freed;
  s.completed += r.completed;
  s.bytes_all += r.bytes;
  if (log_) {
    if (s.inflight != s.inflight_logged) log_->push(s.now, s.inflight);
    log_->watermark(s.now);
    s.inflight_logged = s.inflight;
  }
  publish(s.completed, s.bytes_all);
}

void Worker::loop() noexcept {
  const unsigned depth = plan_.depth;
  LoopState s(depth, std::min(job_.submit_batch_eff(), depth), std::min(job_.complete_batch_eff(), depth), plan_.quota,
              ctl_.anatomy ? &ctl_.anatomy->thread(plan_.index) : nullptr, now_ns());
  const double rate = job_.rate_per_thread();
  // A Poisson pace draws its gaps from the thread's own seed, so a run
  // repeats with its --seed as its offsets do.
  if (rate > 0) s.pace.emplace(rate, s.now, deadline_, job_.rate_process, seed_ ^ 0x5eedull);
  if (job_.paced_by_direction()) {
    const unsigned writes = 100 - job_.rwmix_read - job_.rwmix_trim;
    dir_pace_.emplace(job_.rate_by_direction(),
                      std::array<bool, 3>{job_.rwmix_read > 0, writes > 0, job_.rwmix_trim > 0}, s.now, deadline_,
                      job_.rate_process, seed_ ^ 0x5eedull);
  }
  s.paced = s.pace || dir_pace_;
  if (job_.latency_target.count()) {
    search_.emplace(depth, job_.latency_percentile, job_.latency_run);
    search_cap_ = out_.latency_depth = search_->depth();
    cycle_start_ = s.now;
  }
  if (s.now >= measure_start_) open_window();  // no ramp: the first I/O counts
  if (s.quota == 0) {  // this thread's share of --ios is nothing
    close_window(s.now);
    return;
  }

  for (;;) {
    s.starved = false;
    s.t_prep = 0;
    s.fresh = 0;
    if (!s.stopping) refill(s);
    // The requests this enter submits stay at the front of reqs_ until it
    // has returned, so that their submission can be stamped (slat).
    const unsigned q = nreq_ ? engine_->queue({reqs_.data(), nreq_}) : 0;
    if (q == nreq_ && s.fresh && fused_may_run(s.inflight, s.stopping)) {
      // The steady state, one pass per I/O. It hands back with every slot
      // in flight and the last completions unreaped, which the next
      // iteration's enter collects without a syscall; only a refill of the
      // batch path (`fresh`) enters it again, so whatever made it hand back
      // (an error, the window's end) is seen there first.
      nreq_ = 0;
      run_fused(s.now, s.completed, s.bytes_all);
      continue;
    }
    if (s.inflight == 0) {
      if (s.stopping || (counting_ && out_.ios >= s.quota)) break;
      if (s.paced) {
        idle_paced(s);
        continue;
      }
    }
    const int got = enter_batch(s, q);
    if (got < 0) {
      fatal(fmt::format("io_uring_enter failed: {}", errno_text(got)));
      break;
    }
    if (search_) [[unlikely]] count_over_target(got, s.now);
    reap_batch(s, got);
    if (floor_ && floor_->due(s.now) && floor_missed(s.now)) [[unlikely]] {  // --rate-min: this thread ends
      close_window(s.now, s.inflight == 0);
      s.stopping = true;
    }
    if (search_ && search_step(s.now, s.inflight)) [[unlikely]] {
      close_window(s.now, s.inflight == 0);
      s.stopping = true;
    }
    // 4. The window closes at the deadline, at the quota, or on a stop.
    if (counting_ && (s.now >= deadline_ || out_.ios >= s.quota)) {
      close_window(s.now, s.inflight == 0);
      s.stopping = true;
    }
    if (!s.stopping && check_stop(s.now)) s.stopping = true;
    if (s.stopping && s.inflight == 0) break;
  }
  // Every counted read and write has a lat; those with a t_issued a clat too,
  // or were complete when the enter that submitted them returned.
  if (split_lat_) out_.slat_unsplit = out_.latency->count() - out_.clat->count() - out_.clat_at_submit;
  if (s.anat) s.anat->flush();  // the stages of the last I/Os
}

void Worker::publish(uint64_t completed, uint64_t bytes_all) noexcept {
  if (ihist_[0]) {
    const uint32_t e = ctl_.epoch.load(std::memory_order_relaxed);
    if (e != epoch_) {  // an interval ended: fill the other histogram from now on
      epoch_ = e;
      pub_.epoch_ack.store(e, std::memory_order_release);
    }
  }
  pub_.completed.store(completed, std::memory_order_relaxed);
  pub_.bytes.store(bytes_all, std::memory_order_relaxed);
  pub_.measured.store(out_.ios, std::memory_order_relaxed);
}

// A mixed job's slat by direction: reqs_[from, to) are the new requests of
// a batch whose submission took `slat` (each direction's share of the one
// record_n the batch gave the job's slat).
void Worker::record_dir_slat(uint64_t slat, unsigned from, unsigned to) noexcept {
  uint64_t reads = 0, writes = 0;
  for (unsigned i = from; i < to; ++i) {
    reads += reqs_[i].op == IoOp::Read;
    writes += reqs_[i].op == IoOp::Write;
  }
  if (reads) out_.read_lat.slat->record_n(slat, reads);
  if (writes) out_.write_lat.slat->record_n(slat, writes);
}

// reap's variant for this run: whether latency is recorded, split, and kept
// by direction is fixed at set-up.
Worker::Reaped Worker::reap_any(int got, Nanos now, uint64_t quota, AnatomyThread* anat) noexcept {
  if (!acct_latency_) return reap<false, false, false>(got, now, quota, anat);
  if (dir_lat_) [[unlikely]]
    return split_lat_ ? reap<true, true, true>(got, now, quota, anat) : reap<true, false, true>(got, now, quota, anat);
  return split_lat_ ? reap<true, true, false>(got, now, quota, anat) : reap<true, false, false>(got, now, quota, anat);
}

// The completions of one enter, all stamped `now` (the reaping time):
// counted, their latency recorded, retried, or reported as errors. Whether
// latency is recorded, split, and kept by direction (a mixed job's) is fixed
// for the run, so each variant gets a loop of its own: a job of one
// direction pays nothing for the mixed job's second record; what the loop reads per completion is held in locals,
// because every store through a slot could alias a member, which would be
// reloaded per completion otherwise.
template <bool kTimed, bool kSplit, bool kDirs>
Worker::Reaped Worker::reap(int got, Nanos now, uint64_t quota, AnatomyThread* anat) noexcept {
  Tally tl = tally();
  Runs lat_run, clat_run;
  Moved m;
  [[maybe_unused]] DirRuns dirs;
  if constexpr (kDirs) dirs.take(out_);
  uint64_t at_submit = 0;
  // How many more completions the window counts: the quota's rest, and none
  // outside the window.
  uint64_t countable = counting_ ? (quota > out_.ios ? quota - out_.ios : 0) : 0;
  uint64_t bytes = 0;
  const bool verify = tables_ != nullptr;
  // The programs may be off for a slice of the window (anatomy_slices.hpp):
  // an I/O is followed only when they were on from before its submission
  // to now, its reaping.
  const uint64_t since = anat ? ctl_.anatomy->attached_since() : 0;
  if (!since) anat = nullptr;
  const bool traced = dump_ || anat;  // intervals kept, or stages linked, per I/O
  const uint32_t moved_per_io = moves_data_ ? UINT32_MAX : 0;  // nop moves no data
  Slot* const slots = slots_.data();
  uint32_t* const free = free_.data();
  const IoCompletion* const comps = comps_.data();
  // A finished request frees its slot: the slots freed are the requests no
  // longer in flight, and those that did not fail are completed.
  const unsigned nfree0 = nfree_;
  unsigned nfree = nfree0, failed = 0;
  for (int i = 0; i < got; ++i) {
    const IoCompletion c = comps[i];
    Slot& s = slots[c.tag];
    if (c.res == static_cast<int32_t>(s.left)) [[likely]] {
      if (verify) [[unlikely]] finish_verified(s, true);
      free[nfree++] = c.tag;
      if (!io_moves_data(s.op)) [[unlikely]] {
        if (countable) {
          --countable;
          count_other(s, now);
        }
        continue;
      }
      const uint32_t moved = s.len & moved_per_io;
      bytes += moved;
      if (!countable) continue;
      --countable;
      if (s.op == IoOp::Read) { ++m.reads; m.rbytes += moved; }
      else { ++m.writes; m.wbytes += moved; }
      if (traced) [[unlikely]] {
        if (dump_) out_.intervals.emplace_back(s.t_submit, now);
        if (anat && s.t_submit >= since) anat->reap(c.tag, s.t_submit, now, s.left != s.len || s.eagains);
      }
      if constexpr (kTimed) tl.add_lat(lat_run, now - s.t_submit);
      if constexpr (kDirs) dirs.add_lat(s.op == IoOp::Write, now - s.t_submit);
      // An I/O without t_issued is unsplit: counted once, at the end, as
      // lat's count less clat's (no work here per I/O).
      // One stamped by this very enter's return was already complete then:
      // its clat would be 0, a clock read shared, not a time; its latency is
      // all slat.
      if constexpr (kSplit) {
        if (s.t_issued == now) [[unlikely]]
          ++at_submit;
        else if (s.t_issued) [[likely]] {
          tl.add_clat(clat_run, now - s.t_issued);
          if constexpr (kDirs) dirs.add_clat(s.op == IoOp::Write, now - s.t_issued);
        }
      }
    } else if (reap_failed(s, c)) {
      ++failed;
      free[nfree++] = c.tag;
    }
  }
  tl.finish(out_, lat_run, clat_run, m);
  if constexpr (kDirs) dirs.flush();
  out_.clat_at_submit += at_submit;
  nfree_ = nfree;
  return {nfree - nfree0, nfree - nfree0 - failed, bytes};
}

// A completion short of its request's whole transfer that is tried again:
// a short transfer (the rest; the latency still runs from the first
// submission) or EAGAIN (at most kMaxEagain times). Moves the slot on and
// counts it; false when it is an error instead. Both paths use it.
bool Worker::take_retry(Slot& s, int32_t res) noexcept {
  if (res > 0 && moves_data_) {
    s.offset += static_cast<uint32_t>(res);
    s.left -= static_cast<uint32_t>(res);
    ++out_.short_resubmits;
  } else if (res == -EAGAIN && ++s.eagains <= kMaxEagain) {
    ++out_.eagain_retries;
  } else {
    return false;
  }
  s.t_issued = 0;  // stamped again by the enter that resubmits it
  return true;
}

bool Worker::check_stop(Nanos now) {
  if (ctl_.stop.load(std::memory_order_relaxed) == kRunning) return false;
  close_window(now);
  return true;
}

// Stops every thread: the run cannot go on. `why` becomes the error line.
void Worker::fatal(std::string why) {
  std::lock_guard lk(ctl_.first_error_mu);
  ctl_.first_error = std::move(why);
  ctl_.stop.store(kFatal);
}

}  // namespace ioacct
