// Loads prog_cost.bpf.c for SECONDS with the loop device MINOR (major 7) in
// the device table, then exits (run.sh reads bpf_stats meanwhile).
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "prog_cost.skel.h"

int main(int argc, char **argv) {
  if (argc != 3) { fprintf(stderr, "usage: prog_cost SECONDS LOOP_MINOR\n"); return 2; }
  struct prog_cost_bpf *s = prog_cost_bpf__open_and_load();
  if (!s || prog_cost_bpf__attach(s)) { perror("load/attach"); return 1; }
  struct { __u32 dev, idx, parts, pad; } w = {(7u << 20) | (unsigned)atoi(argv[2]), 0, 0, 0};
  __u32 k = ((w.dev * 0x9E3779B1u) >> 7) & 15;
  bpf_map_update_elem(bpf_map__fd(s->maps.watch), &k, &w, 0);
  sleep(atoi(argv[1]));
  prog_cost_bpf__destroy(s);
  return 0;
}
