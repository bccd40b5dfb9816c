#!/usr/bin/env bash
# ioacct against fio on the same file, repetitions interleaved (ioacct, fio, ...),
# medians and ratios ioacct/fio printed, targets printed as PASS/FAIL.
#
#   a) 4k randread, buffered, page cache hot, depth 32, 1 thread:
#        IOPS ioacct >= 2.5 x fio with default options,
#        IOPS ioacct >= 1.1 x fio with its best io_uring options
#   b) 4k randread, O_DIRECT, depth 32, 1 thread:
#        CPU time per I/O of ioacct <= 1/3 of fio's (default options)
#   e) 4k randread, O_DIRECT, depth 32, 1 thread, both tools at their best:
#        ioacct --fixed-files --fixed-bufs --submit-batch 32 --complete-batch 32
#        against fio with FIO_BEST_OPTS (--fixedbufs --registerfiles, batches of 32,
#        --gtod_reduce=1): I/Os per CPU-second (IOPS / CPU seconds per second
#        = 1e6 / CPU us per I/O) of ioacct >= fio's. The runs alternate, and the
#        order rotates between repetitions. ioacct's CPU is the whole process
#        (results.cpu.per_io_us); fio's is its job thread's getrusage(RUSAGE_THREAD).
#
# Usage: bench/compare_fio.sh [DIR]      (DIR: where the test files go)
# Environment: RUNTIME (5s) REPS (3) BENCH_DIR IOACCT FIO OUT_DIR (see lib.sh), and
#   DIRECT_MIB   size of the O_DIRECT test file in MiB            (default 1024)
#   CACHED_MIB   size of the page-cache-hot test file in MiB      (default 512)
#   FIO_BEST_OPTS  fio options added for "best"                   (default below)
#   FIO_LITERAL  1: also run fio with literally nothing but the default options in
#                (a), which drops the file from the page cache (--invalidate=1);
#                shown for information, no target                 (default 1)
#   SCENARIOS    which of "a b e" to run                          (default "a b e")
#                (with e, b leaves out its fio-best runs: e runs the same command)
#   E_ACCT_BASIC 1: in (e), also run ioacct with --acct basic (no per-I/O latency,
#                like fio's --gtod_reduce=1), information only    (default 1)
# Exit status: 0 when everything ran (whatever PASS/FAIL says), 2 when a run failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

DIRECT_MIB=${DIRECT_MIB:-1024}
CACHED_MIB=${CACHED_MIB:-512}
FIO_BEST_OPTS=${FIO_BEST_OPTS:---iodepth_batch_submit=32 --iodepth_batch_complete_min=32 --fixedbufs --registerfiles --gtod_reduce=1 --hipri=0 --sqthread_poll=0}
FIO_LITERAL=${FIO_LITERAL:-1}
SCENARIOS=${SCENARIOS:-a b e}
E_ACCT_BASIC=${E_ACCT_BASIC:-1}
need_ioacct
need_fio

ROWS=$OUT_DIR/compare_fio.rows
: >"$ROWS"
print_context

# fio's options shared by every fio run here; --name is required, the rest is the workload.
fio_job() { FIO_JOB=(--name=cmp "--filename=$1" --ioengine=io_uring --rw=randread --bs=4k --iodepth=32 --time_based "--runtime=$RUNTIME"); }
read -r -a FIO_BEST <<<"$FIO_BEST_OPTS"

