// SPDX-License-Identifier: GPL-2.0
/* bench --anatomy: where each microsecond of an I/O goes. Each program stamps
 * one tracepoint's time into the I/O's slot (anatomy_shared.h); the bench
 * thread reads the slot when it reaps the completion. See docs/design.md
 * ("Anatomy of an I/O").
 *
 * Only the bench's own threads are followed: the programs that run in the
 * submitting task test its tgid first, and the rest find the I/O through a
 * key the submitting side left (the ring, or the block request). */
#include <linux/bpf.h>

#include "anatomy_types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "anatomy_shared.h"

char LICENSE[] SEC("license") = "GPL"; /* tp_btf needs it */

/* Set before load. */
const volatile __u32 tgid = 0;      /* the bench process */
const volatile __u32 stride = 1;    /* slots per thread: its depth */
const volatile __u32 sys_read = 0;  /* the psync family's syscalls (pread64, pwrite64; read, write; ...) */
const volatile __u32 sys_write = 0;

/* Block requests of the bench started by a thread that is not a bench thread
 * (an io-wq worker) or outside a submission: not linked to an I/O. */
__u64 foreign_requests = 0;

const volatile __u32 tid_mask = 0;
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1); /* sized at load: tid_mask + 1 */
  __type(key, __u32);
  __type(value, struct ioacct_anat_tid);
} tids SEC(".maps");

/* The index of bench thread `tid`, or NULL: an inlined array lookup or two
 * (a hash map's lookup is a helper call, four times per I/O). */
static __always_inline __u32 *thread_index(__u32 tid) {
  __u32 h = ioacct_anat_tid_hash(tid);
  for (__u32 i = 0; i < IOACCT_ANAT_PROBES; ++i) {
    __u32 k = (h + i) & tid_mask;
    struct ioacct_anat_tid *e = bpf_map_lookup_elem(&tids, &k);
    if (!e || e->tid == 0) return 0;
    if (e->tid == tid) return &e->idx;
  }
  return 0;
}

struct {
  __uint(type, BPF_MAP_TYPE_HASH);
  __uint(max_entries, 1); /* sized at load */
  __type(key, __u64);     /* struct io_ring_ctx * */
  __type(value, __u32);   /* the thread's index */
} rings SEC(".maps");

/* Requests in flight, to their I/O's slot: an open-addressing table in an
 * array (sized at load to a power of two, four times the I/Os that can be in
 * flight), whose lookups the verifier inlines. A hash map's lookup, update and
 * delete are helper calls, and an LRU one's take a lock
 * (bench/history/2026-12.md, "The request table in an array":
 * the programs' time per I/O fell 0.11 µs at depth 1, 0.26 µs at depth 32,
 * without them). A request is looked for in the
 * IOACCT_ANAT_PROBES entries from its hash on; a free one (rq 0) is claimed
 * with a compare-and-swap, and when none is free the first is taken over
 * (the entry of a request merged into another, which never completes, is
 * reused that way). */
const volatile __u32 req_mask = 0;
struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1); /* sized at load: req_mask + 1 */
  __type(key, __u32);
  __type(value, struct ioacct_anat_req);
} reqs SEC(".maps");

/* A request's tag: the scheduler's when the queue has one, else the
 * driver's; either is set when the request is allocated and kept until it is
 * freed, and tags are small and dense, so the tag itself spreads the requests
 * of one tag set over the table. (The verifier allows no arithmetic on the
 * request's address but adding and subtracting.) */
static __always_inline __u32 req_hash(struct request *rq) {
  int t = rq->internal_tag;
  if (t < 0) t = rq->tag;
  return (__u32)t;
}

static __always_inline struct ioacct_anat_req *req_find(struct request *r) {
  __u64 rq = (__u64)r;
  __u32 h = req_hash(r);
  for (__u32 i = 0; i < IOACCT_ANAT_PROBES; ++i) {
    __u32 k = (h + i) & req_mask;
    struct ioacct_anat_req *e = bpf_map_lookup_elem(&reqs, &k);
    if (e && e->rq == rq) return e;
  }
  return 0;
}

