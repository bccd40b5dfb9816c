#!/usr/bin/env bash
# User-space instructions per I/O of two builds of ioacct, by callgrind: a
# count, not a time, so it holds on a noisy machine and while other work
# runs (the same binary, inputs and environment give the same total), and
# a change to the hot path can be priced before a quiet hour is free for
# the timed scripts (sol.sh, jobs.sh (i)). It sees nothing of the kernel's
# side of a syscall: a change of syscalls per I/O shows in the timed
# scripts only.
#
# Usage: bench/instructions.sh NEW_BINARY [OLD_BINARY]
# Environment: WORKLOADS  which of the rows below to run (default: all)
# Prints one row per workload: instructions per I/O, the new's and the
# old's, and their ratio, counted over the whole process (start-up is in
# it: the I/O counts below keep it under ~1 instruction per I/O).
set -euo pipefail

NEW=${1:?usage: bench/instructions.sh NEW_BINARY [OLD_BINARY]}
OLD=${2:-}
command -v valgrind >/dev/null || { echo "error: valgrind is not installed" >&2; exit 2; }
WORKLOADS=${WORKLOADS:-"nop128 nop32mixed buf32 dio32"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=$tmp/data
dd if=/dev/urandom of="$data" bs=1M count=64 status=none

args_of() {
  case $1 in
    nop128) echo "--engine nop --iodepth 128 --ios 2000000 --size 64m" ;;       # the fused path
    nop32mixed) echo "--engine nop --rw randrw --iodepth 32 --ios 500000 --size 64m" ;;  # the batch path
    buf32) echo "--buffered --iodepth 32 --ios 300000 $data" ;;
    dio32) echo "--iodepth 32 --ios 100000 $data" ;;
    *) echo "error: unknown workload $1" >&2; exit 2 ;;
  esac
}

per_io() {  # BINARY ARGS...: instructions per I/O
  local bin=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" bench "$@" --format json >"$tmp/out.json" 2>/dev/null
  local ir ios
  ir=$(callgrind_annotate "$tmp/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')
  ios=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results']['ios'])" "$tmp/out.json")
  python3 -c "import sys; print(f'{int(sys.argv[1]) / int(sys.argv[2]):.1f}')" "$ir" "$ios"
}

printf '%-12s %10s %10s %7s\n' workload new old ratio
for w in $WORKLOADS; do
  read -r -a a <<<"$(args_of "$w")"
  n=$(per_io "$NEW" "${a[@]}")
  if [ -n "$OLD" ]; then
    o=$(per_io "$OLD" "${a[@]}")
    printf '%-12s %10s %10s %7s\n' "$w" "$n" "$o" "$(python3 -c "import sys; print(f'{float(sys.argv[1]) / float(sys.argv[2]):.3f}')" "$n" "$o")"
  else
    printf '%-12s %10s\n' "$w" "$n"
  fi
done