if [[ " $SCENARIOS " == *" a "* ]]; then
  make_test_file cached "$CACHED_MIB"; FILE=$TEST_FILE
  warm_cached "$FILE"
  # fio invalidates (drops) the file's page cache before each job unless told
  # --invalidate=0, so the page-cache-hot comparison adds exactly that one option
  # to fio's defaults; every run of either tool starts with the file re-read.
  fio_job "$FILE"
  IOACCT_A=(--buffered --rw randread --bs 4k --iodepth 32 --runtime "$RUNTIME" "$FILE")
  FIO_DEF_A=("${FIO_JOB[@]}" --direct=0 --invalidate=0)
  FIO_BEST_A=("${FIO_DEF_A[@]}" "${FIO_BEST[@]}")
  FIO_LIT_A=("${FIO_JOB[@]}" --direct=0)
  echo
  echo "== a) 4k randread, buffered, page cache hot ($CACHED_MIB MiB file), depth 32, 1 thread"
  echo "   ioacct bench ${IOACCT_A[*]}"
  echo "   fio-default: fio ${FIO_DEF_A[*]}"
  echo "   fio-best:    fio ${FIO_BEST_A[*]}"
  [ "$FIO_LITERAL" = 1 ] && echo "   fio-literal: fio ${FIO_LIT_A[*]}   (information only: drops the cache)"
  for rep in $(seq 1 "$REPS"); do
    warm_cached "$FILE"; run_ioacct "$OUT_DIR/a.ioacct.$rep.json" "${IOACCT_A[@]}"
    add_row "$ROWS" a ioacct "$rep" ioacct "$OUT_DIR/a.ioacct.$rep.json"
    warm_cached "$FILE"; run_fio "$OUT_DIR/a.fio-default.$rep.json" "${FIO_DEF_A[@]}"
    add_row "$ROWS" a fio-default "$rep" fio "$OUT_DIR/a.fio-default.$rep.json"
    warm_cached "$FILE"; run_fio "$OUT_DIR/a.fio-best.$rep.json" "${FIO_BEST_A[@]}"
    add_row "$ROWS" a fio-best "$rep" fio "$OUT_DIR/a.fio-best.$rep.json"
    if [ "$FIO_LITERAL" = 1 ]; then
      warm_cached "$FILE"; run_fio "$OUT_DIR/a.fio-literal.$rep.json" "${FIO_LIT_A[@]}"
      add_row "$ROWS" a fio-literal "$rep" fio "$OUT_DIR/a.fio-literal.$rep.json"
    fi
  done
  peers=(fio-default fio-best)
  [ "$FIO_LITERAL" = 1 ] && peers+=(fio-literal)
  $BL table "$ROWS" a ioacct "${peers[@]}"
  $BL check "a1 buffered IOPS ioacct/fio-default" "$($BL ratio "$ROWS" a iops ioacct fio-default)" ">=" 2.5
  $BL check "a2 buffered IOPS ioacct/fio-best" "$($BL ratio "$ROWS" a iops ioacct fio-best)" ">=" 1.1
  [ -n "${BENCH_SHARED_TAG:-}" ] || rm -f -- "$FILE"   # shared files: run_all.sh removes them
fi

# b) and e) share one O_DIRECT file.
if [[ " $SCENARIOS " == *" b "* || " $SCENARIOS " == *" e "* ]]; then
  make_test_file direct "$DIRECT_MIB"; DIRECT_FILE=$TEST_FILE
  warm_direct "$DIRECT_FILE"
fi

if [[ " $SCENARIOS " == *" b "* ]]; then
  FILE=$DIRECT_FILE
  fio_job "$FILE"
  IOACCT_B=(--direct --rw randread --bs 4k --iodepth 32 --runtime "$RUNTIME" "$FILE")
  FIO_DEF_B=("${FIO_JOB[@]}" --direct=1)
  FIO_BEST_B=("${FIO_DEF_B[@]}" "${FIO_BEST[@]}")
  echo
  echo "== b) 4k randread, O_DIRECT ($DIRECT_MIB MiB file, host cache warmed), depth 32, 1 thread"
  echo "   ioacct bench ${IOACCT_B[*]}"
  echo "   fio-default: fio ${FIO_DEF_B[*]}"
  # e) runs the very same fio-best command; b) runs it only when e) does not.
  B_BEST=1
  [[ " $SCENARIOS " == *" e "* ]] && B_BEST=0
  if [ "$B_BEST" = 1 ]; then
    echo "   fio-best:    fio ${FIO_BEST_B[*]}   (information only)"
  else
    echo "   (fio-best with O_DIRECT: see e) below)"
  fi
  for rep in $(seq 1 "$REPS"); do
    run_ioacct "$OUT_DIR/b.ioacct.$rep.json" "${IOACCT_B[@]}"
    add_row "$ROWS" b ioacct "$rep" ioacct "$OUT_DIR/b.ioacct.$rep.json"
    run_fio "$OUT_DIR/b.fio-default.$rep.json" "${FIO_DEF_B[@]}"
    add_row "$ROWS" b fio-default "$rep" fio "$OUT_DIR/b.fio-default.$rep.json"
    if [ "$B_BEST" = 1 ]; then
      run_fio "$OUT_DIR/b.fio-best.$rep.json" "${FIO_BEST_B[@]}"
      add_row "$ROWS" b fio-best "$rep" fio "$OUT_DIR/b.fio-best.$rep.json"
    fi
  done
  if [ "$B_BEST" = 1 ]; then $BL table "$ROWS" b ioacct fio-default fio-best; else $BL table "$ROWS" b ioacct fio-default; fi
  $BL check "b  O_DIRECT CPU/IO ioacct/fio-default" "$($BL ratio "$ROWS" b cpu_us ioacct fio-default)" "<=" 0.3333
