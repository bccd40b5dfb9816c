// Loads and attaches prog_cost.bpf.c for SECONDS, then exits (run.sh reads bpf_stats).
#include <bpf/bpf.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "prog_cost.skel.h"

int main(int argc, char **argv) {
  struct prog_cost_bpf *s = prog_cost_bpf__open_and_load();
  if (!s || prog_cost_bpf__attach(s)) { perror("load/attach"); return 1; }
  sleep(argc > 1 ? atoi(argv[1]) : 12);
  prog_cost_bpf__destroy(s);
  return 0;
}
