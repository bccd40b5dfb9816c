#!/usr/bin/env bash
# The default run against the speed of light. Interleaved, REPS rounds, medians:
#   sol          bench/sol.cpp: the smallest io_uring read loop with the cheapest
#                ring (registered file, buffers and ring fd; refill as reaped, a
#                pass's refills submitted with the next wait): the CPU floor
#   sol-iops     the same loop submitting each refill as it is written (sol
#                --each), one enter per I/O as fio's defaults: the IOPS ceiling
#                where the device, not the CPU, is the limit
#   ioacct       `ioacct bench` with its defaults (only the workload given)
#   acct-off     the same with --acct off (completions counted, nothing else)
#   sb1          `ioacct bench --submit-batch 1 --complete-batch 1` (O_DIRECT only)
#   fio          fio's defaults with --ioengine=io_uring (O_DIRECT workloads only)
# on these workloads, 4 KiB random reads, one thread:
#   nop          IORING_OP_NOP at depth 128 (no file; fio has no counterpart)
#   buf32        buffered, page cache hot (re-read with cat before every run), depth 32
#   dio1 dio4 dio32 dio128
#                O_DIRECT on a file on the disk, warmed with dd iflag=direct, depth N
#   loop32       O_DIRECT on a loop device (direct I/O to its backing file on
#                the disk, warmed the same way), depth 32
# then ioacct's start-up: `ioacct bench --runtime 100ms FILE` STARTUP_RUNS times.
#
# CPU per I/O is the whole process from /usr/bin/time (user + sys, start-up
# included) divided by every I/O the tool did. Each target is judged pair by
# pair: the median over the rounds of each round's ratio (or difference), as
# the tools of one round ran side by side in time, with an order-statistic
# interval for that median and a note where the target lies inside it. The
# table shows the medians, their ratios and the paired ratios. Targets (issues
# 12 and 35):
#   ioacct / the ceiling (O_DIRECT workloads): IOPS >= 0.97 of the best loop
#                     of sol, sol-iops, sb1 and fio (each paired with ioacct
#                     round by round; the best is the one ioacct trails most),
#                     and CPU per I/O <= 1.10 of the cheapest loop whose IOPS
#                     is within 0.97 of the best's. Not each round's highest
#                     IOPS: that is biased by the noise, and the best loop
#                     itself fails it (the check prints by how much). Then
#                     confirmed: CONFIRM pairs of CONFIRM_RUNTIME runs of the
#                     default and that loop alone, back to back (ABBA), IOPS
#                     >= 0.97 pair by pair
#   ioacct / sol      IOPS >= 0.95, CPU per I/O <= 1.10 (nop, buf32)
#   ioacct / off      IOPS >= 0.98, CPU per I/O <= +0.3 us (all)
#   start-up          wall - 100 ms <= 150 ms, CPU <= 80 ms (medians); the CPU
#                     is the process's less what it spent inside the 100 ms
#                     window (the JSON's cpu.breakdown.total_s): that is the
#                     I/O's own, larger the faster the device
#
# SPIN=1 runs a busy loop pinned to the last CPU for the whole script (the
# CPU-bound host state); each round's first line says which state it ran in
# and the load average. The host's own speed (fast or slow hours) shows in
# sol-iops's IOPS: quote it with the table.
#
# Usage: bench/sol.sh [DIR]      (DIR: where the test files go, see lib.sh)
# Environment (defaults): RUNTIME (10s) REPS (5) STARTUP_RUNS (10) STARTUP_TEMP (3)
#   WORKLOADS ("nop buf32 dio1 dio32") DIRECT_MIB (1024) CACHED_MIB (512) SPIN (0)
#   CONFIRM (20; 0: none) CONFIRM_RUNTIME (3s)
#   SOL (build/release/ioacct_sol) IOACCT FIO OUT_DIR PYTHON (see lib.sh)
# The binaries are copied to OUT_DIR/bin first and the copies run.
# Exit status: 0 when every run completed (whatever PASS/FAIL says), 2 when one failed.
set -euo pipefail
RUNTIME=${RUNTIME:-10s}
REPS=${REPS:-5}
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

