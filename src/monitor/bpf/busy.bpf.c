// SPDX-License-Identifier: GPL-2.0
/* Exact busy time per block device, aggregated in the kernel: no per-I/O
 * event crosses to user space. See docs/design.md ("Exact busy time").
 *
 * Per request (keyed by its struct request pointer) the program remembers
 * where it is; per device it keeps, in one word changed by compare-and-swap,
 * how many requests are in flight and since when, so each change adds the
 * time since the last change to busy_ns (when >= 1 was in flight) and to the
 * depth bucket. */
#include "kernel_types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "busy_shared.h"

char LICENSE[] SEC("license") = "GPL"; /* tp_btf needs it */

/* Set before load. acct_from_rq: the kernel has no block_io_start/done
 * (before 6.5), so the accounting span is taken from issue..complete. */
const volatile __u8 acct_from_rq = 0;
const volatile __u8 latency = 0;
/* The watched devices (kernel dev_t: major << 20 | minor), index = slot in
 * `stats`. Read-only after load: a scan of a few constants is cheaper than a
 * map lookup, and the verifier knows n_watch. */
const volatile __u32 n_watch = 0;
const volatile __u8 any_partition = 0; /* a partition is watched: look at rq->part too */
const volatile __u32 watch[IOACCT_MAX_DEVICES] = {};
/* Set by user space once every program is attached, so that no request is
 * half-seen because its start came before the program for its end existed. */
volatile __u8 armed = 0;

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IOACCT_MAX_DEVICES);
  __type(key, __u32);
  __type(value, struct ioacct_dev);
} stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, IOACCT_MAX_DEVICES);
  __type(key, __u32);
  __type(value, struct ioacct_cnt);
} counts SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IOACCT_MAX_DEVICES);
  __type(key, __u32);
  __type(value, struct ioacct_lat);
} lat SEC(".maps");

/* One word per program per CPU, see ptr_key(). */
struct ioacct_scratch {
  __u64 word[8];
};
struct {
  __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
  __uint(max_entries, 1);
  __type(key, __u32);
  __type(value, struct ioacct_scratch);
} scratch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IOACCT_MAX_DEVICES);
  __type(key, __u32);
  __type(value, struct ioacct_recent);
} recent SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IOACCT_RQ_SLOTS);
  __type(key, __u32);
  __type(value, struct ioacct_rq);
} reqs SEC(".maps");

/* The request's address as a plain number, the table's key. The verifier
 * forbids arithmetic on a kernel pointer, but a privileged program may store
 * one in a map value, and what it loads back is a scalar. The word is per
 * CPU and per program: programs nest on a CPU (a completion in an interrupt
 * over a submission), but one program never nests in itself (the kernel
 * skips such a run). Cheaper than bpf_probe_read_kernel by a helper call
 * (~55 ns here). 0 when the scratch map is missing (never). */
enum { PROG_IO_START, PROG_IO_DONE, PROG_RQ_ISSUE, PROG_RQ_COMPLETE, PROG_RQ_MERGE };
static __always_inline __u64 ptr_key(void *p, int prog) {
  __u32 zero = 0;
  struct ioacct_scratch *s = bpf_map_lookup_elem(&scratch, &zero);
  if (!s || prog < 0 || prog >= 8) return 0;
  s->word[prog] = (__u64)p;
  return *(volatile __u64 *)&s->word[prog];
}

static __always_inline __u32 rq_group(__u64 key) {
  /* Fibonacci hashing; the group's first slot, so a group is 128 aligned bytes. */
  return (__u32)((key * 0x9E3779B97F4A7C15ull) >> 32) & (IOACCT_RQ_SLOTS - 1) & ~(IOACCT_PROBES - 1);
}

/* The request's slot, or NULL. Every slot of the group is looked at (a freed
 * slot is not a tombstone, so the search cannot stop at the first empty one). */
static __always_inline struct ioacct_rq *rq_find(__u64 key) {
  __u32 g = rq_group(key);
  for (__u32 i = 0; i < IOACCT_PROBES; ++i) {
    __u32 idx = g + i;
    struct ioacct_rq *e = bpf_map_lookup_elem(&reqs, &idx);
    if (e && e->key == key) return e;
  }
  return 0;
}

/* The request's slot if it has one (*found = 1), else a free one claimed for
 * it; NULL when the whole group is taken. One pass over the group. */
