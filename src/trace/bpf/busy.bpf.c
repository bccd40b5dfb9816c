// SPDX-License-Identifier: GPL-2.0
/* Exact busy time per block device: the programs only log, the reader merges.
 * See docs/design.md ("Exact busy time").
 *
 * A request's accounting span runs from block_io_start to block_io_done, the
 * points where the block layer updates /proc/diskstats. The completion
 * program logs the whole interval: the kernel's own start stamp
 * (rq->start_time_ns, which diskstats' latency uses) and one clock read. A
 * completion the kernel runs no program for is therefore an interval
 * missing, never one stretched. Nothing runs where a request starts (a
 * program there costs the submitter, docs/design.md "What it costs"): the
 * reader finds the requests in flight by walking the queue's requests
 * (`find_tags`, `sweep`), so that an open interval can be counted up to the
 * moment of a read. */
#include <linux/bpf.h>

#include "kernel_types.h"

#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "busy_shared.h"

char LICENSE[] SEC("license") = "GPL"; /* tp_btf needs it */

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(max_entries, 1); /* sized at load */
  __type(key, __u32);
  __type(value, struct ioacct_watch);
} watch SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1); /* sized at load: IOACCT_LOGS * n_cpus * log_slots */
  __type(key, __u32);
  __type(value, struct ioacct_rec);
} logs SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1); /* sized at load: IOACCT_LOGS * n_cpus, filled by the reader before attach */
  __type(key, __u32);
  __type(value, struct ioacct_head);
} heads SEC(".maps");

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1); /* sized at load */
  __type(key, __u32);
  __type(value, struct ioacct_probe);
} probes SEC(".maps");
__u32 n_probes = 0; /* set by the reader before each sweep */
/* The witness tests' stand-in for a sweep that looks at a struct taken again
 * between blk_account_io_start's two stores (flagged accounted, not stamped
 * yet: it still holds its last request's stamp): with IOACCT_TEST_STALE_SWEEP
 * set, a free struct whose last request was stamped after this (the arming
 * instant) reads as held, flagged so (accounted = 2): the reader takes
 * only those whose end a program logged, the precondition of the race (a
 * completion no program saw leaves a struct the reader cannot know ended;
 * the hook's race lasts until the struct is taken again, the real one
 * nanoseconds). 0 otherwise. */
__u64 stale_after = 0;

struct {
  __uint(type, BPF_MAP_TYPE_ARRAY);
  __uint(map_flags, BPF_F_MMAPABLE);
  __uint(max_entries, 1); /* sized at load: one per device */
  __type(key, __u32);
  __type(value, struct ioacct_tagset);
} tagsets SEC(".maps");

/* This CPU's head of program `log`'s log: the one line of ours a program
 * reads before its record (busy_shared.h). */
static __always_inline struct ioacct_head *log_head(__u32 log) {
  __u32 k = bpf_get_smp_processor_id() * IOACCT_LOGS + log;
  return bpf_map_lookup_elem(&heads, &k);
}

/* Set by the reader (an atomic store in every head) once every program is
 * attached. */
static __always_inline int armed(struct ioacct_head *h) { return *(volatile __u32 *)&h->armed; }

/* The watch entry of `dev`, or NULL: the first device's in the head, else
 * the table's. Slots are looked at until a free one: at a quarter full or
 * less that is one or two. */
static __always_inline struct ioacct_watch *watched(struct ioacct_head *hd, __u32 dev) {
  if (dev == hd->first.dev) return &hd->first;
  __u32 h = ioacct_watch_hash(dev);
  for (__u32 i = 0; i < 8; ++i) {
    __u32 k = (h + i) & hd->watch_mask;
    struct ioacct_watch *w = bpf_map_lookup_elem(&watch, &k);
    if (!w || w->dev == 0) return 0;
    if (w->dev == dev) return w;
  }
  return 0;
}

/* 6.10+ names the request flags' bits in an enum (relocated); before, they
 * were defines, stable since 6.1. */
