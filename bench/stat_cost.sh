#!/usr/bin/env bash
# g) What `ioacct stat`'s exact busy time costs the I/O it watches. fio does
#    4k random reads, O_DIRECT, io_uring, at depth 1 and 32, on a file on vda
#    (warmed: a host cache sits behind it) and on a loop device over tmpfs
#    (fast, so a per-I/O cost shows), with and without `ioacct stat` attached.
#    Every case interleaved, REPS rounds, medians:
#    - g1: the programs' own time per I/O <= 0.3 us: kernel.bpf_stats run
#      time summed over stat's programs (the completion program and the
#      reader's sweeps, which bpf_stats times too), divided by the I/Os (every
#      request completed on the machine meanwhile: the programs run for all),
#      minus what bpf_stats itself adds per program run, measured on an empty
#      program attached to block_io_done in the same run;
#    - g2: fio IOPS with / without stat >= 0.98;
#    - for reference: stat's own user CPU per I/O (its JSON's tracker cost);
#    - with BY=cgroup (or process): a fourth run per round, `stat --by BY
#      --bpf-stats`, and g3: what attribution adds to the programs' time per
#      I/O (the --by run's less the plain one's, each less bpf_stats' own
#      share per run) <= 0.1 us; and a fifth, `stat --by BY` without
#      bpf_stats, for its IOPS.
# w) g2 again, inside one fio run: fio runs throughout, and `ioacct stat 1`
#    is attached in every other window (the order alternating per pair).
#    Each window's IOPS is the device's own completed reads
#    (/sys/block/DEV/stat) over WINDOW, from 0.3 s after the attach or the
#    detach; the verdict is the median of the pairs' ratios, >= 0.98. Separate
#    fio runs differ by more than 2% on this VM from run to run; adjacent
#    windows of one run share fio's start, its file and the host's minute.
#    FLOOR=1 adds a third window per pair with only an empty program on
#    block_io_done: the floor of any tracker with one program per I/O.
# h) Start-up: `ioacct stat 1 1` <= 150 ms wall (median of 10); for
#    reference the attach itself (`stat -y 10ms 1`: load, attach, settle,
#    one window), and the tracker's share of `bench --runtime 100ms`
#    (--acct full against --acct basic, 10 interleaved pairs).
#
# Usage: bench/stat_cost.sh            (as root)
# Environment: RUNTIME (5s) REPS (5) DEPTHS ("1 32") CASES ("vda loop") LOOP_MIB (512) DIRECT_MIB (1024)
#   IOACCT FIO OUT_DIR BENCH_DIR (see lib.sh); PARTS ("g h w") which parts run; for w:
#   PAIRS (12), WINDOW (1, seconds) and FLOOR (0; 1: the empty-program window); for g: BY ("": no
#   attribution runs; cgroup or process: stat --by's runs beside, g3).
# Exit status: 0 when everything ran (whatever PASS/FAIL says), 2 when a run failed.
set -euo pipefail
REPS=${REPS:-5}
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LOOP_MIB=${LOOP_MIB:-512}
DIRECT_MIB=${DIRECT_MIB:-1024}
DEPTHS=${DEPTHS:-1 32}
CASES=${CASES:-vda loop}
PARTS=${PARTS:-g h w}
BY=${BY:-}
PAIRS=${PAIRS:-12}
WINDOW=${WINDOW:-1}
need_ioacct
need_fio
[ "$(id -u)" = 0 ] || die "needs root (a loop device, BPF programs)"
command -v bpftool >/dev/null || die "bpftool not found (apt-get install bpftool)"
print_context
echo "# DEPTHS=$DEPTHS CASES=$CASES PARTS=$PARTS BY=$BY"

SHM=$(mktemp -d /dev/shm/ioacct-stat-cost.XXXXXX)
LOOP=""
STAT_PID=""
FIO_PID=""
finish() {
  [ -n "$STAT_PID" ] && kill "$STAT_PID" 2>/dev/null && wait "$STAT_PID" 2>/dev/null
  [ -n "$FIO_PID" ] && kill "$FIO_PID" 2>/dev/null && wait "$FIO_PID" 2>/dev/null
  stop_empty
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -rf -- "$SHM"
  _cleanup
}
trap finish EXIT

