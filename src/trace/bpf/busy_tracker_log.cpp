// The busy tracker's log reader: the records the programs append to their
// per-CPU logs, collected, put in time order, and applied
// (certain spans, requests first seen, requests that ended unseen), and the
// background thread that keeps the logs from filling between reads.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <bit>
#include <chrono>
#include <exception>

#include "acct/clock.hpp"
#include "trace/bpf/busy_tracker_impl.hpp"

namespace ioacct {

using busy::kCountLag;
using busy::kStaleStamp;

int busy::lat_bucket(uint64_t v) {
  if (v < (uint64_t{1} << kLatMinExp)) return 0;
  const int e = static_cast<int>(std::bit_width(v)) - 1;
  if (e >= kLatMinExp + kLatExps) return kLatBuckets - 1;
  const auto sub = static_cast<int>((v >> (e - kLatSubBits)) & ((1u << kLatSubBits) - 1));
  return 1 + (e - kLatMinExp) * (1 << kLatSubBits) + sub;
}

uint64_t busy::latency_le(int i) {
  if (i == 0) return (uint64_t{1} << kLatMinExp) - 1;
  if (i >= kLatBuckets - 1) return UINT64_MAX;
  const int e = (i - 1) / (1 << kLatSubBits) + kLatMinExp;
  const auto sub = static_cast<uint64_t>((i - 1) % (1 << kLatSubBits));
  const uint64_t width = uint64_t{1} << (e - kLatSubBits);
  return (uint64_t{1} << e) + (sub + 1) * width - 1;
}

// Copies every published record into `pending` and frees its slots; the
// next drain() hands them over. Runs between rounds too, when the logs
// fill fast. Returns whether a log dropped a merge or issue record (then
// a request may be unaccounted for) and adds dropped completions' time to
// unsure. Each CPU's log is in time order, the logs among themselves are
// not: drain() puts them in order.
bool BusyTracker::Impl::collect() {
  const uint64_t t = now_ns();
  uint64_t busiest = 0;
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
        if (k == IOACCT_LOG_MERGE || k == IOACCT_LOG_ISSUE) unknown = true;  // attribution drops lose no request
        dropped_seen[idx] = dropped;
      }
      if (k == IOACCT_LOG_DONE && dropped_ns != dropped_ns_seen[idx]) {  // the other logs' field is theirs
        for (Dev& d : dev) d.acct.unsure_extra_ns += dropped_ns - dropped_ns_seen[idx];
        dropped_ns_seen[idx] = dropped_ns;
      }
    }
  }
  // The rate over this collect's own interval: a read's round collects too,
  // and a rate taken over the background thread's interval alone would count
  // only what the read left and wait too long. It falls by half a collect at
  // most, so that a lull between bursts does not leave a long wait.
  if (collected_at && t > collected_at)
    fill_per_ns = std::max(static_cast<double>(busiest) / static_cast<double>(t - collected_at), fill_per_ns / 2);
  collected_at = t;
  collected_unknown |= unknown;
  return unknown;
}

