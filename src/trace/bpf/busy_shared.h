/* The layout shared by the BPF programs (busy.bpf.c) and their reader
 * (busy_tracker.cpp). C, so that both compilers read the same text.
 *
 * The programs aggregate nothing: each event appends one record to a log of
 * its own program and CPU, and the reader merges the logs into exact
 * intervals (docs/design.md, "Exact busy time"). Every map is sized at load
 * from the number of devices and CPUs; nothing here limits how many devices
 * are watched. */
#ifndef IOACCT_BUSY_SHARED_H
#define IOACCT_BUSY_SHARED_H

#include <linux/types.h>

#define IOACCT_NO_DEVICE 0xffffffffu

/* The watched devices: an open-addressing table (an array: its lookups are
 * inlined, a hash map's cost a call) keyed by the kernel's dev_t
 * (major << 20 | minor), sized at load to a power of two at least four times
 * the devices, so a lookup looks at one or two slots. dev 0 marks a free slot
 * (major 0 is never a block device). A whole disk with a watched partition is
 * in the table even when the disk itself is not watched (`idx` then
 * IOACCT_NO_DEVICE): the done program finds a request by its disk, then looks
 * at its partition. */
struct ioacct_watch {
  __u32 dev;
  __u32 idx;   /* the device's index in the reader's list, or IOACCT_NO_DEVICE */
  __u32 parts; /* 1: a partition of this disk is watched (the done program looks at rq->part) */
  __u32 pad;
};

/* Where the table's probing for `dev` starts (then the next slots, masked):
 * the programs look up and the reader fills in the same order. */
static inline __u32 ioacct_watch_hash(__u32 dev) { return (dev * 0x9E3779B1u) >> 7; }

/* One log per program and CPU, each a ring of IOACCT records in one array:
 * the log of program k on CPU c owns the `slots` entries from
 * (k * n_cpus + c) * slots, its head's `base`. One writer each: a program
 * never runs nested in itself on a CPU (the kernel skips such a run and
 * counts it in recursion_misses). The writer fills the record, then publishes
 * it by advancing `head` (busy.bpf.c says how it orders the two); the reader
 * copies records up to the head it read and then stores its `tail`. A full
 * log drops the record and counts it (`dropped`, and for a completion the
 * time it covered, so that the reader can still bound it).
 *
 * No program runs where a request starts: one in the submitting task costs
 * it 5-8% of its IOPS at depth 32 here, even empty (docs/design.md, "What it
 * costs"). The reader finds requests in flight by walking the queue's
 * requests instead (`sweep`). */
enum {
  IOACCT_LOG_DONE = 0,  /* block_io_done: a request left the span, with the kernel's own start stamp */
  IOACCT_LOG_MERGE = 1, /* block_rq_merge: it was merged into another request and left */
  IOACCT_LOG_ISSUE = 2, /* block_rq_issue (dev% only): the driver got it */
  IOACCT_LOG_ATTR = 3,  /* block_rq_complete (attribution only): whose request it was, and its bytes */
  IOACCT_LOG_PROC = 4,  /* block_io_start (by process only): the task that submitted it */
  IOACCT_LOGS = 5,
};

struct ioacct_rec {
  __u64 rq;   /* the struct request's address: the key that pairs a request's records */
  __u64 s;    /* DONE, MERGE: rq->start_time_ns, the stamp diskstats itself uses (CLOCK_MONOTONIC) */
  __u64 t;    /* DONE, MERGE, ISSUE: bpf_ktime_get_ns() at the event; the reader's sort key */
  __u32 disk; /* the whole disk's index, IOACCT_NO_DEVICE when only a partition is watched */
  __u32 part; /* DONE: the partition's index when watched, else IOACCT_NO_DEVICE;
               * IOACCT_UNACCOUNTED: ended without accounting */
};
#define IOACCT_UNACCOUNTED 0xfffffffeu
/* The attribution logs reuse the record's fields (one record size, one
 * drain for every log):
 * - ATTR: rq; s = the cgroup's id (its kernfs node id, 0: no bio or no
 *   blkcg), not a stamp; t = rq->start_time_ns, not a clock read: the
 *   request's own stamp, which its DONE record's `s` is too, so the pair
 *   is (rq, stamp); the reader feeds the ATTR records in stamp order as it
 *   walks the DONE records in time order, so that a struct's records wait
 *   in a map as small as the requests in flight; disk = the bytes completed
 *   (a request completed in parts has several records); part = the op
 *   (REQ_OP_*).
 * - PROC: rq; s = rq->start_time_ns at block_io_start (the struct's
 *   previous request's stamp where the kernel stamps after the tracepoint,
 *   as 6.18 does; else the request's own); t = s, not a clock read (the
 *   reader's sort key); disk = the submitting task's tgid (0: a kernel
 *   thread, such as the flusher); part = 1 when s is the request's own
 *   stamp (it was flagged for io stat already), else 0. */
