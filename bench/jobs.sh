#!/usr/bin/env bash
# Several jobs in one run (issue 16), against fio and against ioacct before it:
#  h) one fio job file, a depth-1 random reader beside a depth-16 random writer
#     on a loop device, run by fio and by `ioacct bench --fio`, interleaved:
#     IOPS of each job within 10% of fio's (0.90 <= ioacct/fio <= 1.10). The
#     loop device does direct I/O to its file (--direct-io=on), whose blocks
#     sit warm in the host's cache: the device, not the CPU, bounds IOPS.
#  c) the same for each file of the corpus (tests/fio) that the device
#     bounds (CORPUS): each job's IOPS within 5% of fio's (issue 31), pair by
#     pair. A file whose runs leave the CPUs under IDLE_MIN% idle (from
#     /proc/stat, both tools' medians) is CPU-bound, not device-bound: the loop
#     device's worker shares the CPUs with the tool, so the leaner tool gets
#     more of the device, and only "not slower than fio" (>= 0.95) is held.
#  i) what the multi-job runner costs a plain single-job run: this build
#     against BASE_REV's (default: where this branch last took main), on
#     nop (depth 128, batches of 128), buffered page-cache-hot reads (depth
#     32) and O_DIRECT reads at depth 1 and 32: IOPS >= 0.98x each.
#
# Usage: bench/jobs.sh [DIR]          (needs root for the loop device of h)
# Environment (and lib.sh's RUNTIME, REPS, IOACCT, FIO, OUT_DIR):
#   JOBS_PARTS   which parts run                 (default: "h i"; "c" too on demand)
#   CORPUS       the files of tests/fio that (c) runs
#   JOBFILE      the job file of (h)             (default: bench/two-jobs.fio)
#   LOOP_MIB     size of the loop device of (h)  (default: 256)
#   IDLE_MIN     (c): under this % of the CPUs idle a file is CPU-bound (default: 10)
#   JOBS_ON      loop: (h) and (c) on the loop device (default); file: on its
#                backing file itself, on the disk, where the device and not
#                the loop's worker (CPU, shared with the tools) bounds IOPS
#   IOACCT_BASE  the binary to hold this one against in (i); unset: built from
#                BASE_REV (git archive + cmake, into OUT_DIR; a few minutes with ccache)
#   BASE_REV     default: git merge-base HEAD main. Once this branch is in main,
#                give the main commit from before the merge.
#   DIRECT_MIB / CACHED_MIB  test files of (i)   (default: 1024 / 512)
# Exit status: 0 when every run completed (whatever PASS/FAIL says), 2 when a step failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

PARTS=${JOBS_PARTS:-h i}
# (c): the corpus files whose jobs the device bounds (time-based, on the
# target; counted, paced-only and tempfile files are left to the tests).
CORPUS=${CORPUS:-libaio.fio randrw-mix.fio sync-engines.fio two-jobs.fio zipf.fio sqpoll.fio rate-dirs.fio}
JOBFILE=${JOBFILE:-$BENCH_SRC/two-jobs.fio}
LOOP_MIB=${LOOP_MIB:-256}
IDLE_MIN=${IDLE_MIN:-10}
DIRECT_MIB=${DIRECT_MIB:-1024}
CACHED_MIB=${CACHED_MIB:-512}
need_ioacct
ROWS=$OUT_DIR/jobs.rows
: >"$ROWS"
print_context

# A run's figures as one row; prints it.
job_row() {  # SCENARIO TOOL REP KIND JSON [JOB]
  local scen=$1 tool=$2 rep=$3 kind=$4 json=$5 job=${6:-} figs iops cpu p50 p99
  if [ -n "$job" ]; then figs=$($BL "$kind-job" "$json" "$job") || die "cannot read $json"
  else figs=$($BL "$kind" "$json") || die "cannot read $json"; fi
  echo "$scen $tool $rep $figs" >>"$ROWS"
  read -r iops cpu p50 p99 <<<"$figs"
  printf '  rep %d  %-10s %-8s %12s IOPS  %7s us CPU/IO  p99 %8s us\n' "$rep" "$scen" "$tool" \
    "$($BL fmt "$iops" iops)" "$($BL fmt "$cpu")" "$($BL fmt "$p99")"
}

