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

struct request {
  struct request_queue *q;
  struct block_device *part;
} __attribute__((preserve_access_index));

#endif
