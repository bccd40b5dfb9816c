// The busy tracker's attribution (BusyOptions::by): whose each request is,
// from the ATTR records (its cgroup, op and bytes, logged at
// block_rq_complete with the request's start stamp, as its DONE record) and, by process, the PROC records (the submitting task, logged at
// block_io_start, paired by stamp: busy_proc.hpp); its completion booked to that cgroup or process; and
// each round's busy time split among them (busy_shares()). docs/design.md,
// "Who is using the disk".
#include <bpf/bpf.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "common/files.hpp"
#include "trace/bpf/busy_share.hpp"
#include "trace/bpf/busy_tracker_impl.hpp"

namespace ioacct {

using busy::kNoWho;

// The label of a cgroup (by cgroup) or a process (by process), made on
// first sight; an index never moves (BusyCounters::who).
uint32_t BusyTracker::Impl::who_of(uint64_t cgroup, uint32_t pid) {
  const bool by_pid = opt.by == BusyBy::Process;
  const uint64_t key = by_pid ? pid : cgroup;
  // Runs of one cgroup's or process's requests are the rule: the last
  // label found spares the hash map most look-ups.
  if (key == last_who_key && last_who < who_keys.size()) {
    if (by_pid && cgroup) who_keys[last_who].first = cgroup;  // a process's latest cgroup
    return last_who;
  }
  auto [it, made] = who_index.try_emplace(key, static_cast<uint32_t>(who_keys.size()));
  if (made) {
    who_keys.emplace_back(cgroup, by_pid ? pid : BusyWho::kUnknownPid);
    // Read at the round that first sees it, within ~100 ms of its first
    // request: a short-lived process is often gone by the report.
    const bool task = by_pid && pid != 0 && pid != BusyWho::kUnknownPid;
    who_comms.push_back(task ? comm_of(pid) : std::string());
  } else if (by_pid && cgroup) {
    who_keys[it->second].first = cgroup;  // a process's latest cgroup
  }
  last_who_key = key;
  last_who = it->second;
  return it->second;
}

// A process's name: /proc/PID/comm while it runs, else what the start
// program noted at its first request (busy_shared.h, IOACCT_COMMS).
std::string BusyTracker::Impl::comm_of(uint32_t pid) const {
  bool ok = false;
  std::string comm = read_first_line("/proc/" + std::to_string(pid) + "/comm", &ok);
  if (ok) return comm;
  ioacct_comm c{};
  if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.comms), &pid, &c) != 0) return {};
  return std::string(c.comm, strnlen(c.comm, sizeof(c.comm)));
}

BusyWho& BusyTracker::Impl::who_in(Dev& d, uint32_t who) {
  std::vector<BusyWho>& v = d.c.who;
  while (v.size() <= who) {
    BusyWho& w = v.emplace_back();
    w.latency_count.assign(busy::kLatBuckets, 0);
  }
  BusyWho& w = v[who];
  w.cgroup = who_keys[who].first;
  w.pid = who_keys[who].second;
  if (w.comm.empty()) w.comm = who_comms[who];
  return w;
}

// The batch's ATTR records with start stamps up to `upto` (the log is in
// stamp order: a record's `t` is its request's stamp), waiting for their
// DONE records: collect() reads the DONE logs' heads first, so a DONE
// drained finds its ATTR drained too. A request's records wait on its
// struct before its DONE (its stamp is earlier than that DONE's time), a
// later request's only after it (stamped after this one ended): one
// request's records wait per struct. A record with the stamp waiting is
// another part of the same request (completed in parts): its bytes are
// added; one with another stamp follows a request whose DONE no program
// logged, and replaces it.
void BusyTracker::Impl::feed_attrs(size_t& next, uint64_t upto) {
  const std::vector<ioacct_rec>& v = batch[IOACCT_LOG_ATTR];
  for (; next < v.size() && v[next].t <= upto; ++next) {
    const ioacct_rec& r = v[next];
    busy::Attr& a = attrs[r.rq];
    if (!a.round || a.s != r.t) a = {.cgroup = r.s, .bytes = 0, .op = r.part, .s = r.t, .round = round_no};
    a.bytes += r.disk;
  }
}

// The batch's PROC records with stamps up to `upto` (the log is in stamp
// order, its `t` being the stamp): a request's record has a stamp no later
// than its start, so it waits on its struct before its DONE is applied;
// its struct's next request's record may wait there too (match_proc()).
void BusyTracker::Impl::feed_procs(size_t& next, uint64_t upto) {
  const std::vector<ioacct_rec>& v = batch[IOACCT_LOG_PROC];
  for (; next < v.size() && v[next].t <= upto; ++next)
    busy::add_proc(procs[v[next].rq], v[next].s, v[next].disk, v[next].part != 0);
}

