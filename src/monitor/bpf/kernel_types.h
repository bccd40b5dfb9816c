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

struct gendisk {
  int major;
  int first_minor;
} __attribute__((preserve_access_index));

struct request_queue {
  struct gendisk *disk;
} __attribute__((preserve_access_index));

struct block_device {
  dev_t bd_dev;
} __attribute__((preserve_access_index));

typedef __u32 req_flags_t;

typedef __u32 blk_opf_t;

struct blk_mq_hw_ctx;

struct request {
  struct request_queue *q;
  struct blk_mq_hw_ctx *mq_hctx; /* NULL once the block layer has freed the request */
  blk_opf_t cmd_flags;
  req_flags_t rq_flags;
  __u64 start_time_ns;           /* the kernel's own block_io_start stamp, set just after the tracepoint */
  struct block_device *part;
} __attribute__((preserve_access_index));

/* Driver-private (passthrough) operations; libbpf relocates the values. */
enum req_op {
  REQ_OP_DRV_IN = 34,
  REQ_OP_DRV_OUT = 35,
};
#define IOACCT_REQ_OP_MASK 0xffu

/* 6.10+ names the request flags' bits in an enum; libbpf relocates the value. */
enum rqf_flags {
  __RQF_FLUSH_SEQ = 1,
};

#endif