# The CPUs' idle and total time so far, from /proc/stat's first line (iowait
# counts as idle: nothing ran).
cpu_ticks() { awk '/^cpu /{print $5 + $6, $2 + $3 + $4 + $5 + $6 + $7 + $8 + $9; exit}' /proc/stat; }

# One fio job file on the loop device, by fio and by ioacct --fio,
# interleaved: a table per job and its IOPS ratio, pair by pair, held to
# 1 +- TOL; with TOL 0.05 (c) a CPU-bound file's only to >= 1 - TOL.
fio_vs_ioacct() {  # TAG JOBFILE TOL
  local tag=$1 file=$2 tol=$3 secs=$RUNTIME jobs rep tool out j i0 t0 i1 t1 idle bound
  jobs=$(grep -o '^\[[^]]*\]' "$file" | tr -d '[]' | grep -vx global)
  echo
  echo "== $tag) $file on $LOOP ($LOOP_MIB MiB over $TEST_FILE): ioacct --fio against fio, interleaved"
  echo "   IOACCT_TARGET=$LOOP RUNTIME=$secs ioacct bench --fio $file --destroy-data | fio $file"
  for rep in $(seq 1 "$REPS"); do
    if [ $((rep % 2)) = 1 ]; then order=(ioacct fio); else order=(fio ioacct); fi
    for tool in "${order[@]}"; do
      out=$OUT_DIR/$tag.$tool.$rep.json
      read -r i0 t0 <<<"$(cpu_ticks)"
      # fio and ioacct --fio both read 5s, 500ms, 1m; LOGDIR for files that log.
      if [ "$tool" = ioacct ]; then
        IOACCT_TARGET=$LOOP RUNTIME=$secs LOGDIR=$OUT_DIR run_ioacct "$out" --fio "$file" --destroy-data
      else
        IOACCT_TARGET=$LOOP RUNTIME=$secs LOGDIR=$OUT_DIR run_fio "$out" "$file"
      fi
      read -r i1 t1 <<<"$(cpu_ticks)"
      echo "$tag $tool $rep $(echo "100 * ($i1 - $i0) / ($t1 - $t0)" | bc -l)" >>"$OUT_DIR/idle.rows"
      for j in $jobs; do job_row "$tag-$j" "$tool" "$rep" "$tool" "$out" "$j"; done
    done
  done
  for j in $jobs; do
    echo "-- job $j"
    $BL table "$ROWS" "$tag-$j" ioacct fio
  done
  # The higher of the two tools' median idle: a file is CPU-bound when
  # neither leaves the CPUs idle.
  idle=$(for tool in ioacct fio; do
      awk -v t="$tag" -v k="$tool" '$1 == t && $2 == k { print $4 }' "$OUT_DIR/idle.rows" | sort -g |
        awk '{ a[NR] = $1 } END { print NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2 }'
    done | sort -g | tail -1 | xargs printf '%.1f')
  bound=device
  if [ "$tol" = 0.05 ] && [ "$(echo "$idle < $IDLE_MIN" | bc -l)" = 1 ]; then bound=CPU; fi
  echo "-- $tag: the CPUs idle ${idle}% (median, the more idle tool's): $bound-bound"
  for j in $jobs; do
    $BL pcheck "$tag $(basename "$file") job $j ($bound-bound): IOPS ioacct / fio" "$ROWS" "$tag-$j" iops ioacct fio \
      ratio ">=" "$(echo "1 - $tol" | bc)"
    if [ "$bound" = device ]; then
      $BL pcheck "$tag $(basename "$file") job $j ($bound-bound): IOPS ioacct / fio" "$ROWS" "$tag-$j" iops ioacct fio \
        ratio "<=" "$(echo "1 + $tol" | bc)"
    else
      echo "NOTE  $tag job $j: CPU-bound, so ioacct ahead of fio is its lower CPU per I/O" \
        "($($BL fmt "$($BL ratio "$ROWS" "$tag-$j" cpu_us ioacct fio)")x fio's), not a different workload; the 1.05 bound is not held"
    fi
  done
}