declare -A TARGET DEV
for c in $CASES; do
  case $c in
    vda)
      make_test_file stat-cost "$DIRECT_MIB"
      warm_direct "$TEST_FILE"
      TARGET[vda]=$TEST_FILE
      DEV[vda]=$(basename "$(readlink -f "/sys/dev/block/$(stat -c '%Hd:%Ld' "$TEST_FILE")")")
      ;;
    loop)
      dd if=/dev/urandom of="$SHM/backing" bs=1M count="$LOOP_MIB" iflag=fullblock status=none || die "cannot fill $SHM/backing"
      LOOP=$(losetup --find --show "$SHM/backing")
      TARGET[loop]=$LOOP
      DEV[loop]=${LOOP#/dev/}
      ;;
    *) die "CASES: unknown case '$c' (vda, loop)" ;;
  esac
  echo "# case $c: ${TARGET[$c]} on ${DEV[$c]}"
done

fio_args() {  # CASE DEPTH
  echo --name=stat-cost --filename="${TARGET[$1]}" --rw=randread --bs=4k --direct=1 --ioengine=io_uring \
    --iodepth="$2" --time_based --runtime="$RUNTIME" --randrepeat=0 --size="$([ "$1" = vda ] && echo "${DIRECT_MIB}m" || echo "${LOOP_MIB}m")"
}

# stat's one report covers fio's run and a little more: it ends on its own
# and prints its JSON, with the tracker's own cost.
STAT_S=$($PY -c 'import re,sys; v,u=re.fullmatch(r"(\d+)(ms|s|m)",sys.argv[1]).groups(); print(int(int(v)*{"ms":1e-3,"s":1,"m":60}[u]) + 2)' "$RUNTIME")
# wait_attached ERR : until the stat writing its stderr to ERR has attached
# its tracker (10 s at most).
wait_attached() {
  for _ in $(seq 500); do grep -q "exact busy time from" "$1" 2>/dev/null && break; sleep 0.02; done
  grep -q "exact busy time from" "$1" || { cat "$1" >&2; die "ioacct stat did not attach"; }
}
start_stat() {  # OUT INTERVAL_S EXTRA_ARGS... DEVICE
  local out=$1 interval=$2; shift 2
  "$IOACCT" stat --format json -y "$interval" 1 "$@" >"$out.stat" 2>"$out.stat.err" &
  STAT_PID=$!
  wait_attached "$out.stat.err"
}
stop_stat() { wait "$STAT_PID" || die "ioacct stat failed: $(cat "$1.stat.err")"; STAT_PID=""; }
interrupt_stat() { kill -INT "$STAT_PID"; wait "$STAT_PID" || true; STAT_PID=""; }

# block_ios: requests completed on every whole disk so far (/proc/diskstats:
# reads, writes, discards, flushes). The programs run for every request on
# the machine (most return at the device test), so their time is per request
# of the machine; other processes' I/O on vda counts too.
block_ios() {
  local n=0 name
  while read -r _ _ name r _ _ _ w _ _ _ _ _ _ d _ _ _ f _; do
    [ -e "/sys/class/block/$name/partition" ] && continue
    n=$((n + r + w + ${d:-0} + ${f:-0}))
  done </proc/diskstats
  echo "$n"
}


if [[ " $PARTS " == *" g "* ]]; then
  ROWS=$OUT_DIR/g.rows
  : >"$ROWS"
  echo
  echo "== g) ioacct stat's cost per I/O: fio 4k randread O_DIRECT io_uring, depths $DEPTHS, cases $CASES"
  for rep in $(seq 1 "$REPS"); do
    for c in $CASES; do
      for qd in $DEPTHS; do
        # off / on alternate in order from round to round; the bpf_stats run last.
        if [ $((rep % 2)) = 1 ]; then order=(off on stats); else order=(on off stats); fi
        [ -n "$BY" ] && order+=(byon bystats)
        for mode in "${order[@]}"; do
          out=$OUT_DIR/g.$c.$qd.$mode.$rep
          # shellcheck disable=SC2046 # fio_args is a list of words
          case $mode in
            off) run_fio "$out.json" $(fio_args "$c" "$qd") ;;
            on)
              start_stat "$out" "$STAT_S" "${DEV[$c]}"
              run_fio "$out.json" $(fio_args "$c" "$qd")
              stop_stat "$out"
              ;;
            byon)
              start_stat "$out" "$STAT_S" --by "$BY" "${DEV[$c]}"
              run_fio "$out.json" $(fio_args "$c" "$qd")
              stop_stat "$out"
              ;;
            stats | bystats)
              by_args=()
              [ "$mode" = bystats ] && by_args=(--by "$BY")
              start_stat "$out" 3600 --bpf-stats "${by_args[@]}" "${DEV[$c]}"
              start_empty block_io_done
              read -r t0 n0 < <(prog_runs "$STAT_PID")
              read -r e0 m0 < <(prog_runs name:ioacct_empty)
              b0=$(block_ios)
              run_fio "$out.json" $(fio_args "$c" "$qd")
              b1=$(block_ios)
              read -r t1 n1 < <(prog_runs "$STAT_PID")
              read -r e1 m1 < <(prog_runs name:ioacct_empty)
              stop_empty
              interrupt_stat
              echo "$((t1 - t0)) $((n1 - n0)) $((e1 - e0)) $((m1 - m0)) $((b1 - b0))" >"$out.progs"
              ;;
          esac
        done
        $PY - "$OUT_DIR" "$c" "$qd" "$rep" >>"$ROWS" <<'PYEOF'
