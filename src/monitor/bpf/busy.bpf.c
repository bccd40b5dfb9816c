// SPDX-License-Identifier: GPL-2.0
/* Exact busy time per block device, aggregated in the kernel: no per-I/O
 * event crosses to user space. See docs/design.md ("Exact busy time").
 *
 * Per request (keyed by its struct request pointer) the program remembers
 * where it is; per device it keeps, under a bpf_spin_lock, how many requests
 * are in flight and since when, so each change adds the time since the last
 * change to busy_ns (when >= 1 was in flight) and to the depth bucket. */
#include "kernel_types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "busy_shared.h"

char LICENSE[] SEC("license") = "GPL"; /* bpf_spin_lock and tp_btf need it */

/* Set before load. acct_from_rq: the kernel has no block_io_start/done
 * (before 6.5), so the accounting span is taken from issue..complete. */
const volatile __u8 acct_from_rq = 0;
const volatile __u8 latency = 0;
/* Set by user space once every program is attached, so that no request is
 * half-seen because its start came before the program for its end existed. */
volatile __u8 armed = 0;

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IOACCT_MAX_DEVICES);
  __type(key, __u32);   /* kernel dev_t: major << 20 | minor */
  __type(value, __u32); /* index into stats */
} devs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IOACCT_MAX_DEVICES);
  __type(key, __u32);
  __type(value, struct ioacct_dev);
} stats SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, IOACCT_MAX_DEVICES);
  __type(key, __u32);
  __type(value, struct ioacct_lat);
} lat SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, IOACCT_MAX_REQUESTS);
  __type(key, __u64);
  __type(value, struct ioacct_rq);
} reqs SEC(".maps");

static __always_inline __u32 dev_index(__u32 dev) {
  __u32 *i = bpf_map_lookup_elem(&devs, &dev);
  return i ? *i : IOACCT_NO_DEVICE;
}

