// Loads tp_skip.bpf.c, records block_io_done for the same disk in a tracefs
// instance of its own (clock mono), waits SECONDS, then writes trace.txt (the
// tracefs trace) and bpf.txt ("time sector" per program run) to the current
// directory for match.py.
// Usage: tp_skip MAJOR:MINOR SECONDS   (as root; run load beside it)
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tp_skip.skel.h"

static char inst[128];

static void put(const char *file, const char *v) {
  char p[256];
  snprintf(p, sizeof p, "%s/%s", inst, file);
  FILE *f = fopen(p, "w");
  if (!f || fputs(v, f) < 0 || fclose(f) != 0) { perror(p); exit(1); }
}

int main(int argc, char **argv) {
  int ma, mi;
  if (argc != 3 || sscanf(argv[1], "%d:%d", &ma, &mi) != 2) { fprintf(stderr, "usage: tp_skip MAJOR:MINOR SECONDS\n"); return 2; }
  snprintf(inst, sizeof inst, "/sys/kernel/tracing/instances/ioacct_tp_skip_%d", getpid());
  struct tp_skip_bpf *s = tp_skip_bpf__open();
  if (!s) { perror("open"); return 1; }
  s->rodata->devt = (ma << 20) | mi;
  if (tp_skip_bpf__load(s) || tp_skip_bpf__attach(s)) { perror("load/attach"); return 1; }
  if (mkdir(inst, 0755) != 0) { perror(inst); return 1; }
  put("tracing_on", "0");
  put("trace_clock", "mono");
  put("buffer_size_kb", "65536");
  char filter[64];
  snprintf(filter, sizeof filter, "dev == %d", (ma << 20) | mi);
  put("events/block/block_io_done/filter", filter);
  put("events/block/block_io_done/enable", "1");
  put("tracing_on", "1");
  sleep(atoi(argv[2]));
  put("tracing_on", "0");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cp %s/trace trace.txt", inst);
  if (system(cmd) != 0) return 1;
  __u64 n = s->bss->next_idx;
  if (n > (1u << 21)) n = 1u << 21;
  FILE *o = fopen("bpf.txt", "w");
  const int fd = bpf_map__fd(s->maps.recs);
  for (__u32 i = 0; i < n; i++) {
    struct { __u64 t, sector; } r;
    if (bpf_map_lookup_elem(fd, &i, &r) == 0) fprintf(o, "%llu %llu\n", (unsigned long long)r.t, (unsigned long long)r.sector);
  }
  fclose(o);
  put("events/block/block_io_done/enable", "0");
  rmdir(inst);
  tp_skip_bpf__destroy(s);
  return 0;
}