static __always_inline __u32 rqf_io_stat(void) {
  if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_IO_STAT)) return 1u << bpf_core_enum_value(enum rqf_flags, __RQF_IO_STAT);
  return 1u << 13;
}
static __always_inline __u32 rqf_flush_seq(void) {
  if (bpf_core_enum_value_exists(enum rqf_flags, __RQF_FLUSH_SEQ)) return 1u << bpf_core_enum_value(enum rqf_flags, __RQF_FLUSH_SEQ);
  return 1u << 4;
}

static __always_inline __u32 disk_dev(struct gendisk *g) { return ((__u32)g->major << 20) | (__u32)g->first_minor; }

/* Appends a record to the log of head `h`, program `log`'s on this CPU. */
static __always_inline void append(struct ioacct_head *h, __u32 log, __u64 rq, __u64 s, __u64 t, __u32 disk,
                                   __u32 part) {
  __u64 n = h->head;
  if (n - *(volatile __u64 *)&h->tail >= h->slots) {
    __sync_fetch_and_add(&h->dropped, 1);
    if (log == IOACCT_LOG_DONE && t > s) __sync_fetch_and_add(&h->dropped_ns, t - s);
    return;
  }
  __u32 i = h->base + ((__u32)n & (h->slots - 1));
  struct ioacct_rec *r = bpf_map_lookup_elem(&logs, &i);
  if (!r) return;
  r->rq = rq;
  r->s = s;
  r->t = t;
  r->disk = disk;
  r->part = part;
  /* Publishes the record. x86 keeps stores in order, and the JIT keeps the
   * program's order, so a plain store does (an exchange costs ~50 ns more on
   * a warm line here). Elsewhere an exchange: fully ordered, and with one
   * writer per log it is the increment. */
#ifdef __TARGET_ARCH_x86
  *(volatile __u64 *)&h->head = n + 1;
#else
  __sync_lock_test_and_set(&h->head, n + 1);
#endif
}

/* A request leaves the accounting span where diskstats counts it done: the
 * same test as blk_account_io_done(). A flush sequence's inner completion is
 * not the end; a request without iostats accounting (passthrough) ends
 * unaccounted, and the reader forgets it. */
SEC("tp_btf/block_io_done")
int BPF_PROG(on_io_done, struct request *rq) {
  struct ioacct_head *h = log_head(IOACCT_LOG_DONE);
  __u32 arm = h ? armed(h) : 0;
  if (!arm) return 0;
  __u32 flags = rq->rq_flags;
  __u32 io_stat = rqf_io_stat(), flush_seq = rqf_flush_seq();
  if (flags & flush_seq) return 0;
  __u64 t = bpf_ktime_get_ns(); /* first thing after the cheap tests: closest to the event */
  /* The witness tests' stand-in for a run the kernel skips (busy_shared.h,
   * IOACCT_ARM_SKIP_SHIFT): one completion in 2^k, by the clock's µs bits. */
  __u32 skip = arm >> IOACCT_ARM_SKIP_SHIFT;
  if (skip && !((t >> 10) & skip)) return 0;
  struct gendisk *g = rq->q->disk;
  if (!g) return 0;
  __u32 dev = disk_dev(g);
  struct ioacct_watch *w = watched(h, dev);
  if (!w) return 0;
  if (!(flags & io_stat)) {
    append(h, IOACCT_LOG_DONE, (__u64)rq, 0, t, w->idx, IOACCT_UNACCOUNTED);
    return 0;
  }
  __u32 part = IOACCT_NO_DEVICE;
  if (w->parts) {
    struct block_device *bd = rq->part;
    __u32 p = bd ? bd->bd_dev : 0;
    if (p && p != dev) {
      struct ioacct_watch *pw = watched(h, p);
      if (pw) part = pw->idx;
    }
  }
  append(h, IOACCT_LOG_DONE, (__u64)rq, rq->start_time_ns, t, w->idx, part);
  return 0;
}

/* A request merged into another leaves the span here (diskstats takes it out
 * of in_flight); the survivor inherits the earlier start stamp, so the union
 * loses nothing. */