static __always_inline void req_add(struct request *r, __u32 slot) {
  __u64 rq = (__u64)r;
  __u32 h = req_hash(r);
  for (__u32 i = 0; i < IOACCT_ANAT_PROBES; ++i) {
    __u32 k = (h + i) & req_mask;
    struct ioacct_anat_req *e = bpf_map_lookup_elem(&reqs, &k);
    if (e && (e->rq == rq || __sync_val_compare_and_swap(&e->rq, 0, rq) == 0)) {
      e->slot = slot;
      return;
    }
  }
  __u32 k = h & req_mask;
  struct ioacct_anat_req *e = bpf_map_lookup_elem(&reqs, &k);
  if (e) {
    e->slot = slot;
    e->rq = rq;
  }
}

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1); /* sized at load: threads * stride */
  __type(key, __u32);
  __type(value, struct ioacct_anat_slot);
} slots SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1); /* sized at load: threads */
  __type(key, __u32);
  __type(value, struct ioacct_anat_thread);
} threads SEC(".maps");

/* The bench thread running now, or NULL. */
static __always_inline __u32 *current_thread(void) {
  __u64 id = bpf_get_current_pid_tgid();
  if ((__u32)(id >> 32) != tgid) return 0;
  __u32 tid = (__u32)id;
  return thread_index(tid);
}

/* A fresh slot for the I/O being submitted: its stamps from earlier I/Os with
 * the same tag are cleared, and block requests started from now on are its. */
static __always_inline void begin(__u32 idx, __u32 tag, __u64 t) {
  if (tag >= stride) return;
  __u32 s = idx * stride + tag;
  struct ioacct_anat_slot *sl = bpf_map_lookup_elem(&slots, &s);
  struct ioacct_anat_thread *th = bpf_map_lookup_elem(&threads, &idx);
  if (!sl || !th) return;
  sl->t[IOACCT_ANAT_SUBMIT] = t;
  sl->t[IOACCT_ANAT_IO_START] = 0;
  sl->t[IOACCT_ANAT_RQ_ISSUE] = 0;
  sl->t[IOACCT_ANAT_RQ_COMPLETE] = 0;
  sl->t[IOACCT_ANAT_POST] = 0;
  sl->nreq = 0;
  th->cur_slot = s;
}

static __always_inline void stamp(__u32 s, int which, __u64 t) {
  struct ioacct_anat_slot *sl = bpf_map_lookup_elem(&slots, &s);
  if (sl && which < IOACCT_ANAT_STAMPS) sl->t[which] = t;
}

SEC("tp_btf/io_uring_submit_req")
int BPF_PROG(on_submit_req, struct io_kiocb *req) {
  __u32 *idx = current_thread();
  if (!idx) return 0;
  __u64 t = bpf_ktime_get_ns();
  __u32 i = *idx;
  /* The ring's entry in the rings map, made once: the thread's record says
   * which ring it has entered (an array lookup, where the map is a hash). */
  __u64 ring = (__u64)req->ctx;
  struct ioacct_anat_thread *th = bpf_map_lookup_elem(&threads, &i);
  if (th && th->ring != ring) {
    bpf_map_update_elem(&rings, &ring, &i, BPF_ANY);
    th->ring = ring;
  }
  begin(i, (__u32)req->cqe.user_data, t);
  return 0;
}

/* The CQE is about to be written. `req` is a plain pointer in this
 * tracepoint (6.18: ctx, req, cqe; before: ctx, req, user_data, ...), so
 * its user_data is read with a probe read. Completions of the bench's rings
 * run in its own threads (task work, DEFER_TASKRUN's local work, io-wq). */
SEC("tp_btf/io_uring_complete")
int BPF_PROG(on_complete, void *ring, void *req) {
  __u64 id = bpf_get_current_pid_tgid();
  if ((__u32)(id >> 32) != tgid || !req) return 0;
  __u64 t = bpf_ktime_get_ns();
  /* Most completions are posted by the thread that owns the ring (task
   * work, DEFER_TASKRUN's local work): its own record names the ring, and
   * finding it takes inlined array lookups. Any other thread of the bench
   * (an io-wq worker) finds the ring's owner in the rings map, a helper
   * call. */
  __u32 i;
  __u32 *idx = thread_index((__u32)id);
  struct ioacct_anat_thread *th = idx ? bpf_map_lookup_elem(&threads, idx) : 0;
  if (th && th->ring == (__u64)ring) {
    i = *idx;
  } else {
    __u64 key = (__u64)ring;
    __u32 *owner = bpf_map_lookup_elem(&rings, &key);
    if (!owner) return 0;
    i = *owner;
  }
  __u32 tag = (__u32)BPF_CORE_READ((struct io_kiocb *)req, cqe.user_data);
  if (tag >= stride) return 0;
  stamp(i * stride + tag, IOACCT_ANAT_POST, t);
  return 0;
}

