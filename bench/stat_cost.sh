#!/usr/bin/env bash
# g) What `ioacct stat`'s exact busy time costs the I/O it watches: fio doing
#    4k random reads (O_DIRECT, io_uring, depth 32) on a loop device whose
#    backing file is on tmpfs (so the device is fast and the per-I/O cost of
#    the tracepoints shows), with and without `ioacct stat 1 LOOP` attached,
#    interleaved repetitions:
#    - g1: the four BPF programs' run time per I/O < 0.3 us, from one more
#      run with kernel.bpf_stats_enabled (turned on for that run only, then
#      restored). It overstates: bpf_stats adds two clock reads per call
#      (~70 ns here, measured with empty programs). It misses the tracepoint
#      dispatch, which the next figure includes;
#    - g2: IOPS with / without >= 0.97 (medians of the interleaved runs);
#    - for reference, all CPUs' busy time (/proc/stat) per I/O, with minus
#      without: the whole cost, but on a shared machine other load moves it
#      more than stat does, so the spread of the runs is printed beside it.
#
# Usage: bench/stat_cost.sh            (as root)
# Environment: RUNTIME (5s) REPS (3) LOOP_MIB (1024) IOACCT FIO OUT_DIR (see lib.sh)
#   STAT_ARGS: more flags for ioacct stat, e.g. STAT_ARGS=--no-dev (no dev%: half the tracepoints)
# Exit status: 0 when everything ran (whatever PASS/FAIL says), 2 when a run failed.
set -euo pipefail
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

LOOP_MIB=${LOOP_MIB:-1024}
need_ioacct
need_fio
[ "$(id -u)" = 0 ] || die "needs root (a loop device, BPF programs)"
print_context

