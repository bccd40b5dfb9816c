/* The layout shared by the anatomy programs (anatomy.bpf.c) and their reader
 * (trace/anatomy.cpp), for bench --anatomy. C, so that both compilers read
 * the same text.
 *
 * The programs stamp each I/O's passage through the kernel's tracepoints into
 * a slot of their own, indexed by the bench thread and the request's tag (the
 * low 32 bits of its user_data); the bench thread reads the slot, mapped into
 * its memory, when it reaps the completion. No record is queued, nothing is
 * aggregated in the kernel, and no syscall is made per I/O. See
 * docs/design.md ("Anatomy of an I/O"). */
#ifndef IOACCT_ANATOMY_SHARED_H
#define IOACCT_ANATOMY_SHARED_H

#include <linux/types.h>

#define IOACCT_ANAT_NONE 0xffffffffu
#define IOACCT_ANAT_PROBES 8 /* entries looked at from a key's hash on, in the tids and reqs tables */

/* The stamps of one I/O (bpf_ktime_get_ns: CLOCK_MONOTONIC), 0 when the
 * program did not run for it. */
enum {
  IOACCT_ANAT_SUBMIT = 0,      /* io_uring:io_uring_submit_req; psync: the pread/pwrite syscall's entry */
  IOACCT_ANAT_IO_START = 1,    /* block:block_io_start of its first block request */
  IOACCT_ANAT_RQ_ISSUE = 2,    /* block:block_rq_issue of that request */
  IOACCT_ANAT_RQ_COMPLETE = 3, /* block:block_rq_complete of that request */
  IOACCT_ANAT_POST = 4,        /* io_uring:io_uring_complete (its CQE is posted); psync: the syscall's exit */
  IOACCT_ANAT_STAMPS = 5,
};

/* One per bench thread and unit of its depth: entry thread * stride + tag.
 * Reset by the submission stamp, so a slot only ever holds the stamps of the
 * request last submitted with that tag. */
struct ioacct_anat_slot {
  __u64 t[IOACCT_ANAT_STAMPS];
  __u32 nreq;  /* block requests started on its behalf (a split I/O has more than one) */
  __u32 pad0;
  __u64 pad[2];
};

/* One per bench thread (its index in the runner). */
/* The bench threads, by tid: an open-addressing table in an array (the
 * `tids` map), sized at load to a power of two at least four times the
 * threads and filled by the reader before the run. A thread is in one of the
 * IOACCT_ANAT_PROBES entries from its hash on; tid 0 marks a free entry. */
struct ioacct_anat_tid {
  __u32 tid;
  __u32 idx; /* the thread's index */
};
static inline __u32 ioacct_anat_tid_hash(__u32 tid) { return (tid * 0x9E3779B1u) >> 8; }

/* A block request of a bench I/O, to the I/O's slot (the `reqs` table). */
struct ioacct_anat_req {
  __u64 rq; /* struct request *; 0: free */
  __u32 slot;
  __u32 pad;
};

struct ioacct_anat_thread {
  __u64 wake;     /* sched:sched_wakeup of the thread, the latest */
  __u64 run;      /* sched:sched_switch onto a CPU, the latest */
  __u32 cur_slot; /* the slot being submitted (block requests started now are its), or IOACCT_ANAT_NONE */
  __u32 in_sys;   /* psync: inside a pread/pwrite */
  __u64 ring;     /* the ring (struct io_ring_ctx *) last entered in the rings map for this thread */
  __u64 pad[4];
};

#endif