import json, sys
d, c, qd, rep = sys.argv[1:5]
def iops(mode):
    return json.load(open(f"{d}/g.{c}.{qd}.{mode}.{rep}.json"))["jobs"][0]["read"]["iops"]
import os
def progs(mode):  # the programs' µs per I/O less bpf_stats' share, with it, its share per run, runs per I/O, fio's share
    base = f"{d}/g.{c}.{qd}.{mode}.{rep}"
    t, n, e, m, blk = map(int, open(base + ".progs").read().split())
    fio_ios = json.load(open(base + ".json"))["jobs"][0]["read"]["total_ios"]
    ios = max(blk, fio_ios)  # every request on the machine; at least fio's
    empty = e / m if m else 0.0
    return ((t - n * empty) / ios / 1000 if ios else 0.0, t / ios / 1000 if ios else 0.0, empty,
            n / ios if ios else 0, fio_ios / ios if ios else 0.0)
prog_us, raw_us, empty, runs, fio_share = progs("stats")
by = os.path.exists(f"{d}/g.{c}.{qd}.bystats.{rep}.progs")
by_us = progs("bystats")[0] if by else 0.0
by_iops = iops("byon") if by else 0.0
tr = json.loads(open(f"{d}/g.{c}.{qd}.on.{rep}.stat").readline() or "{}").get("tracker") or {}
user_us = (tr.get("user_cpu_ns") or 0) / max(1, tr.get("completions") or 0) / 1000
by_user_us = 0.0
if by:
    tb = json.loads(open(f"{d}/g.{c}.{qd}.byon.{rep}.stat").readline() or "{}").get("tracker") or {}
    by_user_us = (tb.get("user_cpu_ns") or 0) / max(1, tb.get("completions") or 0) / 1000
print(c, qd, rep, iops("off"), iops("on"), prog_us, raw_us, empty, runs, user_us, fio_share, by_us, by_iops, by_user_us)
PYEOF
        tail -1 "$ROWS" | awk '{printf "  rep %s  %-4s depth %-2s  IOPS without %8.0f  with %8.0f (%.3f)  programs %.3f us/IO (%.3f with bpf_stats; empty program %.0f ns, %.2f runs/IO; fio %.0f%% of the I/Os)  reader %.3f us/IO", $3, $1, $2, $4, $5, $5 / $4, $6, $7, $8, $9, 100 * $11, $10}
          $13 > 0 {printf "  --by: programs %.3f us/IO, IOPS %8.0f, reader %.3f us/IO", $12, $13, $14} {printf "\n"}'
      done
    done
  done
  $PY - "$ROWS" <<'PYEOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
cases = []
for r in rows:
    if (r[0], r[1]) not in cases: cases.append((r[0], r[1]))
print()
print("| case | depth | IOPS without | IOPS with stat | ratio | programs µs/IO (bpf_stats share taken off) | with its share | fio's share of the I/Os | reader µs/IO |")
print("|---|---|---|---|---|---|---|---|---|")
fails = []
for c, qd in cases:
    rs = [r for r in rows if (r[0], r[1]) == (c, qd)]
    med = lambda k: st.median(float(r[k]) for r in rs)
    off, on = med(3), med(4)
    ratio = st.median(float(r[4]) / float(r[3]) for r in rs)
    prog = med(5)
    print(f"| {c} | {qd} | {off:,.0f} | {on:,.0f} | {ratio:.3f} | {prog:.3f} | {med(6):.3f} | {100 * med(10):.0f}% | {med(9):.3f} |")
    fails += [f"g1 {c} depth {qd}"] if prog > 0.3 else []
    fails += [f"g2 {c} depth {qd}"] if ratio < 0.98 else []
