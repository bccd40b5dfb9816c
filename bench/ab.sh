#!/usr/bin/env bash
# Two builds of ioacct on the same O_DIRECT target, pair by pair: the
# default `ioacct bench` (4k random reads) at each depth, A then B, then B
# then A (ABBA), so that the host's drift within a pair cancels. Per depth:
# the paired medians (and ranges) of this build's IOPS and CPU per I/O over
# the other's, and the I/Os per submit of each: what a change to the submit
# loop buys or costs. No target: a measurement for bench/README.md.
#
# Usage: OLD=/path/to/old/ioacct bench/ab.sh [DIR]
# Environment: OLD (required), IOACCT (this build; lib.sh's default),
#   DEPTHS ("32 128"), PAIRS (8), RUNTIME (3s), DIRECT_MIB (1024), SPIN (0;
#   1: a busy loop pinned to the last CPU throughout, the CPU-bound state),
#   TARGET (a file or device to read instead of lib.sh's test file).
# Exit status: 0 when every run completed, 2 when a step failed.
set -euo pipefail
RUNTIME=${RUNTIME:-3s}
# shellcheck source=bench/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

OLD=${OLD:-}
DEPTHS=${DEPTHS:-32 128}
PAIRS=${PAIRS:-8}
DIRECT_MIB=${DIRECT_MIB:-1024}
SPIN=${SPIN:-0}
need_ioacct
[ -x "$OLD" ] || die "OLD must name the other build's ioacct binary (OLD=/path/to/ioacct)"
[[ "$PAIRS" =~ ^[1-9][0-9]*$ ]] || die "PAIRS must be a positive integer, not '$PAIRS'"
for d in $DEPTHS; do [[ "$d" =~ ^[1-9][0-9]*$ ]] || die "DEPTHS: '$d' is not a depth"; done
SPIN_PID=""
finish() {
  [ -n "$SPIN_PID" ] && kill "$SPIN_PID" 2>/dev/null
  _cleanup
}
trap finish EXIT
if [ -n "${TARGET:-}" ]; then
  [ -r "$TARGET" ] || die "TARGET $TARGET cannot be read"
else
  make_test_file direct "$DIRECT_MIB"
  TARGET=$TEST_FILE
fi
warm_direct "$TARGET"
if [ "$SPIN" = 1 ]; then
  taskset -c "$(($(nproc) - 1))" sh -c 'while :; do :; done' &
  SPIN_PID=$!
fi
print_context
echo "# OLD: $OLD (sha256 $(sha256sum <"$OLD" | cut -c1-12))  TARGET=$TARGET DEPTHS=$DEPTHS PAIRS=$PAIRS"
echo "# state: $([ "$SPIN" = 1 ] && echo "CPU-bound (a busy loop on CPU $(($(nproc) - 1)))" || echo quiet)"

ROWS=$OUT_DIR/ab.rows
: >"$ROWS"
# one BUILD_NAME BINARY DEPTH PAIR: a run, its row appended to ROWS.
one() {
  local out="$OUT_DIR/ab-$1-$3-$4.json"
  "$2" bench --format json --iodepth "$3" --runtime "$RUNTIME" "$TARGET" >"$out" 2>"$out.err" ||
    die "$2 bench -d $3 failed: $(tail -n 1 "$out.err")"
  "$PY" - "$out" "$1" "$3" "$4" >>"$ROWS" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))["results"]
print(sys.argv[2], sys.argv[3], sys.argv[4], r["iops"], r["cpu"]["per_io_us"], r["syscalls"]["ios_per_submit"])
PY
  tail -n 1 "$ROWS" | awk '{printf "  pair %-3s depth %-4s %s %10.0f IOPS %7.3f us CPU/IO %6.1f I/Os per submit\n", $3, $2, $1, $4, $5, $6}'
}
for p in $(seq 1 "$PAIRS"); do
  for d in $DEPTHS; do
    if ((p % 2)); then
      one old "$OLD" "$d" "$p"
      one new "$IOACCT" "$d" "$p"
    else
      one new "$IOACCT" "$d" "$p"
      one old "$OLD" "$d" "$p"
    fi
  done
done

echo
echo "== this build / OLD, paired medians (range) over $PAIRS pairs"
"$PY" - "$ROWS" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(dict)
for line in open(sys.argv[1]):
    build, depth, pair, iops, cpu, ips = line.split()
    runs[(int(depth), int(pair))][build] = (float(iops), float(cpu), float(ips))
print("| depth | IOPS | CPU per I/O | I/Os per submit, old / new | median IOPS, old / new |")
print("|---|---|---|---|---|")
for depth in sorted({d for d, _ in runs}):
    pairs = [v for (d, _), v in runs.items() if d == depth and len(v) == 2]
    def ratio(i):
        r = [v["new"][i] / v["old"][i] for v in pairs if v["old"][i] > 0]
        return "%.3fx (%.2f-%.2f)" % (statistics.median(r), min(r), max(r))
    med = lambda b, i: statistics.median(v[b][i] for v in pairs)
    print("| %d | %s | %s | %.1f / %.1f | %.0f / %.0f |" % (depth, ratio(0), ratio(1), med("old", 2), med("new", 2),
                                                         med("old", 0), med("new", 0)))
PY
