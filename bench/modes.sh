#!/usr/bin/env bash
# ioacct's io_uring modes side by side, one table: IOPS, CPU time per I/O and p99
# latency of 4k random reads, 1 thread, for
#   {buffered, page cache hot ; O_DIRECT, file warmed with dd iflag=direct}
#   x {depth 1 ; depth 32}
#   x {default (= --wait sleep, registered files, buffers and ring fd) ; --sqpoll ;
#      plain (--no-fixed-files --no-fixed-bufs --no-register-ring) ; --wait spin ;
#      --engine psync (depth 1 rows only: psync does one I/O at a time per thread)}
# Every repetition runs every cell once; the cell order is rotated by
# (rep-1) x cells / REPS between repetitions, so no cell always runs first or last.
# The table shows medians over the repetitions. No targets, no PASS/FAIL.
#
# Usage: bench/modes.sh [DIR]      (DIR: where the test files go)
# Environment: BENCH_DIR IOACCT OUT_DIR (see lib.sh), and
#   MODES_RUNTIME  measured time per cell   (default: RUNTIME if set, else 3s)
#   MODES_REPS     repetitions              (default: REPS if set, else 2)
#   MODES          which modes               (default "sleep sqpoll plain spin psync";
#                  also known: fixed (--fixed-files --fixed-bufs: demanded, as the
#                  default has them), ring (--no-fixed-files --no-fixed-bufs: the
#                  registered ring fd alone), hybrid:DURATION (--wait hybrid:DURATION))
#   MODES_DEPTHS   depths                    (default "1 32"; psync runs at depth 1 only)
#   MODES_CACHE    which of "buffered direct" (default both)
#   DIRECT_MIB / CACHED_MIB  test file sizes (default 1024 / 512, as compare_fio.sh)
# CPU time per I/O is results.cpu.per_io_us: getrusage(RUSAGE_SELF) user+sys over the
# measured window, divided by the I/Os. With --sqpoll the kernel's SQ thread belongs
# to the process (an io thread), so its CPU, including its idle spinning, is counted.
# Exit status: 0 when everything ran, 2 when a run failed.
set -euo pipefail
RUNTIME=${MODES_RUNTIME:-${RUNTIME:-3s}}
REPS=${MODES_REPS:-${REPS:-2}}
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

MODES=${MODES:-sleep sqpoll plain spin psync}
MODES_DEPTHS=${MODES_DEPTHS:-1 32}
MODES_CACHE=${MODES_CACHE:-buffered direct}
DIRECT_MIB=${DIRECT_MIB:-1024}
CACHED_MIB=${CACHED_MIB:-512}
need_ioacct

ROWS=$OUT_DIR/modes.rows
CELLS=$OUT_DIR/modes.cells
EXTRA=$OUT_DIR/modes.extra
: >"$ROWS"
: >"$CELLS"
: >"$EXTRA"
print_context

# mode_args MODE DEPTH : sets MARGS (ioacct options) and MLABEL; returns 1 when
# the mode does not apply at this depth.
mode_args() {
  case $1 in
    sleep)    MARGS=();                             MLABEL="default (= --wait sleep)" ;;
    sqpoll)   MARGS=(--sqpoll);                     MLABEL="--sqpoll" ;;
    plain)    MARGS=(--no-fixed-files --no-fixed-bufs --no-register-ring); MLABEL="--no-fixed-files --no-fixed-bufs --no-register-ring" ;;
    fixed)    MARGS=(--fixed-files --fixed-bufs);   MLABEL="--fixed-files --fixed-bufs" ;;
    ring)     MARGS=(--no-fixed-files --no-fixed-bufs); MLABEL="--no-fixed-files --no-fixed-bufs (ring fd only)" ;;
    spin)     MARGS=(--wait spin);                  MLABEL="--wait spin" ;;
    hybrid:*) MARGS=(--wait "$1");                  MLABEL="--wait $1" ;;
    psync)    [ "$2" = 1 ] || return 1
              MARGS=(--engine psync);               MLABEL="--engine psync" ;;
    *) die "unknown mode '$1' in MODES" ;;
  esac
}

declare -A FILE_OF
for c in $MODES_CACHE; do
  case $c in
    buffered) make_test_file cached "$CACHED_MIB"; FILE_OF[buffered]=$TEST_FILE; warm_cached "$TEST_FILE" ;;
    direct)   make_test_file direct "$DIRECT_MIB"; FILE_OF[direct]=$TEST_FILE; warm_direct "$TEST_FILE" ;;
    *) die "MODES_CACHE: unknown '$c' (buffered or direct)" ;;
  esac
done

# The cells, in table order. CELL_ARGS holds each cell's whole ioacct command line.
CELL_IDS=()
declare -A CELL_ARGS CELL_CACHE
echo
echo "== mode matrix: 4k randread, 1 thread, runtime $RUNTIME per cell, $REPS repetition(s)"
for c in $MODES_CACHE; do
  if [ "$c" = buffered ]; then cflag=--buffered; ctext="buffered hot"; else cflag=--direct; ctext="O_DIRECT"; fi
  for d in $MODES_DEPTHS; do
    for m in $MODES; do
      mode_args "$m" "$d" || continue
      id="$c.d$d.$m"
      CELL_IDS+=("$id")
      CELL_CACHE[$id]=$c
      CELL_ARGS[$id]="$cflag --rw randread --bs 4k --iodepth $d ${MARGS[*]} --runtime $RUNTIME ${FILE_OF[$c]}"
      printf '%s\t%s\t%s\n' "$c.d$d" "$m" "$(printf '%-12s d%-3s %s' "$ctext" "$d" "$MLABEL")" >>"$CELLS"
      echo "   $id: ioacct bench ${CELL_ARGS[$id]}"
    done
  done
done
n=${#CELL_IDS[@]}
[ "$n" -gt 0 ] || die "no cells to run"

for rep in $(seq 1 "$REPS"); do
  shift_by=$(( (rep - 1) * n / REPS ))
  echo "-- repetition $rep of $REPS (starting at cell $((shift_by + 1)) of $n)  load $(cut -d' ' -f1-3 /proc/loadavg)"
  for k in $(seq 0 $((n - 1))); do
    id=${CELL_IDS[$(( (k + shift_by) % n ))]}
    [ "${CELL_CACHE[$id]}" = buffered ] && warm_cached "${FILE_OF[buffered]}"
    read -r -a args <<<"${CELL_ARGS[$id]}"
    out=$OUT_DIR/modes.$id.$rep.json
    run_ioacct "$out" "${args[@]}"
    add_row "$ROWS" "${id%.*}" "${id##*.}" "$rep" ioacct "$out" | sed "s/^  rep $rep  [^ ]*/  rep $rep  $(printf '%-17s' "$id")/"
    echo "${id%.*} ${id##*.} $rep $($BL breakdown "$out")" >>"$EXTRA"
  done
done

echo
echo "== mode matrix: medians (4k randread, 1 thread, $RUNTIME per cell)"
$BL grid "$ROWS" "$CELLS" "$EXTRA"
echo "  CPU us/IO = (user + sys CPU of the whole process) / I/Os over the measured window"
echo "  (results.cpu.per_io_us). With --sqpoll that includes the kernel SQ thread, which"
echo "  belongs to the process; it spins while it waits for work (up to sq_thread_idle,"
echo "  1 s by default). Where the build reports results.cpu.breakdown, 'SQ thr us/IO' is"
echo "  the SQ thread's part and 'other us/IO' that of the threads that neither submit nor"
echo "  poll (ioacct's main thread, io-wq workers); both are included in CPU us/IO."
