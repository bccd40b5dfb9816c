// The busy tracker's sweep and round: the kernel's own view of every
// request of every watched queue (the sweep program, run on demand), the
// kernel's counts (/proc/diskstats), and the round that merges them with the
// drained logs into exact unions, depth distributions and their bounds.
#include <bpf/bpf.h>
#include <time.h>

#include <algorithm>
#include <string_view>
#include <unordered_map>

#include "acct/clock.hpp"
#include "acct/procfs.hpp"
#include "common/files.hpp"
#include "trace/bpf/busy_tracker_impl.hpp"

namespace ioacct {
namespace {

uint64_t thread_cpu_ns() {
  timespec ts{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(ts.tv_nsec);
}

}  // namespace

using busy::kernel_dev;
using busy::kKernelSpace;
using busy::kMaxTags;

// Runs find_tags over the first n tagsets, each filled with where to start
// (a request, a queue, or an open file of the device); false: it did not run.
bool BusyTracker::Impl::find_tags(uint32_t n) {
  skel->bss->n_tagsets = n;
  uint64_t args[1] = {};
  LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
  return bpf_prog_test_run_opts(bpf_program__fd(skel->progs.find_tags), &run) == 0;
}

// Where each queue keeps its requests, from the sample of each device, or
// until it has one, from the queue found at the attach (on kernels before
// 6.16 a sample also reaches its hardware queue's scheduler tags).
void BusyTracker::Impl::find_queues() {
  arrays.clear();
  array_q.clear();
  uint32_t n = 0;
  std::vector<uint32_t> of;
  for (uint32_t i = 0; i < sample.size(); ++i)
    if (sample[i] || queue_of[i]) {
      tagsets[n] = ioacct_tagset{};
      tagsets[n].fd = -1;
      if (sample[i]) tagsets[n].rq = sample[i];
      else tagsets[n].q = queue_of[i];
      of.push_back(i);
      ++n;
    }
  if (!n) return;
  queues.clear();
  if (!find_tags(n)) return;
  for (uint32_t j = 0; j < n; ++j) {
    const ioacct_tagset& ts = tagsets[j];
    if (!ts.ok) continue;
    Queue& q = queues[ts.q];
    // A disk's sample gives its queue the disk's index; a partition's
    // (its disk is not watched: completions name the disk when it is)
    // leaves it kNone.
    if (is_disk[of[j]]) q.disk = of[j];
    for (uint32_t a = 0; a < ts.n && a < IOACCT_TAG_ARRAYS; ++a) {
      const std::pair<uint64_t, uint32_t> arr{ts.rqs[a], ts.nr[a]};
      // A queue holds at most BLK_MQ_MAX_DEPTH (10240) requests per tag
      // set, in kernel memory: anything else was read from a request that
      // is no longer the queue's (a sample from a queue since torn down),
      // and walking it would take the sweep forever.
      if (arr.second == 0 || arr.second > kMaxTags || arr.first < kKernelSpace) continue;
      if (std::find(arrays.begin(), arrays.end(), arr) != arrays.end()) continue;
      arrays.push_back(arr);
      array_q.push_back(ts.q);
    }
  }
}

std::vector<BusyTracker::Impl::Found> BusyTracker::Impl::sweep() {
  std::vector<Found> out;
  queues.for_each([](uint64_t, Queue& q) { q.walked = true; });
  std::vector<uint64_t> slot_q;
  for (size_t a = 0; a < arrays.size(); ++a)
    for (uint32_t i = 0; i < arrays[a].second; ++i) {
      keys.push_back(arrays[a].first + 8ull * i);
      slot_q.push_back(array_q[a]);
    }
  for (size_t next = 0; next < keys.size();) {
    const size_t first = next;
    uint32_t n = 0;
    for (; next < keys.size() && n < probe_cap; ++next, ++n) {
      probes[n] = ioacct_probe{};
      probes[n].slot = keys[next];
    }
    skel->bss->n_probes = n;
    uint64_t args[1] = {};
    LIBBPF_OPTS(bpf_test_run_opts, run, .ctx_in = args, .ctx_size_in = sizeof(args));
    const int err = bpf_prog_test_run_opts(bpf_program__fd(skel->progs.sweep), &run);
    for (uint32_t i = 0; i < n; ++i) {
      const ioacct_probe& p = probes[i];
      if (err || !p.ok) {
        if (Queue* q = queues.find(slot_q[first + i])) q->walked = false;
        continue;
      }
      if (p.ref > 0 && p.accounted && p.start_time_ns)
        out.push_back({p.rq, p.q, p.start_time_ns, p.part_dev, p.accounted == 2, p.cgroup});
    }
  }
  keys.clear();
  return out;
}

std::vector<BusyTracker::Impl::Kernel> BusyTracker::Impl::kernel_stats() {
  std::vector<Kernel> k(devices.size());
  std::unordered_map<uint32_t, DiskStats> by_dev;
  const std::string text = read_file("/proc/diskstats");
  size_t pos = 0;
  while (pos < text.size()) {
    size_t nl = text.find('\n', pos);
    if (nl == std::string::npos) nl = text.size();
    if (auto d = parse_diskstats_line(std::string_view(text).substr(pos, nl - pos)))
      by_dev[kernel_dev(d->major, d->minor)] = *d;
    pos = nl + 1;
  }
  for (size_t i = 0; i < devices.size(); ++i)
    for (uint32_t dv : kernel_devs[i])
      if (auto f = by_dev.find(dv); f != by_dev.end()) {
        const DiskStats& s = f->second;
        k[i].in_flight += s.in_flight;
        if (dv != kernel_devs[i].front()) continue;  // a disk's completions include its partitions'
        k[i].ms += s.read_ms + s.write_ms + s.discard_ms;
        const uint64_t per[3] = {s.reads, s.writes, s.discards};
        for (int n = 0; n < 3; ++n) k[i].field_done[n] += per[n];
        k[i].read = true;
      }
  return k;
}

// Completions no program saw at either end (the kernel ran none: docs/
// design.md, "Lost events") leave no trace but diskstats' counts: at each
// read, busy_invisible() bounds their time with diskstats' latency sum
// over a span that holds the window (read before the previous read's round
// and after this read's sweep, before its second drain, so that every
// completion counted there has its record drained). diskstats' latency of
// a request is shorter than ours (the kernel reads its clock before the
// tracepoint), which busy_invisible() allows for.
void BusyTracker::Impl::bound_invisible() {
  for (size_t i = 0; i < dev.size(); ++i) {
    Dev& d = dev[i];
    const Kernel& a = d.kernel_prev;
    if (i < kernel_after.size() && a.read && kernel_after[i].read) {
      const Kernel& b = kernel_after[i];
      // diskstats truncates each field's latency sum to ms: a field with
      // no completion in between did not move at all.
      uint64_t changed = 0;
      for (int f = 0; f < 3; ++f) changed += b.field_done[f] != a.field_done[f] ? 1 : 0;
      const uint64_t window = d.c.stamp_ns - d.at_read.stamp_ns;
      const uint64_t used = (d.c.busy_ns - d.at_read.busy_ns) + (d.c.unsure_ns - d.at_read.unsure_ns);
      const BusyInvisibleOutput o = busy_invisible({.kernel_done = b.done() > a.done() ? b.done() - a.done() : 0,
                                                    .seen = d.win_n,
                                                    .ambiguous = d.win_amb,
                                                    .kernel_ms = b.ms > a.ms ? b.ms - a.ms : 0,
                                                    .ms_fields = changed,
                                                    .seen_latency_ns = d.win_lat,
                                                    .idle_ns = window > used ? window - used : 0});
      d.c.unsure_ns += o.unsure_ns;
      d.c.invisible += o.invisible;
    }
    start_window(i);
  }
  k_now = 0;
  win_cap = win_cap_end = UINT64_MAX;
}

// The next window's span starts at this read's first diskstats read.
void BusyTracker::Impl::start_window(size_t i) {
  Dev& d = dev[i];
  if (i < kernel_before.size()) d.kernel_prev = kernel_before[i];
  d.win_n = d.next_n;
  d.win_lat = d.next_lat;
  d.win_amb = d.next_amb;
  d.next_n = d.next_lat = d.next_amb = 0;
  d.at_read = d.c;
  win_lo_start = k_now;
  win_lo = k_end;
}

// One round: everything up to now becomes cumulative figures. The round
// ends at `t`, just before the sweep looks; every request in the span
// then is either one the sweep finds or one whose completion is logged
// before the second drain. `check`: also compare with the kernel's own
// in-flight count (every read, and while settling).
void BusyTracker::Impl::round(bool check) {
  const uint64_t cpu0 = thread_cpu_ns();
  const uint64_t from = t_prev;
  begin_round();
  std::vector<uint64_t> kernel;
  const uint64_t k = check ? read_kernel_before(kernel) : 0;
  bool unknown = drain();
  const uint64_t t = now_ns();
  if (opt.device_span) note_issues();
  apply(from, t, k);
  find_queues();
  const std::vector<Found> found = sweep();
  if (check) {  // before the second drain: every completion it counts has its record in that drain
    win_cap = now_ns();
    kernel_after = kernel_stats();
    win_cap_end = now_ns();
  }
  unknown |= drain();
  if (opt.device_span) note_issues();
  apply(from, t, k);
  // What the sweep showed: known requests still in flight, requests not
  // known yet, and the ends of known ones whose completion no program saw.
  inflight.for_each([](uint64_t, Req& r) { r.swept = false; });
  for (const Found& f : found) take_found(f, from, t, k);
  drop_unswept(from, t);
  for (Dev& d : dev) d.c.in_flight = 0;
  inflight.for_each([&](uint64_t, Req& r) { for_devices(r.disk, r.part, [](Dev& d) { ++d.c.in_flight; }); });
  close_round(check, unknown, kernel, from, t);
  t_prev = t;
  cost.user_cpu_ns += thread_cpu_ns() - cpu0;
}

// The spans of the last round's completions that ran past its end.
void BusyTracker::Impl::begin_round() {
  ++round_no;
  forget_attrs();
  for (Dev& d : dev) {
    carry_over(d);
    for (const BusySpan& s : d.carry_dev) d.dev.certain.push_back(s);
    d.carry_dev.clear();
    d.in_walk = d.ended_at_k = 0;
  }
}

// diskstats before the round (a checked round): each device's in-flight
// count into `kernel`; returns when it was read.
uint64_t BusyTracker::Impl::read_kernel_before(std::vector<uint64_t>& kernel) {
  const uint64_t k = now_ns();
  kernel_before = kernel_stats();
  for (const Kernel& x : kernel_before) kernel.push_back(x.in_flight);
  k_now = k;
  k_end = now_ns();
  for (Dev& d : dev) d.next_n = d.next_lat = d.next_amb = 0;
  return k;
}

// One request the sweep found in the accounting span: still in flight if
// known, first seen if not; the one known on its struct before it ended
// unseen if its stamp is older. Its time up to the round's end `t` is
// certain.
void BusyTracker::Impl::take_found(const Found& f, uint64_t from, uint64_t t, uint64_t k) {
  const Queue* q = queues.find(f.q);
  if (!q) return;  // another queue sharing the tag set
  // The test hook's struct stands for one taken again whose last request
  // a program saw end: only those are the race (one whose end no program
  // saw is free, and the reader cannot know it).
  const Ended* e = ended.find(f.rq);
  if (f.hooked && (!e || e->last != f.s)) return;
  if (e) {
    if (e->round == round_no && f.s <= e->le) return;  // it ended after the sweep looked
    if (f.s == e->last) return;  // ended, or taken again and not stamped yet (Ended)
  }
  auto pi = f.part_dev ? index_of.find(f.part_dev) : index_of.end();
  const uint32_t part = pi == index_of.end() || pi->second == q->disk ? kNone : pi->second;
  if (q->disk == kNone && part == kNone) return;  // a partition not watched, of a disk not watched
  Req* known = inflight.find(f.rq);
  if (known && f.s > known->s) {  // used again: the one known ended unseen before this one started
    lost(*known, from, std::min(f.s, t), t);
    inflight.erase(f.rq);
    known = nullptr;
  }
  if (!known) {
    first_seen(q->disk, part, f.s, from);
    Req& n = inflight[f.rq];
    n = Req{};
    n.disk = q->disk;
    n.part = part;
    n.s = f.s;
    n.issue = issue_of(f.rq, f.s);
    n.q = f.q;
    if (attributing()) n.who = who_of_found(f);
    known = &n;
  }
  known->s = std::min(known->s, f.s);  // a request merged into it: the kernel keeps the earlier stamp
  if (known->part == kNone) known->part = part;
  known->swept = true;
  known->seen = t;
  if (known->s < t)
    for_devices(known->disk, known->part, [&](Dev& d) {
      certain_acct(d, std::max(known->s, from), t, t, known->who);
      if (known->issue && known->issue < t) d.dev.certain.push_back({std::max(known->issue, from), t});
      if (!k || known->s <= k) ++d.in_walk;
    });
}

// Known, and not found in flight: ended, and no program saw it end.
void BusyTracker::Impl::drop_unswept(uint64_t from, uint64_t t) {
  keys.clear();
  inflight.for_each([&](uint64_t rq, Req& r) {
    if (r.swept) return;
    const Queue* q = queues.find(r.q);
    if (!q || !q->walked) {  // not looked at: maybe still in flight
      for_devices(r.disk, r.part, [&](Dev& d) { d.acct.unsure.push_back({std::max(r.seen, from), t}); });
      return;
    }
    lost(r, from, t, t);
    keys.push_back(rq);
  });
  for (uint64_t rq : keys) inflight.erase(rq);
  keys.clear();
}

// Each device's spans of the round, through busy_round(), into its
// cumulative figures.
void BusyTracker::Impl::close_round(bool check, bool unknown, const std::vector<uint64_t>& kernel, uint64_t from,
                                    uint64_t t) {
  last_unknown = unknown;
  for (size_t i = 0; i < dev.size(); ++i) {
    Dev& d = dev[i];
    // A request the kernel counts that the sweep did not show (a queue not
    // found yet, a hardware queue beyond those read) is in flight since
    // some time nobody saw: all the round's idle time is unsure.
    const bool unknown_here = unknown || (check && kernel[i] > d.in_walk + d.ended_at_k);
    last_unknown |= unknown_here;
    d.acct.from = d.dev.from = from;
    d.acct.to = d.dev.to = t;
    d.acct.unknown = d.dev.unknown = unknown_here;
    d.dev.unsure_extra_ns = d.acct.unsure_extra_ns;
    const BusyRoundOutput a = busy_round(d.acct);
    share_round(d, from, t);
    d.c.busy_ns += a.busy_ns;
    d.c.unsure_ns += a.unsure_ns;
    for (int b = 0; b < kBusyDepthBuckets; ++b) d.c.depth_ns[b] += a.depth_ns[static_cast<size_t>(b)];
    if (opt.device_span) {
      const BusyRoundOutput v = busy_round(d.dev);
      d.c.dev_busy_ns += v.busy_ns;
      d.c.dev_unsure_ns += v.unsure_ns;
    }
    d.c.stamp_ns = t;
    d.acct.certain.clear();
    d.acct.unsure.clear();
    d.acct.unknown = false;
    d.acct.unsure_extra_ns = 0;
    d.dev.certain.clear();
    d.dev.unsure.clear();
    d.dev.unknown = false;
    d.dev.unsure_extra_ns = 0;
  }
}

}  // namespace ioacct
