#!/usr/bin/env bash
# f) What accounting costs: ioacct's default, --acct latency (per-I/O latency,
#    exact in-flight tracker, time series, edge samples), against --acct off
#    (completions only), side by side, interleaved repetitions (bench/sol.sh
#    does the same on O_DIRECT device I/O too, beside sol and fio):
#    - 4k random reads, buffered, page cache hot, depth 32: cost <= 2% IOPS
#    - nop engine, depth 128, batches of 128:                cost <= 2% ops/s
#
# Usage: bench/acct_cost.sh [DIR]
# Environment: RUNTIME (5s) REPS (3) CACHED_MIB (512) IOACCT OUT_DIR (see lib.sh)
# Exit status: 0 when everything ran (whatever PASS/FAIL says), 2 when a run failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

CACHED_MIB=${CACHED_MIB:-512}
need_ioacct
ROWS=$OUT_DIR/acct.rows
: >"$ROWS"
print_context

make_test_file cached "$CACHED_MIB"
FILE=$TEST_FILE
warm_cached "$FILE"

BUF=(--buffered --rw randread --bs 4k --iodepth 32 --runtime "$RUNTIME" "$FILE")
NOP=(--engine nop --iodepth 128 --submit-batch 128 --complete-batch 128 --runtime "$RUNTIME")
echo
echo "== f) accounting cost: --acct latency (the default) against --acct off, interleaved"
echo "   buffered: ioacct bench ${BUF[*]} --acct latency|off"
echo "   nop:      ioacct bench ${NOP[*]} --acct latency|off"
for rep in $(seq 1 "$REPS"); do
  # Alternate which level goes first, so drift does not favour one.
  if [ $((rep % 2)) = 1 ]; then order=(latency off); else order=(off latency); fi
  for level in "${order[@]}"; do
    warm_cached "$FILE"
    run_ioacct "$OUT_DIR/f1.$level.$rep.json" "${BUF[@]}" --acct "$level"
    add_row "$ROWS" f1 "acct-$level" "$rep" ioacct "$OUT_DIR/f1.$level.$rep.json"
    run_ioacct "$OUT_DIR/f2.$level.$rep.json" "${NOP[@]}" --acct "$level"
    add_row "$ROWS" f2 "acct-$level" "$rep" ioacct "$OUT_DIR/f2.$level.$rep.json"
  done
done
$BL table "$ROWS" f1 acct-off acct-latency
$BL table "$ROWS" f2 acct-off acct-latency
# Judged pair by pair: the median of each repetition's ratio (the two levels
# of one repetition ran side by side in time), with its interval.
$BL pcheck "f1 buffered hot depth 32: IOPS with --acct latency / off" "$ROWS" f1 iops acct-latency acct-off ratio ">=" 0.98
$BL pcheck "f2 nop depth 128: ops/s with --acct latency / off" "$ROWS" f2 iops acct-latency acct-off ratio ">=" 0.98