SOL=${SOL:-$REPO/build/release/ioacct_sol}
STARTUP_RUNS=${STARTUP_RUNS:-10}
STARTUP_TEMP=${STARTUP_TEMP:-3}
WORKLOADS=${WORKLOADS:-nop buf32 dio1 dio32}
DIRECT_MIB=${DIRECT_MIB:-1024}
CACHED_MIB=${CACHED_MIB:-512}
need_ioacct
need_fio
[ -x "$SOL" ] || die "$SOL not found; build it with: (cd $REPO && cmake --build --preset release --target ioacct_sol), or set SOL="
[ -x /usr/bin/time ] || die "/usr/bin/time not found (apt-get install time)"
for w in $WORKLOADS; do
  case $w in nop|buf32|dio1|dio4|dio32|dio128|loop32) ;;
    *) die "WORKLOADS: unknown workload '$w' (nop buf32 dio1 dio4 dio32 dio128 loop32)" ;; esac
done
SPIN=${SPIN:-0}
# sol takes seconds or milliseconds.
SOL_RUNTIME=$RUNTIME
CONFIRM=${CONFIRM:-20}
CONFIRM_RUNTIME=${CONFIRM_RUNTIME:-3s}
declare -A CONFIRMED=()
[[ $RUNTIME =~ ^([0-9]+)m$ ]] && SOL_RUNTIME=$((BASH_REMATCH[1] * 60))s
# Copies run, so that a rebuild meanwhile cannot mix two builds in one table.
mkdir -p "$OUT_DIR/bin"
if ! cp -- "$IOACCT" "$OUT_DIR/bin/ioacct" || ! cp -- "$SOL" "$OUT_DIR/bin/ioacct_sol"; then
  die "cannot copy the binaries to $OUT_DIR/bin"
fi
IOACCT_BUILT=$IOACCT
IOACCT=$OUT_DIR/bin/ioacct
SOL=$OUT_DIR/bin/ioacct_sol
ROWS=$OUT_DIR/sol.rows
: >"$ROWS"

others() {
  echo "# busiest other processes: $(ps -eo pcpu=,comm= --sort=-pcpu | awk 'NR<=6 {printf "%s %s%%; ", $2, $1}')"
}
print_context
echo "# (a copy of $IOACCT_BUILT); sol: a copy of build's ioacct_sol (sha256 $(sha256sum <"$SOL" | cut -c1-12))"
others

make_test_file cached "$CACHED_MIB"
CACHED=$TEST_FILE
make_test_file direct "$DIRECT_MIB"
DIRECT=$TEST_FILE
LOOPDEV=""
SPIN_PID=""
stop_extras() {
  [ -n "$SPIN_PID" ] && kill "$SPIN_PID" 2>/dev/null
  [ -n "$LOOPDEV" ] && losetup -d "$LOOPDEV" 2>/dev/null
  _cleanup
}
trap stop_extras EXIT
case " $WORKLOADS " in *" loop32 "*)
  LOOPDEV=$(losetup --find --show --direct-io=on --read-only "$DIRECT") || die "cannot attach a loop device to $DIRECT (root needed)" ;;
esac
if [ "$SPIN" = 1 ]; then
  taskset -c "$(($(nproc) - 1))" sh -c 'while :; do :; done' &
  SPIN_PID=$!
fi
STATE=$([ "$SPIN" = 1 ] && echo "CPU-bound (a busy loop on CPU $(($(nproc) - 1)))" || echo quiet)

# timed KIND OUT CMD... : runs CMD under /usr/bin/time, its stdout to OUT.json,
# and prints the figures; KIND (sol, ioacct, fio) says how to read them.
timed() {
  local kind=$1 out=$2; shift 2
  echo "+ $*" >"$out.cmd"
  if ! /usr/bin/time -f "%e %U %S" -o "$out.time" "$@" >"$out" 2>"$out.err"; then
    cat "$out.err" >&2
    die "failed: $*"
  fi
  $BL timed "$kind" "$out" "$out.time"
}