print(f"(medians of {len(rows) // max(1, len(cases))} interleaved rounds)")
by = any(float(r[12]) > 0 for r in rows)
if by:
    print()
    print("| case | depth | programs µs/IO | with --by | added (median of rounds) | IOPS with stat | with stat --by | ratio (median of rounds) | reader µs/IO | with --by |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for c, qd in cases:
        rs = [r for r in rows if (r[0], r[1]) == (c, qd)]
        med = lambda k: st.median(float(r[k]) for r in rs)
        added = st.median(float(r[11]) - float(r[5]) for r in rs)
        ratio = st.median(float(r[12]) / float(r[4]) for r in rs)  # round by round: the host's pace moves between rounds
        print(f"| {c} | {qd} | {med(5):.3f} | {med(11):.3f} | {added:.3f} | {med(4):,.0f} | {med(12):,.0f} | {ratio:.3f} | {med(9):.3f} | {med(13):.3f} |")
for c, qd in cases:
    rs = [r for r in rows if (r[0], r[1]) == (c, qd)]
    prog = st.median(float(r[5]) for r in rs)
    ratio = st.median(float(r[4]) / float(r[3]) for r in rs)
    print(f"{'PASS' if prog <= 0.3 else 'FAIL'}  g1 {c} depth {qd}: programs {prog:.3f} us per I/O (target <= 0.3)")
    print(f"{'PASS' if ratio >= 0.98 else 'FAIL'}  g2 {c} depth {qd}: IOPS with / without stat {ratio:.3f} (target >= 0.98)")
    if by:
        added = st.median(float(r[11]) - float(r[5]) for r in rs)
        print(f"{'PASS' if added <= 0.1 else 'FAIL'}  g3 {c} depth {qd}: attribution adds {added:.3f} us per I/O to the programs (target <= 0.1)")
PYEOF
fi

if [[ " $PARTS " == *" h "* ]]; then
  echo
  echo "== h) start-up: 10 runs each, interleaved"
  ROWS=$OUT_DIR/h.rows
  : >"$ROWS"
  time_it() {  # LABEL CMD...: wall s, cpu s
    local label=$1; shift
    /usr/bin/time -f "$label %e %U %S" -o "$OUT_DIR/h.time" "$@" >/dev/null 2>"$OUT_DIR/h.err" || { cat "$OUT_DIR/h.err" >&2; die "failed: $*"; }
    cat "$OUT_DIR/h.time" >>"$ROWS"
  }
  DEV1=${DEV[vda]:-${DEV[loop]}}
  for i in $(seq 1 10); do
    time_it stat_1_1 "$IOACCT" stat 1 1 "$DEV1"
    time_it stat_attach "$IOACCT" stat -y 10ms 1 "$DEV1"
    if [ $((i % 2)) = 1 ]; then pair=(full basic); else pair=(basic full); fi
    for a in "${pair[@]}"; do time_it "bench_$a" "$IOACCT" bench --runtime 100ms --size 16m --acct "$a"; done
  done
  $PY - "$ROWS" <<'PYEOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
med = lambda label, k: st.median(float(r[k]) for r in rows if r[0] == label)
spread = lambda label: (min(float(r[1]) for r in rows if r[0] == label), max(float(r[1]) for r in rows if r[0] == label))
print("| command | wall ms (median) | wall range | CPU ms (median) |")
print("|---|---|---|---|")
for label, what in (("stat_1_1", "ioacct stat 1 1"), ("stat_attach", "ioacct stat -y 10ms 1 (attach, settle, one window)"),
                    ("bench_full", "ioacct bench --runtime 100ms --size 16m (--acct full)"),
                    ("bench_basic", "ioacct bench --runtime 100ms --size 16m --acct basic")):
    lo, hi = spread(label)
    print(f"| {what} | {1000 * med(label, 1):.0f} | {1000 * lo:.0f}-{1000 * hi:.0f} | {1000 * (med(label, 2) + med(label, 3)):.0f} |")
share_wall = 1000 * (med("bench_full", 1) - med("bench_basic", 1))
share_cpu = 1000 * ((med("bench_full", 2) + med("bench_full", 3)) - (med("bench_basic", 2) + med("bench_basic", 3)))
print(f"the tracker's share of bench start-up: {share_wall:.0f} ms wall, {share_cpu:.0f} ms CPU (medians, full - basic)")
w = 1000 * med("stat_1_1", 1)
print(f"{'PASS' if w <= 150 else 'FAIL'}  h1 ioacct stat 1 1 start-up: {w:.0f} ms wall (target <= 150)")
PYEOF
fi

if [[ " $PARTS " == *" w "* ]]; then
  echo
  echo "== w) fio's IOPS inside one run, ioacct stat attached in every other ${WINDOW} s window, $PAIRS pairs"
  ROWS=$OUT_DIR/w.rows
  : >"$ROWS"
  # dev_reads DEV : "ns reads" now (reads completed on the device so far).
  dev_reads() { echo "$(date +%s%N) $(awk '{print $1}' "/sys/block/$1/stat")"; }
  window_iops() {  # DEV : settles 0.3 s, then the device's reads per second over WINDOW
    local t0 n0 t1 n1
    sleep 0.3
    read -r t0 n0 <<<"$(dev_reads "$1")"
    sleep "$WINDOW"
    read -r t1 n1 <<<"$(dev_reads "$1")"
    $PY -c 'import sys; t0, n0, t1, n1 = map(int, sys.argv[1:]); print((n1 - n0) / ((t1 - t0) / 1e9))' "$t0" "$n0" "$t1" "$n1"
  }
  for c in $CASES; do
    for qd in $DEPTHS; do
      out=$OUT_DIR/w.$c.$qd
      # shellcheck disable=SC2046 # fio_args is a list of words
      "$FIO" $(fio_args "$c" "$qd" | sed "s/--runtime=[^ ]*/--runtime=$((PAIRS * 2 * (WINDOW + 2) + 30))/") \
        --output-format=json --output="$out.fio.json" &
      FIO_PID=$!
      sleep 1.5
      for k in $(seq 1 "$PAIRS"); do
        if [ $((k % 2)) = 1 ]; then order=(off on); else order=(on off); fi
        # FLOOR=1: a third window, with only an empty program on
        # block_io_done (no reader): what any tracker with a program per
        # completion pays for the tracepoint's dispatch alone.
        empty=0
        if [ "${FLOOR:-0}" = 1 ]; then
          if [ $((k % 3)) = 0 ]; then order=(empty "${order[@]}"); elif [ $((k % 3)) = 1 ]; then order+=(empty); else order=("${order[0]}" empty "${order[1]}"); fi
        fi
        for mode in "${order[@]}"; do
          case $mode in
            on)
              "$IOACCT" stat 1 "${DEV[$c]}" >/dev/null 2>"$out.stat.err" &
              STAT_PID=$!
              wait_attached "$out.stat.err"
              on=$(window_iops "${DEV[$c]}")
              interrupt_stat
              ;;
            empty)
              start_empty block_io_done
              empty=$(window_iops "${DEV[$c]}")
              stop_empty
              ;;
            off) off=$(window_iops "${DEV[$c]}") ;;
          esac
        done
        echo "$c $qd $k $off $on $empty" >>"$ROWS"
        printf '  pair %2d  %-4s depth %-2s  without %8.0f  with stat %8.0f  (%.3f)  empty program %8.0f  (%.3f)\n' \
          "$k" "$c" "$qd" "$off" "$on" "$($PY -c "print($on / $off)")" "$empty" "$($PY -c "print($empty / $off)")"
      done
      kill "$FIO_PID" 2>/dev/null
      wait "$FIO_PID" 2>/dev/null || true
    done
  done
  $PY - "$ROWS" <<'PYEOF'