/* The whole disk and, when different and watched, the partition. */
static __always_inline void rq_devices(struct request *rq, __u32 *disk, __u32 *part) {
  struct gendisk *g = BPF_CORE_READ(rq, q, disk);
  __u32 d = 0, p = 0;
  if (g) d = ((__u32)BPF_CORE_READ(g, major) << 20) | (__u32)BPF_CORE_READ(g, first_minor);
  struct block_device *bd = BPF_CORE_READ(rq, part);
  if (bd) p = BPF_CORE_READ(bd, bd_dev);
  *disk = g ? dev_index(d) : IOACCT_NO_DEVICE;
  *part = (bd && p != d) ? dev_index(p) : IOACCT_NO_DEVICE;
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
enum { EV_NONE = 0, EV_START = 1, EV_DONE = 2, EV_UNTRACKED = 3 };

/* One change of a device's in-flight count. `now` was read before the lock
 * (no helper may be called while holding it), so another CPU may already
 * have moved `last` past it: such a stamp is clamped to `last`, which keeps
 * the sum of the spans equal to the time since attach and never negative. */
static __always_inline void change(__u32 idx, int span, int delta, int ev, __u64 now, __u64 lat_ns) {
  if (idx >= IOACCT_MAX_DEVICES) return;
  struct ioacct_dev *d = bpf_map_lookup_elem(&stats, &idx);
  if (!d) return;
  if (ev == EV_DONE && latency) {
    struct ioacct_lat *l = bpf_map_lookup_elem(&lat, &idx);
    __u32 b = lat_bucket(lat_ns);
    if (l && b < IOACCT_LAT_BUCKETS) __sync_fetch_and_add(&l->count[b], 1);
  }
  bpf_spin_lock(&d->lock);
  if (span == SPAN_ACCT) {
    if (now < d->acct_last) now = d->acct_last;
    __u64 dt = now - d->acct_last;
    if (d->acct_count) d->acct_busy += dt;
    int b = depth_bucket(d->acct_count);
    if (b >= 0 && b < IOACCT_DEPTH_BUCKETS) d->depth_ns[b] += dt;
    d->acct_last = now;
    if (delta > 0) d->acct_count++;
    else if (delta < 0 && d->acct_count) d->acct_count--;
  } else if (span == SPAN_DEV) {
    if (now < d->dev_last) now = d->dev_last;
    if (d->dev_count) d->dev_busy += now - d->dev_last;
    d->dev_last = now;
    if (delta > 0) d->dev_count++;
    else if (delta < 0 && d->dev_count) d->dev_count--;
  }
  if (ev == EV_START) d->started++;
  if (ev == EV_DONE) {
    d->done++;
    d->lat_sum += lat_ns;
    if (lat_ns > d->lat_max) d->lat_max = lat_ns;
  }
  if (ev == EV_UNTRACKED) d->untracked++;
  bpf_spin_unlock(&d->lock);
}

static __always_inline void both(struct ioacct_rq *r, int span, int delta, int ev, __u64 now, __u64 lat_ns) {
  change(r->disk, span, delta, ev, now, lat_ns);
  change(r->part, span, delta, ev, now, lat_ns);
}

static __always_inline int acct_start(struct request *rq) {
  if (!armed) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  struct ioacct_rq r = {.start = now};
  rq_devices(rq, &r.disk, &r.part);
  if (r.disk == IOACCT_NO_DEVICE && r.part == IOACCT_NO_DEVICE) return 0;
  struct ioacct_rq *old = bpf_map_lookup_elem(&reqs, &key);
  if (old && old->acct) { /* a start twice: keep one count, restart its clock */
    old->start = now;
    return 0;
  }
  if (old) {
    old->start = now;
    old->acct = 1;
  } else {
    r.acct = 1;
    if (bpf_map_update_elem(&reqs, &key, &r, BPF_NOEXIST)) {
      both(&r, -1, 0, EV_UNTRACKED, now, 0); /* table full: counted, not timed */
      return 0;
    }
  }
  both(&r, SPAN_ACCT, 1, EV_START, now, 0);
  return 0;
}

static __always_inline int acct_done(struct request *rq) {
  if (!armed) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  struct ioacct_rq *r = bpf_map_lookup_elem(&reqs, &key);
  if (!r || !r->acct) {
    /* Started before attach: not timed, but said. */
    struct ioacct_rq u = {};
    rq_devices(rq, &u.disk, &u.part);
    both(&u, -1, 0, EV_UNTRACKED, now, 0);
    return 0;
  }
  struct ioacct_rq c = *r;
  if (c.issued) { /* completed without block_rq_complete (should not happen) */
    both(&c, SPAN_DEV, -1, EV_NONE, now, 0);
  }
  bpf_map_delete_elem(&reqs, &key);
  both(&c, SPAN_ACCT, -1, EV_DONE, now, now > c.start ? now - c.start : 0);
  return 0;
}

static __always_inline int dev_issue(struct request *rq) {
  if (!armed) return 0;
  if (acct_from_rq) acct_start(rq);
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  struct ioacct_rq *r = bpf_map_lookup_elem(&reqs, &key);
  struct ioacct_rq c;
  if (r) {
    if (r->issued) return 0; /* issued again after a requeue: one span */
    r->issued = 1;
    c = *r;
  } else { /* not seen starting (a flush, or started before attach) */
    struct ioacct_rq n = {.issued = 1};
    rq_devices(rq, &n.disk, &n.part);
    if (n.disk == IOACCT_NO_DEVICE && n.part == IOACCT_NO_DEVICE) return 0;
    if (bpf_map_update_elem(&reqs, &key, &n, BPF_NOEXIST)) return 0;
    c = n;
  }
  both(&c, SPAN_DEV, 1, EV_NONE, now, 0);
  return 0;
}

static __always_inline int dev_complete(struct request *rq) {
  if (!armed) return 0;
  __u64 now = bpf_ktime_get_ns();
  __u64 key = (__u64)rq;
  struct ioacct_rq *r = bpf_map_lookup_elem(&reqs, &key);
  if (r && r->issued) {
    r->issued = 0;
    struct ioacct_rq c = *r;
    both(&c, SPAN_DEV, -1, EV_NONE, now, 0);
    if (!c.acct) bpf_map_delete_elem(&reqs, &key);
  }
  if (acct_from_rq) acct_done(rq);
  return 0;
}

SEC("tp_btf/block_io_start")
int BPF_PROG(on_io_start, struct request *rq) { return acct_start(rq); }

SEC("tp_btf/block_io_done")
int BPF_PROG(on_io_done, struct request *rq) { return acct_done(rq); }

SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_rq_issue, struct request *rq) { return dev_issue(rq); }

SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_rq_complete, struct request *rq, int error, unsigned int nr_bytes) { return dev_complete(rq); }