/* A request starts in the context of the task that submits its bio: for an
 * I/O issued inline, the bench thread, between the I/O's submission stamp
 * and the next. */
SEC("tp_btf/block_io_start")
int BPF_PROG(on_io_start, struct request *rq) {
  if ((__u32)(bpf_get_current_pid_tgid() >> 32) != tgid) return 0;
  __u64 t = bpf_ktime_get_ns();
  __u32 *idx = current_thread();
  struct ioacct_anat_thread *th = idx ? bpf_map_lookup_elem(&threads, idx) : 0;
  __u32 s = th ? th->cur_slot : IOACCT_ANAT_NONE;
  struct ioacct_anat_slot *sl = s != IOACCT_ANAT_NONE ? bpf_map_lookup_elem(&slots, &s) : 0;
  if (!sl) {
    __sync_fetch_and_add(&foreign_requests, 1);
    return 0;
  }
  if (sl->nreq++ == 0) {  /* the I/O's first request is the one followed */
    sl->t[IOACCT_ANAT_IO_START] = t;
    req_add(rq, s);
  }
  return 0;
}

SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_rq_issue, struct request *rq) {
  struct ioacct_anat_req *e = req_find(rq);
  if (!e) return 0;
  stamp(e->slot, IOACCT_ANAT_RQ_ISSUE, bpf_ktime_get_ns());
  return 0;
}

SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_rq_complete, struct request *rq) {
  struct ioacct_anat_req *e = req_find(rq);
  if (!e) return 0;
  stamp(e->slot, IOACCT_ANAT_RQ_COMPLETE, bpf_ktime_get_ns());
  e->rq = 0; /* free: the struct is used again by a later request */
  return 0;
}

/* psync: the syscall's entry and exit take the place of the io_uring stamps
 * (one I/O in flight per thread: its slot is the thread's first). */
SEC("tp_btf/sys_enter")
int BPF_PROG(on_sys_enter, struct pt_regs *regs, long id) {
  if (id != sys_read && id != sys_write) return 0;
  __u32 *idx = current_thread();
  if (!idx) return 0;
  __u64 t = bpf_ktime_get_ns();
  __u32 i = *idx;
  begin(i, 0, t);
  struct ioacct_anat_thread *th = bpf_map_lookup_elem(&threads, &i);
  if (th) th->in_sys = 1;
  return 0;
}

SEC("tp_btf/sys_exit")
int BPF_PROG(on_sys_exit, struct pt_regs *regs, long ret) {
  __u32 *idx = current_thread();
  if (!idx) return 0;
  __u32 i = *idx;
  struct ioacct_anat_thread *th = bpf_map_lookup_elem(&threads, &i);
  if (!th || !th->in_sys) return 0;
  stamp(i * stride, IOACCT_ANAT_POST, bpf_ktime_get_ns());
  th->in_sys = 0;
  th->cur_slot = IOACCT_ANAT_NONE;
  return 0;
}

/* Wake-up: the thread put on a run queue, then onto a CPU. */
SEC("tp_btf/sched_wakeup")
int BPF_PROG(on_wakeup, struct task_struct *p) {
  if ((__u32)p->tgid != tgid) return 0;
  __u32 tid = (__u32)p->pid;
  __u32 *idx = thread_index(tid);
  if (!idx) return 0;
  struct ioacct_anat_thread *th = bpf_map_lookup_elem(&threads, idx);
  if (th) th->wake = bpf_ktime_get_ns();
  return 0;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, _Bool preempt, struct task_struct *prev, struct task_struct *next) {
  if ((__u32)next->tgid != tgid) return 0;
  __u32 tid = (__u32)next->pid;
  __u32 *idx = thread_index(tid);
  if (!idx) return 0;
  struct ioacct_anat_thread *th = bpf_map_lookup_elem(&threads, idx);
  if (th) th->run = bpf_ktime_get_ns();
  return 0;
}
