/* The few kernel structs busy.bpf.c reads, for CO-RE: only the fields used,
 * marked preserve_access_index so that libbpf relocates every offset against
 * the running kernel's BTF at load time. Checked in rather than generating
 * vmlinux.h on the build machine, so that the build does not depend on the
 * build machine's kernel (and a 3 MB header is not parsed on every build). */
#ifndef IOACCT_KERNEL_TYPES_H
#define IOACCT_KERNEL_TYPES_H

#include <linux/types.h>

typedef __u32 u32;
typedef __u64 u64;
typedef __u32 dev_t;

struct request_queue;

struct gendisk {
  int major;
  int first_minor;
  struct request_queue *queue;
} __attribute__((preserve_access_index));

struct request;

/* A tag set's requests: static_rqs[0..nr_tags) are every struct request the
 * queue can hand out (the sweep walks them). */
struct blk_mq_tags {
  unsigned int nr_tags;
  struct request **static_rqs;
} __attribute__((preserve_access_index));

struct blk_mq_tag_set {
  unsigned int nr_hw_queues;
  struct blk_mq_tags **tags;
  struct blk_mq_tags *shared_tags;
} __attribute__((preserve_access_index));

struct blk_mq_hw_ctx {
  struct blk_mq_tags *tags;
  struct blk_mq_tags *sched_tags;
} __attribute__((preserve_access_index));

/* 6.16+: the scheduler's tags per hardware queue (older kernels: each
 * hctx's sched_tags, reached from a request of that hctx). */
struct elevator_tags {
  unsigned int nr_hw_queues;
  struct blk_mq_tags *tags[0];
} __attribute__((preserve_access_index));

struct elevator_queue {
  struct elevator_tags *et;
} __attribute__((preserve_access_index));

struct request_queue {
  struct gendisk *disk;
  struct elevator_queue *elevator;
  struct blk_mq_tag_set *tag_set;
  struct blk_mq_tags *sched_shared_tags;
} __attribute__((preserve_access_index));

struct block_device {
  dev_t bd_dev;
  struct gendisk *bd_disk;
} __attribute__((preserve_access_index));

/* From the reader's own open file of a device to the device's queue
 * (find_tags, before the device's first completion names it): the file's
 * mapping's host is the block device's inode, which lives in a bdev_inode
 * beside its struct block_device (block/bdev.c; the offset is relocated). */
struct inode {
  unsigned long i_ino;
} __attribute__((preserve_access_index));

struct bdev_inode {
  struct block_device bdev;
  struct inode vfs_inode;
} __attribute__((preserve_access_index));

struct address_space {
  struct inode *host;
} __attribute__((preserve_access_index));

struct file {
  struct address_space *f_mapping;
} __attribute__((preserve_access_index));

struct fdtable {
  unsigned int max_fds;
  struct file **fd;
} __attribute__((preserve_access_index));

struct files_struct {
  struct fdtable *fdt;
} __attribute__((preserve_access_index));

struct task_struct {
  unsigned int flags; /* PF_KTHREAD: a kernel thread */
  int pid;
  int tgid;
  struct files_struct *files;
} __attribute__((preserve_access_index));

typedef struct {
  int counter;
} atomic_t;

typedef __u32 req_flags_t;

enum mq_rq_state {
  MQ_RQ_IDLE = 0,
  MQ_RQ_IN_FLIGHT = 1,
  MQ_RQ_COMPLETE = 2,
};

/* Who a request is for (attribution): its first bio's blkcg, the cgroup in
 * the hierarchy that holds the block controller (cgroup v1 blkio or cgroup2
 * io), named by its kernfs node id, which is its directory's inode number. */
struct kernfs_node {
  __u64 id;
} __attribute__((preserve_access_index));

struct cgroup {
  struct kernfs_node *kn;
} __attribute__((preserve_access_index));

struct cgroup_subsys_state {
  struct cgroup *cgroup;
} __attribute__((preserve_access_index));

struct blkcg {
  struct cgroup_subsys_state css;
} __attribute__((preserve_access_index));

struct blkcg_gq {
  struct blkcg *blkcg;
} __attribute__((preserve_access_index));

struct bio {
  struct blkcg_gq *bi_blkg;
} __attribute__((preserve_access_index));

struct request {
  struct request_queue *q;
  struct bio *bio;     /* NULL once every bio has completed (block_io_done sees it so) */
  __u32 cmd_flags;     /* the op in the low 8 bits (REQ_OP_MASK) */
  struct blk_mq_hw_ctx *mq_hctx;
  int tag;          /* the driver's tag */
  int internal_tag; /* the scheduler's tag, -1 without a scheduler */
  req_flags_t rq_flags;
  struct block_device *part;    /* set by blk_account_io_start, just after block_io_start */
  __u64 start_time_ns;          /* likewise: the kernel's start stamp, which diskstats uses */
  enum mq_rq_state state;
  atomic_t ref;                 /* 0 once the block layer has freed the request */
} __attribute__((preserve_access_index));

/* 6.10+ names the request flags' bits in an enum; libbpf relocates the values. */
enum rqf_flags {
  __RQF_FLUSH_SEQ = 1,
  __RQF_IO_STAT = 8,
};

#endif