SHM=$(mktemp -d /dev/shm/ioacct-stat-cost.XXXXXX)
LOOP=""
STAT_PID=""
OLD_STATS=$(sysctl -n kernel.bpf_stats_enabled)
finish() {
  [ -n "$STAT_PID" ] && kill "$STAT_PID" 2>/dev/null && wait "$STAT_PID" 2>/dev/null
  [ -n "$LOOP" ] && losetup -d "$LOOP"
  rm -rf -- "$SHM"
  sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
  _cleanup
}
trap finish EXIT
dd if=/dev/urandom of="$SHM/backing" bs=1M count="$LOOP_MIB" iflag=fullblock status=none || die "cannot fill $SHM/backing"
LOOP=$(losetup --find --show "$SHM/backing")
NAME=${LOOP#/dev/}
echo "# loop device $LOOP over $SHM/backing ($LOOP_MIB MiB on tmpfs)"

FIO_ARGS=(--name=stat-cost --filename="$LOOP" --rw=randread --bs=4k --direct=1 --ioengine=io_uring --iodepth=32
          --time_based --runtime="$RUNTIME" --randrepeat=0)
ROWS=$OUT_DIR/stat.rows
: >"$ROWS"
busy_jiffies() { awk '/^cpu / {print $2+$3+$4+$7+$8+$9}' /proc/stat; }   # user nice system irq softirq steal
hz=$(getconf CLK_TCK)

# one_run MODE REP: fio alone (off) or with ioacct stat attached (on).
one_run() {
  local mode=$1 rep=$2 out=$OUT_DIR/g.$1.$2 j0 j1
  if [ "$mode" = on ]; then start_stat "$out"; fi
  j0=$(busy_jiffies)
  run_fio "$out.json" "${FIO_ARGS[@]}"
  j1=$(busy_jiffies)
  if [ "$mode" = on ]; then stop_stat; fi
  $PY - "$out.json" "$mode" "$rep" "$((j1 - j0))" "$hz" >>"$ROWS" <<'PYEOF'
import json, sys
f, mode, rep, jif, hz = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
job = json.load(open(f))["jobs"][0]["read"]
print(mode, rep, job["iops"], job["total_ios"], jif / hz * 1e6 / job["total_ios"])
PYEOF
  tail -1 "$ROWS" | awk '{printf "  rep %s  %-4s %10.0f IOPS  %6.3f us CPU/IO (all CPUs)\n", $2, $1, $3, $5}'
}

start_stat() {
  # shellcheck disable=SC2086 # STAT_ARGS is a list of flags
  "$IOACCT" stat ${STAT_ARGS:-} 1 "$NAME" >"$1.stat" 2>"$1.stat.err" &
  STAT_PID=$!
  for _ in $(seq 100); do grep -q "exact busy time from" "$1.stat.err" 2>/dev/null && break; sleep 0.05; done
  grep -q "exact busy time from" "$1.stat.err" || { cat "$1.stat.err" >&2; die "ioacct stat did not attach"; }
}
stop_stat() { kill -INT "$STAT_PID"; wait "$STAT_PID" || true; STAT_PID=""; }
prog_stats() {  # name run_time_ns run_cnt, per program of ioacct stat
  local id
  for id in $(cat /proc/"$STAT_PID"/fdinfo/* 2>/dev/null | awk '/^prog_id:/ {print $2}' | sort -u); do
    bpftool prog show id "$id" | sed -n 1p |
      awk '{for (i = 1; i < NF; i++) { if ($i == "name") n = $(i+1); if ($i == "run_time_ns") t = $(i+1); if ($i == "run_cnt") c = $(i+1) } print n, t+0, c+0}'
  done
}

echo
echo "== g) ioacct stat's cost: fio ${FIO_ARGS[*]}"
echo "   with and without: ioacct stat ${STAT_ARGS:+$STAT_ARGS }1 $NAME"
for rep in $(seq 1 "$REPS"); do
  if [ $((rep % 2)) = 1 ]; then order=(off on); else order=(on off); fi
  for mode in "${order[@]}"; do one_run "$mode" "$rep"; done
done
$PY - "$ROWS" <<'PYEOF'
import statistics as st, sys
rows = [l.split() for l in open(sys.argv[1])]
def med(mode, col): return st.median(float(r[col]) for r in rows if r[0] == mode)
iops_on, iops_off = med("on", 2), med("off", 2)
cpu_on, cpu_off = med("on", 4), med("off", 4)
ratio = iops_on / iops_off
print(f"  median IOPS: without {iops_off:.0f}, with {iops_on:.0f}: ratio {ratio:.3f}")
print(f"  median CPU per I/O (all CPUs): without {cpu_off:.3f} us, with {cpu_on:.3f} us: +{cpu_on - cpu_off:.3f} us")
spread = lambda mode: (min(float(r[4]) for r in rows if r[0] == mode), max(float(r[4]) for r in rows if r[0] == mode))
print(f"  (CPU per I/O spread: without {spread('off')[0]:.3f}..{spread('off')[1]:.3f} us, with {spread('on')[0]:.3f}..{spread('on')[1]:.3f} us)")
print(f"{'PASS' if ratio >= 0.97 else 'FAIL'}  g2 IOPS with / without ioacct stat: {ratio:.3f} (target >= 0.97)")
PYEOF

echo
echo "== where the time goes: one more run with kernel.bpf_stats_enabled=1 (overstates: 2 clock reads per call)"
sysctl -qw kernel.bpf_stats_enabled=1
start_stat "$OUT_DIR/g.stats"
before=$(prog_stats)
run_fio "$OUT_DIR/g.stats.json" "${FIO_ARGS[@]}"
after=$(prog_stats)
stop_stat
sysctl -qw kernel.bpf_stats_enabled="$OLD_STATS"
ios=$($PY -c 'import json,sys; print(json.load(open(sys.argv[1]))["jobs"][0]["read"]["total_ios"])' "$OUT_DIR/g.stats.json")
join <(sort <<<"$before") <(sort <<<"$after") | awk -v ios="$ios" '
  { dt = $4 - $2; dc = $5 - $3; tot += dt; printf "  %-16s %8.0f ns per call, %5.2f calls per I/O\n", $1, dc ? dt / dc : 0, dc / ios }
  END { v = tot / ios / 1000; printf "  all programs: %.3f us per I/O\n%s  g1 BPF programs per I/O, us: %.3f (target < 0.3)\n", v, v < 0.3 ? "PASS" : "FAIL", v }'