SEC("tp_btf/block_rq_merge")
int BPF_PROG(on_rq_merge, struct request *rq) {
  struct ioacct_head *h = log_head(IOACCT_LOG_MERGE);
  if (!h || !armed(h)) return 0;
  struct gendisk *g = rq->q->disk;
  if (!g) return 0;
  struct ioacct_watch *w = watched(h, disk_dev(g));
  if (!w) return 0;
  append(h, IOACCT_LOG_MERGE, (__u64)rq, rq->start_time_ns, bpf_ktime_get_ns(), w->idx, 0);
  return 0;
}

/* dev% only (not loaded otherwise): the device span runs from the driver
 * getting the request to the end of its accounting. */
SEC("tp_btf/block_rq_issue")
int BPF_PROG(on_rq_issue, struct request *rq) {
  struct ioacct_head *h = log_head(IOACCT_LOG_ISSUE);
  if (!h || !armed(h)) return 0;
  struct gendisk *g = rq->q->disk;
  if (!g) return 0;
  struct ioacct_watch *w = watched(h, disk_dev(g));
  if (!w) return 0;
  append(h, IOACCT_LOG_ISSUE, (__u64)rq, 0, bpf_ktime_get_ns(), w->idx, 0);
  return 0;
}

/* Attribution (stat --by, export --per-cgroup): the cgroup of a request's
 * first bio, the one the kernel's own per-cgroup statistics charge (the
 * blkcg a bio carries is the dirtying cgroup's for writeback where cgroup
 * writeback is on). 0 when the request has no bio or no blkcg. */
static __always_inline __u64 rq_cgroup(struct request *rq) {
  /* A kernel without CONFIG_BLK_CGROUP has no bi_blkg: every request is
   * then nobody's (0), and the programs still load. */
  if (!bpf_core_field_exists(struct bio, bi_blkg)) return 0;
  struct bio *b = rq->bio;
  if (!b) return 0;
  struct blkcg_gq *g = b->bi_blkg;
  if (!g) return 0;
  struct blkcg *c = g->blkcg;
  if (!c) return 0;
  struct cgroup *cg = c->css.cgroup;
  if (!cg) return 0;
  struct kernfs_node *kn = cg->kn;
  return kn ? kn->id : 0;
}

/* Attribution only (not loaded otherwise): whose request completed, and
 * how many bytes. block_io_done comes too late for either (the bios are
 * gone and the length zeroed by then); this tracepoint runs just before
 * it, in the same completion context, so it costs the submitter nothing.
 * Requests the kernel does not account end unpaired (their DONE record says
 * so), so they are not logged. No clock read: the request's start stamp,
 * which its DONE record carries too, pairs the two. */
SEC("tp_btf/block_rq_complete")
int BPF_PROG(on_rq_complete, struct request *rq, unsigned char error, unsigned int nr_bytes) {
  struct ioacct_head *h = log_head(IOACCT_LOG_ATTR);
  if (!h || !armed(h)) return 0;
  if (!(rq->rq_flags & rqf_io_stat())) return 0;
  struct gendisk *g = rq->q->disk;
  if (!g) return 0;
  struct ioacct_watch *w = watched(h, disk_dev(g));
  if (!w) return 0;
  append(h, IOACCT_LOG_ATTR, (__u64)rq, rq_cgroup(rq), rq->start_time_ns, nr_bytes, rq->cmd_flags & IOACCT_OP_MASK);
  return 0;
}

/* By process only (not loaded otherwise): the task that submitted the
 * request, where block_io_start runs (in the submitter, except for what
 * a kernel thread submits: writeback, the flush machinery). A program here
 * costs the submitting task (docs/design.md, "What it costs"): the reason
 * it is opt-in, and why it reads no clock (40-130 ns a run): the record
 * carries the struct's start stamp as the request starts, by which the
 * reader pairs it with its DONE (busy_proc.hpp). */
#define IOACCT_PF_KTHREAD 0x00200000u

struct {
  __uint(type, BPF_MAP_TYPE_LRU_HASH);
  __uint(max_entries, IOACCT_COMMS);
  __type(key, __u32);
  __type(value, struct ioacct_comm);
} comms SEC(".maps");