#define IOACCT_OP_MASK 0xffu

/* By process: the name of each submitting process as its first request
 * found it (bpf_get_current_comm: the submitting thread's), by tgid, for a
 * process gone before the reader could read /proc/PID/comm. */
#define IOACCT_COMMS 4096
struct ioacct_comm {
  char comm[16];
};

/* Per log and CPU, one cache line: `head`, `dropped*` written by its
 * program, `tail` by the reader, and everything else a program reads before
 * its record, set by the reader: `armed` once every program is attached, the
 * rest before. At depth 1 a program finds the lines it touches gone from the
 * cache since the last I/O, and each costs ~50 ns here: the settings in a
 * line of their own (.bss) cost each run one more miss than this copy per
 * log (docs/design.md, "One line read first"). Sharing the line with `tail`
 * costs the program a miss only after the reader has emptied the log (every
 * few ms at most). The entry of program `log` on CPU `cpu` is
 * heads[cpu * IOACCT_LOGS + log]: no setting needed to find it. */
/* `armed`: 0 until every program is attached, then 1. The bits from
 * IOACCT_ARM_SKIP_SHIFT up hold a mask, 0 but in the witness tests
 * (IOACCT_TEST_SKIP_DONE=2^k): the done program then logs no record for one
 * completion in 2^k, as when the kernel skips its run, so that the tests can
 * hold the bound for such completions to a tracefs witness. */
#define IOACCT_ARM_SKIP_SHIFT 8

struct ioacct_head {
  __u64 head;
  __u64 dropped;
  union {
    __u64 dropped_ns; /* DONE: the time the dropped completions covered (s..t, summed) */
    /* PROC: the two processes (tgids) whose names this CPU's program last
     * found noted, the latest first: a process that goes on submitting from
     * this CPU is looked up in `comms` only once, not at each request. */
    __u32 noted[2];
  };
  __u64 tail;       /* the reader's */
  __u32 armed;
  __u32 watch_mask;          /* watch slots - 1 (a power of two) */
  __u32 slots;               /* records in this log (a power of two) */
  __u32 base;                /* this log's first record in `logs` */
  struct ioacct_watch first; /* the watch table's first device (dev 0: none): with one device the table is not read */
};
#ifdef __cplusplus
static_assert(sizeof(struct ioacct_head) == 64, "a log's head is one cache line");
#else
_Static_assert(sizeof(struct ioacct_head) == 64, "a log's head is one cache line");
#endif

/* Where a queue keeps its requests, found by the `find_tags` program (run
 * with BPF_PROG_TEST_RUN) from one request of it (any the done program
 * logged), or from the queue itself, or, at the attach, from the reader's
 * own open file of the device: the request arrays of its driver tags and of
 * its scheduler's tags, each every struct request that queue can hand out.
 * The same array may be named twice (a hardware queue's tags are also the
 * tag set's); the reader drops repeats. */
#define IOACCT_TAG_ARRAYS 20
struct ioacct_tagset {
  __u64 rq;                            /* in: a request of the queue, or 0 */
  __u64 q;                             /* in (rq 0): the queue, or 0; out: the queue */
  __u64 rqs[IOACCT_TAG_ARRAYS];        /* out: blk_mq_tags.static_rqs */
  __u32 nr[IOACCT_TAG_ARRAYS];         /* out: blk_mq_tags.nr_tags */
  __u32 n;                             /* out: arrays found */
  __u32 ok;                            /* out: 1 when the queue was read */
  __s32 fd;                            /* in (rq and q 0): the reader's open file of the device */
  __u32 dev;                           /* in (with fd): the device's dev_t, checked against the file's */
};

/* The reader's look at one struct request of a queue, filled by the `sweep`
 * program (run with BPF_PROG_TEST_RUN; a program that gets no request as an
 * argument has no typed pointer to one, so the fields are read with
 * bpf_probe_read_kernel). */
struct ioacct_probe {
  __u64 slot;          /* in: the address of a static_rqs entry */
  __u64 rq;            /* out: the request there */
  __u64 q;             /* out: rq->q (a tag set may be shared by queues) */
  __u64 start_time_ns; /* out: rq->start_time_ns */
  __u32 accounted;     /* out: 1 when the kernel accounts it (RQF_IO_STAT): its start stamp is set; 2: free, read as held by the test hook (stale_after) */
  __s32 ref;           /* out: rq->ref; 0 once the block layer freed it */
  __u32 part_dev;      /* out: rq->part->bd_dev, 0 when unset */
  __u32 ok;            /* out: 1 when every read succeeded */
  __u64 cgroup;        /* out (with `want_cgroup`): the request's cgroup id, as the ATTR record's; 0: none */
};

#endif