// Everything collected so far, as a batch per log in time order: each
// record's `t`, the program's clock read (the attribution logs': the
// request's start stamp, busy_shared.h).
// apply() reads a completion with a later stamp than the request known on
// its struct as that request having ended unseen, which holds only when
// the known request's own completion, if logged, came first. Two requests
// on one struct can end on two CPUs within one batch (one found in flight
// by the sweep, the next taken and ended on the other CPU before the
// reader's next round), and CPU order would put the later one first: 2 of
// ~1000 requests counted lost and busy twice the trace's in 1 run of 4
// (StatExact.AStructTakenAgainBeforeItsStampIsNoRequest). A struct's two
// requests end in the order they held it, so time order is that order.
bool BusyTracker::Impl::drain() {
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

void BusyTracker::Impl::late(Dev& d, uint64_t s, uint64_t from) {
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
void BusyTracker::Impl::first_seen(uint32_t disk, uint32_t part, uint64_t s, uint64_t from) {
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
void BusyTracker::Impl::lost(const Req& r, uint64_t from, uint64_t until, uint64_t t) {
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
void BusyTracker::Impl::certain(std::vector<BusySpan>& now, std::vector<BusySpan>& carry, uint64_t a, uint64_t b, uint64_t t) {
  now.push_back({a, b});
  if (b > t) carry.push_back({std::max(a, t), b});
}

// A request on struct `rq` ended (completed or merged away): those
// started at or before `le` are over this round, and the struct keeps
// stamp `s` from time `t` until its next request is stamped.
void BusyTracker::Impl::ended_on(uint64_t rq, uint64_t le, uint64_t s, uint64_t t) {
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
void BusyTracker::Impl::apply(uint64_t from, uint64_t t, uint64_t k) {
  size_t next_proc = 0, next_attr = 0;
  for (const ioacct_rec& r : batch[IOACCT_LOG_DONE]) {
    if (attributing()) feed_attrs(next_attr, r.t);
    if (opt.by == BusyBy::Process) feed_procs(next_proc, r.t);
    if (r.part == IOACCT_UNACCOUNTED) {  // the kernel did not account it: nor does the sweep
      // Its PROC record, if any, goes with the next accounted DONE on the
      // struct (it has no stamp to be matched by).
      if (attributing()) attrs.erase(r.rq);
      continue;
    }
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
    busy::Attr attr;
    bool paired = false;
    const uint32_t who = attributing() ? who_of_done(r, known, attr, paired) : busy::kNoWho;
    for_devices(r.disk, r.part, [&](Dev& d) {
      certain_acct(d, r.s, r.t, t, who);
      if (attributing()) book_done(d, who, attr, paired, lat);
      if (issue && issue < r.t) certain(d.dev.certain, d.carry_dev, issue, r.t, t);
      ++d.c.done;
      d.c.latency_sum_ns += lat;
      d.c.latency_max_ns = std::max(d.c.latency_max_ns, lat);
      if (opt.latency) ++d.c.latency_count[static_cast<size_t>(busy::lat_bucket(lat))];
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
  if (attributing()) feed_attrs(next_attr, UINT64_MAX);
  if (opt.by == BusyBy::Process) feed_procs(next_proc, UINT64_MAX);
  for (const ioacct_rec& r : batch[IOACCT_LOG_MERGE]) {
    // Merged away: the survivor keeps the earlier start stamp, so the
    // union loses nothing; its own span up to here counts for depth.
    ended_on(r.rq, r.t, r.s, r.t);
    const Req* known = inflight.find(r.rq);
    for_devices(r.disk, known ? known->part : kNone, [&](Dev& d) {
      if (known) certain_acct(d, std::max(known->s, from), r.t, t, known->who);
      ++d.c.merged;
    });
    if (known) inflight.erase(r.rq);
  }
}

// dev% only: a request's device span runs from its last issue (after its
// start: an older one is a stale issue of the struct's previous request,
// whose end no program saw) to the end of its accounting. Issues of
// requests not known yet wait in `issued`.
void BusyTracker::Impl::note_issues() {
  for (const ioacct_rec& r : batch[IOACCT_LOG_ISSUE]) {
    if (Req* known = inflight.find(r.rq); known && r.t >= known->s) known->issue = std::max<uint64_t>(known->issue, r.t);
    else {
      uint64_t& i = issued[r.rq];
      i = std::max<uint64_t>(i, r.t);
    }
  }
}

uint64_t BusyTracker::Impl::issue_of(uint64_t rq, uint64_t s) {
  const uint64_t* i = issued.find(rq);
  return i && *i >= s ? *i : 0;
}

uint64_t BusyTracker::Impl::fill() const {
  uint64_t most = 0;
  for (uint32_t k = 0; k < nlogs; ++k)
    for (uint32_t c = 0; c < ncpu; ++c) {
      const ioacct_head& h = head_of(k, c);
      most = std::max<uint64_t>(most, __atomic_load_n(&h.head, __ATOMIC_RELAXED) - h.tail);
    }
  return most;
}

// 100 ms; 5 ms for half a second after a round found a lost completion.
uint64_t BusyTracker::Impl::round_period() const { return now_ns() - lost_at < 500'000'000ull ? 5'000'000ull : 100'000'000ull; }

// Between reads: rounds every 100 ms (every 5 ms while the kernel skips
// programs: a request whose end no program saw is unsure until a round
// finds it gone, so each leaves at most that much unsure time), and the
// logs emptied before they are a quarter full at the rate they fill, and at
// least every 20 ms. Each wake costs a context switch (50 a second when
// idle), each round a sweep: nothing in between.
void BusyTracker::Impl::background() {
  // The logs hold ~15-30 ms of records at 100k+ I/Os per second: on a
  // machine whose CPUs the I/O itself keeps busy, this thread must not wait
  // behind it for its turn, or records are dropped and the window says it
  // cannot be sure. Ahead of normal threads when allowed (CAP_SYS_NICE);
  // as it is otherwise. It runs for well under 1% of a CPU.
  setpriority(PRIO_PROCESS, static_cast<id_t>(gettid()), -10);
  std::unique_lock<std::mutex> l(mu);
  while (!stop) {
    // The next look before the busiest log could be a quarter full at the
    // rate it fills: three quarters of it are left for a late wake-up (an
    // ASan build in CI once woke >60 ms late at 31k completions a second on
    // one CPU, with half the log left, and dropped 311 records). At most
    // kCollectIdle apart, however slow the rate: a workload that starts
    // while the logs are quiet fills a log in 4096 / rate, 57 ms at 72k
    // completions a second on one CPU, and a 100 ms wait there dropped
    // 1,000-3,000 records in 2 of 4 runs of
    // StatExact.ConcurrentRequestsFromTwoThreadsSurvive beside a compiler.
    const uint64_t every =
        fill_per_ns > 0 ? std::clamp<uint64_t>(static_cast<uint64_t>(static_cast<double>(slots) / 4 / fill_per_ns),
                                               kCollectMin, kCollectIdle)
                        : kCollectIdle;
    const uint64_t round_due = t_prev + round_period();
    const uint64_t due = std::min(round_due, collected_at + every);
    const uint64_t now = now_ns();
    if (now < due) cv.wait_for(l, std::chrono::nanoseconds(due - now));
    if (stop) break;
    try {
      const uint64_t t = now_ns();
      if (t >= t_prev + round_period()) round(false);
      else if (t >= collected_at + every) collect();
      // else a read ran meanwhile: the next due time is from its collect
    } catch (const std::exception&) {
      // the next read reports it
    }
  }
}

}  // namespace ioacct
