#!/usr/bin/env bash
# io_uring against libaio at the same depth, ioacct against fio: 4k randread,
# O_DIRECT, on one file whose host cache is warmed, at depth 1 and 32, one thread.
# Four runs per round, in an order that rotates between rounds:
#   ioacct-libaio  ioacct bench --engine libaio
#   ioacct-uring   ioacct bench (--engine uring, the default ring)
#   fio-libaio     fio --ioengine=libaio
#   fio-uring      fio --ioengine=io_uring
# Each table is medians with ratios against ioacct-libaio; the info lines are the
# paired ratios (round by round) for the two questions: io_uring/libaio within
# each tool, and ioacct/fio within each engine. No target: information only.
#
# Usage: bench/libaio.sh [DIR]      (DIR: where the test file goes)
# Environment: RUNTIME (5s) REPS (3) BENCH_DIR IOACCT FIO OUT_DIR (see lib.sh), and
#   DIRECT_MIB   size of the O_DIRECT test file in MiB   (default 1024)
#   DEPTHS       the depths to run                        (default "1 32")
# Exit status: 0 when everything ran, 2 when a run failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DIRECT_MIB=${DIRECT_MIB:-1024}
DEPTHS=${DEPTHS:-1 32}
need_ioacct
need_fio

ROWS=$OUT_DIR/libaio.rows
: >"$ROWS"
print_context
make_test_file direct "$DIRECT_MIB"; FILE=$TEST_FILE
warm_direct "$FILE"

RUNS=(ioacct-libaio ioacct-uring fio-libaio fio-uring)
for depth in $DEPTHS; do
  s=qd$depth
  IOACCT_W=(--direct --rw randread --bs 4k --iodepth "$depth" --runtime "$RUNTIME" "$FILE")
  FIO_W=(--name=aio "--filename=$FILE" --direct=1 --rw=randread --bs=4k "--iodepth=$depth" --time_based "--runtime=$RUNTIME")
  echo
  echo "== $s) 4k randread, O_DIRECT ($DIRECT_MIB MiB file, host cache warmed), depth $depth, 1 thread"
  echo "   ioacct-libaio: ioacct bench --engine libaio ${IOACCT_W[*]}"
  echo "   ioacct-uring:  ioacct bench ${IOACCT_W[*]}"
  echo "   fio-libaio:    fio --ioengine=libaio ${FIO_W[*]}"
  echo "   fio-uring:     fio --ioengine=io_uring ${FIO_W[*]}"
  n=${#RUNS[@]}
  for rep in $(seq 1 "$REPS"); do
    for k in $(seq 0 $((n - 1))); do
      t=${RUNS[$(( (k + rep - 1) % n ))]}
      out=$OUT_DIR/$s.$t.$rep.json
      case $t in
        ioacct-libaio) run_ioacct "$out" --engine libaio "${IOACCT_W[@]}"; add_row "$ROWS" "$s" "$t" "$rep" ioacct "$out" ;;
        ioacct-uring) run_ioacct "$out" "${IOACCT_W[@]}"; add_row "$ROWS" "$s" "$t" "$rep" ioacct "$out" ;;
        fio-libaio) run_fio "$out" --ioengine=libaio "${FIO_W[@]}"; add_row "$ROWS" "$s" "$t" "$rep" fio "$out" ;;
        fio-uring) run_fio "$out" --ioengine=io_uring "${FIO_W[@]}"; add_row "$ROWS" "$s" "$t" "$rep" fio "$out" ;;
      esac
    done
  done
  $BL table "$ROWS" "$s" ioacct-libaio ioacct-uring fio-libaio fio-uring
  for pair in "ioacct-uring ioacct-libaio" "fio-uring fio-libaio" "ioacct-libaio fio-libaio" "ioacct-uring fio-uring"; do
    read -r a b <<<"$pair"
    for field in iops cpu_us; do
      read -r med lo hi cov <<<"$($BL paired "$ROWS" "$s" "$field" "$a" "$b" ratio)"
      printf '  info  %s  %-8s %s/%s: %s (pair by pair; %s interval %s to %s)\n' "$s" "$field" "$a" "$b" \
        "$($BL fmt "$med" ratio)" "$($PY -c "import sys; c = float(sys.argv[1]); print('-' if c != c else f'{c:.0%}')" "$cov")" \
        "$($BL fmt "$lo" ratio)" "$($BL fmt "$hi" ratio)"
    done
  done
done
