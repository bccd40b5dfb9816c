// Loads tp_skip.bpf.c, opens a tracefs instance recording block_io_done for
// the same disk, and after SECONDS prints what each saw, beside the disk's
// completed I/Os in /proc/diskstats (reads + writes + discards + flushes).
// Usage: tp_skip MAJOR:MINOR SECONDS   (as root; run load beside it)
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp_skip.skel.h"

static const char *inst = "/sys/kernel/tracing/instances/ioacct_tp_skip";

static void put(const char *file, const char *v) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", inst, file);
  FILE *f = fopen(p, "w");
  if (!f || fputs(v, f) < 0 || fclose(f) != 0) { perror(p); exit(1); }
}

static long long completed(int ma, int mi) {
  FILE *f = fopen("/proc/diskstats", "r");
  char l[512];
  long long t = -1;
  while (f && fgets(l, sizeof l, f)) {
    unsigned a, b;
    char name[64];
    unsigned long long v[17] = {0};
    int n = sscanf(l, "%u %u %63s %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu %llu", &a, &b, name,
                   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9], &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16]);
    if (n >= 7 && (int)a == ma && (int)b == mi) t = v[0] + v[4] + (n > 14 ? v[11] : 0) + (n > 18 ? v[15] : 0);
  }
  if (f) fclose(f);
  return t;
}

int main(int argc, char **argv) {
  int ma, mi;
  if (argc != 3 || sscanf(argv[1], "%d:%d", &ma, &mi) != 2) { fprintf(stderr, "usage: tp_skip MAJOR:MINOR SECONDS\n"); return 2; }
  struct tp_skip_bpf *s = tp_skip_bpf__open();
  if (!s) { perror("open"); return 1; }
  s->rodata->major = ma;
  s->rodata->first_minor = mi;
  if (tp_skip_bpf__load(s) || tp_skip_bpf__attach(s)) { perror("load/attach"); return 1; }
  mkdir(inst, 0755);
  put("tracing_on", "0");
  put("buffer_size_kb", "40000");
  put("trace", "");
  char filter[64];
  snprintf(filter, sizeof filter, "dev == %d", (ma << 20) | mi);
  put("events/block/block_io_done/filter", filter);
  put("events/block/block_io_done/enable", "1");
  sleep(1);
  /* The window: tracing on, counters and diskstats read, ..., the same in reverse. */
  put("tracing_on", "1");
  __u64 h0[4];
  memcpy(h0, (const void *)s->bss->hits, sizeof h0);
  long long d0 = completed(ma, mi);
  sleep(atoi(argv[2]));
  long long d1 = completed(ma, mi);
  __u64 h1[4];
  memcpy(h1, (const void *)s->bss->hits, sizeof h1);
  put("tracing_on", "0");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "grep -c block_io_done %s/trace", inst);
  FILE *p = popen(cmd, "r");
  long long traced = -1;
  if (p && fscanf(p, "%lld", &traced) != 1) traced = -1;
  if (p) pclose(p);
  snprintf(cmd, sizeof cmd, "grep -h overrun %s/per_cpu/cpu*/stats | awk '{s += $NF} END {print s+0}'", inst);
  p = popen(cmd, "r");
  long long overrun = 0;
  if (p && fscanf(p, "%lld", &overrun) != 1) overrun = -1;
  if (p) pclose(p);
  printf("diskstats completions  %lld\n", d1 - d0);
  printf("tracefs block_io_done  %lld%s\n", traced, overrun ? "  (ring buffer overran: not a witness)" : "");
  printf("tp_btf  block_io_done  %llu\n", (unsigned long long)(h1[1] - h0[1]));
  printf("raw_tp  block_io_done  %llu\n", (unsigned long long)(h1[3] - h0[3]));
  put("events/block/block_io_done/enable", "0");
  rmdir(inst);
  tp_skip_bpf__destroy(s);
  return 0;
}