// Whose completed request `r` was: its ATTR record's cgroup (taken out of
// `attrs` into `attr`; `paired` says whether there was one: the struct's
// record with the same start stamp), else what the sweep read of it; by
// process, its PROC record. A record with an earlier stamp is a request's
// whose DONE no program logged: it goes too.
uint32_t BusyTracker::Impl::who_of_done(const ioacct_rec& r, const Req* known, busy::Attr& attr, bool& paired) {
  const busy::Attr* a = attrs.find(r.rq);
  paired = a != nullptr && a->s == r.s;
  if (paired) attr = *a;
  if (a != nullptr && a->s <= r.s) attrs.erase(r.rq);
  uint64_t cgroup = paired ? attr.cgroup : 0;
  if (!cgroup && known && known->who != kNoWho) cgroup = who_keys[known->who].first;
  uint32_t pid = BusyWho::kUnknownPid;
  if (opt.by == BusyBy::Process) {
    std::optional<uint32_t> tgid;
    if (busy::Procs* p = procs.find(r.rq)) {
      tgid = busy::match_proc(*p, r.s, true);
      if (p->n == 0) procs.erase(r.rq);
    }
    if (tgid) pid = *tgid;
    else if (known && known->who != kNoWho) pid = who_keys[known->who].second;
  }
  return who_of(cgroup, pid);
}

void BusyTracker::Impl::book_done(Dev& d, uint32_t who, const busy::Attr& attr, bool paired, uint64_t lat) {
  BusyWho& w = who_in(d, who);
  // REQ_OP_READ is 0, REQ_OP_WRITE 1; the rest (flush, discard, ...) other.
  int dir = BusyWho::kOther;
  if (paired && attr.op == 0) dir = BusyWho::kRead;
  if (paired && attr.op == 1) dir = BusyWho::kWrite;
  ++w.ios[dir];
  w.bytes[dir] += attr.bytes;
  if (!paired) ++w.unpaired;
  ++w.latency_count[static_cast<size_t>(busy::lat_bucket(lat))];
  w.latency_sum_ns += lat;
}

// A request the sweep found in flight: its cgroup as the sweep read it, by
// process its PROC record (left for its DONE).
uint32_t BusyTracker::Impl::who_of_found(const Found& f) {
  uint32_t pid = BusyWho::kUnknownPid;
  if (opt.by == BusyBy::Process)
    if (busy::Procs* p = procs.find(f.rq))
      if (std::optional<uint32_t> tgid = busy::match_proc(*p, f.s, false)) pid = *tgid;
  return who_of(f.cgroup, pid);
}

// certain() for the accounting span, with the span's label when attributing.
void BusyTracker::Impl::certain_acct(Dev& d, uint64_t a, uint64_t b, uint64_t t, uint32_t who) {
  const size_t carried = d.carry_acct.size();
  certain(d.acct.certain, d.carry_acct, a, b, t);
  if (!attributing()) return;
  const uint32_t label = who == kNoWho ? who_of(0, BusyWho::kUnknownPid) : who;
  d.acct_who.push_back(label);
  if (d.carry_acct.size() > carried) d.carry_who.push_back(label);
}

// The last round's spans past its end, into this round (begin_round()).
void BusyTracker::Impl::carry_over(Dev& d) {
  for (const BusySpan& s : d.carry_acct) d.acct.certain.push_back(s);
  d.carry_acct.clear();
  if (!attributing()) return;
  d.acct_who.insert(d.acct_who.end(), d.carry_who.begin(), d.carry_who.end());
  d.carry_who.clear();
}

// The round's busy time split among the labels of its certain spans: the
// shares add up to what busy_round() found busy in the same spans.
void BusyTracker::Impl::share_round(Dev& d, uint64_t from, uint64_t t) {
  if (!attributing()) return;
  const BusyShareOutput o = busy_shares(from, t, d.acct.certain, d.acct_who, who_keys.size());
  for (size_t i = 0; i < o.share_ns.size(); ++i)
    if (o.inflight_ns[i]) {
      BusyWho& w = who_in(d, static_cast<uint32_t>(i));
      w.share_ns += o.share_ns[i];
      w.inflight_ns += o.inflight_ns[i];
    }
  d.acct_who.clear();
}

// ATTR records whose DONE never came (a record dropped, a run the kernel
// skipped) are forgotten after ~5 s of rounds.
void BusyTracker::Impl::forget_attrs() {
  if (attrs.empty() || round_no <= busy::kAttrRounds) return;
  std::vector<uint64_t> old;
  attrs.for_each([&](uint64_t key, const busy::Attr& a) {
    if (a.round + busy::kAttrRounds < round_no) old.push_back(key);
  });
  for (uint64_t key : old) attrs.erase(key);
}

}  // namespace ioacct