static __always_inline struct ioacct_rq *rq_find_or_claim(__u64 key, int *found) {
  __u32 g = rq_group(key);
  struct ioacct_rq *free = 0;
  *found = 0;
  for (__u32 i = 0; i < IOACCT_PROBES; ++i) {
    __u32 idx = g + i;
    struct ioacct_rq *e = bpf_map_lookup_elem(&reqs, &idx);
    if (!e) continue;
    if (e->key == key) {
      *found = 1;
      return e;
    }
    if (!free && e->key == 0) free = e;
  }
  if (free && __sync_val_compare_and_swap(&free->key, 0, key) == 0) return free;
  /* Another CPU took that slot meanwhile: try the others. */
  for (__u32 i = 0; i < IOACCT_PROBES; ++i) {
    __u32 idx = g + i;
    struct ioacct_rq *e = bpf_map_lookup_elem(&reqs, &idx);
    if (e && e->key == 0 && __sync_val_compare_and_swap(&e->key, 0, key) == 0) return e;
  }
  return 0;
}

/* Ends the slot's life and copies it to *c, once: a lost request may be found
 * by a sweep while its late block_io_done runs on another CPU, and only the
 * one that wins the compare-and-swap counts it down. The key goes through an
 * odd value (pointers are aligned), which no request matches and no claim
 * takes, while the fields are cleared. */
static __always_inline int rq_take(struct ioacct_rq *e, __u64 key, struct ioacct_rq *c) {
  *c = *e;
  if (__sync_val_compare_and_swap(&e->key, key, key | 1) != key) return 0;
  e->acct = 0;
  e->issued = 0;
  __sync_lock_test_and_set(&e->key, 0); /* a full barrier: the fields are clear before the slot is free */
  return 1;
}

/* Flush requests the block layer makes itself: block_io_done fires for them
 * without a block_io_start. */
static __always_inline int is_flush_seq(struct request *rq) {
  if (!bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ)) return 0;
  return (rq->rq_flags >> bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ)) & 1;
}

static __always_inline __u32 dev_index(__u32 dev) {
  for (__u32 i = 0; i < IOACCT_MAX_DEVICES; ++i) {
    if (i >= n_watch) break;
    if (watch[i] == dev) return i;
  }
  return IOACCT_NO_DEVICE;
}

/* The whole disk and, when different and watched, the partition. Direct
 * reads: tp_btf arguments are BTF-typed, so no bpf_probe_read per field. */
static __always_inline void rq_devices(struct request *rq, __u32 *disk, __u32 *part) {
  struct gendisk *g = rq->q->disk;
  __u32 d = g ? ((__u32)g->major << 20) | (__u32)g->first_minor : 0;
  *disk = g ? dev_index(d) : IOACCT_NO_DEVICE;
  *part = IOACCT_NO_DEVICE;
  if (!any_partition) return;
  struct block_device *bd = rq->part;
  __u32 p = bd ? bd->bd_dev : 0;
  if (bd && p != d) *part = dev_index(p);
}

static __always_inline int depth_bucket(__u64 n) {
  return n == 0 ? 0 : n == 1 ? 1 : n < 4 ? 2 : n < 8 ? 3 : n < 16 ? 4 : 5;
}

static __always_inline __u32 lat_bucket(__u64 v) {
  if (v < (1ull << IOACCT_LAT_MIN_EXP)) return 0;
  __u64 x = v;
  __u32 e = 0;
  if (x >> 32) { x >>= 32; e += 32; }
  if (x >> 16) { x >>= 16; e += 16; }
  if (x >> 8) { x >>= 8; e += 8; }
  if (x >> 4) { x >>= 4; e += 4; }
  if (x >> 2) { x >>= 2; e += 2; }
  if (x >> 1) { e += 1; }
  if (e >= IOACCT_LAT_MIN_EXP + IOACCT_LAT_EXPS) return IOACCT_LAT_BUCKETS - 1;
  __u32 sub = (__u32)(v >> (e - IOACCT_LAT_SUB_BITS)) & ((1u << IOACCT_LAT_SUB_BITS) - 1);
  return 1 + (e - IOACCT_LAT_MIN_EXP) * (1u << IOACCT_LAT_SUB_BITS) + sub;
}

enum { SPAN_ACCT = 0, SPAN_DEV = 1 };
enum { EV_NONE = 0, EV_START = 1, EV_DONE = 2, EV_UNTRACKED = 3, EV_LOST = 4 };

/* One change of a device's in-flight count at `now` (read first thing in
 * the program: a clock read costs ~60 ns here). Another CPU may apply a
 * later event first: such a stamp is clamped to the word's, which keeps the
 * sum of the spans equal to the time since attach and never negative, off
 * by at most the window between the stamp and the CAS (a few hundred ns). */