/* The process's name, noted by the first of its threads to submit: the
 * first thread's stays (an SQPOLL or worker thread of a process noted
 * already does not rename it). The head of this CPU's log remembers the two
 * processes last found noted (busy_shared.h), so a process that goes on
 * submitting from this CPU costs a compare in a line the program reads
 * anyway, not a look-up: with a flag in each thread's task storage instead
 * (and the tgid from a helper) the program took 11-25 ns a run more, with a
 * hash look-up by tgid on every I/O ~50 ns more. */
static __always_inline void note_comm(struct ioacct_head *h, __u32 tgid) {
  if (!tgid || h->noted[0] == tgid) return;
  __u32 before = h->noted[1];
  h->noted[1] = h->noted[0];
  h->noted[0] = tgid;
  if (before == tgid || bpf_map_lookup_elem(&comms, &tgid)) return;
  struct ioacct_comm c = {};
  bpf_get_current_comm(&c.comm, sizeof(c.comm));
  bpf_map_update_elem(&comms, &tgid, &c, BPF_NOEXIST);
}
SEC("tp_btf/block_io_start")
int BPF_PROG(on_io_start, struct request *rq) {
  struct ioacct_head *h = log_head(IOACCT_LOG_PROC);
  if (!h || !armed(h)) return 0;
  struct gendisk *g = rq->q->disk;
  if (!g) return 0;
  struct ioacct_watch *w = watched(h, disk_dev(g));
  if (!w) return 0;
  /* The task's own fields, read through `current` (no helper call). */
  struct task_struct *task = (struct task_struct *)bpf_get_current_task_btf();
  __u32 tgid = (task->flags & IOACCT_PF_KTHREAD) ? 0 : (__u32)task->tgid;
  note_comm(h, tgid);
  /* Flagged for io stat already: the kernel stamped the request before this
   * tracepoint, and the stamp is its own; else it is the struct's previous
   * request's (6.18 stamps just after). */
  __u64 s = rq->start_time_ns;
  __u32 own = (rq->rq_flags & rqf_io_stat()) ? 1 : 0;
  append(h, IOACCT_LOG_PROC, (__u64)rq, s, s, tgid, own);
  return 0;
}

/* Run by the reader (BPF_PROG_TEST_RUN): where each watched queue keeps its
 * requests, from one request of it, the queue or an open file of the device
 * (busy_shared.h). Raw_tp programs, attached nowhere: a tp_btf one cannot be
 * test-run, and a test-run program has no typed pointer, so everything is
 * read with bpf_probe_read_kernel. */
__u32 n_tagsets = 0; /* set by the reader before each run */

static __always_inline void add_tags(struct ioacct_tagset *ts, struct blk_mq_tags *tags) {
  if (!tags || ts->n >= IOACCT_TAG_ARRAYS) return;
  __u32 i = ts->n;
  if (i >= IOACCT_TAG_ARRAYS) return;
  if (bpf_core_read(&ts->rqs[i], sizeof(ts->rqs[i]), &tags->static_rqs)) return;
  if (bpf_core_read(&ts->nr[i], sizeof(ts->nr[i]), &tags->nr_tags)) return;
  if (ts->rqs[i] && ts->nr[i]) ts->n = i + 1;
}

/* At most this many hardware queues of a tag set are read (more: the
 * reader finds in-flight requests beyond them missing against diskstats'
 * count, and the idle time unsure). */
#define IOACCT_HW_QUEUES 8

/* The queue of the device open as `fd` in the calling task (the reader,
 * which test-runs this), when the file is that device (`dev`): before a
 * device's first completion names its queue, the sweep can already see the
 * first request. */
