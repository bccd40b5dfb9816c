#!/usr/bin/env bash
# c) ioacct's own overhead: IORING_OP_NOP at depth 128 on one thread must reach
#    >= 12 million ops/s. No fio peer does the same work (fio's null engine never
#    enters the kernel); fio --ioengine=null at depth 128 is run interleaved and
#    shown for reference only.
#
# Usage: bench/nop.sh
# Environment: RUNTIME (5s) REPS (3) IOACCT FIO OUT_DIR (see lib.sh), and
#   NOP_TARGET   ops/s to reach                     (default 12000000)
#   FIO_NULL     1: also run fio's null engine      (default 1)
# Note: ioacct bench with no target creates (and removes) a 1 GiB temporary file in
# $TMPDIR even for --engine nop; that happens before the measured window.
# Exit status: 0 when everything ran (whatever PASS/FAIL says), 2 when a run failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

NOP_TARGET=${NOP_TARGET:-12000000}
FIO_NULL=${FIO_NULL:-1}
need_ioacct
[ "$FIO_NULL" = 1 ] && need_fio

ROWS=$OUT_DIR/nop.rows
: >"$ROWS"
print_context

IOACCT_C=(--engine nop --iodepth 128 --submit-batch 128 --complete-batch 128 --runtime "$RUNTIME")
FIO_NULL_DEF=(--name=null --ioengine=null --rw=randread --bs=4k --iodepth=128 --size=1g --time_based "--runtime=$RUNTIME")
FIO_NULL_BEST=("${FIO_NULL_DEF[@]}" --iodepth_batch_submit=128 --iodepth_batch_complete_min=128 --gtod_reduce=1 --norandommap)
echo
echo "== c) nop engine, depth 128, 1 thread"
echo "   ioacct bench ${IOACCT_C[*]}"
if [ "$FIO_NULL" = 1 ]; then
  echo "   fio-null:      fio ${FIO_NULL_DEF[*]}   (reference only)"
  echo "   fio-null-best: fio ${FIO_NULL_BEST[*]}   (reference only)"
fi
for rep in $(seq 1 "$REPS"); do
  run_ioacct "$OUT_DIR/c.ioacct.$rep.json" "${IOACCT_C[@]}"
  add_row "$ROWS" c ioacct "$rep" ioacct "$OUT_DIR/c.ioacct.$rep.json"
  if [ "$FIO_NULL" = 1 ]; then
    run_fio "$OUT_DIR/c.fio-null.$rep.json" "${FIO_NULL_DEF[@]}"
    add_row "$ROWS" c fio-null "$rep" fio "$OUT_DIR/c.fio-null.$rep.json"
    run_fio "$OUT_DIR/c.fio-null-best.$rep.json" "${FIO_NULL_BEST[@]}"
    add_row "$ROWS" c fio-null-best "$rep" fio "$OUT_DIR/c.fio-null-best.$rep.json"
  fi
done
if [ "$FIO_NULL" = 1 ]; then
  $BL table "$ROWS" c ioacct fio-null fio-null-best
else
  $BL table "$ROWS" c ioacct
fi
$BL check "c  nop ops/s, depth 128, 1 thread" "$($BL median "$ROWS" c ioacct iops)" ">=" "$NOP_TARGET"
