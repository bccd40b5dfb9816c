// SPDX-License-Identifier: GPL-2.0
/* Logs every block_io_done of one disk as a BPF program sees it (sector and
 * time), to match against a tracefs instance recording the same tracepoint:
 * an event tracefs has and this log does not is one the kernel ran no BPF
 * program for (docs/design.md, "Lost events: what the kernel does"). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

char LICENSE[] SEC("license") = "GPL";

const volatile __u32 devt = 0; /* major << 20 | minor */
struct rec { __u64 t, sector; };
#define NREC (1u << 21)
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, NREC); __type(key, __u32); __type(value, struct rec); } recs SEC(".maps");
__u64 next_idx;

SEC("tp_btf/block_io_done")
int BPF_PROG(done, struct request *rq) {
  __u64 now = bpf_ktime_get_ns();
  struct gendisk *d = rq->q->disk;
  if (!d || (((__u32)d->major << 20) | d->first_minor) != devt) return 0;
  __u32 i = (__u32)__sync_fetch_and_add(&next_idx, 1);
  struct rec *r = i < NREC ? bpf_map_lookup_elem(&recs, &i) : 0;
  if (r) { r->t = now; r->sector = rq->__sector; }
  return 0;
}
