// SPDX-License-Identifier: GPL-2.0
/* Counts block_io_done for one whole disk, as tp_btf and as raw_tp, to
 * compare with diskstats and a tracefs instance over the same window
 * (docs/design.md, "Lost completions"). The first thing each program does is
 * count, so a missing hit means the kernel ran no program for it. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

char LICENSE[] SEC("license") = "GPL";

const volatile int major = 254, first_minor = 0;
__u64 hits[4]; /* tp_btf all, tp_btf disk, raw_tp all, raw_tp disk */

static __always_inline int on_disk(struct request *rq) {
  struct gendisk *d = BPF_CORE_READ(rq, q, disk);
  return d && BPF_CORE_READ(d, major) == major && BPF_CORE_READ(d, first_minor) == first_minor;
}

SEC("tp_btf/block_io_done")
int BPF_PROG(btf_done, struct request *rq) {
  __sync_fetch_and_add(&hits[0], 1);
  if (on_disk(rq)) __sync_fetch_and_add(&hits[1], 1);
  return 0;
}

SEC("raw_tp/block_io_done")
int raw_done(struct bpf_raw_tracepoint_args *ctx) {
  __sync_fetch_and_add(&hits[2], 1);
  if (on_disk((struct request *)ctx->args[0])) __sync_fetch_and_add(&hits[3], 1);
  return 0;
}
