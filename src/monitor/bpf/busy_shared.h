/* The layout shared by the BPF program (busy.bpf.c) and its reader
 * (busy_tracker.cpp). C, so that both compilers read the same text. */
#ifndef IOACCT_BUSY_SHARED_H
#define IOACCT_BUSY_SHARED_H

#include <linux/bpf.h>
#include <linux/types.h>

#define IOACCT_MAX_DEVICES 64
#define IOACCT_NO_DEVICE 0xffffffffu
#define IOACCT_DEPTH_BUCKETS 6 /* in flight: 0, 1, 2-3, 4-7, 8-15, 16+ */
/* Requests in flight are remembered in an open-addressing table (an array:
 * its lookups are inlined, a hash map's cost a helper call, a hash and a
 * bucket lock each): a hash of the pointer picks a group of IOACCT_PROBES
 * slots (128 bytes, two cache lines), and a free one is claimed with a
 * compare-and-swap. At 65536 slots and a few hundred requests in flight a
 * full group is a one-in-millions event (counted as untracked). */
#define IOACCT_RQ_SLOTS (1u << 16)
#define IOACCT_PROBES 4

/* Latency buckets, log-linear: [0, 2^MIN_EXP) is bucket 0, then every power
 * of two up to 2^(MIN_EXP+EXPS) is split into 2^SUB_BITS equal parts, then
 * one bucket for everything above (~69 s). */
#define IOACCT_LAT_SUB_BITS 3
#define IOACCT_LAT_MIN_EXP 10
#define IOACCT_LAT_EXPS 26
#define IOACCT_LAT_BUCKETS (2 + IOACCT_LAT_EXPS * (1 << IOACCT_LAT_SUB_BITS))

/* A span's in-flight count and the stamp of its last change, packed in one
 * word so that a change is one compare-and-swap (no lock: bpf_spin_lock and
 * its unlock are two helper calls, ~80 ns here, on each of the four events
 * of an I/O). The stamp is bpf_ktime_get_ns >> IOACCT_STAMP_SHIFT (8 ns
 * units, 2^50 of them: 285 years of uptime); the count saturates at
 * IOACCT_COUNT_MASK (16383 in flight on one device). */
#define IOACCT_COUNT_BITS 14
#define IOACCT_COUNT_MASK ((1ull << IOACCT_COUNT_BITS) - 1)
#define IOACCT_STAMP_SHIFT 3
#define IOACCT_WORD(stamp_ns, count) ((((__u64)(stamp_ns) >> IOACCT_STAMP_SHIFT) << IOACCT_COUNT_BITS) | (count))
#define IOACCT_WORD_COUNT(w) ((w) & IOACCT_COUNT_MASK)
#define IOACCT_WORD_STAMP_NS(w) (((w) >> IOACCT_COUNT_BITS) << IOACCT_STAMP_SHIFT)
#define IOACCT_CAS_TRIES 16

/* One per watched device, shared by all CPUs. A change wins the word's CAS,
 * then adds the span it closed to the sums; `*_pending` counts changes
 * between those two steps, so a reader that sees it 0 in two equal copies
 * has a consistent snapshot. The accounting span (block_io_start ..
 * block_io_done) fills the first cache line, the device span (block_rq_issue
 * .. block_rq_complete) the third. Stamps are bpf_ktime_get_ns (CLOCK_MONOTONIC). */
struct ioacct_dev {
  __u64 acct_word, acct_pending, acct_busy;
  /* The time a lost completion (struct ioacct_cnt) was the only request
   * counted in flight: left out of acct_busy, so the true busy time lies in
   * [acct_busy, acct_busy + unsure]. */
  __u64 unsure;
  __u64 depth_ns[IOACCT_DEPTH_BUCKETS];
  __u64 pad1[6];
  __u64 dev_word, dev_pending, dev_busy;
  __u64 pad2[5];
};

/* Per device and per CPU (a per-CPU array: no shared line to bounce), summed
 * by the reader. `lost`: completions the kernel ran none of our programs for
 * (it skips BPF tracepoint programs now and then under load; docs/design.md,
 * "Lost completions"), found later from the request's own state.
 * `contended`: changes that lost the CAS race IOACCT_CAS_TRIES times in a
 * row and were dropped (the figures are off when it is not 0). */
struct ioacct_cnt {
  __u64 started, done, untracked, lost, lat_sum, lat_max, contended;
};

/* The last few requests started on a device, looked at again when the next
 * one starts while the device still counts one in flight: at low depth that
 * is where a lost completion shows, and finding it there bounds the error
 * by one gap between requests. Written without a lock: a torn pair is
 * recognised (the slot's own start differs) and skipped. */
#define IOACCT_RECENT 4
struct ioacct_recent {
  __u64 key[IOACCT_RECENT];
  __u64 start[IOACCT_RECENT];
  __u64 next, checked;
};

/* Latency counts, one array per device; plain atomic adds, no lock. */
struct ioacct_lat {
  __u64 count[IOACCT_LAT_BUCKETS];
};

/* One per request in flight, keyed by its struct request pointer (0: free). */
struct ioacct_rq {
  __u64 key;
  __u64 start;  /* block_io_start stamp */
  __u32 disk, part; /* indexes into the device arrays, or IOACCT_NO_DEVICE */
  __u8 acct;   /* between block_io_start and block_io_done */
  __u8 issued; /* between block_rq_issue and block_rq_complete */
  __u8 pad[6];
};

#endif