# run_tool WORKLOAD TOOL REP [SCENARIO] : one run, its row under SCENARIO
# (default: the workload).
run_tool() {
  local w=$1 tool=$2 rep=$3 scen=${4:-$1} out=$OUT_DIR/${4:-$1}.$2.$3.json depth file figs
  local -a io=(--rw randread --bs 4k)
  case $w in
    nop) depth=128 ;;
    buf32) depth=32 file=$CACHED; warm_cached "$CACHED" ;;
    dio*) depth=${w#dio} file=$DIRECT ;;
    loop32) depth=32 file=$LOOPDEV ;;
  esac
  case $tool in
    sol|sol-iops)
      local -a each=()
      [ "$tool" = sol-iops ] && each=(--each)
      if [ "$w" = nop ]; then figs=$(timed sol "$out" "$SOL" --nop --depth "$depth" --runtime "$SOL_RUNTIME")
      elif [ "$w" = buf32 ]; then figs=$(timed sol "$out" "$SOL" --buffered --depth "$depth" --runtime "$SOL_RUNTIME" "$file")
      else figs=$(timed sol "$out" "$SOL" "${each[@]}" --depth "$depth" --runtime "$SOL_RUNTIME" "$file"); fi ;;
    ioacct|acct-off|sb1)
      local -a extra=()
      [ "$tool" = acct-off ] && extra=(--acct off)
      [ "$tool" = sb1 ] && extra=(--submit-batch 1 --complete-batch 1)
      if [ "$w" = nop ]; then figs=$(timed ioacct "$out" "$IOACCT" bench --format json --engine nop --iodepth "$depth" --runtime "$RUNTIME" "${extra[@]}")
      elif [ "$w" = buf32 ]; then figs=$(timed ioacct "$out" "$IOACCT" bench --format json --buffered "${io[@]}" --iodepth "$depth" --runtime "$RUNTIME" "${extra[@]}" "$file")
      else figs=$(timed ioacct "$out" "$IOACCT" bench --format json "${io[@]}" --iodepth "$depth" --runtime "$RUNTIME" "${extra[@]}" "$file"); fi ;;
    fio)
      figs=$(timed fio "$out" "$FIO" --output-format=json --name=sol --filename="$file" --ioengine=io_uring \
        --rw=randread --bs=4k --iodepth="$depth" --direct=1 --time_based --runtime="$RUNTIME") ;;
  esac
  echo "$scen $tool $rep $figs" >>"$ROWS"
  local iops cpu p99
  read -r iops cpu _ p99 <<<"$figs"
  printf '  round %d  %-6s %-9s %12s IOPS  %8s us CPU/IO  p99 %8s us\n' "$rep" "$scen" "$tool" \
    "$($BL fmt "$iops" iops)" "$($BL fmt "$cpu")" "$($BL fmt "$p99")"
}

tools_of() { case $1 in dio*|loop32) echo "sol sol-iops ioacct acct-off sb1 fio" ;; *) echo "sol ioacct acct-off" ;; esac; }

echo
echo "== interleaved: $REPS round(s) of $RUNTIME per run; in each round every workload runs every tool, the order rotating"
for rep in $(seq 1 "$REPS"); do
  echo "  round $rep: host state $STATE, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u +%H:%M:%S) UTC"
  case " $WORKLOADS " in *" dio"*|*" loop32 "*) warm_direct "$DIRECT" ;; esac
  for w in $WORKLOADS; do
    read -r -a tools <<<"$(tools_of "$w")"
    n=${#tools[@]}
    for i in $(seq 0 $((n - 1))); do run_tool "$w" "${tools[$(((i + rep - 1) % n))]}" "$rep"; done
  done
done

# The ceiling confirmed: the rounds above screen for the best loop of each
# O_DIRECT workload; CONFIRM pairs of short runs of the default and that one
# loop, back to back (ABBA), then judge IOPS with the host's drift of a few
# seconds, not of a round, between the two of a pair. CPU is judged on the
# rounds: a short run's figure is mostly the start-up. Runs of 3 s, not 1 s:
# auto's first probe spends ~100-200 ms the way it does not keep, a tenth or
# a fifth of a 1 s run (each_share 0.90 and 0.80 in the 1 s runs of
# 2026-12-07 04:55) where the default 10 s run spends ~4% on all its probes.
if [ "$CONFIRM" -gt 0 ]; then
  echo
  echo "== confirmation: $CONFIRM pairs of $CONFIRM_RUNTIME runs, the default against each O_DIRECT workload's best loop"
  for w in $WORKLOADS; do
    case $w in dio*|loop32) ;; *) continue ;; esac
    best=$($BL bestloop "$ROWS" "$w" ioacct sol,sol-iops,sb1,fio)
    echo "  $w: the best loop of the rounds is $best"
    warm_direct "$DIRECT"
    for i in $(seq 1 "$CONFIRM"); do
      if [ $((i % 4)) = 1 ] || [ $((i % 4)) = 0 ]; then order=(ioacct "$best"); else order=("$best" ioacct); fi
      for t in "${order[@]}"; do RUNTIME=$CONFIRM_RUNTIME SOL_RUNTIME=$CONFIRM_RUNTIME run_tool "$w" "$t" "$i" "$w-confirm"; done
    done >"$OUT_DIR/$w-confirm.log"
    CONFIRMED[$w]=$best
  done