if [[ " $PARTS " == *" h "* || " $PARTS " == *" c "* ]]; then
  need_fio
  [ "$(id -u)" = 0 ] || die "(h) and (c) need root for their loop device; run as root, or JOBS_PARTS=i"
  make_test_file loop "$LOOP_MIB"
  warm_direct "$TEST_FILE"
  if [ "${JOBS_ON:-loop}" = file ]; then
    LOOP=$TEST_FILE
  else
    LOOP=$(losetup --find --show --direct-io=on -- "$TEST_FILE") || die "losetup failed"
    trap 'losetup -d "$LOOP" 2>/dev/null; _cleanup' EXIT
  fi
fi
[[ " $PARTS " == *" h "* ]] && fio_vs_ioacct h "$JOBFILE" 0.10
if [[ " $PARTS " == *" c "* ]]; then
  for f in $CORPUS; do fio_vs_ioacct "c-${f%.fio}" "$REPO/tests/fio/$f" 0.05; done
fi

if [[ " $PARTS " == *" i "* ]]; then
  BASE=${IOACCT_BASE:-}
  if [ -z "$BASE" ]; then
    rev=${BASE_REV:-$(git -C "$REPO" merge-base HEAD main)}
    src=$OUT_DIR/base-src
    echo "# building the base ($rev) in $src"
    rm -rf -- "$src" && mkdir -p -- "$src"
    git -C "$REPO" archive "$rev" | tar -x -C "$src" || die "git archive $rev failed"
    (cmake --preset release -S "$src" -DIOACCT_TESTS=OFF -DIOACCT_BENCH=OFF >"$OUT_DIR/base-build.log" 2>&1 &&
     cmake --build "$src/build/release" -j "$(nproc)" --target ioacct >>"$OUT_DIR/base-build.log" 2>&1) \
      || { tail -20 "$OUT_DIR/base-build.log" >&2; die "building the base failed"; }
    BASE=$src/build/release/ioacct
  fi
  echo "# base: $BASE ($("$BASE" --version 2>/dev/null | head -1); sha256 $(sha256sum <"$BASE" | cut -c1-12))"
  make_test_file cached "$CACHED_MIB"
  CACHED=$TEST_FILE
  make_test_file direct "$DIRECT_MIB"
  DIRECT=$TEST_FILE
  warm_direct "$DIRECT"
  declare -A CASE=(
    [i1]="--engine nop --iodepth 128 --submit-batch 128 --complete-batch 128 --runtime $RUNTIME"
    [i2]="--buffered --rw randread --iodepth 32 --runtime $RUNTIME $CACHED"
    [i3]="--rw randread --iodepth 1 --runtime $RUNTIME $DIRECT"
    [i4]="--rw randread --iodepth 32 --runtime $RUNTIME $DIRECT"
  )
  echo
  echo "== i) a single job: this build against the base, interleaved"
  for c in i1 i2 i3 i4; do echo "   $c: ioacct bench ${CASE[$c]}"; done
  for rep in $(seq 1 "$REPS"); do
    if [ $((rep % 2)) = 1 ]; then order=(new base); else order=(base new); fi
    for c in i1 i2 i3 i4; do
      for tool in "${order[@]}"; do
        [ "$c" = i2 ] && warm_cached "$CACHED"
        bin=$IOACCT; [ "$tool" = base ] && bin=$BASE
        out=$OUT_DIR/$c.$tool.$rep.json
        # shellcheck disable=SC2086  # the case's words
        IOACCT=$bin run_ioacct "$out" ${CASE[$c]}
        job_row "$c" "$tool" "$rep" ioacct "$out"
      done
    done
  done
  for c in i1 i2 i3 i4; do
    echo "-- $c: ${CASE[$c]}"
    $BL table "$ROWS" "$c" new base
  done
  for c in i1 i2 i3 i4; do
    $BL check "$c single job: IOPS this build / base" "$($BL ratio "$ROWS" "$c" iops new base)" ">=" 0.98
  done
fi
