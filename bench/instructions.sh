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
# old's, and their ratio. Each figure is the difference of two runs, the
# workload's count of I/Os and a fiftieth of it, over the difference of
# their I/Os: start-up (~20M instructions, which grows with every option
# and feature) is in both and drops out, where at depth 1 it was ~480
# instructions per I/O of a 50,000-I/O run.
set -euo pipefail

NEW=${1:?usage: bench/instructions.sh NEW_BINARY [OLD_BINARY]}
OLD=${2:-}
command -v valgrind >/dev/null || { echo "error: valgrind is not installed" >&2; exit 2; }
WORKLOADS=${WORKLOADS:-"nop128 nop32mixed buf32 dio32 dio1"}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
data=$tmp/data
dd if=/dev/urandom of="$data" bs=1M count=64 status=none

args_of() {  # WORKLOAD: its options; the count of I/Os comes last, as "--ios N"
  case $1 in
    nop128) echo "--engine nop --iodepth 128 --size 64m --ios 2000000" ;;       # the fused path
    nop32mixed) echo "--engine nop --rw randrw --iodepth 32 --size 64m --ios 500000" ;;  # the batch path
    buf32) echo "--buffered --iodepth 32 $data --ios 300000" ;;
    dio32) echo "--iodepth 32 $data --ios 100000" ;;
    dio1) echo "--iodepth 1 --log-interval 0s $data --ios 50000" ;;  # a pass per I/O; no series: under callgrind its per-second JSON weighs per I/O
    *) echo "error: unknown workload $1" >&2; exit 2 ;;
  esac
}

count() {  # BINARY ARGS...: "INSTRUCTIONS IOS" of one run
  local bin=$1; shift
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bin" bench "$@" --format json >"$tmp/out.json" 2>/dev/null
  echo "$(callgrind_annotate "$tmp/cg" 2>/dev/null | awk '/PROGRAM TOTALS/ {gsub(",", "", $1); print $1; exit}')" \
    "$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['results']['ios'])" "$tmp/out.json")"
}

per_io() {  # BINARY ARGS... --ios N: instructions per I/O, start-up taken out
  local bin=$1; shift
  local -a a=("$@")
  local n=${a[-1]} long short
  long=$(count "$bin" "${a[@]}")
  a[-1]=$((n / 50))
  short=$(count "$bin" "${a[@]}")
  python3 -c "import sys; (i1, n1), (i0, n0) = (map(int, s.split()) for s in sys.argv[1:]); print(f'{(i1 - i0) / (n1 - n0):.1f}')" \
    "$long" "$short"
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