fi

echo
echo "== start-up: ioacct bench --runtime 100ms DIRECT, $STARTUP_RUNS runs (wall less the 100 ms, CPU less the window's)"
startup_files=()
for i in $(seq 1 "$STARTUP_RUNS"); do
  out=$OUT_DIR/startup.$i.json
  /usr/bin/time -f "%e %U %S" -o "$out.time" "$IOACCT" bench --format json --runtime 100ms "$DIRECT" >"$out" 2>"$out.err" \
    || { cat "$out.err" >&2; die "ioacct failed: bench --runtime 100ms $DIRECT"; }
  startup_files+=("$out.time")
done
read -r su_wall su_cpu su_wmin su_wmax su_cmin su_cmax su_total <<<"$($BL startup 0.1 "${startup_files[@]}")"
echo "  wall - 100 ms: $($BL fmt "$su_wall") ms ($($BL fmt "$su_wmin")-$($BL fmt "$su_wmax")), CPU outside the window:" \
  "$($BL fmt "$su_cpu") ms ($($BL fmt "$su_cmin")-$($BL fmt "$su_cmax")); medians (min-max); the whole process's CPU $($BL fmt "$su_total") ms"
if [ "$STARTUP_TEMP" -gt 0 ]; then
  temp_files=()
  for i in $(seq 1 "$STARTUP_TEMP"); do
    out=$OUT_DIR/startup-temp.$i.json
    TMPDIR=$BENCH_DIR /usr/bin/time -f "%e %U %S" -o "$out.time" "$IOACCT" bench --format json --runtime 100ms >"$out" 2>"$out.err" \
      || { cat "$out.err" >&2; die "ioacct failed: bench --runtime 100ms (temporary file)"; }
    temp_files+=("$out.time")
  done
  read -r tw tc _ _ _ _ _ <<<"$($BL startup 0.1 "${temp_files[@]}")"
  echo "  for information, with the default 1 GiB temporary file in $BENCH_DIR (created and filled each run):" \
    "wall - 100 ms $($BL fmt "$tw") ms, CPU outside the window $($BL fmt "$tc") ms (medians of $STARTUP_TEMP)"
fi

echo
others
echo
echo "== results"
for w in $WORKLOADS; do
  read -r -a tools <<<"$(tools_of "$w")"
  echo "-- $w"
  $BL spread "$ROWS" "$w" sol "${tools[@]:1}"
done
echo
echo "host state: $STATE"
for w in $WORKLOADS; do
  case $w in
    dio*|loop32)
      $BL pceiling "$w" "$ROWS" "$w" ioacct sol,sol-iops,sb1,fio 0.97 1.10
      if [ -n "${CONFIRMED[$w]:-}" ]; then
        $BL pcheck "$w IOPS / ${CONFIRMED[$w]}, confirmed in $CONFIRM pairs of $CONFIRM_RUNTIME" "$ROWS" "$w-confirm" \
          iops ioacct "${CONFIRMED[$w]}" ratio ">=" 0.97
      fi ;;
    *)
      $BL pcheck "$w ioacct/sol IOPS" "$ROWS" "$w" iops ioacct sol ratio ">=" 0.95
      $BL pcheck "$w ioacct/sol CPU per I/O" "$ROWS" "$w" cpu_us ioacct sol ratio "<=" 1.10 ;;
  esac
  $BL pcheck "$w default/--acct off IOPS" "$ROWS" "$w" iops ioacct acct-off ratio ">=" 0.98
  $BL pcheck "$w default - --acct off CPU us per I/O" "$ROWS" "$w" cpu_us ioacct acct-off delta "<=" 0.3
done
$BL check "start-up wall - 100 ms (ms)" "$su_wall" "<=" 150
$BL check "start-up CPU outside the window (ms)" "$su_cpu" "<=" 80 "the whole process: $($BL fmt "$su_total") ms"