static __always_inline void change(__u32 idx, int span, int delta, int ev, __u64 now, __u64 lat_ns) {
  if (idx >= IOACCT_MAX_DEVICES) return;
  struct ioacct_dev *d = bpf_map_lookup_elem(&stats, &idx);
  struct ioacct_cnt *c = bpf_map_lookup_elem(&counts, &idx);
  if (!d || !c) return;
  /* Per-CPU counters, but atomic all the same: a nested program may add to
   * the same entry between a plain load and store. */
  if (ev == EV_START) __sync_fetch_and_add(&c->started, 1);
  if (ev == EV_UNTRACKED) __sync_fetch_and_add(&c->untracked, 1);
  if (ev == EV_DONE) {
    __sync_fetch_and_add(&c->done, 1);
    __sync_fetch_and_add(&c->lat_sum, lat_ns);
    if (lat_ns > c->lat_max) c->lat_max = lat_ns; /* only on_io_done writes it */
    if (latency) {
      struct ioacct_lat *l = bpf_map_lookup_elem(&lat, &idx);
      __u32 b = lat_bucket(lat_ns);
      if (l && b < IOACCT_LAT_BUCKETS) __sync_fetch_and_add(&l->count[b], 1);
    }
  }
  if (span != SPAN_ACCT && span != SPAN_DEV) return;
  __u64 *w = span == SPAN_ACCT ? &d->acct_word : &d->dev_word;
  __u64 *pending = span == SPAN_ACCT ? &d->acct_pending : &d->dev_pending;
  __u64 t = now >> IOACCT_STAMP_SHIFT;
  __sync_fetch_and_add(pending, 1);
  int done = 0;
  for (int i = 0; i < IOACCT_CAS_TRIES && !done; ++i) {
    __u64 old = *(volatile __u64 *)w;
    __u64 n = old & IOACCT_COUNT_MASK, last = old >> IOACCT_COUNT_BITS;
    __u64 at = t > last ? t : last;
    __u64 m = delta > 0 ? (n < IOACCT_COUNT_MASK ? n + 1 : n) : delta < 0 ? (n ? n - 1 : 0) : n;
    if (__sync_val_compare_and_swap(w, old, (at << IOACCT_COUNT_BITS) | m) != old) continue;
    done = 1;
    __u64 dt = (at - last) << IOACCT_STAMP_SHIFT;
    if (span == SPAN_DEV) {
      /* Likewise unsure, and left out, for the device span. */
      if (n && !(ev == EV_LOST && n == 1)) __sync_fetch_and_add(&d->dev_busy, dt);
      continue;
    }
    /* A lost request alone in flight since the last change: its completion
     * came somewhere in that span, so the span is unsure, not busy. */
    if (ev == EV_LOST && n == 1) {
      __sync_fetch_and_add(&d->unsure, dt);
      n = 0;
    }
    if (n) __sync_fetch_and_add(&d->acct_busy, dt);
    int b = depth_bucket(n);
    if (b >= 0 && b < IOACCT_DEPTH_BUCKETS) __sync_fetch_and_add(&d->depth_ns[b], dt);
  }
  __sync_fetch_and_add(pending, -1);
  if (!done) __sync_fetch_and_add(&c->contended, 1);
  else if (ev == EV_LOST && span == SPAN_ACCT) __sync_fetch_and_add(&c->lost, 1);
}

static __always_inline void both(struct ioacct_rq *r, int span, int delta, int ev, __u64 now, __u64 lat_ns) {
  change(r->disk, span, delta, ev, now, lat_ns);
  change(r->part, span, delta, ev, now, lat_ns);
}

/* Passthrough requests (driver-private commands) get a block_io_start but,
 * unless their queue accounts them, never a block_io_done: diskstats leaves
 * them out, and so does the accounting span. */
static __always_inline int is_passthrough(struct request *rq) {
  __u32 op = rq->cmd_flags & IOACCT_REQ_OP_MASK;
  return op == bpf_core_enum_value(enum req_op, REQ_OP_DRV_IN) || op == bpf_core_enum_value(enum req_op, REQ_OP_DRV_OUT);
}

/* Whether the request a slot remembers has ended although no program saw it
 * end: the block layer has freed it (mq_hctx is cleared on free), or used the
 * struct again for a later request (the kernel stamps start_time_ns just
 * after block_io_start, so a stamp well after ours is another request's). */
