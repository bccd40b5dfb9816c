#!/usr/bin/env bash
# h) What bench --anatomy costs: ioacct bench with and without --anatomy,
#    interleaved, the order alternating each repetition, 4k random reads:
#    - h1 nop, depth 1
#    - h2 O_DIRECT on a file on the disk (warm host cache), depth 1
#    - h3 the same, depth 32
#    - h4 buffered, page cache hot, depth 1
#    For each: IOPS with/without, and its cost per I/O by parts, the figure the
#    target (issue 17: <= 1 us per I/O at depth 1) is checked on: one more
#    --anatomy run per workload with the kernel's BPF statistics on
#    (sysctl kernel.bpf_stats_enabled=1, set back after) gives the programs'
#    run time per I/O, every task's tracepoint hits included, less what
#    bpf_stats adds per run (an empty program on the same tracepoints in the
#    same run, as stat_cost.sh does), plus the bench thread's own share
#    (the JSON's reap_ns_per_io: the copy and the split). For reference, the
#    process's CPU per I/O with --anatomy minus without (INFO): it misses the
#    programs that run in interrupts while the bench sleeps (charged to
#    whatever task the CPU ran), and at depth 1 on vda single runs move by
#    several us here.
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
trap 'stop_empty; restore_stats; _cleanup' EXIT

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
echo "== the programs' own time, bpf_stats on (one run each, an empty program beside them)"
echo 1 >/proc/sys/kernel/bpf_stats_enabled
TPS=(io_uring_submit_req io_uring_complete block_io_start block_rq_issue block_rq_complete)
for s in 1 2 3 4; do
  declare -n args="H$s"
  [ "$s" = 4 ] && warm_cached "$FILE"
  # The wake-up programs are loaded at depth 1 only (anatomy.cpp).
  if [ "$s" = 3 ]; then start_empty "${TPS[@]}"; else start_empty "${TPS[@]}" sched_wakeup sched_switch; fi
  read -r e0 m0 < <(prog_runs name:ioacct_empty)
  run_ioacct "$OUT_DIR/h$s.stats.json" "${args[@]}" --anatomy
  read -r e1 m1 < <(prog_runs name:ioacct_empty)
  stop_empty
  BPF_NS[s]=$($BL get "$OUT_DIR/h$s.stats.json" results.anatomy.bpf_run_ns_per_io)
  RUNS[s]=$($BL get "$OUT_DIR/h$s.stats.json" results.anatomy.bpf_runs_per_io)
  REAP_NS[s]=$($BL get "$OUT_DIR/h$s.stats.json" results.anatomy.reap_ns_per_io)
  EMPTY_NS[s]=$($PY -c "print(($e1 - $e0) / ($m1 - $m0) if $m1 > $m0 else 0)")
  PROGS_NS[s]=$($PY -c "print(${BPF_NS[$s]} - ${RUNS[$s]} * ${EMPTY_NS[$s]})")
  PARTS_US[s]=$($PY -c "print((${PROGS_NS[$s]} + ${REAP_NS[$s]}) / 1000)")
done
restore_stats

for s in 1 2 3 4; do
  echo
  echo "h$s:"
  $BL table "$ROWS" "h$s" anatomy-off anatomy-on
  printf '  programs (bpf_stats): %.0f ns per I/O, %.1f runs per I/O; bpf_stats own share %.0f ns per run (empty program)\n' \
    "${BPF_NS[$s]}" "${RUNS[$s]}" "${EMPTY_NS[$s]}"
  printf '  by parts: programs %.0f ns + the bench thread %.0f ns = %.3f us per I/O\n' \
    "${PROGS_NS[$s]}" "${REAP_NS[$s]}" "${PARTS_US[$s]}"
done
echo
for s in 1 2 3 4; do
  r=$($BL ratio "$ROWS" "h$s" iops anatomy-on anatomy-off)
  on=$($BL median "$ROWS" "h$s" anatomy-on cpu_us)
  off=$($BL median "$ROWS" "h$s" anatomy-off cpu_us)
  delta=$($PY -c "print($on - $off)")
  if [ "$s" = 3 ]; then
    echo "INFO  h$s --anatomy's cost per I/O by parts (us), depth 32: $($BL fmt "${PARTS_US[$s]}")  IOPS on/off $($BL fmt "$r")"
  else
    $BL check "h$s --anatomy's cost per I/O by parts (us), depth 1" "${PARTS_US[$s]}" "<=" 1.0 "IOPS on/off $($BL fmt "$r")"
  fi
  echo "INFO  h$s process CPU per I/O with --anatomy minus without (us, medians): $($BL fmt "$delta")"
done