import statistics as st, sys
pairs = {}  # (case, depth) -> [(without, with, empty program or 0)], in the order run
for c, qd, _, off, on, empty in (l.split() for l in open(sys.argv[1])):
    pairs.setdefault((c, qd), []).append((float(off), float(on), float(empty)))
print()
print("| case | depth | pairs | IOPS without (median) | with stat (median) | ratio (median of pairs) | pairs' range "
      "| empty program alone: ratio (FLOOR=1) |")
print("|---|---|---|---|---|---|---|---|")
verdicts = []
for (c, qd), ps in pairs.items():
    ratios = [on / off for off, on, _ in ps]
    floor = [e / off for off, _, e in ps if e > 0]
    m = st.median(ratios)
    print(f"| {c} | {qd} | {len(ps)} | {st.median(p[0] for p in ps):,.0f} | {st.median(p[1] for p in ps):,.0f} "
          f"| {m:.3f} | {min(ratios):.2f}-{max(ratios):.2f} | {f'{st.median(floor):.3f}' if floor else '-'} |")
    verdicts.append(f"{'PASS' if m >= 0.98 else 'FAIL'}  w {c} depth {qd}: IOPS with / without stat in adjacent windows {m:.3f} (target >= 0.98)")
print("\n".join(verdicts))
PYEOF
fi
