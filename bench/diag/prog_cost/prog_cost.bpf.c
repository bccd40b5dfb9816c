// SPDX-License-Identifier: GPL-2.0
/* What each piece of the busy tracker's programs costs: each program does one
 * thing on block_io_start (s*) or block_io_done (d*), and bpf_stats gives its
 * time per run. Compare each with the empty one on the same tracepoint
 * (bench/diag/prog_cost/README.md, docs/design.md "What it costs"). Logs are
 * per program and CPU, as the tracker's; SLOTS is the ring size that missed
 * the cache, SMALL the one the tracker uses. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
char LICENSE[] SEC("license") = "GPL";
__u64 sink;
struct rec { __u64 rq, s, t; __u32 a, b; };
struct hd { __u64 head, dropped, dns, pad[5]; };
#define SLOTS 16384
#define SMALL 4096
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 8 * SLOTS); __type(key, __u32); __type(value, struct rec); } logs SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 8 * SMALL); __type(key, __u32); __type(value, struct rec); } small SEC(".maps");
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 64); __type(key, __u32); __type(value, struct hd); } heads SEC(".maps");
struct w { __u32 dev, idx, parts, pad; };
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 16); __type(key, __u32); __type(value, struct w); } watch SEC(".maps");
static __always_inline struct w *watched(__u32 dev) {
  __u32 h = (dev * 0x9E3779B1u) >> 7;
  for (__u32 i = 0; i < 8; ++i) { __u32 k = (h + i) & 15; struct w *x = bpf_map_lookup_elem(&watch, &k); if (!x || x->dev == 0) return 0; if (x->dev == dev) return x; }
  return 0;
}
static __always_inline void app(int which, __u32 hk, __u64 rq, __u64 s, __u64 t, int xchg) {
  __u32 k = hk * 2 + bpf_get_smp_processor_id();
  struct hd *h = bpf_map_lookup_elem(&heads, &k); if (!h) return;
  __u64 n = h->head;
  __u32 i;
  struct rec *r;
  if (which) { i = k * SMALL + (n & (SMALL - 1)); r = bpf_map_lookup_elem(&small, &i); }
  else { i = k * SLOTS + (n & (SLOTS - 1)); r = bpf_map_lookup_elem(&logs, &i); }
  if (!r) return;
  r->rq = rq; r->s = s; r->t = t; r->a = 1; r->b = 2;
  if (xchg) __sync_lock_test_and_set(&h->head, n + 1); else h->head = n + 1;
}
SEC("tp_btf/block_io_start") int BPF_PROG(s0_empty, struct request *rq) { return 0; }
SEC("tp_btf/block_io_done") int BPF_PROG(d0_empty, struct request *rq) { return 0; }
SEC("tp_btf/block_io_done") int BPF_PROG(d1_ktime, struct request *rq) { sink = bpf_ktime_get_ns(); return 0; }
SEC("tp_btf/block_io_start") int BPF_PROG(s2_dev, struct request *rq) { struct gendisk *g = rq->q->disk; sink = g ? g->major : 0; return 0; }
SEC("tp_btf/block_io_start") int BPF_PROG(s3_watch, struct request *rq) { struct gendisk *g = rq->q->disk; if (!g) return 0; struct w *x = watched(((__u32)g->major << 20) | g->first_minor); sink = x ? x->idx : 7; return 0; }
SEC("tp_btf/block_io_start") int BPF_PROG(s4_log_xchg, struct request *rq) { app(0, 0, (__u64)rq, 0, 0, 1); return 0; }
SEC("tp_btf/block_io_start") int BPF_PROG(s5_log_plain, struct request *rq) { app(0, 1, (__u64)rq, 0, 0, 0); return 0; }
SEC("tp_btf/block_io_start") int BPF_PROG(s6_small_xchg, struct request *rq) { app(1, 2, (__u64)rq, 0, 0, 1); return 0; }
SEC("tp_btf/block_io_done") int BPF_PROG(d4_log_xchg, struct request *rq) { app(0, 3, (__u64)rq, rq->start_time_ns, 0, 1); return 0; }
SEC("tp_btf/block_io_done") int BPF_PROG(d6_small_xchg, struct request *rq) { app(1, 4, (__u64)rq, rq->start_time_ns, 0, 1); return 0; }