fi

if [[ " $SCENARIOS " == *" e "* ]]; then
  FILE=$DIRECT_FILE
  fio_job "$FILE"
  IOACCT_E=(--direct --rw randread --bs 4k --iodepth 32 --fixed-files --fixed-bufs --submit-batch 32 --complete-batch 32
            --runtime "$RUNTIME" "$FILE")
  FIO_BEST_E=("${FIO_JOB[@]}" --direct=1 "${FIO_BEST[@]}")
  echo
  echo "== e) 4k randread, O_DIRECT ($DIRECT_MIB MiB file, host cache warmed), depth 32, 1 thread, both at their best"
  echo "   ioacct-fixed: ioacct bench ${IOACCT_E[*]}"
  echo "   fio-best:     fio ${FIO_BEST_E[*]}"
  # Information only: the same ioacct command with --acct basic (no per-I/O latency,
  # like fio's --gtod_reduce=1), where the build has --acct.
  RUNS_E=(ioacct-fixed fio-best)
  if [ "$E_ACCT_BASIC" = 1 ] && [[ "$("$IOACCT" bench --help 2>/dev/null)" == *"--acct "* ]]; then
    RUNS_E+=(ioacct-basic)
    echo "   ioacct-basic: ioacct bench ${IOACCT_E[*]} --acct basic   (information only)"
  fi
  echo "   (the run order rotates between repetitions; ioacct-fixed-thr is ioacct-fixed's own runs with"
  echo "    CPU counted for the submitting thread only, as fio counts its job thread: information only)"
  nr=${#RUNS_E[@]}
  for rep in $(seq 1 "$REPS"); do
    for k in $(seq 0 $((nr - 1))); do
      t=${RUNS_E[$(( (k + rep - 1) % nr ))]}
      out=$OUT_DIR/e.$t.$rep.json
      case $t in
        ioacct-fixed)
          run_ioacct "$out" "${IOACCT_E[@]}"
          add_row "$ROWS" e ioacct-fixed "$rep" ioacct "$out"
          # fio's usr_cpu/sys_cpu come from getrusage(RUSAGE_THREAD) of its job thread.
          if [ "$($BL breakdown "$out" | cut -d' ' -f1)" != nan ]; then
            add_row "$ROWS" e ioacct-fixed-thr "$rep" ioacct-thread "$out"
          fi ;;
        ioacct-basic)
          run_ioacct "$out" "${IOACCT_E[@]}" --acct basic
          add_row "$ROWS" e ioacct-basic "$rep" ioacct "$out" ;;
        fio-best)
          run_fio "$out" "${FIO_BEST_E[@]}"
          add_row "$ROWS" e fio-best "$rep" fio "$out" ;;
      esac
    done
  done
  peers=(fio-best)
  grep -q ' ioacct-fixed-thr ' "$ROWS" && peers+=(ioacct-fixed-thr)
  [[ " ${RUNS_E[*]} " == *" ioacct-basic "* ]] && peers+=(ioacct-basic)
  $BL table "$ROWS" e ioacct-fixed "${peers[@]}"
  for v in "${peers[@]:1}"; do
    echo "  info  e  IOPS per CPU-second $v/fio-best: $($BL fmt "$($BL ratio "$ROWS" e iops_per_cpu_s "$v" fio-best)" ratio)"
  done
  $BL check "e  O_DIRECT IOPS per CPU-second ioacct-fixed/fio-best" \
    "$($BL ratio "$ROWS" e iops_per_cpu_s ioacct-fixed fio-best)" ">=" 1.0 \
    "(median IOPS/CPU-s: ioacct $($BL fmt "$($BL median "$ROWS" e ioacct-fixed iops_per_cpu_s)" iops), fio $($BL fmt "$($BL median "$ROWS" e fio-best iops_per_cpu_s)" iops))"
fi