#define IOACCT_REUSED_NS 50000
static __always_inline int rq_gone(__u64 key, __u64 start) {
  struct request *rq = (struct request *)key;
  void *hctx = 0;
  __u64 ks = 0;
  if (bpf_core_read(&hctx, sizeof(hctx), &rq->mq_hctx)) return 0;
  if (!hctx) return 1;
  if (bpf_core_read(&ks, sizeof(ks), &rq->start_time_ns)) return 0;
  return ks > start + IOACCT_REUSED_NS;
}

/* Ends, at `now`, the spans of a request whose completion no program saw. */
static __always_inline void end_lost(struct ioacct_rq *e, __u64 key, __u64 now) {
  struct ioacct_rq c;
  if (!rq_take(e, key, &c)) return;
  if (c.issued) both(&c, SPAN_DEV, -1, EV_LOST, now, 0);
  if (c.acct) both(&c, SPAN_ACCT, -1, EV_LOST, now, 0);
}

/* At most every IOACCT_CHECK_NS per device, while it counts a request in
 * flight, the last few started are looked at again (struct ioacct_recent). */
#define IOACCT_CHECK_NS 100000
static __always_inline void check_recent(__u32 idx, __u64 now) {
  if (idx >= IOACCT_MAX_DEVICES) return;
  struct ioacct_dev *d = bpf_map_lookup_elem(&stats, &idx);
  struct ioacct_recent *r = bpf_map_lookup_elem(&recent, &idx);
  /* Read outside the CAS: a hint. Deeper than 2, the device is busy
   * anyway and the sweep finds what was lost; a shared line written on
   * every start would cost more than it saves. */
  __u64 n = d ? IOACCT_WORD_COUNT(d->acct_word) : 0;
  if (!r || n == 0 || n > 2) return;
  if (now - r->checked < IOACCT_CHECK_NS) return;
  r->checked = now;
  for (__u32 i = 0; i < IOACCT_RECENT; ++i) {
    __u64 k = r->key[i], s = r->start[i];
    if (!k) continue;
    struct ioacct_rq *e = rq_find(k);
    if (e && e->acct && e->start == s && rq_gone(k, s)) end_lost(e, k, now);
    else if (!e || !e->acct || e->start != s) r->key[i] = 0; /* ended as it should, or a torn entry */
  }
}

/* Only requests started at low depth are remembered: those are the ones
 * whose lost completion leaves the device looking busy while it is idle. */
static __always_inline void remember(__u32 idx, __u64 key, __u64 now) {
  if (idx >= IOACCT_MAX_DEVICES) return;
  struct ioacct_dev *d = bpf_map_lookup_elem(&stats, &idx);
  struct ioacct_recent *r = bpf_map_lookup_elem(&recent, &idx);
  if (!d || !r || IOACCT_WORD_COUNT(d->acct_word) > 2) return;
  __u32 i = (__u32)__sync_fetch_and_add(&r->next, 1) & (IOACCT_RECENT - 1);
  r->start[i] = now;
  r->key[i] = key;
}

static __always_inline int acct_start(struct request *rq, __u64 key) {
  if (!armed || !key) return 0;
  if (!acct_from_rq && is_passthrough(rq)) return 0;
  __u64 now = bpf_ktime_get_ns(); /* first: the stamp closest to the event, before any cache miss below */
  __u32 disk, part;
  rq_devices(rq, &disk, &part);
  if (disk == IOACCT_NO_DEVICE && part == IOACCT_NO_DEVICE) return 0;
  struct ioacct_rq r = {.start = now, .disk = disk, .part = part, .acct = 1};
  check_recent(disk, now);
  check_recent(part, now);
  int found;
  struct ioacct_rq *e = rq_find_or_claim(key, &found);
  if (e && found) {
    /* Started again, and no program saw the last request in this struct end
     * (merges end in on_rq_merge): its completion was lost. */
    end_lost(e, key, now);
    e = rq_find_or_claim(key, &found);
  }
  if (!e) {
    both(&r, -1, 0, EV_UNTRACKED, now, 0); /* no free slot: counted, not timed */
    return 0;
  }
  e->start = now;
  e->disk = disk;
  e->part = part;
  e->issued = 0;
  e->acct = 1;
  both(&r, SPAN_ACCT, 1, EV_START, now, 0);
  remember(disk, key, now);
  remember(part, key, now);
  return 0;
}

