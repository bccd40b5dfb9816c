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

/* One per watched device, updated under `lock` and read with BPF_F_LOCK so
 * that a snapshot is consistent. Stamps are bpf_ktime_get_ns (CLOCK_MONOTONIC). */
struct ioacct_dev {
  struct bpf_spin_lock lock;
  __u32 pad;
  /* The accounting span (block_io_start .. block_io_done). */
  __u64 acct_count, acct_last, acct_busy;
  __u64 depth_ns[IOACCT_DEPTH_BUCKETS];
  /* The device span (block_rq_issue .. block_rq_complete). */
  __u64 dev_count, dev_last, dev_busy;
  __u64 started, done, untracked;
  __u64 lat_sum, lat_max;
  /* Completions the kernel ran none of our programs for (it skips BPF
   * tracepoint programs now and then under load; docs/design.md, "Lost
   * completions"), found later from the request's own state, and the time
   * that was then left out of acct_busy because only such a request was
   * counted in flight: the true busy time lies in [acct_busy, acct_busy + unsure]. */
  __u64 lost, unsure;
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