static __always_inline struct request_queue *queue_of_fd(__s32 fd, __u32 dev) {
  struct task_struct *task = (struct task_struct *)bpf_get_current_task();
  struct files_struct *files = 0;
  struct fdtable *fdt = 0;
  struct file **fds = 0;
  struct file *f = 0;
  struct address_space *m = 0;
  struct inode *host = 0;
  struct gendisk *g = 0;
  struct request_queue *q = 0;
  unsigned int max = 0;
  dev_t bd_dev = 0;
  if (fd < 0 || bpf_core_read(&files, sizeof(files), &task->files) || !files) return 0;
  if (bpf_core_read(&fdt, sizeof(fdt), &files->fdt) || !fdt) return 0;
  if (bpf_core_read(&max, sizeof(max), &fdt->max_fds) || (__u32)fd >= max) return 0;
  if (bpf_core_read(&fds, sizeof(fds), &fdt->fd) || !fds) return 0;
  if (bpf_probe_read_kernel(&f, sizeof(f), &fds[fd]) || !f) return 0;
  if (bpf_core_read(&m, sizeof(m), &f->f_mapping) || !m) return 0;
  if (bpf_core_read(&host, sizeof(host), &m->host) || !host) return 0;
  struct block_device *bd =
      (struct block_device *)((char *)host - bpf_core_field_offset(struct bdev_inode, vfs_inode));
  if (bpf_core_read(&bd_dev, sizeof(bd_dev), &bd->bd_dev) || bd_dev != dev) return 0;
  if (bpf_core_read(&g, sizeof(g), &bd->bd_disk) || !g) return 0;
  if (bpf_core_read(&q, sizeof(q), &g->queue)) return 0;
  return q;
}

static long find_one(__u64 i, void *ctx) {
  __u32 k = (__u32)i;
  struct ioacct_tagset *ts = bpf_map_lookup_elem(&tagsets, &k);
  if (!ts) return 1;
  struct request *rq = (struct request *)ts->rq;
  struct request_queue *q = (struct request_queue *)ts->q;
  ts->n = 0;
  ts->ok = 0;
  if (rq) {
    q = 0;
    if (bpf_core_read(&q, sizeof(q), &rq->q)) return 0;
  } else if (!q) {
    q = queue_of_fd(ts->fd, ts->dev);
  }
  if (!q) return 0;
  ts->q = (__u64)q;
  ts->ok = 1;
  struct blk_mq_hw_ctx *hctx = 0;
  struct blk_mq_tags *tags = 0;
  /* The request's own hardware queue: its driver and scheduler tags. */
  if (rq && !bpf_core_read(&hctx, sizeof(hctx), &rq->mq_hctx) && hctx) {
    if (!bpf_core_read(&tags, sizeof(tags), &hctx->sched_tags)) add_tags(ts, tags);
    if (!bpf_core_read(&tags, sizeof(tags), &hctx->tags)) add_tags(ts, tags);
  }
  /* Every hardware queue's driver tags, through the tag set. */
  struct blk_mq_tag_set *set = 0;
  if (!bpf_core_read(&set, sizeof(set), &q->tag_set) && set) {
    __u32 nhw = 0;
    struct blk_mq_tags **arr = 0;
    bpf_core_read(&nhw, sizeof(nhw), &set->nr_hw_queues);
    bpf_core_read(&arr, sizeof(arr), &set->tags);
    for (__u32 j = 0; j < IOACCT_HW_QUEUES && j < nhw && arr; ++j) {
      tags = 0;
      if (!bpf_probe_read_kernel(&tags, sizeof(tags), &arr[j])) add_tags(ts, tags);
    }
    if (bpf_core_field_exists(set->shared_tags) && !bpf_core_read(&tags, sizeof(tags), &set->shared_tags))
      add_tags(ts, tags);
  }
  /* Every hardware queue's scheduler tags (6.16+ keeps them with the
   * elevator; before, only the request's own hctx's are reached, above). */
  if (bpf_core_field_exists(q->sched_shared_tags) && !bpf_core_read(&tags, sizeof(tags), &q->sched_shared_tags))
    add_tags(ts, tags);
  struct elevator_queue *e = 0;
  if (bpf_core_field_exists(struct elevator_queue, et) && !bpf_core_read(&e, sizeof(e), &q->elevator) && e) {
    struct elevator_tags *et = 0;
    if (!bpf_core_read(&et, sizeof(et), &e->et) && et) {
      __u32 nhw = 0, tags_at = bpf_core_field_offset(struct elevator_tags, tags);
      bpf_core_read(&nhw, sizeof(nhw), &et->nr_hw_queues);
      for (__u32 j = 0; j < IOACCT_HW_QUEUES && j < nhw; ++j) {
        tags = 0;
        if (!bpf_probe_read_kernel(&tags, sizeof(tags), (char *)et + tags_at + 8 * j)) add_tags(ts, tags);
      }
    }
  }
  return 0;
}