static __always_inline int acct_done(struct request *rq, __u64 key) {
  if (!armed || !key) return 0;
  __u64 now = bpf_ktime_get_ns();
  struct ioacct_rq *e = rq_find(key);
  if (!e || !e->acct) {
    if (is_flush_seq(rq) || is_passthrough(rq)) return 0; /* never started as I/O: nothing to say */
    /* Started before attach: not timed, but said. */
    struct ioacct_rq u = {};
    rq_devices(rq, &u.disk, &u.part);
    both(&u, -1, 0, EV_UNTRACKED, now, 0);
    return 0;
  }
  struct ioacct_rq c;
  if (!rq_take(e, key, &c)) return 0; /* a sweep ended it first */
  if (c.issued) both(&c, SPAN_DEV, -1, EV_NONE, now, 0); /* ended without block_rq_complete (should not happen) */
  both(&c, SPAN_ACCT, -1, EV_DONE, now, now > c.start ? now - c.start : 0);
  return 0;
}

static __always_inline int dev_issue(struct request *rq, __u64 key) {
  if (!armed || !key) return 0;
  if (acct_from_rq) acct_start(rq, key);
  __u64 now = bpf_ktime_get_ns();
  struct ioacct_rq *e = rq_find(key);
  if (e && e->issued) return 0; /* issued again after a requeue: one span */
  if (!e) { /* not seen starting: a flush, or started before attach */
    __u32 disk, part;
    rq_devices(rq, &disk, &part);
    if (disk == IOACCT_NO_DEVICE && part == IOACCT_NO_DEVICE) return 0;
    int found;
    e = rq_find_or_claim(key, &found);
    if (!e) return 0;
    e->start = now;
    e->disk = disk;
    e->part = part;
    e->acct = 0;
  }
  e->issued = 1;
  struct ioacct_rq c = *e;
  both(&c, SPAN_DEV, 1, EV_NONE, now, 0);
  return 0;
}

static __always_inline int dev_complete(struct request *rq, __u64 key) {
  if (!armed || !key) return 0;
  __u64 now = bpf_ktime_get_ns();
  struct ioacct_rq *e = rq_find(key);
  if (e && e->issued) {
    struct ioacct_rq c = *e;
    if (c.acct) {
      e->issued = 0;
      both(&c, SPAN_DEV, -1, EV_NONE, now, 0);
    } else if (rq_take(e, key, &c)) {
      both(&c, SPAN_DEV, -1, EV_NONE, now, 0);
    }
  }
  if (acct_from_rq) acct_done(rq, key);
  return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(on_io_start, struct request *rq) { return acct_start(rq, ptr_key(rq, PROG_IO_START)); }

SEC("tp_btf/block_io_done")
int BPF_PROG(on_io_done, struct request *rq) { return acct_done(rq, ptr_key(rq, PROG_IO_DONE)); }

SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_rq_issue, struct request *rq) { return dev_issue(rq, ptr_key(rq, PROG_RQ_ISSUE)); }

SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_rq_complete, struct request *rq, int error, unsigned int nr_bytes) { return dev_complete(rq, ptr_key(rq, PROG_RQ_COMPLETE)); }

/* A request merged into another is freed without block_io_done; the kernel
 * takes it out of its in-flight count here, and so do we. */
static __always_inline int acct_merged(__u64 key) {
  if (!armed || !key) return 0;
  __u64 now = bpf_ktime_get_ns();
  struct ioacct_rq *e = rq_find(key);
  struct ioacct_rq c;
  if (!e || !e->acct || !rq_take(e, key, &c)) return 0;
  both(&c, SPAN_ACCT, -1, EV_NONE, now, 0);
  return 0;
}

SEC("tp_btf/block_rq_merge")
int BPF_PROG(on_rq_merge, struct request *rq) { return acct_merged(ptr_key(rq, PROG_RQ_MERGE)); }

/* Run by the reader (BPF_PROG_TEST_RUN) before each read: every slot still
 * counted in flight is checked against its request, so that a lost
 * completion on a device that went idle, or deep in a queue, is found by the
 * next report rather than when the struct is used again (~65536 slot reads,
 * ~0.1 ms). A raw_tp program, attached nowhere: a tp_btf one cannot be
 * test-run. */
static long sweep_slot(__u64 i, void *ctx) {
  __u32 idx = (__u32)i;
  struct ioacct_rq *e = bpf_map_lookup_elem(&reqs, &idx);
  if (!e) return 1;
  __u64 k = e->key;
  if (!k || (k & 1) || !(e->acct || e->issued)) return 0;
  if (rq_gone(k, e->start)) end_lost(e, k, bpf_ktime_get_ns());
  return 0;
}

SEC("raw_tp")
int sweep(void *ctx) {
  if (armed) bpf_loop(IOACCT_RQ_SLOTS, sweep_slot, 0, 0);
  return 0;
}
