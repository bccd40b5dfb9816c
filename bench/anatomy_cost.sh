#!/usr/bin/env bash
# h) What bench --anatomy costs: ioacct bench with and without --anatomy,
#    interleaved, the order alternating each repetition, 4k random reads:
#    - h1 nop, depth 1
#    - h2 O_DIRECT on a file on the disk (warm host cache), depth 1
#    - h3 the same, depth 32
#    - h4 buffered, page cache hot, depth 1
#    For each: IOPS with/without, and the extra CPU per I/O (process CPU per
#    I/O with --anatomy minus without: the BPF programs that run in the bench's
#    threads and the user-space split). Target (issue 17): <= 1 us per I/O at
#    depth 1. Then one more --anatomy run per workload with the kernel's BPF
#    statistics on (sysctl kernel.bpf_stats_enabled=1, set back after): the
#    programs' own run time per I/O, every task's tracepoint hits included
#    (bpf_stats adds its own two clock reads per run to that figure).
#
# Usage: bench/anatomy_cost.sh [DIR]      Needs root (BPF).
# Environment: RUNTIME (5s) REPS (3) DIRECT_MIB (1024) IOACCT OUT_DIR (see lib.sh)
# Exit status: 0 when everything ran (whatever PASS/FAIL says), 2 when a run failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DIRECT_MIB=${DIRECT_MIB:-1024}
need_ioacct
[ "$(id -u)" = 0 ] || die "needs root: --anatomy loads BPF programs"
ROWS=$OUT_DIR/anatomy.rows
: >"$ROWS"
print_context

STATS_BEFORE=$(cat /proc/sys/kernel/bpf_stats_enabled)
restore_stats() { echo "$STATS_BEFORE" >/proc/sys/kernel/bpf_stats_enabled; }
trap 'restore_stats; _cleanup' EXIT

make_test_file anatomy "$DIRECT_MIB"
FILE=$TEST_FILE
warm_direct "$FILE"

# Used through `declare -n args=H$s` below.
# shellcheck disable=SC2034
H1=(--engine nop --iodepth 1 --runtime "$RUNTIME")
# shellcheck disable=SC2034
H2=(--direct --rw randread --bs 4k --iodepth 1 --runtime "$RUNTIME" "$FILE")
# shellcheck disable=SC2034
H3=(--direct --rw randread --bs 4k --iodepth 32 --runtime "$RUNTIME" "$FILE")
# shellcheck disable=SC2034
H4=(--buffered --rw randread --bs 4k --iodepth 1 --runtime "$RUNTIME" "$FILE")
echo
echo "== h) --anatomy cost: with against without, interleaved"
for s in 1 2 3 4; do
  declare -n args="H$s"
  echo "   h$s: ioacct bench ${args[*]} [--anatomy]"
done
for rep in $(seq 1 "$REPS"); do
  if [ $((rep % 2)) = 1 ]; then order=(off on); else order=(on off); fi
  for s in 1 2 3 4; do
    declare -n args="H$s"
    [ "$s" = 4 ] && warm_cached "$FILE"
    for mode in "${order[@]}"; do
      flag=()
      [ "$mode" = on ] && flag=(--anatomy)
      run_ioacct "$OUT_DIR/h$s.$mode.$rep.json" "${args[@]}" "${flag[@]}"
      add_row "$ROWS" "h$s" "anatomy-$mode" "$rep" ioacct "$OUT_DIR/h$s.$mode.$rep.json"
    done
  done
done

echo
echo "== the programs' own time, bpf_stats on (one run each)"
echo 1 >/proc/sys/kernel/bpf_stats_enabled
for s in 1 2 3 4; do
  declare -n args="H$s"
  [ "$s" = 4 ] && warm_cached "$FILE"
  run_ioacct "$OUT_DIR/h$s.stats.json" "${args[@]}" --anatomy
  BPF_NS[s]=$($BL get "$OUT_DIR/h$s.stats.json" results.anatomy.bpf_run_ns_per_io)
  RUNS[s]=$($BL get "$OUT_DIR/h$s.stats.json" results.anatomy.bpf_runs_per_io)
done
restore_stats

for s in 1 2 3 4; do
  echo
  echo "h$s:"
  $BL table "$ROWS" "h$s" anatomy-off anatomy-on
  printf '  programs (bpf_stats): %.0f ns per I/O, %.1f runs per I/O\n' "${BPF_NS[$s]}" "${RUNS[$s]}"
done
echo
for s in 1 2 3 4; do
  r=$($BL ratio "$ROWS" "h$s" iops anatomy-on anatomy-off)
  on=$($BL median "$ROWS" "h$s" anatomy-on cpu_us)
  off=$($BL median "$ROWS" "h$s" anatomy-off cpu_us)
  delta=$($PY -c "print($on - $off)")
  if [ "$s" = 1 ] || [ "$s" = 2 ] || [ "$s" = 4 ]; then
    $BL check "h$s extra CPU per I/O with --anatomy (us), depth 1" "$delta" "<=" 1.0 "IOPS on/off $($BL fmt "$r")"
  else
    echo "INFO  h$s extra CPU per I/O with --anatomy (us), depth 32: $($BL fmt "$delta")  IOPS on/off $($BL fmt "$r")"
  fi
done
