// SPDX-License-Identifier: GPL-2.0
/* What each piece of the busy tracker's programs costs: each program does one
 * thing on block_rq_issue (or block_rq_complete, for the pieces whose cache
 * line moves between CPUs), and bpf_stats gives its time per run. Compare
 * each with e0_empty (docs/design.md, "What it costs"). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
char LICENSE[] SEC("license") = "GPL";
struct dv { struct bpf_spin_lock lock; __u32 pad; __u64 count, last, busy, d[6]; };
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 4); __type(key, __u32); __type(value, struct dv); } st SEC(".maps");
struct sl { __u64 key, start; __u32 a, b; __u8 x, y, p[6]; };
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 65536); __type(key, __u32); __type(value, struct sl); } slots SEC(".maps");
__u64 sink;
SEC("tp_btf/block_rq_issue") int BPF_PROG(e0_empty, struct request *rq) { return 0; }
SEC("tp_btf/block_rq_issue") int BPF_PROG(e1_ktime, struct request *rq) { sink = bpf_ktime_get_ns(); return 0; }
SEC("tp_btf/block_rq_issue") int BPF_PROG(e2_probe, struct request *rq) { __u64 k = 0; bpf_probe_read_kernel(&k, 8, &rq); sink = k; return 0; }
SEC("tp_btf/block_rq_issue") int BPF_PROG(e3_devread, struct request *rq) { struct gendisk *g = rq->q->disk; sink = g ? g->major : 0; return 0; }
SEC("tp_btf/block_rq_issue") int BPF_PROG(e4_lock, struct request *rq) {
  __u32 i = 0; struct dv *d = bpf_map_lookup_elem(&st, &i); if (!d) return 0;
  __u64 now = bpf_ktime_get_ns();
  bpf_spin_lock(&d->lock); if (d->count) d->busy += now - d->last; d->last = now; d->count++; bpf_spin_unlock(&d->lock); return 0; }
SEC("tp_btf/block_rq_issue") int BPF_PROG(e5_atomic, struct request *rq) {
  __u32 i = 1; struct dv *d = bpf_map_lookup_elem(&st, &i); if (!d) return 0;
  __sync_fetch_and_add(&d->count, 1); return 0; }
SEC("tp_btf/block_rq_issue") int BPF_PROG(e6_slot, struct request *rq) {
  __u64 k = 0; bpf_probe_read_kernel(&k, 8, &rq);
  __u32 g = (__u32)((k * 0x9E3779B97F4A7C15ull) >> 32) & 65535 & ~3;
  for (int j = 0; j < 4; j++) { __u32 idx = g + j; struct sl *e = bpf_map_lookup_elem(&slots, &idx); if (e && e->key == 0) { e->key = 0; e->start = k; break; } }
  return 0; }
/* the same on the completion side, on the other CPU, to make lines bounce */
SEC("tp_btf/block_rq_complete") int BPF_PROG(c4_lock, struct request *rq, int e, unsigned int n) {
  __u32 i = 0; struct dv *d = bpf_map_lookup_elem(&st, &i); if (!d) return 0;
  __u64 now = bpf_ktime_get_ns();
  bpf_spin_lock(&d->lock); if (d->count) d->busy += now - d->last; d->last = now; if (d->count) d->count--; bpf_spin_unlock(&d->lock); return 0; }
SEC("tp_btf/block_rq_complete") int BPF_PROG(c5_atomic, struct request *rq, int e, unsigned int n) {
  __u32 i = 1; struct dv *d = bpf_map_lookup_elem(&st, &i); if (!d) return 0;
  __sync_fetch_and_add(&d->count, -1); return 0; }
SEC("tp_btf/block_rq_complete") int BPF_PROG(c6_slot, struct request *rq, int e, unsigned int n) {
  __u64 k = 0; bpf_probe_read_kernel(&k, 8, &rq);
  __u32 g = (__u32)((k * 0x9E3779B97F4A7C15ull) >> 32) & 65535 & ~3;
  for (int j = 0; j < 4; j++) { __u32 idx = g + j; struct sl *e = bpf_map_lookup_elem(&slots, &idx); if (e) { e->start = k; break; } }
  return 0; }
struct scr { __u64 w[8]; };
struct { __uint(type, BPF_MAP_TYPE_PERCPU_ARRAY); __uint(max_entries, 1); __type(key, __u32); __type(value, struct scr); } scratch SEC(".maps");
SEC("tp_btf/block_rq_issue") int BPF_PROG(e7_scratch, struct request *rq) {
  __u32 z = 0; struct scr *s = bpf_map_lookup_elem(&scratch, &z); if (!s) return 0;
  s->w[2] = (__u64)rq; __u64 k = *(volatile __u64 *)&s->w[2];
  sink = (k * 0x9E3779B97F4A7C15ull) >> 32; return 0; }
__u64 word, busy_sum, dsum[6];
static __always_inline void cas_change(__u64 now, int delta) {
  for (int i = 0; i < 8; i++) {
    __u64 old = word;
    __u64 cnt = old & 0x3fff, last = old >> 14;
    __u64 t = now > last ? now : last;
    __u64 n2 = (t << 14) | ((cnt + delta) & 0x3fff);
    if (__sync_val_compare_and_swap(&word, old, n2) == old) {
      __u64 dt = t - last;
      if (cnt) __sync_fetch_and_add(&busy_sum, dt);
      __sync_fetch_and_add(&dsum[cnt > 5 ? 5 : cnt], dt);
      return;
    }
  }
}
SEC("tp_btf/block_rq_issue") int BPF_PROG(e8_cas, struct request *rq) { __u64 now = bpf_ktime_get_ns() >> 4; cas_change(now, 1); return 0; }
SEC("tp_btf/block_rq_complete") int BPF_PROG(c8_cas, struct request *rq, int e, unsigned int n) { __u64 now = bpf_ktime_get_ns() >> 4; cas_change(now, -1); return 0; }