SEC("raw_tp")
int find_tags(void *ctx) {
  bpf_loop(n_tagsets, find_one, 0, 0);
  return 0;
}

/* Set by the reader: the sweep also reads each held request's cgroup
 * (attribution). */
__u32 want_cgroup = 0;

/* rq_cgroup() for a request the sweep holds no typed pointer to. */
static __always_inline __u64 probed_cgroup(struct request *rq) {
  struct bio *b = 0;
  struct blkcg_gq *g = 0;
  struct blkcg *c = 0;
  struct cgroup *cg = 0;
  struct kernfs_node *kn = 0;
  __u64 id = 0;
  /* The sweep is loaded without attribution too: on a kernel without
   * CONFIG_BLK_CGROUP it must load all the same (rq_cgroup()). */
  if (!bpf_core_field_exists(struct bio, bi_blkg)) return 0;
  if (bpf_core_read(&b, sizeof(b), &rq->bio) || !b) return 0;
  if (bpf_core_read(&g, sizeof(g), &b->bi_blkg) || !g) return 0;
  if (bpf_core_read(&c, sizeof(c), &g->blkcg) || !c) return 0;
  if (bpf_core_read(&cg, sizeof(cg), &c->css.cgroup) || !cg) return 0;
  if (bpf_core_read(&kn, sizeof(kn), &cg->kn) || !kn) return 0;
  if (bpf_core_read(&id, sizeof(id), &kn->id)) return 0;
  return id;
}

/* The kernel's own view of each request in `probes`: its accounting state,
 * read from the struct request in each static_rqs slot. */
static long probe_one(__u64 i, void *ctx) {
  __u32 k = (__u32)i;
  struct ioacct_probe *p = bpf_map_lookup_elem(&probes, &k);
  if (!p) return 1;
  struct request *rq = 0;
  struct block_device *bd = 0;
  p->ok = 0;
  p->rq = 0;
  p->ref = 0;
  p->part_dev = 0;
  p->accounted = 0;
  if (bpf_probe_read_kernel(&rq, sizeof(rq), (void *)p->slot) || !rq) return 0;
  p->rq = (__u64)rq;
  /* Most requests of a queue are free (ref 0): one read says so. */
  if (bpf_core_read(&p->ref, sizeof(p->ref), &rq->ref.counter)) return 0;
  __u64 stale = stale_after;
  if (p->ref <= 0 && !stale) {
    p->ok = 1;
    return 0;
  }
  int err = 0;
  __u32 flags = 0;
  err |= bpf_core_read(&p->q, sizeof(p->q), &rq->q);
  err |= bpf_core_read(&flags, sizeof(flags), &rq->rq_flags);
  err |= bpf_core_read(&p->start_time_ns, sizeof(p->start_time_ns), &rq->start_time_ns);
  err |= bpf_core_read(&bd, sizeof(bd), &rq->part);
  if (!err && bd) err |= bpf_core_read(&p->part_dev, sizeof(p->part_dev), &bd->bd_dev);
  p->accounted = (flags & rqf_io_stat()) ? 1 : 0;
  p->ok = err ? 0 : 1;
  p->cgroup = 0;
  if (want_cgroup && p->accounted) p->cgroup = probed_cgroup(rq);
  /* Only with the test hook: the reader takes what is held and accounted. */
  if (p->ref <= 0 && p->accounted && p->start_time_ns > stale) {
    p->ref = 1;
    p->accounted = 2;
  }
  return 0;
}

SEC("raw_tp")
int sweep(void *ctx) {
  bpf_loop(n_probes, probe_one, 0, 0);
  return 0;
}
